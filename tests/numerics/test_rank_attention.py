"""Attention-native rank: kernel recovery (exact for linear), students, the deficiency sandwich,
the interpolation ladder."""
import math

import numpy as np
import pytest

from numerics.rank import attention as A
from numerics.rank import fits as F
from numerics.rank import students as S


@pytest.fixture(scope="module")
def teacher():
    W, W_V = A.kernel_teacher(4, 2, "linear", seed=0)
    return W, W_V, A.sample_tokens(48, 6, 4, seed=1)


def test_teacher_kernel_has_rank_r_star(teacher):
    W, W_V, _ = teacher
    s = np.linalg.svd(W, compute_uv=False)
    np.testing.assert_allclose(s[:2], [1.0, 0.5], rtol=1e-12)
    assert s[2] < 1e-12 and np.allclose(W_V.T @ W_V, np.eye(4))


def test_linear_recovery_with_and_without_value_map(teacher):
    W, W_V, X = teacher
    Y = A.linear_attention(X, W, W_V)
    known = A.recover_linear_kernel(X, Y, W_V, W_true=W)
    assert known["rel_error"] < 1e-10 and known["energy_0.99"] == 2
    free = A.recover_linear_kernel(X, Y, None, W_true=W)
    assert free["rel_error"] < 1e-6 and free["energy_0.99"] == 2 and free["unfolding_energy_0.99"] == 2


def test_linear_recovery_exact_in_rationals():
    W = np.array([[1.0, 0.5, 0.0], [0.5, 0.25, 0.0], [0.0, 0.0, 0.0]])     # rank 1
    X = np.round(A.sample_tokens(3, 3, 3, seed=0) * 4) / 4
    out = A.recover_linear_kernel_exact(X, W, np.eye(3))
    assert out["identifiable"] and out["equal"] and out["rank"] == 1
    # one input with T = 1 cannot identify a 3 x 3 kernel: said so, not guessed
    assert A.recover_linear_kernel_exact(X[:1, :1], W, np.eye(3)) == {"identifiable": False}


def test_softmax_inversion_exact_at_high_temperature_and_breaks_in_float_when_saturated(teacher):
    W, W_V, _ = teacher
    X = A.sample_tokens(40, 3, 4, seed=2)                                   # T <= d: invertible route
    mild = A.recover_softmax_kernel(X, A.softmax_attention(X, W, W_V, 1.0), W_V, 1.0, W_true=W)
    assert mild["method"] == "invert" and mild["rel_error"] < 1e-8 and mild["energy_0.99"] == 2
    hot = A.recover_softmax_kernel(X, A.softmax_attention(X, W, W_V, 64.0), W_V, 64.0, W_true=W)
    assert hot["rel_error"] > 1e-3                                          # float64 saturation
    exact = A.recover_softmax_kernel_exact(X[:6], W, W_V, 64.0)
    assert exact["rel_error"] < 1e-30                                       # ... not identifiability


def test_softmax_linearisation_bias_grows_with_beta(teacher):
    W, W_V, X = teacher
    errs = [A.recover_softmax_kernel(X, A.softmax_attention(X, W, W_V, b), W_V, b, W_true=W,
                                     method="linearise")["rel_error"] for b in (0.01, 0.1, 1.0)]
    assert errs[0] < errs[1] < errs[2] and errs[0] < 0.01


def test_bad_inputs_are_named(teacher):
    W, W_V, X = teacher
    with pytest.raises(ValueError, match="B, T, d"):
        A.linear_attention(X[0], W, W_V)
    with pytest.raises(ValueError, match="T <= d"):
        A.recover_softmax_kernel(A.sample_tokens(4, 6, 4, 0), np.zeros((4, 6, 4)), W_V, 1.0, method="invert")
    with pytest.raises(ValueError, match="beta"):
        A.recover_softmax_kernel(X, X, W_V, 0.0)
    with pytest.raises(ValueError, match="r_star"):
        A.kernel_teacher(3, 4, "flat", 0)
    with pytest.raises(ValueError, match="lam"):
        S.ladder_data(X, 1.5, np.eye(6), W, W_V, "linear")
    with pytest.raises(ValueError, match="kind"):
        S.train_kernel_students(X, A.linear_attention(X, W, W_V), W_V, 1, [0], kind="cubic", steps=1)


