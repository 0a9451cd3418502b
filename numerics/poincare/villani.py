"""Villani's condition on the loss families: lambda_V(beta) estimates and interval-certified failures.

The seed's claim (theory.poincare.VILLANI, a conjecture here): V = beta |grad F|^2 / 2 - Delta F -> +oo
for every lambda > 0. The identities of theory.poincare reduce it to one number per (family, beta):

* gauss, attn1: bounded derivatives, V >= beta (lam |s| - M1)^2 / 2 - M2 - lam -> oo: it holds for every
  lambda > 0. That is a proof (theory.poincare.villani_attn1), so ``certified`` is True.
* lora2: V = r^2 [beta (L'(p)^2 + lam^2)/2 - L''(p)] + ..., so it fails for lam < lambda_V(beta) =
  sqrt(max(0, sup_p 2 L''(p)/beta - L'(p)^2)).
* attn2: it fails iff beta (lam + m2(s0))^2 < m2''(s0) at a critical point s0 of m2.

``lambda_V`` is an *estimate*: a sup over a grid (|p| <= 12, |s| <= 30), refined near the maximiser;
its ``interval`` is [grid value, refined value + |refined - grid|] (an estimate of the grid error, not
an enclosure; the window is not covered either). A *failure* is certified by interval arithmetic
(mpmath.iv, closed-form derivatives, exact float data): at the witness p the r^2 coefficient
beta (lam^2 + L'^2)/2 - L'' has an enclosure entirely below 0 (lora2); for attn2 m2' changes sign on
an interval S (enclosures of m2' at its ends), so a critical point s0 lies in S, and the enclosure of
beta (lam + m2(S))^2 - m2''(S) lies below 0. ``certified`` is True only then (or for the proofs above).
"""
from __future__ import annotations

import heapq
import math
from contextlib import contextmanager
from functools import lru_cache

import mpmath
import numpy as np
import torch

from numerics.poincare.losses import AttentionScalar, GaussianFamily, LoRADirectional, LossFamily, family

_P_GRID, _S_GRID = np.linspace(-12, 12, 48001), np.linspace(-30, 30, 60001)
_IV_DPS = 30


# -- derivative tables (independent of beta: computed once per family and data seed) ------------------

def _lora_derivs(fam: LoRADirectional, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """L'(p), L''(p) (each (N,)) by torch autograd."""
    pt = torch.as_tensor(p).requires_grad_(True)
    L = fam.loss_p(pt)
    (d1,) = torch.autograd.grad(L.sum(), pt, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), pt)
    return d1.detach().numpy(), d2.numpy()


def _attn2_moments(fam: AttentionScalar, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """m2(s), m2'(s), m2''(s) (each (N,)) by torch autograd."""
    st = torch.as_tensor(s).requires_grad_(True)
    m2 = (fam.g(st) ** 2).mean(-1)
    (d1,) = torch.autograd.grad(m2.sum(), st, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), st)
    return m2.detach().numpy(), d1.detach().numpy(), d2.numpy()


@lru_cache(maxsize=64)
def _table(name: str, seed: int) -> tuple:
    fam = family(name, seed)
    if isinstance(fam, LoRADirectional):
        return _lora_derivs(fam, _P_GRID)
    return _attn2_moments(fam, _S_GRID)


def _refine_lora(fam: LoRADirectional, beta: float, p0: float) -> tuple[float, float]:
    h = _P_GRID[1] - _P_GRID[0]
    p = np.linspace(p0 - h, p0 + h, 201)
    d1, d2 = _lora_derivs(fam, p)
    K = 2 * d2 / beta - d1 ** 2
    i = int(np.argmax(K))
    return float(K[i]), float(p[i])


