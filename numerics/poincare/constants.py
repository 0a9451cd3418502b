"""The Poincare constant of mu ~ exp(-beta F) on a box with reflecting ends, estimated by a discretised
generator, and lower bounds.

C_P = 1 / lambda_1 where lambda_1 is the spectral gap of -L, L f = Delta f - beta grad F . grad f,
i.e. the smallest nonzero eigenvalue of  -div(rho grad f) = lambda rho f,  rho = exp(-beta F), with
no-flux (Neumann) ends. Discretisation: cell-centred finite volumes; face weights rho(face)/h^2, mass
rho(centre). The symmetric form M^{-1/2} A M^{-1/2} has the exact null vector sqrt(rho). The scheme
is second order, so lambda_1(h) = lambda_1 + c h^2 + O(h^4): Richardson extrapolation over grid
doublings, refined until two successive extrapolants agree; their difference is the reported
discretisation error (an estimate, not a certificate). ``rayleigh_lower_mp`` evaluates the
test-function lower bound for the full-line measure by mpmath quadrature: a high-precision
*estimate* (mpmath.quad reports no error enclosure), not a certificate.

Window: ``gaussian_window`` sizes the box from the regulariser's Gaussian scale
sigma = 1/sqrt(beta lambda), not from where mu's mass sits: if F >= lambda/2 |theta|^2 + inf L and
L has oscillation <= osc on the whole space, then mu(|theta| > R) <= e^{beta osc} P(|N(0, sigma^2 I)| > R),
and R = sigma (sqrt(d) + sqrt(2 (beta osc + log(1/tol)))) makes that <= tol.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import mpmath
import numpy as np
import scipy.sparse as sps
from scipy.linalg import eigh_tridiagonal
from scipy.sparse.linalg import eigsh

from theory.errors import InvalidInput


@dataclass
class PoincareResult:
    """C_P of the truncated measure with its discretisation error estimate."""

    value: float                    # C_P = 1 / lambda_1 (Richardson extrapolated)
    error: float                    # estimated absolute error of value (discretisation)
    gap: float                      # lambda_1
    n: int                          # finest grid (points per axis)
    history: list = field(default_factory=list)   # [(n, lambda_1(n))]
    grid: Optional[tuple] = None    # 1-D: centres (n,); 2-D: (x (n,), y (n,))
    eigenfunction: Optional[np.ndarray] = None    # on the finest grid, normalised E_mu f = 0
    density: Optional[np.ndarray] = None          # mu on the finest grid, sums to 1
    converged: bool = True

    @property
    def rel_error(self) -> float:
        return self.error / self.value


def gaussian_window(beta: float, lam: float, osc: float, dim: int = 1, tol: float = 1e-12) -> float:
    """Half-width R of the centred box: mu(|theta| > R) <= tol given L's oscillation bound ``osc``."""
    if not (beta > 0 and lam > 0 and osc >= 0):
        raise InvalidInput(f"gaussian_window: need beta > 0, lambda > 0, osc >= 0; got {beta}, {lam}, {osc}")
    sigma = 1.0 / math.sqrt(beta * lam)
    return sigma * (math.sqrt(dim) + math.sqrt(2 * (beta * osc + math.log(1 / tol))))


def _check(beta, lo, hi):
    if not beta > 0 or not math.isfinite(beta):
        raise InvalidInput(f"poincare: beta must be a positive finite number, got {beta}")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidInput(f"poincare: window must be finite with lo < hi, got [{lo}, {hi}]")


