"""Attention students of kernel rank r (GD, batched over seeds), the linear-attention deficiency
bound, and the interpolation ladder between a static token mixer and attention.

Risk convention: mean over inputs of ||Y_student - Y_teacher||_F^2 (one input = X_b, (T, d)).
Linear attention, W_V fixed: risk(W) = vec(W - W*)^T H vec(W - W*) with H = D^T D / B, so
    mu tail_r(W*) <= min_{rank W <= r} risk(W) <= lambda_max(H) tail_r(W*),
mu = lambda_min(H), tail_r(W*) = sum_{i>r} sigma_i(W*)^2 (Eckart-Young on ||W - W*||_F).
Ladder rung lambda: Y = ((1 - lambda) M_static + lambda A(X)) X W_V, A(X) softmax or linear
attention with kernel rank r*; the best static M_hat (T x T) is fitted by least squares.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Sequence

import mpmath
import numpy as np
import torch

from numerics.rank.linear import certify_tail_sum, energy_rank, entropy_rank, random_orthogonal
from numerics.device import single_thread
from numerics.rank.attention import as_tokens, linear_attention, softmax_attention
from theory.errors import InvalidInput
from theory.rank import is_positive_definite

KINDS = ("linear", "softmax")


def _design(X: np.ndarray, W_V: np.ndarray) -> np.ndarray:
    """D[(b, t, e), (a, c)] = X[b,t,a] (G W_V)[b,c,e] / T / sqrt(B): risk = ||D vec(Delta)||^2."""
    B, T, d = X.shape
    GV = X.transpose(0, 2, 1) @ X @ W_V                                       # (B, d, d_v)
    return np.einsum("bta,bce->bteac", X, GV).reshape(-1, d * d) / T / math.sqrt(B)


def linear_deficiency_bound(X: Any, W_star: Any, W_V: Any, r: int) -> dict:
    """Float path: mu, lambda_max of H and the sandwich [mu tail, lambda_max tail]."""
    X = as_tokens(X)
    W_star = np.asarray(W_star, dtype=np.float64)
    D = _design(X, np.asarray(W_V, dtype=np.float64))
    ev = np.linalg.eigvalsh(D.T @ D)
    tail = float(np.sum(np.linalg.svd(W_star, compute_uv=False)[r:] ** 2))
    return {"mu": float(ev[0]), "lam_max": float(ev[-1]), "tail": tail,
            "lower": float(ev[0]) * tail, "upper": float(ev[-1]) * tail}


def _dyadic(A: np.ndarray) -> tuple[np.ndarray, int]:
    """A = A_int / 2^s exactly (floats are dyadic rationals); A_int an object array of Python ints."""
    fr = [Fraction(float(x)) for x in np.ravel(A)]
    s = max((f.denominator.bit_length() - 1 for f in fr), default=0)
    return np.array([f.numerator << (s - f.denominator.bit_length() + 1) for f in fr],
                    dtype=object).reshape(np.shape(A)), s


def mpf_fraction(x: Any) -> Fraction:
    """The exact rational value of a finite mpmath mpf (mantissa * 2^exponent)."""
    man, exp = mpmath.mpf(x).man_exp
    return Fraction(int(man)) * (Fraction(2) ** int(exp))


def float_below(q: Fraction) -> float:
    """The largest float <= q (rounding toward -infinity, so a lower bound stays one)."""
    f = float(q)
    return math.nextafter(f, -math.inf) if Fraction(f) > q else f


def linear_deficiency_bound_exact(X: Any, W_star: Any, W_V: Any, r: int, margin: float = 1e-6) -> dict:
    """Certified lower bound mu_lo * tail_lo on min_{rank W <= r} risk(W), for the rationals the
    float inputs represent: H - mu_lo I is checked positive definite exactly (Fraction LDL^T on H
    built in exact integer arithmetic), so mu_lo <= lambda_min(H); tail_lo is the lower end of the
    60-digit interval enclosure of tail_r(W*), converted to a Fraction exactly; their product is
    exact (``lower_exact``) and ``lower`` is it rounded toward -infinity."""
    X = as_tokens(X)
    fast = linear_deficiency_bound(X, W_star, W_V, r)
    B, T, d = X.shape
    Xi, sx = _dyadic(X)
    Vi, sv = _dyadic(np.asarray(W_V, dtype=np.float64))
    H = np.zeros((d * d, d * d), dtype=object)
    for x in Xi:                                                     # x (T, d) ints
        GV = x.T.dot(x).dot(Vi)                                      # (d, d_v) ints
        D = np.multiply.outer(x, GV).transpose(0, 3, 1, 2).reshape(-1, d * d)   # (T d_v, d^2)
        H += D.T.dot(D)
    denom = (1 << (2 * (3 * sx + sv))) * B * T * T
    mu_lo = Fraction(max(fast["mu"] * (1 - margin), 0.0))        # margin < 0 must fail (tests)
    certified = is_positive_definite([[Fraction(int(h), denom) - (mu_lo if i == j else 0) for j, h in enumerate(row)]
                                      for i, row in enumerate(H)])
    tail = certify_tail_sum(np.asarray(W_star, dtype=np.float64), np.eye(d), r)
    tail_lo = max(mpf_fraction(tail["tail_lo"]), Fraction(0))
    lower = mu_lo * tail_lo if certified else Fraction(0)
    return {"mu_lo": float_below(mu_lo) if certified else 0.0, "certified": certified,
            "tail_lo": float_below(tail_lo), "lower_exact": lower, "lower": float_below(lower)}


# -- students ----------------------------------------------------------------------------------


def _forward(X: torch.Tensor, W: torch.Tensor, W_V: torch.Tensor, kind: str, beta: float) -> torch.Tensor:
    """X (B, T, d), W (S, d, d) -> Y (S, B, T, d_v)."""
    S = torch.einsum("bta,sac,buc->sbtu", X, W, X)                            # (S, B, T, T)
    if kind == "linear":
        A = S / X.shape[1]
    elif kind == "softmax":
        A = torch.softmax(beta * S / math.sqrt(X.shape[2]), dim=-1)
    else:
        raise InvalidInput(f"kind {kind!r} not in {KINDS}")
    return A @ (X @ W_V)


def train_kernel_students(*args: Any, **kw: Any) -> dict:
    """GD students (see :func:`_train_kernel_students`), run on one intra-op thread."""
    with single_thread():
        return _train_kernel_students(*args, **kw)


def _train_kernel_students(X: Any, Y: Any, W_V: Any, r: int, seeds: Sequence[int], kind: str = "linear",
                          beta: float = 1.0, steps: int = 2000, lr: float = 0.05, init_scale: float = 1e-2,
                          X_test: Optional[Any] = None, Y_test: Optional[Any] = None) -> dict:
    """Plain GD on U V^T (U, V: (S, d, r)) with W_V fixed to the teacher's, all seeds at once.
    Returns per seed: train risk curve (S, K) at log-spaced steps, final test risk, spectrum of
    U V^T, final gradient norm and the relative risk change over the last tenth of the steps."""
    X, Y = torch.as_tensor(as_tokens(X)), torch.as_tensor(np.asarray(Y, dtype=np.float64))
    Xt = X if X_test is None else torch.as_tensor(as_tokens(X_test))
    Yt = Y if Y_test is None else torch.as_tensor(np.asarray(Y_test, dtype=np.float64))
    WV = torch.as_tensor(np.asarray(W_V, dtype=np.float64))
    d = X.shape[2]
    if r < 1 or not seeds:
        raise InvalidInput(f"train_kernel_students: need r >= 1 and seeds, got r={r}, seeds={seeds}")
    us, vs = [], []
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed))
        us.append(torch.randn(d, r, generator=g, dtype=torch.float64) * init_scale / math.sqrt(d))
        vs.append(torch.randn(d, r, generator=g, dtype=torch.float64) * init_scale / math.sqrt(d))
    U, V = torch.stack(us).requires_grad_(), torch.stack(vs).requires_grad_()
    record = sorted({0, steps, *np.unique(np.rint(np.logspace(0, math.log10(max(steps, 1)), 25))).astype(int).tolist()})
    curve, tenth = [], None
    for step in range(steps + 1):
        risk = ((_forward(X, U @ V.transpose(1, 2), WV, kind, beta) - Y) ** 2).sum(dim=(2, 3)).mean(dim=1)
        if step == int(0.9 * steps):
            tenth = risk.detach().clone()
        if step in record:
            curve.append(risk.detach().clone())
        gU, gV = torch.autograd.grad(risk.sum(), (U, V))
        if step < steps:
            with torch.no_grad():
                U -= lr * gU
                V -= lr * gV
    with torch.no_grad():
        W = U @ V.transpose(1, 2)
        test = ((_forward(Xt, W, WV, kind, beta) - Yt) ** 2).sum(dim=(2, 3)).mean(dim=1)
        final = curve[-1]
    return {"steps": np.array(record), "train_risk": torch.stack(curve, 1).numpy(), "test_risk": test.numpy(),
            "sigma": torch.linalg.svdvals(W).numpy(), "W": W.numpy(), "U": U.detach().numpy(),
            "V": V.detach().numpy(),
            "grad_norm": torch.sqrt((gU**2).sum(dim=(1, 2)) + (gV**2).sum(dim=(1, 2))).numpy(),
            "rel_change_last_tenth": (torch.abs(tenth - final) / final.clamp_min(1e-300)).numpy()}


def student_risk_exact(X: Any, W_star: Any, W_V: Any, W_student: Any, kind: str = "linear",
                       beta: float = 1.0, dps: int = 50, factors: Optional[tuple] = None) -> Any:
    """Risk of one student: exact Fraction for linear attention, 50-digit mpmath for softmax.
    ``factors`` = (U, V) (d, r) floats: the linear student is the exact product U V^T (of rank
    <= r, which the rounded float W_student need not be) and W_student is ignored."""
    X = as_tokens(X)
    if kind == "linear":
        Ws = [[Fraction(v) for v in row] for row in np.asarray(W_star, dtype=np.float64)]
        if factors is not None:
            Uq, Vq_ = ([[Fraction(v) for v in row] for row in np.asarray(F, dtype=np.float64)] for F in factors)
            Wq = [[sum(a * b for a, b in zip(u, v)) for v in Vq_] for u in Uq]
        else:
            Wq = [[Fraction(v) for v in row] for row in np.asarray(W_student, dtype=np.float64)]
        Dq = [a - b for ra, rb in zip(Wq, Ws) for a, b in zip(ra, rb)]
        Xq = [[[Fraction(v) for v in row] for row in x] for x in X]
        Vq = [[Fraction(v) for v in row] for row in np.asarray(W_V, dtype=np.float64)]
        B, T, d = X.shape
        total = Fraction(0)
        for x in Xq:
            G = [[sum(x[t][c] * x[t][f] for t in range(T)) for f in range(d)] for c in range(d)]
            XD = [[sum(x[t][a] * Dq[a * d + c] for a in range(d)) for c in range(d)] for t in range(T)]
            XDG = [[sum(XD[t][c] * G[c][f] for c in range(d)) for f in range(d)] for t in range(T)]
            for t in range(T):
                for e in range(len(Vq[0])):
                    total += (sum(XDG[t][f] * Vq[f][e] for f in range(d)) / T) ** 2
        return total / B
    with mpmath.workdps(dps):
        total = mpmath.mpf(0)
        for x in X:
            xm = mpmath.matrix(x.tolist())
            out = []
            for W in (W_student, W_star):
                S = xm * mpmath.matrix(np.asarray(W).tolist()) * xm.T * mpmath.mpf(beta) / mpmath.sqrt(X.shape[2])
                E = mpmath.matrix(S.rows, S.cols)
                for i in range(S.rows):
                    top = max(S[i, j] for j in range(S.cols))
                    z = sum(mpmath.exp(S[i, j] - top) for j in range(S.cols))
                    for j in range(S.cols):
                        E[i, j] = mpmath.exp(S[i, j] - top) / z
                out.append(E * xm * mpmath.matrix(np.asarray(W_V).tolist()))
            diff = out[0] - out[1]
            total += sum(diff[i, j] ** 2 for i in range(diff.rows) for j in range(diff.cols))
        return total / X.shape[0]


# -- the interpolation ladder ------------------------------------------------------------------------


def static_mixer(T: int, r_static: int, seed: int) -> np.ndarray:
    """M_static (T, T) of rank r_static with unit singular values."""
    rng = np.random.default_rng(seed)
    return random_orthogonal(T, rng)[:, :r_static] @ random_orthogonal(T, rng)[:, :r_static].T


def ladder_data(X: Any, lam: float, M_static: Any, W: Any, W_V: Any, kind: str, beta: float = 1.0) -> np.ndarray:
    if not 0 <= lam <= 1:
        raise InvalidInput(f"lam: must lie in [0, 1], got {lam}")
    X = as_tokens(X)
    att = softmax_attention(X, W, W_V, beta) if kind == "softmax" else linear_attention(X, W, W_V)
    return (1 - lam) * (np.asarray(M_static) @ X @ W_V) + lam * att


def ladder_rung(X: Any, Y: Any, W_V: Any) -> dict:
    """Best static token mixer M_hat = argmin sum_b ||M X_b W_V - Y_b||^2 and its rank estimates."""
    X = as_tokens(X)
    Yt = np.asarray(Y, dtype=np.float64) @ np.linalg.pinv(W_V)                # (B, T, d) ~ M X
    num = np.einsum("btd,bud->tu", Yt, X)                                      # sum Y X^T
    den = np.einsum("btd,bud->tu", X, X)                                       # sum X X^T
    M_hat = np.linalg.solve(den.T, num.T).T
    resid = np.sum((M_hat @ X - Yt) ** 2) / max(np.sum((Yt - Yt.mean(axis=0)) ** 2), 1e-300)
    s = np.linalg.svd(M_hat, compute_uv=False)
    return {"M_hat": M_hat, "sigma": s, "energy_0.9": energy_rank(s, 0.9), "energy_0.99": energy_rank(s, 0.99),
            "entropy": entropy_rank(s), "unexplained": float(resid)}


def ladder_rung_exact(X: Any, Y: Any, W_V: Any, dps: int = 50) -> dict:
    """The static fit and its singular values at ``dps`` digits (energy ranks decided there)."""
    X = as_tokens(X)
    Yt = np.asarray(Y, dtype=np.float64) @ np.linalg.pinv(W_V)
    with mpmath.workdps(dps):
        num = mpmath.matrix(np.einsum("btd,bud->tu", Yt, X).tolist())
        den = mpmath.matrix(np.einsum("btd,bud->tu", X, X).tolist())
        M_hat = num * mpmath.inverse(den)
        s = sorted(mpmath.svd_r(M_hat, compute_uv=False), reverse=True)
        return {"sigma": [float(x) for x in s], "energy_0.99": energy_rank([float(x) for x in s], 0.99)}
