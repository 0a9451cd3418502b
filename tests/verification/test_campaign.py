"""The one campaign runner: resume, one transaction per chunk, and the loud stop on a violated
*proved* theorem (the category read from the registry), never on a conjecture."""
import pytest

from theory import get
from theory.verdicts import Verdict, ViolationError
from verification import campaign
from verification.campaign import Chunk, is_proved
from verification.executors import SerialExecutor
from verification.store import Record


def records(theorem, verdict, k):
    return [Record(theorem, f"i{k}-{j}", verdict, slack=0.0) for j in range(2)]


def test_resume_computes_only_missing_chunks(store):
    calls = []

    def work(k):
        calls.append(k)
        return records("dobrushin.factor", "holds", k)

    plan = [Chunk(f"c{k}", work, (k,)) for k in range(4)]
    r1 = campaign.run(store, "camp", plan[:2], progress=False)
    r2 = campaign.run(store, "camp", plan, progress=False)
    assert calls == [0, 1, 2, 3]
    assert (r1.computed, r2.computed, r2.skipped, store.count("camp")) == (2, 2, 2, 8)


def test_interrupted_run_keeps_finished_chunks(store):
    def work(k):
        if k == 2:
            raise KeyboardInterrupt
        return records("dobrushin.factor", "tight", k)

    with pytest.raises(KeyboardInterrupt):
        campaign.run(store, "camp", [Chunk(f"c{k}", work, (k,)) for k in range(4)], progress=False)
    assert store.done_chunks("camp") == {"c0", "c1"} and store.count("camp") == 4


@pytest.mark.parametrize("theorem", ["dobrushin.factor", "rank.linear.deficiency", "poincare.gibbs.bakry_emery"])
def test_violated_proved_theorem_stops_after_storing_it(store, theorem):
    assert get(theorem).category == "proved" and is_proved(theorem)
    plan = [Chunk("c0", records, (theorem, "holds", 0)), Chunk("c1", records, (theorem, "violated", 1)),
            Chunk("c2", records, (theorem, "holds", 2))]
    with pytest.raises(ViolationError, match=theorem):
        campaign.run(store, "camp", plan, progress=False)
    assert store.done_chunks("camp") == {"c0", "c1"}                     # stored, then stopped
    assert [r["verdict"] for r in store.records("camp") if r["chunk"] == "c1"] == ["violated"] * 2


@pytest.mark.parametrize("theorem", ["rank.linear.data_recovery", "poincare.gibbs.villani",
                                     "poincare.langevin.rate"])
def test_refuted_claim_is_a_finding_and_violated_claim_is_refused(store, theorem):
    from verification.store import outcome_record

    assert get(theorem).category in ("conjecture", "statistical") and not is_proved(theorem)
    refuted = [Chunk(f"c{k}", lambda k: [outcome_record(theorem, f"i{k}", "refuted", 0.2, (0.1, 0.3),
                                                        "share, Wilson 95%")], (k,)) for k in range(3)]
    result = campaign.run(store, "camp", refuted, progress=False)
    assert result.computed == 3 and not result.violations
    with pytest.raises(ValueError, match=r"'violated', which is not an outcome \(supported, refuted, "
                                         r"inconclusive, not-testable\)$"):
        campaign.run(store, "camp2", [Chunk("c0", records, (theorem, "violated", 0))], progress=False)
    assert store.done_chunks("camp2") == set()
    with pytest.raises(ValueError, match="no statistic"):
        campaign.run(store, "camp3", [Chunk("c0", records, (theorem, "supported", 0))], progress=False)


def test_proved_theorem_with_an_outcome_is_refused_naming_the_verdicts(store):
    """The other way round: a proved theorem's record that says ``supported`` names the verdicts
    it may say instead, with the right article (never "a outcome", never the claims' list)."""
    with pytest.raises(ValueError, match=r"'supported', which is not a verdict \(holds, tight, violated, "
                                         r"undecided, not-applicable\)$"):
        campaign.run(store, "camp", [Chunk("c0", records, ("dobrushin.factor", "supported", 0))], progress=False)
    assert store.done_chunks("camp") == set()


def test_violated_sanity_check_is_stored_without_a_stop(store):
    assert get("rank.weights.head_rank").category == "sanity"
    result = campaign.run(store, "camp", [Chunk("c0", records, ("rank.weights.head_rank", "violated", 0))],
                          progress=False)
    assert len(result.violations) == 2 and store.done_chunks("camp") == {"c0"}


def test_unknown_theorem_and_duplicate_keys_are_errors(store):
    with pytest.raises(KeyError, match="no theorem"):
        campaign.run(store, "camp", [Chunk("c0", records, ("no.such.theorem", "violated", 0))], progress=False)
    with pytest.raises(ValueError, match="appears twice"):
        campaign.run(store, "camp", [Chunk("c", records, ("dobrushin.factor", "holds", k)) for k in range(2)],
                     progress=False)


def test_executor_interface():
    """The runner speaks only concurrent.futures: serial chunks come back one by one, in plan order."""
    chunks = [Chunk(f"c{k}", records, ("dobrushin.factor", "holds", k)) for k in range(3)]
    with SerialExecutor() as ex:
        out = list(campaign.finished(ex, chunks, window=2))
    assert [c.key for c, _ in out] == ["c0", "c1", "c2"] and all(len(r) == 2 for _, r in out)
    assert Verdict(out[0][1][0].verdict) is Verdict.HOLDS
