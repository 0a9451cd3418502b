"""Exact and certified real numbers: the scalars of the per-instance evaluator
(:mod:`numerics.expr.certified`).

A value is one of

    Fraction   a rational number, exact;
    Exp        a quotient of exponential polynomials sum_k c_k e^(r_k) / sum_l d_l e^(s_l) (rational c,
               r; :mod:`numerics.expr.exppoly`), exact: a sum over distinct rational r_k is 0 only if
               every c_k is (Lindemann-Weierstrass), so a value is 0 exactly when its numerator has no
               term, and an equality is an identity of exponential polynomials;
    Ball       a certified enclosure for everything else (a logarithm of a non-power, a root of a non-power,
               an eigenvalue modulus, an exponential polynomial past the term budget): a python-flint arb
               ball recomputed from its operands at any precision.

The operations (:func:`add`, :func:`sub`, :func:`mul`, :func:`div`, :func:`power`, :func:`rpow`,
:func:`exp`, :func:`log`, :func:`tanh`, :func:`absolute`, :func:`vmax`, :func:`vmin`, :func:`vsum`)
stay exact wherever the result is rational or an exponential-polynomial quotient within
:data:`MAX_TERMS` terms. :func:`sign` is exact for a rational, certified by arb evaluation at
increasing precision (up to :data:`MAX_PREC` bits; an exponential polynomial that is not 0 is decided
at some precision) for the rest, and None (undecided) past that budget: a ball is never said to be 0.
An undefined operation (division by an exact 0, log of a value certified <= 0, a root of a value
certified < 0) raises :class:`Undefined`; where the sign is not certified the result is a ball that
stays undecided (arb gives NaN for a log of a ball containing 0).

>>> from fractions import Fraction as F
>>> x = power(exp(F(1, 2)), 2)                        # (e^(1/2))^2
>>> sign(sub(x, exp(F(1)))), compare(rpow(F(2), F(1, 2)), F(7, 5)), tanh(F(1, 2))
(0, 1, Exp(-1 + e^(1), 1 + e^(1)))
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Optional, Union

from flint import arb, ctx, fmpz

from numerics.expr.exppoly import (MAX_PREC, MAX_TERMS, ONE_POLY, Q1, ZERO_POLY, Exp, Poly, frac, ladder, q,  # noqa: F401
                                   terms_mul, terms_sum)

ZERO, ONE = Fraction(0), Fraction(1)


class Undefined(ArithmeticError):
    """The statement has no value on this instance (a division by an exact 0, a log of a value <= 0,
    a root of a negative value)."""


class Ball:
    """A certified real number: ``compute(prec)`` encloses it in an arb ball at ``prec`` bits
    (called with flint's working precision set to ``prec``); memoised per precision."""

    __slots__ = ("compute", "_memo")

    def __init__(self, compute: Callable[[int], arb]):
        self.compute, self._memo = compute, {}

    def arb(self, prec: int) -> arb:
        got = self._memo.get(prec)
        if got is None:
            got = self._memo[prec] = self.compute(prec)
        return got

    def __repr__(self) -> str:
        return f"Ball({self.arb(64)})"


Value = Union[Fraction, Exp, Ball]


def to_arb(x: Value, prec: int) -> arb:
    """An arb ball containing x, at ``prec`` bits (flint's precision must be ``prec``)."""
    return arb(q(x)) if isinstance(x, Fraction) else x.arb(prec)


def ball(fn: Callable, *args: Value) -> Ball:
    """The ball fn(args...) evaluated on the arguments' balls."""
    return Ball(lambda p: fn(*(to_arb(a, p) for a in args)))


def approx(x: Value) -> tuple[float, float]:
    """(a float near x, a bound on |float - x|; inf where the ball is not finite)."""
    if isinstance(x, Fraction):
        try:
            f = float(x)
        except OverflowError:
            return (float("inf") if x > 0 else float("-inf")), float("inf")
        return f, float(abs(Fraction(f) - x)) * (1 + 2.0 ** -50)
    old = ctx.prec
    try:
        ctx.prec = 64
        b = x.arb(64)
    finally:
        ctx.prec = old
    if not b.is_finite():
        return float("nan"), float("inf")
    mid = float(b.mid())
    return mid, float(b.rad()) * (1 + 2.0 ** -50) + abs(mid) * 2.0 ** -52


def sign(x: Value) -> Optional[int]:
    """-1, 0 or 1, exact for a rational, certified for the rest; None past :data:`MAX_PREC`."""
    if isinstance(x, Fraction):
        return (x > 0) - (x < 0)
    if isinstance(x, Exp):
        return x.sign()
    return ladder(x.arb)


def compare(x: Value, y: Value) -> Optional[int]:
    """The sign of x - y: -1, 0 (only ever where x = y exactly), 1, or None (undecided)."""
    if isinstance(x, Fraction) and isinstance(y, Fraction):
        return (x > y) - (x < y)
    if not isinstance(x, Ball) and not isinstance(y, Ball):   # quick separation before exact algebra
        old = ctx.prec
        try:
            ctx.prec = 64
            d = to_arb(x, 64) - to_arb(y, 64)
        finally:
            ctx.prec = old
        if d > 0:
            return 1
        if d < 0:
            return -1
    return sign(sub(x, y))


def _parts(x: Union[Fraction, Exp]) -> tuple[Poly, Poly]:
    return (x.num, x.den) if isinstance(x, Exp) else (Poly(1, {0: q(x)}) if x else ZERO_POLY, ONE_POLY)


def _exact(x: Value) -> bool:
    return not isinstance(x, Ball)


def add(x: Value, y: Value, sy: int = 1) -> Value:
    """x + y (``sy`` = -1: x - y)."""
    if isinstance(x, Fraction) and isinstance(y, Fraction):
        return x + y if sy == 1 else x - y
    if isinstance(y, Fraction) and not y:
        return x
    if isinstance(x, Fraction) and not x and sy == 1:
        return y
    if _exact(x) and _exact(y):
        (xn, xd), (yn, yd) = _parts(x), _parts(y)
        if xd == yd:
            got = Exp.make(terms_sum([xn, yn], [1, sy]), xd)
        else:
            a, b = terms_mul(xn, yd), terms_mul(yn, xd)
            got = None if a is None or b is None else Exp.make(terms_sum([a, b], [1, sy]), terms_mul(xd, yd))
        if got is not None:
            return got
    return ball((lambda a, b: a + b) if sy == 1 else (lambda a, b: a - b), x, y)


def sub(x: Value, y: Value) -> Value:
    return add(x, y, -1)


def neg(x: Value) -> Value:
    if isinstance(x, Fraction):
        return -x
    if isinstance(x, Exp):
        return Exp(Poly(x.num.scale, {k: -c for k, c in x.num.terms.items()}, reduce=False), x.den)
    return ball(lambda a: -a, x)


def mul(x: Value, y: Value) -> Value:
    if isinstance(x, Fraction):
        if isinstance(y, Fraction):
            return x * y
        if not x:
            return ZERO
        if x == 1:
            return y
    if isinstance(y, Fraction):
        if not y:
            return ZERO
        if y == 1:
            return x
    if _exact(x) and _exact(y):
        (xn, xd), (yn, yd) = _parts(x), _parts(y)
        got = Exp.make(terms_mul(xn, yn), terms_mul(xd, yd))
        if got is not None:
            return got
    return ball(lambda a, b: a * b, x, y)


def div(x: Value, y: Value) -> Value:
    """x / y; :class:`Undefined` where y is exactly 0 (a ball that may be 0 gives an undecided ball)."""
    if isinstance(y, Fraction):
        if not y:
            raise Undefined("a division by 0")
        return x / y if isinstance(x, Fraction) else mul(x, 1 / y)
    if _exact(x) and isinstance(y, Exp):
        xn, xd = _parts(x)
        got = Exp.make(terms_mul(xn, y.den), terms_mul(xd, y.num))
        if got is not None:
            return got
    return ball(lambda a, b: a / b, x, y)


def vsum(xs: list) -> Value:
    """The sum of a list: exact values over one denominator summed in one pass (a delta's row
    differences share theirs), the groups then added; one ball for all of it once a ball is met
    or past the term budget."""
    xs = list(xs)
    if all(isinstance(x, Fraction) for x in xs):
        return sum(xs, ZERO)
    if not any(isinstance(x, Ball) for x in xs):
        rational = sum((x for x in xs if isinstance(x, Fraction)), ZERO)
        groups: list = []                       # [(den, [numerators])]
        for x in xs:
            if isinstance(x, Exp):
                for den, nums in groups:
                    if den == x.den:
                        nums.append(x.num)
                        break
                else:
                    groups.append((x.den, [x.num]))
        out: Optional[Value] = rational
        for den, nums in groups:
            part = Exp.make(terms_sum(nums), den)
            if part is None:
                out = None
                break
            out = add(out, part)
            if isinstance(out, Ball):
                out = None
                break
        if out is not None:
            return out
    return Ball(lambda p: sum((to_arb(v, p) for v in xs), arb(0)))


def power(x: Value, k: int) -> Value:
    """x**k for a nonzero integer k (:class:`Undefined` for 0**-k)."""
    if isinstance(x, Fraction):
        if not x and k < 0:
            raise Undefined("a division by 0 (0 to a negative power)")
        return x ** k
    out, base, m = None, x, abs(k)
    while m:
        if m & 1:
            out = base if out is None else mul(out, base)
        m >>= 1
        if m:
            base = mul(base, base)
    return out if k > 0 else div(ONE, out)


def _root(x: Fraction, m: int) -> Optional[Fraction]:
    """The m-th root of x >= 0 if it is rational."""
    a, b = fmpz(x.numerator).root(m), fmpz(x.denominator).root(m)
    if a ** m == x.numerator and b ** m == x.denominator:
        return Fraction(int(a), int(b))
    return None


def rpow(x: Value, e: Fraction) -> Value:
    """x**e for a non-integer rational e: exact for a rational or c e^r with c a perfect power;
    :class:`Undefined` for x certified < 0 (or x = 0 with e < 0)."""
    s = sign(x)
    if s is not None and s < 0:
        raise Undefined("a root of a negative number")
    if s == 0:
        if e < 0:
            raise Undefined("a division by 0 (0 to a negative power)")
        return ZERO
    if isinstance(x, Fraction):
        r = _root(x, e.denominator)
        if r is not None:
            return r ** e.numerator
    if isinstance(x, Exp) and len(x.den) == 1 and len(x.num) == 1:
        (r0, c), = x.num.items()
        root = _root(frac(c), e.denominator) if c > 0 else None
        if root is not None:
            return Exp.make(Poly.mono(r0 * e, q(root ** e.numerator)), ONE_POLY)
    qe = q(e)
    return ball(lambda a: a ** arb(qe), x)


def exp(x: Value) -> Value:
    """e^x: an exact monomial for a rational x."""
    if isinstance(x, Fraction):
        return Exp.make(Poly.mono(x, Q1), ONE_POLY)
    return ball(lambda a: a.exp(), x)


def log(x: Value) -> Value:
    """log x: exact for x = e^r (r rational, 1 included); :class:`Undefined` for x certified <= 0."""
    s = sign(x)
    if s is not None and s <= 0:
        raise Undefined("a log of a number <= 0")
    if isinstance(x, Fraction) and x == 1:
        return ZERO
    if isinstance(x, Exp) and len(x.den) == 1 and len(x.num) == 1:
        (r0, c), = x.num.items()
        if c == 1:
            return r0
    return ball(lambda a: a.log(), x)


def tanh(x: Value) -> Value:
    """tanh x = (e^(2x) - 1) / (e^(2x) + 1): exact for a rational x."""
    if isinstance(x, Fraction):
        if not x:
            return ZERO
        two = 2 * x
        k, scale = two.numerator, two.denominator
        return Exp.make(Poly(scale, {k: Q1, 0: -Q1}), Poly(scale, {k: Q1, 0: Q1}))
    return ball(lambda a: a.tanh(), x)


def absolute(x: Value) -> Value:
    """|x|: exact where the sign is certified, else the ball of |x|."""
    s = sign(x)
    if s is None:
        return ball(abs, x)
    return neg(x) if s < 0 else x


def _pick(xs: list, want: int, fn: Callable) -> Value:
    best = xs[0]
    for x in xs[1:]:
        c = compare(x, best)
        if c is None:
            rest = list(xs)
            return Ball(lambda p: _fold(fn, [to_arb(v, p) for v in rest]))
        if c == want:
            best = x
    return best


def _fold(fn: Callable, bs: list) -> arb:
    out = bs[0]
    for b in bs[1:]:
        out = fn(out, b)
    return out


def vmax(xs: list) -> Value:
    """The largest of the values: exact where every comparison is certified, else the ball of the max."""
    return _pick(list(xs), 1, lambda a, b: a.max(b))


def vmin(xs: list) -> Value:
    return _pick(list(xs), -1, lambda a, b: a.min(b))


def is_rational(x: Any) -> bool:
    return isinstance(x, Fraction)
