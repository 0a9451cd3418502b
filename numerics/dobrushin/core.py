"""Dobrushin coefficient, Theorem D1 (factor bound) and D2 (submultiplicativity): float filter
with a rigorous error bound, exact integer/Fraction certification of what it cannot decide.
The public API is re-exported by :mod:`numerics.dobrushin`."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from numerics import kernels as K
from numerics.device import chunk_size
from numerics.stochastic import UNIT_ROUNDOFF, ExactMatrix, as_stochastic, give_back, renormalised


def float_error(batch_row_dev: np.ndarray, m: int) -> np.ndarray:
    """Rigorous bound (per matrix) on |float d_ij - exact d_ij| and on the error of a float
    difference of two entries, for the float64 min-form pass over a matrix with m columns whose
    rows deviate from sum 1 by at most ``row_dev`` (renormalisation moves d_ij by <= row_dev)."""
    return 3.0 * batch_row_dev + 4.0 * (m + 4) * UNIT_ROUNDOFF


# ------------------------------------------------------------------------------------------------
# delta
# ------------------------------------------------------------------------------------------------
def dobrushin(P: Any, *, max_bytes: Optional[int] = None, row_tol: Optional[float] = None) -> Any:
    """Dobrushin coefficient delta(P) = 1/2 max_{i,j} ||P_i - P_j||_1 of each matrix in ``P``.

    ``P``: (..., n, m) row-stochastic. One rule on every path (numpy, torch on CPU, torch on CUDA):
    the result has shape ``P.shape[:-2]`` (``()`` for a single matrix) and is computed in float64
    for float64 input, float32 for float32, float16 and bfloat16 (widened exactly), and float64
    for integer input (exact values); boolean and complex input is a ValueError.
    CUDA tensors are computed on their device by a chunked min-form (``max_bytes`` bounds the
    temporaries of one chunk) after the same validation; CPU input uses the compiled kernel.

    >>> dobrushin(np.array([[0.9, 0.1], [0.2, 0.8]]))  # 2x2: |det P| = 0.7
    array(0.7)
    """
    try:
        import torch
        if isinstance(P, torch.Tensor) and P.is_cuda:
            return _dobrushin_torch(P, max_bytes=max_bytes, row_tol=row_tol)
    except ImportError:  # pragma: no cover
        pass
    batch = as_stochastic(P, "P", row_tol=row_tol)
    data = batch.data
    out = np.empty(data.shape[0], dtype=data.dtype)
    per = data.shape[1] * data.shape[2] * data.itemsize
    step = chunk_size(per, max_bytes)
    for s in range(0, data.shape[0], step):
        out[s:s + step] = K.dobrushin_batch(data[s:s + step])
    return give_back(out, batch)


def dobrushin_torch(P: Any, *, max_bytes: Optional[int] = None) -> Any:
    """Min-form delta in plain torch ops (any device), batched: each step handles a block of
    matrices (or, for large n, a block of rows i of one matrix) so that its (matrices, rows, n, m)
    temporary stays under ``max_bytes`` (default :data:`numerics.device.DEFAULT_MAX_BYTES`).
    The CUDA route of :func:`dobrushin`; also callable on CPU. Does not validate (use
    :func:`dobrushin`); dtype and shape rules are :func:`dobrushin`'s."""
    import torch

    from numerics.stochastic import torch_compute_dtype

    dt = torch_compute_dtype(P, "P")
    if P.dim() < 2:
        raise ValueError(f"P: needs at least 2 dimensions (..., n, m), got shape {tuple(P.shape)}")
    n, m = P.shape[-2:]
    flat = P.to(dt).reshape(-1, n, m)
    B = flat.shape[0]
    out = torch.zeros(B, dtype=dt, device=P.device)
    if n < 2 or B == 0:
        return out.reshape(P.shape[:-2])
    per_row = n * m * flat.element_size()                           # one row i against all rows j
    rows = min(n, chunk_size(per_row, max_bytes))                   # rows i per step
    mats = chunk_size(per_row * n, max_bytes) if rows == n else 1   # matrices per step
    rs = flat.sum(-1)                                               # (B, n)
    for b0 in range(0, B, mats):
        blk, r = flat[b0:b0 + mats], rs[b0:b0 + mats]
        best = torch.zeros(blk.shape[0], dtype=dt, device=P.device)
        for i0 in range(0, n, rows):
            ov = torch.minimum(blk[:, i0:i0 + rows, None, :], blk[:, None, :, :]).sum(-1)   # (c, r, n)
            d = 0.5 * (r[:, i0:i0 + rows, None] + r[:, None, :]) - ov
            best = torch.maximum(best, d.amax(dim=(-1, -2)))
        out[b0:b0 + mats] = best
    return out.reshape(P.shape[:-2])


