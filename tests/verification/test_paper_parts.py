"""Each family's paper part, built from a tiny store filled by the family's own checks: non-empty
tables, letter-only macro names, every macro / table / figure the section's prose cites, a
MissingCampaign naming the campaign and command on an empty store, byte-identical rebuilds."""
import io
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from verification import campaign
from verification.report.part import MissingCampaign
from verification.store import ResultStore

pytestmark = pytest.mark.models
SECTIONS = Path(__file__).resolve().parents[2] / "paper" / "sections"
PAPER_FAMILIES = ("dobrushin", "trained", "rank", "poincare")
# capitalised commands the sections may use that are not generated macros: main.tex's own and TeX's
NOT_MACROS = {"Dob", "Suite", "Guard", "ProvTag", "ProvLink", "DataRef", "Delta", "Gamma", "Lambda", "Omega", "Phi", "Pi", "Psi", "Sigma", "Theta", "Xi"}


def _dobrushin(store):
    from verification.dobrushin import checks as job

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(job.Plan, "instances", lambda self, n: 6)
        mp.setattr(job, "CHUNK", 6)
        job.run(job.Plan(seed=0, sizes=(2, 3, 8)), store)


def _causal_standin(T=6, L=3, H=2, seed=0):
    """A causal instance under the SmolLM2 name (:func:`verification.testing.fakes.causal_standin`)."""
    from verification.testing.fakes import causal_standin

    return causal_standin(T, L, H, seed)


def _trained(store):
    from numerics.sources.models import load_model
    from verification.measure.attention import chunk_key, input_records, instance_records
    from verification.measure.text import campaign_prefix, main_inputs

    # the first two of the main job's inputs (the paper reads those only), at the quick settings
    model = load_model("minilm", max_tokens=128)
    texts = main_inputs("minilm", False)[:2]
    campaign.run(store, campaign_prefix("minilm", False) + model.fingerprint,
                 [campaign.Chunk(chunk_key(t), input_records, (model, t, True, True, True)) for t in texts])
    from verification.testing.fakes import causal_standin

    for name, causal in (("smollm2", True), ("gemma3", True), ("antiberty", False), ("dinov2", False)):   # stand-ins: no weights
        first = main_inputs(name, False)[0]
        campaign.run(store, campaign_prefix(name, False) + "stand-in",
                     [campaign.Chunk(chunk_key(first), instance_records,
                                     (causal_standin(model=name, causal=causal), False, True, True))])
    from verification.trained.checks import measure_baselines   # random matrices at the same token counts
    from verification.testing.fakes import functional_standin   # each checkpoint's functional check (made up)
    for name in ("minilm", "smollm2", "gemma3", "antiberty", "dinov2"):
        measure_baselines(store, campaign_prefix(name, False) + (model.fingerprint if name == "minilm" else "stand-in"),
                          None, 0)
        functional_standin(name, model.fingerprint if name == "minilm" else "stand-in", store)


def _tiny_llama():
    """A stand-in for SmolLM2's weights: a tiny random Llama (grouped-query attention, as SmolLM2)."""
    import torch
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=64, max_position_embeddings=64)
    module = LlamaModel(cfg).to(torch.float32).eval()
    return SimpleNamespace(module=module, config=cfg, quantised=True, fingerprint="stand-in")


def _rank(store):
    import numerics.sources.models as models
    from verification.rank.checks import attention as att
    from verification.rank.checks import linear, weights
    from verification.rank.checks.linear import QUICK, run_linear

    # fewer seeds, steps and cells than the quick plan, with its n and r*: the same campaign names
    real = models.load_model
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(linear, "COVS", ("spread",))
        run_linear(store, replace(QUICK, seeds=1, gd_seeds=2, gd_steps=200, init_scales=(1e-3,), samples=(8,),
                                  noises=(0.01, 0.1), est_seeds=3))
        att.run_attention(store, replace(att.QUICK_ATT, inputs=(8,), noises=(0.0,), betas=(1.0,), seeds=1,
                                         student_seeds=1, steps=100, lams=(0.0, 1.0), fit_starts=1), 0)
        mp.setattr(models, "load_model", lambda name, **kw: _tiny_llama() if name == "smollm2" else real(name, **kw))
        weights.run_weights(store)


