"""The random instances of a statement over :mod:`theory.expr`: every symbol drawn, from the cell's
families, under the theorem's hypotheses, regenerable alone.

A statement's symbols are of three kinds: row-stochastic matrices (``A``, ``stochastic("D")``), real
matrices (``logits("L")`` n x n, ``tokens("X")`` n x d) and parameters (``parameter("alpha", lo,
hi)``). A cell of its sweep is (family, n), and (family, n, d) with a tokens matrix:

* the family names one row-stochastic family for all its stochastic matrices and one real family for
  all its real ones (:mod:`numerics.sources.random`, :data:`~numerics.sources.random.FAMILY_TEXT`):
  ``dirichlet`` for a statement over stochastic matrices only, ``gauss-1`` over real ones only, and
  the composite ``dirichlet+gauss-1`` over both;
* the hypotheses choose the families (:func:`allowed`: ``causal`` draws ``causal``, ``doubly-stochastic``
  ``birkhoff`` or ``symmetric``, ``symmetric`` ``symmetric``, ``positive`` the families without
  zeros), and ``symmetric`` draws every logits matrix as (Z + Z^T)/2;
* d comes from ``--dims`` (:data:`DIMS`): one cell per d.

Per chunk, each kind has its own key (so a statement over stochastic matrices only is drawn exactly as
before: D1 restated sees the built-in's instances): the stochastic matrices of instance i are matrices
m i .. m i + m - 1 of the stochastic family's stream (m of them), the logits those of the real family's
stream at (n), the tokens those at (n, d), the parameters words of the stream named
``parameters:<family>`` (:data:`~numerics.sources.random.PARAMETER_TEXT`). With the counter sampler
one instance is computed alone (:func:`draw_values` with ``start``, ``count``).

>>> law = Law((("A", "stochastic"), ("L", "logits")), (("alpha", Fraction(0), Fraction(1)),))
>>> default_families(law)
('dirichlet+gauss-0.25', 'softmax-T1+gauss-1', 'sparse+gauss-4', 'dirichlet+grid')
>>> v = draw_values(law, "dirichlet+grid", 3, None, 0, 0, "counter", 10_000, count=2)
>>> v["A"].shape, v["L"].shape, len(v["alpha"])
((2, 3, 3), (2, 3, 3), 2)
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from numerics.sources.random import (POSITIVE_FREE, REAL, check_family, check_real, family_id, generator,
                                     known_family, known_real, parameter_values, parameter_words, real, sample)
from theory.errors import InvalidInput

DIMS = (1, 2, 4)            # d of a tokens matrix, by default
# the default stochastic families of a statement, by its hypotheses (the others: dirichlet, softmax-T1, sparse)
STOCHASTIC_DEFAULTS = {(): ("dirichlet", "softmax-T1", "sparse"), ("causal",): ("causal",),
                       ("positive",): ("dirichlet", "softmax-T1"), ("doubly-stochastic",): ("birkhoff", "symmetric"),
                       ("symmetric",): ("symmetric",)}
ASSUMED_FAMILIES = {"causal": ("causal",), "doubly-stochastic": ("birkhoff", "symmetric"), "symmetric": ("symmetric",)}


@dataclass(frozen=True)
class Law:
    """What one instance of a statement holds: ``roles`` ((name, kind), ... in the statement's order:
    stochastic, logits, tokens), ``params`` ((name, lo, hi), ...), ``assume`` (the hypotheses)."""

    roles: tuple
    params: tuple = ()
    assume: tuple = ()

    @classmethod
    def of(cls, compiled: Any) -> "Law":
        """The law of a compiled statement (:func:`numerics.expr.compile_statement`)."""
        return cls(tuple(compiled.roles), tuple(compiled.params), tuple(sorted(compiled.assume)))

    def names(self, kind: str) -> list[str]:
        return [m for m, r in self.roles if (r or "stochastic") == kind]

    @property
    def stochastic(self) -> bool:
        return bool(self.names("stochastic"))

    @property
    def real(self) -> bool:
        return bool(self.names("logits") or self.names("tokens"))

    @property
    def tokens(self) -> bool:
        return bool(self.names("tokens"))


def allowed(law: Law, family: str) -> Optional[str]:
    """Why the stochastic ``family`` cannot draw the law's matrices under its hypotheses (None: it can)."""
    for a in law.assume:
        fams = ASSUMED_FAMILIES.get(a)
        if fams is not None and family not in fams:
            return f"assume={a!r} needs one of {', '.join(fams)}"
        if a == "positive" and family not in POSITIVE_FREE and not family.startswith("softmax-T"):
            return "assume='positive' needs a family without exact zeros (dirichlet, softmax-T<T>, birkhoff, symmetric)"
    return None


