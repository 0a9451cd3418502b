"""Trained-model measurements: verdicts equal the exact definition on the extracted matrices."""
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from rich.console import Console

from numerics.sources.corpus import Corpus, TextInput
from numerics.sources.models import load_model
from numerics.stochastic import restrict, submatrix
from verification.measure.attention import campaign_name, chunk_key, input_records, variants
from verification.trained.checks import run_campaign
from verification.stats import wilson
from verification.trained.report import report_model

pytestmark = pytest.mark.models
TEXTS = ["Attention is all you need.", "A cat sat on the mat, quietly."]
T0 = f"t0#{TextInput(id='t0', text=TEXTS[0], source='test').sha}"  # records are keyed by id and text hash


def exact_rows(M):
    """Float matrix -> exact rationals, rows renormalised exactly (the docs/theory.md §2 convention)."""
    rows = [[Fraction(float(x)) for x in r] for r in M]
    return [[x / sum(r) for x in r] for r in rows]


def d1_by_definition(M):
    """(equality, through_first, delta) of Theorem D1 from its definition, in exact arithmetic."""
    A = exact_rows(M)
    n = len(A)
    tv = {(i, j): sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(n) for j in range(i + 1, n)}
    delta = max(tv.values())
    good = [(i, j) for (i, j), d in tv.items() if d == delta and A[i][i] >= A[j][i] and A[j][j] >= A[i][j]]
    return bool(good), any(i == 0 for i, _ in good), delta


def rational_dobrushin(M):
    A = exact_rows(M)
    return max(sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(len(A)) for j in range(i))


@pytest.fixture(scope="module", params=["minilm", "smollm2"])
def measured(request):
    model = load_model(request.param)
    inp = TextInput(id="t0", text=TEXTS[0], source="test")
    enc = model.encode(inp.text)
    A = model.attentions_of(enc).double().numpy()          # (L, H, T, T)
    recs = {r.instance: r for r in input_records(model, inp)}
    return model, enc, A, recs


def test_layer_and_head_verdicts_equal_the_exact_definition(measured):
    model, enc, A, recs = measured
    L, H, T, _ = A.shape
    vs = variants(enc.special.numpy(), model.causal)
    assert [v.name for v in vs] == (["all", "content", "nofirst"] if model.causal else ["all", "content"])
    checked = 0
    for v in vs:
        mean = submatrix(A.mean(axis=1), v.keep)           # head average, then the submatrix: the
        heads = submatrix(A, v.keep)                        # model's floats, renormalised exactly below
        for l in range(L):
            key = f"{model.name}|{T0}|{v.name}|L{l}"
            eq, first, delta = d1_by_definition(mean[l])
            r = recs[f"{key}|mean"]
            assert (r.verdict.value == "tight") == eq
            assert r.extra["through_first"] == first
            assert r.extra["delta"] == pytest.approx(float(delta), abs=1e-12)
            half = [[(Fraction(int(i == k)) + a) / 2 for k, a in enumerate(row)] for i, row in enumerate(exact_rows(mean[l]))]
            exact_value = max(sum(abs(a - b) for a, b in zip(half[i], half[j])) / 2
                              for i in range(len(half)) for j in range(i))
            assert r.value == pytest.approx(float(exact_value), abs=1e-12)
            assert (r.slack == 0.0) == eq
            for h in range(H):
                eq_h, first_h, _ = d1_by_definition(heads[l, h])
                rh = recs[f"{key}|H{h}"]
                assert (rh.verdict.value == "tight") == eq_h and rh.extra["through_first"] == first_h
                checked += 1
    assert checked == len(vs) * L * H


def test_content_restriction_and_causal_structure(measured):
    model, enc, A, recs = measured
    special = enc.special.numpy()
    content = ~special
    sub = restrict(A, content)
    n = int(content.sum())
    assert sub.shape == A.shape[:2] + (n, n)
    assert np.allclose(sub.sum(-1), 1.0, atol=1e-12, rtol=0)
    i, j = np.flatnonzero(content)[:2]                      # entries keep their ratios within a row
    assert sub[0, 0, 0, 1] * A[0, 0, i, i] == pytest.approx(sub[0, 0, 0, 0] * A[0, 0, i, j], rel=1e-12)
    r = recs[f"{model.name}|{T0}|content|L0|mean"]
    assert r.provenance["n"] == n and r.provenance["T"] == len(enc.ids)
    assert r.provenance["quantised"] == model.quantised
    if model.causal:  # corollary: first row one-hot in every variant, so pairs (0, j) are self-dominant
        for v in ("all", "content", "nofirst"):
            for l in range(A.shape[0]):
                rr = recs[f"{model.name}|{T0}|{v}|L{l}|mean"]
                if rr.extra["pair"][0] == 0:
                    assert rr.verdict.value == "tight" and rr.extra["through_first"]


def states_agree(model, inp, A):
    """What ``rollout --check`` binds on ``model`` for ``inp`` (numerics.sources.states): the scores L
    with softmax(L) (a causal model: softmax(L, mask="causal"), L's entries above the diagonal 0) the
    attention ``A`` up to float rounding, and each layer's input X (T, d_model), finite."""
    from numerics.sources.states import softmax_rows

    inst, st = model.states(inp)
    L, X = st["logits"], st["tokens"]
    assert np.array_equal(inst.attention, A) and L.shape == A.shape and np.isfinite(L).all()
    assert np.abs(softmax_rows(L, model.causal) - A).max() < 1e-6
    upper = np.triu(np.ones(A.shape[-2:], dtype=bool), 1)
    assert (L[..., upper] == 0).all() == model.causal
    assert X.shape == (A.shape[0], A.shape[-1], int(model.config.hidden_size)) and np.isfinite(X).all()
    assert not np.array_equal(X[0], X[1])