def _gap_1d(F, beta, lo, hi, n):
    """lambda_1 on n cells, the eigenfunction and the cell masses."""
    h = (hi - lo) / n
    x = lo + h * (np.arange(n) + 0.5)                   # (n,) centres
    xf = lo + h * np.arange(1, n)                       # (n-1,) interior faces
    phi_c, phi_f = beta * np.asarray(F(x), float), beta * np.asarray(F(xf), float)
    if not (np.all(np.isfinite(phi_c)) and np.all(np.isfinite(phi_f))):
        raise InvalidInput("poincare_constant_1d: F is not finite on the window")
    shift = min(phi_c.min(), phi_f.min())
    # symmetric form: S_ii = (w_{i-1/2} + w_{i+1/2}) / (h^2 rho_i), S_i,i+1 = -w_{i+1/2} / (h^2 sqrt(rho_i rho_i+1))
    diag = np.zeros(n)
    diag[:-1] += np.exp(-(phi_f - phi_c[:-1]))
    diag[1:] += np.exp(-(phi_f - phi_c[1:]))
    off = -np.exp(-(phi_f - 0.5 * (phi_c[:-1] + phi_c[1:])))
    vals, vecs = eigh_tridiagonal(diag / h ** 2, off / h ** 2, select="i", select_range=(0, 1))
    rho = np.exp(-(phi_c - shift))
    mass = rho / rho.sum()
    f = vecs[:, 1] * np.exp(np.minimum((phi_c - shift) / 2, 700.0))   # psi / sqrt(rho)
    f -= np.sum(mass * f)
    f /= math.sqrt(np.sum(mass * f * f))
    rounding = 4 * np.finfo(float).eps * float(np.max(diag)) / h ** 2   # eigensolver: ~eps ||S||
    return vals[1], x, f, mass, rounding


def _richardson(gap_at: Callable[[int], tuple], n0: int, n_max: int, rtol: float):
    history, extrap, out = [], [], None
    n = n0
    while n <= n_max:
        out = gap_at(n)
        history.append((n, float(out[0])))
        if len(history) >= 2:
            (_, l1), (_, l2) = history[-2], history[-1]
            extrap.append((4 * l2 - l1) / 3)
        if len(extrap) >= 2 and abs(extrap[-1] - extrap[-2]) <= rtol * abs(extrap[-1]):
            break
        n *= 2
    converged = len(extrap) >= 2 and abs(extrap[-1] - extrap[-2]) <= rtol * abs(extrap[-1])
    if len(extrap) >= 2:
        gap, err_gap = extrap[-1], abs(extrap[-1] - extrap[-2])
    elif extrap:
        gap, err_gap = extrap[-1], abs(history[-1][1] - history[-2][1])
    else:
        gap, err_gap = history[-1][1], abs(history[-1][1])
    return gap, err_gap, history, out, converged


def poincare_constant_1d(F: Callable[[np.ndarray], np.ndarray], beta: float, lo: float, hi: float,
                         n0: int = 400, n_max: int = 51200, rtol: float = 1e-9) -> PoincareResult:
    """Poincare constant of exp(-beta F) restricted to [lo, hi] with reflecting ends.

    F: vectorised callable (n,) -> (n,). Grids n0, 2 n0, ... up to n_max, Richardson-extrapolated
    until two successive extrapolants agree to ``rtol`` (relative). ``error`` is that difference,
    propagated to C_P, plus the eigensolver's rounding (eps * ||S||).

    >>> r = poincare_constant_1d(lambda t: 0.5 * 2.0 * t**2, beta=3.0, lo=-8, hi=8)
    >>> abs(r.value - 1 / 6) < 1e-8
    True
    """
    _check(beta, lo, hi)
    gap, err_gap, history, (_, x, f, mass, rounding), converged = _richardson(
        lambda n: _gap_1d(F, beta, lo, hi, n), n0, n_max, rtol)
    if not gap > 0:
        raise InvalidInput(f"poincare_constant_1d: non-positive spectral gap {gap}; window or beta degenerate")
    n = history[-1][0]
    err_gap += rounding
    return PoincareResult(1 / gap, err_gap / gap ** 2, gap, n, history, (x,), f, mass, converged)


_CLIP = 300.0


def _exp(x):
    return np.exp(np.clip(x, -_CLIP, _CLIP))


