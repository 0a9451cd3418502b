"""Exponential polynomials sum_k c_k e^(r_k) (rational c_k, distinct rational r_k) and their
quotients, exact: the exact transcendental values of :mod:`numerics.expr.values` (softmax of
rational logits, exp and tanh of rationals). A sum over distinct rational exponents is 0 only if
every coefficient is (Lindemann-Weierstrass: the e^(r_k) are linearly independent over the algebraic
numbers), so a quotient is 0 exactly when its numerator has no term, and a sign is certified by
evaluating the sum in arb balls at increasing precision (:func:`ladder`, up to :data:`MAX_PREC`
bits; a nonzero sum is decided at some precision). Past :data:`MAX_TERMS` terms an operation gives
None and the caller falls back to a ball.

>>> from fractions import Fraction as F
>>> t = Exp.make(Poly.mono(F(1), Q1), ONE_POLY)                 # e
>>> t, t.sign(), Exp.make(terms_sum([t.num, t.num], [1, -1]), ONE_POLY)
(Exp(e^(1), 1), 1, Fraction(0, 1))
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd
from typing import Callable, Optional, Union

from flint import arb, ctx, fmpq

ZERO = Fraction(0)
MAX_TERMS = 600          # terms of a numerator or denominator kept exact (a product past it becomes a ball)
MAX_PREC = 4096          # bits: the last precision a sign is tried at before it is undecided
PRECISIONS = (64, 128, 256, 512, 1024, 2048, MAX_PREC)


def q(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def frac(q: fmpq) -> Fraction:
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
            self.arbs["sign"] = 1 if all(c > 0 for c in cs) else -1 if all(c < 0 for c in cs) else ladder(self.arb)
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


def terms_mul(p: Poly, q: Poly) -> Optional[Poly]:
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


def terms_sum(polys: list, signs: Optional[list] = None) -> Optional[Poly]:
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
            return frac(num.terms[0])
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


def ladder(at: Callable[[int], arb]) -> Optional[int]:
    """The sign of the number ``at(prec)`` encloses, tried at each of :data:`PRECISIONS` (flint's
    working precision set to it): 1 or -1 once the ball excludes 0, None if it never does."""
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