def test_the_scores_and_layer_inputs_a_check_binds(measured):
    """MiniLM and the SmolLM2 decoder (its causal mask made explicit): L gives the attention."""
    model, enc, A, recs = measured
    states_agree(model, TextInput(id="t0", text=TEXTS[0], source="test"), A)


def test_rollout_records_match_an_independent_product(measured):
    model, enc, A, recs = measured
    M = restrict(A.mean(axis=1), np.ones(A.shape[-1], dtype=bool))  # rows renormalised in float64
    R = np.eye(M.shape[-1])
    prod = 1.0
    for l in range(M.shape[0]):
        Ahat = (np.eye(M.shape[-1]) + M[l]) / 2
        R = Ahat @ R
        prod *= float(rational_dobrushin(Ahat))
        r = recs[f"{model.name}|{T0}|all|L{l}|rollout"]
        dR = max(0.5 * np.abs(R[i] - R[j]).sum() for i in range(len(R)) for j in range(i))
        assert r.value == pytest.approx(dR, rel=1e-9, abs=1e-12)
        assert r.bound == pytest.approx(prod, rel=1e-9)
        assert r.value <= r.bound + 1e-12
    assert recs[f"{model.name}|{T0}|all|L0|rollout"].verdict.value == "tight"  # R_1 = Ahat_1


def test_restrict_rejects_rows_without_mass():
    A = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])  # row 1 lives on token 0 only
    with pytest.raises(ValueError, match="row 0"):
        restrict(A, np.array([False, True, True]))


def test_wilson_interval_known_values():
    lo, hi = wilson(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    assert wilson(0, 4)[0] == 0.0 and wilson(4, 4)[1] == 1.0


def test_campaign_resumes_and_reports(store, tmp_path):
    model = load_model("minilm", max_tokens=32)
    corpus = Corpus(name="tiny", inputs=[TextInput(id=f"t{k}", text=t, source="test") for k, t in enumerate(TEXTS)])
    console = Console(file=open(tmp_path / "log.txt", "w"), width=200)
    camp = run_campaign(model, corpus, store, console)
    assert camp == campaign_name(model, "tiny")
    n = store.count(camp)
    assert store.done_chunks(camp) == {chunk_key(t) for t in corpus.inputs} and n == 2 * 2 * 6 * (1 + 12 + 1)
    run_campaign(model, corpus, store, console)       # resume: nothing recomputed or added
    assert store.count(camp) == n
    edited = Corpus(name="tiny", inputs=[corpus.inputs[0], TextInput(id="t1", text="Edited text.", source="test")])
    run_campaign(model, edited, store, console)       # same id, new text: measured and stored beside it
    assert len(store.done_chunks(camp)) == 3 and store.count(camp) > n
    shas = {r["provenance"]["text_sha"] for r in store.records(campaign=camp) if r["provenance"]["input"] == "t1"}
    assert shas == {corpus.inputs[1].sha, edited.inputs[1].sha}
    written = report_model(store, camp, model, tmp_path, console, {(t.id, t.sha) for t in edited.inputs})
    md = Path(written["d1"]["md"]).read_text()
    assert "2 inputs" in md and "| 0 |" in md
    assert all(Path(p).exists() for p in written["figures"])


def test_cli_rollout_runs_and_bad_corpora_are_clear(tmp_path, capsys):
    from verification.cli import main

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n")
    args = ["--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")]
    assert main(["rollout", "--model", "minilm", "--texts", str(texts), "--max-tokens", "32"] + args) == 0
    assert (tmp_path / "out" / "tables" / "trained-d1-minilm.md").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"body": 1}\n')
    assert main(["rollout", "--model", "minilm", "--texts", str(bad)] + args) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 9))
@settings(max_examples=40)
def test_causal_attention_forces_d1_equality_through_the_first_token(seed, n):
    """Why every causal verdict is tight: row 0 is e_0, so d_0j = 1 - A_j0, and for any pair
    overlap(i, j) >= min(A_i0, A_j0), i.e. d_ij <= max(d_0i, d_0j): delta(A) is always attained
    by a pair (0, j), which is mutually self-dominant (A_00 = 1 >= A_j0, A_jj >= A_0j = 0)."""
    from numerics.dobrushin import factor_check

    rng = np.random.default_rng(seed)
    A = np.tril(rng.dirichlet(np.ones(n), size=n) ** 3)     # spiky rows, causal mask
    A = A / A.sum(axis=-1, keepdims=True)
    fc = factor_check(A)
    eq, first, delta = d1_by_definition(A)
    assert eq and first and bool(fc.equality) and bool(fc.through_first)
    assert delta == max(1 - Fraction(float(x)) / sum(Fraction(float(y)) for y in A[j]) for j, x in enumerate(A[:, 0]))


