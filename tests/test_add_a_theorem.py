"""The README's recipe for adding a theorem, through the public API only, so it cannot rot:
state a toy theorem (convexity of the Dobrushin coefficient), sample instances from a public random
family, check them with a rigorous float error bound, run the campaign (resume included), report."""
import numpy as np
import pytest
import sympy as sp

import theory
from numerics.dobrushin import dobrushin, float_error
from numerics.sources.random import generator, sample
from numerics.stochastic import as_stochastic
from theory import Hypotheses, Theorem, register
from theory.verdicts import Verdict
from verification import campaign
from verification.report.tables import write_table
from verification.store import Record, ResultStore

TOY_ID = "dobrushin.toy_convexity"


@pytest.fixture
def toy_theorem():
    t, dA, dB, dM = sp.symbols("t delta_A delta_B delta_M", nonnegative=True)
    th = register(Theorem(
        id=TOY_ID, title="delta is convex", category="proved",
        statement=sp.LessThan(dM, t * dA + (1 - t) * dB),
        equality="A and B with a common maximising pair whose differences are aligned",
        hypotheses=lambda inst: Hypotheses(True), witness=lambda: (np.eye(2), np.eye(2), 0.5),
        evaluators={"fast": "numerics.dobrushin:dobrushin", "exact": "numerics.dobrushin:dobrushin"}))
    yield th
    theory.REGISTRY.pop(TOY_ID)            # leave the registry as it was for the other tests


def toy_chunk(n: int, chunk: int, count: int, seed: int) -> list[Record]:
    rng = generator(seed, "dirichlet", n, chunk)
    A, B = sample("dirichlet", n, count, rng), sample("dirichlet", n, count, rng)
    t = rng.random(count)[:, None, None]
    M = t * A + (1 - t) * B
    value, bound = dobrushin(M), t[:, 0, 0] * dobrushin(A) + (1 - t[:, 0, 0]) * dobrushin(B)
    err = 3 * float_error(as_stochastic(M).row_dev, n)          # rigorous: three deltas, one mixture
    out = []
    for k in range(count):
        slack = float(bound[k] - value[k])
        verdict = Verdict.HOLDS if slack > err[k] else Verdict.VIOLATED if slack < -err[k] else Verdict.UNDECIDED
        out.append(Record(TOY_ID, f"n{n}/c{chunk}/i{k}", verdict, slack=slack, value=float(value[k]),
                          bound=float(bound[k]), provenance={"seed": seed, "n": n, "chunk": chunk, "index": k}))
    return out


def test_a_new_theorem_in_thirty_lines(toy_theorem, tmp_path):
    chunks = [campaign.Chunk(f"n{n}/c{c}", toy_chunk, (n, c, 20, 7)) for n in (3, 8) for c in range(2)]
    with ResultStore(":memory:") as store:
        first = campaign.run(store, "toy", chunks, progress=False)
        again = campaign.run(store, "toy", chunks, progress=False)      # resumed: nothing recomputed
        recs = list(store.records("toy"))
    assert (first.computed, again.computed, again.skipped, len(recs)) == (4, 0, 4, 80)
    assert all(r["verdict"] in ("holds", "undecided") for r in recs)    # convexity is never violated
    assert sum(r["verdict"] == "holds" for r in recs) >= 70
    rows = [(n, sum(r["provenance"]["n"] == n for r in recs)) for n in (3, 8)]
    paths = write_table(rows, ("n", "instances"), "toy", "convexity of delta", "campaign toy; seed 7", tmp_path)
    assert "convexity of delta" in paths["md"].read_text()
    assert theory.get(TOY_ID) is toy_theorem


def test_a_violation_of_the_new_proved_theorem_stops_loudly(toy_theorem):
    from theory.verdicts import ViolationError

    bad = campaign.Chunk("c0", lambda: [Record(TOY_ID, "i0", "violated", slack=-0.1)])
    with ResultStore(":memory:") as store, pytest.raises(ViolationError, match=TOY_ID):
        campaign.run(store, "toy", [bad], progress=False)