def _dobrushin_torch(P: Any, max_bytes: Optional[int], row_tol: Optional[float]) -> Any:
    """The CUDA route: :func:`dobrushin`'s validation (same rules, same errors), then the torch kernel."""
    as_stochastic(P, "P", row_tol=row_tol)  # copies to host once; errors name the matrix and row
    return dobrushin_torch(P, max_bytes=max_bytes)


# ------------------------------------------------------------------------------------------------
# Theorem D1
# ------------------------------------------------------------------------------------------------
@dataclass
class FactorCheck:
    """What Theorem D1 says about each A (arrays over the batch's leading shape).

    delta          float delta(A)
    slack          (1+delta(A))/2 - delta((I+A)/2) by the closed form, float64. 0.0 exactly iff
                   tight (exact verdict); where strict it is > 0: the float value when it exceeds
                   64 rigorous error bounds (then within 7%), else the exact slack rounded to a float (never 0)
    equality       D1 equality, exact
    through_first  equality attained by a maximising pair containing token 0, exact
    through_other  equality attained by a maximising pair not containing token 0, exact
    pair           a maximising pair (i, j), i < j (-1, -1 for n = 1)
    exact          whether the exact path was needed
    """

    delta: Any
    slack: Any
    equality: Any
    through_first: Any
    through_other: Any
    pair: Any
    exact: Any


def _d1_exact(A: np.ndarray, pairs: np.ndarray) -> tuple[bool, bool, bool]:
    """Exact D1 verdict for one float matrix, given candidate pairs that contain every maximiser."""
    E = ExactMatrix.from_floats(A)
    ov = E.overlaps(pairs)
    lo = min(ov)
    first = other = False
    for (i, j), o in zip(pairs, ov):
        if o != lo:
            continue
        i, j = int(i), int(j)
        if E.diff_sign(i, j, i) >= 0 and E.diff_sign(j, i, j) >= 0:  # A_ii >= A_ji, A_jj >= A_ij
            if i == 0 or j == 0:
                first = True
            else:
                other = True
    return first or other, first, other


SLACK_EXACT_BELOW = 64  # strict float slack under this many error bounds is recomputed exactly (so a
                        # reported strict slack is within 4/60 < 7% of the exact one, and never 0)


def _exact_slack(A: np.ndarray, best: float, s_float: float, eps: float) -> float:
    """The exact slack 1/2 min_{i != j} [(delta - d_ij) + x^- + y^-] of one strict float matrix,
    as a positive float. |s_float - slack| <= 4 eps (d values and entry differences each within
    eps), so a minimising pair has exact term <= 2 s_float + 8 eps and float d_ij >= best - 2 s_float
    - 10 eps: only those candidate pairs (which contain every maximiser) are evaluated exactly."""
    cand = K.near_max_pairs(A[None], 0, best - 2 * s_float - 10 * eps)
    E = ExactMatrix.from_floats(A)
    ov = E.overlaps(cand)
    lo = min(ov)            # overlap = 1 - d_ij: the lowest is 1 - delta(A)
    zero = Fraction(0)
    term = min((o - lo) + max(zero, E.entry(j, i) - E.entry(i, i)) + max(zero, E.entry(i, j) - E.entry(j, j))
               for (i, j), o in zip(((int(a), int(b)) for a, b in cand), ov))
    exact = term / 2
    if exact <= 0:
        raise AssertionError("exact slack is 0 for a strict verdict: the certification is inconsistent")
    return max(float(exact), 5e-324)   # rounded to nearest; a positive rational stays positive


