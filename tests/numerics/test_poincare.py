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


# -- Villani: interval enclosures (numerics.poincare.villani) -------------------------------------------

def test_lora_interval_coefficient_encloses_the_high_precision_value():
    import mpmath

    from numerics.poincare.villani import lora_coefficient_iv

    fam, beta, lam, p = family("lora2"), 1.0, 0.1, -3.78
    c = lora_coefficient_iv(fam, beta, lam, p)
    with mpmath.workdps(40):
        d1, d2 = mpmath.diff(fam.loss_p_mp, p, 1), mpmath.diff(fam.loss_p_mp, p, 2)
        ref = beta * (mpmath.mpf(lam) ** 2 + d1 ** 2) / 2 - d2
        lo, hi = (mpmath.mpf(x) for x in c._mpi_)                      # the enclosure's endpoints, unrounded
        assert lo <= ref <= hi and hi - lo < 1e-20


def test_attn2_interval_moments_enclose_the_high_precision_values():
    import mpmath

    from numerics.poincare.villani import attn2_moments_iv

    fam, s = family("attn2"), 0.4
    m, m1, m2 = attn2_moments_iv(fam, s)
    with mpmath.workdps(40):
        f = lambda t: fam.moments_mp(t)[0]  # noqa: E731
        ref = (f(s), mpmath.diff(f, s), mpmath.diff(f, s, 2))
    def ends(enc):
        with mpmath.workdps(40):                                       # unrounded endpoints
            return tuple(mpmath.mpf(x) for x in enc._mpi_)

    for enc, r in zip((m, m1, m2), ref):
        lo, hi = ends(enc)
        assert lo <= r <= hi and hi - lo < 1e-12
    lo, hi = ends(attn2_moments_iv(fam, [0.39, 0.41])[0])             # an interval argument encloses its range
    assert all(lo <= f(t) <= hi for t in (0.39, 0.395, 0.41))


@pytest.mark.parametrize("name, beta", [("lora2", 1.0), ("lora2", 16.0), ("attn2", 1.0)])
def test_villani_threshold_and_certification(name, beta):
    """Below lambda_V the failure is enclosed (certified); without the enclosure it is an estimate;
    above the interval the claim is supported but only estimated (a grid sup on a finite window)."""
    from numerics.poincare.villani import lambda_v, villani_check

    fam = family(name)
    lv = lambda_v(fam, beta)
    lo, hi = lv["interval"]
    assert 0 < lo <= lv["lambda_V"] <= hi
    below = villani_check(fam, beta, 0.9 * lo)
    assert below["holds"] is False and below["certified"] and below["coefficient"][1] < 0
    assert villani_check(fam, beta, 0.9 * lo, certify=False)["certified"] is False
    above = villani_check(fam, beta, 1.1 * hi)
    assert above["holds"] is True and above["certified"] is False
    assert villani_check(family("attn1"), beta, 1e-3)["certified"] is True      # proved for attn1


def test_lambda_v_is_where_the_lora_coefficient_changes_sign():
    """theory.poincare.villani_lora2: the r^2 coefficient at the witness p is beta (lam^2 - lambda_V^2)/2."""
    from numerics.poincare.villani import lambda_v, lora_coefficient_iv

    fam, beta = family("lora2"), 4.0
    lv = lambda_v(fam, beta)
    for lam in (0.5 * lv["lambda_V"], 2.0 * lv["lambda_V"]):
        c = lora_coefficient_iv(fam, beta, lam, lv["witness"])
        expected = beta * (lam ** 2 - lv["lambda_V"] ** 2) / 2
        assert abs(float(c.mid) - expected) <= 1e-9 * beta


def test_failure_is_certified_only_by_an_enclosure_below_zero(monkeypatch):
    """An enclosure that straddles 0 leaves the failure an estimate (certified False)."""
    import mpmath

    from numerics.poincare import villani

    fam, beta = family("lora2"), 1.0
    lam = 0.5 * villani.lambda_v(fam, beta)["interval"][0]
    monkeypatch.setattr(villani, "lora_coefficient_iv", lambda *a: mpmath.iv.mpf([-1e-3, 1e-3]))
    out = villani.villani_check(fam, beta, lam)
    assert out["holds"] is False and out["certified"] is False and out["coefficient"] == [-1e-3, 1e-3]


