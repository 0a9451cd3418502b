"""numerics.sources.counter_random: the Philox4x32-10 known answers, the stream layout, determinism
(thread count, regeneration of one instance, buffer size), stochasticity and the distributions of
every family (tests that can fail: each compares against an independent reference)."""
from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy import stats

import numerics.sources.counter_random as CR
import numerics.sources.philox as PH
from numerics.sources.counter_random import COUNTER_GENERATOR, regenerate_one, sample_counter, softmax_logits
from numerics.sources.philox import philox4x32_10

FAMILIES = ("dirichlet", "softmax-T1", "softmax-T0.25", "causal", "hard", "sparse")

# Random123 tests/kat_vectors, philox4x32_10: (counter, key, output)
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr,key,want", KAT)
def test_philox_known_answers(ctr, key, want):
    got = philox4x32_10(np.array(ctr, np.uint64), np.array(key, np.uint64))
    assert [int(x) for x in got] == list(want)


def test_vectorised_fill_is_philox_in_the_documented_word_order():
    """_fill (the fast path) against the scalar reference: word w of segment s is lane
    (w mod 64) div 16 of block 16 s + w mod 16."""
    key, c = (0xA4093822, 0x299F31D0), (7, 0x80000003, 11)
    buf = np.empty(3 * 64, np.uint64)
    PH.fill(buf, 0, 5, 3, PH.round_keys(*key), *(np.uint64(x) for x in c))
    for w in range(buf.size):
        seg, lane, j = 5 + w // 64, (w % 64) // 16, w % 16
        ref = philox4x32_10(np.array((16 * seg + j, *c), np.uint64), np.array(key, np.uint64))
        assert buf[w] == ref[lane], w


@pytest.mark.parametrize("m", range(0, 12))
def test_sorting_network_sorts_every_0_1_input(m):
    """The 0-1 principle: a comparator network sorts every input iff it sorts every 0/1 input."""
    net = CR.sorting_network(m)
    assert ((net[:, 0] < net[:, 1]) & (net[:, 1] < max(m, 1))).all() if len(net) else m <= 1
    x = ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1).T.copy()      # (m, 2^m): every 0/1 input
    for i, j in net:
        x[i], x[j] = np.minimum(x[i], x[j]), np.maximum(x[i], x[j])
    assert (np.diff(x, axis=0) >= 0).all()


def test_spacings_rows_sort_like_numpy():
    rng = np.random.default_rng(3)
    for k in (2, 17, 64, 100):
        V = np.zeros((k, 9), np.int64)
        V[:k - 1] = rng.integers(0, 2 ** 53, (k - 1, 9))
        V[:k - 1, 0] = 5                                                  # ties
        want = np.diff(np.sort(V[:k - 1], axis=0), axis=0, prepend=0, append=2 ** 53)
        CR._spacings_rows(V, k, 9, CR.sorting_network(k - 1))
        assert (V == want).all() and (V.sum(0) == 2 ** 53).all()


def test_generator_string():
    assert "Philox4x32-10" in COUNTER_GENERATOR and "chunk" in COUNTER_GENERATOR


# ------------------------------------------------------------------------------------------------
# determinism
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_same_arguments_same_bits_and_one_instance_alone(family):
    A = sample_counter(family, 7, 40, seed=3, chunk=2)
    B = sample_counter(family, 7, 40, seed=3, chunk=2)
    assert A.dtype == np.float64 and A.shape == (40, 7, 7)
    assert A.tobytes() == B.tobytes()
    for i in (0, 9, 39):
        assert regenerate_one(family, 7, seed=3, chunk=2, index=i).tobytes() == A[i].tobytes()
    assert sample_counter(family, 7, 5, seed=3, chunk=2, start=17).tobytes() == A[17:22].tobytes()


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has a single thread here")
@pytest.mark.parametrize("family", ["dirichlet", "softmax-T1", "sparse"])
def test_bitwise_equal_for_one_and_two_threads(family):
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = sample_counter(family, 9, 203, seed=5, chunk=1)
        numba.set_num_threads(2)
        two = sample_counter(family, 9, 203, seed=5, chunk=1)
    finally:
        numba.set_num_threads(before)
    assert one.tobytes() == two.tobytes()


@pytest.mark.parametrize("family", ["softmax-T1", "dirichlet", "causal"])
def test_buffer_size_changes_speed_never_values(family, monkeypatch):
    """The main stream refilled many times (tiny buffer) reads the same words as one fill."""
    A = sample_counter(family, 40, 6, seed=1, chunk=0)
    monkeypatch.setattr(CR, "MAX_BUFFER", 64)
    assert CR._words(PH.SOFTMAX, 40) < 2 * 40 * 40
    assert sample_counter(family, 40, 6, seed=1, chunk=0).tobytes() == A.tobytes()


