"""Rigorous brackets of the 1-D Poincare constant by Muckenhoupt's criterion, in arb ball arithmetic.

mu = e^{-V} dx / Z on a finite interval (a, b) (here the window [-R, R] the discretised generator
of :mod:`numerics.poincare.constants` works on, with V = beta F). For any split point m in (a, b) let

    B+(m) = sup_{m < x < b} mu([x, b)) * int_m^x dt / p(t),    B-(m) = sup_{a < x < m} mu((a, x]) * int_x^m dt / p(t),

p = e^{-V} / Z the density (Z cancels: mu([x, b)) int_m^x 1/p = int_x^b e^{-V} * int_m^x e^{V}). Then

    max(mu((a, m]) B+(m), mu([m, b)) B-(m))  <=  C_P  <=  4 max(B+(m), B-(m)).

Upper: Var f <= E (f - f(m))^2, and on each side of m Muckenhoupt's weighted Hardy inequality
(B. Muckenhoupt, Hardy's inequality with weights, Studia Math. 44 (1972); constant <= 4B) bounds
E[(f - f(m))^2; x > m] by 4 B+ E[f'^2; x > m]. Lower: the test function f(t) = int_m^{min(t, x0)} 1/p
for t > m (0 below m) has E f'^2 = int_m^{x0} 1/p and Var f >= E f^2 (1 - mu(f > 0)) >= E f^2 mu((a, m]),
E f^2 >= (int_m^{x0} 1/p)^2 mu([x0, b)). At a median m both factors are 1/2: this is the criterion
B/2 <= C_P <= 4B of Bobkov and Goetze (J. Funct. Anal. 163, 1999) in the form that holds for any m,
so the median need not be located exactly (we take the cell edge nearest it).

Rigour: the cell integrals int e^{-V} and int e^{V} are arb balls from ``flint.acb.integral``
(certified Gauss-Legendre with error bounds; V must be holomorphic near the real cell, as the loss
families' closed forms are). On a cell [x_i, x_{i+1}] right of m, mu([x, b)) <= mu([x_i, b)) and
int_m^x e^V <= int_m^{x_{i+1}} e^V (monotone factors), so the sup is bounded above cell by cell; the
products at the grid points bound it below. The float ends are rounded outward.
"""
from __future__ import annotations

from typing import Callable

from flint import acb, arb

from numerics.poincare.losses import AttentionScalar, GaussianFamily, LossFamily
from theory.errors import InvalidInput

_UP, _DOWN = 1 + 2.0 ** -48, 1 - 2.0 ** -48


def potential_acb(fam: LossFamily, beta: float, lam: float) -> Callable[[acb], acb]:
    """V = beta (L + lam/2 s^2) as a holomorphic acb function, from the family's exact float data
    (gauss1: L = 0; attn1: the softmax readout of numerics.poincare.losses.AttentionScalar)."""
    B, Lm = arb(beta), arb(lam)
    if isinstance(fam, GaussianFamily) and fam.dim == 1:
        return lambda s: B * (Lm * s * s / 2)
    if not (isinstance(fam, AttentionScalar) and fam.dim == 1):
        raise InvalidInput(f"potential_acb: one-dimensional families only (gauss1, attn1), got {fam.name}")
    data = list(zip(fam.c.tolist(), fam.u.tolist(), fam.y.tolist()))
    v0, n = arb(fam.v0), len(data)

    def V(s):
        tot = acb(0)
        for ci, ui, yi in data:
            e = [(s * cj).exp() for cj in ci]
            Z = sum(e[1:], e[0])
            g = sum((ej * uj for ej, uj in zip(e[1:], ui[1:])), e[0] * ui[0]) / Z
            tot += (v0 * g - yi) ** 2
        return B * (tot / (2 * n) + Lm * s * s / 2)
    return V


def _integral(V, a: float, b: float, sign: int, shift: float) -> arb:
    """int_a^b exp(sign (V - shift)) as an arb ball (certified by flint.acb.integral)."""
    val = acb.integral(lambda z, analytic: (sign * (V(z) - shift)).exp(), a, b, rel_tol=1e-6).real
    if not val.is_finite():
        raise InvalidInput("muckenhoupt_bracket: a cell integral did not converge; use more cells")
    return val


