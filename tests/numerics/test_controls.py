"""Controls of D1's equality share (numerics.dobrushin.controls), the chance level of random
row-exchangeable matrices (docs/theory.md §2, "Chance level"), and the Wilson interval of pooled
shares clustered by input (verification.stats.clustered_wilson)."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from numerics.dobrushin import factor_check
from numerics.dobrushin.controls import (column_permutation, column_permuted_share, control_rng,
                                         every_pair_self_dominant, pair_kind, permute_columns, shuffle_offdiagonal)
from theory.errors import InvalidInput
from verification.stats import clustered_wilson, wilson


def _exact(A: np.ndarray) -> list[list[Fraction]]:
    rows = [[Fraction(float(x)) for x in row] for row in A]
    return [[x / sum(row) for x in row] for row in rows]


# -- the controls -----------------------------------------------------------------------------------

def test_permuted_columns_keep_every_row_and_its_exact_sum():
    rng = np.random.default_rng(3)
    A = rng.dirichlet(np.ones(7), size=(4, 7))
    sigma = column_permutation(7, control_rng(0, "f00d", 1))
    B = permute_columns(A, sigma)
    for a, b in zip(A.reshape(-1, 7), B.reshape(-1, 7)):
        assert sorted(a.tolist()) == sorted(b.tolist())
        assert sum(map(Fraction, a.tolist())) == sum(map(Fraction, b.tolist()))
    assert np.array_equal(B[..., np.argsort(sigma)], A)
    with pytest.raises(InvalidInput, match="permutation"):
        permute_columns(A, np.array([0, 0, 1, 2, 3, 4, 5]))


def test_offdiagonal_shuffle_keeps_diagonal_and_row_multiset_and_moves_entries():
    rng = np.random.default_rng(4)
    A = rng.dirichlet(np.ones(9), size=(3, 9))
    B = shuffle_offdiagonal(A, control_rng(0, "abc", 2))
    assert np.array_equal(np.einsum("bii->bi", A), np.einsum("bii->bi", B))
    for a, b in zip(A.reshape(-1, 9), B.reshape(-1, 9)):
        assert sorted(a.tolist()) == sorted(b.tolist())        # diagonal mass and entropy: the same multiset
    assert not np.array_equal(A, B)                               # it does shuffle
    again = shuffle_offdiagonal(A, control_rng(0, "abc", 2))
    assert np.array_equal(B, again)                               # seeded
    assert not np.array_equal(B, shuffle_offdiagonal(A, control_rng(1, "abc", 2)))


def test_control_rng_refuses_bad_seeds_and_hashes():
    with pytest.raises(InvalidInput, match="seed"):
        control_rng(-1, "ab", 1)
    with pytest.raises(InvalidInput, match="nonempty string"):
        control_rng(0, "", 1)


def _every_pair_brute(A: np.ndarray) -> bool:
    P = _exact(A)
    n = len(P)
    return all(P[i][i] >= P[j][i] and P[j][j] >= P[i][j] for i, j in itertools.combinations(range(n), 2))


def test_every_pair_self_dominant_matches_the_exact_definition_on_ties():
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(400):
        n = int(rng.integers(2, 5))
        A = rng.integers(0, 3, size=(n, n)).astype(float)
        A[np.arange(n), np.arange(n)] += rng.integers(0, 3, size=n)
        A[A.sum(axis=1) == 0, 0] = 1.0
        want = _every_pair_brute(A)
        seen.add(want)
        assert bool(every_pair_self_dominant(A)) == want, A
        if want:                                                  # it implies D1's equality
            assert bool(factor_check(A, renormalise=True).equality)
    assert seen == {True, False}
    batch = rng.dirichlet(np.ones(4), size=(6, 4))
    assert every_pair_self_dominant(batch).shape == (6,)
    with pytest.raises(InvalidInput):
        every_pair_self_dominant(np.array([[1.0, -1.0], [0.0, 1.0]]))


def test_pair_kind():
    special = np.array([True, False, False, False, True])
    assert pair_kind((0, 3), special) == "special"
    assert pair_kind((1, 2), special) == "adjacent"
    assert pair_kind((1, 3), special) == "other"
    assert pair_kind((-1, -1), special) == "-"


# -- the chance level of random row-exchangeable matrices (docs/theory.md §2) --------------------------

def _margins(A: np.ndarray, pair: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b = np.arange(A.shape[0])
    i, j = pair[:, 0], pair[:, 1]
    return A[b, i, i] - A[b, j, i], A[b, j, j] - A[b, i, j]


def test_chance_level_is_one_half_at_n2():
    """n = 2: D1 is tight iff A_00 >= A_10 (decided exactly on every sample), so with i.i.d. continuous
    rows the share is exactly 1/2; the sample share lies within 4.5 sigma of it."""
    A = np.random.default_rng(11).dirichlet(np.ones(2), size=(4000, 2))
    eq = factor_check(A).equality
    assert np.array_equal(eq, A[:, 0, 0] >= A[:, 1, 0])
    assert abs(eq.mean() - 0.5) < 4.5 * np.sqrt(0.25 / eq.size)


@pytest.mark.parametrize("n", [3, 8, 24])
def test_swapping_the_maximising_rows_flips_both_margins(n):
    """The proof's bijection, checked exactly: swapping rows i and j of the maximising pair keeps it
    maximising and negates both self-dominance margins, so P(x > 0, y > 0) = P(x < 0, y < 0) and the
    tight share is (1 - P(margins of opposite sign)) / 2."""
    A = np.random.default_rng(n).dirichlet(np.ones(n), size=(300, n))
    fc = factor_check(A)
    x, y = _margins(A, fc.pair)
    assert np.array_equal(fc.equality, (x >= 0) & (y >= 0))       # unique maximiser, no ties: the condition
    B = A.copy()
    b = np.arange(A.shape[0])
    B[b, fc.pair[:, 0]], B[b, fc.pair[:, 1]] = A[b, fc.pair[:, 1]], A[b, fc.pair[:, 0]]
    fb = factor_check(B)
    assert np.array_equal(np.sort(fb.pair, axis=1), np.sort(fc.pair, axis=1))
    xb, yb = _margins(B, fc.pair)
    assert np.array_equal(xb, -x) and np.array_equal(yb, -y)
    assert np.array_equal(fb.equality, (x <= 0) & (y <= 0))


def test_chance_level_tends_to_one_quarter():
    """Large n: the two margins at the maximising pair are nearly independent, so the share is near
    1/4 (Dirichlet(1) rows, n = 64: 1000 samples, share within 0.05 of 1/4), and below 1/2 at every n."""
    A = np.random.default_rng(64).dirichlet(np.ones(64), size=(1000, 64))
    share = factor_check(A).equality.mean()
    assert abs(share - 0.25) < 0.05
    x, y = _margins(A, factor_check(A).pair)
    opposite = np.mean(x * y < 0)
    assert abs(share - (1 - opposite) / 2) < 4.5 * np.sqrt(0.25 / 1000)


# -- the column-permuted control is a chance-level control -----------------------------------------

def _every_permutation_share(A: np.ndarray) -> Fraction:
    """The exact share of the n! column permutations of ``A`` on which D1 is tight (factor_check's exact
    verdicts, one per permutation)."""
    n = A.shape[0]
    perms = np.array(list(itertools.permutations(range(n))))
    eq = factor_check(np.stack([permute_columns(A, s) for s in perms]), renormalise=True).equality
    return Fraction(int(eq.sum()), len(perms))


@pytest.mark.parametrize("n, family", [(2, "dirichlet"), (3, "dirichlet"), (4, "dirichlet"), (5, "dirichlet"),
                                       (4, "ties"), (5, "ties")])
def test_column_permuted_share_is_the_closed_form_and_at_most_one_half(n, family):
    """The appendix's proposition, checked over every permutation: for a fixed matrix with a unique
    maximising pair, the exact share of the n! column permutations on which D1 is tight (decided by
    factor_check) is ((p + z)(m + z) - z) / (n (n - 1)) (column_permuted_share), at most 1/2 when the
    two rows tie in at most one column and at most n / (4 (n - 1)) when in none. Matrices with
    ties (entries on a grid of quarters) exercise z >= 1."""
    rng = np.random.default_rng(100 * n + len(family))
    checked = 0
    for _ in range(60):
        if family == "dirichlet":
            A = rng.dirichlet(np.ones(n), size=n)
        else:
            A = rng.integers(0, 4, size=(n, n)).astype(float) + np.eye(n) * rng.integers(0, 2)
            A[A.sum(1) == 0, 0] = 1.0
        try:
            closed = column_permuted_share(A)
        except InvalidInput:
            continue                                       # several maximising pairs: not the proposition's case
        checked += 1
        assert _every_permutation_share(A) == closed
        rows = _exact(A)
        fc = factor_check(A[None], renormalise=True)
        i, j = (int(v) for v in fc.pair[0])
        z = sum(rows[i][k] == rows[j][k] for k in range(n))
        if z <= 1:
            assert closed <= Fraction(1, 2)
        if z == 0:
            assert closed <= Fraction(n, 4 * (n - 1))
    assert checked >= 20


def test_column_permuted_share_outside_the_hypotheses_can_exceed_one_half():
    """The hypotheses are needed (every permutation counted exactly): the identity of size 3 has three
    maximising pairs and is tight on 4 of the 6 permutations; a unique maximising pair whose rows tie in
    two columns reaches 7/12; rank one (delta = 0) is tight on every permutation. The closed form
    refuses the first and the last."""
    eye = np.eye(3)
    assert _every_permutation_share(eye) == Fraction(2, 3)
    ties = np.array([[0.4, 0.1, 0.25, 0.25], [0.1, 0.4, 0.25, 0.25], [0.25] * 4, [0.25] * 4])
    assert column_permuted_share(ties) == Fraction(7, 12) == _every_permutation_share(ties)
    flat = np.full((3, 3), 1 / 3)
    assert _every_permutation_share(flat) == 1
    for A in (eye, flat):
        with pytest.raises(InvalidInput, match="unique pair"):
            column_permuted_share(A)
    with pytest.raises(InvalidInput):
        column_permuted_share(np.array([[1.0, -1.0], [0.5, 0.5]]))


# -- the cluster bootstrap --------------------------------------------------------------------------


# -- the Wilson interval of a pooled share, clustered by input ------------------------------------

def test_clustered_wilson_is_wider_than_wilson_for_correlated_clusters():
    # 40 inputs, 50 verdicts each, all alike within an input: the information is 40 inputs, not 2000 verdicts
    hits = np.random.default_rng(0).random(40) < 0.5
    k, n = np.where(hits, 50, 0), np.full(40, 50)
    lo, hi = clustered_wilson(k, n)
    wlo, whi = wilson(int(k.sum()), int(n.sum()))
    assert hi - lo > 2 * (whi - wlo)
    assert lo <= k.sum() / n.sum() <= hi
    ilo, ihi = wilson(int(hits.sum()), 40)                  # about the Wilson interval of the 40 inputs
    assert abs(lo - ilo) < 0.02 and abs(hi - ihi) < 0.02


def test_clustered_wilson_matches_wilson_for_independent_verdicts():
    k = (np.random.default_rng(2).random(800) < 0.3).astype(int)
    lo, hi = clustered_wilson(k, np.ones(800, dtype=int))
    wlo, whi = wilson(int(k.sum()), 800)
    assert abs(lo - wlo) < 0.015 and abs(hi - whi) < 0.015
    assert lo <= wlo and hi >= whi                           # never narrower than independent verdicts


def test_clustered_wilson_refuses_bad_input():
    assert np.isnan(clustered_wilson([], [])[0])
    with pytest.raises(InvalidInput):
        clustered_wilson([3], [2])
    with pytest.raises(InvalidInput):
        clustered_wilson([1, 2], [2])


def test_paired_difference_interval():
    from verification.stats import cluster_bootstrap_difference

    rng = np.random.default_rng(7)
    n = np.full(60, 6)
    k1 = rng.binomial(6, 0.7, size=60)
    k2 = rng.binomial(6, 0.3, size=60)
    lo, hi = cluster_bootstrap_difference(k1, n, k2, n, seed=3)
    assert lo > 0 and lo <= k1.sum() / n.sum() - k2.sum() / n.sum() <= hi
    wide = cluster_bootstrap_difference(k1, n, k2, n, seed=3, level=1 - 0.05 / 10)
    assert wide[0] <= lo and wide[1] >= hi                          # simultaneous: wider
    same = cluster_bootstrap_difference(k1, n, k1, n, seed=3)
    assert same == (0.0, 0.0)                                        # paired: identical shares differ by 0
    with pytest.raises(InvalidInput):
        cluster_bootstrap_difference([1], [1], [2], [1])


def test_no_hit_and_one_hit_get_one_method():
    """0 hits of 9360 verdicts over 120 inputs get the interval of 0 hits of 9360 (Wilson, no other rule for
    the ends), and one hit a wider one: never [0, 0.03] beside [0, 0.0006] (issue 62, item 5)."""
    n = [78] * 120
    zero = clustered_wilson([0] * 120, n)
    one = clustered_wilson([1] + [0] * 119, n)
    assert zero == wilson(0, 9360) and zero[1] < 0.0005
    assert one[0] >= zero[0] and one[1] >= zero[1] and one[1] < 0.001
    every = clustered_wilson(n, n)
    assert every == wilson(9360, 9360)