def _poincare(store):
    from verification.poincare.checks import Plan, bounds as checks, sde, villani as villani_map

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Plan, "grid", lambda self, name: [(4.0, 0.3)] if name.startswith("gauss") else
                   [(4.0, 1.0), (4.0, 3.0)])
        mp.setattr(villani_map, "map_grid", lambda full: ((0.25, 16.0), (0.001, 1.0)))
        mp.setattr(villani_map, "map_seeds", lambda plan: (plan.seed,))
        checks.run_campaign(store, Plan(families=("gauss1", "attn1")))
        villani_map.run_villani_map(store, Plan())
    campaign.run(store, sde.sde_campaign(Plan()),
                 [campaign.Chunk("rate-attn1", sde.rate_records, ("attn1", 4.0, 0.3, 0, 200, 100)),
                  campaign.Chunk("expected-attnfull", sde.expected_loss_records, ("attnfull", 0.1, (64.0,), 0, 16, 40))])


FILL = {"dobrushin": _dobrushin, "trained": _trained, "rank": _rank, "poincare": _poincare}


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper-parts")
    return root


def _store(root, family):
    path = root / f"{family}.db"
    if not path.exists():
        with ResultStore(path) as s:
            FILL[family](s)
    return path


def _part(path, family):
    from importlib import import_module

    with ResultStore(path) as s:
        return import_module(f"verification.{family}.paper").paper_part(s, _main_plan(family, 0, False))


def _main_plan(family, seed, full):
    """The main job's plan of ``family`` (the paper builder's: made once, handed to its part)."""
    from verification.family import role

    return role(family, "checks").Plan.for_verify(seed, full)


@pytest.fixture(scope="module", params=PAPER_FAMILIES)
def built(request, stores):
    path = _store(stores, request.param)
    return request.param, path, _part(path, request.param)


def test_tables_macros_and_commands(built):
    import pandas as pd

    family, _, part = built
    assert part.family == family
    assert part.tables and part.figures
    for t in part.tables:
        assert isinstance(t.frame, pd.DataFrame) and len(t.frame) > 0 and len(t.frame.columns) > 1, t.name
        assert re.fullmatch(r"[a-z0-9-]+", t.name) and t.caption and t.provenance
        assert all(isinstance(c, str) for c in t.frame.columns)
    assert len({t.name for t in part.tables}) == len(part.tables)
    assert part.macros and all(re.fullmatch(r"[A-Za-z]+", name) for name in part.macros)
    # every macro has a value, but an optional clause (its name ends in Abstract or Clause), empty where the
    # settings do not support it: DINOv2-S's share on fewer than all photographs, the quick plan's absent decoders
    assert all(isinstance(v, str) and (v or name.endswith(("Abstract", "Clause"))) for name, v in part.macros.items())
    assert part.commands == [f"attnbounds verify --only {family} --seed 0"]


def test_prose_cites_only_what_the_part_produces(built):
    family, _, part = built
    tex = re.sub(r"(?<!\\)%.*", "", (SECTIONS / f"{family}.tex").read_text())
    used = set(re.findall(r"\\([A-Z][A-Za-z]*)", tex)) - NOT_MACROS
    assert used, "the prose quotes no number"
    assert used <= set(part.macros), sorted(used - set(part.macros))
    tables = set(re.findall(r"\\input\{tables/([^}]+)\}", tex))     # typeset here, or in an appendix and cited
    cited = set(re.findall(r"\\ref\{tab:([^}]+)\}", tex))
    assert tables | cited and (tables | cited) <= {t.name for t in part.tables}
    figures = set(re.findall(r"\\includegraphics(?:\[[^]]*\])?\{figures/([^}]+)\.pdf\}", tex))
    assert figures <= {f.name for f in part.figures}      # a section may show none of its figures (data only)
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{([^}]+)\}", tex):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env
    assert not stack


def _png(fig_spec) -> bytes:
    from verification.report.aggregate import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4, 3))
    fig_spec.draw(ax)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=50, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def test_rebuilding_gives_identical_results(built):
    family, path, part = built
    again = _part(path, family)
    assert again.macros == part.macros and list(again.macros) == list(part.macros)
    assert [t.name for t in again.tables] == [t.name for t in part.tables]
    for a, b in zip(part.tables, again.tables):
        assert a.frame.to_csv() == b.frame.to_csv() and a.caption == b.caption and a.provenance == b.provenance
    assert [f.name for f in again.figures] == [f.name for f in part.figures]
    for a, b in zip(part.figures, again.figures):
        assert _png(a) == _png(b), a.name


