"""Exact and certified matrices: the matrix nodes and the functionals of a compiled statement on one
instance, entry by entry in the values of :mod:`numerics.expr.values` (a matrix is a list of rows).

Products, powers, combinations, the transpose and softmax stay exact where their entries are
(softmax of a rational row: e^(L_ij) / sum_k e^(L_ik), an exponential-polynomial quotient; a
constant row gives exactly 1/n). The functionals compare entries with the certified
:func:`~numerics.expr.values.compare` (an exact pick where it decides, the ball of the max where not).

``slem`` (the largest eigenvalue modulus once one eigenvalue 1 is removed; 0 for n = 1):

- a triangular matrix (every entry on one side of the diagonal exactly 0, causal attention): its
  eigenvalues are its diagonal entries, exact;
- a rational matrix: the characteristic polynomial (python-flint ``fmpq_mat.charpoly``) divided by
  x - 1 and factored over Q: a linear factor gives a rational root, exactly; a cyclotomic factor has
  roots of modulus exactly 1; any other factor's roots are enclosed by ``fmpz_poly.complex_roots``
  (certified isolation) at the working precision;
- anything else: the eigenvalues of the entries' balls (``acb_mat.eig``), the one ball containing 1
  removed (none or several containing 1 at a precision: NaN there, so a comparison tries a higher
  precision and is undecided past the budget).

>>> from fractions import Fraction as F
>>> P = [[F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)]]
>>> delta(P), slem(P), softmax([[F(0), F(0)], [F(1), F(1)]], "none")
(Fraction(1, 4), Fraction(1, 4), [[Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 2), Fraction(1, 2)]])
"""
from __future__ import annotations

from fractions import Fraction
from math import lcm

from flint import acb_mat, arb, fmpq, fmpq_mat, fmpq_poly

from numerics.expr.values import (ONE, ZERO, Ball, Exp, Poly, Value, absolute, add, compare, div, exp, is_rational, mul,
                                  rpow, sub, to_arb, vmax, vmin, vsum)

Matrix = list   # rows of values


def eye(n: int) -> Matrix:
    return [[ONE if i == k else ZERO for k in range(n)] for i in range(n)]


def lin(const: Fraction, terms: list, rows: int, cols: int) -> Matrix:
    """const * I + sum_i c_i X_i (``terms``: (c_i, X_i))."""
    out = []
    for i in range(rows):
        row = []
        for k in range(cols):
            v = const if (i == k and const) else ZERO
            for c, X in terms:
                v = add(v, mul(c, X[i][k]))
            row.append(v)
        out.append(row)
    return out


def smul(s: Value, X: Matrix) -> Matrix:
    return [[mul(s, v) for v in row] for row in X]


def matmul(X: Matrix, Y: Matrix) -> Matrix:
    cols = list(zip(*Y))
    if all(is_rational(v) for row in X for v in row) and all(is_rational(v) for row in Y for v in row):
        return [[sum((a * b for a, b in zip(row, col)), ZERO) for col in cols] for row in X]
    return [[vsum([mul(a, b) for a, b in zip(row, col)]) for col in cols] for row in X]


def mpow(X: Matrix, k: int) -> Matrix:
    out, base = None, X
    while k:
        if k & 1:
            out = base if out is None else matmul(out, base)
        k >>= 1
        if k:
            base = matmul(base, base)
    return out


def transpose(X: Matrix) -> Matrix:
    return [list(col) for col in zip(*X)]