def test_two_model_folders_of_the_same_name_do_not_collide(tmp_path):
    """`--model a/model` and `--model b/model` (different files) write separate tables, named by
    a model id with a content hash, and no caption, footer or table carries a path of this machine."""
    import shutil

    from numerics.sources.models import embedded_path
    from verification.cli import main

    src = embedded_path("minilm")[0]
    dirs = []
    for k, tweak in enumerate(("", " ")):
        d = tmp_path / f"run{k}" / "model"
        d.mkdir(parents=True)
        for f in src.iterdir():
            if f.is_file():
                (d / f.name).symlink_to(f) if f.suffix == ".safetensors" else shutil.copy(f, d / f.name)
        (d / "config.json").write_text((d / "config.json").read_text() + tweak)  # other bytes, same model
        dirs.append(d)
    texts = tmp_path / "t.txt"
    texts.write_text("The cat sat on the mat.\n")
    out = tmp_path / "out"
    for d in dirs:
        assert main(["rollout", "--model", str(d), "--texts", str(texts), "--max-tokens", "16",
                     "--db", str(tmp_path / "r.db"), "--out", str(out)]) == 0
    d1 = sorted(p.name for p in (out / "tables").glob("trained-d1-*.md"))
    assert len(d1) == 2 and all(n.startswith("trained-d1-model_") for n in d1), d1
    for p in list((out / "tables").iterdir()) + list((out / "figures").iterdir()):
        body = p.read_bytes()
        assert str(tmp_path).encode() not in body and str(src).encode() not in body, p.name


# -- sources, matched-n random baselines, bootstrap intervals (each check shown to fail on a planted bug) --

def slots_are_matched_and_independent(sizes, slots):
    """Every input's random sample has its own token count n, and no two inputs of one token set
    share a sample (so the pooled random share is a share of independent draws)."""
    for v, by in sizes.items():
        assert set(slots[v]) == set(by), v
        assert all(slots[v][k][0] == by[k] for k in by), f"{v}: a sample of another size"
        assert len(set(slots[v].values())) == len(by), f"{v}: two inputs share a random sample"


def test_baseline_slots_match_sizes_and_never_share_a_sample():
    from verification.measure.baselines import baseline_slots

    sizes = {"all": {("a", "1"): 5, ("b", "2"): 5, ("c", "3"): 7}, "content": {("a", "1"): 3, ("b", "2"): 5}}
    slots = baseline_slots(sizes)
    slots_are_matched_and_independent(sizes, slots)
    assert slots["all"] == {("a", "1"): (5, 0), ("b", "2"): (5, 1), ("c", "3"): (7, 0)}
    with pytest.raises(AssertionError, match="share"):                  # planted: c ignored
        slots_are_matched_and_independent(sizes, {v: {k: (n, 0) for k, (n, c) in by.items()}
                                                  for v, by in slots.items()})
    with pytest.raises(AssertionError, match="another size"):           # planted: n off by one
        slots_are_matched_and_independent(sizes, {v: {k: (n + 1, c) for k, (n, c) in by.items()}
                                                  for v, by in slots.items()})


def test_baseline_records_are_exact_d1_verdicts_on_matrices_of_the_slot_size():
    from numerics.sources.random import generator, sample
    from verification.measure.baselines import TRAINED, baseline_records

    for family in ("dirichlet", "softmax-T4"):
        recs = baseline_records(TRAINED, family, 3, 1, 12, 0)
        A = sample(family, 3, 12, generator(0, family, 3, TRAINED.offset + 1))
        assert [r.provenance["n"] for r in recs] == [3] * 12
        verdicts = [r.verdict.value == "tight" for r in recs]
        assert verdicts == [d1_by_definition(a)[0] for a in A]
        assert 0 < sum(verdicts) < 12                                 # both kinds occur at n = 3
        planted = sample(family, 4, 12, generator(0, family, 4, TRAINED.offset + 1))
        assert verdicts != [d1_by_definition(a)[0] for a in planted]  # another size: other verdicts


def _fake_layer_records(spec):
    """Stored-record dicts of head-mean D1 verdicts: spec = [(input, source, n, [tight per layer])]."""
    out = []
    for inp, src, n, tights in spec:
        for l, t in enumerate(tights):
            out.append(dict(theorem="dobrushin.factor", verdict="tight" if t else "holds", slack=0.0 if t else 0.1,
                            value=0.9, bound=0.9 + (0 if t else 0.1), extra={},
                            provenance=dict(input=inp, text_sha=inp, source=src, variant="all", layer=l,
                                            head=None, n=n)))
    return out


