"""Dobrushin kernels: known answers, exact verdicts against brute force, bad input."""
import re

import numpy as np
import pytest
import torch
from hypothesis import assume, given, strategies as st

from numerics.dobrushin import (dobrushin, dobrushin_torch, factor_check, factor_equality, factor_slack,
                                product_equality)
from verification.testing import reference as ref
from verification.testing import strategies as S

rng = np.random.default_rng(12345)


def square(family, lo=2, hi=6):
    """Square matrices of ``family`` (a strategy of ``verification.testing.strategies`` taking
    ``n``) with lo <= n <= hi: the size is part of the strategy, never filtered in the test."""
    return st.integers(lo, hi).flatmap(lambda n: family(n=n))


def brute_delta_float(P):
    return 0.5 * np.abs(P[..., :, None, :] - P[..., None, :, :]).sum(-1).max(axis=(-1, -2))


# ---- known answers ---------------------------------------------------------------------------
@given(st.floats(0, 1), st.floats(0, 1))
def test_two_by_two_is_abs_det(a, b):
    P = np.array([[a, 1 - a], [b, 1 - b]])
    assert dobrushin(P) == pytest.approx(abs(np.linalg.det(P)), abs=1e-12)


def test_identity_equal_rows_and_single_token():
    assert dobrushin(np.eye(5)) == 1.0
    assert dobrushin(np.full((4, 4), 0.25)) == 0.0
    assert dobrushin(np.ones((1, 1))) == 0.0
    assert factor_slack(np.ones((1, 1))) == 0.5
    assert not factor_equality(np.ones((1, 1)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n,m", [(2, 2), (3, 7), (16, 16), (33, 5)])
def test_kernel_matches_broadcast_definition(dtype, n, m):
    P = rng.dirichlet(np.ones(m), size=(7, n)).astype(dtype)
    got = dobrushin(P)
    assert got.dtype == dtype and got.shape == (7,)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(got, brute_delta_float(P.astype(np.float64)), atol=tol)


def test_torch_in_torch_out_and_torch_kernel():
    P = torch.from_numpy(rng.dirichlet(np.ones(9), size=(2, 3, 9)))
    out = dobrushin(P)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 3) and out.dtype == torch.float64
    np.testing.assert_allclose(dobrushin_torch(P, max_bytes=1024).numpy(), out.numpy(), atol=1e-14)
    fc = factor_check(P.to(torch.float32))
    assert isinstance(fc.equality, torch.Tensor) and fc.equality.dtype == torch.bool


def test_chunking_under_a_small_memory_budget_gives_same_answer():
    P = rng.dirichlet(np.ones(12), size=(50, 12))
    np.testing.assert_array_equal(dobrushin(P, max_bytes=2000), dobrushin(P))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("shape", [(64, 64), (20, 64, 64), (2, 3, 5, 7)])
def test_cuda_matches_cpu(shape, dtype):
    """Real devices: the CUDA route and the CPU kernel give the same shape, dtype and values."""
    if dtype == torch.int64:
        P = torch.eye(shape[-1], dtype=dtype)[torch.randint(0, shape[-1], shape[:-1])]   # one-hot rows
    else:
        P = torch.from_numpy(rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])).to(dtype)
    cpu, cuda = dobrushin(P), dobrushin(P.cuda())
    assert cuda.is_cuda and cuda.shape == cpu.shape == shape[:-2] and cuda.dtype == cpu.dtype
    atol = 1e-12 if cpu.dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(cuda.cpu().numpy(), cpu.numpy(), atol=atol)


# one result rule for every path: shape P.shape[:-2]; float64 -> float64, float32/float16/bfloat16 ->
# float32, integers -> float64 (exact values)
RESULT_DTYPE = {torch.float64: torch.float64, torch.float32: torch.float32, torch.float16: torch.float32,
                torch.bfloat16: torch.float32, torch.int64: torch.float64, torch.uint8: torch.float64}