def _sweep(neg: list, pos: list) -> tuple:
    """Split index j (edge nearest the median), masses, and per cell the lower / upper candidates
    of the sups B+ (cells j..N-1) and B- (cells 0..j-1) as floats rounded outward."""
    N = len(neg)
    Z = sum(neg[1:], neg[0])
    acc, j = arb(0), 1
    for k in range(1, N):
        acc += neg[k - 1]
        j = k
        if float(acc.mid()) >= float(Z.mid()) / 2:
            break
    left_mass = sum(neg[1:j], neg[0]) / Z                    # mu((a, m])
    prefix, suffix = [arb(0)] * (N + 1), [arb(0)] * (N + 1)    # sums, never differences: no cancellation
    for k in range(N):
        prefix[k + 1] = prefix[k] + neg[k]                   # int_a^{x_k} e^{-V}
        suffix[N - 1 - k] = suffix[N - k] + neg[N - 1 - k]   # int_{x_k}^b e^{-V}
    lo_c, hi_c = [0.0] * N, [0.0] * N
    H = arb(0)                                               # int_m^{x_i} e^{V}
    for i in range(j, N):                                    # x in [x_i, x_{i+1}]: G(x) <= G(x_i), H(x) <= H(x_{i+1})
        H_next = H + pos[i]
        lo_c[i], hi_c[i] = _down(suffix[i] * H), _up(suffix[i] * H_next)
        H = H_next
    H = arb(0)                                               # int_{x_{i+1}}^m e^{V}
    for i in range(j - 1, -1, -1):
        H_prev = H + pos[i]
        lo_c[i], hi_c[i] = _down(prefix[i + 1] * H), _up(prefix[i + 1] * H_prev)
        H = H_prev
    return j, left_mass, lo_c, hi_c


def muckenhoupt_bracket(V: Callable[[acb], acb], lo: float, hi: float, cells: int = 24, rounds: int = 12,
                        target: float = 1.5) -> dict:
    """Certified [lower, upper] bracket of C_P of e^{-V} on [lo, hi] (see the module docstring).

    Starts from ``cells`` equal cells and bisects, for up to ``rounds`` rounds, every cell whose
    upper candidate exceeds ``target`` times the largest lower candidate (steep cells in the tails,
    where the monotone-factor bound is loose). Returns ``lower``, ``upper`` (floats rounded outward),
    ``B_plus``, ``B_minus`` (lower and upper bounds of each sup), the split point ``m``, the mass
    left of it, the number of cells and the method.

    >>> r = muckenhoupt_bracket(lambda s: s * s / 2, -12.0, 12.0)   # N(0, 1) on [-12, 12]: C_P = 1
    >>> r["lower"] <= 1.0 <= r["upper"], r["upper"] / r["lower"] < 12
    (True, True)
    """
    if not (lo < hi and cells >= 4):
        raise InvalidInput(f"muckenhoupt_bracket: need lo < hi and cells >= 4, got [{lo}, {hi}], {cells}")
    edges = [lo + (hi - lo) * k / cells for k in range(cells)] + [hi]
    shift = min(V(acb(x)).real.mid() for x in edges)          # any constant: it cancels exactly
    neg = [_integral(V, a, b, -1, shift) for a, b in zip(edges[:-1], edges[1:])]
    pos = [_integral(V, a, b, 1, shift) for a, b in zip(edges[:-1], edges[1:])]
    for _ in range(rounds):
        j, left_mass, lo_c, hi_c = _sweep(neg, pos)
        best = max(lo_c)
        split = [i for i in range(len(neg)) if hi_c[i] > target * best]
        if not split:
            break
        for i in reversed(split):                            # bisect, right to left so indices stay valid
            a, b = edges[i], edges[i + 1]
            mid = a + (b - a) / 2
            edges[i + 1:i + 1] = [mid]
            neg[i:i + 1] = [_integral(V, a, mid, -1, shift), _integral(V, mid, b, -1, shift)]
            pos[i:i + 1] = [_integral(V, a, mid, 1, shift), _integral(V, mid, b, 1, shift)]
    j, left_mass, lo_c, hi_c = _sweep(neg, pos)
    bp, bm = (max(lo_c[j:]), max(hi_c[j:])), (max(lo_c[:j]), max(hi_c[:j]))
    lower = max(_down(left_mass * arb(bp[0])), _down((1 - left_mass) * arb(bm[0])))
    upper = _up(4 * arb(max(bp[1], bm[1])))
    return {"lower": lower, "upper": upper, "B_plus": bp, "B_minus": bm, "m": edges[j],
            "left_mass": float(left_mass.mid()), "cells": len(neg),
            "method": ("Muckenhoupt: max(mu((a,m]) B+, mu([m,b)) B-) <= C_P <= 4 max(B+, B-) on the window; cell "
                       "integrals by flint.acb.integral (arb balls), sup bounded by monotone factors per cell, "
                       f"{len(neg)} cells after bisecting the loose ones")}


def _down(x: arb) -> float:
    """A float <= every point of the ball x (0 if the ball reaches below 0: the bounds are >= 0)."""
    v = float(x.lower()) * _DOWN
    return v if v > 0 else 0.0


def _up(x: arb) -> float:
    """A float >= every point of the ball x (x >= 0 here)."""
    return float(x.upper()) * _UP