def test_source_table_counts_each_source_and_the_pool_with_matched_baselines():
    from verification.trained.findings.model import sources
    from verification.trained.findings.records import collect_records
    from verification.trained.report.tables import source_table

    spec = [("p0", "pydoc", 4, [1, 1]), ("p1", "pydoc", 4, [1, 0]), ("d0", "docstrings", 4, [0, 0]),
            ("l0", "licenses", 6, [1, 1])]
    data = collect_records(_fake_layer_records(spec), None)
    base = {("dirichlet", 4, 0): (3, 10), ("dirichlet", 4, 1): (1, 10), ("dirichlet", 4, 2): (2, 10),
            ("dirichlet", 6, 0): (0, 10)}
    rows, cols = source_table(sources(data, base, ("dirichlet",)), ("dirichlet",))
    got = {r[0]: r for r in rows}      # slots of n = 4 in sorted key order: d0 -> c0, p0 -> c1, p1 -> c2

    def expected(row):
        assert [r for r in row[5].split()][0] == {"pydoc": "1/2", "docstrings": "0/1", "licenses": "1/1",
                                                  "pooled": "2/4"}[row[0]], row
        assert row[2] == {"pydoc": 2, "docstrings": 1, "licenses": 1, "pooled": 4}[row[0]]
        assert row[-1].split()[0] == {"pydoc": "3/20", "docstrings": "3/10", "licenses": "0/10",
                                      "pooled": "6/40"}[row[0]], row

    assert list(got) == ["pydoc", "docstrings", "licenses", "pooled"]
    for row in rows:
        expected(row)
    assert got["pooled"][4].startswith("layer 1: 2/4")
    data["source"] = {k: "pydoc" for k in data["source"]}              # planted: sources merged
    with pytest.raises(AssertionError):
        for row in source_table(sources(data, base, ("dirichlet",)), ("dirichlet",))[0]:
            expected(row)


def test_findings_hold_the_records_counts_as_typed_values():
    """The findings of stored records (verification.trained.findings.model): each layer's D1 share
    is the tight count of its records with their Wilson interval, the slack a median with its band,
    every verdict counted once; the report's cells render these values (planted: a verdict flipped
    changes the share of its layer only)."""
    import math

    from verification.findings import Share
    from verification.trained.findings.model import model_findings
    from verification.trained.findings.records import collect_records
    from verification.trained.report.tables import d1_table

    spec = [("p0", "pydoc", 4, [1, 1, 0]), ("p1", "pydoc", 4, [1, 0, 0]), ("d0", "docstrings", 5, [0, 0, 1])]
    records = _fake_layer_records(spec)
    f = model_findings(collect_records(records, None))
    assert (f.inputs, f.layers, f.verdicts, f.exact) == (3, 3, 9, 0)
    for l in range(3):
        k = sum(t[l] for *_, t in spec)
        layer = f.sets["all"].layers[l]
        assert layer.tight == Share.wilson(k, 3) and (layer.tight.lo, layer.tight.hi) == wilson(k, 3)
        assert layer.slack.value == float(np.median([0.0 if t[l] else 0.1 for *_, t in spec]))
    assert f.tight_all.k == sum(sum(t) for *_, t in spec) and f.tight_all.n == 9
    assert not math.isnan(f.sets["all"].layers[0].tight.lo)
    rows, _ = d1_table(f)
    assert rows[0][1] == f"2/3 = 0.67 [{wilson(2, 3)[0]:.2f}, {wilson(2, 3)[1]:.2f}]"
    records[-1]["verdict"] = "holds"                                       # planted: d0's last layer
    g = model_findings(collect_records(records, None))
    assert g.sets["all"].layers[2].tight.k == f.sets["all"].layers[2].tight.k - 1
    assert [g.sets["all"].layers[l].tight for l in (0, 1)] == [f.sets["all"].layers[l].tight for l in (0, 1)]


def test_a_missing_random_sample_is_an_error_not_a_gap():
    from verification.measure.baselines import baseline_share

    with pytest.raises(KeyError, match="dirichlet/n5/c0"):
        baseline_share({}, {("a", "1"): (5, 0)}, [("a", "1")], "dirichlet")


def test_median_interval_is_order_statistics_and_brackets_the_median():
    from verification.stats import median_interval
    from verification.stats.spread import median_rank

    x = [0.0] * 30 + [100.0] * 20 + list(np.linspace(1, 2, 9))
    m, (lo, hi) = median_interval(x)
    assert m == float(np.median(x)) and lo <= m <= hi
    j, s = median_rank(len(x)), sorted(x)
    assert (lo, hi) == (s[j - 1], s[len(x) - j])                         # the order statistics themselves
    assert median_interval(x[::-1]) == (m, (lo, hi))                      # no resampling: order does not matter
    four = median_interval([0.3, None, 0.1, 0.4, 0.2])                    # four inputs (DINOv2-S): no 95% interval
    assert four[0] == pytest.approx(0.25) and all(np.isnan(four[1]))
    assert median_interval([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]) == (1.0, (1.0, 1.0))