@pytest.mark.parametrize("family", FAMILIES)
def test_other_seed_chunk_index_family_n_give_other_matrices(family):
    base = regenerate_one(family, 6, seed=1, chunk=0, index=0)
    others = [regenerate_one(family, 6, seed=2, chunk=0, index=0),
              regenerate_one(family, 6, seed=1, chunk=1, index=0),
              regenerate_one(family, 6, seed=1, chunk=0, index=1),
              regenerate_one(family, 6, seed=1, chunk=0, index=2 ** 32),   # the index's high word
              regenerate_one("softmax-T4" if family != "softmax-T4" else "dirichlet", 6, seed=1, chunk=0, index=0)]
    for other in others:
        assert not np.array_equal(base, other)
    assert not np.array_equal(sample_counter(family, 6, 1, 1, 0)[0, :5, :5], sample_counter(family, 5, 1, 1, 0)[0])


# ------------------------------------------------------------------------------------------------
# stochasticity and the zeros each family promises
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES + ("softmax-T0.001", "softmax-T1000"))
@pytest.mark.parametrize("n", [1, 2, 5, 16, 33])
def test_rows_are_stochastic(family, n):
    A = sample_counter(family, n, 64, seed=11, chunk=3)
    assert np.isfinite(A).all() and (A >= 0).all()
    assert np.abs(A.sum(-1) - 1).max() <= (n + 2) * 2.0 ** -53
    if family in ("dirichlet", "sparse", "hard"):
        assert (A.sum(-1) == 1).all()           # integer gaps on the 2^-53 grid: exact
    if family == "causal":
        assert (A[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0).all()
        assert (A[:, np.tril_indices(n)[0], np.tril_indices(n)[1]] > 0).all()
    if family == "hard":
        assert ((A == 1).sum(-1) == 1).all() and ((A == 0).sum(-1) == n - 1).all()
    if family == "sparse":
        assert ((A > 0).sum(-1) == max(1, math.ceil(n / 4))).all()
    if family in ("dirichlet", "softmax-T1"):
        assert (A > 0).all()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="'beta'"):
        sample_counter("beta", 4, 1, 0, 0)
    with pytest.raises(ValueError, match="temperature"):
        sample_counter("softmax-T0", 4, 1, 0, 0)
    with pytest.raises(ValueError, match="'hard'.*softmax-T"):
        softmax_logits("hard", 4, 1, 0, 0)
    for kw, name in [(dict(n=0), "n"), (dict(n=True), "n"), (dict(n=2.0), "n"), (dict(count=-1), "count"),
                     (dict(seed=-1), "seed"), (dict(chunk=2 ** 32), "chunk"), (dict(start=-3), "start"),
                     (dict(start=2 ** 63 - 1, count=2), "start \\+ count")]:
        args = dict(family="dirichlet", n=3, count=1, seed=0, chunk=0) | kw
        with pytest.raises(ValueError, match=f"^{name}"):
            sample_counter(**args)
    assert sample_counter("hard", 3, 0, 0, 0).shape == (0, 3, 3)


# ------------------------------------------------------------------------------------------------
# distributions (fixed seeds; each test compares with the exact law)
# ------------------------------------------------------------------------------------------------
def test_dirichlet_marginals_are_beta_1_n_minus_1():
    """Every coordinate of a Dirichlet(1) row on n coordinates is Beta(1, n - 1) (the first gap,
    the inner gaps and 2^53 minus the largest point alike), and rows are independent."""
    n = 6
    A = sample_counter("dirichlet", n, 3000, seed=21, chunk=0)
    for c in range(n):
        assert stats.kstest(A[:, c % 3, c], stats.beta(1, n - 1).cdf).pvalue > 1e-3, c
    assert stats.kstest(A[:, 4, 2] + A[:, 4, 3], stats.beta(2, n - 2).cdf).pvalue > 1e-3   # aggregation
    assert abs(np.corrcoef(A[:, 0, 0], A[:, 1, 0])[0, 1]) < 4 / math.sqrt(3000)