# -- Muckenhoupt brackets (numerics.poincare.muckenhoupt) and the certified lambda_V (lora2) ------------

@given(beta=st.floats(0.5, 32), lam=st.floats(0.1, 3), terms=st.lists(
    st.tuples(st.floats(-0.5, 0.5), st.floats(0.2, 2.0), st.floats(0, 6.3)), min_size=0, max_size=2))
@settings(max_examples=8, deadline=None)
def test_muckenhoupt_bracket_contains_the_discretised_constant(beta, lam, terms):
    """Random bounded perturbations of the ridge Gaussian: the certified bracket (arb) holds the
    discretised C_P of the same window (and 1/(beta lam) when unperturbed)."""
    from flint import arb

    from numerics.poincare.muckenhoupt import muckenhoupt_bracket

    def F(t):
        return 0.5 * lam * t ** 2 + sum(a * np.cos(w * t + p) for a, w, p in terms)

    def V(s):
        return arb(beta) * (arb(lam) * s * s / 2 + sum((arb(a) * (arb(w) * s + arb(p)).cos() for a, w, p in terms), 0))

    R = gaussian_window(beta, lam, 2 * sum(abs(a) for a, _, _ in terms))
    r = poincare_constant_1d(F, beta, -R, R)
    mk = muckenhoupt_bracket(V, -R, R)
    assert mk["lower"] <= r.value - r.error and r.value + r.error <= mk["upper"]
    # how loose the bracket may be: once no cell's upper candidate exceeds target (1.5) times the largest
    # lower one, upper <= 4 * 1.5 * max B and lower >= min(mass left, mass right of m) * max B
    m = min(mk["left_mass"], 1 - mk["left_mass"])
    assert mk["upper"] / mk["lower"] <= 4 * 1.5 / m * (1 + 1e-6), (mk["upper"], mk["lower"], mk["left_mass"])
    if not terms:
        assert mk["lower"] <= 1 / (beta * lam) <= mk["upper"]


def test_muckenhoupt_bracket_excludes_a_wrong_measure():
    """The bracket is not wide enough to pass anything: the bracket of N(0, 1) excludes the C_P of
    N(0, 1/25) (and vice versa), so a wrong potential is caught."""
    from numerics.poincare.muckenhoupt import muckenhoupt_bracket

    one = muckenhoupt_bracket(lambda s: s * s / 2, -12.0, 12.0)
    narrow = muckenhoupt_bracket(lambda s: 25 * s * s / 2, -12.0 / 5, 12.0 / 5)
    assert one["lower"] <= 1 <= one["upper"] and not (one["lower"] <= 1 / 25 <= one["upper"])
    assert narrow["lower"] <= 1 / 25 <= narrow["upper"] and not (narrow["lower"] <= 1 <= narrow["upper"])


@pytest.mark.parametrize("seed, beta", [(0, 1.0), (1, 16.0)])
def test_certified_lambda_v_brackets_the_estimate(seed, beta):
    """lora2: lambda_V(beta) from the grid sup lies in the certified arb bracket, which is tight; the
    mpmath enclosure of the r^2 coefficient is negative just below the bracket (a certified failure)."""
    from numerics.poincare.villani import lambda_v, lambda_v_certified, lora_coefficient_iv

    fam = family("lora2", seed)
    est = lambda_v(fam, beta)
    c = lambda_v_certified(fam, beta, est["witness"])
    lo, hi = c["bracket"]
    assert 0 < lo <= est["lambda_V"] * (1 + 1e-9) and est["lambda_V"] <= hi < lo * (1 + 1e-3)
    assert lora_coefficient_iv(fam, beta, 0.999 * lo, est["witness"]).b < 0
    assert lambda_v_certified(family("attn2", seed), beta) is None
