"""Certified verdicts of a compiled statement on a batch of instances: floats where their margin
exceeds the rigorous error bound, exact or certified arithmetic for the rest and for every equality.

For ``lhs <= rhs``: ``holds`` (lhs < rhs), ``tight`` (lhs = rhs), ``violated`` (lhs > rhs). For
``lhs < rhs``: ``holds`` (lhs < rhs), ``violated`` (lhs >= rhs: an equality violates a strict
bound; :attr:`Decision.equal` marks those). For ``Eq(lhs, rhs)``: ``tight`` (lhs = rhs exactly),
``violated`` (certified different). ``not-applicable`` where the statement is undefined (a division
by an exact 0, a log of a value <= 0, a root of a negative value) or a ``where=`` hypothesis is
false, or (given the theorem's hypotheses ``assume``) where an instance does not satisfy them
(:func:`assumed`: nothing is claimed there, nothing is computed exactly); ``undecided`` where no
exact or certified method decides within its budget (a tie of values
that are not both exact: sqrt(2) sqrt(3) against sqrt(6)), never counted as tight or holds. Verdicts
are :class:`theory.verdicts.Verdict` members.

The paths, in order, per instance (the ``where=`` hypotheses first, by the same paths):

1. float (:mod:`numerics.expr.floats`): decided when |rhs - lhs| exceeds err_lhs + err_rhs (its own
   rounding included); with both errors 0 (exact-grid inputs) the float values are exact and an
   equality of floats is an exact equality;
2. for a program of the delta-only nodes (:attr:`~numerics.expr.program.Compiled.legacy`) the affine
   certificate (:mod:`numerics.expr.certify`): tight instances, batched, in exact integer arithmetic;
   then rationals (:mod:`numerics.expr.exact`), one instance at a time;
3. for any other program, one instance at a time, every node exact or a certified ball
   (:mod:`numerics.expr.certified`): rationals, exponential-polynomial quotients (zero only as an
   identity, Lindemann-Weierstrass), arb balls at increasing precision for the rest.

A tight verdict (or an equality) is only ever given by exact arithmetic. :attr:`Decision.exact`
marks the instances that went past the float margin, :attr:`Decision.rational` those that needed
the per-instance evaluator (2's rationals or 3).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from numerics.expr.certified import Instance, Undefined, batches, compare, values_of
from numerics.expr.certify import certify
from numerics.expr.floats import SAFE, inputs, trace
from numerics.expr.program import Compiled
from numerics.expr.values import approx
from numerics.stochastic import UNIT_ROUNDOFF as U, ExactMatrix
from theory.verdicts import VERDICT_OF, Code, Verdict

HOLDS, TIGHT, VIOLATED, NOT_APPLICABLE, UNDECIDED = (int(c) for c in Code)     # theory.verdicts.Code
VERDICTS = np.array(VERDICT_OF, dtype=object)
TRUE, FALSE, UNKNOWN = 1, 0, -1


@dataclass
class Decision:
    """Per instance (arrays of length B): ``codes`` (int8: :data:`HOLDS`, :data:`TIGHT`,
    :data:`VIOLATED`, :data:`NOT_APPLICABLE`, :data:`UNDECIDED`), the float sides ``lhs``, ``rhs``
    and their bounds ``err`` (B, 2) (from the float path, or the nearest floats of the exact values
    where the float path did not run), ``equal`` (lhs = rhs, exactly), ``exact`` (decided past the
    float margin) and ``rational`` (decided by the per-instance evaluator)."""

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


def _holds(c: int, op: str) -> bool:
    return c < 0 if op == "<" else c == 0 if op == "=" else c <= 0


def relation(diff: np.ndarray, bound: np.ndarray, op: str) -> np.ndarray:
    """Per instance, what the floats say of ``lhs OP rhs`` (diff = rhs - lhs within ``bound``):
    :data:`TRUE`, :data:`FALSE` or :data:`UNKNOWN`."""
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(diff) & np.isfinite(bound)
        sure = finite & (np.abs(diff) * (1 - 2 * U) > bound)
        tie = finite & (bound == 0) & (diff == 0)
    out = np.full(len(diff), UNKNOWN, dtype=np.int8)
    out[sure & (diff > 0)] = FALSE if op == "=" else TRUE
    out[sure & (diff < 0)] = FALSE
    out[tie] = FALSE if op == "<" else TRUE
    return out


def settle(compiled: Compiled, vals: list) -> tuple[int, bool]:
    """(verdict code, lhs = rhs exactly) of one instance from every node's exact or certified value."""
    undecided = False
    for lo, hi, op in compiled.where:
        c = compare(vals[lo], vals[hi])
        if c is None:
            undecided = True
        elif not _holds(c, op):
            return NOT_APPLICABLE, False
    if undecided:
        return UNDECIDED, False
    c = compare(vals[compiled.lhs], vals[compiled.rhs])
    if c is None:
        return UNDECIDED, False
    if c == 0:
        return (VIOLATED if compiled.strict else TIGHT), True
    return (VIOLATED if compiled.equal or c > 0 else HOLDS), False


