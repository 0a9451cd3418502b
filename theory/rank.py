"""Rank lower bounds for attention: the "Entropic Bound" (docs/theory.md §3).

Linear token-mixing surrogate.  Y = M* X + noise, X in R^{n x d}, E[X X^T] = d K with K > 0.
A student Y_hat = M X with rank(M) <= r has excess risk

    E ||(M* - M) X||_F^2 = d tr((M* - M) K (M* - M)^T)                 (excess-risk identity)

and, with K = L L^T (any square root; L invertible), tr(D K D^T) = ||D L||_F^2 while M -> M L is a
rank-preserving bijection, so by Eckart-Young-Mirsky

    min_{rank M <= r} tr((M* - M) K (M* - M)^T) = sum_{i > r} sigma_i(M* K^{1/2})^2.     (EYM)

The singular values of M* L and M* K^{1/2} agree: both are square roots of eig(M* K M*^T).
With r* = rank(M* K^{1/2}) = rank(M*):  r < r*  gives excess >= d sigma_{r*}^2 > 0 (deficiency;
equality iff r = r* - 1), r >= r* gives 0 (achievability, attained by M = M*).

Derivations below are symbolic (sympy) for small n with a *general* symmetric K, and exact in
rationals on the witness family M* = U diag(s) Q^T, K = Q diag(c^2) Q^T (U, Q rational orthogonal
by the Cayley transform), where sigma(M* K^{1/2}) = s * c is rational.

References:
[1] C. Eckart, G. Young, The approximation of one matrix by another of lower rank, 1936.
[2] L. Mirsky, Symmetric gauge functions and unitarily invariant norms, 1960.
[3] The Entropic Bound seed (../shared/seeds), claims on recovery and attention-native rank.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

import sympy as sp

from theory.errors import InvalidInput
from theory.hypotheses import Hypotheses, check, hyp_all
from theory.registry import Theorem, register

# -- exact helpers (no numerics/ import) -----------------------------------------------------------


def _as_fraction_rows(A: Any, name: str) -> list[list[Fraction]]:
    """Rows of A as exact Fractions (a float is the rational it represents)."""
    try:
        rows = [[Fraction(sp.Rational(x).p, sp.Rational(x).q) if isinstance(x, sp.Basic)
                 else Fraction(x) for x in row] for row in (A.tolist() if hasattr(A, "tolist") else A)]
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name}: entries must be finite real numbers ({exc})") from None
    if not rows or any(len(r) != len(rows[0]) for r in rows):
        raise InvalidInput(f"{name}: must be a non-empty rectangular matrix")
    return rows


def exact_rank(A: Any) -> int:
    """Rank of a real matrix, exactly (Fraction Gaussian elimination)."""
    rows = [r[:] for r in _as_fraction_rows(A, "matrix")]
    rank, ncols = 0, len(rows[0])
    for col in range(ncols):
        piv = next((i for i in range(rank, len(rows)) if rows[i][col] != 0), None)
        if piv is None:
            continue
        rows[rank], rows[piv] = rows[piv], rows[rank]
        for i in range(rank + 1, len(rows)):
            f = rows[i][col] / rows[rank][col]
            if f:
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[rank])]
        rank += 1
    return rank


def _pd_failure(K: Any) -> str:
    """Why K is not symmetric positive definite, "" if it is (exact LDL^T pivots in Fractions)."""
    A = _as_fraction_rows(K, "K")
    n = len(A)
    if any(len(r) != n for r in A):
        return f"K: must be square, got {n} x {len(A[0])}"
    bad = next(((i, j) for i in range(n) for j in range(i) if A[i][j] != A[j][i]), None)
    if bad is not None:
        i, j = bad
        return f"K: must be symmetric, K[{i}][{j}] = {A[i][j]} != K[{j}][{i}] = {A[j][i]}"
    A = [r[:] for r in A]
    for k in range(n):
        if A[k][k] <= 0:
            return f"K: not positive definite, LDL^T pivot {k} is {A[k][k]} <= 0"
        for i in range(k + 1, n):
            f = A[i][k] / A[k][k]
            A[i] = [a - f * b for a, b in zip(A[i], A[k])]
    return ""


def is_positive_definite(K: Any) -> bool:
    """K symmetric and positive definite, decided exactly (LDL^T pivots in Fractions)."""
    return not _pd_failure(K)


def _rank_r(r: Any) -> Hypotheses:
    try:
        good = bool(int(r) == r and r >= 0)
    except (TypeError, ValueError):
        good = False
    return check(good, f"r must be an integer >= 0, got {r!r}")


def _missing(instance: Any, keys: tuple[str, ...]) -> Optional[Hypotheses]:
    """Undecided (ok None) if ``instance`` is not a dict or lacks one of ``keys``; else None."""
    if not isinstance(instance, dict):
        return Hypotheses(None, f"undecided: expected a dict with keys {keys}, got {type(instance).__name__}")
    gone = [k for k in keys if instance.get(k) is None]
    return Hypotheses(None, f"undecided: {', '.join(gone)} not given") if gone else None


def linear_hypotheses(instance: dict) -> Hypotheses:
    """M* is m x n, K is n x n symmetric positive definite, 0 <= r integer."""
    if (h := _missing(instance, ("M_star", "K"))) is not None:
        return h
    try:
        Mr, Kr = _as_fraction_rows(instance["M_star"], "M_star"), _as_fraction_rows(instance["K"], "K")
    except ValueError as exc:
        return Hypotheses(False, str(exc))
    pd = _pd_failure(Kr)
    return hyp_all(
        check(len(Mr[0]) == len(Kr), f"K must be n x n with n = columns of M_star: M_star is "
                                     f"{len(Mr)} x {len(Mr[0])}, K is {len(Kr)} x {len(Kr[0])}"),
        _rank_r(instance.get("r", 0)),
        check(not pd, pd))


# -- symbolic derivations ----------------------------------------------------------------------------


def derive_excess_risk_identity(n: int, d: int, m: Optional[int] = None, factor: Any = None) -> sp.Expr:
    """E||D X||_F^2 - factor tr(D K D^T), derived from the second moments E[X_ik X_jl] = K_ij delta_kl
    for a general symmetric K and general D (m x n); returns the simplified difference: 0 for the
    right factor (``factor`` = d, the default), (d - factor) tr(D K D^T) otherwise."""
    if n < 1 or d < 1:
        raise InvalidInput(f"derive_excess_risk_identity: need n, d >= 1, got n={n}, d={d}")
    m = n if m is None else m
    X = sp.Matrix(n, d, lambda i, k: sp.Symbol(f"x_{i}_{k}"))
    D = sp.Matrix(m, n, lambda a, i: sp.Symbol(f"D_{a}_{i}"))
    K = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"k_{min(i, j)}_{max(i, j)}"))
    frob = sp.expand(sum(e**2 for e in D * X))
    xs = list(X)
    moments = {}                                     # monomial x_ik x_jl -> E[.] = K_ij [k == l]
    for p, xa in enumerate(xs):
        for xb in xs[p:]:
            (i, k), (j, l) = divmod(xs.index(xa), d), divmod(xs.index(xb), d)
            moments[xa * xb] = K[i, j] if k == l else 0
    poly = sp.Poly(frob, *xs)
    expectation = 0
    for monom, coeff in poly.terms():
        term = sp.Mul(*[x**e for x, e in zip(xs, monom)])
        if sum(monom) != 2:
            raise AssertionError("||D X||^2 must be a quadratic form in X")
        expectation += coeff * moments[term]
    factor = d if factor is None else sp.sympify(factor)
    return sp.simplify(sp.expand(expectation - factor * (D * K * D.T).trace()))


def derive_weighted_norm(n: int) -> dict[str, sp.Expr]:
    """For K = L L^T with L general lower triangular: tr(D K D^T) - ||D L||_F^2 and
    (M L)(M L)^T - M K M^T, both 0 symbolically (so sigma(M L) = sigma(M K^{1/2}))."""
    L = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"l_{i}_{j}") if j <= i else 0)
    D = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"D_{i}_{j}"))
    K = L * L.T
    return {"trace_vs_frobenius": sp.expand((D * K * D.T).trace() - sum(e**2 for e in D * L)),
            "gram": sp.expand((D * L) * (D * L).T - D * K * D.T)}


def cayley_orthogonal(skew_entries: list) -> sp.Matrix:
    """Rational orthogonal Q = (I - S)(I + S)^{-1} from the strict upper entries of skew S."""
    k = len(skew_entries)
    n = int(round((1 + (1 + 8 * k) ** 0.5) / 2))
    if n * (n - 1) // 2 != k:
        raise InvalidInput(f"cayley_orthogonal: {k} entries is not n(n-1)/2 for any n")
    S = sp.zeros(n, n)
    it = iter(sp.Rational(x) for x in skew_entries)
    for i in range(n):
        for j in range(i + 1, n):
            S[i, j] = next(it)
            S[j, i] = -S[i, j]
    eye = sp.eye(n)
    return (eye - S) * (eye + S).inv()


def rational_witness(s: list, c: list, skew_u: list, skew_q: list) -> dict:
    """M* = U diag(s) Q^T and K = Q diag(c^2) Q^T (exact), sigma(M* K^{1/2}) = s * c."""
    U, Q = cayley_orthogonal(skew_u), cayley_orthogonal(skew_q)
    s, c = [sp.Rational(x) for x in s], [sp.Rational(x) for x in c]
    if any(ci <= 0 for ci in c):
        raise InvalidInput("rational_witness: every c_i must be > 0 so that K > 0")
    M = U * sp.diag(*s) * Q.T
    K = Q * sp.diag(*[ci**2 for ci in c]) * Q.T
    return {"M_star": M, "K": K, "U": U, "Q": Q, "s": s, "c": c,
            "sigma": sorted((abs(a * b) for a, b in zip(s, c)), reverse=True)}


def exact_eym_check(w: dict, r: int) -> tuple[sp.Rational, sp.Rational]:
    """(risk of the explicit rank-r minimizer, sum_{i>r} sigma_i^2) in exact rationals."""
    U, Q, s, c = w["U"], w["Q"], w["s"], w["c"]
    order = sorted(range(len(s)), key=lambda i: -abs(s[i] * c[i]))
    keep = set(order[:r])
    s_r = [s[i] if i in keep else 0 for i in range(len(s))]
    M_r = U * sp.diag(*s_r) * Q.T                    # = [M* K^{1/2}]_r K^{-1/2}, rank <= r
    D = w["M_star"] - M_r
    risk = sp.Rational((D * w["K"] * D.T).trace())
    tail = sum((sig**2 for sig in w["sigma"][r:]), sp.Integer(0))
    return risk, tail


def _witness() -> dict:
    w = rational_witness([3, 2, 1, 0], [1, sp.Rational(1, 2), 2, 1], [1, 0, 2, -1, 1, 3],
                         [sp.Rational(1, 2), 1, 0, -2, 1, sp.Rational(1, 3)])
    return {**w, "r": 2}                       # sigma = (3, 2, 1, 0): r* = 3, r = r* - 1 is tight


# -- statements ------------------------------------------------------------------------------------
n_, d_, r_, rs_, i_ = sp.symbols("n d r r^* i", integer=True, positive=True)
_Delta, _K = sp.MatrixSymbol("Delta", n_, n_), sp.MatrixSymbol("K", n_, n_)
_R = sp.Function("R")                         # R(r) = min_{rank M <= r} tr((M*-M) K (M*-M)^T)
_sigma = sp.Function("sigma")                 # sigma(i) = sigma_i(M* K^{1/2}), non-increasing
_EXPECT = sp.Symbol("E||Delta X||_F^2")
_SYMS = {"Delta": "M* - M", "K": "token covariance, E[X X^T] = d K > 0",
         "sigma_i": "singular values of M* K^{1/2}", "r^*": "rank(M* K^{1/2})",
         "R(r)": "min over rank(M) <= r of tr((M* - M) K (M* - M)^T)"}
_EVAL = "numerics.rank.linear"
# the hypotheses the linear surrogate's statements are claimed under (Theorem.hypotheses_tex)
_LINEAR_HYP = (r"$M^{*}$ and $M$ real $m \times n$, $\Delta = M^{*} - M$; inputs $X$ ($n \times d$) with uncorrelated "
               r"columns of covariance $K \succ 0$; $R(r) = \min_{\operatorname{rank} M \le r} "
               r"\operatorname{tr}(\Delta K \Delta^{\top})$, $\sigma_1 \ge \sigma_2 \ge \dots$ the singular values of "
               r"$M^{*} K^{1/2}$, $r^{*} = \operatorname{rank}(M^{*} K^{1/2})$, $r \ge 0$ an integer")

EXCESS_RISK_IDENTITY = register(Theorem(
    id="rank.linear.excess_risk_identity", title="Excess risk of a linear token mixer", category="proved",
    statement=sp.Eq(_EXPECT, d_ * sp.Trace(_Delta * _K * _Delta.T)),
    equality="always (an identity of second moments)", hypotheses=linear_hypotheses, witness=_witness,
    equality_tex="always (an identity of second moments)",
    evaluators={"fast": f"{_EVAL}:excess_risk_monte_carlo", "exact": f"{_EVAL}:excess_risk_exact"},
    references=("docs/theory.md §3",), symbols=_SYMS, hypotheses_tex=_LINEAR_HYP))

ECKART_YOUNG = register(Theorem(
    id="rank.linear.eckart_young", title="Best low-rank approximation in the K-weighted norm",
    category="proved", statement=sp.Eq(_R(r_), sp.Sum(_sigma(i_) ** 2, (i_, r_ + 1, n_))),
    equality="always; attained by M_r = [M* K^{1/2}]_r K^{-1/2}", hypotheses=linear_hypotheses,
    equality_tex=r"always; attained by $M_r = [M^{*} K^{1/2}]_r K^{-1/2}$",
    witness=_witness,
    evaluators={"fast": f"{_EVAL}:optimal_excess_risk", "exact": f"{_EVAL}:certify_tail_sum"},
    references=("[1] Eckart & Young 1936", "[2] Mirsky 1960"), symbols=_SYMS, hypotheses_tex=_LINEAR_HYP))

DEFICIENCY = register(Theorem(
    id="rank.linear.deficiency", title="Rank-deficient students pay a tail singular value",
    category="proved",
    statement=sp.Implies(sp.StrictLessThan(r_, rs_),
                         sp.And(sp.GreaterThan(_R(r_), _sigma(rs_) ** 2), sp.StrictGreaterThan(_sigma(rs_), 0))),
    equality="R(r) = sigma_{r*}^2 iff r = r* - 1", hypotheses=linear_hypotheses, witness=_witness,
    equality_tex=r"$R(r) = \sigma_{r^{*}}^{2}$ if and only if $r = r^{*} - 1$",
    evaluators={"fast": f"{_EVAL}:deficiency_fast", "exact": f"{_EVAL}:deficiency_exact"},
    references=("[3] seed: deficiency",), symbols=_SYMS, hypotheses_tex=_LINEAR_HYP))

ACHIEVABILITY = register(Theorem(
    id="rank.linear.achievability", title="The teacher's rank suffices: zero excess risk", category="proved",
    statement=sp.Implies(sp.GreaterThan(r_, rs_), sp.Eq(_R(r_), 0)),
    equality="always for r >= r* (M = M*)", hypotheses=linear_hypotheses,
    equality_tex=r"always for $r \ge r^{*}$ (take $M = M^{*}$)",
    witness=lambda: {**_witness(), "r": 3},
    evaluators={"fast": f"{_EVAL}:achievability_fast", "exact": f"{_EVAL}:achievability_exact"},
    references=("[3] seed: achievability",), symbols=_SYMS, hypotheses_tex=_LINEAR_HYP))

_learned = sp.Symbol("r_GD")
GD_RECOVERY = register(Theorem(
    id="rank.linear.gd_recovery", title="Gradient descent from small initialisation learns the teacher's rank",
    category="conjecture", statement=sp.Eq(_learned, rs_),
    equality="r_GD = number of singular values of U V^T K^{1/2} that leave the initialisation scale",
    equality_tex=r"$r_{\mathrm{GD}}$ is the number of singular values of $U V^{\top} K^{1/2}$ that leave the "
                 "initialisation scale",
    hypotheses=linear_hypotheses, witness=_witness,
    evaluators={"fast": "numerics.rank.gd:learned_rank", "exact": "numerics.rank.gd:learned_rank_exact"},
    references=("[3] seed: recovery under low-rank implicit bias",), symbols=_SYMS, hypotheses_tex=_LINEAR_HYP))

_rhat = sp.Symbol("r_hat")
DATA_RECOVERY = register(Theorem(
    id="rank.linear.data_recovery", title="The teacher's rank read from the least-squares estimate",
    category="conjecture", statement=sp.Eq(_rhat, rs_),
    equality="estimator (energy rank tau, entropy rank, noise threshold) of sigma(M_hat K_hat^{1/2}) = r*",
    equality_tex=r"an estimator (energy rank at threshold $\tau$, entropy rank, noise threshold) of the singular "
                 r"values of $\hat{M} \hat{K}^{1/2}$ returns $r^{*}$",
    hypotheses=linear_hypotheses, witness=_witness,
    evaluators={"fast": f"{_EVAL}:estimate_ranks", "exact": f"{_EVAL}:estimate_ranks_exact"},
    references=("[3] seed: the energy effective rank is the robust estimator",), symbols=_SYMS,
    hypotheses_tex=_LINEAR_HYP))


def attention_hypotheses(instance: dict) -> Hypotheses:
    """Kernel W (d x d) and inputs X (B, T, d) as nested lists or arrays, r >= 0 integer."""
    if (h := _missing(instance, ("W", "X"))) is not None:
        return h
    try:
        W = _as_fraction_rows(instance["W"], "W")
    except ValueError as exc:
        return Hypotheses(False, str(exc))
    d, X = len(W), instance["X"]

    def inputs() -> Hypotheses:
        try:
            seqs = list(X.tolist() if hasattr(X, "tolist") else X)
            for b, x in enumerate(seqs):
                if len(x) < 1:
                    return Hypotheses(False, f"X[{b}] has no tokens")
                for t, tok in enumerate(x):
                    if len(tok) != d:
                        return Hypotheses(False, f"X[{b}][{t}] has length {len(tok)}, expected d = {d}")
        except TypeError as exc:
            return Hypotheses(False, f"X must have shape (B, T, d) ({exc})")
        return check(len(seqs) >= 1, "X has no inputs (B = 0)")

    return hyp_all(check(len(W[0]) == d, f"W must be square (d x d), got {d} x {len(W[0])}"),
                   inputs, _rank_r(instance.get("r", 0)))


def _attention_witness() -> dict:
    """Kernel of rank 2 in d = 3, identity value map, two length-3 inputs; r = r* = 2."""
    W = [[1, 0, 0], [0, 2, 0], [0, 0, 0]]
    X = [[[1, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 1, 0], [0, 1, 1], [1, 0, 1]]]
    return {"W": W, "W_V": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "X": X, "r": 2, "r_star": 2}


_W = sp.Symbol("rank W_hat")
_ATTN_HYP = (r"a teacher kernel $W^{*}$ ($d \times d$, $r^{*} = \operatorname{rank} W^{*}$) with value map $W_V$, "
             r"and inputs $X$: $B \ge 1$ sequences of $T \ge 1$ tokens in $\mathbb{R}^{d}$, labelled by the "
             r"teacher's attention; $r \ge 0$ an integer")
ATTN_LINEAR_RECOVERY = register(Theorem(
    id="rank.attention.linear.recovery", title="Linear attention: the kernel recovered by regression",
    category="proved", statement=sp.Eq(_W, rs_),
    hypotheses_tex=_ATTN_HYP + r"; linear attention, $\hat{W}$ the kernel fitted to its outputs by least squares",
    equality="when the regression design has full column rank (noiseless): W_hat = W*",
    equality_tex=r"when the regression design has full column rank (noiseless data): $\hat{W} = W^{*}$",
    hypotheses=attention_hypotheses, witness=_attention_witness,
    evaluators={"fast": "numerics.rank.attention:recover_linear_kernel",
                "exact": "numerics.rank.attention:recover_linear_kernel_exact"},
    references=("[3] seed: exact for linear QK attention, also without the value map",)))

ATTN_LINEAR_DEFICIENCY = register(Theorem(
    id="rank.attention.linear.deficiency", title="Linear attention: low-rank kernels pay a tail",
    category="proved",
    statement=sp.GreaterThan(_R(r_), sp.Symbol("mu") * sp.Sum(_sigma(i_) ** 2, (i_, r_ + 1, n_))),
    hypotheses_tex=_ATTN_HYP + (r"; linear attention, $R(r)$ the least mean squared output error of a student kernel "
                                r"of rank at most $r$, $\sigma_i$ the $i$-th largest singular value of $W^{*}$"),
    equality="mu = smallest eigenvalue of the quadratic form W -> mean ||X W X^T X W_V||^2",
    equality_tex=r"$\mu$ is the smallest eigenvalue of the quadratic form "
                 r"$W \mapsto \operatorname{mean} \lVert X W X^{\top} X W_V \rVert^{2}$",
    hypotheses=attention_hypotheses, witness=_attention_witness,
    evaluators={"fast": "numerics.rank.students:linear_deficiency_bound",
                "exact": "numerics.rank.students:linear_deficiency_bound_exact"},
    references=("docs/theory.md §3",)))

ATTN_SOFTMAX_RECOVERY = register(Theorem(
    id="rank.attention.softmax.recovery", title="Softmax attention: the kernel's rank from data, in part",
    category="conjecture", statement=sp.Eq(_W, rs_),
    hypotheses_tex=_ATTN_HYP + r"; softmax attention, $\hat{W}$ the kernel fitted to its outputs",
    equality="holds at high temperature (small logits); breaks with saturation, T > d, unknown W_V",
    equality_tex=r"holds at high temperature (small logits); fails with saturation, with $T > d$, or with "
                 r"$W_V$ unknown",
    hypotheses=attention_hypotheses, witness=_attention_witness,
    evaluators={"fast": "numerics.rank.attention:recover_softmax_kernel",
                "exact": "numerics.rank.attention:recover_softmax_kernel_exact"},
    references=("[3] seed: partial pre-training recovery for softmax",)))

ATTN_NATIVE_RANK = register(Theorem(
    id="rank.attention.native", title="Rank bounds native to attention",
    category="conjecture",
    statement=sp.And(sp.Implies(sp.StrictLessThan(r_, rs_), sp.StrictGreaterThan(_R(r_), 0)),
                     sp.Implies(sp.GreaterThan(r_, rs_), sp.Eq(_R(r_), 0))),
    hypotheses_tex=_ATTN_HYP + (r"; $R(r)$ the least risk of a student kernel of rank at most $r$ trained on the "
                                r"same data"),
    equality="R(r) = 0 for r >= r* (student = teacher)", hypotheses=attention_hypotheses,
    equality_tex=r"$R(r) = 0$ for $r \ge r^{*}$ (the student equals the teacher)",
    witness=_attention_witness,
    evaluators={"fast": "numerics.rank.students:train_kernel_students",
                "exact": "numerics.rank.students:student_risk_exact"},
    references=("[3] seed: the Entropic Bound restored for linear and softmax",)))

STATIC_LADDER = register(Theorem(
    id="rank.attention.static_rank", title="A static mixing operator's rank predicts the kernel's rank",
    category="conjecture", statement=sp.Eq(sp.Symbol("rank M_static"), rs_),
    hypotheses_tex=_ATTN_HYP + r"; $M_{\mathrm{static}}$ the best static token mixer fitted to the same data",
    equality="expected to FAIL for input-conditioned attention (the interpolation ladder)",
    equality_tex="expected to fail for input-conditioned attention (the interpolation ladder)",
    hypotheses=attention_hypotheses, witness=_attention_witness,
    evaluators={"fast": "numerics.rank.students:ladder_rung",
                "exact": "numerics.rank.students:ladder_rung_exact"},
    references=("[3] seed: the naive transfer fails; input-conditioning is the cause",)))


def weights_hypotheses(instance: dict) -> Hypotheses:
    """Two factors A, B of one shape (D, dh) with D >= dh (a head's W_Q, W_K or W_V, W_O^T)."""
    if (h := _missing(instance, ("A", "B"))) is not None:
        return h
    try:
        A, B = _as_fraction_rows(instance["A"], "A"), _as_fraction_rows(instance["B"], "B")
    except ValueError as exc:
        return Hypotheses(False, str(exc))
    (D, dh), (DB, dhB) = (len(A), len(A[0])), (len(B), len(B[0]))
    return hyp_all(check((D, dh) == (DB, dhB), f"A and B must have one shape: A is {D} x {dh}, "
                                               f"B is {DB} x {dhB}"),
                   check(D >= dh, f"need D >= dh (rows >= columns), got A of shape {D} x {dh}"))


WEIGHTS_HEAD_RANK = register(Theorem(
    id="rank.weights.head_rank", title="A head's circuit has rank at most its head dimension",
    category="sanity", statement=sp.LessThan(sp.Symbol("rank(A B^T)"), sp.Symbol("d_head")),
    hypotheses_tex=(r"$A$ and $B$ are real $D \times d_{\mathrm{head}}$ matrices with $D \ge d_{\mathrm{head}}$ (a "
                    r"head's $W_Q$ and $W_K$, or $W_V$ and $W_O^{\top}$)"),
    equality="rank(A B^T) = dh iff rank(B) = dh when A has full column rank",
    equality_tex=r"$\operatorname{rank}(A B^{\top}) = d_{\mathrm{head}}$ if and only if "
                 r"$\operatorname{rank}(B) = d_{\mathrm{head}}$, when $A$ has full column rank",
    hypotheses=weights_hypotheses,
    witness=lambda: {"A": [[1, 0], [0, 1], [0, 0]], "B": [[1, 0], [0, 2], [1, 1]]},
    evaluators={"fast": "numerics.rank.weights:head_spectra", "exact": "numerics.rank.weights:head_rank_exact"},
    references=("docs/theory.md §3 (trained weights)", "TransformerLens FactoredMatrix")))
