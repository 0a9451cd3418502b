"""Dobrushin kernels: known answers, exact verdicts against brute force, bad input."""
import re

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from numerics.dobrushin import (dobrushin, dobrushin_torch, factor_check, factor_equality, factor_slack,
                                product_equality)
from numerics.stochastic import ExactMatrix
from verification.testing import reference as ref
from verification.testing import strategies as S

rng = np.random.default_rng(12345)


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


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu():
    P = torch.from_numpy(rng.dirichlet(np.ones(64), size=(20, 64)))
    np.testing.assert_allclose(dobrushin(P.cuda()).cpu().numpy(), dobrushin(P).numpy(), atol=1e-12)


# ---- Theorem D1: closed form and exact verdicts ------------------------------------------------
@given(S.any_stochastic())
def test_factor_slack_closed_form_matches_definition(A):
    if A.shape[0] != A.shape[1] or A.shape[0] < 2:
        return
    exact = float(ref.factor_slack(A))
    assert factor_slack(A) == pytest.approx(exact, abs=1e-12)
    assert exact >= 0  # the bound is never violated (exactly)


@given(S.any_stochastic())
def test_factor_equality_equals_bruteforce(A):
    if A.shape[0] != A.shape[1]:
        return
    expected = A.shape[0] >= 2 and ref.factor_equality(A)
    assert bool(factor_equality(A)) == expected


@given(S.near_tie())
def test_factor_equality_near_ties_both_ways(A):
    if A.shape[0] != A.shape[1]:
        return
    expected = A.shape[0] >= 2 and ref.factor_equality(A)
    assert bool(factor_equality(A)) == expected


@pytest.mark.parametrize("sign", [-1, 0, 1])
def test_self_dominance_decided_at_2_to_minus_50(sign):
    # pair (0, 1) is the unique maximiser; A_00 - A_10 = sign * 2**-50 decides the verdict
    t = sign * 2.0 ** -50
    A = np.array([[0.5, 0.0, 0.5], [0.5 - t, 0.5 + t, 0.0], [0.5, 0.25, 0.25]])
    assert bool(factor_equality(A)) == (sign >= 0) == ref.factor_equality(A)


def test_fast_path_agrees_with_exact_path_on_all_pairs():
    for _ in range(30):
        n = int(rng.integers(2, 9))
        A = rng.dirichlet(np.full(n, 0.3), size=n)
        E = ExactMatrix.from_floats(A)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        ov = {p: E.overlap(*p) for p in pairs}
        lo = min(ov.values())
        exact = any(E.diff_sign(i, j, i) >= 0 and E.diff_sign(j, i, j) >= 0 for (i, j), o in ov.items() if o == lo)
        assert bool(factor_equality(A)) == exact


def test_causal_first_row_one_hot_gives_equality_through_first_token():
    A = np.tril(rng.random((40, 6, 6)))
    A /= A.sum(-1, keepdims=True)
    fc = factor_check(A)
    eq = np.asarray(fc.equality)
    # every such matrix whose delta is attained at a pair with token 0 is tight through token 0
    assert np.all(np.asarray(fc.through_first) <= eq)
    assert np.all(eq == (np.asarray(fc.through_first) | np.asarray(fc.through_other)))
    for a, e in zip(A, eq):
        assert e == ref.factor_equality(a)


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