def assumed(mats: Any, assume: tuple = (), roles: Any = None) -> np.ndarray:
    """(B,) bool: the instances of ``mats`` ({"A": (B, n, n), ...}) on which every stochastic matrix
    (``roles``: name -> kind; every matrix when None) satisfies the hypotheses ``assume`` ("causal":
    every entry above the diagonal exactly 0; "positive": every entry > 0; "doubly-stochastic": every
    column of the exact matrix sums to 1; "symmetric": the exact matrix is symmetric) and every logits
    matrix is symmetric under "symmetric". A float stochastic matrix stands for its rows renormalised
    exactly, which keeps zeros and signs, so "causal" and "positive" are read on the floats; the other
    two on the exact matrices.

    >>> X = np.array([[[1.0, 0.0], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5]]])
    >>> assumed({"A": X}, ("causal",)).tolist(), assumed({"A": X}, ("positive",)).tolist()
    ([True, False], [False, True])
    >>> assumed({"A": X}, ("doubly-stochastic",)).tolist()
    [False, True]
    """
    ok = None
    roles = dict(roles or {})
    for name, X in mats.items():
        role = roles.get(name, "stochastic")
        if role == "tokens" or (role == "logits" and "symmetric" not in assume):
            continue
        X = np.asarray(X, dtype=np.float64)
        here = np.ones(X.shape[0], dtype=bool)
        if role == "logits":
            here &= (X == np.swapaxes(X, 1, 2)).reshape(X.shape[0], -1).all(-1)
        else:
            if "causal" in assume:
                here &= ~np.triu(X, 1).reshape(X.shape[0], -1).any(-1)
            if "positive" in assume:
                here &= (X > 0).reshape(X.shape[0], -1).all(-1)
            for b in np.flatnonzero(here) if {"doubly-stochastic", "symmetric"} & set(assume) else ():
                E = ExactMatrix.from_floats(X[b]).rows()
                if "symmetric" in assume:
                    here[b] = all(E[i][j] == E[j][i] for i in range(len(E)) for j in range(i))
                if here[b]:
                    here[b] = all(sum(col) == 1 for col in zip(*E))
        ok = here if ok is None else ok & here
    if ok is None:                          # no matrix the hypotheses constrain: every instance is inside them
        return np.ones(len(next(iter(mats.values()))) if mats else 0, dtype=bool)
    return ok


