"""Attention-native rank: teachers, data-only kernel recovery, students, the interpolation ladder.

Shapes: X (B, T, d) tokens, W (d, d) query-key kernel W_Q W_K^T of rank r*, W_V (d, d_v).
    linear  attention  Y = (X W X^T / T) X W_V
    softmax attention  Y = softmax(beta X W X^T / sqrt(d)) X W_V        (row-wise softmax)
Data-only recovery (docs/theory.md §3):
  * linear, W_V known: Y W_V^+ = X W G / T with G = X^T X is linear in W  -> least squares.
  * linear, W_V unknown: Y[t, e] = sum X[t,a] G[c,f] Theta[(a,c),(f,e)] / T with
    Theta = vec(W) vec(W_V)^T (rank one) -> least squares for Theta, W = top singular vector.
  * softmax, W_V known, T <= d: A = Y W_V^{-1} X^+ exactly; centred log A = beta/sqrt(d) X W C^T,
    C = X - 1 xbar^T -> least squares (breaks when A saturates: log of tiny entries + noise).
  * softmax, any T: first-order expansion A ~ (11^T + beta/sqrt(d) (S - rowmean S)) / T, exact
    only as beta -> 0 (the linearisation bias grows with beta).
  * softmax, any T, W_V known or unknown: the nonlinear least-squares fits of W (and W_V) to the
    softmax model's output live in :mod:`numerics.rank.fits`.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

import mpmath
import numpy as np

from numerics.rank.linear import energy_rank, entropy_rank, gavish_donoho_threshold, random_orthogonal, spectrum
from theory.errors import InvalidInput
from theory.rank import exact_rank, is_positive_definite


def as_tokens(X: Any) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 3 or 0 in X.shape or not np.all(np.isfinite(X)):
        raise InvalidInput(f"X: expected finite tokens of shape (B, T, d), got shape {X.shape}")
    return X


def kernel_teacher(d: int, r_star: int, shape: str, seed: int, d_v: Optional[int] = None):
    """W = W_Q W_K^T with sigma(W) = spectrum(r*, shape) * sqrt(d); W_V orthogonal (d, d_v)."""
    if not (1 <= r_star <= d):
        raise InvalidInput(f"kernel_teacher: need 1 <= r_star <= d, got r_star={r_star}, d={d}")
    rng = np.random.default_rng(seed)
    Uq, Uk = random_orthogonal(d, rng), random_orthogonal(d, rng)
    W = (Uq[:, :r_star] * spectrum(r_star, shape)) @ Uk[:, :r_star].T
    W_V = random_orthogonal(d, rng)[:, : (d_v or d)]
    return W, W_V


def sample_tokens(batch: int, T: int, d: int, seed: int) -> np.ndarray:
    """X (B, T, d) with i.i.d. N(0, 1) entries."""
    if min(batch, T, d) < 1:
        raise InvalidInput(f"sample_tokens: need batch, T, d >= 1, got {batch}, {T}, {d}")
    return np.random.default_rng(seed).standard_normal((batch, T, d))


def linear_attention(X: Any, W: Any, W_V: Any) -> np.ndarray:
    X = as_tokens(X)
    return (X @ W @ X.transpose(0, 2, 1)) @ X @ W_V / X.shape[1]


def softmax_attention(X: Any, W: Any, W_V: Any, beta: float = 1.0) -> np.ndarray:
    X = as_tokens(X)
    S = beta * (X @ W @ X.transpose(0, 2, 1)) / math.sqrt(X.shape[2])        # (B, T, T)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    return (A / A.sum(axis=-1, keepdims=True)) @ X @ W_V


# -- data-only recovery ----------------------------------------------------------------------------


def rank_report(W_hat: np.ndarray, W: Optional[np.ndarray], noise_entry: Optional[float]) -> dict:
    s = np.linalg.svd(W_hat, compute_uv=False)
    out = {"sigma": s, "energy_0.9": energy_rank(s, 0.9), "energy_0.99": energy_rank(s, 0.99),
           "entropy": entropy_rank(s), "entropy_sigma": entropy_rank(s, 1),
           "threshold": None if noise_entry is None else int(np.sum(s > gavish_donoho_threshold(noise_entry, W_hat.shape)))}
    if W is not None:                                 # error up to scale and sign
        out["rel_error"] = kernel_error(W_hat, W)
    return out


def _lstsq(D: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """Least squares with the residual noise std and the mean coefficient variance factor."""
    coef, *_ = np.linalg.lstsq(D, y, rcond=None)
    dof = max(D.shape[0] - D.shape[1], 1)
    noise = math.sqrt(float(np.sum((y - D @ coef) ** 2)) / (dof * (y.shape[1] if y.ndim > 1 else 1)))
    return coef, noise, np.linalg.svd(D, compute_uv=False)


def _kernel_given_value_map(X: np.ndarray, G: np.ndarray, Y: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Least squares for W in Y = X W G V / T by its normal equations (d^2 x d^2):
    N[(a,c),(p,q)] = sum_b G[a,p] (G V V^T G)[c,q] / T^2,  rhs[a,c] = sum_b (X^T Y V^T G)[a,c] / T."""
    T, d = X.shape[1], X.shape[2]
    GV = G @ V                                                               # (B, d, d_v)
    N = np.einsum("bap,bcq->acpq", G, GV @ GV.transpose(0, 2, 1)).reshape(d * d, d * d) / T**2
    rhs = np.einsum("bta,bte,bce->ac", X, Y, GV).reshape(-1) / T
    return np.linalg.solve(N, rhs).reshape(d, d)