def _gap_2d(F, beta, box, n):
    (lo1, hi1), (lo2, hi2) = box
    h1, h2 = (hi1 - lo1) / n, (hi2 - lo2) / n
    x = lo1 + h1 * (np.arange(n) + 0.5)
    y = lo2 + h2 * (np.arange(n) + 0.5)
    X, Y = np.meshgrid(x, y, indexing="ij")                          # (n, n)
    phi = beta * np.asarray(F(np.stack([X, Y], -1)), float)          # (n, n)
    fx = beta * np.asarray(F(np.stack(np.meshgrid(lo1 + h1 * np.arange(1, n), y, indexing="ij"), -1)), float)
    fy = beta * np.asarray(F(np.stack(np.meshgrid(x, lo2 + h2 * np.arange(1, n), indexing="ij"), -1)), float)
    if not all(np.all(np.isfinite(a)) for a in (phi, fx, fy)):
        raise InvalidInput("poincare_constant_2d: F is not finite on the box")
    idx = np.arange(n * n).reshape(n, n)
    rows, cols, vals = [], [], []
    diag = np.zeros((n, n))
    for face, (ia, ib), pa, pb, h in ((fx, (idx[:-1, :], idx[1:, :]), phi[:-1, :], phi[1:, :], h1),
                                      (fy, (idx[:, :-1], idx[:, 1:]), phi[:, :-1], phi[:, 1:], h2)):
        # exponents clipped at +-_CLIP: only cells whose weight ratio exceeds e^_CLIP are touched, they
        # carry no mass and decouple (huge diagonal), so the low spectrum is unaffected
        da, db = _exp(pa - face) / h ** 2, _exp(pb - face) / h ** 2
        if face is fx:
            diag[:-1, :] += da
            diag[1:, :] += db
        else:
            diag[:, :-1] += da
            diag[:, 1:] += db
        o = -_exp(0.5 * (pa + pb) - face) / h ** 2
        rows += [ia.ravel(), ib.ravel()]
        cols += [ib.ravel(), ia.ravel()]
        vals += [o.ravel(), o.ravel()]
    rows.append(idx.ravel())
    cols.append(idx.ravel())
    vals.append(diag.ravel())
    S = sps.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n * n, n * n))
    # shift-invert just below 0; a fixed start vector: ARPACK's default is random, which made the
    # last digits (and the tables' CSV) differ from run to run
    v0 = np.random.default_rng(0).standard_normal(n * n)
    ev, vec = eigsh(S, k=2, sigma=-1e-6, which="LM", v0=v0)
    order = np.argsort(ev)
    ev, vec = ev[order], vec[:, order]
    rho = np.exp(-(phi - phi.min())).ravel()
    mass = rho / rho.sum()
    f = vec[:, 1] * np.exp(np.minimum((phi - phi.min()).ravel() / 2, 700.0))   # psi / sqrt(rho)
    f -= np.sum(mass * f)
    f /= math.sqrt(np.sum(mass * f * f))
    return ev[1], (x, y), f.reshape(n, n), mass.reshape(n, n)


def poincare_constant_2d(F: Callable[[np.ndarray], np.ndarray], beta: float,
                         box: Sequence[tuple[float, float]], n0: int = 48, n_max: int = 384,
                         rtol: float = 1e-4) -> PoincareResult:
    """2-D analogue on box [(lo1, hi1), (lo2, hi2)]; F maps (..., 2) -> (...). Sparse shift-invert eigsh."""
    if len(box) != 2:
        raise InvalidInput(f"poincare_constant_2d: box must have two intervals, got {box}")
    for lo, hi in box:
        _check(beta, lo, hi)
    gap, err_gap, history, (_, grid, f, mass), converged = _richardson(
        lambda n: _gap_2d(F, beta, box, n), n0, n_max, rtol)
    if not gap > 0:
        raise InvalidInput(f"poincare_constant_2d: non-positive spectral gap {gap}")
    return PoincareResult(1 / gap, err_gap / gap ** 2, gap, history[-1][0], history, grid, f, mass, converged)


# -- lower bounds from test functions ----------------------------------------------------------------

