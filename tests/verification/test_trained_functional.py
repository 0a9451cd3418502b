"""The functional checks' campaign, findings and tables (verification.trained.checks.functional,
verification.trained.findings.functional, verification.trained.report.functional): the outcome of
paired improvements (supported, refuted, inconclusive), one outcome record per model, resumed
without measuring again, the tables' cells against the stored record, the functional campaign paired
with the attention campaign of the same weights, and a store without it refused naming the command."""
from types import SimpleNamespace

import pytest

from numerics.sources.functional import Paired
from verification.report.part import MissingCampaign
from verification.store import ResultStore
from verification.trained.checks import Plan
from verification.trained.checks import functional as C
from verification.trained.findings.functional import functional_campaign, functional_findings, functional_of
from verification.trained.report.functional import FUNCTIONAL_COLUMNS, PROVENANCE_COLUMNS, table

ORIGIN = {"distribution": "toy==1.0", "upstream": "org/toy-GGUF", "revision": "ab" * 20, "base": "org/toy",
          "variant": "pretrained: no chat template in the GGUF", "file": "toy.gguf", "format": "GGUF v3 (Toy)",
          "quantisation": "Q4_1", "defaults": "none", "tokenizer": "from the GGUF", "sha256": "0123456789abcdef" * 4}


def paired(model, reference, better="lower"):
    n = len(model)
    return Paired("loss per token (nats)", better, "unigram", tuple(f"t:{k}" for k in range(n)), tuple(model),
                  tuple(reference), (10,) * n)


def test_the_outcome_follows_the_paired_t_interval_of_the_improvements():
    assert C.decide(paired([3.0, 3.2, 2.9, 3.1], [7.0, 6.8, 7.3, 7.1]))[0] == "supported"
    assert C.decide(paired([7.0, 6.8, 7.3, 7.1], [3.0, 3.2, 2.9, 3.1]))[0] == "refuted"
    assert C.decide(paired([3.0, 5.0, 3.1, 5.2], [4.0, 4.0, 4.0, 4.0]))[0] == "inconclusive"
    assert C.decide(paired([0.9, 0.8], [0.5, 0.4], better="higher"))[0] == "inconclusive"     # no variation
    outcome, t = C.decide(paired([0.9, 0.8, 0.95], [0.5, 0.3, 0.5], better="higher"))
    assert outcome == "supported" and t["df"] == 2 and t["mean"] == pytest.approx(0.45 / 3 + 0.3)


@pytest.fixture
def checked(monkeypatch):
    """A store holding the check of a toy 'gemma3' (measurement and origin stubbed), and the calls."""
    calls = []

    def measure(name, model, seed=0):
        calls.append(name)
        return paired([3.0, 3.25, 2.875, 3.125], [7.0, 6.75, 7.25, 7.125])

    monkeypatch.setattr(C, "measure", measure)
    monkeypatch.setattr(C, "inputs_of", lambda name: ([], [1, 2, 3], "pydoc+doc+lic"))
    monkeypatch.setattr("numerics.sources.upstream.origin", lambda name, model: dict(ORIGIN))
    model = SimpleNamespace(name="gemma3", fingerprint="f" * 16, max_tokens=128)
    store = ResultStore(":memory:")
    camp = C.run("gemma3", model, store)
    C.run("gemma3", model, store)                    # resumed: nothing measured again
    return store, camp, calls


def test_one_outcome_record_per_model_resumed_without_measuring_again(checked):
    store, camp, calls = checked
    assert camp == "trained-functional-v1:gemma3:max128:w" + "f" * 16 and calls == ["gemma3"]
    (r,) = list(store.records(camp))
    assert r["theorem"] == "trained.functional" and r["instance"] == "gemma3" and r["verdict"] == "supported"
    assert r["value"] == pytest.approx(3.0625) and r["bound"] == pytest.approx(7.03125)
    assert r["provenance"]["origin"] == ORIGIN and r["provenance"]["fit_inputs"] == 3
    assert r["extra"]["model_values"] == [3.0, 3.25, 2.875, 3.125] and r["extra"]["statistic"] == pytest.approx(3.96875)


def test_the_tables_are_the_stored_record(checked):
    store, camp, _ = checked
    (r,) = list(store.records(camp))
    f = functional_of(r, camp)
    assert (f.kind, f.inputs, f.decision.outcome, f.works) == ("decoder", 4, "supported", True)
    t = table({"gemma3": f}, "attnbounds verify --only trained --seed 0")
    assert t.columns() == list(FUNCTIONAL_COLUMNS + PROVENANCE_COLUMNS[1:])
    (full,) = t.rows()
    row, p = full[:len(FUNCTIONAL_COLUMNS)], full[len(FUNCTIONAL_COLUMNS) - 1:]
    lo, hi = r["extra"]["interval"]
    assert row[0] == "Gemma 3" and row[3] == "4" and row[7] == "supported"
    assert row[4] == f"{r['value']:.2f}" and row[5] == f"{r['bound']:.2f}"       # the interval's half-width: 2 decimals
    assert row[6] == f"{r['extra']['statistic']:.2f} [{lo:.2f}, {hi:.2f}]"
    assert p[1] == "toy==1.0" and p[2] == "org/toy-GGUF; revision " + "ab" * 20 and p[4] == "toy.gguf, GGUF v3 (Toy); Q4_1"
    assert p[7] == ORIGIN["sha256"][:16] and t.campaigns == (camp,)


def test_the_check_is_the_one_of_the_attention_campaigns_weights_and_a_store_without_it_is_refused():
    from verification.measure.text import campaign_prefix, main_inputs
    from verification.measure.attention import chunk_key

    plan = Plan.for_verify(0, False)
    store = ResultStore(":memory:")
    assert functional_campaign(store, "gemma3", plan) is None
    key = chunk_key(main_inputs("gemma3", False)[0])
    store.write_chunk(campaign_prefix("gemma3", False) + "0123abcd", key, [])
    assert functional_campaign(store, "gemma3", plan) == "trained-functional-v1:gemma3:max128:w0123abcd"
    with pytest.raises(MissingCampaign, match="attnbounds verify --only trained --seed 0"):
        functional_findings(store, plan)
