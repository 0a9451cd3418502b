"""Nonlinear least-squares fits of a softmax attention teacher (docs/theory.md §3), the estimator that
separates a regression's bias (linearisation) from identifiability.

    fit_softmax_kernel(X, Y, W_V, beta, W_init, ...)   W_V known:   min_W     ||softmax(c X W X^T) X W_V - Y||^2
    fit_softmax_joint(X, Y, beta, W_init, ...)         W_V unknown: min_(W,V) ||softmax(c X W X^T) X V - Y||^2

c = beta / sqrt(d). Both run scipy's MINPACK Levenberg-Marquardt with the analytic Jacobian from
several seeded starts and report the best fit (lowest cost), how many starts converged and the
``spread``: the largest kernel error (up to scale and sign) between converged starts whose cost is
within 1e-6 (relative, plus 0.5 (ZERO_TOL ||Y||)^2 for exact fits) of the best; ``stuck``
counts converged starts above that cost (other stationary points). A large spread at equal cost is an identifiability failure: the
data do not single out W.

Convergence is decided by first-order optimality, not by which MINPACK tolerance stopped the run
(a start that stops on its evaluation budget while already at a stationary point counts, one that
stops on a tolerance far from it does not): a start has converged iff

    ||J^T r||_2 <= OPT_TOL ||J||_F max(||r||_2, ZERO_TOL ||Y||_F),        OPT_TOL = 1e-6, ZERO_TOL = 1e-8,

i.e. the residual is orthogonal to the Jacobian's columns to 1e-6 (relative), the residual being
counted at least as ZERO_TOL of the data when the fit is exact. With a gradient criterion the count
does not depend on how many evaluations a start happened to use near the budget; a start still
descending when its budget ends counts as not converged, so the count is reported with its budget.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from numerics.rank.attention import as_tokens, kernel_error, rank_report
from theory.errors import InvalidInput

OPT_TOL = 1e-6
ZERO_TOL = 1e-8
MAX_NFEV = 1000          # evaluation budget per start (LM with an analytic Jacobian: rarely near it)


def _attention(X: np.ndarray, w: np.ndarray, c: float) -> np.ndarray:
    d = X.shape[2]
    S = c * (X @ w.reshape(d, d) @ X.transpose(0, 2, 1))                       # (B, T, T)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def _kernel_jacobian(X: np.ndarray, Att: np.ndarray, Z: np.ndarray, c: float) -> np.ndarray:
    """dY[b,i,e]/dW[a,f] = c x_ia sum_j A_ij (x_jf - sum_k A_ik x_kf) Z_je, Z = X V: (B T d_v, d^2)."""
    d = X.shape[2]
    M = np.einsum("bij,bijf,bje->bife", Att, X[:, None, :, :] - (Att @ X)[:, :, None, :], Z)
    return c * np.einsum("bia,bife->bieaf", X, M).reshape(-1, d * d)


def joint_jacobian(X: Any, W: Any, V: Any, beta: float) -> np.ndarray:
    """d vec(softmax(c X W X^T) X V) / d (vec W, vec V): (B T d_v, d^2 + d d_v), row-major vecs."""
    X = as_tokens(X)
    d, V = X.shape[2], np.asarray(V, dtype=np.float64)
    c = beta / math.sqrt(d)
    Att = _attention(X, np.asarray(W, dtype=np.float64).reshape(-1), c)
    J_w = _kernel_jacobian(X, Att, X @ V, c)                                      # (B T d_v, d^2)
    J_v = np.einsum("bia,ef->bieaf", Att @ X, np.eye(V.shape[1])).reshape(-1, d * V.shape[1])  # dY[b,i,e]/dV[a,f]
    return np.hstack([J_w, J_v])


def converged(J: np.ndarray, r: np.ndarray, y_norm: float, opt_tol: float = OPT_TOL) -> bool:
    """The stated first-order criterion (module docstring) at residual ``r`` with Jacobian ``J``."""
    g = float(np.linalg.norm(J.T @ r))
    scale = float(np.linalg.norm(J)) * max(float(np.linalg.norm(r)), ZERO_TOL * y_norm)
    return g <= opt_tol * scale


def _summary(fits: list, flags: list[bool], d: int, W_true: Optional[Any], y_norm: float, extra: dict) -> dict:
    i_best = min(range(len(fits)), key=lambda i: fits[i].cost)
    best = fits[i_best]
    W_hat = best.x[: d * d].reshape(d, d)
    cut = best.cost * (1 + 1e-6) + 0.5 * (ZERO_TOL * y_norm) ** 2          # equal cost, exact fits included
    tied = [f for f, ok in zip(fits, flags) if ok and f.cost <= cut]
    spread = max((kernel_error(f.x[: d * d], best.x[: d * d]) for f in tied), default=float("nan"))
    stuck = sum(ok and f.cost > cut for f, ok in zip(fits, flags))
    rep = rank_report(W_hat, None if W_true is None else np.asarray(W_true), None)
    return {**rep, "W_hat": W_hat, "converged": int(sum(flags)), "starts": len(fits), "cost": float(best.cost),
            "optimality": float(best.optimality), "best_converged": bool(flags[i_best]),
            "spread": float(spread), "stuck": int(stuck), "nfev": int(sum(f.nfev for f in fits)), **extra}


def fit_softmax_kernel(X: Any, Y: Any, W_V: Any, beta: float, W_init: Any, starts: int = 3, seed: int = 0,
                       W_true: Optional[Any] = None, max_nfev: int = MAX_NFEV) -> dict:
    """W_V known: min_W ||softmax(c X W X^T) X W_V - Y||^2 from ``W_init`` and ``starts - 1`` random
    starts (seeded). Returns the best fit, ``converged`` (the first-order criterion of the module
    docstring), ``stuck`` (converged starts at a higher cost: other stationary points) and ``spread``."""
    from scipy.optimize import least_squares

    X = as_tokens(X)
    d = X.shape[2]
    Y = np.asarray(Y, dtype=np.float64)
    c = beta / math.sqrt(d)
    Z = X @ np.asarray(W_V, dtype=np.float64)                                   # (B, T, d_v)
    W_init = np.asarray(W_init, dtype=np.float64)

    def residual(w: np.ndarray) -> np.ndarray:
        return (_attention(X, w, c) @ Z - Y).reshape(-1)

    def jacobian(w: np.ndarray) -> np.ndarray:
        return _kernel_jacobian(X, _attention(X, w, c), Z, c)

    rng = np.random.default_rng(seed)
    scale = max(float(np.linalg.norm(W_init)), 1.0) / d
    inits = [W_init] + [rng.standard_normal((d, d)) * scale for _ in range(max(starts, 1) - 1)]
    fits = [least_squares(residual, w0.reshape(-1), jac=jacobian, method="lm", x_scale="jac", max_nfev=max_nfev,
                          ftol=1e-12, xtol=1e-12, gtol=1e-12) for w0 in inits]
    y_norm = float(np.linalg.norm(Y))
    flags = [converged(jacobian(f.x), f.fun, y_norm) for f in fits]
    return _summary(fits, flags, d, W_true, y_norm, {"value_map": "known"})


def _value_map(X: np.ndarray, Y: np.ndarray, W: np.ndarray, c: float) -> tuple[np.ndarray, float]:
    """W_V solved by least squares given W (variable projection), and the cost 0.5 ||r||^2 there."""
    AX = (_attention(X, W.reshape(-1), c) @ X).reshape(-1, X.shape[2])          # (B T, d)
    Yf = Y.reshape(AX.shape[0], -1)
    V, *_ = np.linalg.lstsq(AX, Yf, rcond=None)
    return V, 0.5 * float(np.sum((AX @ V - Yf) ** 2))


def fit_softmax_joint(X: Any, Y: Any, beta: float, W_init: Any, starts: int = 3, seed: int = 0,
                      W_true: Optional[Any] = None, max_nfev: int = MAX_NFEV) -> dict:
    """W_V unknown: min over (W, V) of ||softmax(c X W X^T) X V - Y||^2, jointly.

    Starts: ``W_init``'s direction (e.g. the linearised regression's, whose scale is not identified
    apart from W_V's) at the best of 9 scales (1/10 .. 10 x sqrt(d) / ||W_init||) and ``starts - 1``
    random W (seeded), each with V solved by least squares given W. The kernel is judged up to scale
    and sign (:func:`numerics.rank.attention.kernel_error`); the returned ``V_hat`` is the best fit's."""
    from scipy.optimize import least_squares

    X = as_tokens(X)
    d = X.shape[2]
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 3 or Y.shape[:2] != X.shape[:2]:
        raise InvalidInput(f"Y: expected shape (B, T, d_v) with (B, T) = {X.shape[:2]}, got {Y.shape}")
    d_v = Y.shape[2]
    c = beta / math.sqrt(d)

    def split(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return theta[: d * d], theta[d * d:].reshape(d, d_v)

    def residual(theta: np.ndarray) -> np.ndarray:
        w, V = split(theta)
        return (_attention(X, w, c) @ X @ V - Y).reshape(-1)

    def jacobian(theta: np.ndarray) -> np.ndarray:
        w, V = split(theta)
        return joint_jacobian(X, w.reshape(d, d), V, beta)

    W_init = np.asarray(W_init, dtype=np.float64)
    unit = W_init / max(float(np.linalg.norm(W_init)), 1e-300) * math.sqrt(d)
    W0 = min((unit * s for s in np.logspace(-1, 1, 9)), key=lambda W: _value_map(X, Y, W, c)[1])
    rng = np.random.default_rng(seed)
    inits = [W0] + [rng.standard_normal((d, d)) for _ in range(max(starts, 1) - 1)]
    fits = []
    for W in inits:
        V, _ = _value_map(X, Y, W, c)
        fits.append(least_squares(residual, np.concatenate([W.reshape(-1), V.reshape(-1)]), jac=jacobian,
                                  method="lm", x_scale="jac", max_nfev=max_nfev, ftol=1e-12, xtol=1e-12,
                                  gtol=1e-12))
    y_norm = float(np.linalg.norm(Y))
    flags = [converged(jacobian(f.x), f.fun, y_norm) for f in fits]
    best = min(fits, key=lambda f: f.cost)
    return _summary(fits, flags, d, W_true, y_norm, {"value_map": "unknown", "V_hat": split(best.x)[1]})