def recover_linear_kernel(X: Any, Y: Any, W_V: Optional[Any] = None, W_true: Optional[Any] = None,
                          alternations: int = 500) -> dict:
    """Recover W from linear-attention data; with W_V known by direct regression (d^2 unknowns),
    without W_V through the rank-one Theta = vec(W) vec(W_V)^T (d^3 d_v unknowns)."""
    X = as_tokens(X)
    B, T, d = X.shape
    Y = np.asarray(Y, dtype=np.float64)
    G = X.transpose(0, 2, 1) @ X                                            # (B, d, d)
    if W_V is not None:
        Yt = Y @ np.linalg.pinv(W_V)                                         # (B, T, d) = X W G / T
        # vec_row(X W G) = (X kron G^T) vec_row(W): design (B T d, d^2)
        D = np.einsum("bta,bcf->btfac", X, G).reshape(B * T * d, d * d) / T
        coef, noise, sv = _lstsq(D, Yt.reshape(-1))
        W_hat = coef.reshape(d, d)
        entry = noise * math.sqrt(float(np.mean(1 / sv**2))) if sv.min() > 0 else None
        return {**rank_report(W_hat, W_true, entry), "W_hat": W_hat, "design_cond": float(sv.max() / sv.min())}
    # Without W_V: G is symmetric, so only sym_{c<->f} Theta is identified; its mode-a unfolding
    # (a) x (c, f, e) has the column space of W, and an alternating refit gives W itself.
    d_v = Y.shape[2]
    Phi = np.einsum("bta,bcf->btacf", X, G).reshape(B * T, d**3) / T          # (B T, d^3)
    coef, _, _ = _lstsq(Phi, Y.reshape(B * T, d_v))                           # (d^3, d_v)
    unfold = coef.reshape(d, d * d * d_v)                                     # (a) x (c, f, e)
    u, s, _ = np.linalg.svd(coef.reshape(d * d, d * d_v))
    W_hat = (u[:, 0] * s[0]).reshape(d, d)
    for _ in range(alternations):                                             # refit W_V, then W
        Z = (X @ W_hat @ G).reshape(B * T, d) / T
        V_hat = np.linalg.solve(Z.T @ Z, Z.T @ Y.reshape(B * T, d_v))          # (d, d_v)
        W_new = _kernel_given_value_map(X, G, Y, V_hat)
        done = np.linalg.norm(W_new - W_hat) <= 1e-14 * np.linalg.norm(W_new)
        W_hat = W_new
        if done:
            break
    return {**rank_report(W_hat, W_true, None), "W_hat": W_hat,
            "unfolding_energy_0.99": energy_rank(np.linalg.svd(unfold, compute_uv=False), 0.99)}


