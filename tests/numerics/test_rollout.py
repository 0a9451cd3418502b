"""Rollout: products, head fusion done right, discarding, and exact chain verdicts."""
from fractions import Fraction

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
def stacks(draw, n=None, families=None):
    n = draw(st.integers(2, 4)) if n is None else n
    L = draw(st.integers(1, 3))
    fam = draw(st.sampled_from(families or [S.dyadic, S.causal, S.hard, S.near_tie, S.sparse, S.stochastic,
                                            S.unnormalised]))
    return np.stack([draw(fam(n=n)) for _ in range(L)])


def _verdict(b):
    return Verdict.TIGHT if b else Verdict.HOLDS


def check_against_reference(t, factors, A=None, R=None):
    """Every per-layer verdict of ``t`` against the brute-force Fraction rollout of ``factors``
    (exact Ahat_l); D1 against the definition on the fused floats ``A`` when given."""
    steps = ref.rollout_steps(factors)
    for l, s in enumerate(steps):
        assert s["delta_R"] <= s["prod"]                      # submultiplicativity, exactly
        assert t.chain[l] == _verdict(s["chain"]), l
        assert t.d2[l] == _verdict(s["d2"]), l
        # float values within the rigorous bound (rows off by up to ~1e-3 are not renormalised in floats)
        assert abs(float(s["delta_R"]) - t.delta_R[l]) <= t.error_R[l]
        assert abs(float(ref.delta(factors[l])) - t.delta_Ahat[l]) <= 3 * t.error_R[0]
        if A is not None:
            assert t.d1[l] == _verdict(ref.factor_equality(A[l]))
    if R is not None:                                          # the float rollout itself
        Rx = None
        for l, H in enumerate(factors):
            Rx = H if Rx is None else ref.matmul(H, Rx)
            np.testing.assert_allclose(R[l], np.array(Rx, dtype=float), atol=t.error_R[l])


@settings(max_examples=60)
@given(stacks(), st.sampled_from([0.5, 0.5, 0.0, 0.3, 0.75, 1.0]))
def test_chain_and_d2_verdicts_equal_exact_definition(stack, residual):
    """Non-dyadic and unnormalised rows, any residual: chain, D2 steps and D1 equal the definitions."""
    t = rollout_tightness(stack, residual=residual, fused=True)
    factors = [ref.residual(ref.exact_rows(A), Fraction(residual)) for A in stack]
    check_against_reference(t, factors, stack if residual == 0.5 else None,
                            R=rollout(stack, residual=residual, fused=True))
    if residual != 0.5:
        assert all(v == Verdict.NOT_APPLICABLE for v in t.d1)


def test_chain_returns_to_tight_after_a_zero_factor():
    """Regression: delta(Ahat_3) = 0 makes delta(R_3) = 0 = the product, after a strict step 2."""
    A1 = [[.5, .25, .25], [.125, .5, .375], [.25, .375, .375]]
    A2 = [[.375, .25, .375], [.25, .5, .25], [.125, .125, .75]]
    A3 = [[.5, .25, .25]] * 3
    stack = np.array([A1, A2, A3])
    t = rollout_tightness(stack, residual=0.0, fused=True)
    assert list(t.chain) == [Verdict.TIGHT, Verdict.HOLDS, Verdict.TIGHT]
    assert [s["chain"] for s in ref.rollout_steps([ref.exact_rows(a) for a in stack])] == [True, False, True]
    # rows equal only in the exact rational factor: the float rows differ by rounding
    A3x = np.array([[.5, .25, .25], [.5 * (1 + 2 ** -40), .25 * (1 + 2 ** -40), .25 * (1 + 2 ** -40)],
                    [.5, .25, .25]])
    t = rollout_tightness(np.array([A1, A2, A3x]), residual=0.0, fused=True)
    assert t.chain[2] == Verdict.TIGHT
    near = A3x.copy()
    near[1] = [.5 + 2 ** -50, .25 - 2 ** -50, .25]             # delta 2**-50 > 0: strict stays strict
    t = rollout_tightness(np.array([A1, A2, near]), residual=0.0, fused=True)
    assert t.chain[2] == Verdict.HOLDS == _verdict(ref.rollout_steps(
        [ref.exact_rows(a) for a in (A1, A2, near)])[2]["chain"])


