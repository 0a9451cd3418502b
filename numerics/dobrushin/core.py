"""Dobrushin coefficient, Theorem D1 (factor bound) and D2 (submultiplicativity): float filter
with a rigorous error bound, exact integer/Fraction certification of what it cannot decide.
The public API is re-exported by :mod:`numerics.dobrushin`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from numerics import kernels as K
from numerics.device import chunk_size
from numerics.dobrushin import certify as C
from numerics.dobrushin.torch_path import validated_torch
from numerics.stochastic import UNIT_ROUNDOFF, ExactMatrix, as_stochastic, give_back, loaded_torch, renormalised
from theory.errors import InvalidInput


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
    for integer input (exact values); boolean and complex input is an InvalidInput (a ValueError).
    CUDA tensors are computed on their device by a chunked min-form (``max_bytes`` bounds the
    temporaries of one chunk) after the same validation; CPU input uses the compiled kernel.

    >>> dobrushin(np.array([[0.9, 0.1], [0.2, 0.8]]))  # 2x2: |det P| = 0.7
    array(0.7)
    """
    torch = loaded_torch()          # never imported here: a tensor exists only once torch is loaded
    if torch is not None and isinstance(P, torch.Tensor) and P.is_cuda:
        return validated_torch(P, max_bytes=max_bytes, row_tol=row_tol)
    batch = as_stochastic(P, "P", row_tol=row_tol)
    data = batch.data
    out = np.empty(data.shape[0], dtype=data.dtype)
    per = data.shape[1] * data.shape[2] * data.itemsize
    step = chunk_size(per, max_bytes)
    for s in range(0, data.shape[0], step):
        out[s:s + step] = K.dobrushin_batch(data[s:s + step])
    return give_back(out, batch)


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
    exact          whether the exact path (numerics.dobrushin.certify: candidate pairs only) ran
    delta_half     ``direct_half=True`` only (else None): float delta((I+A)/2) computed from (I+A)/2's
                   own entries in the same pass over the pairs (numerics.kernels.pair_scan, HALF),
                   not through the closed form: Theorem D1's two sides from one pass
    row_dev        ``direct_half=True`` only: the rigorous bound on max_i |row sum_i - 1| (float64
                   sums plus their rounding) that the error bounds used
    """

    delta: Any
    slack: Any
    equality: Any
    through_first: Any
    through_other: Any
    pair: Any
    exact: Any
    delta_half: Any = None
    row_dev: Any = None


SLACK_EXACT_BELOW = 64  # strict float slack under this many error bounds is recomputed exactly (so a
                        # reported strict slack is within 4/60 < 7% of the exact one, and never 0)
GRID = 2.0 ** -50       # entries on this dyadic grid with rows summing to exactly 1: the float64 pass is exact


def _exact_slack(A: np.ndarray, best: float, s_float: float, eps: float, P: Optional[np.ndarray] = None) -> float:
    """:func:`numerics.dobrushin.certify.exact_slack` (A: the floats certified, P: the float pass's)."""
    return C.exact_slack(A, best, s_float, eps, P)


def _decide(st: np.ndarray, x: np.ndarray, y: np.ndarray, eps: np.ndarray) -> tuple:
    """Verdicts the float statistics of :func:`numerics.kernels.pair_scan` settle, exactly: -> (decided,
    eq, first, other). Disjoint supports (a float overlap of exactly 0) give delta = 1 exactly and
    self-dominance from zero patterns; no unrefuted pair within 2 eps of the maximum refutes
    equality; a unique maximiser with x, y > eps confirms it; eps = 0 (exact floats) decides all."""
    best, second, bi = st[:, 0], st[:, 1], st[:, 2].astype(np.int64)
    tf, to, zany, zf, zo = st[:, 5], st[:, 6], st[:, 7] > 0, st[:, 8] > 0, st[:, 9] > 0
    top = np.maximum(tf, to)
    refuted = ~zany & (top < best - 2 * eps)
    unique = ~zany & ~refuted & (best - second > 2 * eps) & (x > eps) & (y > eps)
    grid = ~zany & ~refuted & ~unique & (eps == 0)
    decided = zany | refuted | unique | grid
    first = np.where(zany, zf, np.where(unique, bi == 0, grid & (tf == best)))
    other = np.where(zany, zo, np.where(unique, bi != 0, grid & (to == best)))
    return decided, first | other, first, other


def _scan(P: np.ndarray, eps: np.ndarray, zeros_ok: np.ndarray, direct: bool = False) -> tuple:
    """pair_scan + what it decides for the matrices P (float32 or float64)."""
    st = K.pair_scan(P, True, eps, direct)
    st[~zeros_ok, K.ZERO_ANY:K.NSTAT] = 0.0
    ar = np.arange(P.shape[0])
    bi, bj = st[:, 2].astype(np.int64), st[:, 3].astype(np.int64)
    x = P[ar, bi, bi].astype(np.float64) - P[ar, bj, bi]
    y = P[ar, bj, bj].astype(np.float64) - P[ar, bi, bj]
    return (st,) + _decide(st, x, y, eps)


def _rows(P: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The matrices ``idx`` of P, contiguous: P itself when idx is all of them (the usual case; a
    fancy-indexed copy of the whole batch cost as much as a third of the scan at n = 16)."""
    return P if len(idx) == len(P) else np.ascontiguousarray(P[idx])


ROUNDING_ROWS = 4.0     # a row sum within 4 (m + 2) unit roundoffs of 1 is a rounded sum of a stochastic row


def _unit(dtype: Any) -> float:
    return 2.0 ** -24 if dtype == np.float32 else UNIT_ROUNDOFF


def factor_check(A: Any, *, row_tol: Optional[float] = None, renormalise: bool = False,
                 direct_half: bool = False) -> FactorCheck:
    """Theorem D1 on each A in the batch (see :class:`FactorCheck`). ``renormalise=True``: A's rows
    need not sum to 1 (e.g. a submatrix of attention on kept tokens): the verdict is certified for
    A's own floats with each row divided by its exact sum (:func:`numerics.stochastic.renormalised`).

    Float32 input is scanned in float32 first (error bounds with float32's unit roundoff); what
    that leaves undecided (or strict with a slack under 64 float32 error bounds) is rescanned in
    float64, and only then does the exact path
    (:mod:`numerics.dobrushin.certify`) touch the rows of the remaining candidate pairs.

    ``direct_half=True`` also returns delta((I+A)/2) from its own entries (:attr:`FactorCheck.delta_half`),
    from the same float64 pass (float32 input then skips its float32 level)."""
    if not renormalise:
        batch = as_stochastic(A, "A", square=True, row_tol=row_tol)
        # one rule for every entry point (factor_slack, factor_equality, renormalise=True): the
        # matrix measured is A's floats with each row divided by its exact sum. Rows within rounding
        # of 1 are scanned as they are (their error is in eps); rows further off (float16 and
        # bfloat16 input, a row sum off by up to the dtype's tolerance) are renormalised first, so
        # that delta and slack are those of the matrix the verdict is certified for
        renormalise = bool(np.any(batch.row_dev > ROUNDING_ROWS * (batch.m + 2) * _unit(batch.data.dtype)))
    if renormalise:
        batch, X = renormalised(A, "A", square=True)
    data = batch.data
    # float64 views of the matrices: the whole batch only when it is float64 already (or renormalised);
    # float32 input is widened matrix by matrix, only where the float64 level or the exact path needs it
    # (a 70 MB copy of MiniLM's 72 heads at T = 493 cost as much as the exact path)
    P = data.astype(np.float64, copy=False) if renormalise else data
    X = X if renormalise else data               # the floats whose exact renormalisation is certified
    B, n = data.shape[0], data.shape[1]
    eps = float_error(batch.row_dev, n)
    eq = np.zeros(B, dtype=bool)
    first = np.zeros(B, dtype=bool)
    other = np.zeros(B, dtype=bool)
    used_exact = np.zeros(B, dtype=bool)
    if n == 1:
        return FactorCheck(delta=give_back(np.zeros(B), batch), slack=give_back(np.full(B, 0.5), batch),
                           equality=give_back(eq, batch), through_first=give_back(first, batch),
                           through_other=give_back(other, batch), pair=give_back(np.full((B, 2), -1), batch),
                           exact=give_back(used_exact, batch),
                           delta_half=give_back(np.zeros(B), batch) if direct_half else None,
                           row_dev=give_back(batch.row_dev, batch) if direct_half else None)
    zeros_ok = np.ones(B, dtype=bool)
    if renormalise:                               # zero patterns of X and of its float renormalisation
        zeros_ok = ((X == 0) == (P == 0)).all(axis=(1, 2))
    grid = K.exact_grid(X, GRID)
    eps = np.where(grid, 0.0, eps)
    st = np.empty((B, K.NSTAT + 1 if direct_half else K.NSTAT))
    done = np.zeros(B, dtype=bool)
    eps_used = eps.copy()
    if data.dtype == np.float32 and not direct_half:   # float32 level: the same bound with float32 roundoff
        lvl = np.flatnonzero(~grid)
        eps32 = 3.0 * batch.row_dev[lvl] + 4.0 * (n + 4) * 2.0 ** -24
        if len(lvl):
            s32, dec, e_, f_, o_ = _scan(_rows(data, lvl), eps32, zeros_ok[lvl])
            st[lvl], eps_used[lvl] = s32, eps32
            sure = dec & (e_ | ((s32[:, 0] - s32[:, 4]) / 2 > SLACK_EXACT_BELOW * eps32))   # slack good to 7%
            done[lvl[sure]] = True
            eq[lvl], first[lvl], other[lvl] = e_, f_, o_
    rest = np.flatnonzero(~done)
    if len(rest):
        s64, dec, e_, f_, o_ = _scan(_rows(P, rest).astype(np.float64, copy=False), eps[rest], zeros_ok[rest],
                                     direct_half)
        st[rest], eps_used[rest] = s64, eps[rest]
        eq[rest], first[rest], other[rest] = e_, f_, o_
        for k in np.flatnonzero(~dec):            # near-ties: the exact path decides
            b = rest[k]
            used_exact[b] = True
            eq[b], first[b], other[b] = C.d1_exact(P[b].astype(np.float64), X[b].astype(np.float64), float(eps[b]),
                                                   float(max(s64[k, 5], s64[k, 6])))
    best, g = st[:, 0], st[:, 4]
    delta = np.maximum(best, 0.0)
    slack = np.maximum((best - g) / 2, 0.0)
    pair = st[:, 2:4].astype(np.int64)
    slack[eq] = 0.0
    for b in np.flatnonzero(~eq & (slack <= SLACK_EXACT_BELOW * eps_used)):   # strict, float slack unreliable
        slack[b] = _exact_slack(X[b].astype(np.float64), float(best[b]), float(slack[b]), float(eps[b]),
                                P[b].astype(np.float64))
    return FactorCheck(delta=give_back(delta, batch), slack=give_back(slack, batch),
                       equality=give_back(eq, batch), through_first=give_back(first, batch),
                       through_other=give_back(other, batch), pair=give_back(pair, batch),
                       exact=give_back(used_exact, batch),
                       delta_half=give_back(np.maximum(st[:, K.HALF], 0.0), batch) if direct_half else None,
                       row_dev=give_back(batch.row_dev, batch) if direct_half else None)


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
              best_q: Optional[float] = None, stats_p: Optional[np.ndarray] = None,
              stats_q: Optional[np.ndarray] = None) -> Optional[bool]:
    """Theorem D2 equality delta(PQ) = delta(P) delta(Q) for one float pair (P: (n, m), Q: (m, p)).

    ``eps_p``/``eps_q`` bound the error of float d-values and entry differences of P and Q.
    ``exact_pq()`` returns the exact (ExactMatrix, ExactMatrix) pair; if None or it returns None
    (budget exhausted), cases the float filter cannot settle come back as None (undecided).
    ``best_p``/``best_q``: float delta(P), delta(Q) if the caller has them (any float64 pass with the
    same error bound will do); computed here otherwise. ``stats_p``/``stats_q``: rows of
    :func:`numerics.kernels.pair_scan` (float64) for P and Q if the caller has them: a maximiser more
    than 2 eps above every other pair is then the only candidate, with no second pass.
    """
    P3, Q3 = P[None], Q[None]
    bestP = float(K.dobrushin_batch(P3)[0]) if best_p is None else float(best_p)
    bestQ = float(K.dobrushin_batch(Q3)[0]) if best_q is None else float(best_q)
    if P.shape[0] == 1 or Q.shape[0] == 1:
        return True  # delta = 0 on one side: equality is trivial (both sides 0)
    nontrivial = bestP > eps_p and bestQ > eps_q
    candP = candidates(P3, bestP, eps_p, stats_p)
    candQ = candidates(Q3, bestQ, eps_q, stats_q)
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


def candidates(P3: np.ndarray, best: float, eps: float, stats: Optional[np.ndarray] = None) -> np.ndarray:
    """Pairs (i < j) of the one matrix P3[0] whose float d is within 2 eps of ``best``: every exact
    maximiser. From pair_scan statistics when the maximiser is unique beyond rounding, else one pass."""
    if stats is not None and stats[0] - stats[1] > 2 * eps:
        return np.array([[int(stats[2]), int(stats[3])]], dtype=np.int64)
    return K.near_max_pairs(P3, 0, best - 2 * eps)


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
        raise InvalidInput(f"P and Q do not chain: P is (..., {bp.n}, {bp.m}) but Q is (..., {bq.n}, {bq.m}); "
                         f"P's columns must equal Q's rows")
    if bp.lead != bq.lead:
        raise InvalidInput(f"P and Q batch shapes differ: {bp.lead} vs {bq.lead}")
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
