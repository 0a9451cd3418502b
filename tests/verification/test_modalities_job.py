"""The modalities family: measurement plumbing on planted attention with known D1 verdicts, the
tiny preset end to end (train, measure, resume, report, paper part), and bad input."""
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from rich.console import Console

from numerics.modalities import MODELS, PRESETS, NetConfig, load_dataset
from numerics.modalities.source import CheckpointSource
from verification import campaign
from verification.cli import main
from verification.modalities.paper import paper_part
from verification.modalities.checks import Plan, campaign_name
from verification.modalities.command import measure_and_report
from verification.modalities.paper import plan_part
from verification.modalities.findings.stages import modality_stages, pair_kind, stages_from, verified_records
from verification.report.part import MissingCampaign
from verification.measure.attention import instance_records
from verification.stats import wilson

SECTIONS = Path(__file__).resolve().parents[2] / "paper" / "sections"
# Planted attention, T = 4 tokens, token 0 = CLS. Known verdicts of Theorem D1 (head mean = the
# matrix: both heads carry it):
#   layer 0: CLS attends to itself, features cycle among themselves. All tokens: the pair (CLS, j)
#            attains delta = 1 and is mutually self-dominant -> equality. Content tokens (rows
#            renormalised): every maximising pair fails self-dominance -> strict.
#   layer 1: the identity -> equality on all and content tokens.
#   layer 2: a cyclic matrix whose maximising pairs (0,2), (1,3) are not self-dominant -> strict.
PLANTED = np.array([
    [[1, 0, 0, 0], [0, .1, .8, .1], [0, .1, .1, .8], [0, .8, .1, .1]],
    np.eye(4),
    [[.05, .6, .3, .05], [.05, .05, .6, .3], [.3, .05, .05, .6], [.6, .3, .05, .05]],
])
KNOWN = {("all", 0): True, ("content", 0): False, ("all", 1): True, ("content", 1): True, ("all", 2): False}


def exact_d1(M):
    """D1's equality from its definition, exact rationals, rows renormalised exactly."""
    A = [[Fraction(float(x)) for x in r] for r in M]
    A = [[x / sum(r) for x in r] for r in A]
    n = len(A)
    tv = {(i, j): sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(n) for j in range(i + 1, n)}
    delta = max(tv.values())
    return any(d == delta and A[i][i] >= A[j][i] and A[j][j] >= A[i][j] for (i, j), d in tv.items())


class Planted(torch.nn.Module):
    def forward(self, x, attention=False):
        A = torch.tensor(PLANTED, dtype=torch.float32)[:, None].expand(3, 2, 4, 4)    # (L, H, T, T)
        return torch.zeros(len(x), 3), A[None].expand(len(x), 3, 2, 4, 4)


def planted_source():
    cfg = NetConfig(kind="ft", n_inputs=3, n_classes=3, dim=4, depth=3, heads=2)
    meta = dict(model="planted", family="planted", dataset="wine", seed=0, epoch=1, step=7, fraction=1.0,
                accuracy=0.5, path="planted.safetensors", preset='{"preset": "tiny"}', data_sha="x")
    return CheckpointSource(name="planted@e1", fingerprint="f" * 16, net=Planted(), config=cfg,
                            data=load_dataset("wine", 0), meta=meta)


def test_planted_attention_gets_its_known_verdicts_through_the_pipeline(store):
    src = planted_source()
    items = src.data.items(3)
    name = campaign_name("tiny", 0, "planted", 1, src.fingerprint)
    chunk = campaign.Chunk("all", lambda: [r for i in src.instances(items) for r in instance_records(i)])
    campaign.run(store, name, [chunk], progress=False)
    recs = {r["instance"]: r for r in store.records(campaign=name)}
    for (v, l), eq in KNOWN.items():
        keep = np.ones(4, bool) if v == "all" else np.array([False, True, True, True])
        assert exact_d1(PLANTED[l][np.ix_(keep, keep)]) == eq            # the planted truth, by definition
        for it in items:
            r = recs[f"planted@e1|{it.id}#{it.sha}|{v}|L{l}|mean"]
            assert (r["verdict"] == "tight") == eq, (v, l)
            assert all((recs[f"planted@e1|{it.id}#{it.sha}|{v}|L{l}|H{h}"]["verdict"] == "tight") == eq
                       for h in range(2))
    r = recs[f"planted@e1|{items[0].id}#{items[0].sha}|all|L2|mean"]
    assert r["slack"] > 0 and r["provenance"]["test_accuracy"] == 0.5 and r["provenance"]["n_special"] == 1
    (st,) = stages_from(verified_records(store, name)).values()
    assert (st.model, st.epoch, st.accuracy, len(st.inputs)) == ("planted", 1, 0.5, 3)
    for (v, l), eq in KNOWN.items():
        assert st.share(v, l) == (1.0 if eq else 0.0)
        assert (st.heads[(v, l)].k, st.heads[(v, l)].n) == (6 if eq else 0, 6)
    assert sum(st.fail_pairs[2].values()) == 3 and not st.fail_pairs.get(0)
    assert set(st.fail_pairs[2]) <= {"CLS-feature", "feature-feature"}