def _low_precision(draw, stack, dtype):
    """``stack`` cast to ``dtype`` with each row scaled by 1 + c * unit (rows off by ~unit)."""
    unit = {torch.float32: 2.0 ** -23, torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -8}[dtype]
    c = np.array(draw(st.lists(st.integers(-2, 2), min_size=stack[..., 0].size, max_size=stack[..., 0].size)))
    return torch.from_numpy(stack * (1 + c.reshape(stack.shape[:-1]) * unit)[..., None]).to(dtype)


@settings(max_examples=40)
@given(st.data(), stacks(families=[S.dyadic, S.causal, S.sparse, S.stochastic]),
       st.sampled_from(["numpy32", torch.float32, torch.float16, torch.bfloat16]))
def test_low_precision_input_is_accepted_and_exact(data, stack, dtype):
    """Regression: float32 (numpy, torch) and float16/bfloat16 (torch) attention, rows off by
    ~1e-7 / ~1e-3: accepted (validated with the dtype's row tolerance) and every verdict equals the
    brute-force Fraction rollout of the rational matrix the floats represent (rows renormalised exactly)."""
    x = _low_precision(data.draw, stack, torch.float32 if dtype == "numpy32" else dtype)
    if dtype == "numpy32":
        x = x.numpy()
    floats = (x.float() if isinstance(x, torch.Tensor) else torch.from_numpy(x)).double().numpy()
    t = rollout_tightness(x, fused=True)
    factors = [ref.residual(ref.exact_rows(A)) for A in floats]
    check_against_reference(t, factors, floats)


def test_float32_rows_off_by_1e7_are_accepted():
    A = rng.dirichlet(np.ones(5), size=(3, 5)).astype(np.float32)
    A[:, :, 0] *= np.float32(1 + 2e-7)
    assert np.abs(A.astype(np.float64).sum(-1) - 1).max() > 1e-9          # float64's tolerance would refuse it
    t = rollout_tightness(A, fused=True)
    check_against_reference(t, [ref.residual(ref.exact_rows(a)) for a in A.astype(np.float64)],
                            A.astype(np.float64))
    assert rollout(torch.from_numpy(A)).dtype == torch.float64


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


# ---- discarding variants and head fusion against brute force -----------------------------------
def brute_discard_factor(A, r, ratio, variant):
    """Plain loops: zero the k smallest eligible entries (ties: earlier row-major position first);
    "offdiag": eligible = off-diagonal, k = int(ratio * (n^2 - n)); "vit-explain": eligible = all,
    k = int(ratio * n^2), then (0, 0) is spared. Ahat = r I + (1 - r) A', rows divided by their sums."""
    n = len(A)
    cells = [(A[i][k], i * n + k) for i in range(n) for k in range(n) if variant == "vit-explain" or i != k]
    drop = {pos for _, pos in sorted(cells)[:int(ratio * len(cells))]}
    if variant == "vit-explain":
        drop.discard(0)
    H = [[r * (i == k) + (1 - r) * (0.0 if i * n + k in drop else A[i][k]) for k in range(n)] for i in range(n)]
    if any(sum(row) == 0 for row in H):
        return None, drop                                     # a row lost all its mass (residual 0)
    return np.array([[x / sum(row) for x in row] for row in H]), drop


@st.composite
def tied_stacks(draw):
    """Fused stacks full of ties (coarse dyadic) or generic (normalised floats)."""
    n = draw(st.integers(2, 5))
    fam = draw(st.sampled_from([lambda n: S.dyadic(n=n, bits=2), S.sparse, S.stochastic, S.hard]))
    return np.stack([draw(fam(n)) for _ in range(draw(st.integers(1, 3)))])


@settings(max_examples=80)
@given(tied_stacks(), st.sampled_from([0.1, 0.25, 0.5, 0.9]), st.sampled_from(["offdiag", "vit-explain"]),
       st.sampled_from([0.5, 0.0, 0.3]))