def factor_check(A: Any, *, row_tol: Optional[float] = None, renormalise: bool = False) -> FactorCheck:
    """Theorem D1 on each A in the batch (see :class:`FactorCheck`). ``renormalise=True``: A's rows
    need not sum to 1 (e.g. a submatrix of attention on kept tokens): the verdict is certified for
    A's own floats with each row divided by its exact sum (:func:`numerics.stochastic.renormalised`)."""
    if renormalise:
        batch, X = renormalised(A, "A", square=True)
    else:
        batch = as_stochastic(A, "A", square=True, row_tol=row_tol)
    P = batch.data.astype(np.float64, copy=False)
    X = X if renormalise else P                  # the floats whose exact renormalisation is certified
    B, n = P.shape[0], P.shape[1]
    best, second, bi, bj, g = K.pair_scan(P, True)
    eps = float_error(batch.row_dev, n)
    eq = np.zeros(B, dtype=bool)
    first = np.zeros(B, dtype=bool)
    other = np.zeros(B, dtype=bool)
    used_exact = np.zeros(B, dtype=bool)
    if n == 1:
        delta = np.zeros(B)
        slack = np.full(B, 0.5)
        pair = np.full((B, 2), -1)
    else:
        delta = np.maximum(best, 0.0)
        slack = np.maximum((best - g) / 2, 0.0)
        pair = np.stack([bi, bj], axis=-1)
        ar = np.arange(B)
        x = P[ar, bi, bi] - P[ar, bj, bi]       # A_ii - A_ji at the float maximiser
        y = P[ar, bj, bj] - P[ar, bi, bj]       # A_jj - A_ij
        unique = best - second > 2 * eps        # only the maximiser's signs matter
        no = unique & ((x < -eps) | (y < -eps))
        yes = unique & (x > eps) & (y > eps)
        eq[yes], first[yes], other[yes] = True, bi[yes] == 0, bi[yes] != 0
        for b in np.flatnonzero(~(no | yes)):   # near-ties: the exact path decides
            if unique[b]:
                cand = np.array([[bi[b], bj[b]]])
            else:
                cand = K.near_max_pairs(P, b, best[b] - 2 * eps[b])
            used_exact[b] = True
            eq[b], first[b], other[b] = _d1_exact(X[b], cand)
        slack[eq] = 0.0
        for b in np.flatnonzero(~eq & (slack <= SLACK_EXACT_BELOW * eps)):   # strict, float slack unreliable
            slack[b] = _exact_slack(X[b], float(best[b]), float(slack[b]), float(eps[b]))
    return FactorCheck(delta=give_back(delta, batch), slack=give_back(slack, batch),
                       equality=give_back(eq, batch), through_first=give_back(first, batch),
                       through_other=give_back(other, batch), pair=give_back(pair, batch),
                       exact=give_back(used_exact, batch))


def factor_slack(A: Any, *, row_tol: Optional[float] = None) -> Any:
    """(1 + delta(A))/2 - delta((I + A)/2) per matrix, by Theorem D1's closed form
    (1/2 min_{i != j} [(delta(A) - d_ij) + x^- + y^-]); float64 (0.5 for n = 1). 0.0 exactly iff
    D1's equality holds (decided exactly); a strict case is never reported as 0.0
    (:attr:`FactorCheck.slack`)."""
    return factor_check(A, row_tol=row_tol).slack


def factor_equality(A: Any, *, row_tol: Optional[float] = None) -> Any:
    """Theorem D1 equality delta((I+A)/2) = (1+delta(A))/2, decided exactly, per matrix."""
    return factor_check(A, row_tol=row_tol).equality


# ------------------------------------------------------------------------------------------------
# Theorem D2
# ------------------------------------------------------------------------------------------------
def _pairs_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in pairs}