def recover_softmax_kernel(X: Any, Y: Any, W_V: Optional[Any], beta: float = 1.0, W_true: Optional[Any] = None,
                           method: str = "auto") -> dict:
    """Recover W from softmax-attention data with W_V known: 'invert' (needs T <= d) or
    'linearise' (any T, exact only as beta -> 0); 'auto' picks invert when T <= d.
    W_V = None: the linearisation Y ~ 1 xbar^T W_V + beta/(T sqrt d) X W C^T X W_V, regressed for
    (W_V, Theta = vec(W) vec(W_V)^T) jointly; W = top left singular vector of Theta."""
    X = as_tokens(X)
    B, T, d = X.shape
    if beta <= 0:
        raise InvalidInput(f"beta: must be > 0, got {beta}")
    if W_V is None:
        Y = np.asarray(Y, dtype=np.float64)
        d_v = Y.shape[2]
        if B * T < d + d**3:
            raise InvalidInput(f"recover_softmax_kernel: without W_V need B T >= d + d^3 = {d + d**3}, got {B * T}")
        H = (X - X.mean(axis=1, keepdims=True)).transpose(0, 2, 1) @ X             # (B, d, d) = C^T X
        mean_part = np.repeat(X.mean(axis=1, keepdims=True), T, axis=1).reshape(B * T, d)
        Phi = np.einsum("bta,bcf->btacf", X, H).reshape(B * T, d**3) * beta / (T * math.sqrt(d))
        coef, *_ = np.linalg.lstsq(np.hstack([mean_part, Phi]), Y.reshape(B * T, d_v), rcond=None)
        u, sv, _ = np.linalg.svd(coef[d:].reshape(d * d, d * d_v))
        W_hat = (u[:, 0] * sv[0]).reshape(d, d)
        return {**rank_report(W_hat, None if W_true is None else np.asarray(W_true), None), "W_hat": W_hat,
                "method": "linearise-free", "clipped_fraction": 0.0}
    method = ("invert" if T <= d else "linearise") if method == "auto" else method
    Yt = np.asarray(Y, dtype=np.float64) @ np.linalg.pinv(W_V)                 # (B, T, d) = A X
    C = X - X.mean(axis=1, keepdims=True)                                      # (B, T, d)
    if method == "invert":
        if T > d:
            raise InvalidInput(f"recover_softmax_kernel: 'invert' needs T <= d, got T={T}, d={d}")
        A = Yt @ np.linalg.pinv(X)                                             # (B, T, T)
        clipped = float(np.mean(A <= 0))
        logA = np.log(np.maximum(A, np.finfo(np.float64).tiny))
        target = (logA - logA.mean(axis=-1, keepdims=True)) * math.sqrt(d) / beta   # X W C^T
        D = np.einsum("bia,bjc->bijac", X, C).reshape(B * T * T, d * d)
    elif method == "linearise":
        target = (Yt - X.mean(axis=1, keepdims=True)) * T * math.sqrt(d) / beta   # ~ X W C^T X
        H = C.transpose(0, 2, 1) @ X                                            # (B, d, d)
        D = np.einsum("bta,bcf->btfac", X, H).reshape(B * T * d, d * d)
        clipped = 0.0
    else:
        raise InvalidInput(f"method {method!r} not in ('auto', 'invert', 'linearise')")
    coef, noise, sv = _lstsq(D, target.reshape(-1))
    W_hat = coef.reshape(d, d)
    return {**rank_report(W_hat, None if W_true is None else np.asarray(W_true), None),
            "W_hat": W_hat, "method": method, "clipped_fraction": clipped}


def recover_linear_kernel_exact(X: Any, W: Any, W_V: Any) -> dict:
    """Exact rational regression of W from noiseless linear-attention data (W_V known and square
    invertible): returns the exact W_hat, whether it equals W, and its exact rank."""
    Xq = [[[Fraction(v) for v in row] for row in x] for x in as_tokens(X)]
    Wq = [[Fraction(v) for v in row] for row in np.asarray(W, dtype=np.float64)]
    d, T = len(Wq), len(Xq[0])
    rows, rhs = [], []
    for x in Xq:                                    # Y W_V^{-1} = X W G / T, exactly
        G = [[sum(x[t][c] * x[t][f] for t in range(T)) for f in range(d)] for c in range(d)]
        XW = [[sum(x[t][a] * Wq[a][c] for a in range(d)) for c in range(d)] for t in range(T)]
        for t in range(T):
            for f in range(d):
                rows.append([x[t][a] * G[c][f] / T for a in range(d) for c in range(d)])
                rhs.append(sum(XW[t][c] * G[c][f] for c in range(d)) / T)
    n = d * d                                        # normal equations, solved exactly
    N = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * y for r, y in zip(rows, rhs)) for i in range(n)]
    if not is_positive_definite(N):
        return {"identifiable": False}
    sol = _solve_exact(N, b)
    W_hat = [sol[i * d:(i + 1) * d] for i in range(d)]
    return {"identifiable": True, "equal": W_hat == Wq, "rank": exact_rank(W_hat), "W_hat": W_hat}