def test_discard_variants_equal_brute_force(stack, ratio, variant, residual):
    if any(brute_discard_factor(A.tolist(), residual, ratio, variant)[0] is None for A in stack):
        with pytest.raises(ValueError, match="all zero after fusion/discarding"):
            residual_factors(stack, residual, ratio, variant)
        return
    H = residual_factors(stack, residual, ratio, variant)
    for l, A in enumerate(stack):
        want, drop = brute_discard_factor(A.tolist(), residual, ratio, variant)
        n = A.shape[0]
        visible = {p for p in range(n * n) if A.flat[p] != 0 and not (p // n == p % n and residual > 0)}
        assert {p for p in visible if H[l].flat[p] == 0} == drop & visible     # exactly the discarded ones
        np.testing.assert_allclose(H[l], want, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(H[l] == 0, want == 0)
    t = rollout_tightness(stack, residual=residual, discard_ratio=ratio, discard=variant, fused=True)
    check_against_reference(t, [ref.exact_rows(h) for h in H],
                            R=rollout(stack, residual=residual, discard_ratio=ratio, discard=variant, fused=True))


def test_vit_explain_spares_only_cls_to_cls():
    A = np.array([[0.0, 0.5, 0.5], [0.25, 0.5, 0.25], [0.5, 0.25, 0.25]])
    # int(0.25 * 9) = 2 smallest of all 9 entries: 0.0@(0,0) and 0.25@(1,0) (ties: earlier first);
    # (0, 0) is spared and not replaced, so only (1, 0) is zeroed
    H = residual_factors(A[None], 0.5, 0.25, "vit-explain")[0]
    assert H[0, 0] > 0 and H[1, 0] == 0 and np.count_nonzero(H == 0) == 1
    H = residual_factors(A[None], 0.5, 4 / 9 + 1e-9, "vit-explain")[0]   # 4 smallest: (0,0) spared
    assert H[0, 0] > 0 and H[1, 0] == H[1, 2] == H[2, 1] == 0 and np.count_nonzero(H == 0) == 3
    Ho = residual_factors(A[None], 0.5, 0.5, "offdiag")[0]     # 3 of the 6 off-diagonal entries
    assert (Ho == 0).sum() == 3 and np.all(np.diag(Ho) > 0)
    with pytest.raises(ValueError, match="discard must be one of"):
        rollout(A[None], discard_ratio=0.5, discard="smallest")


@settings(max_examples=40)
@given(st.integers(2, 5), st.integers(1, 3), st.integers(1, 4), st.sampled_from(["max", "min", "mean"]),
       st.sampled_from([0.5, 0.3]), st.integers(0, 2 ** 32 - 1))
def test_head_fusion_rollout_equals_brute_force(n, L, H, fusion, residual, seed):
    """max/min fusion (rows renormalised) and mean: the fused matrix by loops; verdicts by the
    Fraction rollout of the fused floats (the rational matrices of the exactness convention)."""
    r = np.random.default_rng(seed)
    A = r.dirichlet(np.full(n, 0.5), size=(L, H, n))
    A[:, -1, 0] = A[:, 0, 0]                                     # a row repeated across heads: ties
    F = fuse_heads(A, fusion)
    for l in range(L):
        for i in range(n):
            if fusion == "mean":
                raw = [sum(A[l, h, i, k] for h in range(H)) / H for k in range(n)]
                np.testing.assert_allclose(F[l, i], raw, rtol=0, atol=1e-15)
            else:
                pick = max if fusion == "max" else min
                raw = [pick(A[l, h, i, k] for h in range(H)) for k in range(n)]
                exact = [Fraction(x) / sum(Fraction(y) for y in raw) for x in raw]
                np.testing.assert_allclose(F[l, i], [float(x) for x in exact], rtol=0, atol=1e-15)
    hf = None if fusion == "mean" else fusion
    t = rollout_tightness(A, residual=residual, head_fusion=hf, fused=False)
    check_against_reference(t, [ref.residual(ref.exact_rows(f), Fraction(residual)) for f in F],
                            F if residual == 0.5 else None,
                            R=rollout(A, residual=residual, head_fusion=hf, fused=False))


def test_rollout_tightness_in_groups_of_stacks_gives_the_same_answers(monkeypatch):
    """The float pass holds Ahat and every R_l of the stacks it is given; under a small memory budget
    the stacks go through it in groups (here one at a time), with answers bitwise those of one group."""
    import numerics.device as device
    from numerics.dobrushin import rollout_tightness

    rng = np.random.default_rng(11)
    z = rng.standard_normal((5, 3, 6, 6)) * 2
    A = np.exp(z - z.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    whole = rollout_tightness(A, fused=True)
    monkeypatch.setattr(device, "DEFAULT_MAX_BYTES", 2 * 3 * 6 * 6 * 8)       # one stack per group
    grouped = rollout_tightness(A, fused=True)
    for f in ("delta_A", "delta_Ahat", "delta_R", "ratio_R", "ratio_factor", "error_R"):
        np.testing.assert_array_equal(getattr(grouped, f), getattr(whole, f), err_msg=f)
    for f in ("d1", "d2", "chain"):
        assert (getattr(grouped, f) == getattr(whole, f)).all(), f
