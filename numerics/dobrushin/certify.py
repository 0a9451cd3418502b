"""The exact path of Theorem D1: what the float pass of :func:`numerics.dobrushin.factor_check`
leaves undecided, settled with integers on the rows that matter only.

A float matrix stands for its floats with each row divided by its exact sum (docs/theory.md §2). Exact
renormalisation of a row needs only that row, so :class:`ExactRows` builds the integer form of a
row the first time a candidate pair asks for it; bitwise equal rows share one class (their exact
rows are equal, their overlap is exactly 1) and an overlap is computed once per pair of classes,
over the columns where both rows are nonzero (the others add exactly 0).

>>> E = ExactRows(np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.25, 0.75]]))
>>> E.overlap(0, 1), E.overlap(0, 2), E.diff_sign(2, 0, 2)
(Fraction(1, 1), Fraction(1, 4), 1)
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

import numpy as np

from numerics import kernels as K
from theory.errors import InvalidInput


class ExactRows:
    """Exact rational rows of the float matrix ``X`` (n, m), each divided by its exact sum, built lazily."""

    def __init__(self, X: np.ndarray):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        keys: dict[bytes, int] = {}
        self.cls = np.array([keys.setdefault(r.tobytes(), len(keys)) for r in self.X], dtype=np.int64)
        self._rows: dict[int, tuple[list[int], int]] = {}
        self._ov: dict[tuple[int, int], Fraction] = {}

    def row(self, i: int) -> tuple[list[int], int]:
        """(integer numerators, their sum): entry k of row i is ``num[k] / total`` exactly."""
        c = int(self.cls[i])
        if c not in self._rows:
            mant, expo = np.frexp(self.X[i])
            ints = (mant * 2.0 ** 53).astype(np.int64)          # exact: 53-bit mantissas
            nz = ints != 0
            if not nz.any():
                raise InvalidInput(f"row {i} is all zero; it cannot be renormalised to sum 1")
            shift = np.where(nz, expo - expo[nz].min(), 0)
            num = [v << s for v, s in zip(ints.tolist(), shift.tolist())]
            self._rows[c] = (num, sum(num))
        return self._rows[c]

    def overlap(self, i: int, j: int) -> Fraction:
        """sum_k min(A_ik, A_jk) = 1 - d_ij exactly (1 for bitwise equal rows)."""
        a, b = int(self.cls[i]), int(self.cls[j])
        if a == b:
            return Fraction(1)
        key = (min(a, b), max(a, b))
        if key not in self._ov:
            (ri, si), (rj, sj) = self.row(i), self.row(j)
            cols = np.flatnonzero((self.X[i] != 0) & (self.X[j] != 0)).tolist()
            tot = 0
            for k in cols:
                x, y = ri[k] * sj, rj[k] * si
                tot += x if x < y else y
            self._ov[key] = Fraction(tot, si * sj)
        return self._ov[key]

    def diff_sign(self, i: int, j: int, k: int) -> int:
        """sign(A_ik - A_jk), exactly."""
        (ri, si), (rj, sj) = self.row(i), self.row(j)
        v = ri[k] * sj - rj[k] * si
        return (v > 0) - (v < 0)

    def entry(self, i: int, k: int) -> Fraction:
        r, s = self.row(i)
        return Fraction(r[k], s)


def _overlaps(E: ExactRows, ii: np.ndarray, jj: np.ndarray) -> tuple[list[Fraction], np.ndarray]:
    """Exact overlaps of pairs (ii, jj), computed once per pair of row classes: (distinct values, index per pair)."""
    a, b = E.cls[ii], E.cls[jj]
    key = np.minimum(a, b) * (int(E.cls.max()) + 1) + np.maximum(a, b)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    vals = [E.overlap(int(ii[f]), int(jj[f])) for f in first]
    return vals, inv.reshape(-1)


REL = 2.0 ** -53          # float64 unit roundoff
TINY = 2.0 ** -1000       # covers underflow in products and sums of subnormal-scale entries


def _refine(X: np.ndarray, ii: np.ndarray, jj: np.ndarray) -> tuple:
    """Second float filter on the candidate pairs (ii, jj), with error bounds relative to the
    overlaps and entries themselves instead of the absolute ``eps`` (which carries the rows'
    deviation from sum 1): overlaps of the rows divided by their float sums are within
    rel = (2m + 6) u of the exact ones (plus TINY), so near-one-hot rows (overlaps ~1e-7) are
    ranked at ~1e-13 x 1e-7 instead of ~1e-7. Pairs that cannot reach the exact minimum overlap
    are dropped. -> (ii, jj, x, y, good, ov, rel): x, y = +1 / -1 where the sign is certain (0
where not), good = not refuted, ov the float overlaps."""
    m = X.shape[1]
    rel = (2 * m + 6) * REL
    N = X / X.sum(axis=1, keepdims=True)
    ov = K.pair_overlaps(N, ii, jj)
    lo_hi = (ov * (1 + rel) + TINY).min() if len(ov) else 0.0
    keep = ov * (1 - rel) - TINY <= lo_hi                 # could be an exact maximiser
    ii, jj = ii[keep], jj[keep]
    a, b = N[ii, ii], N[jj, ii]                           # x = A_ii - A_ji, y = A_jj - A_ij
    x = np.where(a - b > (a + b) * rel + TINY, 1.0, np.where(b - a > (a + b) * rel + TINY, -1.0, 0.0))
    a, b = N[jj, jj], N[ii, jj]
    y = np.where(a - b > (a + b) * rel + TINY, 1.0, np.where(b - a > (a + b) * rel + TINY, -1.0, 0.0))
    good = (x >= 0) & (y >= 0)
    return ii, jj, x, y, good, ov[keep], rel


def d1_exact(P: np.ndarray, X: np.ndarray, eps: float, top: float,
             E: Optional[ExactRows] = None) -> tuple[bool, bool, bool]:
    """(equality, through_first, through_other) of Theorem D1, exactly, for one matrix.

    ``P`` (n, n) float64: the floats of the float pass (d-values and entry differences within
    ``eps`` of the exact ones); ``X``: the floats whose exact row renormalisation is certified;
    ``top``: the largest float d over pairs the float pass did not refute (x >= -eps, y >= -eps).
    Every exact maximiser has float d >= top - 2 eps if a self-dominant maximiser can exist, so
    only those pairs are looked at; of them, exact overlaps are computed for the unrefuted pairs and
    for refuted pairs whose float d could beat them."""
    D = K.pair_d(P[None], 0)
    ii, jj = np.nonzero(D >= top - 2 * eps)
    ii, jj, x, y, good, ov, rel = _refine(X, ii, jj)
    if not good.any():
        return False, False, False
    if len(ii) == 1 and x[0] > 0 and y[0] > 0:            # the only possible maximiser, self-dominant
        return True, bool(ii[0] == 0), bool(ii[0] != 0)
    E = ExactRows(X) if E is None else E
    gi, gj = ii[good], jj[good]
    vals, inv = _overlaps(E, gi, gj)
    lo = min(vals)
    rivals = ~good & (ov * (1 - rel) - TINY <= float(lo) * (1 + 4 * REL))   # a refuted pair that might beat them
    if rivals.any() and min(_overlaps(E, ii[rivals], jj[rivals])[0]) < lo:
        return False, False, False
    win = np.array([v == lo for v in vals])[inv]
    same = E.cls[gi] == E.cls[gj]                         # equal rows: x = y = 0 exactly
    sure_x = (x[good] > 0) | same
    sure_y = (y[good] > 0) | same
    first = other = False
    for k in np.flatnonzero(win):
        i, j = int(gi[k]), int(gj[k])
        if (first if i == 0 else other):
            continue
        if (sure_x[k] or E.diff_sign(i, j, i) >= 0) and (sure_y[k] or E.diff_sign(j, i, j) >= 0):
            first, other = first or i == 0, other or i != 0
        if first and other:
            break
    return first or other, first, other


def exact_slack(X: np.ndarray, best: float, s_float: float, eps: float, P: Optional[np.ndarray] = None) -> float:
    """The exact slack 1/2 min_{i != j} [(delta - d_ij) + x^- + y^-] of one strict matrix, as a
    positive float. |s_float - slack| <= 4 eps, so a minimising pair has float d_ij >= best -
    2 s_float - 10 eps: only those pairs (which contain every maximiser) are evaluated exactly.
    ``P``: the floats of the float pass (default ``X``)."""
    P = X if P is None else P
    D = K.pair_d(np.ascontiguousarray(P, dtype=np.float64)[None], 0)
    ii, jj = np.nonzero(D >= best - 2 * s_float - 10 * eps)
    E = ExactRows(X)
    vals, inv = _overlaps(E, ii, jj)
    lo = min(vals)            # overlap = 1 - d_ij: the lowest is 1 - delta(A)
    zero = Fraction(0)
    term = min((vals[v] - lo) + max(zero, E.entry(j, i) - E.entry(i, i)) + max(zero, E.entry(i, j) - E.entry(j, j))
               for i, j, v in zip(ii.tolist(), jj.tolist(), inv.tolist()))
    exact = term / 2
    if exact <= 0:
        raise AssertionError("exact slack is 0 for a strict verdict: the certification is inconsistent")
    return max(float(exact), 5e-324)   # rounded to nearest; a positive rational stays positive