@pytest.mark.parametrize("family", PAPER_FAMILIES)
def test_an_empty_store_names_the_missing_campaign(tmp_path, family):
    with pytest.raises(MissingCampaign) as err:
        _part(tmp_path / "empty.db", family)
    assert err.value.command == f"attnbounds verify --only {family} --seed 0"
    assert err.value.campaign and err.value.campaign in str(err.value)
    with pytest.raises(MissingCampaign) as err:
        from importlib import import_module

        with ResultStore(tmp_path / "empty.db") as s:
            import_module(f"verification.{family}.paper").paper_part(s, _main_plan(family, 3, True))
    assert err.value.command == f"attnbounds verify --only {family} --seed 3 --full"


def test_results_match_the_theorems(stores):
    """What the parts quote agrees with what the theorems force on the tiny stores."""
    d = _part(_store(stores, "dobrushin"), "dobrushin").macros
    k, n = map(int, d["DOneCausalTight"].split("/"))
    assert k == n > 0                                     # causal attention: D1 always tight
    k, n = map(int, d["DTwoNTwoTight"].split("/"))
    assert k == n > 0                                     # 2x2: delta = |det|, D2 always tight
    assert d["DTwoContinuousTight"].startswith("0/")      # positive entries, n >= 3: never
    t = _part(_store(stores, "trained"), "trained").macros
    assert t["SmolLMTwoInputs"] == "1" and t["MiniLMInputs"] == "2"
    k, n = map(int, t["SmolLMTwoDOneTightAllRecords"].split("/"))
    assert k == n > 0                                     # the causal stand-in: structural equality
    assert t["DOneShareSmolLMTwoLastLayerNofirst"] == "1 (forced)"            # forced: no interval, a check


def test_a_missing_model_is_a_missing_campaign(tmp_path):
    from verification.measure.text import campaign_prefix, main_inputs

    from verification.measure.attention import chunk_key, instance_records

    with ResultStore(tmp_path / "one.db") as s:
        campaign.run(s, campaign_prefix("smollm2", False) + "stand-in",
                     [campaign.Chunk(chunk_key(main_inputs("smollm2", False)[0]), instance_records,
                                     (_causal_standin(),))])
        with pytest.raises(MissingCampaign) as err:
            _part(tmp_path / "one.db", "trained")
    assert "minilm" in err.value.campaign


# -- issue 26: legible figures, no ASCII mathematics, guarded sentences ------------------------------
def test_every_figure_renders_without_overprinting(built):
    """Each figure drawn as the paper draws it (printed size, paper fonts): no text over an axis
    label, a tick label or another text (the check itself fails on a planted footer:
    tests/verification/test_figures.py)."""
    from verification.report.aggregate import pyplot
    from verification.report.figures import COLUMN, overlaps, style

    family, _, part = built
    plt = pyplot()
    for spec in part.figures:
        with plt.rc_context(style()):
            fig, ax = plt.subplots(figsize=COLUMN)
            try:
                spec.draw(ax)
                assert overlaps(fig) == [], spec.name
            finally:
                plt.close(fig)


def test_tables_and_prose_write_no_ascii_mathematics(built):
    from verification.paper.latex import ascii_math
    from verification.paper.tables import table_tex

    family, _, part = built
    for t in part.tables:
        assert ascii_math(table_tex(t)) == [], t.name
    assert ascii_math((SECTIONS / f"{family}.tex").read_text()) == [], family


def test_every_guarded_sentence_of_the_section_is_guarded_by_its_family(built):
    """Each ``\\Guard{Key}{...}`` of the family's section names a condition the part computes (on
    the tiny store it may be false: the build, not this test, checks its truth)."""
    from verification.paper.latex import guarded_sentences

    family, _, part = built
    keys = {k for k, _ in guarded_sentences((SECTIONS / f"{family}.tex").read_text())}
    assert keys <= set(part.guards), sorted(keys - set(part.guards))
