"""Exact and certified real numbers: the scalars of the per-instance evaluator
(:mod:`numerics.expr.certified`).

A value is one of

    Fraction   a rational number, exact;
    Exp        a quotient of exponential polynomials sum_k c_k e^(r_k) / sum_l d_l e^(s_l) (rational c, r),
               exact: a sum over distinct rational r_k is 0 only if every c_k is 0 (Lindemann-Weierstrass:
               e^(r_k) are linearly independent over the algebraic numbers), so a value is 0 exactly when
               its numerator has no term, and an equality is an identity of exponential polynomials;
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
from math import gcd
from typing import Any, Callable, Optional, Union

from flint import arb, ctx, fmpq, fmpz

ZERO, ONE = Fraction(0), Fraction(1)
MAX_TERMS = 600          # terms of a numerator or denominator kept exact (a product past it becomes a ball)
MAX_PREC = 4096          # bits: the last precision a sign is tried at before it is undecided
PRECISIONS = (64, 128, 256, 512, 1024, 2048, MAX_PREC)


class Undefined(ArithmeticError):
    """The statement has no value on this instance (a division by an exact 0, a log of a value <= 0,
    a root of a negative value)."""


def _q(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def _frac(q: fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


Q0, Q1 = fmpq(0), fmpq(1)
_EXP_CACHE: dict = {}


def _exp_arb(k: int, scale: int, prec: int) -> arb:
    key = (k, scale, prec)
    got = _EXP_CACHE.get(key)
    if got is None:
        if len(_EXP_CACHE) > 100_000:
            _EXP_CACHE.clear()
        got = _EXP_CACHE[key] = arb(fmpq(k, scale)).exp()
    return got


class Poly:
    """An exponential polynomial sum_k c_k e^(k / scale): ``terms`` {int k: fmpq c_k != 0}, the
    exponents integers over one ``scale`` (reduced: gcd(scale, every k) = 1, so equal polynomials
    have equal fields). Memoises its balls per precision (and its sign) and its products (a softmax
    row's denominator is one object shared by the row's entries)."""

    __slots__ = ("scale", "terms", "arbs", "prods")

    def __init__(self, scale: int, terms: dict, reduce: bool = True):
        if not terms:
            scale = 1
        elif reduce and scale > 1:
            g = gcd(scale, *terms)
            if g > 1:
                scale //= g
                terms = {k // g: c for k, c in terms.items()}
        self.scale, self.terms, self.arbs, self.prods = scale, terms, {}, {}

    @staticmethod
    def mono(r: Fraction, c: fmpq) -> "Poly":
        return Poly(r.denominator, {r.numerator: c}, reduce=False)

    def __len__(self) -> int:
        return len(self.terms)

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Poly) and self.scale == other.scale and self.terms == other.terms)

    __hash__ = None  # type: ignore[assignment]

    def items(self) -> list:
        """(exponent as a Fraction, coefficient as an fmpq), lowest exponent first."""
        return [(Fraction(k, self.scale), c) for k, c in sorted(self.terms.items())]

    def arb(self, prec: int) -> arb:
        got = self.arbs.get(prec)
        if got is None:
            got = arb(0)
            for k, c in self.terms.items():
                got += arb(c) if k == 0 else arb(c) * _exp_arb(k, self.scale, prec)
            self.arbs[prec] = got
        return got

    def sign(self) -> Optional[int]:
        if "sign" not in self.arbs:
            cs = self.terms.values()
            self.arbs["sign"] = 1 if all(c > 0 for c in cs) else -1 if all(c < 0 for c in cs) else _ladder(self.arb)
        return self.arbs["sign"]


def _over(scale: int, *polys: Poly) -> list:
    """Each polynomial's terms with exponents over ``scale`` (a multiple of every poly's scale)."""
    out = []
    for p in polys:
        f = scale // p.scale
        out.append(p.terms if f == 1 else {k * f: c for k, c in p.terms.items()})
    return out


def _poly(scale: int, acc: dict) -> Optional[Poly]:
    terms = {k: c for k, c in acc.items() if c != 0}
    return Poly(scale, terms) if len(terms) <= MAX_TERMS else None


def _terms_mul(p: Poly, q: Poly) -> Optional[Poly]:
    cached = p.prods.get(id(q))
    if cached is not None and cached[0] is q:
        return cached[1]
    if len(p) * len(q) > 16 * MAX_TERMS:
        return None
    N = p.scale * q.scale // gcd(p.scale, q.scale)
    tp, tq = _over(N, p, q)
    acc: dict = {}
    get = acc.get
    for r, c in tp.items():
        for s, d in tq.items():
            acc[r + s] = get(r + s, Q0) + c * d
    got = _poly(N, acc)
    if len(p.prods) > 64:
        p.prods.clear()
    p.prods[id(q)] = (q, got)
    return got


def _terms_sum(polys: list, signs: Optional[list] = None) -> Optional[Poly]:
    """sum_i s_i p_i, accumulated in one dictionary."""
    N = 1
    for p in polys:
        N = N * p.scale // gcd(N, p.scale)
    acc: dict = {}
    get = acc.get
    for i, t in enumerate(_over(N, *polys)):
        if signs is None or signs[i] == 1:
            for k, c in t.items():
                acc[k] = get(k, Q0) + c
        else:
            for k, c in t.items():
                acc[k] = get(k, Q0) - c
    return _poly(N, acc)


def _shift(p: Poly, k0: int, s0: int, d0: fmpq) -> Poly:
    """p e^(-k0 / s0) / d0."""
    N = p.scale * s0 // gcd(p.scale, s0)
    (t,) = _over(N, p)
    k0 *= N // s0
    return Poly(N, {k - k0: c / d0 for k, c in t.items()})


ONE_POLY = Poly(1, {0: Q1})
ZERO_POLY = Poly(1, {})


class Exp:
    """num / den, two exponential polynomials (:class:`Poly`); normalised by :meth:`make`: den's
    lowest exponent is 0 with coefficient 1, a monomial den is divided out, a zero numerator is the
    Fraction 0, a constant quotient the Fraction."""

    __slots__ = ("num", "den", "_memo")

    def __init__(self, num: Poly, den: Poly):
        self.num, self.den, self._memo = num, den, {}

    @staticmethod
    def make(num: Optional[Poly], den: Optional[Poly]) -> Union[Fraction, "Exp", None]:
        """The normalised value num / den (den has a term), or None past the term budget."""
        if num is None or den is None:
            return None
        if not num.terms:
            return ZERO
        k0 = min(den.terms)
        d0 = den.terms[k0]
        if len(den) == 1:
            num, den = _shift(num, k0, den.scale, d0), ONE_POLY
        elif k0 != 0 or d0 != 1:
            num, den = _shift(num, k0, den.scale, d0), _shift(den, k0, den.scale, d0)
        if len(den) == 1 and len(num) == 1 and 0 in num.terms:
            return _frac(num.terms[0])
        return Exp(num, den)

    def arb(self, prec: int) -> arb:
        got = self._memo.get(prec)
        if got is None:
            num = self.num.arb(prec)
            got = num if len(self.den) == 1 else num / self.den.arb(prec)
            self._memo[prec] = got
        return got

    def sign(self) -> Optional[int]:
        """The sign of num times the sign of den, each certified at increasing precision."""
        a = self.num.sign()
        b = self.den.sign() if a is not None else None
        return None if b is None else a * b

    def __repr__(self) -> str:
        def show(t: Poly) -> str:
            return " + ".join(str(c) if r == 0 else f"{c}*e^({r})" if c != 1 else f"e^({r})" for r, c in t.items())
        return f"Exp({show(self.num)}, {show(self.den)})"


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
    return arb(_q(x)) if isinstance(x, Fraction) else x.arb(prec)


def ball(fn: Callable, *args: Value) -> Ball:
    """The ball fn(args...) evaluated on the arguments' balls."""
    return Ball(lambda p: fn(*(to_arb(a, p) for a in args)))