def rayleigh_lower_grid(res: PoincareResult, span: str = "quadratic") -> float:
    """max over f in span of Var_mu(f) / E_mu |grad f|^2, with mu the discretised measure.

    span: "linear" (theta_k), "quadratic" (all monomials of degree <= 2). A generalized symmetric
    eigenproblem Cov c = r G c on the span's Gram matrices.
    """
    if res.density is None:
        raise InvalidInput("rayleigh_lower_grid: result carries no density")
    pts = np.stack(np.meshgrid(*res.grid, indexing="ij"), -1) if len(res.grid) == 2 else res.grid[0][:, None]
    w = res.density.reshape(-1)
    P = pts.reshape(-1, pts.shape[-1])                         # (N, d)
    d = P.shape[1]
    funcs, grads = [], []
    for k in range(d):
        funcs.append(P[:, k])
        grads.append(np.eye(d)[k][None, :].repeat(len(P), 0))
    if span == "quadratic":
        for i in range(d):
            for j in range(i, d):
                funcs.append(P[:, i] * P[:, j])
                g = np.zeros_like(P)
                g[:, i] += P[:, j]
                g[:, j] += P[:, i]
                grads.append(g)
    Phi = np.stack(funcs, 1)                                    # (N, m)
    Phi = Phi - w @ Phi
    Cov = Phi.T @ (w[:, None] * Phi)
    Gr = np.stack(grads, 1)                                     # (N, m, d)
    G = np.einsum("n,nad,nbd->ab", w, Gr, Gr)
    from scipy.linalg import eigh

    return float(eigh(Cov, G, eigvals_only=True)[-1])


def rayleigh_lower_mp(F_mp: Callable, beta: float, lo: float, hi: float, f_coeffs: np.ndarray,
                      dps: int = 30) -> mpmath.mpf:
    """Quadrature estimate of the lower bound C_P(mu on R) >= Var_mu(f) / E_mu f'^2 for the test
    function f = Chebyshev series ``f_coeffs`` on [lo, hi], extended by constants outside (f is in H^1(R)).

    Integrals over R in mpmath (tanh-sinh on pieces, ``dps`` digits); mu is the full-line measure,
    so the exact quotient is a lower bound for the untruncated C_P and checks the window as well.
    mpmath.quad gives no error enclosure, so the returned number is an estimate of that quotient
    (accurate to many digits in practice), not a certified bound: never use it to certify a violation.
    """
    cheb = np.polynomial.Chebyshev([float(c) for c in f_coeffs], domain=[lo, hi])
    cf = [mpmath.mpf(float(c)) for c in cheb.convert(kind=np.polynomial.Polynomial, domain=[lo, hi],
                                                        window=[lo, hi]).coef]
    cd = [k * cf[k] for k in range(1, len(cf))]

    def poly(c, t):
        return mpmath.polyval(c[::-1], t)

    with mpmath.workdps(dps):
        lo_m, hi_m = mpmath.mpf(lo), mpmath.mpf(hi)
        f_lo, f_hi = poly(cf, lo_m), poly(cf, hi_m)
        grid = [lo_m + (hi_m - lo_m) * k / 16 for k in range(17)]
        shift = min(F_mp(t) for t in grid)

        def w(t):
            return mpmath.exp(-beta * (F_mp(t) - shift))

        def integral(g_in, g_out_lo, g_out_hi):
            inner = mpmath.quad(lambda t: w(t) * g_in(t), grid)
            left = mpmath.quad(lambda t: w(t) * g_out_lo, [-mpmath.inf, lo_m])
            right = mpmath.quad(lambda t: w(t) * g_out_hi, [hi_m, mpmath.inf])
            return inner + left + right

        Z = integral(lambda t: 1, 1, 1)
        m1 = integral(lambda t: poly(cf, t), f_lo, f_hi) / Z
        m2 = integral(lambda t: poly(cf, t) ** 2, f_lo ** 2, f_hi ** 2) / Z
        dirichlet = mpmath.quad(lambda t: w(t) * poly(cd, t) ** 2, grid) / Z
        return (m2 - m1 ** 2) / dirichlet


def chebyshev_fit(res: PoincareResult, lo: float, hi: float, degree: int = 40) -> np.ndarray:
    """Chebyshev coefficients of the discretised 1-D eigenfunction on [lo, hi]."""
    return np.polynomial.Chebyshev.fit(res.grid[0], res.eigenfunction, degree, domain=[lo, hi]).coef