def lambda_v(fam: LossFamily, beta: float) -> dict:
    """lambda_V(beta) (estimate), its grid-error interval, the witness (p or s0) and the method."""
    if isinstance(fam, LoRADirectional):
        d1, d2 = _table(fam.name, fam.seed)
        K = 2 * d2 / beta - d1 ** 2                                     # (N,)
        i = int(np.argmax(K))
        K_fine, p = _refine_lora(fam, beta, float(_P_GRID[i]))
        grid, fine = math.sqrt(max(0.0, float(K[i]))), math.sqrt(max(0.0, K_fine, float(K[i])))
        return {"lambda_V": fine, "interval": (grid, fine + (fine - grid)), "witness": p,
                "method": "sup of 2L''/beta - L'^2 on a grid |p| <= 12 (h = 5e-4), refined near the argmax"}
    if isinstance(fam, AttentionScalar) and fam.dim == 2:
        m2, d1, d2 = _table(fam.name, fam.seed)
        crit = np.nonzero((d1[:-1] < 0) & (d1[1:] >= 0))[0]              # local minima of m2
        best, where, spread = -math.inf, None, 0.0
        for i in crit:
            t = d1[i] / (d1[i] - d1[i + 1])                              # linear root of m2' in the cell
            s0 = float(_S_GRID[i] + t * (_S_GRID[i + 1] - _S_GRID[i]))
            m, _, dd = (float(x[0]) for x in _attn2_moments(fam, np.array([s0])))
            val = math.sqrt(max(dd, 0.0) / beta) - m
            coarse = math.sqrt(max(float(d2[i]), 0.0) / beta) - float(m2[i])
            if val > best:
                best, where, spread = val, s0, abs(val - coarse)
        lv = max(0.0, best)
        return {"lambda_V": lv, "interval": (max(0.0, lv - spread), lv + spread), "witness": where,
                "method": "local minima s0 of m2 on a grid |s| <= 30 (h = 1e-3), root of m2' interpolated"}
    return {"lambda_V": 0.0, "interval": (0.0, 0.0), "witness": None,
            "method": "proved: bounded derivatives, V >= beta (lam|s| - M1)^2/2 - M2 - lam (theory.poincare)"}


# -- interval enclosures (mpmath.iv; the data are exact floats) ---------------------------------------

@contextmanager
def _iv_precision(dps: int = _IV_DPS):
    """mpmath.iv at ``dps`` digits inside the block, restored after (precision belongs to a scope)."""
    iv = mpmath.iv
    old = iv.prec
    iv.dps = dps
    try:
        yield iv
    finally:
        iv.prec = old


def _tanh(z):
    return 1 - 2 / (mpmath.iv.exp(2 * z) + 1)


def lora_coefficient_iv(fam: LoRADirectional, beta: float, lam: float, p: float):
    """Enclosure of beta (lam^2 + L'(p)^2)/2 - L''(p): r_i = sum_k a_k tanh(z_ik) - y_i, z = z0 + p dz,
    L' = mean r_i r_i', L'' = mean (r_i'^2 + r_i r_i''), r_i' = sum a dz sech^2, r_i'' = -2 sum a dz^2 tanh sech^2."""
    with _iv_precision() as iv:
        P = iv.mpf(p)
        d1, d2 = iv.mpf(0), iv.mpf(0)
        for z0i, dzi, yi in zip(fam.z0.tolist(), fam.dz.tolist(), fam.y.tolist()):
            r, r1, r2 = iv.mpf(-yi), iv.mpf(0), iv.mpf(0)
            for ak, zk, dk in zip(fam.a.tolist(), z0i, dzi):
                A, D = iv.mpf(ak), iv.mpf(dk)     # never a float product: a_k dz_k would round
                t = _tanh(iv.mpf(zk) + P * D)
                sech2 = 1 - t * t
                r, r1, r2 = r + A * t, r1 + A * D * sech2, r2 - 2 * A * D * D * t * sech2
            d1, d2 = d1 + r * r1, d2 + r1 * r1 + r * r2
        d1, d2 = d1 / fam.n, d2 / fam.n
        return iv.mpf(beta) * (iv.mpf(lam) ** 2 + d1 * d1) / 2 - d2


def attn2_moments_iv(fam: AttentionScalar, s) -> tuple:
    """Enclosures of m2, m2', m2'' on the interval s: g = E_a u, g' = E_a[(c - cbar)(u - ubar)],
    g'' = E_a[(c - cbar)^2 (u - ubar)] (theory.poincare.softmax_readout_derivatives), m2 = mean g^2,
    m2' = 2 mean g g', m2'' = 2 mean (g'^2 + g g''). The softmax shift is a float constant (it cancels)."""
    iv = mpmath.iv
    S = iv.mpf(s)
    mid = float(S.mid)
    m, m1, m2 = iv.mpf(0), iv.mpf(0), iv.mpf(0)
    for ci, ui in zip(fam.c.tolist(), fam.u.tolist()):
        shift = max(mid * cj for cj in ci)
        e = [iv.exp(S * cj - shift) for cj in ci]
        Z = sum(e[1:], e[0])
        a = [ej / Z for ej in e]
        cb = sum((aj * cj for aj, cj in zip(a, ci)), iv.mpf(0))
        g = sum((aj * uj for aj, uj in zip(a, ui)), iv.mpf(0))
        g1 = sum((aj * (cj - cb) * (uj - g) for aj, cj, uj in zip(a, ci, ui)), iv.mpf(0))
        g2 = sum((aj * (cj - cb) ** 2 * (uj - g) for aj, cj, uj in zip(a, ci, ui)), iv.mpf(0))
        m, m1, m2 = m + g * g, m1 + 2 * g * g1, m2 + 2 * (g1 * g1 + g * g2)
    return m / fam.n, m1 / fam.n, m2 / fam.n