def test_the_paper_needs_the_random_baselines_of_the_main_inputs(tmp_path):
    """Without the matched-n random samples of every main-job input the paper part is a
    MissingCampaign naming the baseline campaign (planted: one model's samples only)."""
    from verification import campaign
    from verification.report.part import MissingCampaign
    from verification.store import ResultStore
    from verification.testing.fakes import causal_standin, functional_standin
    from verification.measure.attention import chunk_key, instance_records
    from verification.trained.checks import Plan, baseline_campaign
    from verification.trained.checks import measure_baselines
    from verification.measure.text import campaign_prefix, main_inputs
    from verification.trained.paper import paper_part

    plan = Plan.for_verify(0, False)
    with ResultStore(tmp_path / "r.db") as s:
        names = {}
        for m, T in (("minilm", 5), ("smollm2", 7), ("gemma3", 6), ("antiberty", 8), ("dinov2", 9)):   # other token counts
            names[m] = campaign_prefix(m, False) + "stand-in"
            campaign.run(s, names[m], [campaign.Chunk(chunk_key(main_inputs(m, False)[0]), instance_records,
                                                      (causal_standin(T=T, L=2, H=1, model=m,
                                                                      causal=m in ("smollm2", "gemma3")),
                                                       True, False, True))],
                         progress=False)
        with pytest.raises(MissingCampaign) as err:
            paper_part(s, plan)
        assert err.value.campaign == baseline_campaign(0)
        measure_baselines(s, names["minilm"], None, 0)
        with pytest.raises(MissingCampaign):
            paper_part(s, plan)
        for m in ("smollm2", "gemma3", "antiberty", "dinov2"):
            measure_baselines(s, names[m], None, 0)
        with pytest.raises(MissingCampaign, match="trained-functional"):      # each checkpoint's functional check
            paper_part(s, plan)
        for m in names:
            functional_standin(m, "stand-in", s)
        macros = paper_part(s, plan).macros
        drawn = [r for r in s.records(campaign=baseline_campaign(0)) if r["chunk"] == "dirichlet/n5/c0"]
        means = [r for r in s.records(campaign=names["minilm"]) if r["theorem"] == "dobrushin.factor"
                 and r["provenance"]["head"] is None and r["provenance"]["variant"] == "all"]
    # the size of the slack, from the stored records (verification.trained.paper.size): strict verdicts counted
    assert macros["MiniLMRelSlackStrict"] == f"{sum(r['verdict'] == 'holds' for r in means)}/{len(means)}"
    assert (macros["MiniLMRelSlackMedian"] == "-") == all(r["verdict"] != "holds" for r in means)
    assert macros["MiniLMPooledInputs"] == "1" and macros["MiniLMSources"] == "1"
    assert macros["MiniLMLicensesInputs"] == "0"
    assert len(drawn) == 10                       # the minilm stand-in, all tokens: n = 5, its own sample
    assert macros["MiniLMPooledRandomDirichletShare"] == f"{sum(r['verdict'] == 'tight' for r in drawn) / 10:.2f}"
    # the controls: one input per stand-in is too few to compare (no interval, no word)
    assert macros["ControlComparisons"] == "0" and macros["MiniLMControlColumnsWord"] == "-"
    assert "too few" in macros["MiniLMControlSentence"]
    assert "SmolLMTwoControlColumnsWord" not in macros          # a causal model's share is forced: not compared
    assert macros["MiniLMEveryPairCells"].endswith("/2")        # two layers, one input


def _planted_controls(inputs: int, real: float, columns: float, seed: int = 0) -> dict:
    """data_by_model of one bidirectional model: ``inputs`` inputs of 3 layers, each head mean tight with
    probability ``real``, its column-permuted control with ``columns``, the shuffled one always."""
    from collections import defaultdict

    rng = np.random.default_rng(seed)
    layer = defaultdict(lambda: defaultdict(list))
    for i in range(inputs):
        for l in range(3):
            layer["all"][l].append(dict(verdict="tight" if rng.random() < real else "holds",
                                        provenance=dict(input=f"in{i}", text_sha=f"{i:04x}", n=5, layer=l, head=None),
                                        extra=dict(control_columns="tight" if rng.random() < columns else "holds",
                                                   control_offdiagonal="tight")))
    data = dict(layer=layer, head={}, roll={}, inputs={(f"in{i}", f"{i:04x}") for i in range(inputs)}, source={})
    base = {("dirichlet", 5, c): (int(rng.integers(0, 4)), 10) for c in range(inputs)}
    return data, base


@pytest.mark.parametrize("real, columns", [(0.9, 0.2), (0.5, 0.5), (0.2, 0.9)])
def test_the_control_words_are_the_intervals_words(real, columns):
    """Planted shares: each comparison's word is "above" / "below" exactly where its simultaneous
    interval excludes 0 on that side, "not separable from" where it holds 0, its decision "supported"
    exactly there; a clear planted gap is found."""
    from verification.trained.paper.controls import word_of
    from verification.trained.findings import comparisons

    level = 1 - 0.05 / 3
    got = {c.reference: c for c in comparisons(*_planted_controls(40, real, columns), level)}
    assert list(got) == ["columns", "offdiagonal", "random"]
    for c in got.values():
        lo, hi = c.decision.interval
        assert lo <= c.difference <= hi and c.decision.level == level
        assert word_of(c) == ("above" if lo > 0 else "below" if hi < 0 else "not separable from")
        assert c.decision.outcome == ("inconclusive" if lo <= 0 <= hi else "supported")
    if real - columns > 0.5:
        assert word_of(got["columns"]) == "above"
    if columns - real > 0.5:
        assert word_of(got["columns"]) == "below"
    assert word_of(got["offdiagonal"]) != "above"          # the shuffled control is always tight


def _float_by_hand(M, dtype):
    """D1 at tolerance 0 with numpy in ``dtype``: every pair's L1 distance summed in that precision."""
    A = np.asarray(M, dtype=dtype)
    n = A.shape[0]
    half = (np.eye(n, dtype=dtype) + A) / dtype(2)

    def delta(P):
        return max(np.abs(P[i] - P[j]).sum(dtype=dtype) for i in range(n) for j in range(i)) / dtype(2)
    lhs, rhs = delta(half), (dtype(1) + delta(A)) / dtype(2)
    return "tight" if lhs == rhs else "holds" if lhs < rhs else "violated"


