"""numerics.poincare.constants: the discretised generator against known answers, refinement, bounds vs truth."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from numerics.poincare import bounds as PB
from numerics.poincare.losses import AttentionScalar, family
from numerics.poincare.constants import (chebyshev_fit, gaussian_window, poincare_constant_1d, poincare_constant_2d,
                               rayleigh_lower_mp, rayleigh_lower_grid)


@given(beta=st.floats(0.2, 50), lam=st.floats(0.05, 5), shift=st.floats(-2, 2))
@settings(max_examples=25)
def test_gaussian_reproduces_one_over_beta_lambda(beta, lam, shift):
    R = gaussian_window(beta, lam, 0.0) + abs(shift)
    r = poincare_constant_1d(lambda t: 0.5 * lam * (t - shift) ** 2, beta, -R, R)
    exact = 1 / (beta * lam)
    assert r.converged
    assert abs(r.value - exact) <= max(r.error, 1e-12 * exact) * 10
    assert abs(r.value - exact) <= 1e-8 * exact            # high precision, not just consistency
    # Bakry-Emery is exact here, and the linear test function attains it
    assert abs(rayleigh_lower_grid(r, "linear") - exact) <= 1e-8 * exact


def test_discretised_gap_converges_at_second_order():
    fam = family("attn1")
    lam, beta = 0.3, 4.0
    R = gaussian_window(beta, lam, PB.oscillation(fam))
    r = poincare_constant_1d(fam.F(lam), beta, -R, R, n0=200, rtol=1e-12, n_max=12800)
    gaps = np.array([g for _, g in r.history])
    diffs = np.abs(np.diff(gaps))
    assert len(diffs) >= 3
    ratios = diffs[:-1] / diffs[1:]
    assert np.all(ratios > 3.5) and np.all(ratios < 4.5)     # h^2: each halving divides the change by 4
    assert abs(gaps[-1] - r.gap) < diffs[-1]                 # extrapolant beyond the finest grid


def test_two_dimensional_anisotropic_gaussian():
    beta, l1, l2 = 2.0, 0.5, 2.0
    R = gaussian_window(beta, min(l1, l2), 0.0, 2)
    F = lambda th: 0.5 * l1 * th[..., 0] ** 2 + 0.5 * l2 * th[..., 1] ** 2
    r = poincare_constant_2d(F, beta, [(-R, R), (-R, R)], rtol=1e-5)
    exact = 1 / (beta * min(l1, l2))
    assert abs(r.value - exact) <= 3 * r.error + 1e-6
    assert abs(r.value - exact) < 1e-4 * exact


def test_mpmath_rayleigh_cross_check_1d():
    fam = family("attn1")
    beta, lam = 4.0, 0.3
    R = gaussian_window(beta, lam, PB.oscillation(fam))
    r = poincare_constant_1d(fam.F(lam), beta, -R, R)
    lb = float(rayleigh_lower_mp(lambda s: fam.loss_mp(s) + lam * s * s / 2, beta, -R, R, chebyshev_fit(r, -R, R), 20))
    assert lb <= r.value + r.error                      # a true lower bound
    assert lb >= r.value * (1 - 1e-6)                   # and the eigenfunction makes it tight


# random bounded perturbations of the ridge Gaussian with exact constants:
# F = lam/2 t^2 + sum a_k cos(w_k t + p_k): osc <= 2 sum|a_k|, F'' >= lam - sum |a_k| w_k^2
@given(beta=st.floats(0.5, 8), lam=st.floats(0.2, 3),
       terms=st.lists(st.tuples(st.floats(-0.5, 0.5), st.floats(0.2, 2.5), st.floats(0, 6.3)), min_size=1, max_size=3))
@settings(max_examples=30)
def test_bounds_on_right_side_of_truth(beta, lam, terms):
    def F(t):
        return 0.5 * lam * t ** 2 + sum(a * np.cos(w * t + p) for a, w, p in terms)

    osc = 2 * sum(abs(a) for a, _, _ in terms)
    m = sum(abs(a) * w * w for a, w, _ in terms)
    R = gaussian_window(beta, lam, osc)
    r = poincare_constant_1d(F, beta, -R, R, rtol=1e-8)
    C, err = r.value, r.error + 1e-9 * r.value
    hs = math.exp(beta * osc) / (beta * lam)
    assert hs >= C - err
    if lam > m:
        assert 1 / (beta * (lam - m)) >= C - err
    for span in ("linear", "quadratic"):
        assert rayleigh_lower_grid(r, span) <= C + err


@pytest.mark.slow
@given(seed=st.integers(0, 10_000), beta=st.sampled_from([0.5, 2.0, 8.0]), lam=st.sampled_from([0.2, 1.0, 3.0]))
@settings(max_examples=5)
def test_attention_bounds_on_right_side(seed, beta, lam):
    """Random attention data sets (seeded): certified BE / HS above the truth, lower bounds below."""
    fam = AttentionScalar(dim=1, seed=seed)
    R = gaussian_window(beta, lam, PB.oscillation(fam))
    r = poincare_constant_1d(fam.F(lam), beta, -R, R)
    for ev in (PB.bakry_emery, PB.holley_stroock):
        b = ev(fam, beta, lam)["bound"]
        assert b is None or b >= r.value - r.error
    assert rayleigh_lower_grid(r) <= r.value + r.error
    assert rayleigh_lower_grid(r, "linear") <= r.value + r.error


def test_certified_hessian_bound_below_grid_minimum():
    fam = family("attn1")
    k = PB.constants(fam)
    s = np.linspace(-20, 20, 4001)
    L = fam.loss_np(s[:, None])
    h = s[1] - s[0]
    L2 = (L[2:] - 2 * L[1:-1] + L[:-2]) / h ** 2
    assert -k["m"] <= L2.min() + 1e-4
    assert k["m"] < k["crude_m"]
    lo, hi = k["loss_range"]
    assert lo <= L.min() and L.max() <= hi


def test_bad_input_is_a_clear_value_error():
    with pytest.raises(ValueError, match="beta"):
        poincare_constant_1d(lambda t: t * t, -1.0, -1, 1)
    with pytest.raises(ValueError, match="window"):
        poincare_constant_1d(lambda t: t * t, 1.0, 1, -1)
    with pytest.raises(ValueError, match="not finite"), np.errstate(divide="ignore", invalid="ignore"):
        poincare_constant_1d(lambda t: np.log(t), 1.0, -1, 1)
    with pytest.raises(ValueError, match="lambda"):
        family("attn1").F(0.0)
    with pytest.raises(ValueError, match="unknown loss family"):
        family("mlp")
    with pytest.raises(ValueError, match="last dimension"):
        family("attn2").loss_np(np.zeros((3, 5)))