def default_families(law: Law) -> tuple[str, ...]:
    """The families of a statement's cells without ``--families``: the stochastic ones by hypotheses
    (:data:`STOCHASTIC_DEFAULTS`, else those of :data:`ASSUMED_FAMILIES` that fit every hypothesis),
    the real ones :data:`~numerics.sources.random.REAL`, paired in turn over both kinds (every family
    in at least one cell)."""
    stoch = _stochastic_defaults(law)
    if not law.real:
        return stoch
    if not law.stochastic:
        return REAL
    count = max(len(stoch), len(REAL))
    return tuple(f"{stoch[i % len(stoch)]}+{REAL[i % len(REAL)]}" for i in range(count))


def _stochastic_defaults(law: Law) -> tuple[str, ...]:
    key = tuple(sorted(law.assume))
    if key in STOCHASTIC_DEFAULTS:
        return STOCHASTIC_DEFAULTS[key]
    pool = ("dirichlet", "softmax-T1", "sparse", "causal", "birkhoff", "symmetric")
    fams = tuple(f for f in pool if allowed(law, f) is None)
    return fams or ("dirichlet",)


def families(law: Law, given: tuple[str, ...], option: str = "--families") -> tuple[str, ...]:
    """The cells' families of ``--families`` items for the law: a composite ``S+R`` as is; plain
    stochastic and real names combined each with each (the other kind's defaults where only one kind
    is named) for a statement over both kinds. One line naming the item where one does not fit."""
    composite, stoch, reals = [], [], []
    for item in given:
        if "+" in item:
            s, _, r = item.partition("+")
            if not (law.stochastic and law.real):
                raise InvalidInput(f"{option}: {item!r} names a stochastic and a real family, but the statement has "
                                   + ("no logits or tokens matrix" if law.stochastic else "no stochastic matrix")
                                   + f"; give {'a stochastic' if law.stochastic else 'a real'} family")
            composite.append(f"{_stochastic(law, s, option)}+{check_real(r, option)}")
        elif known_real(item):
            if not law.real:
                raise InvalidInput(f"{option}: {item!r} draws real matrices (logits, tokens) but the statement has "
                                   f"none (its matrices: {', '.join(m for m, _ in law.roles)})")
            reals.append(item)
        else:
            if not law.stochastic:
                if known_family(item):
                    raise InvalidInput(f"{option}: {item!r} draws row-stochastic matrices but the statement has none "
                                       f"(its matrices: {', '.join(m for m, _ in law.roles)}); real families: "
                                       f"{', '.join(REAL)} (or gauss-<s>)")
                check_real(item, option)
            stoch.append(_stochastic(law, item, option))
    out = list(composite)
    if law.stochastic and law.real:
        if stoch or reals:
            out += [f"{s}+{r}" for s in (stoch or _stochastic_defaults(law)) for r in (reals or REAL)]
    else:
        out += stoch + reals
    return tuple(dict.fromkeys(out))


def _stochastic(law: Law, name: str, option: str) -> str:
    check_family(name, option)
    why = allowed(law, name)
    if why is not None:
        raise InvalidInput(f"{option}: family {name!r} does not fit the theorem's hypotheses ({why})")
    return name