def test_float_verdicts_at_tolerance_zero():
    from verification.measure.attention import float_verdicts

    # dyadic entries: every float operation is exact, so the float test gives the exact verdict
    dy = np.array([[[0.5, 0.25, 0.25], [0.125, 0.75, 0.125], [0.25, 0.25, 0.5]],
                   [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]]])
    exact = ["tight" if d1_by_definition(M)[0] else "holds" for M in dy]
    for dt in ("float32", "float64"):
        assert list(float_verdicts(dy, dt)) == exact
    # on float32 attention-like rows (peaked Dirichlet, n = 32) the float test depends on rounding: at
    # tolerance 0 it gets exact verdicts wrong, shows apparent violations, and misses exact equalities;
    # a hand computation (plain L1 sums in numpy) gets them wrong too, so it is not one kernel's artefact
    from numerics.dobrushin import factor_check

    rng = np.random.default_rng(5)
    A = rng.dirichlet(np.ones(32) * 0.3, size=(200, 32)).astype(np.float32).astype(np.float64)
    exact = np.where(factor_check(A, renormalise=True).equality, "tight", "holds")
    assert (exact == "tight").any()
    got = float_verdicts(A, "float32")
    hand = np.array([_float_by_hand(M, np.float32) for M in A])
    assert set(got) <= {"tight", "holds", "violated"} and set(hand) <= {"tight", "holds", "violated"}
    assert (got != exact).any() and (hand != exact).any()
    assert (got == "violated").any() and (got[exact == "tight"] != "tight").any()


def test_records_carry_float_verdicts_only_when_asked():
    from verification.measure.attention import instance_records
    from numerics.sources import AttentionInstance

    rng = np.random.default_rng(0)
    A = rng.dirichlet(np.ones(5), size=(2, 3, 5)).astype(np.float32).astype(np.float64)
    inst = AttentionInstance(model="toy", input="i", sha="s", attention=A, special=np.zeros(5, dtype=bool),
                             causal=False, provenance={"model": "toy", "input": "i"})
    plain = instance_records(inst, comparison=False)
    floats = instance_records(inst, comparison=False, float_tests=True)
    d1 = [r for r in floats if r.theorem == "dobrushin.factor"]
    on_all = [r for r in d1 if r.provenance["variant"] == "all"]
    assert on_all and all(r.extra["float32"] in ("tight", "holds", "violated") and "float64" in r.extra
                          for r in on_all)
    assert len(on_all) < len(d1) and not any("float32" in r.extra for r in d1 if r not in on_all)  # "all" only
    assert not any("float32" in r.extra for r in plain)
    assert [r.verdict for r in plain] == [r.verdict for r in floats]     # the exact verdicts are unchanged


@pytest.mark.parametrize("model,limit", [("antiberty", 3), ("gemma3", 2)])
def test_cli_rollout_on_the_new_embedded_models_stores_per_head_records(tmp_path, model, limit):
    """``attnbounds rollout --model gemma3|antiberty``: offline, per-head records with exact verdicts
    and the float tests beside them; AntiBERTy reads its own corpus (antibody V genes) by default."""
    from numerics.sources.corpus import ANTIBODY_NAME
    from numerics.sources.models import load_model
    from verification.cli import main
    from verification.store import ResultStore

    db = tmp_path / "r.db"
    assert main(["rollout", "--model", model, "--limit", str(limit), "--max-tokens", "64", "--db", str(db),
                 "--out", str(tmp_path / "out")]) == 0
    m = load_model(model, max_tokens=64)
    with ResultStore(db) as s:
        (camp,) = [c for c in s.campaigns("trained-") if f":{model}:" in c]
        recs = list(s.records(camp))
    assert (ANTIBODY_NAME in camp) == (model == "antiberty") and camp.endswith(m.fingerprint)
    heads = [r for r in recs if r["theorem"] == "dobrushin.factor" and r["provenance"]["head"] is not None]
    assert len({r["provenance"]["input"] for r in heads}) == limit
    assert {(r["provenance"]["layer"], r["provenance"]["head"]) for r in heads} == \
        {(l, h) for l in range(m.layers) for h in range(m.heads)}
    assert all(r["verdict"] in ("tight", "holds") for r in heads)
    alltok = [r for r in heads if r["provenance"]["variant"] == "all"]
    assert all(r["extra"]["float32"] in ("tight", "holds", "violated") for r in alltok)
    if m.causal:                                  # Gemma: every verdict forced tight (causal corollary)
        assert all(r["verdict"] == "tight" for r in heads)
    text = TextInput(id="t0", text=TEXTS[1], source="test")
    states_agree(m, text, m.instance(text).attention)      # what rollout --check binds, on GGUF weights too


# -- the plan: one object from the command line to the paper (issue 49) ------------------------------

def _parsed(line):
    """``attnbounds ...`` parsed by the CLI's own parser (nothing run)."""
    import shlex

    from verification.cli import build_parser

    words = shlex.split(line)[1:]
    return build_parser(words).parse_args(words + ["--db", ":memory:"])


