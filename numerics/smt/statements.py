"""The Dobrushin statements (docs/theory.md §1) and deliberately wrong variants, as SMT queries.

A :class:`Statement` at size n is a list of *queries*, each a set of z3 constraints whose models are
exactly the counterexamples of one direction of the statement: all ``unsat`` proves it at that size,
a ``sat`` model is a counterexample. ``holds(mats)`` evaluates the statement exactly on rational
matrices (:mod:`numerics.smt.exact`), so a model is re-checked independently of the encoding.

Every true statement carries a :class:`Mutation`: its queries, each changed so that it must come back
``sat`` (a condition too weak or too strong, an inequality flipped), with the exact predicate its
counterexample must satisfy; so every query (each half of an iff, each case of a split) is shown able
to fail. ``needs`` names the statements it relies on at the same size (its queries use "<" where the
negation of "=" is "!=", which the bound makes equivalent): they are proved first, and a statement
is never reported proved at a size where a premise is not (either encoding of a premise counts).

Sizes: D1 and the causal corollary on n x n matrices; D2 on P (n x n), Q (n x n) (cube n x n x n);
the two-layer chain on A_1, A_2 (n x n). Encodings without symmetry reduction ("direct") are fully
mechanical; :mod:`numerics.smt.split` adds case-split encodings that use the statement's symmetries.

>>> sorted(STATEMENTS)[:3]
['causal', 'causal.any', 'chain']
>>> STATEMENTS["d1.iff.one-sided"].wrong, STATEMENTS["d1.iff.one-sided"].theorem
(True, 'dobrushin.factor')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import z3

from numerics.smt import encode as E
from numerics.smt import exact as X

Query = tuple[str, list, dict]          # (label, constraints, {matrix name: z3 matrix})


@dataclass(frozen=True)
class Mutation:
    text: str                           # what is changed, in words
    build: Callable[[tuple], list]      # dims -> the statement's queries, each mutated (same labels)
    fails: Callable[[str, dict], bool]  # (query label, exact matrices) -> the mutated claim fails there
    at: tuple                           # the dims at which every mutated query must come back sat


@dataclass(frozen=True)
class Statement:
    key: str                            # "d1.iff", "d2.bound.strict", ...
    theorem: str                        # the registry id it belongs to (or perturbs)
    text: str                           # the statement in words
    kind: str                           # "d1" (matrix A), "d2" (P, Q), "chain" (A1, A2)
    build: Callable[[tuple], list]      # dims -> [Query]; dims (n,) for d1 and chain, (n, m, p) for d2
    holds: Callable[[dict], bool]       # exact evaluation on {name: Fraction matrix}
    wrong: bool = False                 # a deliberately wrong variant: a counterexample is expected
    at: tuple = ()                      # a wrong variant: the dims where it is refuted (queried there only)
    encoding: str = "direct"
    needs: tuple = ()                   # statement keys proved first, at premise_dims (either encoding)
    mutation: Optional[Mutation] = None  # every true statement has one (tests/numerics/test_smt_mutations.py)

    def dims(self, n: int) -> tuple:
        """The dims of size n: (n,) for D1 and the chain, the cube (n, n, n) for D2."""
        return (n, n, n) if self.kind == "d2" else (n,)

    def premise_dims(self, dims: tuple, kind: str = "") -> tuple:
        """The dims at which a premise (of ``kind``; default this statement's) must be proved: (n,)
        for a D1 premise, the cube (n, n, n) for the chain's D2 premise, else the same dims."""
        if kind == "d1":
            return (dims[0],)
        return (dims[0],) * 3 if self.kind == "chain" else tuple(dims)

    def shape(self, dims: tuple) -> str:
        text = "x".join(str(d) for d in (dims * 2 if len(dims) == 1 else dims))
        return f"2 layers of {text}" if self.kind == "chain" else text


# -- D1 ---------------------------------------------------------------------------------------------
def _d1_bound(strict: bool) -> Callable[[tuple], list]:
    def build(dims: tuple) -> list:
        n = dims[0]
        c: list = []
        A = E.stochastic("A", n, n, c)
        H = E.residual(A)
        DA = E.delta_upper(A, "dA", c)                    # delta(A) need only be small here
        lhs = [E.tv(H[i], H[j]) for i, j in E.pairs(n)]
        c.append(z3.Or([v >= (1 + DA) / 2 for v in lhs]) if strict else z3.Or([v > (1 + DA) / 2 for v in lhs]))
        return [("bound", c, {"A": A})]
    return build


def _d1_iff(mutual: bool = True, attaining: bool = True, mutant: bool = False) -> Callable[[tuple], list]:
    """``mutant``: "if" with 'mutually' dropped (too weak), "only-if" with strict dominance (too strong)."""
    def build(dims: tuple) -> list:
        n = dims[0]
        out = []
        for label in ("if", "only-if"):
            c: list = []
            A = E.stochastic("A", n, n, c)
            H = E.residual(A)
            DA, d = E.delta_exact(A, "dA", c)
            cond = E.d1_condition(A, DA, d, mutual and not (mutant and label == "if"), attaining,
                                  strict=mutant and label == "only-if")
            if label == "if":                             # condition, but delta(Ahat) < (1 + delta(A))/2
                c.append(cond)
                c += [E.tv_upper(H[i], H[j], c) < (1 + DA) / 2 for i, j in E.pairs(n)]
            else:                                         # equality, but no pair satisfies the condition
                c.append(z3.Not(cond))
                c.append(z3.Or([E.tv(H[i], H[j]) >= (1 + DA) / 2 for i, j in E.pairs(n)]))
            out.append((label, c, {"A": A}))
        return out
    return build


def _causal(causal: bool, mutant: bool = False) -> Callable[[tuple], list]:
    """``mutant``: "equality" without causality, "through-first" through row 1 instead of row 0."""
    def build(dims: tuple) -> list:
        n = dims[0]
        out = []
        for label in ("equality", "through-first"):
            c: list = []
            A = E.stochastic("A", n, n, c)
            if causal and not (mutant and label == "equality"):
                E.lower_triangular(A, c)
            DA, d = E.delta_exact(A, "dA", c)
            if label == "equality":                       # delta(Ahat) < (1 + delta(A))/2
                H = E.residual(A)
                c += [E.tv_upper(H[i], H[j], c) < (1 + DA) / 2 for i, j in E.pairs(n)]
            else:                                         # no pair (0, j) attains delta(A)
                r = 1 if mutant else 0
                c += [d[(min(r, j), max(r, j))] < DA for j in range(n) if j != r]
            out.append((label, c, {"A": A}))
        return out
    return build


def _holds_d1_bound(strict: bool) -> Callable[[dict], bool]:
    def holds(m: dict) -> bool:
        lhs, rhs = X.delta(X.residual(m["A"])), (1 + X.delta(m["A"])) / 2
        return lhs < rhs if strict else lhs <= rhs
    return holds


def _holds_d1_iff(mutual: bool = True, attaining: bool = True) -> Callable[[dict], bool]:
    return lambda m: X.d1_equality(m["A"]) == X.d1_condition(m["A"], mutual, attaining)


def _holds_causal(causal: bool) -> Callable[[dict], bool]:
    def holds(m: dict) -> bool:
        A = m["A"]
        if causal and not X.lower_triangular(A):
            return True                                   # hypothesis fails: nothing claimed
        D = X.delta(A)
        return X.d1_equality(A) and any(X.tv(A, 0, j) == D for j in range(1, len(A)))
    return holds


# -- D2 and the two-layer chain ---------------------------------------------------------------------
def _d2_bound(strict: bool) -> Callable[[tuple], list]:
    def build(dims: tuple) -> list:
        n, m, p = dims
        c: list = []
        P, Q = E.stochastic("P", n, m, c), E.stochastic("Q", m, p, c)
        DP, DQ = E.delta_upper(P, "dP", c), E.delta_upper(Q, "dQ", c)
        R = E.matmul(P, Q)
        lhs = [E.tv(R[i], R[j]) for i, j in E.pairs(n)]
        c.append(z3.Or([v >= DP * DQ for v in lhs]) if strict else z3.Or([v > DP * DQ for v in lhs]))
        return [("bound", c, {"P": P, "Q": Q})]
    return build


def _d2_queries(P: list, Q: list, c0: list, mats: dict, cancel: bool, attaining: bool, always: bool,
                mutant: bool = False) -> list:
    """The two directions of D2's equality iff for given P, Q (constraints so far in ``c0``).
    ``mutant``: "if" with "<" flipped to "<=" (rows of PQ at most delta(P) delta(Q) apart: satisfiable
    wherever the condition is), "only-if" with "and delta(P) = 1" added to the condition."""
    out = []
    for label in ("if", "only-if"):
        c = list(c0)
        DP, dP = E.delta_exact(P, "dP", c)
        DQ, dQ = E.delta_exact(Q, "dQ", c)
        c += [DP > 0, DQ > 0]                             # a zero factor: equality is trivial
        if always:
            cond = z3.BoolVal(True)
        else:
            cond = E.d2_condition(P, Q, DP, DQ, dP, dQ, cancel, attaining, unit=mutant and label == "only-if")
        R = E.matmul(P, Q)
        if label == "if":
            c.append(cond)
            c += [E.tv_upper(R[i], R[j], c) <= DP * DQ if mutant else E.tv_upper(R[i], R[j], c) < DP * DQ
                  for i, j in E.pairs(len(R))]
        else:
            c.append(z3.Not(cond))
            c.append(z3.Or([E.tv(R[i], R[j]) >= DP * DQ for i, j in E.pairs(len(R))]))
        out.append((label, c, mats))
    return out


def _d2_iff(cancel: bool = True, attaining: bool = True, always: bool = False,
            mutant: bool = False) -> Callable[[tuple], list]:
    def build(dims: tuple) -> list:
        n, m, p = dims
        c: list = []
        P, Q = E.stochastic("P", n, m, c), E.stochastic("Q", m, p, c)
        return _d2_queries(P, Q, c, {"P": P, "Q": Q}, cancel, attaining, always, mutant)
    return build


def _chain(always: bool, mutant: bool = False) -> Callable[[tuple], list]:
    def build(dims: tuple) -> list:
        n = dims[0]
        c: list = []
        A1, A2 = E.stochastic("A1", n, n, c), E.stochastic("A2", n, n, c)
        return _d2_queries(E.residual(A2), E.residual(A1), c, {"A1": A1, "A2": A2}, True, True, always, mutant)
    return build


def _holds_d2_bound(strict: bool) -> Callable[[dict], bool]:
    def holds(m: dict) -> bool:
        lhs, rhs = X.delta(X.product(m["P"], m["Q"])), X.delta(m["P"]) * X.delta(m["Q"])
        return lhs < rhs if strict else lhs <= rhs
    return holds


def d2_iff_holds(P: list, Q: list, cancel: bool = True, attaining: bool = True, always: bool = False) -> bool:
    """D2's equality iff (or a wrong variant) on one exact pair; trivially true if a factor is 0."""
    rhs = X.delta(P) * X.delta(Q)
    if rhs == 0:
        return True
    eq = X.delta(X.product(P, Q)) == rhs
    return eq == (True if always else X.d2_condition(P, Q, cancel, attaining))


def _holds_chain(always: bool) -> Callable[[dict], bool]:
    return lambda m: d2_iff_holds(X.residual(m["A2"]), X.residual(m["A1"]), always=always)


def mats_for_cross_check(st: Statement, mats: dict) -> tuple[str, dict]:
    """The (kind, matrices) the suite's evaluators see: the chain is D2 on (Ahat_2, Ahat_1)."""
    if st.kind == "chain":
        return "d2", {"P": X.residual(mats["A2"]), "Q": X.residual(mats["A1"])}
    return st.kind, mats


# -- mutations: the exact predicates their counterexamples must satisfy ------------------------------
def strict_fails(holds: Callable[[dict], bool]) -> Callable[[str, dict], bool]:
    """The mutation "the bound is strict": fails where equality is attained (``holds``: the strict bound)."""
    return lambda label, m: not holds(m)


def d1_iff_fails(label: str, m: dict) -> bool:
    """"if" mutated to one-sided dominance; "only-if" to strict dominance (see :func:`_d1_iff`)."""
    A = m["A"]
    eq = X.d1_equality(A)
    if label == "if":
        return X.d1_condition(A, mutual=False) and not eq
    return eq and not X.d1_condition(A, strict=True)


def _causal_fails(label: str, m: dict) -> bool:
    A = m["A"]
    if label == "equality":
        return not X.d1_equality(A)
    D = X.delta(A)
    return X.lower_triangular(A) and not any(X.tv(A, 1, j) == D for j in range(len(A)) if j != 1)


def d2_iff_fails(label: str, P: list, Q: list) -> bool:
    """"if" mutated to "the condition gives delta(PQ) > delta(P) delta(Q)", "only-if" to "equality
    needs the condition and delta(P) = 1" (see :func:`_d2_queries`)."""
    rhs = X.delta(P) * X.delta(Q)
    if rhs == 0:
        return False
    lhs = X.delta(X.product(P, Q))
    if label.startswith("if"):
        return X.d2_condition(P, Q) and lhs <= rhs
    return lhs == rhs and not X.d2_condition(P, Q, unit=True)


_STRICT = "the bound made strict (an equality case must exist)"
_D1_IFF = "'if': 'mutually' dropped; 'only-if': strict self-dominance"
_D2_IFF = "'if': '<' flipped to '<='; 'only-if': the condition and delta(P) = 1"
_LIST = [
    Statement("d1.bound", "dobrushin.factor", "delta((I+A)/2) <= (1+delta(A))/2", "d1",
              _d1_bound(False), _holds_d1_bound(False),
              mutation=Mutation(_STRICT, _d1_bound(True), strict_fails(_holds_d1_bound(True)), (2,))),
    Statement("d1.iff", "dobrushin.factor", "equality iff some pair attaining delta(A) is mutually self-dominant",
              "d1", _d1_iff(), _holds_d1_iff(), needs=("d1.bound",),
              mutation=Mutation(_D1_IFF, _d1_iff(mutant=True), d1_iff_fails, (3,))),
    Statement("causal", "dobrushin.factor.causal", "lower-triangular A: equality, delta(A) attained by a pair (0, j)",
              "d1", _causal(True), _holds_causal(True), needs=("d1.bound",),
              mutation=Mutation("'equality': causality dropped; 'through-first': through row 1", _causal(True, True),
                                _causal_fails, (3,))),
    Statement("d2.bound", "dobrushin.product", "delta(PQ) <= delta(P) delta(Q)", "d2",
              _d2_bound(False), _holds_d2_bound(False),
              mutation=Mutation(_STRICT, _d2_bound(True), strict_fails(_holds_d2_bound(True)), (2, 2, 2))),
    Statement("d2.iff", "dobrushin.product", "delta(PQ) = delta(P) delta(Q) > 0 iff D2's condition (a), (b)",
              "d2", _d2_iff(), lambda m: d2_iff_holds(m["P"], m["Q"]), needs=("d2.bound",),
              mutation=Mutation(_D2_IFF, _d2_iff(mutant=True), lambda label, m: d2_iff_fails(label, m["P"], m["Q"]),
                                (2, 2, 2))),
    Statement("chain", "dobrushin.product", "two layers: delta(R_2) = delta(Ahat_2) delta(Ahat_1) > 0 iff D2's "
              "condition for (Ahat_2, R_1)", "chain", _chain(False), _holds_chain(False), needs=("d2.bound",),
              mutation=Mutation(_D2_IFF, _chain(False, mutant=True), lambda label, m: d2_iff_fails(
                  label, X.residual(m["A2"]), X.residual(m["A1"])), (2,))),
    # deliberately wrong variants: each must come back sat
    Statement("d1.bound.strict", "dobrushin.factor", "WRONG: delta((I+A)/2) < (1+delta(A))/2 (strict)", "d1",
              _d1_bound(True), _holds_d1_bound(True), wrong=True, at=(3,)),
    Statement("d1.iff.one-sided", "dobrushin.factor", "WRONG: 'mutually' dropped (only A_ii >= A_ji)", "d1",
              _d1_iff(mutual=False), _holds_d1_iff(mutual=False), wrong=True, at=(3,)),
    Statement("d1.iff.any-pair", "dobrushin.factor", "WRONG: 'attaining delta(A)' dropped", "d1",
              _d1_iff(attaining=False), _holds_d1_iff(attaining=False), wrong=True, at=(3,)),
    Statement("causal.any", "dobrushin.factor.causal", "WRONG: the causal corollary without 'lower-triangular'",
              "d1", _causal(False), _holds_causal(False), wrong=True, at=(3,)),
    Statement("d2.bound.strict", "dobrushin.product", "WRONG: delta(PQ) < delta(P) delta(Q) (strict)", "d2",
              _d2_bound(True), _holds_d2_bound(True), wrong=True, at=(2, 2, 2)),
    Statement("d2.iff.always", "dobrushin.product", "WRONG: equality whenever delta(P) delta(Q) > 0", "d2",
              _d2_iff(always=True), lambda m: d2_iff_holds(m["P"], m["Q"], always=True), wrong=True, at=(2, 3, 2)),
    Statement("d2.iff.any-pair", "dobrushin.product", "WRONG: D2's condition without 'attaining delta(P)'", "d2",
              _d2_iff(attaining=False), lambda m: d2_iff_holds(m["P"], m["Q"], attaining=False), wrong=True,
              at=(3, 3, 3)),
    Statement("chain.always", "dobrushin.product", "WRONG: two layers always chain with equality", "chain",
              _chain(True), _holds_chain(True), wrong=True, at=(3,)),
]
STATEMENTS: dict[str, Statement] = {s.key: s for s in _LIST}