def check_cell(law: Law, family: str, option: str = "--families") -> str:
    """``family`` if it is a cell family of the law (composite ``S+R`` for a statement over both kinds,
    a family of its one kind otherwise, under its hypotheses), else one line naming it."""
    if law.stochastic and law.real and "+" not in family:
        raise InvalidInput(f"{option}: {family!r}: the statement has stochastic and real matrices, so a cell's family "
                           "names one of each, e.g. dirichlet+gauss-1")
    (got,) = families(law, (family,), option)
    return got


def split(law: Law, family: str) -> tuple[Optional[str], Optional[str]]:
    """(stochastic family, real family) of a cell's family (None for a kind the law has none of)."""
    if law.stochastic and law.real:
        s, _, r = family.partition("+")
        return s, r
    return (family, None) if law.stochastic else (None, family)


def draw_values(law: Law, family: str, n: int, d: Optional[int], k: int, seed: int, sampler: str,
                size: int, start: int = 0, count: Optional[int] = None) -> dict:
    """Instances ``start .. start + count - 1`` (all ``size`` by default) of chunk ``k`` (of ``size``
    instances) of the cell (family, n, d), every symbol of the law: ``{matrix: (count, rows, cols)
    float64, parameter: [Fraction] * count}`` (the inputs of :func:`numerics.expr.decide`). The
    counter sampler computes just those instances; the numpy one draws the whole chunk and slices it."""
    sfam, rfam = split(law, family)
    out: dict = {}
    count = size - start if count is None else count
    total = size
    sym = "symmetric" in law.assume
    groups = [("stochastic", sfam, n), ("logits", rfam, n), ("tokens", rfam, d)]
    for kind, fam, cols in groups:
        names = law.names(kind)
        if not names:
            continue
        m = len(names)
        if sampler == "counter":
            from numerics.sources.counter_random import real_counter, sample_counter

            if kind == "stochastic":
                X = sample_counter(fam, n, m * count, seed, k, start=m * start)
            else:
                X = real_counter(fam, n, cols, m * count, seed, k, start=m * start,
                                 entropy=(cols,) if kind == "tokens" else (), symmetric=sym and kind == "logits")
        else:
            if kind == "stochastic":
                X = sample(fam, n, m * total, generator(seed, fam, n, k))
            else:
                rng = (np.random.default_rng(np.random.SeedSequence([seed, family_id(fam), n, k, cols]))
                       if kind == "tokens" else generator(seed, fam, n, k))
                X = real(fam, n, cols, m * total, rng, symmetric=sym and kind == "logits")
            X = X[m * start:m * (start + count)]
        X = X.reshape((count, m) + X.shape[1:])
        for j, name in enumerate(names):
            out[name] = np.ascontiguousarray(X[:, j])
    if law.params:
        P = len(law.params)
        stream = f"parameters:{family}"
        if sampler == "counter":
            from numerics.sources.counter_random import words_counter

            W = words_counter(stream, P, count, seed, k, start, entropy=(n, d or 0))
        else:
            rng = np.random.default_rng(np.random.SeedSequence([seed, family_id(stream), n, k, d or 0]))
            W = parameter_words(P * total, rng).reshape(total, P)[start:start + count]
        for j, (name, lo, hi) in enumerate(law.params):
            out[name] = parameter_values(W[:, j], Fraction(lo), Fraction(hi))
    return out


def one(values: dict, b: int) -> dict:
    """Instance ``b`` of a batch of values: matrices (1, rows, cols), parameters [value]."""
    return {k: (v[b:b + 1] if isinstance(v, np.ndarray) else [v[b]]) for k, v in values.items()}


def exact_values(values: dict, law: Law, b: int) -> dict:
    """Instance ``b`` as the exact values it stands for: each matrix as rows of Fractions (a
    stochastic one with its rows divided by their exact sums), each parameter a Fraction."""
    from numerics.stochastic import ExactMatrix

    kinds = dict(law.roles)
    out: dict = {}
    for name, v in values.items():
        if isinstance(v, np.ndarray):
            out[name] = (ExactMatrix.from_floats(v[b]).rows() if (kinds.get(name) or "stochastic") == "stochastic"
                         else [[Fraction(x) for x in row] for row in v[b].tolist()])
        else:
            out[name] = Fraction(v[b])
    return out