@pytest.mark.parametrize("dtype", list(RESULT_DTYPE))
@pytest.mark.parametrize("shape", [(2, 2), (4, 2, 2), (3, 1, 2, 2)])
def test_cpu_and_torch_route_agree_on_shape_dtype_and_value(shape, dtype):
    """The CPU kernel and the torch route (the CUDA code path, run here on CPU tensors) return the
    same shape (``()`` for one matrix, like numpy) and dtype; the value is |det| for 2 x 2."""
    from numerics.dobrushin import torch_path

    rows = [[1, 0], [0, 1]] if dtype in (torch.int64, torch.uint8) else [[0.75, 0.25], [0.25, 0.75]]
    P = torch.tensor(rows, dtype=torch.float64).to(dtype).expand(*shape)
    want = 1.0 if dtype in (torch.int64, torch.uint8) else 0.5
    for out in (dobrushin(P), dobrushin_torch(P), torch_path.validated_torch(P)):
        assert out.shape == shape[:-2] and out.dtype == RESULT_DTYPE[dtype]
        np.testing.assert_array_equal(out.float().numpy(), np.full(shape[:-2], want, dtype=np.float32))
    assert dobrushin(P.numpy() if dtype != torch.bfloat16 else P.float().numpy()).shape == shape[:-2]


@pytest.mark.parametrize("bad,pattern", [
    (torch.tensor([[0.5, 0.5], [0.5, 0.6]]), r"P: row 1 sums to"),
    (torch.tensor([[1.0, -0.0], [-0.5, 1.5]]), r"P: negative entry -0.5 at row 1, column 0"),
    (torch.tensor([[True, False], [False, True]]), r"P: boolean tensor"),
    (torch.tensor([[1 + 0j, 0j], [0j, 1 + 0j]]), r"P: complex tensor"),
    (torch.tensor([[2, 0], [0, 1]]), r"P: row 0 sums to 2.0"),
])
def test_torch_route_validates_like_the_cpu_path(bad, pattern):
    """The CUDA route (exercised on CPU tensors) raises the CPU path's errors, word for word."""
    from numerics.dobrushin import torch_path

    with pytest.raises(ValueError, match=pattern) as cpu:
        dobrushin(bad)
    with pytest.raises(ValueError, match=pattern) as route:
        torch_path.validated_torch(bad)
    assert str(cpu.value) == str(route.value)


@pytest.mark.parametrize("max_bytes", [1, 200, 2000, 10 ** 9])
def test_torch_route_batches_under_any_budget(max_bytes):
    """Blocks of matrices or of rows: same values as the compiled kernel whatever the budget."""
    P = torch.from_numpy(rng.dirichlet(np.full(7, 0.4), size=(3, 5, 6)))
    np.testing.assert_allclose(dobrushin_torch(P, max_bytes=max_bytes).numpy(), dobrushin(P).numpy(), atol=1e-15)


# ---- Theorem D1: closed form and exact verdicts ------------------------------------------------
def _check_slack(A):
    """slack is 0.0 exactly iff tight, positive where strict, and close to the exact slack."""
    exact = ref.factor_slack(A)
    fc = factor_check(A)
    assert exact >= 0  # the bound is never violated (exactly)
    assert (float(fc.slack) == 0.0) == (exact == 0) == bool(fc.equality)
    # the float value is within 4 float_error bounds; rows may be off by 6e-11 (S.unnormalised)
    assert float(fc.slack) == pytest.approx(float(exact), abs=1e-9 if np.any(A.sum(-1) != 1) else 1e-12)
    assert float(factor_slack(A)) == float(fc.slack)
    return exact, fc


@given(st.one_of(square(S.any_stochastic), square(S.unnormalised), S.twin_rows()))
def test_factor_slack_closed_form_matches_definition(A):
    exact, fc = _check_slack(A)
    if exact > 0:     # strict: within 4 error bounds of the exact slack and > 64 bounds, else exact
        assert float(fc.slack) == pytest.approx(float(exact), rel=0.07)


@given(square(S.near_tie))
def test_strict_slack_within_the_float_error_is_the_exact_slack(A):
    """A strict slack the float pass cannot resolve (below 16 rigorous error bounds) is the exact
    slack rounded: the exact search over candidate pairs (float d_ij >= best - 2 s_float - 10 eps)
    must reach the minimising pairs, which near ties make differ from the maximisers."""
    from numerics.dobrushin import float_error
    from numerics.stochastic import as_stochastic

    exact = ref.factor_slack(A)
    assume(exact > 0)
    eps = float(float_error(as_stochastic(A, "A").row_dev, A.shape[-1])[0])
    fc = factor_check(A)
    if exact < 16 * eps:
        assert float(fc.slack) == float(exact)
    else:
        assert float(fc.slack) == pytest.approx(float(exact), rel=0.07)