def _attn2_certify(fam: AttentionScalar, beta: float, lam: float, s0: float) -> tuple[bool, list]:
    with _iv_precision() as iv:
        for delta in (1e-7, 1e-6, 1e-5, 1e-4):
            d = delta * (1 + abs(s0))
            lo, hi = attn2_moments_iv(fam, s0 - d)[1], attn2_moments_iv(fam, s0 + d)[1]
            if not (lo.b < 0 < hi.a):
                continue                                  # no certified sign change of m2' yet
            m, _, dd = attn2_moments_iv(fam, [s0 - d, s0 + d])
            coef = iv.mpf(beta) * (lam + m) ** 2 - dd
            return bool(coef.b < 0), [float(coef.a), float(coef.b)]
    return False, []


def villani_check(fam: LossFamily, beta: float, lam: float, certify: bool = True) -> dict:
    """Villani's condition at (beta, lam): ``holds`` True / False / None (lam inside the grid-error
    interval of lambda_V), ``certified`` (a proof, or an interval enclosure of a failure), lambda_V
    with its interval, the witness, the method, and the coefficient's enclosure where one was computed.
    ``certify=False`` skips the interval arithmetic (a failure is then an estimate)."""
    lv = lambda_v(fam, beta)
    proved = isinstance(fam, GaussianFamily) or (isinstance(fam, AttentionScalar) and fam.dim == 1)
    if proved:
        return {"holds": True, "certified": True, **lv}
    lo, hi = lv["interval"]
    if lam > hi:
        return {"holds": True, "certified": False, **lv}
    if lam >= lo:
        return {"holds": None, "certified": False, **lv}
    out = {"holds": False, "certified": False, **lv}
    if not certify or lv["witness"] is None:
        return out
    if isinstance(fam, LoRADirectional):
        c = lora_coefficient_iv(fam, beta, lam, lv["witness"])
        out["certified"], out["coefficient"] = bool(c.b < 0), [float(c.a), float(c.b)]
        out["method"] += "; failure enclosed in interval arithmetic (mpmath.iv) at the witness p"
    else:
        out["certified"], out["coefficient"] = _attn2_certify(fam, beta, lam, lv["witness"])
        out["method"] += "; m2' sign change and beta (lam + m2)^2 - m2'' < 0 enclosed (mpmath.iv)"
    return out


def villani_check_exact(fam: LossFamily, beta: float, lam: float) -> dict:
    """The certifying path (interval arithmetic for every failure)."""
    return villani_check(fam, beta, lam, certify=True)


# -- a certified bracket of lambda_V(beta) for lora2 (python-flint arb balls) -------------------------

def _lora_derivs_arb(fam: LoRADirectional, P):
    """Enclosures of L'(p), L''(p) for every p in the arb ball P (closed forms of lora_coefficient_iv)."""
    from flint import arb

    d1, d2 = arb(0), arb(0)
    for z0i, dzi, yi in zip(fam.z0.tolist(), fam.dz.tolist(), fam.y.tolist()):
        r, r1, r2 = arb(-yi), arb(0), arb(0)
        for ak, zk, dk in zip(fam.a.tolist(), z0i, dzi):
            A, D = arb(ak), arb(dk)
            t = (arb(zk) + P * D).tanh()
            s2 = 1 - t * t
            r, r1, r2 = r + A * t, r1 + A * D * s2, r2 - 2 * A * D * D * t * s2
        d1, d2 = d1 + r * r1, d2 + r1 * r1 + r * r2
    return d1 / fam.n, d2 / fam.n