def decide(compiled: Compiled, values: Any, assume: tuple = ()) -> Decision:
    """Certified verdicts of ``compiled`` on every instance of ``values`` ({matrix: (B, rows, cols),
    parameter: (B,) floats or exact rationals}; a stochastic matrix stands for its floats with rows
    renormalised exactly, a logits or tokens matrix for its floats). ``assume``: the theorem's
    hypotheses; an instance outside them is ``not-applicable`` (:func:`assumed`).

    >>> from theory.expr import A, I, delta
    >>> from numerics.expr.program import compile_statement
    >>> c = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
    >>> A2 = np.array([[[0.7, 0.3], [0.2, 0.8]], [[0.2, 0.8], [0.7, 0.3]]])
    >>> d = decide(c, {"A": A2})
    >>> [str(v) for v in d.verdicts], d.exact_count, d.rational_count
    (['tight', 'holds'], 1, 0)
    """
    batch = None if compiled.legacy else batches(compiled, values)
    inp = inputs(compiled, values)
    B = inp.size
    codes, equal = np.zeros(B, dtype=np.int8), np.zeros(B, dtype=bool)
    exact, rational = np.zeros(B, dtype=bool), np.zeros(B, dtype=bool)
    lhs, rhs, err = np.full(B, np.nan), np.full(B, np.nan), np.full((B, 2), np.inf)
    ok = np.ones(B, dtype=bool)
    if assume:
        ok = assumed({m: inp.data[m] for m in compiled.matrices}, tuple(assume), dict(compiled.roles))

    def instance(b: int) -> Instance:
        if batch is not None:
            return batch.instance(b)
        stoch = {m: ExactMatrix.from_floats(inp.data[m][b]) for m in compiled.matrices}
        return Instance({}, {}, inp.n, None, stoch)

    def one(b: int, floated: bool) -> None:
        if not ok[b]:
            codes[b] = NOT_APPLICABLE
            return
        rational[b] = exact[b] = True
        try:
            vals = values_of(compiled, instance(b))
        except Undefined:
            codes[b] = NOT_APPLICABLE
            return
        codes[b], equal[b] = settle(compiled, vals)
        if not floated:
            (lhs[b], err[b, 0]), (rhs[b], err[b, 1]) = approx(vals[compiled.lhs]), approx(vals[compiled.rhs])

    step = inp.chunk_size()
    for lo in range(0, B, step):
        hi = min(lo + step, B)
        tr = trace(compiled, inp, lo, hi)
        _chunk(compiled, inp, tr, lo, hi, (codes, equal, exact, lhs, rhs, err), one, ok[lo:hi])
    return Decision(codes=codes, lhs=lhs, rhs=rhs, err=err, equal=equal, exact=exact, rational=rational)


def _side(tr: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    return tr.value[k], tr.err[k] * SAFE


def _float_relation(tr: Any, lo_node: int, hi_node: int, op: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    (l, el), (r, er) = _side(tr, lo_node), _side(tr, hi_node)
    with np.errstate(invalid="ignore", over="ignore"):
        diff, bound = r - l, (el + er) * (1 + 4 * U)
    return relation(diff, bound, op), diff, bound


def _chunk(compiled: Compiled, inp: Any, tr: Any, lo: int, hi: int, out: tuple, one: Any, ok: np.ndarray) -> None:
    """Instances lo..hi: the float verdicts, the certificate of ties (delta-only programs), and
    ``one(b, floated=True)`` for every instance the floats leave open; ``ok``: the instances inside
    the theorem's hypotheses (the others are not-applicable, nothing computed exactly)."""
    codes, equal, exact, lhs, rhs, err = out
    b = hi - lo
    applicable = np.where(ok, TRUE, FALSE).astype(np.int8)   # every hypothesis: TRUE, FALSE or UNKNOWN
    for l_node, r_node, op in compiled.where:
        state = _float_relation(tr, l_node, r_node, op)[0]
        applicable = np.where((applicable == FALSE) | (state == FALSE), FALSE,
                              np.where((applicable == UNKNOWN) | (state == UNKNOWN), UNKNOWN, TRUE)).astype(np.int8)
    (l, el), (r, er) = _side(tr, compiled.lhs), _side(tr, compiled.rhs)
    lhs[lo:hi], rhs[lo:hi], err[lo:hi, 0], err[lo:hi, 1] = l, r, el, er
    op = "=" if compiled.equal else "<" if compiled.strict else "<="
    state, diff, bound = _float_relation(tr, compiled.lhs, compiled.rhs, op)
    with np.errstate(invalid="ignore", over="ignore"):
        tie = np.isfinite(diff) & (bound == 0) & (diff == 0)
        settled = (state != UNKNOWN) & ~tie
        codes[lo:hi] = np.where(diff > 0, HOLDS, VIOLATED)
    if compiled.equal:
        codes[lo:hi][settled] = VIOLATED
    codes[lo:hi][tie] = VIOLATED if compiled.strict else TIGHT
    equal[lo:hi] = tie & (applicable != FALSE)
    codes[lo:hi][applicable == FALSE] = NOT_APPLICABLE
    exact[lo:hi] = ~settled & (applicable != FALSE)
    ready = applicable == TRUE
    rest = np.flatnonzero(ready & ~settled & ~tie)
    if compiled.legacy and len(rest):
        tight = certify(compiled, inp, tr, lo, rest)
        codes[lo + rest[tight]] = VIOLATED if compiled.strict else TIGHT
        equal[lo + rest[tight]] = True
        rest = rest[~tight]
    for k in sorted(set(rest.tolist()) | set(np.flatnonzero(applicable == UNKNOWN).tolist())):
        one(lo + int(k), True)
