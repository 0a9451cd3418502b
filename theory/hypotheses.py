"""Hypotheses of a theorem: the answer of a hypothesis check (:class:`Hypotheses`: ok True / False /
None = undecided, with a reason naming the failed condition), its builders :func:`check` (one
condition and its message) and :func:`hyp_all` (their conjunction), the one check of a stochastic
matrix (:func:`stochastic`), and what a statement over :mod:`theory.expr` derives from its
``assume=``, ``where=`` and symbols: its hypothesis check (:class:`DerivedHypothesis`) and its
equality witness (:class:`DerivedWitness`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np
import sympy as sp

from theory.tolerances import row_tol

@dataclass(frozen=True)
class Hypotheses:
    """Outcome of a hypothesis check (as sympy.stats' ``_value_check``).

    ``ok`` is True, False, or None (undecided); ``reason`` names the condition that failed or could
    not be decided, and where (row, shape, parameter); it is "" exactly when ``ok`` is True.
    Truthy only when ``ok is True``, so ``if th.hypotheses(x):`` means "known to hold".
    """

    ok: Optional[bool]
    reason: str = ""

    def __post_init__(self) -> None:
        if not (self.ok is True or self.ok is False or self.ok is None):
            raise TypeError(f"Hypotheses.ok must be True, False or None, got {self.ok!r}")
        if not isinstance(self.reason, str):
            raise TypeError(f"Hypotheses.reason must be a str, got {type(self.reason).__name__}")
        if self.ok is True and self.reason:
            raise ValueError(f"Hypotheses: ok=True takes no reason, got {self.reason!r}")
        if self.ok is not True and not self.reason:
            raise ValueError(f"Hypotheses: ok={self.ok} needs a reason naming the condition")

    def __bool__(self) -> bool:
        return self.ok is True


HOLDS = Hypotheses(True)


def _truth(condition: Any) -> Optional[bool]:
    """True / False / None for a bool, numpy bool, sympy Boolean (undecidable relation: None) or None."""
    if condition is None:
        return None
    if isinstance(condition, Hypotheses):
        return condition.ok
    if isinstance(condition, sp.Basic):
        return True if condition is sp.true else False if condition is sp.false else None
    return bool(condition)


def check(condition: Any, reason: str) -> Hypotheses:
    """One condition: ``HOLDS`` if it is true, else ok False / None (undecided) with ``reason``."""
    ok = _truth(condition)
    return HOLDS if ok is True else Hypotheses(ok, reason)


Check = Union[Hypotheses, Callable[[], Hypotheses]]


def hyp_all(*checks: Check) -> Hypotheses:
    """Conjunction in order: the first False (later checks are not evaluated), else the first
    undecided, else ``HOLDS``. A zero-argument callable is evaluated only when reached, for
    conditions that make sense only once the earlier ones hold (a shape after "is a matrix")."""
    undecided = None
    for c in checks:
        h = c() if callable(c) else c
        if not isinstance(h, Hypotheses):
            raise TypeError(f"hyp_all: expected Hypotheses, got {type(h).__name__}; wrap it in check()")
        if h.ok is False:
            return h
        if h.ok is None and undecided is None:
            undecided = h
    return HOLDS if undecided is None else undecided


def stochastic(M: Any, name: str = "A", tol: Optional[float] = None) -> Hypotheses:
    """``M`` is a non-empty finite nonnegative matrix whose rows sum to 1 within ``tol``
    (default: :func:`row_tol` of ``M``'s dtype); the reason names the offending row / entry."""
    dtype = getattr(M, "dtype", None)
    tol = row_tol(dtype) if tol is None else float(tol)
    if "bfloat16" in str(dtype) and hasattr(M, "float"):
        M = M.float()                                # torch bfloat16 -> float32, exact
    try:
        if np.iscomplexobj(M):
            return Hypotheses(False, f"{name}: complex entries (dtype {dtype}); a stochastic matrix is real")
        X = np.asarray(M, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return Hypotheses(False, f"{name}: not a real matrix ({exc})")
    if X.ndim != 2 or X.size == 0:
        return Hypotheses(False, f"{name}: must be a non-empty matrix, got shape {X.shape}")
    for bad, what in ((~np.isfinite(X), "non-finite"), (X < 0, "negative")):
        if bad.any():
            i, k = (int(v) for v in np.argwhere(bad)[0])
            return Hypotheses(False, f"{name}: {what} entry {float(X[i, k])!r} at row {i}, column {k}")
    sums = X.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1) > tol)
    if off.size:
        i = int(off[0])
        k = off.size - 1
        more = f"; {k} more row{'s' if k > 1 else ''} off" if k else ""
        dt = "float64" if dtype is None else str(dtype)
        return Hypotheses(False, f"{name}: row {i} sums to {float(sums[i])!r}, not 1 "
                                 f"(tolerance {tol:g} for {dt}){more}")
    return HOLDS


def _entries(M: Any, name: str) -> Any:
    """(float array, exact rows or None) of a matrix given as an array or as rows of numbers
    (exact when every entry is an int, a Fraction or a "p/q" string), or the Hypotheses saying why
    it is not a matrix."""
    from fractions import Fraction as F

    if hasattr(M, "dtype") and not isinstance(M, list):
        return M, None
    try:
        rows = [list(r) for r in M]
    except TypeError:
        return Hypotheses(False, f"{name}: not a matrix (rows of numbers), got {type(M).__name__}")
    exact = all(isinstance(v, (int, F, str)) and not isinstance(v, bool) for r in rows for v in r)
    try:
        if exact:
            E = [[F(v) for v in r] for r in rows]
            return np.array([[float(v) for v in r] for r in E]) if rows and rows[0] else np.zeros((len(rows), 0)), E
        return np.array([[float(v) for v in r] for r in rows]), None
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        return Hypotheses(False, f"{name}: not a matrix of numbers ({exc})")


def _where(X: np.ndarray) -> tuple[int, int]:
    i, k = (int(v) for v in np.argwhere(X)[0])
    return i, k


@dataclass(frozen=True)
class DerivedHypothesis:
    """The derived hypothesis of a statement over the vocabulary, on one instance: every symbol it
    names is present and of its kind (``roles``: name -> kind, stochastic by default; a
    ``stochastic`` matrix square and row-stochastic, rows summing to 1 within
    :func:`theory.tolerances.row_tol`, or exactly for exact entries; a ``logits`` matrix square and
    real; a ``tokens`` matrix n x d, one d for all), all of one size n, ``assume`` holds (on the
    stochastic matrices: ``causal``, ``positive``, ``doubly-stochastic`` (columns sum to 1),
    ``symmetric``; on the logits matrices: ``symmetric``), and every parameter (``params``: (name,
    lo, hi)) lies in its interval. An instance is ``{"A": matrix, ..., "alpha": value}``, or one
    matrix for a statement over one matrix (float arrays, or rows of ints, Fractions or "p/q"
    strings: exact, and checked exactly). A failure is one line naming the symbol, the entry and the
    hypothesis.

    >>> h = DerivedHypothesis(("A",), ("causal",))
    >>> bool(h([[1, 0], [0.5, 0.5]])), h({"A": [[0.5, 0.5], [0.5, 0.5]]}).reason
    (True, 'A: entry 0.5 at row 0, column 1 is above the diagonal (assumed causal)')
    >>> h = DerivedHypothesis(("A", "X"), ("doubly-stochastic",), {"X": "tokens"}, (("alpha", 0, 1),))
    >>> h({"A": [["1/2", "1/2"], ["1/4", "3/4"]], "X": [[1], [2]], "alpha": "1/2"}).reason
    'A: column 0 sums to 3/4, not 1 (assumed doubly-stochastic)'
    >>> h({"A": [[1, 0], [0, 1]], "X": [[1, 2]], "alpha": 2}).reason
    'X: has 1 rows but A has 2 (every matrix of an instance has the same n)'
    >>> h({"A": [[1, 0], [0, 1]], "X": [[1], [2]], "alpha": 2}).reason
    'alpha: 2 is outside its interval [0, 1]'
    """

    matrices: tuple[str, ...]
    assume: tuple[str, ...] = ()
    roles: Any = ()
    params: tuple = ()

    def __call__(self, inst: Any) -> Any:
        from fractions import Fraction as F

        kinds = dict(self.roles)
        names = list(self.matrices) + [p for p, _, _ in self.params]
        if not isinstance(inst, dict):
            if len(names) != 1:
                return Hypotheses(False, f"instance: a dict of {', '.join(names)}, got {type(inst).__name__}")
            inst = {names[0]: inst}
        missing = [m for m in names if m not in inst]
        if missing:
            what = "matrix" if missing[0] in self.matrices else "parameter"
            return Hypotheses(False, f"instance: no {what} {missing[0]} (the statement is about {', '.join(names)})")
        size = width = None
        first = None
        for name in self.matrices:
            kind = kinds.get(name) or "stochastic"
            got = _entries(inst[name], name)
            if isinstance(got, Hypotheses):
                return got
            X, E = got
            X = np.asarray(X)
            if kind == "stochastic" and E is None:
                h = stochastic(X, name)
                if not h:
                    return h
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2 or X.size == 0:
                return Hypotheses(False, f"{name}: must be a non-empty matrix, got shape {X.shape}")
            if kind != "tokens" and X.shape[0] != X.shape[1]:
                return Hypotheses(False, f"{name}: must be square ({kind}), got shape {X.shape}")
            if size is not None and X.shape[0] != size:
                return Hypotheses(False, f"{name}: has {X.shape[0]} rows but {first} has {size} (every matrix of an "
                                         "instance has the same n)")
            size, first = (X.shape[0], name) if size is None else (size, first)
            if kind == "tokens":
                if width is not None and X.shape[1] != width:
                    return Hypotheses(False, f"{name}: has {X.shape[1]} columns but another tokens matrix has "
                                             f"{width} (one d for all)")
                width = X.shape[1]
            if kind != "stochastic":
                if E is None and not np.isfinite(X).all():
                    i, k = _where(~np.isfinite(X))
                    return Hypotheses(False, f"{name}: entry {float(X[i, k])!r} at row {i}, column {k} is not finite")
                if kind == "logits" and "symmetric" in self.assume:
                    bad = (np.array([[a != b for a, b in zip(r, c)] for r, c in zip(E, zip(*E))])
                           if E is not None else X != X.T)
                    if bad.any():
                        i, k = _where(bad)
                        return Hypotheses(False, f"{name}: entries ({i}, {k}) and ({k}, {i}) differ (assumed symmetric)")
                continue
            if E is not None:
                for i, row in enumerate(E):
                    neg = [k for k, v in enumerate(row) if v < 0]
                    if neg:
                        return Hypotheses(False, f"{name}: negative entry {row[neg[0]]} at row {i}, column {neg[0]}")
                    if sum(row) != 1:
                        return Hypotheses(False, f"{name}: row {i} sums to {sum(row)}, not 1 (exactly)")
            if "causal" in self.assume and np.triu(X, 1).any():
                i, k = _where(np.triu(X, 1))
                return Hypotheses(False, f"{name}: entry {float(X[i, k])!r} at row {i}, column {k} is above the "
                                         "diagonal (assumed causal)")
            if "positive" in self.assume and not (X > 0).all():
                i, k = _where(X <= 0)
                return Hypotheses(False, f"{name}: entry {float(X[i, k])!r} at row {i}, column {k} is not positive "
                                         "(assumed positive)")
            if "symmetric" in self.assume:
                bad = (np.array([[a != b for a, b in zip(r, c)] for r, c in zip(E, zip(*E))]) if E is not None
                       else X != X.T)
                if bad.any():
                    i, k = _where(bad)
                    return Hypotheses(False, f"{name}: entries ({i}, {k}) and ({k}, {i}) differ (assumed symmetric)")
            if {"doubly-stochastic", "symmetric"} & set(self.assume):
                why = "doubly-stochastic" if "doubly-stochastic" in self.assume else "symmetric"
                cols = [sum(c) for c in zip(*E)] if E is not None else X.sum(axis=0).tolist()
                tol = 0 if E is not None else row_tol(getattr(inst[name], "dtype", None))
                off = [k for k, c in enumerate(cols) if abs(c - 1) > tol]
                if off:
                    return Hypotheses(False, f"{name}: column {off[0]} sums to {cols[off[0]]}, not 1 (assumed {why})")
        for name, lo, hi in self.params:
            v = inst[name]
            try:
                q = F(v)
            except (TypeError, ValueError, ZeroDivisionError):
                return Hypotheses(False, f"{name}: {v!r} is not a number")
            if isinstance(v, bool) or not F(lo) <= q <= F(hi):
                return Hypotheses(False, f"{name}: {v} is outside its interval [{lo}, {hi}]")
        return HOLDS


@dataclass(frozen=True)
class DerivedWitness:
    """The derived witness: the first of a few small exact instances (rank-one, identity,
    permutation, two-point rows; :func:`numerics.expr.witness.find_witness`) on which the statement
    is an equality, in exact arithmetic; LookupError when none is (a strict bound has none)."""

    statement: Any
    assume: tuple[str, ...] = ()
    where: tuple = ()

    def __call__(self) -> Any:
        from importlib import import_module

        return import_module("numerics.expr.witness").find_witness(self.statement, self.assume, self.where)
