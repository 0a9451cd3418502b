"""``decide(statement, A=..., L=..., alpha=...)``: a statement of :mod:`theory.expr` decided on one
instance or a batch, from Python, with the guarantees of the command line (an exact or certified
verdict, never a tolerance).

A value is, per symbol of the statement (its matrices and parameters; a ``where=`` relation's too):

    one instance   a matrix as rows of exact rationals (Fraction, int, "p/q"), or as floats (a 2-d
                   numpy array or tensor, or rows with a float in them); a parameter as a rational
                   (Fraction, int, "p/q") or a float, inside its interval
    a batch        a matrix as a (B, rows, cols) float array or tensor (or a list of B exact matrices);
                   a parameter as B values or one value for every instance

A float stands for itself exactly; a stochastic matrix given in floats stands for its rows divided by
their exact sums (rows must sum to 1 within the row tolerance), as everywhere in the suite.

One instance gives a :class:`Result`: ``verdict`` ("holds", "tight", "violated", "not-applicable",
"undecided"), ``lhs`` and ``rhs`` (of the statement read as ``<=``, ``<`` or ``=``: a ``>=``
statement's sides swapped) each an exact number (:class:`fractions.Fraction`, or an exact quotient of
exponential polynomials) or a certified ball, ``exact`` (both sides exact numbers), and ``path``
("floats": the float sides' distance exceeded their rigorous error bound, the sides are certified
balls around the floats; "exact": exact or certified arithmetic decided it). An instance given in
floats goes through the batched float filter first (:func:`numerics.expr.decide`); one with an exact
matrix is computed exactly (:func:`numerics.expr.certified.values_of`). A batch gives
:class:`Results` (per instance verdicts, float sides with their error bounds, ``exact``; ``verdict``
the worst). Hypotheses: ``assume=`` (:data:`theory.expr.ASSUMPTIONS`: an instance outside them is
not-applicable) and ``where=`` relations (false on an instance: not-applicable); a theorem
(:class:`theory.registry.Theorem`, or its id) brings its own.

>>> from theory.expr import A, I, delta
>>> r = decide(delta((I + A) / 2) <= (1 + delta(A)) / 2, A=[[0, 1, 0], [0, 0, 1], [1, 0, 0]])
>>> r.verdict, r.lhs, r.rhs, r.exact
('holds', Fraction(1, 2), Fraction(1, 1), True)
>>> decide(delta(A) <= 1, B=[[1]])
Traceback (most recent call last):
...
theory.errors.InvalidInput: decide: no A= given (the statement's symbols: A); B= is not one of them
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from theory.errors import InvalidInput
from theory.verdicts import VERDICT_OF

VERDICTS = tuple(v.value for v in VERDICT_OF)     # theory.verdicts.Code -> the verdict's name
WORST = ("violated", "undecided", "tight", "holds", "not-applicable")       # a batch's verdict: the first present


@dataclass(frozen=True)
class Result:
    """The verdict of one instance (see the module docstring); ``lhs`` and ``rhs`` are None where the
    instance is not-applicable."""

    verdict: str
    lhs: Any
    rhs: Any
    exact: bool
    path: str
    relation: str

    def __str__(self) -> str:
        if self.lhs is None:
            return self.verdict
        return f"{self.verdict}: lhs {_text(self.lhs)} {self.relation} rhs {_text(self.rhs)}"


@dataclass(frozen=True)
class Results:
    """The verdicts of a batch: ``verdicts`` (one word per instance), ``lhs``, ``rhs`` (B,) floats and
    ``err`` (B, 2) rigorous bounds on their distance to the exact sides (NaN and inf where none),
    ``exact`` (B,) bool (decided past the float margin, by exact or certified arithmetic).
    ``verdict`` is the worst one present: violated, then undecided, tight, holds, not-applicable."""

    verdicts: tuple
    lhs: np.ndarray
    rhs: np.ndarray
    err: np.ndarray
    exact: np.ndarray

    @property
    def verdict(self) -> str:
        present = set(self.verdicts)
        return next((v for v in WORST if v in present), "not-applicable")

    def counts(self) -> dict[str, int]:
        """{verdict: how many} for every verdict word (0 where none)."""
        return {v: self.verdicts.count(v) for v in VERDICTS}

    def __len__(self) -> int:
        return len(self.verdicts)


def _text(x: Any) -> str:
    if isinstance(x, Fraction):
        return str(x)
    from numerics.expr.values import approx

    mid, err = approx(x)
    return f"{mid:.17g} (+- {err:.2g})" if err else f"{mid:.17g}"


def decide(statement: Any, /, *, assume: Any = (), where: Any = (), **values: Any) -> Any:
    """The verdict of ``statement`` on the instance (or batch) ``values``: a :class:`Result` (one
    instance) or :class:`Results` (a batch); see the module docstring. ``statement``: a relation over
    :mod:`theory.expr`, a :class:`~theory.registry.Theorem` or a registered theorem's id. Bad input is
    a one-line :class:`~theory.errors.InvalidInput` naming the symbol and what is wrong."""
    compiled = compiled_for(statement, assume, where)
    assume = compiled.assume
    _check_names(compiled, values)
    kinds = {m: _kind(values[m], m) for m in compiled.matrices}
    depths = {m: depth for m, (depth, _) in kinds.items()}
    if len(set(depths.values())) > 1:
        one, many = (sorted(m for m, dp in depths.items() if dp == k) for k in (2, 3))
        raise InvalidInput(f"decide: {', '.join(one)} {'is' if len(one) == 1 else 'are'} one matrix but "
                           f"{', '.join(many)} {'is a batch' if len(many) == 1 else 'are batches'}: give every "
                           "matrix for one instance, or every one as a batch of the same size")
    floats = all(is_float for _, is_float in kinds.values())
    if next(iter(depths.values())) == 2:
        return _one(compiled, values, assume, floats)
    return _batch(compiled, values, assume, floats)


def _statement(statement: Any, assume: Any, where: Any) -> tuple:
    if isinstance(assume, str) or not hasattr(where, "__iter__"):
        raise InvalidInput("decide: assume= and where= take a sequence (assume=('causal',), where=[ptp(L) <= 2])")
    if isinstance(statement, str):
        from theory import registry

        registry.load_all()
        if statement not in registry.REGISTRY:
            raise InvalidInput(f"decide: no theorem {statement!r} is registered (give a statement, or load the "
                               "theory file that registers it)")
        statement = registry.REGISTRY[statement]
    from theory.registry import Theorem

    if isinstance(statement, Theorem):
        return statement.statement, tuple(statement.assume) + tuple(assume), tuple(statement.where) + tuple(where)
    return statement, tuple(assume), tuple(where)


def compiled_for(statement: Any, assume: Any = (), where: Any = ()) -> Any:
    """``statement`` (a relation, a Theorem or its id) with the hypotheses ``assume`` and ``where``
    (and a Theorem's own) compiled once (:func:`numerics.expr.compile_statement`, cached): its
    ``matrices``, ``roles``, ``params``, ``sizes`` and ``assume`` say what an instance needs."""
    from theory.expr import check_assumptions

    statement, assume, where = _statement(statement, assume, where)
    check_assumptions(assume, "decide")
    try:
        return _compile(statement, tuple(dict.fromkeys(assume)), where)
    except TypeError:                              # something unhashable: compile it uncached
        from numerics.expr import compile_statement

        return compile_statement(statement, assume, where)


@lru_cache(maxsize=128)
def _compile(statement: Any, assume: tuple, where: tuple) -> Any:
    from numerics.expr import compile_statement

    return compile_statement(statement, assume, where)


def _check_names(compiled: Any, values: dict) -> None:
    names = list(compiled.matrices) + [p for p, _, _ in compiled.params]
    missing = [k for k in names if k not in values]
    extra = [k for k in values if k not in names]
    if missing or extra:
        said = []
        if missing:
            said.append("no " + ", ".join(f"{k}=" for k in missing) + f" given (the statement's symbols: "
                        f"{', '.join(names)})")
        if extra:
            said.append(", ".join(f"{k}=" for k in extra) + (" is not one of them" if missing else
                        f" {'is' if len(extra) == 1 else 'are'} not a symbol of the statement (its symbols: "
                        f"{', '.join(names)})"))
        raise InvalidInput("decide: " + "; ".join(said))


def _kind(x: Any, name: str) -> tuple[int, bool]:
    """(2 for one matrix, 3 for a batch; whether it is given in floats) of one matrix value."""
    from numerics.stochastic import loaded_torch

    torch = loaded_torch()
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().cpu().double().numpy()
    if isinstance(x, np.ndarray) and x.dtype != object:
        if x.ndim not in (2, 3):
            raise InvalidInput(f"decide: {name}= has shape {x.shape}: give one matrix (rows, cols) or a batch "
                               "(batch, rows, cols)")
        return x.ndim, True
    depth, node, leaves = 0, x, []
    while isinstance(node, (list, tuple, np.ndarray)):
        if len(node) == 0:
            raise InvalidInput(f"decide: {name}= has an empty row or matrix")
        depth, node = depth + 1, node[0]
    if depth not in (2, 3):
        raise InvalidInput(f"decide: {name}= must be a matrix (rows of numbers) or a batch of matrices, got "
                           f"{type(x).__name__}" + (f" nested {depth} deep" if depth else ""))
    _leaves(x, depth, leaves)
    return depth, any(isinstance(v, (float, np.floating)) for v in leaves)


def _leaves(x: Any, depth: int, out: list) -> None:
    for item in x:
        if depth > 1 and isinstance(item, (list, tuple, np.ndarray)):
            _leaves(item, depth - 1, out)
        else:
            out.append(item)


def _as_floats(x: Any, name: str) -> Any:
    """A float-given matrix as a float64 array (a tensor as its floats), kept as is otherwise."""
    from numerics.stochastic import loaded_torch

    torch = loaded_torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().double().numpy()
    if isinstance(x, np.ndarray) and x.dtype != object:
        return np.asarray(x, dtype=np.float64)
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(f"decide: {name}= mixes floats with entries that are not numbers, or has rows of "
                           "different lengths") from None


def _one(compiled: Any, values: dict, assume: tuple, floats: bool) -> Result:
    if floats:
        return _one_float(compiled, values, assume)
    kinds = {m: _kind(values[m], m)[1] for m in compiled.matrices}
    given = {k: (_as_floats(v, k) if kinds.get(k) else v) for k, v in values.items()}
    return _one_exact(compiled, given, assume)


def _one_exact(compiled: Any, values: dict, assume: tuple) -> Result:
    from numerics.expr.certified import Undefined, instance, values_of
    from numerics.expr.decide import NOT_APPLICABLE, settle

    inst = instance(compiled, values)
    if not _assumed_exact(compiled, inst, assume):
        return Result("not-applicable", None, None, False, "exact", compiled.relation)
    try:
        vals = values_of(compiled, inst)
    except Undefined:
        return Result("not-applicable", None, None, False, "exact", compiled.relation)
    code, _ = settle(compiled, vals)
    if code == NOT_APPLICABLE:
        return Result("not-applicable", None, None, False, "exact", compiled.relation)
    lhs, rhs = vals[compiled.lhs], vals[compiled.rhs]
    return Result(VERDICTS[code], lhs, rhs, _is_exact(lhs) and _is_exact(rhs), "exact", compiled.relation)


def _one_float(compiled: Any, values: dict, assume: tuple) -> Result:
    from numerics.expr import decide as batch_decide
    from numerics.expr.certified import sides
    from numerics.expr.decide import NOT_APPLICABLE

    mats = {m: _as_floats(values[m], m)[None] for m in compiled.matrices}
    params = {p: [values[p]] for p, _, _ in compiled.params}
    d = batch_decide(compiled, {**mats, **params}, assume)
    code = int(d.codes[0])
    if code == NOT_APPLICABLE:
        return Result("not-applicable", None, None, False, "floats", compiled.relation)
    if d.exact[0]:
        lhs, rhs = sides(compiled, {**{m: X[0] for m, X in mats.items()}, **{p: v[0] for p, v in params.items()}})
        return Result(VERDICTS[code], lhs, rhs, _is_exact(lhs) and _is_exact(rhs), "exact", compiled.relation)
    lhs, rhs = _ball(d.lhs[0], d.err[0, 0]), _ball(d.rhs[0], d.err[0, 1])
    return Result(VERDICTS[code], lhs, rhs, False, "floats", compiled.relation)


def _ball(mid: float, rad: float) -> Any:
    """The certified ball mid +- rad (a float and a rigorous bound on its distance to the exact value)."""
    from flint import arb

    from numerics.expr.values import Ball

    return Ball(lambda prec: arb(float(mid), float(rad)))


def _is_exact(x: Any) -> bool:
    from numerics.expr.values import Ball

    return not isinstance(x, Ball)


def _assumed_exact(compiled: Any, inst: Any, assume: tuple) -> bool:
    """The hypotheses ``assume`` on the exact matrices of one instance (as :func:`numerics.expr.decide.assumed`
    reads them on floats: causal, positive, doubly-stochastic and symmetric on the stochastic matrices,
    symmetric on the logits)."""
    for name, role in compiled.roles:
        if role == "tokens":
            continue
        M = inst.matrices[name]
        size = range(len(M))
        symmetric = all(M[i][j] == M[j][i] for i in size for j in range(i))
        if role == "logits":
            if "symmetric" in assume and not symmetric:
                return False
            continue
        if "causal" in assume and any(M[i][j] != 0 for i in size for j in range(i + 1, len(M))):
            return False
        if "positive" in assume and any(v <= 0 for row in M for v in row):
            return False
        if "symmetric" in assume and not symmetric:
            return False
        if {"doubly-stochastic", "symmetric"} & set(assume) and any(sum(col) != 1 for col in zip(*M)):
            return False
    return True


def _batch(compiled: Any, values: dict, assume: tuple, floats: bool) -> Results:
    sizes = {m: len(values[m]) for m in compiled.matrices}
    B = sizes[compiled.matrices[0]]
    if len(set(sizes.values())) > 1:
        raise InvalidInput("decide: the batches have different sizes (" + ", ".join(f"{m}: {k}" for m, k in
                                                                                    sizes.items()) + ")")
    params = {p: _param_batch(values[p], p, B) for p, _, _ in compiled.params}
    if floats:
        from numerics.expr import decide as batch_decide

        d = batch_decide(compiled, {**{m: _as_floats(values[m], m) for m in compiled.matrices}, **params}, assume)
        return Results(tuple(VERDICTS[c] for c in d.codes), d.lhs, d.rhs, d.err, d.exact.copy())
    from numerics.expr.values import approx

    out = []
    for b in range(B):
        one = {m: values[m][b] for m in compiled.matrices}
        kinds = {m: _kind(x, m) for m, x in one.items()}
        one = {m: (_as_floats(x, m) if kinds[m][1] else x) for m, x in one.items()}
        out.append(_one_exact(compiled, {**one, **{p: v[b] for p, v in params.items()}}, assume))
    lhs, rhs, err = np.full(B, np.nan), np.full(B, np.nan), np.full((B, 2), np.inf)
    for b, r in enumerate(out):
        if r.lhs is not None:
            (lhs[b], err[b, 0]), (rhs[b], err[b, 1]) = approx(r.lhs), approx(r.rhs)
    return Results(tuple(r.verdict for r in out), lhs, rhs, err, np.ones(B, dtype=bool))


def _param_batch(v: Any, name: str, B: int) -> list:
    from numerics.stochastic import loaded_torch

    torch = loaded_torch()
    if torch is not None and isinstance(v, torch.Tensor):
        v = v.detach().cpu().double().numpy()
    if isinstance(v, np.ndarray):
        v = v.tolist() if v.dtype != object else list(v)
    if isinstance(v, (list, tuple)):
        if len(v) != B:
            raise InvalidInput(f"decide: {name}= has {len(v)} values for a batch of {B} instances (give one "
                               "value, or one per instance)")
        return list(v)
    return [v] * B

