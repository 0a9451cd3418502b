"""D2's equality for causal attention: when delta(PQ) = delta(P) delta(Q) for lower-triangular P, Q.

The exact condition (docs/theory.md §1, "Corollary (causal D2)"), for lower-triangular row-stochastic
n x n P and Q (row 0 is then e_0), zeros and ties allowed, with p = min_{l>=1} P_l0 and
q = min_{l>=1} Q_l0 (so delta(P) = 1 - p, delta(Q) = 1 - q):

    delta(PQ) = delta(P) delta(Q)  iff  p = 1, or q = 1, or some row l >= 1 has P_l0 = p and
                                         Q_k0 = q for every k >= 1 with P_lk > 0.

With positive entries on and below the diagonal the support of row l is {0..l}, so this reads:
Q_10 = ... = Q_{l*,0} = q for l* the *first* row minimising P_l0. The statement first conjectured
(row 1 the *unique* minimiser of P_l0 and Q_10 = q) is sufficient, not necessary: :data:`TIE_EXAMPLE`.

Here: the exact evaluators on Fractions (:func:`condition`, :func:`equality`, :func:`conjectured`),
the registry's evaluators on float arrays (:func:`causal_product_condition`, exact;
:func:`causal_product_gap`, fast), a sampler of tie- and zero-heavy exact causal pairs
(:func:`sample_pair`), and the z3 queries of both statements (:data:`STATEMENTS`, to be decided by
:func:`numerics.smt.solve.decide`; :func:`cvc5_decide` gives the second opinion on the same text).

>>> P, Q = TIE_EXAMPLE
>>> equality(P, Q), condition(P, Q), conjectured(P, Q)
(True, True, False)
"""
from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import z3

from numerics.smt import encode as E
from numerics.smt import exact as X
from numerics.smt.statements import Mutation, Statement
from theory.errors import InvalidInput

FMatrix = Sequence[Sequence[Fraction]]


def _f(rows: list) -> list[list[Fraction]]:
    return [[Fraction(v) for v in r] for r in rows]


# The equality case with a tie, P_10 = P_20: it refutes "row 1 the unique minimiser".
TIE_EXAMPLE = (_f([[1, 0, 0], ["17/28", "11/28", 0], ["17/28", "3/14", "5/28"]]),
               _f([[1, 0, 0], ["4/49", "45/49", 0], ["17/73", "9/73", "47/73"]]))


# -- exact evaluators (Fractions) -------------------------------------------------------------------
def causal(M: FMatrix) -> bool:
    return X.lower_triangular(M) and len(M) == len(M[0])


def positive(M: FMatrix) -> bool:
    """Every entry on and below the diagonal is positive."""
    return all(M[i][k] > 0 for i in range(len(M)) for k in range(i + 1))


def condition(P: FMatrix, Q: FMatrix) -> bool:
    """The exact causal D2 condition (module docstring); P, Q causal n x n, n >= 2."""
    n = len(P)
    p = min(P[l][0] for l in range(1, n))
    q = min(Q[l][0] for l in range(1, n))
    if p == 1 or q == 1:
        return True
    return any(P[l][0] == p and all(Q[k][0] == q for k in range(1, n) if P[l][k] > 0) for l in range(1, n))


def conjectured(P: FMatrix, Q: FMatrix) -> bool:
    """The statement as first conjectured (positive lower triangle, n >= 3): row 1 is the unique
    minimiser of P_l0 over l >= 1, and Q_10 is minimal among Q_l0, l >= 1."""
    ps, qs = [r[0] for r in P[1:]], [r[0] for r in Q[1:]]
    return all(ps[0] < v for v in ps[1:]) and qs[0] == min(qs)


def equality(P: FMatrix, Q: FMatrix) -> bool:
    """delta(PQ) = delta(P) delta(Q), exactly (:mod:`numerics.smt.exact`, no causal shortcut)."""
    return X.delta(X.product(P, Q)) == X.delta(P) * X.delta(Q)