def _ladder(at: Callable[[int], arb]) -> Optional[int]:
    old = ctx.prec
    try:
        for p in PRECISIONS:
            ctx.prec = p
            b = at(p)
            if b > 0:
                return 1
            if b < 0:
                return -1
        return None
    finally:
        ctx.prec = old


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
    return _ladder(x.arb)


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
    return (x.num, x.den) if isinstance(x, Exp) else (Poly(1, {0: _q(x)}) if x else ZERO_POLY, ONE_POLY)


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
            got = Exp.make(_terms_sum([xn, yn], [1, sy]), xd)
        else:
            a, b = _terms_mul(xn, yd), _terms_mul(yn, xd)
            got = None if a is None or b is None else Exp.make(_terms_sum([a, b], [1, sy]), _terms_mul(xd, yd))
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
        got = Exp.make(_terms_mul(xn, yn), _terms_mul(xd, yd))
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
        got = Exp.make(_terms_mul(xn, y.den), _terms_mul(xd, y.num))
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
            part = Exp.make(_terms_sum(nums), den)
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


def _root(q: Fraction, m: int) -> Optional[Fraction]:
    """The m-th root of q >= 0 if it is rational."""
    a, b = fmpz(q.numerator).root(m), fmpz(q.denominator).root(m)
    if a ** m == q.numerator and b ** m == q.denominator:
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
        root = _root(_frac(c), e.denominator) if c > 0 else None
        if root is not None:
            return Exp.make(Poly.mono(r0 * e, _q(root ** e.numerator)), ONE_POLY)
    qe = _q(e)
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
        return Exp.make(Poly(two.denominator, {two.numerator: Q1, 0: -Q1}), Poly(two.denominator, {two.numerator: Q1, 0: Q1}))
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
