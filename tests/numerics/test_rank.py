"""Rank lower bounds, computed: known answers, exact and 60-digit cross-checks, bad input."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from numerics.rank import linear as R
from numerics.rank import gd as G
from theory.errors import InvalidInput
from theory.rank import exact_rank
from theory.verdicts import Verdict


def test_optimal_excess_risk_known_answers():
    M = np.diag([3.0, 2.0, 1.0])
    assert R.optimal_excess_risk(M, np.eye(3), 1) == 5.0
    K = np.diag([4.0, 1.0, 1.0])                     # sigma(M K^{1/2}) = (6, 2, 1)
    assert [R.optimal_excess_risk(M, K, r) for r in range(4)] == [41.0, 5.0, 1.0, 0.0]


@given(st.integers(0, 2**31 - 1), st.integers(2, 6), st.integers(0, 6))
def test_no_rank_r_student_beats_the_tail_sum(seed, n, r):
    rng = np.random.default_rng(seed)
    r = min(r, n)
    M = rng.standard_normal((n, n))
    A = rng.standard_normal((n, n))
    K = A @ A.T + 0.1 * np.eye(n)
    K = (K + K.T) / 2
    opt = R.optimal_excess_risk(M, K, r)
    student = rng.standard_normal((n, r)) @ rng.standard_normal((r, n))
    D = M - student
    assert np.trace(D @ K @ D.T) >= opt * (1 - 1e-9)
    # the explicit minimizer M_r = [M L]_r L^{-1} attains it
    L = np.linalg.cholesky(K)
    u, s, vt = np.linalg.svd(M @ L)
    Mr = (u[:, :r] * s[:r]) @ vt[:r] @ np.linalg.inv(L)
    D = M - Mr
    assert math.isclose(np.trace(D @ K @ D.T), opt, rel_tol=1e-8, abs_tol=1e-10)


def test_estimators_known_values():
    assert R.energy_rank([1, 1, 1, 1], 0.9) == 4 and R.energy_rank([1, 1, 1, 1], 0.75) == 3
    assert R.energy_rank([1, 0.5, 0.25], 0.9) == 2 and R.energy_rank([1, 0.5, 0.25], 0.99) == 3
    assert R.energy_rank([0, 0], 0.9) == 0 and R.entropy_rank([0.0, 0.0]) == 0.0
    assert math.isclose(R.entropy_rank([2, 2, 2, 0, 0]), 3.0, rel_tol=1e-12)
    assert math.isclose(R.entropy_rank([1.0]), 1.0)
    batched = R.energy_rank(np.array([[1, 1, 0], [1, 0, 0], [0.1, 1, 0]]), 0.9)
    assert batched.tolist() == [2, 1, 1]               # sorted internally
    assert R.threshold_rank([1.0, 0.1, 0.01], 0.01, (3, 3)) == 2
    # Gavish-Donoho square threshold is 4/sqrt(3) sqrt(n) sigma
    assert math.isclose(R.gavish_donoho_threshold(1.0, (5, 5)), 4 / math.sqrt(3) * math.sqrt(5))


@pytest.mark.parametrize("call,match", [
    (lambda: R.energy_rank([1, 2], 0), "tau"),
    (lambda: R.energy_rank([1, -2], 0.9), "non-negative"),
    (lambda: R.entropy_rank([1, float("nan")]), "finite"),
    (lambda: R.optimal_excess_risk(np.eye(2), np.array([[1, 2], [2, 1.0]]), 1), "positive definite"),
    (lambda: R.optimal_excess_risk(np.eye(2), np.array([[1, 0.5], [0.4, 1.0]]), 1), "symmetric"),
    (lambda: R.optimal_excess_risk(np.eye(3), np.eye(2), 1), "columns"),
    (lambda: R.optimal_excess_risk(np.eye(2), np.eye(2), -1), "non-negative integer"),
    (lambda: R.spectrum(3, "cubic"), "shape"),
    (lambda: R.teacher(3, 5, "flat", np.eye(3), 0), "r_star"),
    (lambda: R.least_squares(np.ones((4, 3)), np.ones((4, 3))), "more columns"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("shape", R.SPECTRUM_SHAPES)
def test_teacher_has_exact_rank_and_the_requested_spectrum(shape):
    K = R.covariance(8, "spread", 3)
    M = R.teacher(8, 3, shape, K, 5)
    assert exact_rank(M) == 3
    s = R.weighted_singular_values(M, K)
    np.testing.assert_allclose(s[:3], R.spectrum(3, shape), rtol=1e-3)


def test_tail_sum_certified_at_60_digits():
    K = R.covariance(8, "spread", 1)
    M = R.teacher(8, 3, "geometric", K, 2)
    for r in (0, 1, 2, 3, 5):
        c = R.certify_tail_sum(M, K, r)
        width = float(c["tail_hi"] - c["tail_lo"])
        assert 0 <= width < 1e-50
        fast = R.optimal_excess_risk(M, K, r)
        assert abs(fast - float(c["tail_lo"])) <= 1e-14 * max(1.0, fast)
        # the explicit rank-r minimizer P_r M* attains the certified tail (intervals overlap)
        assert c["risk_lo"] <= c["tail_hi"] and c["tail_lo"] <= c["risk_hi"]
    assert R.certify_tail_sum(M, K, 3)["tail_lo"] == 0     # r >= r*: exactly nothing left


def test_deficiency_and_achievability_verdicts_are_exact():
    K = R.covariance(6, "identity", 0)
    M = R.teacher(6, 3, "flat", K, 1)
    assert [R.deficiency_fast(M, K, r)["verdict"] for r in range(5)] == [
        Verdict.HOLDS, Verdict.HOLDS, Verdict.TIGHT, Verdict.NOT_APPLICABLE, Verdict.NOT_APPLICABLE]
    ex = R.deficiency_exact(M, K, 2)
    assert ex["verdict"] is Verdict.TIGHT and ex["value_interval"][0] <= ex["bound_interval"][1]
    assert R.achievability_exact(M, K, 3)["value_exact"] == 0
    assert R.achievability_fast(M, K, 2)["verdict"] is Verdict.NOT_APPLICABLE


def test_excess_risk_identity_exact_and_monte_carlo():
    K = R.covariance(4, "spread", 2)
    M = R.teacher(4, 2, "linear", K, 0)
    student = np.full((4, 4), 0.125)
    lhs, rhs = R.excess_risk_exact(M, student, K, d=3)
    assert lhs == rhs
    mc = R.excess_risk_monte_carlo(M, student, K, d=3, samples=20000, seed=1)
    assert abs(mc["mean"] - mc["identity"]) < 5 * mc["stderr"]
    assert math.isclose(mc["identity"], float(rhs), rel_tol=1e-12)


def test_estimators_recover_a_flat_rank_from_clean_data():
    K = R.covariance(10, "spread", 0)
    M = R.teacher(10, 3, "flat", K, 0)
    X, Y = R.sample_data(M, K, n_samples=400, d=4, noise=1e-3, seed=0)
    ls = R.least_squares(X, Y)
    assert abs(ls["noise_std"] - 1e-3) < 1e-4
    est = R.estimate_ranks(ls["M_hat"], ls["K_hat"], ls["noise_std"], ls["columns"])
    assert est["energy_0.9"] == est["energy_0.99"] == est["threshold"] == est["entropy_round"] == 3
    ex = R.estimate_ranks_exact(ls["M_hat"], ls["K_hat"], ls["noise_std"], ls["columns"])
    assert ex["energy_0.9"] == 3 and ex["threshold"] == 3 and math.isclose(ex["entropy"], est["entropy"])


def test_energy_rank_undercounts_a_geometric_spectrum():
    # a property of the estimator, not a bug: 90% of the energy of (1, 1/2, 1/4, 1/8) sits in two
    s = R.spectrum(4, "geometric")
    assert R.energy_rank(s, 0.9) == 2 and R.energy_rank(s, 0.99) == 4


def test_gd_recovers_rank_on_population_loss():
    K = R.covariance(6, "spread", 0)
    M = R.teacher(6, 2, "linear", K, 0)
    run = G.gd_factorised(M, K, 4, seeds=[0, 1, 2], init_scale=1e-3, steps=1500)
    learned = G.learned_rank(run["spectra"][:, -1], G.escape_threshold(run["init_top"]))
    assert learned.tolist() == [2, 2, 2]
    assert np.all(run["risk"][:, -1] < 1e-8) and np.all(run["risk"][:, 0] > 0.5)
    under = G.gd_factorised(M, K, 1, seeds=[0], init_scale=1e-3, steps=1500)
    assert math.isclose(under["risk"][0, -1], R.optimal_excess_risk(M, K, 1), rel_tol=1e-6)
    exact = G.learned_rank_exact(run["U"][0], run["V"][0], np.linalg.cholesky(K),
                                 float(G.escape_threshold(run["init_top"][0])))
    assert exact == 2


def test_gd_batched_equals_per_seed_loop():
    K = R.covariance(5, "identity", 0)
    M = R.teacher(5, 2, "flat", K, 0)
    kw = dict(init_scale=1e-2, steps=200, lr=0.1)
    a = G.gd_factorised(M, K, 3, [3, 4, 5], **kw)
    b = G.gd_factorised_loop(M, K, 3, [3, 4, 5], **kw)
    np.testing.assert_allclose(a["risk"], b["risk"], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(a["spectra"], b["spectra"], rtol=1e-10, atol=1e-14)


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_gd_on_cuda_matches_cpu():
    K = R.covariance(8, "spread", 0)
    M = R.teacher(8, 3, "flat", K, 0)
    kw = dict(init_scale=1e-3, steps=500, lr=0.1)
    cpu = G.gd_factorised(M, K, 5, list(range(16)), **kw)
    gpu = G.gd_factorised(M, K, 5, list(range(16)), device="cuda", **kw)
    np.testing.assert_allclose(gpu["risk"], cpu["risk"], rtol=1e-8, atol=1e-14)


def test_energy_and_entropy_ranks_are_biased_without_noise():
    # spectrum (1, 1/2, 1/4), r* = 3: energy_0.9 = 2 and the entropy ranks 1.95 (p ~ sigma^2) and
    # 2.60 (p ~ sigma) all undercount, with no noise at all
    s = R.spectrum(3, "geometric")
    assert s.tolist() == [1.0, 0.5, 0.25]
    assert R.energy_rank(s, 0.9) == 2 and R.energy_rank(s, 0.99) == 3
    p2 = np.array([1, 1 / 4, 1 / 16]) / (21 / 16)
    p1 = np.array([1, 1 / 2, 1 / 4]) / (7 / 4)
    assert math.isclose(R.entropy_rank(s), math.exp(-np.sum(p2 * np.log(p2))), rel_tol=1e-14)
    assert math.isclose(R.entropy_rank(s, 1), math.exp(-np.sum(p1 * np.log(p1))), rel_tol=1e-14)
    assert round(R.entropy_rank(s), 2) == 1.95 and round(R.entropy_rank(s, 1), 2) == 2.60
    assert round(R.entropy_rank(s)) == 2 and round(R.entropy_rank(s, 1)) == 3    # the convention decides
    from verification.rank.findings.linear import bias
    from verification.rank.report.linear import estimator_bias_sentence

    text = estimator_bias_sentence(bias())
    assert "r* = 3" in text and "energy_0.9 = 2" in text and "1.95" in text and "2.60" in text
    with pytest.raises(ValueError, match="power"):
        R.entropy_rank(s, 3)


def test_estimate_ranks_reports_both_entropy_conventions_and_the_detection_limit():
    M, K = np.diag([1.0, 0.5, 0.25, 0.0]), np.eye(4)
    est = R.estimate_ranks(M, K, 0.0, 100)
    assert est["entropy_round"] == 2 and est["entropy_sigma_round"] == 3 and est["threshold"] == 3
    # the noise in M_hat L_hat has entries N(0, noise^2 / columns): the Gavish-Donoho square threshold
    assert math.isclose(R.detection_limit(0.1, 32, (8, 8)), 4 / math.sqrt(3) * math.sqrt(8) * 0.1 / math.sqrt(32))


def test_marchenko_pastur_median_known_values_and_monte_carlo():
    # Gavish & Donoho 2014: omega(1) = lambda(1) / sqrt(mu_1) = 2.858
    mu = R.marchenko_pastur_median(1.0)
    assert abs(mu - 0.6528) < 1e-4
    omega = R.gavish_donoho_threshold(1.0, (10, 10)) / math.sqrt(10) / math.sqrt(mu)
    assert abs(omega - 2.858) < 1e-3
    rng = np.random.default_rng(0)
    for m, n in ((100, 400), (150, 300)):
        X = rng.standard_normal((m, n))
        ev = np.linalg.eigvalsh(X @ X.T / n)
        assert abs(np.median(ev) - R.marchenko_pastur_median(m / n)) < 0.03
    for bad in (0.0, 1.5, -1.0, float("nan")):
        with pytest.raises(InvalidInput):
            R.marchenko_pastur_median(bad)


def test_median_threshold_sees_the_spectrum_only_and_finds_a_planted_rank():
    rng = np.random.default_rng(3)
    m = n = 60
    U, _ = np.linalg.qr(rng.standard_normal((m, 4)))
    V_, _ = np.linalg.qr(rng.standard_normal((n, 4)))
    noise = 0.05
    signal = U @ np.diag([3.0, 2.5, 2.0, 1.5]) @ V_.T
    s = np.linalg.svd(signal + noise * rng.standard_normal((m, n)), compute_uv=False)
    assert R.median_threshold_rank(s, (m, n)) == 4
    # the median rule's threshold is close to the known-noise one (it estimates the noise level)
    assert abs(R.median_threshold(s, (m, n)) / R.gavish_donoho_threshold(noise, (m, n)) - 1) < 0.1
    # scale invariant: it reads nothing but the spectrum
    assert R.median_threshold_rank(7.0 * s, (m, n)) == 4
    # batched over leading dimensions
    assert list(R.median_threshold_rank(np.stack([s, 7 * s]), (m, n))) == [4, 4]
    with pytest.raises(InvalidInput):
        R.median_threshold(s[:10], (m, n))
    est = R.estimate_ranks(np.eye(3), np.eye(3), 0.1, 100)
    assert "threshold_median" in est and est["threshold_median"] in range(0, 4)
