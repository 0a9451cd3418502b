"""Certified verdicts of a compiled statement on a batch of instances: floats where their margin
exceeds the rigorous error bound, exact arithmetic for the rest and for every equality.

For ``lhs <= rhs``: ``holds`` (lhs < rhs), ``tight`` (lhs = rhs), ``violated`` (lhs > rhs). For
``lhs < rhs``: ``holds`` (lhs < rhs), ``violated`` (lhs >= rhs: an equality violates a strict
bound; :attr:`Decision.equal` marks those). ``not-applicable`` where the statement is undefined (a
denominator exactly 0) and, given the theorem's hypotheses (``assume``: "causal", "positive"), where an
instance does not satisfy them (:func:`assumed`: nothing is claimed there, nothing is computed exactly).
Verdicts are :class:`theory.verdicts.Verdict` members.

The three paths, in order, per instance:

1. float (:mod:`numerics.expr.floats`): decided when |rhs - lhs| exceeds err_lhs + err_rhs (its own
   rounding included); with both errors 0 (exact-grid inputs) the float values are exact and an
   equality of floats is an exact equality;
2. the affine certificate (:mod:`numerics.expr.certify`): tight instances of statements affine on a
   float-certified branch, batched, in exact integer arithmetic;
3. rationals (:mod:`numerics.expr.exact`): everything else, one instance at a time.

A tight verdict (or an equality) is only ever given by exact arithmetic (2, 3, or 1 with exact
floats). :attr:`Decision.exact` marks the instances that went past the float margin (2 or 3, or an
exact-float equality), :attr:`Decision.rational` those that needed 3.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from numerics.expr.certify import certify
from numerics.expr.exact import sides_of
from numerics.expr.floats import SAFE, inputs, trace
from numerics.expr.program import Compiled
from numerics.stochastic import UNIT_ROUNDOFF as U, ExactMatrix
from theory.verdicts import Verdict

HOLDS, TIGHT, VIOLATED, NOT_APPLICABLE = 0, 1, 2, 3
VERDICTS = np.array([Verdict.HOLDS, Verdict.TIGHT, Verdict.VIOLATED, Verdict.NOT_APPLICABLE], dtype=object)


@dataclass
class Decision:
    """Per instance (arrays of length B): ``codes`` (int8: :data:`HOLDS`, :data:`TIGHT`,
    :data:`VIOLATED`, :data:`NOT_APPLICABLE`), the float sides ``lhs``, ``rhs`` and their bounds
    ``err`` (B, 2), ``equal`` (lhs = rhs, exactly), ``exact`` (decided past the float margin) and
    ``rational`` (decided by the rational evaluator)."""

    codes: np.ndarray
    lhs: np.ndarray
    rhs: np.ndarray
    err: np.ndarray
    equal: np.ndarray
    exact: np.ndarray
    rational: np.ndarray

    @property
    def verdicts(self) -> np.ndarray:
        """(B,) object array of :class:`~theory.verdicts.Verdict`."""
        return VERDICTS[self.codes]

    @property
    def exact_count(self) -> int:
        return int(self.exact.sum())

    @property
    def rational_count(self) -> int:
        return int(self.rational.sum())

    def counts(self) -> dict[str, int]:
        """{verdict value: how many}, every verdict of the vocabulary used here included (0 if none)."""
        got = np.bincount(self.codes, minlength=len(VERDICTS))
        return {str(v): int(c) for v, c in zip(VERDICTS, got)}


def assumed(mats: Any, assume: tuple = ()) -> np.ndarray:
    """(B,) bool: the instances of ``mats`` ({"A": (B, n, n), ...}) on which every matrix satisfies the
    hypotheses ``assume`` ("causal": every entry above the diagonal exactly 0; "positive": every entry
    > 0). A float matrix stands for its rows renormalised exactly, which keeps both properties, so they
    are read on the floats themselves.

    >>> X = np.array([[[1.0, 0.0], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5]]])
    >>> assumed({"A": X}, ("causal",)).tolist(), assumed({"A": X}, ("positive",)).tolist()
    ([True, False], [False, True])
    """
    ok = None
    for X in mats.values():
        X = np.asarray(X)
        here = np.ones(X.shape[0], dtype=bool)
        if "causal" in assume:
            here &= ~np.triu(X, 1).reshape(X.shape[0], -1).any(-1)
        if "positive" in assume:
            here &= (X > 0).reshape(X.shape[0], -1).all(-1)
        ok = here if ok is None else ok & here
    return np.ones(0, dtype=bool) if ok is None else ok


def decide(compiled: Compiled, mats: Any, assume: tuple = ()) -> Decision:
    """Certified verdicts of ``compiled`` on every instance of ``mats`` ({"A": (B, n, n), ...}, rows
    stochastic; each matrix stands for its floats with rows renormalised exactly). ``assume``: the
    theorem's hypotheses; an instance outside them is ``not-applicable`` (:func:`assumed`).

    >>> from theory.expr import A, I, delta
    >>> from numerics.expr.program import compile_statement
    >>> c = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
    >>> A2 = np.array([[[0.7, 0.3], [0.2, 0.8]], [[0.2, 0.8], [0.7, 0.3]]])
    >>> d = decide(c, {"A": A2})
    >>> [str(v) for v in d.verdicts], d.exact_count, d.rational_count
    (['tight', 'holds'], 1, 0)
    """
    inp = inputs(compiled, mats)
    B = inp.size
    ok = assumed(inp.data, assume) if assume else np.ones(B, dtype=bool)
    codes, equal = np.zeros(B, dtype=np.int8), np.zeros(B, dtype=bool)
    exact, rational = np.zeros(B, dtype=bool), np.zeros(B, dtype=bool)
    lhs, rhs, err = np.empty(B), np.empty(B), np.empty((B, 2))
    step = inp.chunk_size()
    for lo in range(0, B, step):
        hi = min(lo + step, B)
        tr = trace(compiled, inp, lo, hi)
        l, r = tr.value[compiled.lhs], tr.value[compiled.rhs]
        el, er = tr.err[compiled.lhs] * SAFE, tr.err[compiled.rhs] * SAFE
        lhs[lo:hi], rhs[lo:hi], err[lo:hi, 0], err[lo:hi, 1] = l, r, el, er
        with np.errstate(invalid="ignore", over="ignore"):
            diff, bound = r - l, (el + er) * (1 + 4 * U)
            finite = np.isfinite(diff) & np.isfinite(bound)
            sure = finite & (np.abs(diff) * (1 - 2 * U) > bound)
            tie = finite & (bound == 0) & (diff == 0)
        codes[lo:hi] = np.where(diff > 0, HOLDS, VIOLATED)
        equal[lo:hi] = tie
        exact[lo:hi] = ~sure
        rest = np.flatnonzero(~sure & ~tie & ok[lo:hi])
        if len(rest):
            tight = certify(compiled, inp, tr, lo, rest)
            equal[lo + rest[tight]] = True
            for k in rest[~tight]:
                b = lo + int(k)
                rational[b] = True
                try:
                    le, re = sides_of(compiled, {m: ExactMatrix.from_floats(inp.data[m][b]) for m in compiled.matrices})
                except ZeroDivisionError:
                    codes[b] = NOT_APPLICABLE
                    continue
                equal[b] = le == re
                codes[b] = HOLDS if le < re else VIOLATED
    codes[equal] = VIOLATED if compiled.strict else TIGHT
    codes[~ok], equal[~ok], exact[~ok] = NOT_APPLICABLE, False, False
    return Decision(codes=codes, lhs=lhs, rhs=rhs, err=err, equal=equal, exact=exact, rational=rational)