def test_the_plans_command_line_plans_it_again():
    """``plan.command()`` is the main job's line for the main job's plan, and otherwise the rollout
    line that, parsed by the CLI, gives the same plan (a planted line without one option does not)."""
    from verification.measure.text import rollout_command
    from verification.trained.checks import Plan

    assert Plan.for_verify(0, False).command() == "attnbounds verify --only trained --seed 0"
    assert Plan.for_verify(3, True).command() == "attnbounds verify --only trained --seed 3 --full"
    plans = [Plan.from_args(_parsed(line)) for line in (
        "attnbounds rollout --model antiberty --limit 48 --max-tokens 128",
        "attnbounds rollout --model minilm",
        "attnbounds rollout --model '/data/my model' --texts '/data/a b.txt' --limit 5 --allow-pickle --seed 4 --full")]
    assert plans[0].command() == rollout_command("antiberty", False)       # the line the paper prints today
    for plan in plans:
        assert not plan.is_main() and Plan.from_args(_parsed(plan.command())) == plan, plan.command()
    planted = plans[2].command().replace(" --full", "")
    assert Plan.from_args(_parsed(planted)) != plans[2]


def test_the_plans_provenance_is_flat_and_names_no_path():
    from verification.plan import Plan as PlanProtocol, provenance_line
    from verification.trained.checks import Plan

    assert isinstance(Plan.for_verify(0, False), PlanProtocol) and Plan.for_verify(0, True).full is True
    prov = Plan.for_verify(0, False).provenance()
    assert provenance_line(prov).startswith("seed 0; preset quick; models minilm")
    assert prov == {"seed": 0, "preset": "quick", "models": "minilm, smollm2, gemma3, antiberty, dinov2",
                    "corpora": "default, default, default, antibody-v-genes, bundled-photos",
                    "inputs": "120, 6, 6, 48, 4", "max tokens": "128, 128, 128, 128, 257", "baselines": "trained-baseline-v1-seed0-m10"}
    user = Plan.from_args(_parsed("attnbounds rollout --model /data/x/model --texts /data/t.txt --full")).provenance()
    assert user["preset"] == "full" and user["models"] == "model" and user["corpora"] == "t.txt"
    assert not any("/data" in str(v) for v in user.values())


def test_the_paper_reads_the_main_jobs_plan_only(tmp_path):
    """A rollout run's plan (``paper --from "rollout ..."``) is refused in one line naming its
    command, before the store is read; the main job's plan at any seed is read."""
    from theory.errors import InvalidInput
    from verification.report.part import MissingCampaign
    from verification.store import ResultStore
    from verification.trained import paper
    from verification.trained.checks import Plan

    user = Plan.from_args(_parsed("attnbounds rollout --model minilm --limit 120 --max-tokens 128"))
    with ResultStore(tmp_path / "r.db") as s:
        for fn in (paper.paper_part, paper.needs):
            with pytest.raises(InvalidInput, match="attnbounds rollout --model minilm"):
                fn(s, user)
        with pytest.raises(MissingCampaign, match="--seed 2"):
            paper.paper_part(s, Plan.for_verify(2, False))
        assert {n.command for n in paper.needs(s, Plan.for_verify(2, True))} == \
            {"attnbounds verify --only trained --seed 2 --full"}


def test_run_returns_what_ran_and_a_rerun_skips_it(store, tmp_path):
    from verification.plan import RunResult
    from verification.trained.checks import ModelRun, Plan, baseline_campaign, run

    texts = tmp_path / "t.txt"
    texts.write_text(TEXTS[0] + "\n")
    plan = Plan((ModelRun("minilm", str(texts), 1, 16),), 0)
    first = run(plan, store)
    assert isinstance(first, RunResult) and first.family == "trained"
    assert set(first.names()) == set(plan.campaigns()) and baseline_campaign(0) in first.names()
    assert first.computed > 1 and first.skipped == 0 and first.records == store.count()
    again = run(plan, store)
    assert (again.computed, again.skipped, again.records) == (0, first.computed, 0)


def test_rollout_on_a_users_model_reads_its_corpus_once_and_reports_float_against_exact(tmp_path, monkeypatch,
                                                                                         capsys):
    """``attnbounds rollout --model FOLDER``: the default corpus is read once (planning, measuring and
    reporting used to read it three times); the report has the float-versus-exact table the paper
    has (trained-float), for this model, its counts those of the stored records; the sources
    table's column says it shows the layer with the lowest share."""
    import csv

    from numerics.sources import corpus
    from verification.cli import main
    from verification.store import ResultStore
    from verification.testing.fakes import tiny_bert
    from verification.trained.findings.model import FLOAT_TESTS, float_counts
    from verification.trained.report.tables import FLOAT_COLUMNS, LOWEST_SHARE

    folder = tiny_bert(tmp_path / "bert")
    reads = []
    real = corpus.default_corpus
    monkeypatch.setattr(corpus, "default_corpus", lambda *a, **k: reads.append(a) or real(*a, **k))
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert main(["rollout", "--model", str(folder), "--limit", "2", "--max-tokens", "16", "--db", str(db),
                 "--out", str(out)]) == 0
    assert len(reads) == 1
    printed = capsys.readouterr().out
    [table] = list((out / "tables").glob("trained-float-bert_*.csv"))
    rows = list(csv.reader(table.open()))
    assert rows[0] == FLOAT_COLUMNS and [r[1] for r in rows[1:]] == list(FLOAT_TESTS) + ["always tight"]
    with ResultStore(db) as s:
        d1 = [r for r in s.records(theorem="dobrushin.factor") if r["campaign"].startswith("trained-v")
              and r["provenance"]["variant"] == "all"]
    assert int(rows[1][2]) == len(d1) > 0
    for r in rows[1:4]:
        wrong, violated, missed = float_counts(d1, "float32" if r[1] == "renormalised" else f"float32 {r[1]}")
        assert r[3].startswith(f"{wrong}/{len(d1)} ") and (int(r[4]), int(r[5])) == (violated, missed)
    assert "float test" in printed and "always tight" in printed
    [sources] = list((out / "tables").glob("trained-sources-bert_*.csv"))
    header = next(csv.reader(sources.open()))
    assert LOWEST_SHARE in header and "D1 tight, lowest layer" not in header


