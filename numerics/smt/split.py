"""Case-split encoding of D2's bound delta(PQ) <= delta(P) delta(Q), as its proof splits.

A counterexample has a pair (i, j) of rows of PQ and a set T of columns with
sum_{t in T} ((PQ)_it - (PQ)_jt) > delta(P) delta(Q). The statement is invariant under permuting
P's rows, Q's columns, and P's columns together with Q's rows; so (i, j) = (0, 1), T = the first s
columns, and the sign pattern of u = P_0 - P_1 is: positive on the first a columns, negative on the
next b, zero on the rest (a, b >= 1, u != 0). Swapping rows 0 and 1 maps (a, b, T) to (b, a, T's
complement), so a <= b; permuting within the positive (negative) columns orders them so that
column 0 has the largest Q_k(T) = sum_{t in T} Q_kt among them (column a the smallest). Each case is one small query: the only nonlinear terms are the products
u_k * Q_kt with signs known and delta(P) * delta(Q), whose factors are upper bounds (sound and
complete, :func:`numerics.smt.encode.delta_upper`). All cases ``unsat`` prove the bound at that
size; the symmetry argument above is the one step not checked by the solver.

>>> [case for case in cases((2, 3, 2))]
[(1, 1, 1), (1, 1, 2)]
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import z3

from numerics.smt import encode as E
from numerics.smt import exact as X
from numerics.smt.solve import SmtResult, decide
from numerics.smt.statements import (STATEMENTS, Mutation, Statement, d1_iff_fails, d2_iff_fails, d2_iff_holds,
                                     strict_fails)


def cases(dims: tuple) -> list[tuple[int, int, int]]:
    """(s, a, b): |T| = s in 1..p-1, a <= b, a + b <= m."""
    n, m, p = dims
    return [(s, a, b) for s in range(1, p) for a in range(1, m) for b in range(a, m - a + 1)]


def d2_bound_case(dims: tuple, case: tuple, wrong: bool = False) -> tuple[str, list, dict]:
    n, m, p = dims
    s, a, b = case
    c: list = []
    P, Q = E.stochastic("P", n, m, c), E.stochastic("Q", m, p, c)
    u = [P[0][k] - P[1][k] for k in range(m)]
    c += [u[k] > 0 for k in range(a)] + [u[k] < 0 for k in range(a, a + b)] + [u[k] == 0 for k in range(a + b, m)]
    DP, DQ = E.delta_upper(P, "dP", c), E.delta_upper(Q, "dQ", c)
    q = [z3.Sum(Q[k][:s]) for k in range(m)]                    # Q_k(T)
    c += [q[0] >= q[k] for k in range(1, a)] + [q[a] <= q[k] for k in range(a + 1, a + b)]
    lhs = z3.Sum([u[k] * Q[k][t] for k in range(a + b) for t in range(s)])
    c.append(lhs >= DP * DQ if wrong else lhs > DP * DQ)          # wrong: the strict bound
    return (f"|T|={s},|S+|={a},|S-|={b}", c, {"P": P, "Q": Q})


def d1_bound_cases(dims: tuple, wrong: bool = False) -> list:
    """D1's bound with the pair of (I+A)/2 fixed to (0, 1) (simultaneous row and column permutations
    of A) and the set S of columns where row 0 of (I+A)/2 exceeds row 1: S contains 0, not 1, and by
    permuting positions 2..n-1 it is {0} plus the first r of them. Each case is linear, without If."""
    n = dims[0]
    out = []
    for r in range(n - 1):
        c: list = []
        A = E.stochastic("A", n, n, c)
        H = E.residual(A)
        DA = E.delta_upper(A, "dA", c)
        S = [0] + list(range(2, 2 + r))
        gap = z3.Sum([H[0][k] - H[1][k] for k in S])
        c.append(gap >= (1 + DA) / 2 if wrong else gap > (1 + DA) / 2)      # wrong: the strict bound
        out.append((f"|S|={len(S)}", c, {"A": A}))
    return out


def d1_iff_cases(dims: tuple, wrong: bool = False, mutant: bool = False) -> list:
    """D1's equality iff with the pair fixed to (0, 1) by symmetry: "if" (the pair attains delta(A)
    and is mutually self-dominant, but its rows of (I+A)/2 are closer than (1 + delta(A))/2) and
    "only-if" (the pair's rows of (I+A)/2 attain (1 + delta(A))/2, and no maximising pair of A is
    mutually self-dominant). ``mutant``: "if" with 'mutually' dropped, "only-if" with strict dominance."""
    n = dims[0]
    c: list = []
    A = E.stochastic("A", n, n, c)
    H = E.residual(A)
    d01 = E.tv(A[0], A[1])
    c += [d01 >= E.tv_upper(A[i], A[j], c) for i, j in E.pairs(n) if (i, j) != (0, 1)]
    dom = A[0][0] >= A[1][0] if wrong or mutant else E.mutually_self_dominant(A, 0, 1)   # 'mutually' dropped
    c += [dom, E.tv_upper(H[0], H[1], c) < (1 + d01) / 2]
    g: list = []
    B = E.stochastic("A", n, n, g)
    HB = E.residual(B)
    DB, dB = E.delta_exact(B, "dA", g)
    g += [z3.Not(E.d1_condition(B, DB, dB, mutual=not wrong, strict=mutant)), E.tv(HB[0], HB[1]) >= (1 + DB) / 2]
    return [("if", c, {"A": A}), ("only-if", g, {"A": B})]


def d2_bound_cases(dims: tuple, wrong: bool = False) -> list:
    return [d2_bound_case(dims, case, wrong) for case in cases(dims)]


def _signs(c: list, u: list, a: int, b: int) -> None:
    c += [u[k] > 0 for k in range(a)] + [u[k] < 0 for k in range(a, a + b)] + [v == 0 for v in u[a + b:]]


def d2_iff_cases(dims: tuple, wrong: bool = False, mutant: bool = False) -> list:
    """D2's equality iff, split as :func:`d2_bound_case` (same symmetries: the pair of rows, T, the
    sign pattern of u = P_0 - P_1 ordered within S+ and S-).

    "if" (one query per (a, b)): the pair (0, 1) attains delta(P) (so delta(P) = sum_{k in S+} u_k),
    (a) and (b) hold for it, delta(Q) > 0, and its rows of PQ are closer than delta(P) delta(Q).
    "only-if" (one per (s, a, b)): the rows 0, 1 of PQ attain delta(P) delta(Q) > 0 on T, and no
    pair attaining delta(P) satisfies (a) and (b). It carries one lemma, D2's bound for the two rows:
    sum_{t in T} (uQ)_t <= (sum_{k in S+} u_k) delta(Q), proved at the same size by ``d2.bound.split``
    (a 2-row P embeds in an n-row one by repeating a row). ``mutant``: every "if" case asks for rows
    of PQ at most (not less than) delta(P) delta(Q) apart, every "only-if" case for D2's condition and
    delta(P) = 1 failing (each case must then be satisfiable)."""
    n, m, p = dims
    ab = [(a, b) for a in range(1, m) for b in range(a, m - a + 1)]
    out = []
    for a, b in ab:
        c: list = []
        P, Q = E.stochastic("P", n, m, c), E.stochastic("Q", m, p, c)
        u = [P[0][k] - P[1][k] for k in range(m)]
        _signs(c, u, a, b)
        DP = z3.Sum(u[:a])
        c += [DP >= E.tv_upper(P[i], P[j], c) for i, j in E.pairs(n) if (i, j) != (0, 1)]
        DQ = E.delta_upper(Q, "dQ", c)
        plus, minus = range(a), range(a, a + b)
        c += [E.tv(Q[k], Q[l]) == DQ for k in plus for l in minus] + [DQ > 0]
        for t in range(p if not wrong else 0):                            # wrong: (b) dropped
            up = z3.Or([Q[k][t] > Q[l][t] for k in plus for l in minus])
            down = z3.Or([Q[k][t] < Q[l][t] for k in plus for l in minus])
            c.append(z3.Not(z3.And(up, down)))
        R = E.matmul(P, Q)
        c.append(E.tv_upper(R[0], R[1], c) <= DP * DQ if mutant else E.tv_upper(R[0], R[1], c) < DP * DQ)
        out.append((f"if |S+|={a},|S-|={b}", c, {"P": P, "Q": Q}))
    for s, a, b in cases(dims):
        c = []
        P, Q = E.stochastic("P", n, m, c), E.stochastic("Q", m, p, c)
        u = [P[0][k] - P[1][k] for k in range(m)]
        _signs(c, u, a, b)
        DP, dP = E.delta_exact(P, "dP", c)
        DQ, dQ = E.delta_exact(Q, "dQ", c)
        c += [DP > 0, DQ > 0, z3.Not(E.d2_condition(P, Q, DP, DQ, dP, dQ, cancel=not wrong, unit=mutant))]
        q = [z3.Sum(Q[k][:s]) for k in range(m)]
        c += [q[0] >= q[k] for k in range(1, a)] + [q[a] <= q[k] for k in range(a + 1, a + b)]
        lhs = z3.Sum([u[k] * Q[k][t] for k in range(a + b) for t in range(s)])
        c += [lhs >= DP * DQ, lhs <= z3.Sum(u[:a]) * DQ]          # the lemma: D2's bound for rows 0, 1
        out.append((f"only-if |T|={s},|S+|={a},|S-|={b}", c, {"P": P, "Q": Q}))
    return out


def decide_split(st: Statement, dims: tuple, timeout: float = 60.0) -> SmtResult:
    """The split encoding of ``st`` (one of :data:`SPLIT`; its ``build`` is the split) at ``dims``:
    every case within one budget. The same as :func:`numerics.smt.solve.decide` (kept for callers)."""
    return decide(st, dims, timeout)


_BUILDERS = {"d2.bound.split": d2_bound_cases, "d2.iff.split": d2_iff_cases, "d1.bound.split": d1_bound_cases,
             "d1.iff.split": d1_iff_cases}


def _builder(key: str, **kw: bool) -> Callable[[tuple], list]:
    cases = _BUILDERS[key]
    return lambda dims: cases(tuple(dims), **kw)


def _d1_iff_split_fails(label: str, m: dict) -> bool:
    """"if" (pair (0, 1) attaining delta(A), one-sided dominance, its rows of (I+A)/2 too close) per
    pair; "only-if" as :func:`numerics.smt.statements.d1_iff_fails`."""
    A = m["A"]
    if label != "if":
        return d1_iff_fails(label, m)
    H, D = X.residual(A), X.delta(A)
    return X.tv(A, 0, 1) == D and A[0][0] >= A[1][0] and X.tv(H, 0, 1) < (1 + D) / 2


def _d2_iff_split_fails(label: str, m: dict) -> bool:
    """"if" cases: pair (0, 1) attains delta(P), satisfies (a) and (b), and its rows of PQ are at most
    delta(P) delta(Q) apart (the flipped claim "more than" fails); "only-if" as :func:`d2_iff_fails`."""
    P, Q = m["P"], m["Q"]
    if not label.startswith("if"):
        return d2_iff_fails(label, P, Q)
    DP, DQ = X.delta(P), X.delta(Q)
    return (X.tv(P, 0, 1) == DP and DQ > 0 and X.d2_pair(P, Q, 0, 1)
            and X.tv(X.product(P, Q), 0, 1) <= DP * DQ)


_MUTATIONS = {
    "d1.bound": Mutation("every case with the bound made strict", _builder("d1.bound.split", wrong=True),
                         strict_fails(STATEMENTS["d1.bound.strict"].holds), (3,)),
    "d1.iff": Mutation("'if': 'mutually' dropped; 'only-if': strict self-dominance",
                       _builder("d1.iff.split", mutant=True), _d1_iff_split_fails, (3,)),
    "d2.bound": Mutation("every case with the bound made strict", _builder("d2.bound.split", wrong=True),
                         strict_fails(STATEMENTS["d2.bound.strict"].holds), (3, 3, 3)),
    "d2.iff": Mutation("'if' cases: '<' flipped to '<='; 'only-if' cases: the condition and delta(P) = 1",
                       _builder("d2.iff.split", mutant=True), _d2_iff_split_fails, (3, 3, 3)),
}


def _split(key: str, text: str) -> Statement:
    return replace(STATEMENTS[key], key=f"{key}.split", encoding="split", text=text,
                   build=_builder(f"{key}.split"), mutation=_MUTATIONS[key])


def _wrong(key: str, text: str, at: tuple, holds: Callable[[dict], bool]) -> Statement:
    """The split encoding of ``key`` with a deliberate defect (``holds``: the defective statement)."""
    return replace(STATEMENTS[key], key=f"{key}.split.wrong", encoding="split", at=at, wrong=True,
                   text=f"WRONG: {text} (split encoding)", holds=holds, build=_builder(f"{key}.split", wrong=True),
                   needs=(), mutation=None)


def _one_sided_pairwise(m: dict) -> bool:
    """The defective split statement of d1.iff.split.wrong, as its queries read it: every pair attaining
    delta(A) with A_ii >= A_ji has its rows of (I+A)/2 at (1 + delta(A))/2; equality needs such a pair."""
    A = m["A"]
    H, D = X.residual(A), X.delta(A)
    pairs = [(i, j) for i in range(len(A)) for j in range(len(A))
             if i != j and X.tv(A, i, j) == D and A[i][i] >= A[j][i]]
    return all(X.tv(H, i, j) == (1 + D) / 2 for i, j in pairs) and (not X.d1_equality(A) or bool(pairs))


def _no_b(m: dict) -> bool:
    return d2_iff_holds(m["P"], m["Q"], cancel=False)


SPLIT: dict[str, Statement] = {s.key: s for s in (
    _split("d1.bound", "delta((I+A)/2) <= (1+delta(A))/2, split on the pair and the sign set"),
    _split("d1.iff", "D1 equality iff, the pair fixed by symmetry"),
    _split("d2.bound", "delta(PQ) <= delta(P) delta(Q), split on the maximising pair, T and signs"),
    _split("d2.iff", "D2 equality iff, split as D2's bound; uses D2's bound for two rows"),
    _wrong("d1.bound", "the strict bound", (3,), STATEMENTS["d1.bound.strict"].holds),
    _wrong("d1.iff", "'mutually' dropped", (3,), _one_sided_pairwise),
    _wrong("d2.bound", "the strict bound", (2, 2, 2), STATEMENTS["d2.bound.strict"].holds),
    _wrong("d2.iff", "D2's condition without (b), no cancelling column", (2, 3, 3), _no_b),
)}