def holds(mats: dict) -> bool:
    """The exact condition is D2's equality (hypothesis: both causal; otherwise nothing is claimed)."""
    P, Q = mats["P"], mats["Q"]
    if not (causal(P) and causal(Q)):
        return True
    return equality(P, Q) == condition(P, Q)


def holds_conjectured(mats: dict) -> bool:
    """The first conjecture (hypothesis: both causal with positive lower triangle, n >= 3)."""
    P, Q = mats["P"], mats["Q"]
    if not (causal(P) and causal(Q) and positive(P) and positive(Q)) or len(P) < 3:
        return True
    return equality(P, Q) == conjectured(P, Q)


# -- the registry's evaluators (float arrays in, per pair out) --------------------------------------
def _exact_pairs(P: Any, Q: Any) -> list[tuple[list, list]]:
    from numerics.stochastic import ExactMatrix, as_stochastic

    bp, bq = as_stochastic(P, "P", square=True), as_stochastic(Q, "Q", square=True)
    if bp.data.shape != bq.data.shape:
        raise InvalidInput(f"P and Q must be causal pairs of the same shape: {bp.data.shape} vs {bq.data.shape}")
    for name, b in (("P", bp), ("Q", bq)):
        if np.triu(b.data, 1).any():
            raise InvalidInput(f"{name}: not causal (an entry above the diagonal is nonzero)")
    return [(ExactMatrix.from_floats(a).rows(), ExactMatrix.from_floats(c).rows()) for a, c in zip(bp.data, bq.data)]


def causal_product_condition(P: Any, Q: Any) -> np.ndarray:
    """The causal D2 condition per pair, decided exactly on the rationals the floats represent
    (rows renormalised exactly). ``P``, ``Q``: (..., n, n) lower-triangular row-stochastic."""
    lead = np.shape(P)[:-2]
    return np.array([condition(a, c) for a, c in _exact_pairs(P, Q)], dtype=bool).reshape(lead)


def causal_product_gap(P: Any, Q: Any) -> np.ndarray:
    """delta(P) delta(Q) - delta(PQ) per pair in float64, by the causal closed forms
    delta(P) = 1 - min_{l>=1} P_l0 and delta(PQ) = max_{l>=1} (1 - (PQ)_l0): an estimate (not
    certified); equality is decided by :func:`causal_product_condition`."""
    P, Q = np.asarray(P, dtype=np.float64), np.asarray(Q, dtype=np.float64)
    dP, dQ = 1 - P[..., 1:, 0].min(-1), 1 - Q[..., 1:, 0].min(-1)
    dPQ = (1 - (P @ Q)[..., 1:, 0]).max(-1)
    return dP * dQ - dPQ


# -- random exact causal pairs, full of ties and zeros ----------------------------------------------
STYLES = ("ties", "zeros", "wide", "dyadic")


def sample_matrix(n: int, rng: random.Random, style: str) -> list[list[Fraction]]:
    """One causal n x n matrix of exact rationals. ``ties``: weights 1..3 (many equal entries);
    ``zeros``: weights 0..3 (exact zeros below the diagonal); ``wide``: weights 1..50; ``dyadic``:
    rows summing to 8 (floats exactly, ties and zeros frequent). Column 0 is often copied between
    rows (forced ties in P_l0, the case the first conjecture missed)."""
    rows = [[Fraction(1)] + [Fraction(0)] * (n - 1)]
    for l in range(1, n):
        if style == "dyadic":
            w = [0] * (l + 1)
            for _ in range(8):
                w[rng.randrange(l + 1)] += 1
        else:
            lo, hi = {"ties": (1, 3), "zeros": (0, 3), "wide": (1, 50)}[style]
            w = [rng.randint(lo, hi) for _ in range(l + 1)]
            if not any(w):
                w[rng.randrange(l + 1)] = 1
        s = sum(w)
        rows.append([Fraction(v, s) for v in w] + [Fraction(0)] * (n - 1 - l))
    if n >= 3 and style != "dyadic" and rng.random() < 0.5:            # force a tie in column 0
        a, b = rng.sample(range(1, n), 2)
        v, rest = rows[a][0], sum(rows[b][1:])
        if rest > 0 and v < 1:
            rows[b] = [v] + [x * (1 - v) / rest for x in rows[b][1:]]
    return rows