def _lora_tail(fam: LoRADirectional, beta: float, P: float) -> float:
    """An upper bound of K = 2 L''/beta - L'^2 <= 2 |L''| / beta for all |p| >= P: |r| <= |y| + |a|_1,
    |r'| <= sum |a dz| sech^2 z, |r''| <= 2 sum |a| dz^2 sech^2 z, sech^2 z <= min(1, 4 e^{-2|z|}) with
    |z| >= P |dz| - |z0| (arb, rounded up): 2 / beta times :func:`_lora_d2_tail`."""
    from flint import arb

    return float((2 * _lora_d2_tail(fam, P) / arb(beta)).upper()) * (1 + 2.0 ** -48)


def lambda_v_certified(fam: LossFamily, beta: float, witness=None, max_evals: int = 2000,
                       rtol: float = 1e-6) -> dict | None:
    """lora2: a certified bracket of lambda_V(beta) = sqrt(max(0, sup_p 2 L''(p)/beta - L'(p)^2)).

    Lower end: K at the ``witness`` p (a point ball). Upper end: branch and bound over arb balls
    covering |p| <= P (best first: the ball with the largest enclosure of K is bisected until that
    enclosure is within ``rtol`` of the best point value, or ``max_evals`` evaluations are spent), and the
    decay bound of :func:`_lora_tail` beyond P. None for the other families (attn2's threshold is an
    estimate here; gauss and attn1 have lambda_V = 0 by proof).
    """
    if not isinstance(fam, LoRADirectional):
        return None
    from flint import arb

    def K(P):
        d1, d2 = _lora_derivs_arb(fam, P)
        return 2 * d2 / arb(beta) - d1 * d1

    adz, az0 = np.abs(fam.dz), np.abs(fam.z0)
    live = adz > 0
    P = float(np.max((az0[live] + 20.0) / adz[live]))            # beyond P: sech^2 <= 4 e^{-40}
    tail = _lora_tail(fam, beta, P)
    p0 = lambda_v(fam, beta)["witness"] if witness is None else witness
    best = float(K(arb(p0)).lower())

    def enclose(a, b):
        return float(K(arb((a + b) / 2, (b - a) / 2 * (1 + 2.0 ** -40))).upper()) * (1 + 2.0 ** -48) + 2.0 ** -1000

    heap, evals = [(-enclose(-P, P), -P, P)], 1               # best first: the ball with the largest enclosure
    while evals < max_evals:
        neg_hi, a, b = heap[0]
        if -neg_hi <= max(best, 0.0) + rtol * max(abs(best), 1e-12):
            break
        heapq.heappop(heap)
        m = (a + b) / 2
        best = max(best, float(K(arb(m)).lower()))
        for lo, hi in ((a, m), (m, b)):
            heapq.heappush(heap, (-enclose(lo, hi), lo, hi))
        evals += 3
    upper = -heap[0][0]
    upper = max(upper, tail, best)
    return {"bracket": (math.sqrt(max(0.0, best)) * (1 - 2.0 ** -48), math.sqrt(max(0.0, upper)) * (1 + 2.0 ** -48)),
            "evaluations": evals, "P": P, "tail_bound": tail,
            "method": "K = 2L''/beta - L'^2 enclosed on arb balls over |p| <= P (branch and bound), decay bound "
                      "beyond P; lower end: K at the witness (python-flint)"}


# -- the analytic bracket of lambda_V(beta) for lora2 (docs/theory.md section 4) ----------------------

def _lora_d2_tail(fam: LoRADirectional, P: float):
    """An arb upper bound of |L''(p)| for all |p| >= P (the bounds of :func:`_lora_tail`, without 2/beta)."""
    from flint import arb

    A = sum((abs(arb(x)) for x in fam.a.tolist()), arb(0))
    tot = arb(0)
    for z0i, dzi, yi in zip(fam.z0.tolist(), fam.dz.tolist(), fam.y.tolist()):
        R = abs(arb(yi)) + A
        b1, b2 = arb(0), arb(0)
        for ak, zk, dk in zip(fam.a.tolist(), z0i, dzi):
            z = arb(P) * abs(arb(dk)) - abs(arb(zk))
            s2 = arb(1) if not z > 0 else (4 * (-2 * z).exp() if 4 * (-2 * z).exp() < 1 else arb(1))
            b1 += abs(arb(ak) * arb(dk)) * s2
            b2 += 2 * abs(arb(ak)) * arb(dk) * arb(dk) * s2
        tot += b1 * b1 + R * b2
    return tot / fam.n