def recover_linear_kernel_unknown_exact(X: Any, W: Any, W_V: Any) -> dict:
    """Exact rational regression of linear attention *without* the value map, on noiseless data
    Y = X W G W_V / T (G = X^T X): only the part of Theta = vec(W) vec(W_V)^T symmetric in (c, f) is
    identified (G is symmetric), S[a, c, f, e] = (W[a, c] W_V[f, e] + W[a, f] W_V[c, e]) / 2, and it is
    solved for exactly (normal equations over the rationals; not identifiable when they are singular).
    The mode-a unfolding of S, rows a and columns (c, f, e), has the column space of W when no row of
    W_V is zero (its columns c = f are W[:, c] W_V[c, e]), so its exact rank is rank(W): the kernel's
    rank read from the data alone. Returns ``identifiable``, ``equal`` (S recovered exactly), ``rank``
    (of the unfolding), ``rank_W`` (of W), both exact."""
    Xq = [[[Fraction(v) for v in row] for row in x] for x in as_tokens(X)]
    Wq = [[Fraction(v) for v in row] for row in np.asarray(W, dtype=np.float64)]
    Vq = [[Fraction(v) for v in row] for row in np.asarray(W_V, dtype=np.float64)]
    d, T, d_v = len(Wq), len(Xq[0]), len(Vq[0])
    pairs = [(c, f) for c in range(d) for f in range(c, d)]
    rows, rhs = [], []
    for x in Xq:
        G = [[sum(x[t][c] * x[t][f] for t in range(T)) for f in range(d)] for c in range(d)]
        for t in range(T):
            rows.append([x[t][a] * G[c][f] * (1 if c == f else 2) / T for a in range(d) for c, f in pairs])
            rhs.append([sum(x[t][a] * Wq[a][c] * G[c][f] * Vq[f][e] for a in range(d) for c in range(d)
                            for f in range(d)) / T for e in range(d_v)])
    n = len(rows[0])
    N = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    if not is_positive_definite(N):
        return {"identifiable": False}
    sols = [_solve_exact(N, [sum(r[i] * y[e] for r, y in zip(rows, rhs)) for i in range(n)]) for e in range(d_v)]
    S = {(a, c, f, e): sols[e][a * len(pairs) + k] for e in range(d_v) for a in range(d) for k, (c, f) in enumerate(pairs)}
    want = {(a, c, f, e): (Wq[a][c] * Vq[f][e] + Wq[a][f] * Vq[c][e]) / 2 for (a, c, f, e) in S}
    unfold = [[S[(a, min(c, f), max(c, f), e)] for c in range(d) for f in range(d) for e in range(d_v)]
              for a in range(d)]
    return {"identifiable": True, "equal": S == want, "rank": exact_rank(unfold), "rank_W": exact_rank(Wq)}


def _solve_exact(N: list, b: list) -> list:
    A = [row[:] + [y] for row, y in zip(N, b)]
    n = len(A)
    for k in range(n):
        p = next(i for i in range(k, n) if A[i][k] != 0)
        A[k], A[p] = A[p], A[k]
        for i in range(n):
            if i != k and A[i][k] != 0:
                f = A[i][k] / A[k][k]
                A[i] = [u - f * v for u, v in zip(A[i], A[k])]
    return [A[i][n] / A[i][i] for i in range(n)]


def recover_softmax_kernel_exact(X: Any, W: Any, W_V: Any, beta: float, dps: int = 50) -> dict:
    """The inversion route (T <= d) at ``dps`` digits on noiseless data: the relative error of the
    recovered W shows whether a float64 failure is identifiability or precision."""
    X = as_tokens(X)
    B, T, d = X.shape
    if T > d:
        raise InvalidInput(f"recover_softmax_kernel_exact: needs T <= d, got T={T}, d={d}")
    with mpmath.workdps(dps):
        Wm = mpmath.matrix(np.asarray(W).tolist())
        rows, rhs = [], []
        for x in X:
            xm = mpmath.matrix(x.tolist())
            S = xm * Wm * xm.T * mpmath.mpf(beta) / mpmath.sqrt(d)
            xbar = [sum(xm[t, c] for t in range(T)) / T for c in range(d)]
            for i in range(T):                        # log-softmax, centred: recovered from A exactly
                logits = [S[i, j] for j in range(T)]
                lse = mpmath.log(sum(mpmath.exp(v) for v in logits))
                logA = [v - lse for v in logits]
                mean = sum(logA) / T
                for j in range(T):
                    rows.append([xm[i, a] * (xm[j, c] - xbar[c]) for a in range(d) for c in range(d)])
                    rhs.append((logA[j] - mean) * mpmath.sqrt(d) / beta)
        D, y = mpmath.matrix(rows), mpmath.matrix(rhs)
        coef = mpmath.lu_solve(D.T * D, D.T * y)
        W_hat = np.array([[float(coef[i * d + j]) for j in range(d)] for i in range(d)])
        err = mpmath.norm(coef - mpmath.matrix([Wm[i, j] for i in range(d) for j in range(d)])) / mpmath.norm(Wm)
    return {"rel_error": float(err), "W_hat": W_hat, "dps": dps}


def kernel_error(W_hat: Any, W: Any) -> float:
    """Relative error of a recovered kernel up to scale and sign: min_{+-} || W_hat/|W_hat| -+ W/|W| ||_F."""
    W_hat, W = np.asarray(W_hat, dtype=np.float64), np.asarray(W, dtype=np.float64)
    a, b = W_hat / max(np.linalg.norm(W_hat), 1e-300), W / np.linalg.norm(W)
    return float(min(np.linalg.norm(a - b), np.linalg.norm(a + b)))
