"""Rollout: products, head fusion done right, discarding, and exact chain verdicts."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from numerics.dobrushin import dobrushin, factor_slack
from numerics.dobrushin.rollout import fuse_heads, residual_factors, rollout, rollout_tightness
from theory.verdicts import Verdict
from verification.testing import reference as ref
from verification.testing import strategies as S

rng = np.random.default_rng(7)


def test_rollout_is_the_left_product_of_residual_factors():
    A = rng.dirichlet(np.ones(5), size=(4, 3, 5))            # (layers, heads, n, n)
    R = rollout(A)
    H = 0.5 * (np.eye(5) + A.mean(axis=1))
    want = np.eye(5)
    for l in range(4):
        want = H[l] @ want                                   # later layers on the left
        np.testing.assert_allclose(R[l], want, atol=1e-15)
    np.testing.assert_allclose(R.sum(-1), 1.0, atol=1e-14)


def test_max_fusion_renormalises_each_row_not_each_column():
    A = rng.dirichlet(np.ones(4), size=(2, 4))[None]          # (1 layer, 2 heads, 4, 4)
    F = fuse_heads(A[0], "max")
    np.testing.assert_allclose(F.sum(-1), 1.0, atol=1e-15)
    raw = A[0].max(axis=0)
    buggy = raw / raw.sum(-1)                                 # no keepdims: broadcasts over columns
    assert not np.allclose(buggy.sum(-1), 1.0)                # the known bug really differs
    np.testing.assert_allclose(F, raw / raw.sum(-1, keepdims=True))


def test_discard_ratio_zeroes_smallest_off_diagonal_and_keeps_stochastic():
    A = rng.dirichlet(np.ones(6), size=6)[None]
    H = residual_factors(A, 0.5, 0.5)
    np.testing.assert_allclose(H.sum(-1), 1.0, atol=1e-14)
    off = ~np.eye(6, dtype=bool)
    assert np.count_nonzero(H[0][off] == 0) == int(0.5 * off.sum())
    assert np.all(np.diag(H[0]) > 0)


def test_torch_in_torch_out_and_fused_input():
    A = torch.from_numpy(rng.dirichlet(np.ones(4), size=(3, 4)))  # (layers, n, n): fused
    R = rollout(A)
    assert isinstance(R, torch.Tensor) and R.shape == (3, 4, 4)


def test_bad_fusion_and_residual():
    A = rng.dirichlet(np.ones(3), size=(2, 2, 3))
    with pytest.raises(ValueError, match="head_fusion"):
        rollout(A, head_fusion="median")
    with pytest.raises(ValueError, match="residual"):
        rollout(A, residual=1.5)
    with pytest.raises(ValueError, match=r"row 0 sums"):
        rollout(A * 2)


@st.composite
def stacks(draw):
    n = draw(st.integers(2, 4))
    L = draw(st.integers(1, 3))
    fam = draw(st.sampled_from([S.dyadic, S.causal, S.hard, S.near_tie, S.sparse]))
    return np.stack([draw(fam(n=n)) for _ in range(L)])


@settings(max_examples=40)
@given(stacks())
def test_chain_verdicts_equal_exact_definition(stack):
    t = rollout_tightness(stack, fused=True)
    chain = ref.rollout_chain(stack)
    for l, (dR, prod) in enumerate(chain):
        assert dR <= prod                                      # submultiplicativity, exactly
        assert t.chain[l] == (Verdict.TIGHT if dR == prod else Verdict.HOLDS)
        assert float(dR) == pytest.approx(t.delta_R[l], abs=1e-12)


def test_bounds_ordered_and_ratios_at_most_one():
    A = rng.dirichlet(np.ones(8), size=(6, 4, 8))
    t = rollout_tightness(A)
    assert np.all(t.delta_R <= t.prod_delta_Ahat + t.error_R)
    assert np.all(t.prod_delta_Ahat <= t.prod_factor_bound + 1e-12)
    assert np.all((t.ratio_factor > 0) & (t.ratio_factor <= 1 + 1e-12))
    assert all(v in (Verdict.TIGHT, Verdict.HOLDS) for v in t.d1)


def test_decayed_rollout_ratio_is_undecided_not_data():
    A = rng.dirichlet(np.full(16, 1e4), size=(60, 16))      # near-uniform: delta(R_l) ~ 2**-l
    t = rollout_tightness(A, fused=True, exact_budget=0)    # no exact rollout allowed
    small = t.delta_R <= t.error_R
    assert small.any()
    assert np.all(np.isnan(t.ratio_R[small]))
    assert all(v == Verdict.UNDECIDED for v in t.d2[1:][small[:-1]])  # Q = R_{l-1} within rounding of 0
    assert np.all(t.error_R < 1e-11)                         # yet the bound is honest, not huge
    assert all(v == Verdict.HOLDS for v in t.d2[1:30])       # decided by the float filter alone


def test_rollout_refuses_what_dobrushin_refuses():
    """Validation comes before any cast: complex, boolean and masked input is an error naming it."""
    A = rng.dirichlet(np.ones(3), size=(2, 3))                       # (layers, n, n)
    with pytest.raises(ValueError, match="complex"):
        rollout(torch.from_numpy(A).to(torch.complex128))
    with pytest.raises(ValueError, match="boolean"):
        rollout(torch.from_numpy(A > 0.3))
    with pytest.raises(ValueError, match="boolean"):
        rollout_tightness(A > 0.3)
    masked = np.ma.masked_array(A, mask=np.zeros_like(A, dtype=bool))
    masked.mask[0, 1, 2] = True
    with pytest.raises(ValueError, match="masked"):
        rollout(masked)
    with pytest.raises(ValueError, match="masked"):
        dobrushin(masked)
    # no entry masked: the data is used as is
    assert np.allclose(rollout(np.ma.masked_array(A)), rollout(A))


def test_head_fusion_on_fused_input_is_an_error():
    A3 = rng.dirichlet(np.ones(3), size=(2, 3))                      # (layers, n, n): fused
    with pytest.raises(ValueError, match="head_fusion='max'"):
        rollout(A3, head_fusion="max")
    with pytest.raises(ValueError, match="head_fusion='min'"):
        rollout_tightness(A3, head_fusion="min")
    A4 = rng.dirichlet(np.ones(3), size=(2, 4, 3))                   # (layers, heads, n, n)
    assert not np.allclose(rollout(A4, head_fusion="max"), rollout(A4))


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_np_matrix_and_object_arrays():
    M = np.matrix([[0.9, 0.1], [0.2, 0.8]])
    assert np.isclose(float(dobrushin(M)), 0.7)
    assert np.isclose(float(factor_slack(M)), float(factor_slack(np.asarray(M))))
    with pytest.raises(ValueError, match="ExactMatrix.from_rationals"):
        dobrushin(np.array([[0.5, 0.5], [1, 0]], dtype=object))