def softmax(X: Matrix, mask: str) -> Matrix:
    """Row-wise softmax (``mask`` "causal": entries j > i are 0 and row i runs over j <= i)."""
    out = []
    for i, row in enumerate(X):
        keep = row[: i + 1] if mask == "causal" else row
        if all(is_rational(v) for v in keep):
            s0 = min(keep)
            shifted = [v - s0 for v in keep]
            scale = lcm(*(r.denominator for r in shifted))
            ks = [r.numerator * (scale // r.denominator) for r in shifted]
            counts: dict = {}
            for k in ks:
                counts[k] = counts.get(k, 0) + 1
            c0 = counts[0]
            den = Poly(scale, {k: fmpq(c, c0) for k, c in counts.items()})       # one object for the row
            vals = [Exp.make(Poly(scale, {k: fmpq(1, c0)}), den) for k in ks]
        else:
            es = [exp(v) for v in keep]
            total = vsum(es)
            vals = [div(e, total) for e in es]
        out.append(vals + [ZERO] * (len(row) - len(keep)))
    return out


# -- functionals ------------------------------------------------------------------------------------
def delta(M: Matrix) -> Value:
    """1/2 max_{i<j} sum_k |M_ik - M_jk| (0 for one row)."""
    n = len(M)
    if n < 2:
        return ZERO
    if all(is_rational(v) for row in M for v in row):
        return max(sum((abs(a - b) for a, b in zip(M[i], M[j])), ZERO)
                   for i in range(n) for j in range(i + 1, n)) / 2
    pairs = [vsum([absolute(sub(a, b)) for a, b in zip(M[i], M[j])]) for i in range(n) for j in range(i + 1, n)]
    return mul(Fraction(1, 2), vmax(pairs))


def spread(M: Matrix) -> Value:
    """max over columns of (largest - smallest entry)."""
    return vmax([sub(vmax(list(col)), vmin(list(col))) for col in zip(*M)])


def entry_max(M: Matrix) -> Value:
    return vmax([v for row in M for v in row])


def entry_min(M: Matrix) -> Value:
    return vmin([v for row in M for v in row])


def ptp(M: Matrix) -> Value:
    return sub(entry_max(M), entry_min(M))


def col_min_sum(M: Matrix) -> Value:
    return vsum([vmin(list(col)) for col in zip(*M)])


def norm_inf(M: Matrix) -> Value:
    return vmax([vsum([absolute(v) for v in row]) for row in M])


def norm_1(M: Matrix) -> Value:
    return norm_inf(transpose(M))


def norm_fro(M: Matrix) -> Value:
    return rpow(vsum([mul(v, v) for row in M for v in row]), Fraction(1, 2))


def trace(M: Matrix) -> Value:
    return vsum([M[i][i] for i in range(len(M))])


def _zero(v: Value) -> bool:
    return is_rational(v) and v == 0


def slem(M: Matrix) -> Value:
    """The largest eigenvalue modulus of a row-stochastic M after one eigenvalue 1 is removed."""
    n = len(M)
    if n < 2:
        return ZERO
    lower = all(_zero(M[i][k]) for i in range(n) for k in range(i + 1, n))
    upper = all(_zero(M[i][k]) for i in range(n) for k in range(i))
    if lower or upper:
        diag = [M[i][i] for i in range(n)]
        for i, v in enumerate(diag):
            if compare(v, ONE) == 0:
                return vmax([absolute(x) for x in diag[:i] + diag[i + 1:]])
    if all(is_rational(v) for row in M for v in row):
        return _rational_slem(M)
    rows = [list(r) for r in M]

    def compute(p: int) -> arb:
        E = acb_mat([[to_arb(v, p) for v in row] for row in rows]).eig(multiple=True, nonstop=True)
        ones = [k for k, e in enumerate(E) if e.contains(1)]
        if len(ones) != 1 or not all(e.is_finite() for e in E):
            return arb("nan")
        return _fold_max([abs(e) for k, e in enumerate(E) if k != ones[0]])
    return Ball(compute)


def _fold_max(bs: list) -> arb:
    out = bs[0]
    for b in bs[1:]:
        out = out.max(b)
    return out


def _rational_slem(M: Matrix) -> Value:
    n = len(M)
    P = fmpq_mat(n, n, [fmpq(v.numerator, v.denominator) for row in M for v in row]).charpoly()
    q, r = divmod(P, fmpq_poly([-1, 1]))
    if r != 0:
        raise ArithmeticError("slem: 1 is not an eigenvalue of a matrix that is row-stochastic by construction")
    if q.degree() < 1:
        return ZERO
    _, factors = q.factor()
    moduli: list = []
    for f, _ in factors:
        if f.degree() == 1:
            root = -f[0] / f[1]
            moduli.append(abs(Fraction(int(root.p), int(root.q))))
        elif f.numer().is_cyclotomic():
            moduli.append(ONE)
        else:
            g = f.numer()
            moduli.append(Ball(lambda p, g=g: _fold_max([abs(z) for z, _ in g.complex_roots()])))
    return vmax(moduli)