def lora_analytic_bracket(fam: LossFamily, max_evals: int = 2000, rtol: float = 1e-6) -> dict | None:
    """lora2: the two constants of the analytic bracket
    sqrt(2 L''(p*) / beta) <= lambda_V(beta) <= sqrt(2 max(0, sup_p L''(p)) / beta)   (every beta > 0),
    p* a critical point of p -> L(p) (docs/theory.md section 4, proof there), each certified in arb:

    * ``a``: a lower bound of L''(p*) at a critical point p* of L, which lies in the grid cell
      ``p_star`` = [p1, p2] where L'(p1) < 0 < L'(p2) is enclosed (the cell of the grid's smallest L
      with that sign change); None when no such sign change is certified;
    * ``A``: an upper bound of sup_p L''(p): branch and bound over arb balls covering |p| <= P (the
      ball with the largest enclosure bisected until it is within ``rtol`` of the best point value,
      or ``max_evals`` evaluations are spent), the decay bound of :func:`_lora_d2_tail` beyond P.

    None for the other families (attn2's threshold has another form; gauss and attn1 have lambda_V = 0)."""
    if not isinstance(fam, LoRADirectional):
        return None
    from flint import arb

    d1, _ = _table(fam.name, fam.seed)
    cells = np.nonzero((d1[:-1] < 0) & (d1[1:] >= 0))[0]
    a, cell = None, None
    if len(cells):
        Lp = fam.loss_p(torch.as_tensor(_P_GRID[cells])).numpy()
        i = int(cells[int(np.argmin(Lp))])
        p1, p2 = float(_P_GRID[i]), float(_P_GRID[i + 1])
        if _lora_derivs_arb(fam, arb(p1))[0] < 0 < _lora_derivs_arb(fam, arb(p2))[0]:
            ball = arb((p1 + p2) / 2, (p2 - p1) / 2 * (1 + 2.0 ** -40))
            a, cell = float(_lora_derivs_arb(fam, ball)[1].lower()) * (1 - 2.0 ** -48), (p1, p2)

    adz, az0 = np.abs(fam.dz), np.abs(fam.z0)
    live = adz > 0
    P = float(np.max((az0[live] + 20.0) / adz[live]))
    tail = float(_lora_d2_tail(fam, P).upper()) * (1 + 2.0 ** -48)

    def upper(lo, hi):
        return float(_lora_derivs_arb(fam, arb((lo + hi) / 2, (hi - lo) / 2 * (1 + 2.0 ** -40)))[1].upper()) \
            * (1 + 2.0 ** -48) + 2.0 ** -1000

    best = float(_lora_derivs_arb(fam, arb(0.0))[1].lower())
    heap, evals = [(-upper(-P, P), -P, P)], 1
    while evals < max_evals:
        neg_hi, lo, hi = heap[0]
        if -neg_hi <= best + rtol * max(abs(best), 1e-12):
            break
        heapq.heappop(heap)
        m = (lo + hi) / 2
        best = max(best, float(_lora_derivs_arb(fam, arb(m))[1].lower()))
        for x, y in ((lo, m), (m, hi)):
            heapq.heappush(heap, (-upper(x, y), x, y))
        evals += 3
    A = max(-heap[0][0], tail, best)
    return {"a": a, "p_star": cell, "A": A, "sup_point": best, "P": P, "tail_bound": tail, "evaluations": evals,
            "method": "L'' at a critical point p* of L (L' sign change enclosed on a grid cell) and sup L'' (branch "
                      "and bound over arb balls on |p| <= P, decay bound beyond), python-flint"}


def analytic_interval(a: float | None, A: float, beta: float) -> tuple[float | None, float]:
    """The analytic bracket of lambda_V(beta) from :func:`lora_analytic_bracket`'s ``a`` and ``A``:
    (sqrt(2 max(0, a) / beta) rounded down, sqrt(2 max(0, A) / beta) rounded up), in arb; the lower
    end None where ``a`` is None (no certified critical point)."""
    from flint import arb

    hi = float((2 * arb(max(0.0, A)) / arb(beta)).sqrt().upper()) * (1 + 2.0 ** -48)
    lo = None if a is None else float((2 * arb(max(0.0, a)) / arb(beta)).sqrt().lower()) * (1 - 2.0 ** -48)
    return lo, hi