def d2_decide(P: np.ndarray, Q: np.ndarray, eps_p: float, eps_q: float,
              exact_pq: Optional[Any] = None, best_p: Optional[float] = None,
              best_q: Optional[float] = None) -> Optional[bool]:
    """Theorem D2 equality delta(PQ) = delta(P) delta(Q) for one float pair (P: (n, m), Q: (m, p)).

    ``eps_p``/``eps_q`` bound the error of float d-values and entry differences of P and Q.
    ``exact_pq()`` returns the exact (ExactMatrix, ExactMatrix) pair; if None or it returns None
    (budget exhausted), cases the float filter cannot settle come back as None (undecided).
    ``best_p``/``best_q``: float delta(P), delta(Q) if the caller has them (any float64 pass with the
    same error bound will do); computed here otherwise.
    """
    P3, Q3 = P[None], Q[None]
    bestP = float(K.dobrushin_batch(P3)[0]) if best_p is None else float(best_p)
    bestQ = float(K.dobrushin_batch(Q3)[0]) if best_q is None else float(best_q)
    if P.shape[0] == 1 or Q.shape[0] == 1:
        return True  # delta = 0 on one side: equality is trivial (both sides 0)
    nontrivial = bestP > eps_p and bestQ > eps_q
    candP = K.near_max_pairs(P3, 0, bestP - 2 * eps_p)
    candQ = K.near_max_pairs(Q3, 0, bestQ - 2 * eps_q)
    if nontrivial:
        qset = _pairs_set(candQ)
        possible = certain = False
        for i, j in candP:
            diff = P[i] - P[j]
            plus = np.flatnonzero(diff > eps_p)
            minus = np.flatnonzero(diff < -eps_p)
            if len(plus) * len(minus) > len(qset):
                continue
            if any((min(k, l), max(k, l)) not in qset for k in plus for l in minus):
                continue
            possible = True
            if (len(candP) == 1 and len(candQ) == 1 and len(plus) == 1 and len(minus) == 1
                    and not np.any(np.abs(diff) <= eps_p)):
                certain = True  # the unique maximisers meet; one pair, so (b) holds trivially
        if certain:
            return True
        if not possible:
            return False
    exact = exact_pq() if exact_pq is not None else None
    if exact is None:
        return None
    return _d2_exact(exact[0], exact[1], candP, candQ)


def _d2_exact(EP: ExactMatrix, EQ: ExactMatrix, candP: np.ndarray, candQ: np.ndarray) -> bool:
    ovP = dict(zip(((int(i), int(j)) for i, j in candP), EP.overlaps(candP)))
    ovQ = dict(zip(((int(k), int(l)) for k, l in candQ), EQ.overlaps(candQ)))
    loP, loQ = min(ovP.values()), min(ovQ.values())
    if loP == 1 or loQ == 1:  # delta(P) = 0 or delta(Q) = 0
        return True
    qmax = {kl for kl, o in ovQ.items() if o == loQ}
    for (i, j), o in ovP.items():
        if o != loP:
            continue
        signs = [EP.diff_sign(i, j, k) for k in range(EP.m)]
        plus = [k for k, s in enumerate(signs) if s > 0]
        minus = [k for k, s in enumerate(signs) if s < 0]
        if any((min(k, l), max(k, l)) not in qmax for k in plus for l in minus):
            continue  # (a) fails
        ok = True
        for t in range(EQ.m):
            st = {EQ.diff_sign(k, l, t) for k in plus for l in minus}
            if 1 in st and -1 in st:
                ok = False  # (b) fails: column t cancels
                break
        if ok:
            return True
    return False


def product_equality(P: Any, Q: Any, *, row_tol: Optional[float] = None) -> Any:
    """Theorem D2 equality delta(PQ) = delta(P) delta(Q) per pair, decided exactly.

    ``P``: (..., n, m), ``Q``: (..., m, p) with equal leading shapes. Returns bool per pair.
    """
    bp = as_stochastic(P, "P", row_tol=row_tol)
    bq = as_stochastic(Q, "Q", row_tol=row_tol)
    if bp.m != bq.n:
        raise ValueError(f"P and Q do not chain: P is (..., {bp.n}, {bp.m}) but Q is (..., {bq.n}, {bq.m}); "
                         f"P's columns must equal Q's rows")
    if bp.lead != bq.lead:
        raise ValueError(f"P and Q batch shapes differ: {bp.lead} vs {bq.lead}")
    Pd = bp.data.astype(np.float64, copy=False)
    Qd = bq.data.astype(np.float64, copy=False)
    ep = float_error(bp.row_dev, bp.m)
    eq_ = float_error(bq.row_dev, bq.m)
    out = np.zeros(Pd.shape[0], dtype=bool)
    for b in range(Pd.shape[0]):
        def exact(b: int = b) -> tuple[ExactMatrix, ExactMatrix]:
            return ExactMatrix.from_floats(Pd[b]), ExactMatrix.from_floats(Qd[b])
        res = d2_decide(Pd[b], Qd[b], float(ep[b]), float(eq_[b]), exact)
        out[b] = bool(res)
    return give_back(out, bp)
