"""The random baselines at matched n (verification/measure/baselines.py), one module for both
families: each family's campaign keeps its stored layout (names, keys, generators, record fields),
both layouts read the same way, and the verdicts are D1's on the drawn matrices."""
from dataclasses import replace
from fractions import Fraction

import pytest

from theory.verdicts import Verdict
from verification.measure.baselines import (FAMILIES, MODALITIES, TRAINED, baseline_chunks, baseline_records,
                                            baseline_slots, pool_by_size, read_baselines, run_baselines,
                                            size_samples, slot_samples)


def d1_equality(M):
    """D1's equality from its definition, exact rationals (the rows as drawn)."""
    A = [[Fraction(float(x)) for x in r] for r in M]
    n = len(A)
    tv = {(i, j): sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(n) for j in range(i + 1, n)}
    delta = max(tv.values())
    return any(d == delta and A[i][i] >= A[j][i] and A[j][j] >= A[i][j] for (i, j), d in tv.items())


def test_each_layout_keeps_its_stored_names_keys_and_fields():
    """What a stored campaign holds, pinned: resuming one written before the module existed finds
    every chunk under the same key with records of the same shape."""
    assert TRAINED.campaign(0, 10) == "trained-baseline-v1-seed0-m10"
    assert MODALITIES.campaign(2, 200) == "modalities-v1-baseline:s2:m200"
    t = baseline_records(TRAINED, "dirichlet", 3, 1, 4, 0)
    m = baseline_records(MODALITIES, "softmax-T1", 3, 0, 4, 5)
    assert [r.instance for r in t] == [f"dirichlet/n3/c1/i{k}" for k in range(4)]
    assert [r.instance for r in m] == [f"softmax-T1/n3/i{k}" for k in range(4)]
    assert list(t[0].provenance) == ["generator", "chunk_offset", "seed", "family", "n", "c", "index"]
    assert list(m[0].provenance) == ["generator", "chunk", "seed", "family", "n", "check", "index"]
    assert (t[0].provenance["chunk_offset"], m[0].provenance["chunk"]) == (1_000_000, 2_000_000)
    assert set(t[0].extra) == {"exact", "through_first"} and set(m[0].extra) == {"sent"}
    keys = [c.key for c in baseline_chunks(TRAINED, [(1, 0), (3, 0), (3, 1)], 10, 0)]
    assert keys == [f"{f}/n3/c{c}" for f in FAMILIES for c in (0, 1)]          # n = 1: no D1, no chunk
    assert [c.key for c in baseline_chunks(MODALITIES, size_samples([5, 3, 5]), 10, 0)] == \
        [f"{f}/n{n}" for f in FAMILIES for n in (3, 5)]


@pytest.mark.parametrize("layout", [TRAINED, MODALITIES], ids=["trained", "modalities"])
def test_verdicts_are_d1_on_the_drawn_matrices_and_both_checks_agree(layout):
    """Each layout's verdicts are D1's equality on the matrices of its generator; the two checks
    (factor_check; the stress sweep's) give the same verdicts on the same draws; a planted other
    size gives other verdicts."""
    from numerics.sources.random import generator, sample

    recs = baseline_records(layout, "dirichlet", 3, 0, 40, 1)
    A = sample("dirichlet", 3, 40, generator(1, "dirichlet", 3, layout.offset))
    verdicts = [r.verdict == Verdict.TIGHT for r in recs]
    assert verdicts == [d1_equality(a) for a in A] and 0 < sum(verdicts) < 40
    other = replace(layout, sweep=not layout.sweep)
    assert [r.verdict for r in baseline_records(other, "dirichlet", 3, 0, 40, 1)] == [r.verdict for r in recs]
    planted = sample("dirichlet", 4, 40, generator(1, "dirichlet", 4, layout.offset))
    assert verdicts != [d1_equality(a) for a in planted]


def test_both_layouts_read_the_same_way_and_pool_by_size(store):
    slots = baseline_slots({"all": {("a", "1"): 3, ("b", "2"): 3}, "content": {("a", "1"): 2}})
    assert slot_samples(slots) == [(2, 0), (3, 0), (3, 1)]
    t = run_baselines(store, TRAINED, slot_samples(slots), 6, 0, progress=False)
    m = run_baselines(store, MODALITIES, size_samples([3, 2]), 6, 0, progress=False)
    bt, bm = read_baselines(store.records(campaign=t)), read_baselines(store.records(campaign=m))
    assert set(bt) == {(f, n, c) for f in FAMILIES for n, c in ((2, 0), (3, 0), (3, 1))}
    assert set(bm) == {(f, n, 0) for f in FAMILIES for n in (2, 3)}
    assert all(count == 6 for _, count in list(bt.values()) + list(bm.values()))
    pooled = pool_by_size(bt)
    assert pooled[("dirichlet", 3)] == tuple(map(sum, zip(bt[("dirichlet", 3, 0)], bt[("dirichlet", 3, 1)])))
    assert pool_by_size(bm) == {(f, n): v for (f, n, _), v in bm.items()}
    # resumed: nothing drawn again
    before = store.count()
    run_baselines(store, TRAINED, slot_samples(slots), 6, 0, progress=False)
    assert store.count() == before
