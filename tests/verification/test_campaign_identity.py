"""The paper reads exactly what the main job wrote: a user's run of a family's command with other
settings into the same store (other families or sizes, more inputs, another token limit) leaves
every macro and table of the paper parts unchanged, even where it writes into the same campaign.

Each test builds the main job's part of the store (at the smallest size the other tests use),
takes the paper part, adds the user's run through the command line, and compares."""
import shutil

import pytest

from verification.cli import main
from verification.store import ResultStore


def _snapshot(part) -> dict:
    """Everything of a paper part that reaches the paper, figures by name and caption."""
    return dict(macros=dict(part.macros),
                tables=[(t.name, t.frame.to_csv(), t.caption, t.provenance) for t in part.tables],
                figures=[(f.name, f.caption, f.provenance) for f in part.figures],
                commands=list(part.commands))


def _assert_unchanged(before: dict, after: dict) -> None:
    changed = {k: (before["macros"].get(k), after["macros"].get(k))
               for k in set(before["macros"]) | set(after["macros"])
               if before["macros"].get(k) != after["macros"].get(k)}
    assert not changed, f"macros changed by another run: {sorted(changed.items())[:8]}"
    assert after == before


# -- dobrushin -------------------------------------------------------------------------------------

def test_dobrushin_paper_ignores_a_user_run_of_other_families_and_sizes(tmp_path, monkeypatch):
    from verification.dobrushin import checks as job
    from verification.dobrushin.paper import paper_part

    # the main job's design (every family and size), a few instances per (family, n)
    monkeypatch.setattr(job.Plan, "instances", lambda self, n: 4)
    monkeypatch.setattr(job, "CHUNK", 4)
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        job.run(job.Plan(seed=0), s)
        before = _snapshot(paper_part(s, job.Plan.for_verify(0, False)))
    # the same seed and quick settings, so the same campaign name: another family, another size
    assert main(["dobrushin", "--families", "softmax-T2,hard", "--sizes", "3,6", "--seed", "0",
                 "--db", str(db), "--out", str(tmp_path / "user")]) == 0
    with ResultStore(db) as s:
        stored = {(r["provenance"]["family"], r["provenance"]["n"]) for r in s.records(job.Plan(seed=0).campaign)}
        assert ("softmax-T2", 3) in stored and ("hard", 6) in stored     # the user's run is in the campaign
        after = _snapshot(paper_part(s, job.Plan.for_verify(0, False)))
    _assert_unchanged(before, after)


# -- trained (and the text rows of modalities) ---------------------------------------------------

QUICK_TEST = {"minilm": dict(limit=6, max_tokens=128), "smollm2": dict(limit=3, max_tokens=128)}


@pytest.fixture(scope="module")
def small_quick():
    """The main job's quick settings at fewer inputs (120 MiniLM inputs take a minute): the paper
    reads the patched settings too (:func:`verification.measure.text.main_inputs`)."""
    from verification.measure import text

    with pytest.MonkeyPatch.context() as mp:
        for name, opts in QUICK_TEST.items():
            mp.setitem(text.QUICK, name, opts)
        yield QUICK_TEST


@pytest.fixture(scope="module")
def trained_store(tmp_path_factory, small_quick):
    """The trained main job's quick campaigns: all-MiniLM-L6-v2 measured as `attnbounds verify`
    measures it (here 6 inputs at 128 tokens, two per source); SmolLM2, Gemma 3 and AntiBERTy by
    stand-ins on their first main-job inputs (loading the GGUF weights takes minutes); the random
    baselines of each."""
    from rich.console import Console

    from verification import campaign
    from verification.testing.fakes import causal_standin
    from verification.measure.attention import chunk_key, instance_records
    from verification.measure.text import QUICK
    from verification.trained.checks import measure_baselines
    from verification.trained.command import measure_and_report
    from verification.measure.text import campaign_prefix, main_inputs

    root = tmp_path_factory.mktemp("trained")
    db = root / "trained.db"
    with ResultStore(db) as s:
        measure_and_report("minilm", s, root / "out", Console(width=200, quiet=True), seed=0, **QUICK["minilm"])
        for name, causal in (("smollm2", True), ("gemma3", True), ("antiberty", False), ("dinov2", False)):   # stand-ins: no weights
            first = main_inputs(name, False)[0]
            inst = causal_standin(T=6, L=3, H=2, seed=0, model=name, causal=causal)
            standin = campaign_prefix(name, False) + "stand-in"
            campaign.run(s, standin, [campaign.Chunk(chunk_key(first), instance_records, (inst, False, True, True))],
                         progress=False)
            measure_baselines(s, standin, None, 0)
        from verification.testing.fakes import functional_standin   # each checkpoint's functional check (made up)
        (mini,) = {r["campaign"] for r in s.records(campaign_prefix("minilm", False), prefix=True)}
        for name in ("minilm", "smollm2", "gemma3", "antiberty", "dinov2"):
            functional_standin(name, mini.rsplit(":w", 1)[1] if name == "minilm" else "stand-in", s)
    return db


def _copy(db, tmp_path):
    out = tmp_path / "r.db"
    shutil.copy(db, out)
    return out


def test_trained_paper_ignores_more_inputs_of_the_same_settings(trained_store, tmp_path):
    from verification.trained.checks import Plan
    from verification.trained.paper import paper_part
    from verification.measure.text import campaign_prefix

    db = _copy(trained_store, tmp_path)
    with ResultStore(db) as s:
        before = _snapshot(paper_part(s, Plan.for_verify(0, False)))
    assert before["macros"]["MiniLMInputs"] == "6" and before["macros"]["MiniLMSources"] == "3"
    # the main job's model and token limit: the same campaign, three more inputs in it
    assert main(["rollout", "--model", "minilm", "--max-tokens", "128", "--limit", "9",
                 "--db", str(db), "--out", str(tmp_path / "user")]) == 0
    with ResultStore(db) as s:
        (camp,) = {r["campaign"] for r in s.records(campaign_prefix("minilm", False), prefix=True)}
        assert len(s.done_chunks(camp)) == 9                           # the user's inputs are in it
        after = _snapshot(paper_part(s, Plan.for_verify(0, False)))
    _assert_unchanged(before, after)


def test_modalities_text_rows_ignore_a_user_rollout_with_other_settings(trained_store, tmp_path):
    from rich.console import Console

    from verification.modalities.checks import Plan
    from verification.modalities.command import measure_and_report
    from verification.modalities.paper import plan_part

    db = _copy(trained_store, tmp_path)
    with ResultStore(db) as s:     # the tiny preset stands in for the quick one (one model: seconds)
        measure_and_report(s, "tiny", 0, tmp_path / "out", tmp_path / "ck", Console(width=200, quiet=True),
                           ("ft-wine",))
        before = _snapshot(plan_part(s, Plan("tiny", 0)))
    assert before["macros"]["ModMinilmInputs"] == 6
    # MiniLM at another token limit and with more inputs: another campaign of the same model
    assert main(["rollout", "--model", "minilm", "--max-tokens", "512", "--limit", "8",
                 "--db", str(db), "--out", str(tmp_path / "user")]) == 0
    with ResultStore(db) as s:
        after = _snapshot(plan_part(s, Plan("tiny", 0)))
    _assert_unchanged(before, after)