def test_pair_kind_names_the_tokens():
    assert pair_kind([0, 3], 3, 2, "patch") == "CLS-patch"
    assert pair_kind([4, 2], 3, 2, "patch") == "patch-register"
    assert pair_kind([5, 4], 1, 0, "feature") == "feature-feature"
    assert pair_kind([0, 1], None, 0, "patch") is None


def text_standin(name, causal, T=6, L=2, H=2):
    """Random softmax attention under a text model's name (loading the real models takes minutes), as
    the trained main job's first input (the text rows read the main job's inputs only)."""
    from numerics.sources import AttentionInstance
    from verification.measure.text import main_inputs

    first = main_inputs(name, False)[0]
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((L, H, T, T)) + (np.where(np.tri(T, dtype=bool), 0.0, -np.inf) if causal else 0)
    A = np.exp(logits - logits.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    special = np.zeros(T, dtype=bool)
    special[[0, -1]] = True
    prov = dict(model=name, input=first.id, text_sha=first.sha, T=T, causal=causal)
    return AttentionInstance(model=name, input=first.id, sha=first.sha, attention=A, special=special,
                             causal=causal, provenance=prov)


def test_tiny_preset_end_to_end_resumes_and_reports(store, tmp_path):
    console = Console(width=200, record=True)
    models = tuple(MODELS)
    out = tmp_path / "out"
    with pytest.raises(MissingCampaign, match="attnbounds modalities --preset quick"):
        paper_part(store, Plan.for_verify(0, False))
    paths = measure_and_report(store, "tiny", 0, out, tmp_path / "ck", console, models)
    n = store.count()
    epochs = PRESETS["tiny"].checkpoint_epochs()
    tiny = Plan("tiny", 0)
    stages = modality_stages(store, tiny)
    assert [(s.model, s.epoch) for s in stages] == [(m, e) for m in models for e in epochs]
    assert all(len(s.inputs) == PRESETS["tiny"].test_limit for s in stages)
    assert all(0 <= s.accuracy <= 1 for s in stages)
    for name in ("modalities_share", "modalities_detail", "modalities_training"):
        assert paths[name]["md"].is_file() and paths[name]["csv"].is_file()
    assert all(p.is_file() for p in paths["modalities_share_vs_depth_content"] + paths["modalities_share_vs_step"])
    text = (out / "tables" / "modalities_share.md").read_text()
    assert "vit-reg init" in text and "text encoder" in text and "omitted" in text
    created = sorted(r["created"] for r in store.records())
    measure_and_report(store, "tiny", 0, out, tmp_path / "ck", console, models)     # resumes: nothing new
    assert store.count() == n and sorted(r["created"] for r in store.records()) == created
    from verification.modalities.checks import run
    from verification.plan import RunResult

    again = run(Plan("tiny", 0, models, tmp_path / "ck"), store)       # what ran: every campaign, all stored
    assert isinstance(again, RunResult) and again.family == "modalities" and again.computed == 0
    assert set(again.names()) == set(store.campaigns("modalities-")) and again.skipped == sum(
        len(store.done_chunks(c)) for c in again.names())
    with pytest.raises(MissingCampaign, match="attnbounds rollout --model minilm"):
        plan_part(store, tiny)                                          # the prose compares with text
    part = plan_part(store, tiny, require_text=False)
    assert [t.name for t in part.tables] == ["modalities_share", "modalities_detail", "modalities_training",
                                             "modalities_seeds", "modalities_matched", "modalities_power",
                                             "modalities_summary"]
    assert part.commands == ["attnbounds modalities --preset tiny --seed 0"]
    final = stages[2 * len(epochs) - 1]                                 # vit-reg, last checkpoint
    assert part.macros["ModVitRegTrainedAccSeed"] == round(final.accuracy, 3)
    # every seed of the preset trained and measured; the summary reads each seed's last checkpoint
    seeds = PRESETS["tiny"].seed_list(0)
    every = modality_stages(store, tiny, every_seed=True)
    assert {(s.model, s.seed) for s in every} == {(m, k) for m in models for k in seeds}
    seeds_rows = {(r[0], r[1]): r for r in part.tables[3].rows()}
    for m in models:
        lasts = [max((s for s in every if s.model == m and s.seed == k), key=lambda s: s.epoch) for k in seeds]
        assert seeds_rows[(m, "content")][3] == "0, 1, 2"
        assert seeds_rows[(m, "content")][4] == ", ".join(f"{s.mean_share('content'):.2f}" for s in lasts)
        assert part.macros[f"Mod{''.join(w.capitalize() for w in m.split('-'))}TrainedContentMeanShare"] == \
            round(sum(s.mean_share("content") for s in lasts) / len(lasts), 2)
    # beside each model: random matrices and MiniLM at its own n (content tokens: n = patches / features)
    cols = part.tables[4].columns()
    matched = {(r[0], r[1]): dict(zip(cols, r)) for r in part.tables[4].rows()}
    n_content = {"vit": 16, "vit-reg": 16, "ft-cancer": 30, "ft-wine": 13}
    for m in models:
        assert matched[(m, "content")]["n"] == n_content[m]
        assert matched[(m, "all")]["n"] == n_content[m] + (1 + PRESETS["tiny"].registers if m == "vit-reg" else 1)
        assert matched[(m, "content")]["MiniLM at n (inputs)"].endswith("(4)")   # the tiny preset's 4 inputs
        assert matched[(m, "content")]["trained vs random range"] in ("above", "below", "inside", "not separable from")
    from verification.modalities.checks import TEXT_MODEL, text_prefix

    ns = {}
    for r in store.records(campaign=text_prefix(TEXT_MODEL), prefix=True):
        if r["provenance"]["head"] is None and r["theorem"] == "dobrushin.factor":
            T, v = r["provenance"]["T"], r["provenance"]["variant"]
            ns.setdefault((T, v), set()).add(r["provenance"]["n"])
    assert all(n == ({T} if v == "all" else {T - 2}) for (T, v), n in ns.items()) and ns
    assert part.macros["ModVitRegTrainedContentLayerOne"] == round(final.share("content", 1), 2)
    from verification.measure.attention import chunk_key
    from verification.measure.text import campaign_prefix, main_inputs

    for name, causal in (("minilm", False), ("smollm2", True)):          # stand-ins for the text campaigns
        campaign.run(store, campaign_prefix(name, False) + "stand-in", [campaign.Chunk(
            chunk_key(main_inputs(name, False)[0]), lambda n=name, c=causal: instance_records(text_standin(n, c)))],
            progress=False)
    part = plan_part(store, tiny)
    assert part.macros["ModSmollmTwoAllMeanShare"] == 1.0               # causal: equality is structural
    prose = (SECTIONS / "modalities.tex").read_text()
    cited = set(re.findall(r"\\(Mod[A-Za-z]+)", prose))
    assert cited and cited <= set(part.macros), sorted(cited - set(part.macros))
    assert set(re.findall(r"\\input\{tables/([^}]+)\}", prose)) <= {t.name for t in part.tables}
    assert set(re.findall(r"figures/([^}]+)\.pdf", prose)) <= {f.name for f in part.figures}
    from verification.report.aggregate import pyplot
    fig, ax = pyplot().subplots()
    for f in part.figures:
        f.draw(ax)
    assert ax.lines


def test_bad_arguments_are_one_line_errors(capsys, tmp_path):
    assert main(["modalities", "--preset", "huge", "--db", ":memory:", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--preset" in err and "huge" in err and len(err.strip().splitlines()) == 1
    assert main(["modalities", "--models", "vit,resnet", "--db", ":memory:", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'resnet'" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "file").write_text("x")
    assert main(["modalities", "--checkpoints", str(tmp_path / "file"), "--db", ":memory:",
                 "--out", str(tmp_path)]) == 2
    assert "is not a folder" in capsys.readouterr().err


# -- across seeds and beside baselines ---------------------------------------------------------------

def seed_stage(model, seed, epoch, shares, n=(5, 4)):
    """A stage with the given per-layer content shares (all tokens: the same), on 4 inputs."""
    from verification.findings import Share
    from verification.modalities.findings.stages import Stage

    tight = {(v, l): Share.wilson(round(4 * x), 4) for l, x in enumerate(shares) for v in ("all", "content")}
    return Stage(model=model, family=model, campaign=f"c-{model}-{seed}-{epoch}", epoch=epoch, step=epoch,
                 fraction=1.0, accuracy=0.5 + 0.1 * seed, seed=seed, sizes={"all": n[0], "content": n[1]},
                 tight=tight)


def synthetic(trained, init, n=(5, 4)):
    """Stages of one model: per seed its trained per-layer shares and its initial ones."""
    out = []
    for seed, (tr, it) in enumerate(zip(trained, init)):
        out += [seed_stage("m", seed, 0, it, n), seed_stage("m", seed, 3, tr, n)]
    return out


def check_spread(summary, values):
    """Known answer: mean, sd (n - 1) and the t interval with df = seeds - 1 (scipy's own) at the run's
    simultaneous level 1 - alpha/m (m: six comparisons per summary of the run)."""
    import statistics

    from scipy import stats

    t = summary.trained
    assert t.values == pytest.approx(values) and t.df == len(values) - 1
    assert t.sd == pytest.approx(statistics.stdev(values))
    assert summary.level == pytest.approx(1 - 0.05 / summary.comparisons) and summary.comparisons % 6 == 0
    lo, hi = stats.t.interval(summary.level, len(values) - 1, loc=statistics.mean(values),
                              scale=statistics.stdev(values) / len(values) ** 0.5)
    assert (t.lo, t.hi) == pytest.approx((lo, hi))


def test_seed_spread_is_the_t_interval_over_seeds_and_a_planted_bug_fails(monkeypatch):
    from verification.modalities.findings import seeds as S

    stages = synthetic([[0.25, 0.75], [0.5, 0.5], [1.0, 0.5]], [[0, 0], [0, 0.25], [0.25, 0]])
    (content,) = [s for s in S.summarise(stages, {}, {}) if s.variant == "content"]
    assert content.seeds == (0, 1, 2) and content.n == 4
    check_spread(content, [0.5, 0.5, 0.75])                     # per seed: the layer mean at the last epoch
    assert content.change.values == pytest.approx((0.5, 0.375, 0.625))   # paired: trained - init, per seed
    assert content.depth.values == pytest.approx((0.5, 0.0, -0.5))       # last layer - first layer
    # planted bugs: a z quantile instead of t (df ignored); a population sd; one seed's stages only
    from verification.modalities.findings import comparisons as C

    real = S.t_spread
    for bug in (lambda v, a=0.05: normal_spread(v),
                lambda v, a=0.05: population_spread(real, v)):
        monkeypatch.setattr(S, "t_spread", bug)          # the seed summaries and the decisions' re-made intervals
        monkeypatch.setattr(C, "t_spread", bug)
        (c,) = [s for s in S.summarise(stages, {}, {}) if s.variant == "content"]
        with pytest.raises(AssertionError):
            check_spread(c, [0.5, 0.5, 0.75])
    monkeypatch.setattr(S, "t_spread", real)
    monkeypatch.setattr(C, "t_spread", real)
    (c,) = [s for s in S.summarise([s for s in stages if s.seed == 0], {}, {}) if s.variant == "content"]
    with pytest.raises(AssertionError):
        check_spread(c, [0.5, 0.5, 0.75])


def normal_spread(v):
    import statistics

    from verification.stats import Spread

    m, sd = statistics.mean(v), statistics.stdev(v)
    h = 1.96 * sd / len(v) ** 0.5
    return Spread(tuple(v), m, sd, len(v) - 1, m - h, m + h)


def population_spread(real, v):
    s = real(v)
    k = len(v)
    f = ((k - 1) / k) ** 0.5
    return type(s)(s.values, s.mean, s.sd * f, s.df, s.mean - (s.mean - s.lo) * f, s.mean + (s.hi - s.mean) * f)


def test_each_model_meets_the_baselines_at_its_own_n_and_the_words_follow_the_tests():
    from verification.modalities.findings import comparisons as C
    from verification.modalities.findings import seeds as S

    trained = [[0.75, 0.75], [1.0, 0.75], [0.75, 1.0], [1.0, 1.0]] * 2        # eight seeds
    stages = synthetic(trained, trained)
    # random shares differ by n: at the model's content n = 4 they are 0.1 / 0.2; elsewhere 0.9 / 1.0
    base = {("dirichlet", 4): (10, 100), ("softmax-T1", 4): (20, 100), ("dirichlet", 5): (90, 100),
            ("softmax-T1", 5): (100, 100), ("dirichlet", 6): (50, 100)}
    texts = {("content", 4): [0.9, 1.0, 0.8, 0.95, 0.85, 0.9, 1.0, 0.9], ("all", 5): [0.8] * 4 + [0.85] * 4}
    summaries = {s.variant: s for s in S.summarise(stages, base, texts)}
    c, a = summaries["content"], summaries["all"]
    assert {f: (x.k, x.n) for f, x in c.random.items()} == {"dirichlet": (10, 100), "softmax-T1": (20, 100)}
    assert c.random_range == (0.1, 0.2)
    assert {f: (x.k, x.n) for f, x in a.random.items()} == {"dirichlet": (90, 100), "softmax-T1": (100, 100)}
    assert c.words["random"] == "above" and a.words["random"] == "not separable from"
    assert c.text.mean == pytest.approx(0.9125) and c.text_inputs == 8 and a.text_inputs == 8
    # trained and init stages identical: the paired changes are all 0, no variation, not tested (never p = 0)
    assert c.words["init"].startswith("not testable") and c.change.mean == 0 and c.compared["init"].decision.p == 1.0
    assert c.compared["init"].decision.outcome == "not-testable"
    # Bonferroni over every comparison of the run: each adjusted p is at least its raw p
    raw = {}
    for s in summaries.values():
        for name, comp in s.compared.items():
            assert comp.adjusted >= comp.decision.p
            raw[(s.variant, name)] = comp.decision.p
    assert len(raw) == 2 * len(C.COMPARISONS)
    # the random comparison is against the reference's interval (Wilson ends), at the seed level (df 7)
    assert c.compared["random"].reference[1] == pytest.approx(wilson(20, 100)[1]) and c.compared["random"].df == 7
    assert c.compared["random"].decision.outcome == "supported" and c.compared["random"].decision.interval[0] > 0
    # every "not separable" has its minimum detectable effect and the seeds a 0.10 effect would need
    assert a.mdes["random"] > 0 and a.compared["random"].needed >= 2
    assert math.isnan(c.mdes["init"]) and c.compared["init"].needed is None       # no variation: no power to quote
    # the inside word only through TOST: a trained share well within the range, with a small spread
    inside = {s.variant: s for s in S.summarise(
        synthetic([[0.25, 0.25], [0.25, 0.25], [0.25, 0.5], [0.25, 0.25]] * 3, [[0, 0]] * 12),
        {("dirichlet", 4): (0, 400), ("softmax-T1", 4): (240, 400)}, {})}
    assert inside["content"].words["random"] == "inside" and inside["content"].words["init"] == "higher than"
    # the same shares with a range that the margin cannot cover: not separable, never "inside"
    narrow = {s.variant: s for s in S.summarise(
        synthetic([[0.25, 0.25], [0.25, 0.25], [0.25, 0.5], [0.25, 0.25]] * 3, [[0, 0]] * 12),
        {("dirichlet", 4): (100, 400), ("softmax-T1", 4): (120, 400)}, {})}
    assert narrow["content"].words["random"] == "not separable from"


def test_equivalence_to_the_random_range_is_tost_at_the_margin_and_holds_alpha_on_planted_nulls():
    """A planted null at the edge of the equivalence region (true mean = L, the range's upper Wilson
    end of its lowest family minus the margin) is called "inside" at most alpha of the time; a true
    mean in the middle of a wide range is called inside most of the time with 8 seeds."""
    from verification.modalities.findings import comparisons as C
    from verification.modalities.findings import seeds as S

    from verification.findings import Share

    rng = np.random.default_rng(0)
    random = {"dirichlet": Share.wilson(100, 1000), "softmax": Share.wilson(400, 1000)}
    s = S.Summary("m", "all", 10, (), *(S.t_spread([0.0]),) * 4, random)
    low, high = C.equivalence_to_range([0.1, 0.2], s)["bounds"]
    assert low == pytest.approx(wilson(100, 1000)[1] - C.MARGIN)
    assert high == pytest.approx(wilson(400, 1000)[0] + C.MARGIN)
    at_edge = sum(C.equivalence_to_range(rng.normal(low, 0.05, 8), s)["p"] < C.ALPHA for _ in range(2000))
    assert at_edge / 2000 <= 0.065
    middle = sum(C.equivalence_to_range(rng.normal((low + high) / 2, 0.05, 8), s)["p"] < C.ALPHA
                 for _ in range(400))
    assert middle / 400 > 0.8
    # a planted bug: one-sided tests at alpha (not the TOST level 2 alpha per side) are too liberal
    assert C.equivalence_to_range([low] * 7 + [low + 1e-3], s)["p"] > C.ALPHA


def test_the_power_calculation_gives_the_seeds_a_t_test_needs():
    """Known answers of the noncentral t (scipy): the seeds for power 0.8 at a 0.10 effect grow with
    the sd and with a stricter level; the MDE at that number of seeds is at most the effect, one
    seed fewer above it."""
    from verification.modalities.findings import comparisons as C
    from verification.stats import mde

    for sd, alpha in ((0.05, 0.05), (0.1, 0.05), (0.1, 0.05 / 24)):
        k = C.seeds_needed(sd, 0.1, alpha)
        assert mde(sd, k, alpha, 0.8) <= 0.1 < mde(sd, k - 1, alpha, 0.8)
    assert C.seeds_needed(0.05, 0.1, 0.05) < C.seeds_needed(0.1, 0.1, 0.05) < C.seeds_needed(0.1, 0.1, 0.002)
    assert C.seeds_needed(float("nan")) is None and C.seeds_needed(5.0) is None


def baseline_agrees(store, campaign, family, n, count, seed):
    """The stored baseline of (family, n) against an independent check: the same draws
    (numerics.sources.random) decided by numerics.dobrushin.factor_equality."""
    from numerics.dobrushin import factor_equality
    from numerics.sources.random import generator, sample
    from verification.measure.baselines import MODALITIES

    recs = [r for r in store.records(campaign=campaign) if r["provenance"]["family"] == family
            and r["provenance"]["n"] == n]
    A = sample(family, n, count, generator(seed, family, n, MODALITIES.offset))
    expected = int(np.count_nonzero(factor_equality(A)))
    assert len(recs) == count and sum(r["verdict"] == "tight" for r in recs) == expected, (family, n)


def test_random_baselines_are_the_stress_checks_verdicts_at_n_and_a_planted_size_bug_fails(store, tmp_path,
                                                                                           monkeypatch):
    import numerics.sources.random as R
    from verification.measure.baselines import FAMILIES
    from verification.modalities import checks

    name = checks.run_baselines(store, [4, 7], 30, 0)
    assert name == checks.baseline_campaign(0, 30)
    for f in FAMILIES:
        for n in (4, 7):
            baseline_agrees(store, name, f, n, 30, 0)
    assert len(list(store.records(campaign=name))) == 2 * 30 * len(FAMILIES)
    # planted: matrices drawn one token larger than asked (the classic off-by-one of a CLS token)
    real = R.sample
    monkeypatch.setattr(R, "sample", lambda family, n, count, rng: real(family, n + 1, count, rng))
    with ResultStoreAt(tmp_path / "bug.db") as bug:
        bad = checks.run_baselines(bug, [3], 200, 0)
        monkeypatch.setattr(R, "sample", real)
        with pytest.raises(AssertionError):
            for f in FAMILIES:
                baseline_agrees(bug, bad, f, 3, 200, 0)


def ResultStoreAt(path):
    from verification.store import ResultStore

    return ResultStore(path)


def test_a_changed_stored_number_makes_the_modalities_prose_fail_naming_its_sentence(tmp_path):
    from verification.modalities.paper import prose_guards
    from verification.paper.latex import guard_problems
    from verification.report.part import Part

    (tmp_path / "sections").mkdir()
    (tmp_path / "main.tex").write_text("\\input{sections/modalities}\n")
    (tmp_path / "sections" / "modalities.tex").write_text(
        (Path(__file__).resolve().parents[2] / "paper" / "sections" / "modalities.tex").read_text())
    learned = {"vit": (0.10, 0.92), "ft-wine": (0.33, 0.95)}
    ok = Part("modalities")
    prose_guards(ok, learned, 2, 1.0)
    assert guard_problems(tmp_path, ok.guards) == []
    for args, sentence in (
            (({**learned, "ft-wine": (0.33, 0.30)}, 2, 1.0), "The models learned"),   # one ends below its start
            ((learned, 12, 1.0), "These models are smaller and shallower than the published architectures"),
            ((learned, 2, 0.97), "is the causal corollary")):
        bad = Part("modalities")
        prose_guards(bad, *args)
        problems = guard_problems(tmp_path, bad.guards)
        assert len(problems) == 1 and f'contradicts the sentence "{sentence}"' in problems[0], problems


def test_identical_seed_shares_decide_nothing_and_the_family_is_the_plans():
    """A planted tie: eight seeds with the same share (and the same change from initialisation) give
    no decided comparison (never p = 0 from a zero sd); the family is six comparisons per
    summary whatever the store holds (no MiniLM rows here: those count as not measured, p = 1)."""
    from verification.findings import Share
    from verification.modalities.findings.comparisons import COMPARISONS, decide
    from verification.modalities.findings.seeds import Summary, t_spread

    def summary(trained, init):
        return Summary("vit", "all", 10, tuple(range(len(trained))), t_spread(trained), t_spread(init),
                       t_spread([a - b for a, b in zip(trained, init)]), t_spread([0.9] * len(trained)),
                       {"dirichlet": Share.wilson(30, 1000), "softmax": Share.wilson(40, 1000)},
                       depth=t_spread([0.0] * len(trained)))

    tie = summary([0.6] * 8, [0.1] * 8)
    real = summary([0.6, 0.62, 0.58, 0.61, 0.6, 0.59, 0.63, 0.6], [0.1, 0.12, 0.08, 0.1, 0.11, 0.09, 0.1, 0.1])
    tie, real = decide([tie, real])
    assert set(tie.compared) == set(real.compared) == set(COMPARISONS)
    assert all(tie.compared[c].adjusted == 1.0 for c in COMPARISONS), tie.compared       # nothing decided
    assert {tie.compared[c].decision.outcome for c in COMPARISONS} == {"not-testable"}
    assert tie.words["init"].startswith("not testable") and tie.words["text"] == "not measured"
    assert real.words["init"] == "higher than" and real.words["random"] == "above"


# -- the plan: one object from the command line to the paper (issue 49) ------------------------------

def test_the_plans_command_line_plans_it_again(tmp_path):
    """``plan.command()`` is the line the paper prints (``--preset quick``, ``--preset paper`` for
    ``--full``), and parsed by the CLI it gives the same plan (a planted line without ``--models``
    does not)."""
    import shlex

    from verification.cli import build_parser

    def parsed(line):
        words = shlex.split(line)[1:]
        return Plan.from_args(build_parser(words).parse_args(words + ["--db", ":memory:", "--out", str(tmp_path)]))

    assert Plan.for_verify(0, False).command() == "attnbounds modalities --preset quick --seed 0"
    assert Plan.for_verify(4, True).command() == "attnbounds modalities --preset paper --seed 4"
    assert parsed("attnbounds modalities --full --seed 4").command() == Plan.for_verify(4, True).command()
    user = parsed("attnbounds modalities --preset tiny --seed 2 --models vit,ft-wine")
    again = parsed(user.command())
    assert (again.preset, again.seed, again.models, again.full) == ("tiny", 2, ("vit", "ft-wine"), False)
    planted = parsed(user.command().replace(" --models vit,ft-wine", ""))
    assert planted.models != user.models
    from verification.plan import Plan as PlanProtocol

    assert isinstance(user, PlanProtocol) and isinstance(Plan.for_verify(0, False), PlanProtocol)
    prov = user.provenance()
    assert prov == {"seed": 2, "preset": "tiny", "seeds": ", ".join(map(str, PRESETS["tiny"].seed_list(2))),
                    "models": "vit, ft-wine", "text": "minilm"}
    assert Plan.for_verify(0, False).provenance()["models"] == ", ".join(MODELS)


def test_the_paper_reads_the_plans_preset_and_refuses_some_models_only(store):
    """``needs`` and the part follow the plan (its preset's campaigns, its command); ``paper --from``
    with ``--models`` is refused in one line (the section compares every model)."""
    from theory.errors import InvalidInput
    from verification.modalities.checks import baseline_campaign
    from verification.modalities.paper import check_plan, needs

    tiny = needs(store, Plan("tiny", 3))
    assert {n.command for n in tiny if n.family == "modalities" and n.campaign.startswith("modalities-")} == \
        {"attnbounds modalities --preset tiny --seed 3"}
    assert baseline_campaign(3, PRESETS["tiny"].baseline_count) in {n.campaign for n in tiny}
    assert {n.command for n in tiny if n.campaign.startswith("trained-")} == {"attnbounds verify --only trained --seed 3"}
    check_plan(Plan.for_verify(0, True))
    check_plan(Plan("tiny", 0, tuple(MODELS)))
    with pytest.raises(InvalidInput, match="drop --models"):
        check_plan(Plan("quick", 0, ("vit",)))
    with pytest.raises(MissingCampaign, match="--preset paper --seed 1"):
        paper_part(store, Plan.for_verify(1, True))


DIFFERENCE_WORDS = {"above", "below", "higher than", "lower than", "rises", "falls"}


def test_each_word_and_the_interval_printed_beside_it_agree_at_the_bonferroni_level():
    """Issue 53: a decision and the interval printed beside it are one simultaneous interval. Planted:
    a change from initialisation whose unadjusted 95% t interval over seeds excludes 0 but whose
    interval at 1 - alpha/m (Bonferroni over the m comparisons of the run) holds it: the word is "not
    separable from" and the interval printed beside it (sentence, table) includes 0; a change large
    enough for the simultaneous interval is "lower than" with a printed interval below 0. Then every
    word of the run: a difference word exactly where its printed interval excludes 0."""
    import statistics

    from scipy import stats

    from verification.modalities.paper import LABELS, seed_macros
    from verification.modalities.findings import comparisons as C
    from verification.findings import Share
    from verification.modalities.findings.seeds import Summary, t_spread
    from verification.modalities.report.seeds import difference, summary_table
    from verification.report.part import Part

    def summary(model, trained, change):
        init = [t - c for t, c in zip(trained, change)]
        k = len(trained)
        return Summary(model, "content", 16, tuple(range(k)), t_spread(trained), t_spread(init),
                       t_spread(change), t_spread([0.9] * k),
                       {"dirichlet": Share.wilson(60, 400), "softmax-T1": Share.wilson(110, 400)},
                       text=t_spread([0.95, 0.97, 0.93, 0.96, 0.94]), text_inputs=5,
                       depth=t_spread([0.01, -0.02, 0.03, 0.0]), init_accuracy=t_spread([0.1] * k))

    near = [-0.05, -0.088, -0.05, -0.137]           # the quick preset's breast-cancer change, four seeds
    far = [-0.30, -0.31, -0.29, -0.30]
    trained = [0.237, 0.3, 0.094, 0.169]
    lo95, hi95 = stats.t.interval(0.95, 3, loc=statistics.mean(near), scale=statistics.stdev(near) / 2)
    assert hi95 < 0                                 # unadjusted: the interval excludes 0 ...
    a, b = summary("ft-cancer", trained, near), summary("vit", trained, far)
    a, b = C.decide([a, b])
    m = 2 * len(C.COMPARISONS)
    assert a.comparisons == b.comparisons == m and a.level == pytest.approx(1 - C.ALPHA / m)
    lo, hi = a.compared["init"].interval            # ... the simultaneous one holds it: not separable
    assert lo < lo95 and hi > 0 and a.words["init"] == "not separable from"
    assert (lo, hi) == pytest.approx(stats.t.interval(1 - C.ALPHA / m, 3, loc=statistics.mean(near),
                                                      scale=statistics.stdev(near) / 2))
    assert b.compared["init"].interval[1] < 0 and b.words["init"] == "lower than"
    assert a.compared["init"].adjusted >= C.ALPHA > b.compared["init"].adjusted          # the Bonferroni p agrees
    # what is printed: the paper's sentences and the typeset table carry these very intervals
    part = Part("modalities")
    seed_macros(part, [a, b])
    assert part.macros["ModLevel"] == f"{100 * (1 - C.ALPHA / m):.1f}" and part.macros["ModComparisons"] == m
    init = part.macros["ModInitSentence"]
    assert (f"{LABELS['ft-cancer']}: trained share not separable from the share at initialisation" in init
            and f"change {a.change.mean:+.2f} [{a.change.lo:+.2f}, {a.change.hi:+.2f}]" in init)
    assert f"{LABELS['vit']}: trained share lower than" in init
    printed = re.findall(r"change [+-]\d\.\d+ \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\]", init)
    assert [float(l) <= 0 <= float(h) for l, h in printed] == [True, False]
    rows, cols = summary_table([a, b])
    assert "99." in cols[3] and rows[0][-1].startswith(f"not separable from ({difference(a, 'init')})")
    # every word of the run against its own printed interval
    for s in (a, b):
        for name in ("random", "text", "init", "depth"):
            lo, hi = s.compared[name].interval
            assert (s.words[name] in DIFFERENCE_WORDS) == (lo > 0 or hi < 0), (s.model, name, s.words[name])
            assert (s.compared[name].adjusted < C.ALPHA) == (lo > 0 or hi < 0), (s.model, name)
        assert s.words["text"] == "lower than" and difference(s, "text") in part.macros["ModMatchedSentence"]
