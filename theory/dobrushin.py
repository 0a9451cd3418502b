"""Theorems D1 and D2 on the Dobrushin coefficient of attention rollout, Proposition D1a (D1 at a
residual weight alpha) and the causal corollaries (docs/theory.md §1).

delta(P) = 1/2 max_{i,j} ||P_i - P_j||_1 = 1 - min_{i,j} sum_k min(P_ik, P_jk)

References
[1] R. L. Dobrushin, Central limit theorem for nonstationary Markov chains, 1956.
[2] E. Seneta, Non-negative Matrices and Markov Chains, 2nd ed., Springer 1981, §4.3.
[3] S. Abnar, W. Zuidema, Quantifying Attention Flow in Transformers, ACL 2020 (attention rollout).

Derivations here are checked by sympy when called (and by tests/theory/test_dobrushin.py):
  * :func:`derive_factor_closed_form` — the coordinate argument behind D1's slack, over all sign cases;
  * :func:`derive_lazy_closed_form` — the same at a residual weight alpha in (0, 1), any real matrix;
  * :func:`derive_two_by_two` — delta = |det| for 2x2 stochastic matrices, hence D2 equality for
    every 2x2 pair.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

import numpy as np
import sympy as sp

from theory import vocabulary as V
from theory.hypotheses import HOLDS, Hypotheses, check, hyp_all
from theory.registry import Theorem, register
from theory.hypotheses import stochastic as _stochastic  # the one check of a stochastic matrix
from theory.tolerances import ROW_TOL, row_tol  # noqa: F401  (re-exported: theory's view of the table)

n = sp.Symbol("n", integer=True, positive=True)
delta = sp.Function("delta", real=True, nonnegative=True)
A = sp.MatrixSymbol("A", n, n)
P = sp.MatrixSymbol("P", n, n)
Q = sp.MatrixSymbol("Q", n, n)
I = sp.Identity(n)
AHAT = sp.MatMul(sp.Rational(1, 2), sp.MatAdd(I, A))  # the rollout factor (I + A)/2


# -------------------------------------------------------------------------------------------------
# hypotheses (plain numpy, theory/ imports nothing from numerics/)
# -------------------------------------------------------------------------------------------------
# The one table of tolerances on |row sum - 1| by input dtype lives in theory.tolerances (sympy-free:
# numerics.stochastic imports it there); the hypotheses below use it through row_tol.


def _shape(M: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in np.shape(M))


def factor_hypotheses(inst: Any) -> Hypotheses:
    """A square row-stochastic with n >= 2."""
    return hyp_all(
        _stochastic(inst, "A"),
        lambda: check(_shape(inst)[0] == _shape(inst)[1],
                      f"A: must be square (n x n), got shape {_shape(inst)}"),
        lambda: check(_shape(inst)[0] >= 2, f"A: needs n >= 2, got n = {_shape(inst)[0]}"))


def product_hypotheses(inst: Any) -> Hypotheses:
    """(P, Q) row-stochastic with P's columns = Q's rows."""
    try:
        Pm, Qm = inst
    except (TypeError, ValueError):
        return Hypotheses(False, f"expected a pair (P, Q), got {type(inst).__name__}")
    return hyp_all(
        _stochastic(Pm, "P"), _stochastic(Qm, "Q"),
        lambda: check(_shape(Pm)[1] == _shape(Qm)[0],
                      f"P's columns must match Q's rows: P has shape {_shape(Pm)}, "
                      f"Q has shape {_shape(Qm)}"))


# -------------------------------------------------------------------------------------------------
# witnesses: instances on which equality is known to hold
# -------------------------------------------------------------------------------------------------
def factor_witness() -> np.ndarray:
    """Causal attention: row 0 is one-hot, and delta(A) is attained by the pair (0, 2)."""
    return np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])


def product_witness() -> tuple[np.ndarray, np.ndarray]:
    """Any pair of 2x2 stochastic matrices (delta = |det| is multiplicative)."""
    return np.array([[0.75, 0.25], [0.125, 0.875]]), np.array([[0.5, 0.5], [0.0625, 0.9375]])


# -------------------------------------------------------------------------------------------------
# derivations
# -------------------------------------------------------------------------------------------------
def derive_factor_closed_form() -> dict[str, sp.Expr]:
    """The coordinate argument of Theorem D1, checked over the four sign cases of (x, y).

    For a pair (i, j): x = A_ii - A_ji, y = A_jj - A_ij, S = sum_{k != i,j} |A_ik - A_jk|, so that
    d = (|x| + |y| + S)/2. The rows of (I + A)/2 differ by (e_i - e_j + A_i - A_j)/2, whose
    coordinates i, j are (1 + x)/2 and -(1 + y)/2 (and x, y >= -1), hence
        1/2 ||Ahat_i - Ahat_j||_1 = (|1 + x| + |1 + y| + S)/4 = 1/2 + d/2 - (x^- + y^-)/2.
    Returns the residual of each sign case (all must simplify to 0).
    """
    u, v, S = sp.symbols("u v S", nonnegative=True)
    out = {}
    for sx in (1, -1):
        for sy in (1, -1):
            # x = sx*u, y = sy*v; 1 + x >= 0 because entries lie in [0, 1] (u <= 1 when sx = -1)
            x, y = sx * u, sy * v
            d = (sp.Abs(x) + sp.Abs(y) + S) / 2
            lhs = ((1 + x) + (1 + y) + S) / 4
            neg = lambda t: sp.Max(0, -t)  # noqa: E731
            rhs = sp.Rational(1, 2) + d / 2 - (neg(x) + neg(y)) / 2
            out[f"x{'+' if sx > 0 else '-'}y{'+' if sy > 0 else '-'}"] = sp.simplify(lhs - rhs)
    return out


def factor_slack_formula() -> sp.Expr:
    """slack_ij = (1 + delta)/2 - (1/2 + d/2 - (x^- + y^-)/2) = ((delta - d) + x^- + y^-)/2."""
    dl, d, xm, ym = sp.symbols("delta d x^- y^-", nonnegative=True)
    return sp.simplify((1 + dl) / 2 - (sp.Rational(1, 2) + d / 2 - (xm + ym) / 2))


def derive_two_by_two() -> dict[str, sp.Expr]:
    """delta = |det| for 2x2 stochastic matrices, and D2 equality for every 2x2 pair."""
    a, b, c, e = sp.symbols("a b c e", real=True)
    Pm = sp.Matrix([[a, 1 - a], [b, 1 - b]])
    Qm = sp.Matrix([[c, 1 - c], [e, 1 - e]])
    tv = lambda M: (sp.Abs(M[0, 0] - M[1, 0]) + sp.Abs(M[0, 1] - M[1, 1])) / 2  # noqa: E731
    PQ = (Pm * Qm).applyfunc(sp.expand)
    return {
        "delta_P_minus_abs_det": sp.simplify(tv(Pm) - sp.Abs(Pm.det())),
        "delta_PQ_minus_abs_det": sp.simplify(tv(PQ) - sp.Abs(PQ.det())),
        "det_multiplicative": sp.expand(PQ.det() - Pm.det() * Qm.det()),
    }


def causal_hypotheses(inst: Any) -> Hypotheses:
    """A square row-stochastic lower-triangular matrix (causal attention), n >= 2."""
    def causal() -> Hypotheses:
        upper = np.triu(np.asarray(inst, dtype=np.float64), 1)
        if not upper.any():
            return HOLDS
        i, k = (int(v) for v in np.argwhere(upper != 0)[0])
        return Hypotheses(False, f"A: not causal, entry {float(upper[i, k])!r} above the diagonal "
                                 f"at row {i}, column {k}")
    return hyp_all(factor_hypotheses(inst), causal)


def causal_lemma_bound(Am: Any) -> bool:
    """The lemma behind :data:`CAUSAL`, checked exactly on one matrix: for i, j >= 1,
    d_ij = 1 - sum_k min(A_ik, A_jk) <= 1 - min(A_i0, A_j0) = max(d_0i, d_0j) (row 0 is e_0),
    so delta(A) is attained by a pair (0, j)."""
    M = [[Fraction(x) for x in row] for row in np.asarray(Am).tolist()]
    n = len(M)
    d = lambda i, j: 1 - sum(min(a, b) for a, b in zip(M[i], M[j]))  # noqa: E731
    return all(d(i, j) <= max(d(0, i), d(0, j)) for i in range(1, n) for j in range(i + 1, n))


def causal_first_pair_self_dominant(Am: Any) -> bool:
    """Corollary (causal attention): if row 0 is one-hot, every pair (0, j) is mutually
    self-dominant: A_00 = 1 >= A_j0 and A_jj >= A_0j = 0 (exact, on rationals)."""
    M = [[Fraction(x) for x in row] for row in np.asarray(Am).tolist()]
    return all(M[0][0] >= M[j][0] and M[j][j] >= M[0][j] for j in range(1, len(M)))


# -------------------------------------------------------------------------------------------------
# the theorems
# -------------------------------------------------------------------------------------------------
FACTOR = register(Theorem(
    id="dobrushin.factor",
    title="Rollout factor bound",
    label="Theorem D1",
    category="proved",
    statement=sp.Le(delta(AHAT), (1 + delta(A)) / 2),
    hypotheses_tex=r"$A$ is a row-stochastic $n \times n$ matrix, $n \ge 2$",
    equality="some pair (i, j), i != j, attaining delta(A) is mutually self-dominant: "
             "A_ii >= A_ji and A_jj >= A_ij",
    equality_tex=r"some pair $(i, j)$, $i \ne j$, attaining $\delta(A)$ is mutually self-dominant: "
                 r"$A_{ii} \ge A_{ji}$ and $A_{jj} \ge A_{ij}$",
    hypotheses=factor_hypotheses,
    witness=factor_witness,
    evaluators={"fast": "numerics.dobrushin:factor_slack", "exact": "numerics.dobrushin:factor_equality"},
    references=("Dobrushin 1956", "Seneta 1981, §4.3", "Abnar & Zuidema 2020"),
    symbols={"A": "row-stochastic n x n attention", "delta": "Dobrushin coefficient"},
    # proved by z3 and cvc5 (`attnbounds prove --max-n 6 --timeout 60`, checked against its store);
    # seconds: both solvers together at dims
    smt_checked=(("d1.bound", (6,), 40.9), ("d1.bound.split", (6,), 0.31), ("d1.iff", (5,), 22.0),
                 ("d1.iff.split", (6,), 0.83), ("d1.bound.exhaustive", (4,), 2.76)),
    formal=("dobrushin.v:d1_bound", "dobrushin.v:d1_equality"),
    not_formal=(r"the closed form of the slack $(1 + \delta(A))/2 - \delta(\hat A)$ as a minimum over pairs",
                r"the equality of the three forms of $\delta$ (the float filter computes the min-form "
                 r"$1 - \sum_k \min(a_k, b_k)$)"),
))

# -- Proposition D1a: a residual weight alpha in (0, 1), D1's condition unchanged ---------------------
def d1_condition_exact(rows: Any) -> bool:
    """D1's equality condition on an exact real square matrix (rows of Fractions, ints or "p/q"
    strings; no stochasticity needed, as in Proposition D1a): some pair i != j attains
    max_{k,l} ||A_k - A_l||_1 and is mutually self-dominant, A_ii >= A_ji and A_jj >= A_ij. False for
    n <= 1 (no pair); a ValueError for a matrix that is not square."""
    M = [[Fraction(x) for x in row] for row in rows]
    if any(len(row) != len(M) for row in M):
        raise ValueError(f"A: must be square, got {len(M)} rows of lengths {sorted({len(r) for r in M})}")
    d = {(i, j): sum(abs(a - b) for a, b in zip(M[i], M[j]))
         for i in range(len(M)) for j in range(len(M)) if i != j}
    top = max(d.values(), default=None)
    return any(v == top and M[i][i] >= M[j][i] and M[j][j] >= M[i][j] for (i, j), v in d.items())


def lazy_condition(m: Any) -> bool:
    """Proposition D1a's equality condition on one exact instance ({"A": rows, "alpha": Fraction}):
    for 0 < alpha < 1 it is D1's condition on A (:func:`d1_condition_exact`), unchanged; alpha = 0 is
    always an equality (both sides delta(A)), and so is alpha = 1 when n >= 2 (both sides 1)."""
    alpha, rows = Fraction(m["alpha"]), m["A"]
    return alpha == 0 or (alpha == 1 and len(rows) >= 2) or d1_condition_exact(rows)


def derive_lazy_closed_form() -> dict[str, sp.Expr]:
    """The coordinate argument of Proposition D1a for a symbolic alpha in (0, 1) and a pair (i, j) of
    ANY real matrix, over the sign cases of x = A_ii - A_ji and y = A_jj - A_ij. With
    S = sum_{k != i,j} |A_ik - A_jk| and d = (|x| + |y| + S)/2, the rows of alpha I + (1 - alpha) A
    differ by alpha + (1 - alpha) x in coordinate i, -(alpha + (1 - alpha) y) in coordinate j and
    (1 - alpha)(A_ik - A_jk) elsewhere, hence
        d_ij(alpha I + (1 - alpha) A) = alpha + (1 - alpha) d - min(alpha, (1 - alpha) x^-) - min(alpha, (1 - alpha) y^-).
    alpha = p/(p + q) with p, q > 0; each of x, y is positive, in (-alpha/(1 - alpha), 0) or below
    -alpha/(1 - alpha) (both sides are continuous in x and y, so the open cases cover the boundaries).
    Returns the residual of each of the nine cases (all must simplify to 0)."""
    p, q, u, v, S = sp.symbols("p q u v S", positive=True)
    a, b = p / (p + q), q / (p + q)                      # alpha and 1 - alpha
    cases = {"+": lambda w: w, "-small": lambda w: -p / q / (1 + w), "-large": lambda w: -(1 + w) * p / q}
    out = {}
    for cx, fx in cases.items():
        for cy, fy in cases.items():
            x, y = fx(u), fy(v)
            d = (sp.Abs(x) + sp.Abs(y) + S) / 2
            lhs = (sp.Abs(a + b * x) + sp.Abs(a + b * y) + b * S) / 2
            rhs = a + b * d - sp.Min(a, b * sp.Max(0, -x)) - sp.Min(a, b * sp.Max(0, -y))
            out[f"x{cx} y{cy}"] = sp.simplify(lhs - rhs)
    return out


_alpha = V.parameter("alpha", 0, 1)
LAZY = register(Theorem(
    id="dobrushin.factor.lazy",
    title="A residual weight: D1's condition unchanged",
    label="Proposition D1a",
    category="proved",
    statement=V.delta(_alpha * V.I + (1 - _alpha) * V.A) <= _alpha + (1 - _alpha) * V.delta(V.A),
    equality="for 0 < alpha < 1 exactly D1's condition: some pair (i, j), i != j, attaining delta(A) is mutually "
             "self-dominant (A_ii >= A_ji and A_jj >= A_ij), whatever alpha; alpha = 0 always, alpha = 1 always "
             "for n >= 2. The bound and the condition hold for every real square matrix A",
    equality_tex=r"for $0 < \alpha < 1$ exactly the condition of Theorem D1, whatever $\alpha$: some pair $(i, j)$, "
                 r"$i \ne j$, attaining $\delta(A)$ is mutually self-dominant ($A_{ii} \ge A_{ji}$ and "
                 r"$A_{jj} \ge A_{ij}$); $\alpha = 0$ always, and $\alpha = 1$ always for $n \ge 2$. The bound and "
                 r"its condition hold for every real square matrix $A$ ($\delta(M) = \frac12 \max_{i,j} "
                 r"\lVert M_i - M_j \rVert_1$)",
    equality_condition=lazy_condition,
    references=("docs/theory.md §1, Proposition D1a: Theorem D1 at a residual weight alpha in (0, 1) "
                "(alpha = 1/2 is D1), for every real square matrix",),
    formal=("lazy.v:lazy_bound", "lazy.v:lazy_equality", "lazy.v:lazy_bound_any", "lazy.v:lazy_equality_any"),
    not_formal=(r"the closed form of a pair's distance $d_{ij}(\alpha I + (1 - \alpha) A)$ (checked with sympy)",),
))


CAUSAL = register(Theorem(
    id="dobrushin.factor.causal",
    title="Causal attention: D1 is always tight",
    label="Corollary D1c",
    category="proved",
    statement=sp.Eq(delta(AHAT), (1 + delta(A)) / 2),
    hypotheses_tex=r"$A$ is a lower-triangular (causal) row-stochastic $n \times n$ matrix, $n \ge 2$",
    equality="always (the statement is an equality): row 0 is e_0, so d_ij <= max(d_0i, d_0j) for "
             "i, j >= 1 and delta(A) = max_j (1 - A_j0) is attained by a pair (0, j), which is "
             "mutually self-dominant (A_00 = 1 >= A_j0, A_jj >= A_0j = 0). The same on any set of positions kept "
             "in order, rows renormalised (a suffix, content tokens).",
    equality_tex=r"always (the statement is an equality): row $0$ is $e_0$, so $d_{ij} \le \max(d_{0i}, d_{0j})$ "
                 r"for $i, j \ge 1$, and $\delta(A) = \max_j (1 - A_{j0})$ is attained by a pair $(0, j)$, which "
                 r"is mutually self-dominant ($A_{00} = 1 \ge A_{j0}$, $A_{jj} \ge A_{0j} = 0$); the same holds "
                 r"for the attention restricted to any set of positions kept in order, its rows renormalised (for "
                 r"instance a suffix, or the content tokens)",
    hypotheses=causal_hypotheses,
    witness=factor_witness,
    evaluators={"fast": "numerics.dobrushin:factor_slack", "exact": "numerics.dobrushin:factor_equality"},
    references=("docs/theory.md §1 corollary, strengthened: the condition on the maximising pair is automatic",),
    symbols={"A": "lower-triangular row-stochastic n x n attention"},
    smt_checked=(("causal", (6,), 3.04),),     # z3 and cvc5, as dobrushin.factor's
    formal=("causal.v:d1_causal", "causal.v:d1_causal_submatrix"),
))

PRODUCT = register(Theorem(
    id="dobrushin.product",
    title="Submultiplicativity",
    label="Theorem D2",
    category="proved",
    statement=sp.Le(delta(sp.MatMul(P, Q)), delta(P) * delta(Q)),
    hypotheses_tex=r"$P$ is a row-stochastic $n \times m$ matrix and $Q$ a row-stochastic $m \times p$ matrix",
    equality="delta(P) delta(Q) = 0, or some pair (i, j) attaining delta(P) has every (k, l) in "
             "S+ x S- attaining delta(Q) with no column t cancelling across those pairs",
    equality_tex=r"$\delta(P)\,\delta(Q) = 0$, or some pair $(i, j)$ attaining $\delta(P)$ has every "
                 r"$(k, l) \in S^{+} \times S^{-}$ attaining $\delta(Q)$, where $S^{+} = \{k : P_{ik} > P_{jk}\}$ "
                 r"and $S^{-} = \{l : P_{il} < P_{jl}\}$, with no column $t$ cancelling across those pairs",
    hypotheses=product_hypotheses,
    witness=product_witness,
    evaluators={"fast": "numerics.dobrushin:dobrushin", "exact": "numerics.dobrushin:product_equality"},
    references=("Dobrushin 1956", "Seneta 1981, Thm 4.8"),
    symbols={"P": "row-stochastic n x m", "Q": "row-stochastic m x p"},
    # z3 and cvc5 (`attnbounds prove --max-n 4 --timeout 60`): cvc5 stops D2's split bound at 3x3x3
    smt_checked=(("d2.bound", (2, 2, 2), 0.14), ("d2.bound.split", (3, 3, 3), 6.03), ("d2.iff", (2, 2, 2), 0.24),
                 ("d2.iff.split", (2, 2, 2), 0.14), ("chain", (2,), 0.15), ("d2.bound.exhaustive", (2, 2, 2), 0.53)),
    formal=("product.v:d2_bound", "product_equality.v:d2_equality", "product.v:rollout_bound",
            "product_equality.v:rollout_le_prod", "product_equality.v:rollout_chain"),
    not_formal=(r"the $2 \times 2$ remark: every pair of $2 \times 2$ stochastic matrices is tight ($\delta = \lvert\det\rvert$)",
                r"the probability-zero remark for $P, Q$ drawn with continuous densities, $m \ge 3$ columns of $P$"),
))


def causal_product_hypotheses(inst: Any) -> Hypotheses:
    """(P, Q) lower-triangular row-stochastic n x n (causal attention), the same n >= 2."""
    try:
        Pm, Qm = inst
    except (TypeError, ValueError):
        return Hypotheses(False, f"expected a pair (P, Q), got {type(inst).__name__}")
    return hyp_all(
        lambda: _named(causal_hypotheses(Pm), "P"), lambda: _named(causal_hypotheses(Qm), "Q"),
        lambda: check(_shape(Pm) == _shape(Qm), f"P and Q must have the same shape: {_shape(Pm)} vs {_shape(Qm)}"))


def _named(h: Hypotheses, name: str) -> Hypotheses:
    reason = h.reason[3:] if h.reason.startswith("A: ") else h.reason
    return h if h.ok is True else Hypotheses(h.ok, f"{name}: {reason}")


def causal_product_witness() -> tuple[np.ndarray, np.ndarray]:
    """A tie P_10 = P_20 (the case the first conjecture missed): row 1 is a minimiser, Q_10 is minimal."""
    return (np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.25, 0.25]]),
            np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.5, 0.25, 0.25]]))


CAUSAL_PRODUCT = register(Theorem(
    id="dobrushin.product.causal",
    title="Causal attention: when D2 is tight",
    label="Corollary D2c",
    category="proved",
    statement=sp.Le(delta(sp.MatMul(P, Q)), delta(P) * delta(Q)),
    hypotheses_tex=r"$P$ and $Q$ are lower-triangular (causal) row-stochastic $n \times n$ matrices, $n \ge 2$",
    equality="with p = min_{l>=1} P_l0 and q = min_{l>=1} Q_l0 (delta(P) = 1 - p, delta(Q) = 1 - q): "
             "p = 1, or q = 1, or some row l >= 1 has P_l0 = p and Q_k0 = q for every k >= 1 with P_lk > 0 "
             "(positive lower triangles: Q_10 = ... = Q_l0 = q for l the first minimiser of P_l0). As first "
             "conjectured (row 1 the unique minimiser, Q_10 minimal) it is sufficient, not necessary",
    equality_tex=r"with $p = \min_{l \ge 1} P_{l0}$ and $q = \min_{l \ge 1} Q_{l0}$ (so $\delta(P) = 1 - p$ and "
                 r"$\delta(Q) = 1 - q$): $p = 1$, or $q = 1$, or some row $l \ge 1$ has $P_{l0} = p$ and "
                 r"$Q_{k0} = q$ for every $k \ge 1$ with $P_{lk} > 0$ (for positive lower triangles: "
                 r"$Q_{10} = \dots = Q_{l0} = q$ for $l$ the first minimiser of $P_{l0}$). The condition as first "
                 r"conjectured (row $1$ the unique minimiser, $Q_{10}$ minimal) is sufficient, not necessary",
    hypotheses=causal_product_hypotheses,
    witness=causal_product_witness,
    evaluators={"fast": "numerics.smt.causal:causal_product_gap",
                "exact": "numerics.smt.causal:causal_product_condition"},
    references=("docs/theory.md §1, corollary (causal D2): a direct proof for every n, and D2's condition "
                "specialised to causal pairs",),
    symbols={"P": "lower-triangular row-stochastic n x n", "Q": "lower-triangular row-stochastic n x n"},
    # z3 and cvc5 (`attnbounds prove --max-n 4 --timeout 60`; at 4x4x4 its premise, D2's bound, is not proved)
    smt_checked=(("causal.d2", (3, 3, 3), 4.63), ("causal.d2.lemma", (2, 2, 2), 0.10)),
    formal=("causal_product.v:d2_causal",),
))


# -- how often causal D2 is tight: the share the exact condition predicts ------------------------------

CAUSAL_SHARE_FAMILIES = ("causal",)    # causal softmax of Gaussian logits: continuous entries, ties have probability 0


def causal_share_hypotheses(inst: Any) -> Hypotheses:
    """(family, n): a random causal family with continuous entries on and below the diagonal (no
    ties almost surely), P and Q drawn independently from it, n >= 2."""
    try:
        family, n = inst
    except (TypeError, ValueError):
        return Hypotheses(False, f"expected (family, n), got {type(inst).__name__}")
    return hyp_all(
        lambda: check(family in CAUSAL_SHARE_FAMILIES, f"family {family!r}: the prediction needs continuous causal "
                                                      f"entries; known: {', '.join(CAUSAL_SHARE_FAMILIES)}"),
        lambda: check(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 2,
                      f"n = {n!r}: a causal pair needs n >= 2"))


def causal_share_witness() -> tuple[str, int]:
    """n = 2: row 1 is the only row l >= 1, so pi_2 = 1 and every pair is tight."""
    return ("causal", 2)


_s, _pi = sp.symbols("s_n pi_n", nonnegative=True)
CAUSAL_SHARE = register(Theorem(
    id="dobrushin.product.causal.share",
    title="Causal attention: the share of random pairs on which D2 is tight",
    label="Corollary D2s",
    category="statistical",
    statement=sp.Eq(_s, _pi ** 2),
    hypotheses_tex=(r"$P$ and $Q$ are independent $n \times n$ draws of the family causal (row $i$ the softmax of "
                    r"Gaussian logits on columns $0, \dots, i$), $n \ge 2$"),
    equality="for P, Q drawn independently from one causal law with continuous entries, D2 is tight iff row 1 "
             "is the first minimiser of P_l0 and of Q_l0 (the causal-D2 condition without ties), so the share of "
             "tight pairs is s_n = pi_n^2 with pi_n = P(argmin_{l>=1} A_l0 = 1); pi_2 = 1",
    equality_tex=r"for $P, Q$ drawn independently from one causal law with continuous entries, D2 is tight iff "
                 r"row $1$ is the first minimiser of $P_{l0}$ and of $Q_{l0}$ (the causal-D2 condition without "
                 r"ties), so the share of tight pairs is $s_n = \pi_n^2$ with "
                 r"$\pi_n = \Pr(\operatorname{argmin}_{l \ge 1} A_{l0} = 1)$; $\pi_2 = 1$",
    hypotheses=causal_share_hypotheses,
    witness=causal_share_witness,
    evaluators={"fast": "numerics.dobrushin.causal_share:predicted_tight",
                "exact": "numerics.dobrushin.causal_share:predicted_share"},
    references=("docs/theory.md §1, corollary (causal D2): the condition this share follows from",),
    follows_from="dobrushin.product.causal",   # with continuous entries ties have probability 0 (the paper's proof)
    not_formal=(r"the whole statement: it follows from the causal D2 condition because continuous entries have no "
                r"ties almost surely",),
    symbols={"s_n": "share of tight pairs at size n", "pi_n": "probability that row 1 minimises A_l0, l >= 1"},
))