def _shares(obj, seen=None):
    """Every Share reachable from a findings value (dataclasses, dicts, tuples)."""
    import dataclasses

    from verification.findings import Share

    if isinstance(obj, Share):
        yield obj
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from _shares(getattr(obj, f.name))
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _shares(v)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            yield from _shares(v)


def test_every_share_of_the_findings_has_one_interval_method_monotone_in_the_count():
    """Issue 62, item 5: every share a trained model's findings hold is either a plain count, a share
    a theorem forces (n of n, no interval), or has the Wilson interval of its count (clustered: on the
    effective count, never narrower); and at every total n the findings hold, the bounds increase with k."""
    from verification.stats import wilson
    from verification.trained.findings.model import model_findings
    from verification.trained.findings.records import cluster_share, collect_records, tight

    spec = [(f"i{k}", "pydoc", 4 + k % 3, [k % 2, 1, k % 3 == 0]) for k in range(12)]
    f = model_findings(collect_records(_fake_layer_records(spec), None))
    shares = list(_shares(f))
    assert shares and {s.method for s in shares} <= {"wilson", "wilson-clustered", "count", "forced"}
    for s in shares:
        if s.method == "wilson":
            assert (s.lo, s.hi) == wilson(s.k, s.n) or s.n == 0
        elif s.method == "wilson-clustered":
            w = wilson(s.k, s.n)
            assert s.lo <= w[0] and s.hi >= w[1]
    for n in {s.n for s in shares if s.n}:
        b = [wilson(k, n) for k in range(n + 1)]
        assert all(x[0] <= y[0] and x[1] <= y[1] for x, y in zip(b, b[1:])), n
    rs = _fake_layer_records([(f"i{k}", "pydoc", 6, [0] * 5) for k in range(40)])   # no hit at all, then one
    zero = cluster_share(rs, tight)
    rs[0]["verdict"] = "tight"
    one = cluster_share(rs, tight)
    assert (zero.lo, zero.hi) == wilson(0, 200) and one.lo >= zero.lo and one.hi >= zero.hi


def test_a_share_the_causal_corollary_forces_is_printed_forced_without_interval():
    import math

    from verification.trained.findings.model import model_findings
    from verification.trained.findings.records import collect_records
    from verification.trained.report.tables import d1_table

    records = _fake_layer_records([(f"i{k}", "pydoc", 5, [1, 1]) for k in range(6)])
    for r in records:
        r["provenance"]["causal"] = True
    f = model_findings(collect_records(records, None), causal=True)
    layer = f.sets["all"].layers[0].tight
    assert layer.forced and layer.k == layer.n == 6 and math.isnan(layer.lo)
    assert d1_table(f)[0][0][1] == "6/6 = 1 (forced)"
    records[0]["verdict"] = "holds"                     # a causal verdict not tight: measured, never hidden as forced
    g = model_findings(collect_records(records, None), causal=True)
    assert not g.sets["all"].layers[0].tight.forced and g.sets["all"].layers[0].tight.k == 5


def test_the_models_summary_is_one_block_and_the_float_table_keeps_its_keys():
    """Issue 62, item 12: Table 1 (trained-models-summary) is set in one block at its widest cells, and
    the float table, split into column blocks, repeats model and float test in each (planted: one key)."""
    import pandas as pd

    from verification.paper.tables import layout
    from verification.report.tables import Table
    from verification.trained.paper.across import SUMMARY_COLUMNS, causal_name
    from verification.trained.report.tables import FLOAT_COLUMNS

    row = [causal_name("SmolLM2-135M (4-bit)"), "30 x 12", 120] + ["0.92 [0.89, 0.93]"] * 3
    assert len(layout(Table("s", pd.DataFrame([row, ["all-MiniLM-L6-v2"] + row[1:]], columns=SUMMARY_COLUMNS), "c"))
               .col_blocks) == 1
    cells = ["SmolLM2-135M-Instruct (4-bit GGUF)", "renormalised", 9360] + ["4181/9360 [0.43, 0.46]", 2090, 4180] * 2
    frame = pd.DataFrame([cells], columns=FLOAT_COLUMNS)
    blocks = layout(Table("f", frame, "c", keys=2)).col_blocks
    assert len(blocks) > 1 and all(b[:2] == [0, 1] for b in blocks)
    assert not all(b[:2] == [0, 1] for b in layout(Table("f", frame, "c")).col_blocks)
    from verification.paper.tables import table_tex

    heads = [line for line in table_tex(Table("f", frame, "c", keys=2)).splitlines() if line.startswith("model &")]
    assert len(heads) == len(blocks) and all(h.startswith("model & float test &") for h in heads)   # as typeset