def sample_pair(n: int, rng: random.Random, style: str) -> tuple[list, list]:
    return sample_matrix(n, rng, style), sample_matrix(n, rng, style)


def exact_check(count: int, sizes: Sequence[int] = (3, 4, 5), seed: int = 0) -> dict[str, Any]:
    """``count`` exact random causal pairs over ``sizes`` and :data:`STYLES`: how many are equality
    cases, the pairs where the condition and the equality disagree (must be none), and how many
    refute the first conjecture (positive pairs only)."""
    rng = random.Random(seed)
    out: dict[str, Any] = dict(pairs=0, equality=0, disagree=[], conjecture_refuted=0, positive_pairs=0)
    for i in range(count):
        n, style = sizes[i % len(sizes)], STYLES[(i // len(sizes)) % len(STYLES)]
        P, Q = sample_pair(n, rng, style)
        eq = equality(P, Q)
        out["pairs"] += 1
        out["equality"] += eq
        if eq != condition(P, Q):
            out["disagree"].append((P, Q))
        if n >= 3 and positive(P) and positive(Q):
            out["positive_pairs"] += 1
            out["conjecture_refuted"] += eq != conjectured(P, Q)
    return out


# -- z3 queries ---------------------------------------------------------------------------------------
def _min_col0(M: list, name: str, c: list) -> z3.ArithRef:
    m = z3.Real(f"{name}min0")
    col = [M[l][0] for l in range(1, len(M))]
    c += [m <= v for v in col] + [z3.Or([m == v for v in col])]
    return m


def _cond(P: list, Q: list, p: z3.ArithRef, q: z3.ArithRef, exact: bool = True) -> z3.BoolRef:
    n = len(P)
    if not exact:                                   # the first conjecture
        return z3.And([P[1][0] < P[l][0] for l in range(2, n)] + [Q[1][0] == q])
    rows = [z3.And([P[l][0] == p] + [z3.Implies(P[l][k] > 0, Q[k][0] == q) for k in range(1, l + 1)])
            for l in range(1, n)]
    return z3.Or([p == 1, q == 1] + rows)


def _causal_pair(n: int, c: list) -> tuple:
    """Lower-triangular row-stochastic n x n matrices P, Q (their constraints appended to ``c``)."""
    P, Q = E.stochastic("P", n, n, c), E.stochastic("Q", n, n, c)
    E.lower_triangular(P, c)
    E.lower_triangular(Q, c)
    return P, Q


def _mutant(label: str) -> z3.BoolRef:
    """The mutation of a direction: "if" with the condition replaced by True (equality always), "only-if"
    by False (equality never); each must come back sat (tests/numerics/test_smt_mutations.py)."""
    return z3.BoolVal(label == "if")


def mutant_fails(label: str, mats: dict) -> bool:
    """Exact predicate of the mutation: "always equality" fails where equality does not hold, "never
    equality" where it does."""
    return equality(mats["P"], mats["Q"]) != (label == "if")


def _build(exact: bool, mutant: bool = False) -> Any:
    def build(dims: tuple) -> list:
        n = dims[0]
        out = []
        for label in ("if", "only-if"):
            c: list = []
            P, Q = _causal_pair(n, c)
            if not exact:                            # the conjecture's hypothesis: positive lower triangle
                c += [M[i][k] > 0 for M in (P, Q) for i in range(n) for k in range(i + 1)]
            p, q = _min_col0(P, "P", c), _min_col0(Q, "Q", c)
            DP, _ = E.delta_exact(P, "dP", c)        # the general delta: no causal shortcut assumed
            DQ, _ = E.delta_exact(Q, "dQ", c)
            R = E.matmul(P, Q)
            cond = _mutant(label) if mutant else _cond(P, Q, p, q, exact)
            if label == "if":                        # the condition, but delta(PQ) < delta(P) delta(Q)
                c += [cond] + [E.tv_upper(R[i], R[j], c) < DP * DQ for i, j in E.pairs(n)]
            else:                                    # equality (or more), but not the condition
                c += [z3.Not(cond), z3.Or([E.tv(R[i], R[j]) >= DP * DQ for i, j in E.pairs(n)])]
            out.append((label, c, {"P": P, "Q": Q}))
        return out
    return build


def _build_lemma(dims: tuple, mutant: bool = False) -> list:
    """The same two directions with the causal lemma of D1's corollary as an assumption (statement
    ``causal``, proved separately): delta(P) = 1 - p, delta(Q) = 1 - q, delta(PQ) = max_l (1 - (PQ)_l0).
    Small queries (no distance over all pairs); reaches larger n."""
    n = dims[0]
    out = []
    for label in ("if", "only-if"):
        c: list = []
        P, Q = _causal_pair(n, c)
        p, q = _min_col0(P, "P", c), _min_col0(Q, "Q", c)
        R = E.matmul(P, Q)
        gaps = [1 - R[l][0] for l in range(1, n)]
        cond = _mutant(label) if mutant else _cond(P, Q, p, q)
        if label == "if":
            c += [cond] + [g < (1 - p) * (1 - q) for g in gaps]
        else:
            c += [z3.Not(cond), z3.Or([g >= (1 - p) * (1 - q) for g in gaps])]
        out.append((label, c, {"P": P, "Q": Q}))
    return out


THEOREM = "dobrushin.product.causal"
_BASE = Statement("causal.d2", THEOREM, "causal P, Q: delta(PQ) = delta(P) delta(Q) iff delta(P) delta(Q) = 0 or "
                  "some l >= 1 with P_l0 = min P_i0 has Q_k0 = min Q_i0 on every k >= 1 with P_lk > 0", "d2",
                  _build(True), holds, needs=("d2.bound",),
                  mutation=Mutation("'if': condition True (always equality); 'only-if': condition False (never)",
                                    _build(True, mutant=True), mutant_fails, (3, 3, 3)))
STATEMENTS: dict[str, Statement] = {s.key: s for s in (
    _BASE,
    replace(_BASE, key="causal.d2.lemma", encoding="lemma", build=_build_lemma, needs=("d2.bound", "causal"),
            mutation=replace(_BASE.mutation, build=lambda dims: _build_lemma(dims, mutant=True)),
            text=f"{_BASE.text} (assuming the causal lemma: delta attained by pairs (0, l))"),
    replace(_BASE, key="causal.d2.conjectured", wrong=True, at=(3, 3, 3), build=_build(False), needs=(),
            mutation=None,
            holds=holds_conjectured, text="WRONG (as first conjectured): positive lower triangle, equality iff row 1 "
            "is the unique minimiser of P_l0 and Q_10 is minimal"),
)}


def cvc5_decide(st: Statement, dims: tuple, timeout: float = 60.0) -> dict[str, Any]:
    """cvc5's answer on the same SMT-LIB text as z3's (:mod:`numerics.smt.smtlib`), query by query:
    ``{"status": proved / counterexample / undecided, "seconds", "label", "counterexample"}``; a
    counterexample is re-checked exactly by ``st.holds`` (``confirmed``)."""
    import time

    from numerics.smt import smtlib

    t0 = time.perf_counter()
    out: dict[str, Any] = dict(status="proved", label="", counterexample={}, confirmed=None, solver=smtlib.version())
    for label, c, mats in st.build(tuple(dims)):
        left = timeout - (time.perf_counter() - t0)
        names = [str(x) for M in mats.values() for row in M for x in row]
        ans, _, reason, model = smtlib.run_cvc5(smtlib.text(c), max(left, 0.001), names)
        if ans == "unsat":
            continue
        out.update(label=label, status="counterexample" if ans == "sat" else "undecided", reason=reason)
        if ans == "sat" and model is not None:
            got = {k: [[model[str(x)] for x in row] for row in M] for k, M in mats.items()}
            out["counterexample"] = {k: [[str(v) for v in row] for row in M] for k, M in got.items()}
            out["confirmed"] = not st.holds(got)
        break
    out["seconds"] = time.perf_counter() - t0
    return out
