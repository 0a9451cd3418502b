"""Symmetry-free case splits of D1's and D2's bounds: the symmetry reduction of
:mod:`numerics.smt.split` checked by the solver instead of argued by hand.

The split encodings fix, by permutation symmetry, the pair of rows, the set of columns realising
the distance and the sign pattern. Here nothing is fixed: one query per

* D2's bound (P n x m, Q m x p): pair i < j of rows of PQ, *every* set T of columns of Q (all 2^p)
  and *every* sign pattern sigma in {+, -, 0}^m of u = P_i - P_j that a zero-sum vector can have
  (all 3^m but the 2 (2^m - 1) with a "+" and no "-" or a "-" and no "+": u sums to 0), asking for
  sum_{t in T} sum_k u_k Q_kt > delta(P) delta(Q) (factors: upper bounds, as in the split);
* D1's bound (A n x n): pair i < j of rows of (I+A)/2 and every set S of columns (all 2^n), asking
  for sum_{k in S} (Ahat_ik - Ahat_jk) > (1 + delta(A))/2.

That the cases cover every counterexample needs no symmetry: a counterexample has a pair (i, j)
whose distance exceeds the bound, T (or S) = the columns where row i exceeds row j realises it, and
sigma is the sign vector of P_i - P_j (a zero-sum vector's, so one of the patterns enumerated).
All queries ``unsat`` prove the bound at that size with no step argued by hand.

Every case can fail (``Statement.mutation``, tests/numerics/test_smt_mutations.py): with the bound
lowered by 2 (D1) or 1 (D2) each case's query is ``sat``, and the model satisfies the case and the
lowered inequality in exact arithmetic (:func:`case_fails`), so no case is empty by construction. :func:`compare` runs the exhaustive and the split encoding of a statement at a
size and says whether they agree (the record the prove family stores).

>>> len(d2_bound_cases((2, 2, 2))), len(d1_bound_cases((3,))), len(sign_patterns(3))
(12, 24, 13)
"""
from __future__ import annotations

from dataclasses import replace
from itertools import product
from typing import Any

from fractions import Fraction

import z3

from numerics.smt import encode as E
from numerics.smt import exact as X
from numerics.smt.solve import SmtResult, decide
from numerics.smt.statements import STATEMENTS, Mutation, Statement

SLACK = {"d1": 2, "d2": 1}      # the mutation lowers the bound by this much: every case is then sat


def subsets(p: int) -> list[tuple[int, ...]]:
    """Every subset of range(p), the empty and the full set included (2^p)."""
    return [tuple(t for t in range(p) if mask >> t & 1) for mask in range(2 ** p)]


def sign_patterns(m: int) -> list[tuple[int, ...]]:
    """The sign vectors in {+1, -1, 0}^m that a nonzero-or-zero vector summing to 0 can have: both
    signs present, or all zero."""
    return [s for s in product((1, -1, 0), repeat=m) if (1 in s) == (-1 in s)]


def _signs(sigma: tuple) -> str:
    return "".join("+-0"[(1, -1, 0).index(s)] for s in sigma)


def d2_bound_cases(dims: tuple, wrong: bool = False, slack: int = 0) -> list:
    """One query per (pair i < j, T, sigma); ``wrong``: the strict bound (>= instead of >);
    ``slack``: the mutation, the bound lowered by that much."""
    n, m, p = dims
    out = []
    for (i, j), T, sigma in product(E.pairs(n), subsets(p), sign_patterns(m)):
        c: list = []
        P, Q = E.stochastic("P", n, m, c), E.stochastic("Q", m, p, c)
        u = [P[i][k] - P[j][k] for k in range(m)]
        c += [u[k] > 0 if s > 0 else u[k] < 0 if s < 0 else u[k] == 0 for k, s in enumerate(sigma)]
        DP, DQ = E.delta_upper(P, "dP", c), E.delta_upper(Q, "dQ", c)
        lhs = z3.Sum([u[k] * Q[k][t] for k in range(m) if sigma[k] for t in T] or [z3.RealVal(0)])
        c.append(lhs >= DP * DQ if wrong else lhs > DP * DQ - slack)
        out.append((f"({i},{j}) T={set(T) or '{}'} signs {_signs(sigma)}", c, {"P": P, "Q": Q}))
    return out


def d1_bound_cases(dims: tuple, wrong: bool = False, slack: int = 0) -> list:
    """One query per (pair i < j of (I+A)/2, S); linear. ``wrong``: the strict bound; ``slack``: the
    mutation, the bound lowered by that much."""
    n = dims[0]
    out = []
    for (i, j), S in product(E.pairs(n), subsets(n)):
        c: list = []
        A = E.stochastic("A", n, n, c)
        H = E.residual(A)
        DA = E.delta_upper(A, "dA", c)
        gap = z3.Sum([H[i][k] - H[j][k] for k in S] or [z3.RealVal(0)])
        c.append(gap >= (1 + DA) / 2 if wrong else gap > (1 + DA) / 2 - slack)
        out.append((f"({i},{j}) S={set(S) or '{}'}", c, {"A": A}))
    return out