def test_strict_slack_below_float_resolution_is_not_zero():
    """Regression: a strict case whose slack (~4.3e-19) is below the float error was reported 0.0."""
    t = 2.0 ** -60
    A = np.array([[t, 0, 1 - t], [2 * t, 1 - 2 * t, 0], [0.5, 0.25, 0.25]])
    fc = factor_check(A)
    assert not fc.equality and fc.exact
    exact = ref.factor_slack(A)
    assert 0 < exact < 1e-18
    assert float(fc.slack) > 0 and float(fc.slack) == pytest.approx(float(exact), rel=1e-15)
    assert float(factor_slack(A)) == float(fc.slack)


@given(S.any_stochastic())
def test_factor_equality_equals_bruteforce(A):
    expected = A.shape[0] >= 2 and ref.factor_equality(A)
    assert bool(factor_equality(A)) == expected


@given(S.near_tie())
def test_factor_equality_near_ties_both_ways(A):
    expected = A.shape[0] >= 2 and ref.factor_equality(A)
    assert bool(factor_equality(A)) == expected


@pytest.mark.parametrize("sign", [-1, 0, 1])
def test_self_dominance_decided_at_2_to_minus_50(sign):
    # pair (0, 1) is the unique maximiser; A_00 - A_10 = sign * 2**-50 decides the verdict
    t = sign * 2.0 ** -50
    A = np.array([[0.5, 0.0, 0.5], [0.5 - t, 0.5 + t, 0.0], [0.5, 0.25, 0.25]])
    assert bool(factor_equality(A)) == (sign >= 0) == ref.factor_equality(A)


def _check_d1(A):
    fc = factor_check(A)
    want = ref.factor_pairs(A)
    assert (bool(fc.equality), bool(fc.through_first), bool(fc.through_other)) == want
    return fc


def test_random_dirichlet_verdicts_equal_definition():
    for _ in range(30):
        n = int(rng.integers(2, 9))
        _check_d1(rng.dirichlet(np.full(n, 0.3), size=n))


@given(S.twin_rows())
def test_exact_path_is_taken_and_agrees_with_definition(A):
    """Twin rows tie every maximiser. The float pass may settle them exactly (dyadic grid with rows
    summing to exactly 1, disjoint supports, or no unrefuted pair near the maximum); the exact path
    run on the same matrix anyway (what a near-tie hands it) must give the definition's verdict too,
    and FactorCheck.exact is set exactly when the float pass could not decide."""
    from numerics import kernels as K
    from numerics.dobrushin import certify, core, float_error
    from numerics.stochastic import as_stochastic

    fc = _check_d1(A)
    batch = as_stochastic(A, "A", square=True)
    eps = float_error(batch.row_dev, A.shape[0])
    eps = np.where(K.exact_grid(batch.data, core.GRID), 0.0, eps)
    st = K.pair_scan(batch.data, True, eps)
    assert certify.d1_exact(batch.data[0], A, float(eps[0]), float(st[0, 5:7].max())) == ref.factor_pairs(A)
    x = A[int(st[0, 2]), int(st[0, 2])] - A[int(st[0, 3]), int(st[0, 2])]
    y = A[int(st[0, 3]), int(st[0, 3])] - A[int(st[0, 2]), int(st[0, 3])]
    decided = core._decide(st, np.array([x]), np.array([y]), eps)[0][0]
    assert bool(fc.exact) == (not decided)
    assert bool(product_equality(A, A[::-1].copy())) == ref.product_equality(A, A[::-1])


@given(S.unnormalised())
def test_unnormalised_rows_verdicts_equal_definition(A):
    if A.shape[0] >= 2:
        _check_d1(A)


def test_causal_first_row_one_hot_gives_equality_through_first_token():
    """docs/theory.md §1 corollary: causal attention is always tight, through a pair (0, j)."""
    A = np.tril(rng.random((40, 6, 6)))
    A /= A.sum(-1, keepdims=True)
    fc = factor_check(A)
    assert np.all(np.asarray(fc.equality)) and np.all(np.asarray(fc.through_first))
    for k, a in enumerate(A):
        assert ref.factor_pairs(a) == (True, True, bool(fc.through_other[k]))