def test_linear_deficiency_sandwich_and_students(teacher):
    W, W_V, X = teacher
    Y = A.linear_attention(X, W, W_V)
    bound = S.linear_deficiency_bound(X, W, W_V, r=1)
    exact = S.linear_deficiency_bound_exact(X[:8], W, W_V, r=1)
    assert exact["certified"] and exact["mu_lo"] > 0
    assert not S.linear_deficiency_bound_exact(X[:8], W, W_V, r=1, margin=-1e-6)["certified"]   # above mu
    lr = 0.25 / bound["lam_max"]
    under = S.train_kernel_students(X, Y, W_V, 1, [0, 1], "linear", steps=800, lr=lr)
    assert np.all(under["train_risk"][:, -1] >= bound["lower"])             # no rank-1 beats mu tail
    assert np.all(under["train_risk"][:, -1] <= under["train_risk"][:, 0])
    full = S.train_kernel_students(X, Y, W_V, 2, [0, 1], "linear", steps=800, lr=lr)
    assert np.all(full["train_risk"][:, -1] < 1e-12)
    risk = S.student_risk_exact(X[:4], W, W_V, full["W"][0], "linear")
    assert 0 <= risk < 1e-12 and S.student_risk_exact(X[:4], W, W_V, W, "linear") == 0


def test_softmax_student_exact_risk_is_zero_at_the_teacher(teacher):
    W, W_V, X = teacher
    assert S.student_risk_exact(X[:2], W, W_V, W, "softmax") == 0
    assert S.student_risk_exact(X[:2], W, W_V, 0 * W, "softmax") > 0


def test_ladder_static_rank_matches_only_at_the_static_end(teacher):
    W, W_V, X = teacher
    M = S.static_mixer(6, 2, seed=3)
    static = S.ladder_rung(X, S.ladder_data(X, 0.0, M, W, W_V, "softmax"), W_V)
    assert static["energy_0.99"] == 2 and static["unexplained"] < 1e-20
    att = S.ladder_rung(X, S.ladder_data(X, 1.0, M, W, W_V, "softmax"), W_V)
    assert att["unexplained"] > 0.05                                        # input-conditioned
    exact = S.ladder_rung_exact(X, S.ladder_data(X, 0.0, M, W, W_V, "softmax"), W_V)
    assert exact["energy_0.99"] == 2 and math.isclose(exact["sigma"][0], static["sigma"][0], rel_tol=1e-9)


def test_softmax_recovery_without_value_map(teacher):
    W, W_V, X = teacher                                                     # B T = 288 >= d + d^3
    small = A.recover_softmax_kernel(X, A.softmax_attention(X, W, W_V, 0.01), None, 0.01, W_true=W)
    large = A.recover_softmax_kernel(X, A.softmax_attention(X, W, W_V, 4.0), None, 4.0, W_true=W)
    assert small["method"] == "linearise-free" and small["energy_0.99"] == 2
    assert small["rel_error"] < 0.1 < large["rel_error"]
    with pytest.raises(ValueError, match="d \\+ d\\^3"):
        A.recover_softmax_kernel(X[:4], A.softmax_attention(X[:4], W, W_V), None, 1.0)


def test_nonlinear_softmax_fit_recovers_what_the_linearisation_misses(teacher):
    W, W_V, _ = teacher
    X = A.sample_tokens(32, 6, 4, seed=2)                                   # T > d: no inversion route
    Y = A.softmax_attention(X, W, W_V, 4.0)
    lin = A.recover_softmax_kernel(X, Y, W_V, 4.0, W_true=W)
    fit = F.fit_softmax_kernel(X, Y, W_V, 4.0, lin["W_hat"], starts=2, seed=0, W_true=W)
    assert lin["method"] == "linearise" and lin["rel_error"] > 0.1           # the estimator's bias
    assert fit["rel_error"] < 1e-6 and fit["converged"] == fit["starts"] == 2 and fit["spread"] < 1e-6
    np.testing.assert_allclose(fit["W_hat"], W, atol=1e-6)                  # scale identified too
    assert fit["energy_0.99"] == 2 and A.kernel_error(-3 * W, W) < 1e-15