def cases(kind: str, dims: tuple) -> dict[str, tuple]:
    """Query label -> (i, j, column set, sign pattern or None) of the exhaustive cases at ``dims``."""
    if kind == "d1":
        return {f"({i},{j}) S={set(S) or '{}'}": (i, j, S, None) for (i, j), S in product(E.pairs(dims[0]),
                                                                                          subsets(dims[0]))}
    n, m, p = dims
    return {f"({i},{j}) T={set(T) or '{}'} signs {_signs(sg)}": (i, j, T, sg)
            for (i, j), T, sg in product(E.pairs(n), subsets(p), sign_patterns(m))}


def case_fails(kind: str) -> Any:
    """The exact predicate of the mutation: the model (Fractions) lies in the case (its sign pattern
    of P_i - P_j) and the case's sum exceeds the lowered bound, delta's exact values in the bound."""
    def fails(label: str, mats: dict) -> bool:
        if kind == "d1":
            A = mats["A"]
            i, j, S, _ = cases(kind, (len(A),))[label]
            H = X.residual(A)
            return sum((H[i][k] - H[j][k] for k in S), Fraction(0)) > (1 + X.delta(A)) / 2 - SLACK[kind]
        P, Q = mats["P"], mats["Q"]
        i, j, T, sigma = cases(kind, (len(P), len(Q), len(Q[0])))[label]
        u = [P[i][k] - P[j][k] for k in range(len(Q))]
        inside = all((x > 0) if s > 0 else (x < 0) if s < 0 else (x == 0) for x, s in zip(u, sigma))
        lhs = sum((u[k] * Q[k][t] for k in range(len(Q)) if sigma[k] for t in T), Fraction(0))
        return inside and lhs > X.delta(P) * X.delta(Q) - SLACK[kind]
    return fails


def _statement(key: str, build: Any, wrong: bool = False, at: tuple = ()) -> Statement:
    base = STATEMENTS[key]
    strict = STATEMENTS[f"{key}.strict"]
    if wrong:
        return replace(strict, key=f"{key}.exhaustive.wrong", encoding="exhaustive", at=at,
                       text=f"{strict.text} (exhaustive split)", build=lambda dims: build(dims, True))
    kind = base.kind
    return replace(base, key=f"{key}.exhaustive", encoding="exhaustive",
                   text=f"{base.text}, split on every pair, column set and sign pattern (no symmetry)",
                   build=lambda dims: build(dims, False),
                   mutation=Mutation(f"every case with the bound lowered by {SLACK[kind]}",
                                     lambda dims: build(dims, False, SLACK[kind]), case_fails(kind),
                                     (3,) if kind == "d1" else (2, 2, 2)))


EXHAUSTIVE: dict[str, Statement] = {s.key: s for s in (
    _statement("d1.bound", d1_bound_cases),
    _statement("d2.bound", d2_bound_cases),
    _statement("d1.bound", d1_bound_cases, wrong=True, at=(3,)),
    _statement("d2.bound", d2_bound_cases, wrong=True, at=(2, 2, 2)),
)}
SPLIT_OF = {"d1.bound.exhaustive": "d1.bound.split", "d2.bound.exhaustive": "d2.bound.split"}


def solver_status(r: SmtResult) -> dict[str, str]:
    """Each solver's own answer for a result of :func:`numerics.smt.solve.decide` (which proves only
    what z3 *and* cvc5 prove): ``{"z3": ..., "cvc5": ...}``, each proved / counterexample / undecided
    ("" where cvc5 did not run)."""
    z3_ = r.status if r.status != "undecided" or not r.reason.startswith("z3 unsat") else "proved"
    return {"z3": z3_, "cvc5": getattr(r, "cvc5", "")}


def compare(key: str, dims: tuple, timeout: float = 120.0) -> dict[str, Any]:
    """The exhaustive encoding ``key`` and its split twin at ``dims``, each within ``timeout`` per
    solver: ``{"exhaustive": SmtResult, "split": SmtResult, "agree": {solver: True / False / None}}``
    per solver (None when either encoding is undecided for that solver: nothing to compare)."""
    from numerics.smt.split import SPLIT, decide_split

    ex: SmtResult = decide(EXHAUSTIVE[key], tuple(dims), timeout)
    sp: SmtResult = decide_split(SPLIT[SPLIT_OF[key]], tuple(dims), timeout)
    a, b = solver_status(ex), solver_status(sp)
    agree = {s: None if {a[s], b[s]} & {"undecided", ""} else a[s] == b[s] for s in ("z3", "cvc5")}
    return {"exhaustive": ex, "split": sp, "agree": agree, "status": {"exhaustive": a, "split": b}}