def test_gaussian_logits_are_standard_normal():
    """The ziggurat's draws themselves: 2^21 logits, KS and a 64-bin chi-square (equal-probability
    bins: sensitive to a wrong layer, wedge or tail), moments, and the tail beyond r = 3.654."""
    z = softmax_logits("softmax-T1", 32, 2048, seed=2, chunk=0).ravel()
    assert stats.kstest(z, stats.norm.cdf).pvalue > 1e-3
    counts = np.bincount(np.minimum((stats.norm.cdf(z) * 64).astype(int), 63), minlength=64)
    assert stats.chisquare(counts).pvalue > 1e-3
    tail = (np.abs(z) > PH.ZIG_R).sum()
    p = 2 * stats.norm.sf(PH.ZIG_R)
    assert abs(tail - p * z.size) < 5 * math.sqrt(p * z.size)
    assert stats.kstest(np.abs(z[np.abs(z) > PH.ZIG_R]),
                        lambda x: 1 - stats.norm.sf(x) / stats.norm.sf(PH.ZIG_R)).pvalue > 1e-3
    assert abs(z.mean()) < 5 / math.sqrt(z.size) and abs(z.var() - 1) < 5 * math.sqrt(2 / z.size)


@pytest.mark.parametrize("family,T", [("softmax-T1", 1.0), ("softmax-T0.25", 0.25)])
def test_softmax_is_the_softmax_of_its_logits(family, T):
    """sample_counter's matrices are the max-subtracted softmax of softmax_logits' z / T (same
    stream; numpy's exp and pairwise sum round differently from the kernel's libm exp and
    sequential sum, so equal to a few ulps), and z / T * T is standard Gaussian."""
    n = 16
    z = softmax_logits(family, n, 300, seed=8, chunk=0)
    A = sample_counter(family, n, 300, seed=8, chunk=0)
    e = np.exp(z - z.max(-1, keepdims=True))
    np.testing.assert_allclose(A, e / e.sum(-1, keepdims=True), rtol=8 * n * 2.0 ** -53, atol=0)
    assert (z.argmax(-1) == A.argmax(-1)).all()
    assert stats.kstest((z * T).ravel(), stats.norm.cdf).pvalue > 1e-3
    d = np.log(A[:, :, 1::2] / A[:, :, 0::2]).ravel()       # disjoint pairs: N(0, 2 / T^2)
    assert stats.kstest(d, stats.norm(scale=math.sqrt(2) / T).cdf).pvalue > 1e-3


def test_causal_rows_are_softmax_of_gaussians():
    A = sample_counter("causal", 8, 6000, seed=4, chunk=1)
    d = np.log(A[:, 7, 1::2] / A[:, 7, 0::2]).ravel()
    assert stats.kstest(d, stats.norm(scale=math.sqrt(2)).cdf).pvalue > 1e-3
    assert (A[:, 0, 0] == 1).all()


def test_hard_columns_are_uniform():
    n = 7
    A = sample_counter("hard", n, 3000, seed=9, chunk=0)
    counts = A.sum(axis=(0, 1))
    assert counts.sum() == 3000 * n
    assert stats.chisquare(counts).pvalue > 1e-3
    # rows are independent of each other: the pair (column of row 0, column of row 1) is uniform
    cols = A.argmax(-1)
    pairs = np.bincount(cols[:, 0] * n + cols[:, 1], minlength=n * n)
    assert stats.chisquare(pairs).pvalue > 1e-3


def test_sparse_support_is_uniform_and_weights_dirichlet():
    n, k = 16, 4
    A = sample_counter("sparse", n, 2000, seed=13, chunk=0)
    assert ((A > 0).sum(-1) == k).all()
    assert stats.chisquare((A > 0).sum(axis=(0, 1))).pvalue > 1e-3
    w = A[:, 2][A[:, 2] > 0].reshape(-1, k)                 # support weights in column order
    for c in range(k):
        assert stats.kstest(w[:, c], stats.beta(1, k - 1).cdf).pvalue > 1e-3, c


def test_exp_is_within_one_ulp_of_numpy():
    """The softmax step's exp (plain arithmetic) against numpy's, including subnormal results,
    the underflow to 0 and -inf."""
    @numba.njit
    def ev(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = PH.exp_nonpos(x[i])
        return out

    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.exponential(1, 20000), -rng.uniform(0, 746, 20000),
                        [0.0, -0.0, -np.inf, -1e-300, -745.1, -745.3, -744.5, -708.4, -709.0, -math.log(2) / 2]])
    got, want = ev(x), np.exp(x)
    assert np.abs(got.view(np.int64) - want.view(np.int64)).max() <= 1
    assert got[x < -745.2].max() == 0 and ev(np.array([-np.inf]))[0] == 0 and ev(np.array([0.0]))[0] == 1