def test_through_other_without_token_zero():
    """Equality only through the pair (1, 2): token 0 is never in a self-dominant maximiser."""
    A = np.array([[0.25, 0.375, 0.375], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    fc = _check_d1(A)
    assert fc.equality and fc.through_other and not fc.through_first


# ---- Theorem D2 ------------------------------------------------------------------------------
@given(S.chained_pair())
def test_product_equality_equals_bruteforce(pq):
    P, Q = pq
    assert bool(product_equality(P, Q)) == ref.product_equality(P, Q)


@given(S.stochastic(n=2), S.stochastic(n=2))
def test_product_equality_always_for_two_by_two(P, Q):
    assert bool(product_equality(P, Q))


def test_product_equality_generic_positive_is_strict():
    P = rng.dirichlet(np.ones(5), size=(20, 5))
    Q = rng.dirichlet(np.ones(5), size=(20, 5))
    assert not np.any(product_equality(P, Q))


# ---- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("bad,pattern", [
    (np.array([[0.5, np.nan], [0.5, 0.5]]), r"non-finite entry nan at row 0, column 1"),
    (np.array([[0.5, 0.5], [np.inf, 0.5]]), r"non-finite entry inf at row 1, column 0"),
    (np.array([[1.2, -0.2], [0.5, 0.5]]), r"negative entry -0.2 at row 0, column 1"),
    (np.array([[0.5, 0.5], [0.5, 0.6]]), r"row 1 sums to 1.1"),
    (np.array([0.5, 0.5]), r"at least 2 dimensions"),
    (np.zeros((0, 0)), r"empty matrix"),
    (np.array([[1 + 0j]]), r"complex"),
    (np.array([[1.0]], dtype=object), r"object array"),
    (np.array([[True]]), r"boolean"),
    ("not a matrix", r"expected a numpy array or torch tensor"),
])
def test_bad_input_names_the_problem(bad, pattern):
    with pytest.raises(ValueError, match=pattern):
        dobrushin(bad)


def test_bad_row_in_a_batch_is_located():
    P = np.tile(np.eye(3), (2, 4, 1, 1))
    P[1, 2, 1, 1] = 0.9
    with pytest.raises(ValueError, match=re.escape("row 1 sums to 0.9") + r".*batch index \(1, 2\)"):
        dobrushin(P)


def test_square_and_chaining_errors():
    with pytest.raises(ValueError, match=r"must be square"):
        factor_equality(np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"do not chain"):
        product_equality(np.full((2, 3), 1 / 3), np.full((2, 2), 0.5))


def test_integers_are_accepted_as_exact_values():
    assert dobrushin(np.eye(3, dtype=np.int64)) == 1.0


def test_half_precision_uses_its_own_row_tolerance():
    """float16 / bfloat16 rows carry about 3 decimal digits: the table's 2e-2 applies to them, not
    float32's 1e-5 (they are widened to float32 only for computing)."""
    import torch

    from theory.dobrushin import row_tol

    rows = [[0.5, 0.5], [0.3, 0.705]]                       # row 1 off by 5e-3 (after rounding)
    assert row_tol(np.float16) == row_tol("bfloat16") == 2e-2
    assert float(dobrushin(np.array(rows, dtype=np.float16))) == pytest.approx(0.2, abs=5e-3)
    assert float(dobrushin(torch.tensor(rows, dtype=torch.bfloat16))) == pytest.approx(0.2, abs=5e-3)
    with pytest.raises(ValueError, match="row 1 sums"):
        dobrushin(np.array(rows, dtype=np.float32))
    with pytest.raises(ValueError, match="row 1 sums"):
        dobrushin(torch.tensor(rows, dtype=torch.float32))


def test_renormalise_certifies_the_exact_renormalisation_of_the_given_floats():
    """A kept submatrix of attention: the verdict is for its floats with each row divided by its
    exact sum. On this matrix, renormalising in float64 first flips the exact verdict."""
    M = np.array([[0.0, 0.0, 3.0000000000000018], [0.0, 2.0, 1.0], [3.0, 1.0, 2.0]])
    F = M / M.sum(axis=-1, keepdims=True)                    # float64 renormalisation
    assert ref.factor_equality(M) is True and ref.factor_equality(F) is False
    fc = factor_check(M, renormalise=True)
    assert bool(fc.equality) is True and float(fc.slack) == 0.0
    assert bool(factor_check(F).equality) is False
    rng = np.random.default_rng(5)
    subs = rng.dirichlet(np.ones(7), size=(40, 7))[:, 2:, 2:]    # rows of mass < 1
    got = factor_check(subs, renormalise=True).equality
    assert [bool(g) for g in got] == [ref.factor_equality(s) for s in subs]
    with pytest.raises(ValueError, match="row 1 is all zero"):
        factor_check(np.array([[0.5, 0.5], [0.0, 0.0]]), renormalise=True)
    with pytest.raises(ValueError, match="negative"):
        factor_check(np.array([[0.5, -0.5], [0.2, 0.3]]), renormalise=True)