def test_deficiency_bound_is_rounded_down_and_compared_exactly(teacher):
    from fractions import Fraction

    W, W_V, X = teacher
    tenth = Fraction(1, 10)                     # the nearest float to 1/10 lies above it: must step down
    assert Fraction(float(tenth)) > tenth and Fraction(S.float_below(tenth)) < tenth
    assert math.nextafter(S.float_below(tenth), math.inf) == float(tenth)     # ... by exactly one ulp
    assert S.float_below(Fraction(1, 2)) == 0.5
    assert S.mpf_fraction(__import__("mpmath").mpf("0.375")) == Fraction(3, 8)
    cert = S.linear_deficiency_bound_exact(X[:8], W, W_V, r=1)
    assert cert["certified"] and 0 < Fraction(cert["lower"]) <= cert["lower_exact"]
    fast = S.linear_deficiency_bound(X[:8], W, W_V, r=1)
    assert cert["lower_exact"] <= Fraction(fast["lower"]) * (1 + Fraction(1, 10**9))
    run = S.train_kernel_students(X[:8], A.linear_attention(X[:8], W, W_V), W_V, 1, [0], "linear", steps=50,
                                  lr=0.25 / fast["lam_max"])
    exact = S.student_risk_exact(X[:8], W, W_V, None, "linear", factors=(run["U"][0], run["V"][0]))
    assert exact >= cert["lower_exact"]                                  # no rank-1 student beats the bound
    assert math.isclose(float(exact), run["train_risk"][0, -1], rel_tol=1e-9)


def test_joint_fit_recovers_the_kernel_without_the_value_map(teacher):
    W, W_V, _ = teacher
    X = A.sample_tokens(32, 6, 4, seed=2)
    Y = A.softmax_attention(X, W, W_V, 4.0)
    lin = A.recover_softmax_kernel(X, Y, None, 4.0, W_true=W)                # W_V unknown: linearised, biased
    fit = F.fit_softmax_joint(X, Y, 4.0, lin["W_hat"], starts=2, seed=0, W_true=W)
    assert lin["rel_error"] > 0.1 and fit["rel_error"] < 1e-6 and fit["best_converged"]
    assert fit["value_map"] == "unknown" and fit["energy_0.99"] == 2 and fit["spread"] < 1e-6
    # the data fix the product only up to nothing here: W itself and W_V come back
    np.testing.assert_allclose(fit["W_hat"], W, atol=1e-5)
    np.testing.assert_allclose(fit["V_hat"], W_V, atol=1e-5)
    with pytest.raises(ValueError, match="Y: expected shape"):
        F.fit_softmax_joint(X, Y[:3], 4.0, lin["W_hat"])


def test_convergence_is_decided_by_first_order_optimality():
    # a residual orthogonal to the Jacobian's columns is stationary, whatever its size; a planted
    # non-stationary point (residual along a column) is not, and an exact fit (r = 0) is
    rng = np.random.default_rng(0)
    J = rng.standard_normal((20, 3))
    q, _ = np.linalg.qr(np.hstack([J, rng.standard_normal((20, 1))]))
    r_perp = q[:, 3] * 5.0                                                  # J^T r = 0 up to rounding
    assert F.converged(J, r_perp, y_norm=10.0)
    assert not F.converged(J, r_perp + 1e-3 * J[:, 0], y_norm=10.0)           # planted: gradient 1e-3 |J| |r|
    assert F.converged(J, np.zeros(20), y_norm=10.0)
    assert not F.converged(J, 1e-6 * J[:, 0], y_norm=10.0)                  # tiny but not stationary, |Y| = 10


def test_joint_fit_jacobian_matches_finite_differences(teacher):
    # the analytic Jacobian is what LM steps on: checked against central differences; a planted sign
    # error in either block (W or W_V) is caught by the same comparison
    W, W_V, _ = teacher
    X = A.sample_tokens(3, 4, 4, seed=5)
    theta = np.concatenate([W.reshape(-1), W_V.reshape(-1)])

    def res(t):
        return A.softmax_attention(X, t[:16].reshape(4, 4), t[16:].reshape(4, 4), 1.5).reshape(-1)

    fd = np.stack([(res(theta + 1e-6 * e) - res(theta - 1e-6 * e)) / 2e-6 for e in np.eye(32)], axis=1)
    J = F.joint_jacobian(X, W, W_V, 1.5)
    np.testing.assert_allclose(J, fd, atol=1e-7)
    for block in (slice(0, 16), slice(16, 32)):
        planted = J.copy()
        planted[:, block] *= -1
        assert np.abs(planted - fd).max() > 1e-2
