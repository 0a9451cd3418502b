"""The symbols and functions a statement about attention is written in (the names of
:mod:`theory.expr`, which re-exports them; docs/your-theorem.md walks through each).

Matrix symbols carry their kind in their class, so that a statement says what each symbol is:

    stochastic("D")   a row-stochastic n x n matrix (an attention matrix); A, B, C are predefined
    logits("L")       a real n x n matrix (pre-softmax scores)
    tokens("X")       a real n x d matrix (token states; d is the symbol :data:`d`)
    parameter("alpha", lo, hi)   a real scalar quantified over the closed rational interval [lo, hi]
    n, d              the sizes, usable in a statement (``entry_min(A) <= 1 / n``)
    I                 the n x n identity

Matrix terms are sympy's products, powers, sums and scalar multiples, the transpose ``M.T``, and
:class:`softmax` (row-wise; ``mask="causal"`` keeps the entries j <= i). Functionals of a matrix
term are the unevaluated functions below (:data:`FUNCTIONALS`); scalar functions are sympy's
``exp``, ``log``, ``tanh``, ``sqrt``, ``Abs``, ``Max``, ``Min``.

>>> alpha = parameter("alpha", 0, 1)
>>> delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A)
delta(alpha*I + (1 - alpha)*A) <= alpha + (1 - alpha)*delta(A)
>>> L = logits("L"); delta(softmax(L, mask="causal"))
delta(softmax(L, mask="causal"))
>>> alpha.interval
(Fraction(0, 1), Fraction(1, 1))
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import sympy as sp
from sympy.core.symbol import Str

from theory.errors import InvalidInput

n = sp.Symbol("n", integer=True, positive=True)
d = sp.Symbol("d", integer=True, positive=True)
I = sp.Identity(n)
Max, Min = sp.Max, sp.Min
MASKS = ("none", "causal")


class Stochastic(sp.MatrixSymbol):
    """A symbolic row-stochastic n x n matrix (made by :func:`stochastic`)."""

    role = "stochastic"


class Logits(sp.MatrixSymbol):
    """A symbolic real n x n matrix (made by :func:`logits`)."""

    role = "logits"


class Tokens(sp.MatrixSymbol):
    """A symbolic real n x d matrix of token states (made by :func:`tokens`)."""

    role = "tokens"


KINDS = {"stochastic": Stochastic, "logits": Logits, "tokens": Tokens}
RESERVED = {"I", "n", "d"}     # the identity and the sizes


def _name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise InvalidInput(f"{what}({name!r}): a symbol's name is an identifier such as 'D' or 'alpha'")
    if name in RESERVED:
        raise InvalidInput(f"{what}({name!r}): {name!r} is reserved (the identity I, the sizes n and d); "
                           "choose another name")
    return name


def stochastic(name: str) -> Stochastic:
    """A row-stochastic n x n matrix symbol: ``D = stochastic("D")``."""
    return Stochastic(_name(name, "stochastic"), n, n)


def logits(name: str) -> Logits:
    """A real n x n matrix symbol (pre-softmax scores): ``L = logits("L")``."""
    return Logits(_name(name, "logits"), n, n)


def tokens(name: str) -> Tokens:
    """A real n x d matrix symbol (token states): ``X = tokens("X")``."""
    return Tokens(_name(name, "tokens"), n, d)


A, B, C = stochastic("A"), stochastic("B"), stochastic("C")


def _rational(x: Any, what: str) -> sp.Rational:
    if isinstance(x, Fraction):
        return sp.Rational(x.numerator, x.denominator)
    if isinstance(x, float):
        raise InvalidInput(f"{what}: the float {x!r}; write an exact rational such as 1 or '1/2'")
    try:
        r = sp.Rational(x)
    except (TypeError, ValueError, SyntaxError):
        raise InvalidInput(f"{what}: {x!r} is not a rational number") from None
    return r


class Parameter(sp.Symbol):
    """A real scalar quantified over the closed rational interval [lo, hi] (made by
    :func:`parameter`); two parameters of one name but other intervals are different symbols."""

    def __new__(cls, name: str, lo: Any, hi: Any) -> "Parameter":
        obj = sp.Symbol.__xnew__(cls, name, real=True)
        obj._interval = (sp.Rational(lo), sp.Rational(hi))
        return obj

    def _hashable_content(self) -> tuple:
        return super()._hashable_content() + self._interval

    def __getnewargs_ex__(self) -> tuple:
        return (self.name, *self._interval), {}

    @property
    def interval(self) -> tuple[Fraction, Fraction]:
        lo, hi = self._interval
        return Fraction(int(lo.p), int(lo.q)), Fraction(int(hi.p), int(hi.q))


def parameter(name: str, lo: Any, hi: Any) -> Parameter:
    """A scalar parameter over [lo, hi] (rationals, lo <= hi): ``alpha = parameter("alpha", 0, 1)``.
    The sweep draws it (endpoints included), ``prove`` makes it a variable, a counterexample gives
    its value."""
    name = _name(name, "parameter")
    lo_, hi_ = _rational(lo, f"parameter({name!r}) lower end"), _rational(hi, f"parameter({name!r}) upper end")
    if lo_ > hi_:
        raise InvalidInput(f"parameter({name!r}, {lo_}, {hi_}): the interval is empty (lower end above upper end)")
    return Parameter(name, lo_, hi_)


class softmax(sp.MatrixExpr):
    """Row-wise softmax of a real matrix term: entry (i, j) is exp(M_ij) / sum_k exp(M_ik), over
    k <= i with ``mask="causal"`` (entries j > i are 0). A temperature is a rational multiple of the
    argument: ``softmax(L / 2)``."""

    def __new__(cls, M: Any, mask: Any = None) -> "softmax":
        M = sp.sympify(M)
        if not isinstance(M, sp.MatrixExpr):
            raise InvalidInput(f"softmax: takes a matrix term such as softmax(L) or softmax(L / 2), got {M}")
        mask = getattr(mask, "name", mask) or "none"
        if mask not in MASKS:
            raise InvalidInput(f"softmax: mask={mask!r} is not one of None, 'causal'")
        return sp.Basic.__new__(cls, M, Str(mask))

    @property
    def shape(self) -> tuple:
        return self.args[0].shape

    @property
    def mask(self) -> str:
        return self.args[1].name

    def _sympystr(self, printer: Any) -> str:
        inner = printer._print(self.args[0])
        return f'softmax({inner}, mask="causal")' if self.mask == "causal" else f"softmax({inner})"

    def _latex(self, printer: Any) -> str:
        inner = printer._print(self.args[0])
        sub = r"_{\mathrm{causal}}" if self.mask == "causal" else ""
        return r"\operatorname{softmax}%s\left(%s\right)" % (sub, inner)


class _Functional(sp.Function):
    """A scalar functional of one matrix term, unevaluated (see :data:`FUNCTIONALS`)."""

    nargs = 1
    is_real = True
    tex = ""

    @classmethod
    def eval(cls, M: Any) -> None:
        if not isinstance(M, sp.MatrixExpr):
            raise InvalidInput(f"{cls.__name__}: takes a matrix term (e.g. {cls.__name__}(A)), got {M}")
        return None

    def _latex(self, printer: Any, exp: Any = None) -> str:
        body = r"%s\left(%s\right)" % (self.tex, printer._print(self.args[0]))
        return body if exp is None else r"%s^{%s}" % (body, exp)


def _functional(name: str, tex: str, doc: str, nonnegative: bool = False) -> type:
    return type(name, (_Functional,), {"tex": tex, "__doc__": doc, "is_nonnegative": nonnegative or None,
                                       "__module__": __name__})


delta = _functional("delta", r"\delta", "The Dobrushin coefficient 1/2 max_{i,j} sum_k |M_ik - M_jk| of a "
                    "row-stochastic matrix term M (row-stochastic by construction).", True)
spread = _functional("spread", r"\operatorname{spread}", "max over columns k of max_{i,j} |M_ik - M_jk|: the "
                     "oscillation of a column, what delta contracts (any real matrix).", True)
entry_min = _functional("entry_min", r"\min_{ij}", "The smallest entry of a real matrix term.")
entry_max = _functional("entry_max", r"\max_{ij}", "The largest entry of a real matrix term.")
ptp = _functional("ptp", r"\operatorname{ptp}", "entry_max - entry_min of a real matrix term.", True)
col_min_sum = _functional("col_min_sum", r"\operatorname{cms}", "sum_j min_i M_ij (Doeblin's coefficient of a "
                          "stochastic matrix; any real matrix).")
slem = _functional("slem", r"\lambda_*", "The largest modulus among the eigenvalues of a row-stochastic matrix "
                   "term after one eigenvalue 1 is removed.", True)
norm_inf = _functional("norm_inf", r"\|\cdot\|_\infty", "max_i sum_k |M_ik| (any real matrix).", True)
norm_1 = _functional("norm_1", r"\|\cdot\|_1", "max_k sum_i |M_ik| (any real matrix).", True)
norm_fro = _functional("norm_fro", r"\|\cdot\|_F", "sqrt(sum_ik M_ik^2), the Frobenius norm (any real matrix).",
                       True)
trace = _functional("trace", r"\operatorname{tr}", "The sum of the diagonal of a square matrix term.")
for _f, _tex in ((norm_inf, r"\left\|%s\right\|_\infty"), (norm_1, r"\left\|%s\right\|_1"),
                 (norm_fro, r"\left\|%s\right\|_F")):
    _f._latex = (lambda tex: lambda self, printer, exp=None: (tex % printer._print(self.args[0])) if exp is None
                 else r"%s^{%s}" % (tex % printer._print(self.args[0]), exp))(_tex)

# name -> (function, what its argument must be: "stochastic", "square" or "any")
FUNCTIONALS: dict[str, tuple[type, str]] = {
    "delta": (delta, "stochastic"), "spread": (spread, "any"), "entry_min": (entry_min, "any"),
    "entry_max": (entry_max, "any"), "ptp": (ptp, "any"), "col_min_sum": (col_min_sum, "any"),
    "slem": (slem, "stochastic"), "norm_inf": (norm_inf, "any"), "norm_1": (norm_1, "any"),
    "norm_fro": (norm_fro, "any"), "trace": (trace, "square"),
}
