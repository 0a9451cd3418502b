"""A compiled statement evaluated on one instance, every node exact or certified (the values of
:mod:`numerics.expr.values`, the matrices of :mod:`numerics.expr.matrices`): the last resort of
:func:`numerics.expr.decide` for every program, and the public per-instance API.

    sides(c, values)          (lhs, rhs): Fractions, exponential-polynomial quotients or certified balls
    compare(x, y)             -1, 0 (x = y exactly), 1, or None (undecided within the budget)
    exact_sides(c, values)    (lhs, rhs) as Fractions; a one-line InvalidInput where a side is not rational
    instance(c, values)       one exact instance, validated        batches(c, values): a batch of them
    values_of(c, inst)        every node's value on one instance (Undefined where the statement has none)

``values`` maps each matrix of the statement to one matrix (stochastic: rows of exact rationals
summing to exactly 1, or a float array whose rows are renormalised exactly; logits and tokens: rows
of rationals, Fraction, int or "p/q", or a float array standing for its floats exactly) and each
parameter to a rational in its interval. A program the delta-only evaluator knows
(:attr:`~numerics.expr.program.Compiled.legacy`) is evaluated by :mod:`numerics.expr.exact`.

>>> from theory.expr import logits, softmax, delta, ptp, exp
>>> from numerics.expr.program import compile_statement
>>> L = logits("L")
>>> c = compile_statement(delta(softmax(L)) <= 1 - exp(-ptp(L)))
>>> lhs, rhs = sides(c, {"L": [[0, "1/2"], [1, 1]]})
>>> compare(lhs, rhs), exact_sides(c, {"L": [[3, 3], [3, 3]]})
(-1, (Fraction(0, 1), Fraction(0, 1)))
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from numerics.expr import matrices as Mx
from numerics.expr import values as V
from numerics.expr.exact import exact_matrix, node_values
from numerics.expr.exact import exact_sides as rational_sides
from numerics.expr.program import Compiled
from numerics.stochastic import ExactMatrix, as_stochastic, loaded_torch
from theory.errors import InvalidInput

compare = V.compare
Undefined = V.Undefined
FUNCTIONALS = {"spread": Mx.spread, "entry_min": Mx.entry_min, "entry_max": Mx.entry_max, "ptp": Mx.ptp,
               "col_min_sum": Mx.col_min_sum, "slem": Mx.slem, "norm_inf": Mx.norm_inf, "norm_1": Mx.norm_1,
               "norm_fro": Mx.norm_fro, "trace": Mx.trace}


@dataclass
class Instance:
    """One exact instance: ``matrices`` {name: rows of Fractions} (stochastic ones as exact
    :class:`~numerics.stochastic.ExactMatrix` too, in ``stochastic``), ``params`` {name: Fraction},
    the sizes ``n`` and ``d`` (None without tokens)."""

    matrices: dict
    params: dict
    n: int
    d: Optional[int]
    stochastic: dict


def _fraction(v: Any, what: str) -> Fraction:
    if isinstance(v, (bool, np.bool_)):
        raise InvalidInput(f"{what}: {v!r} is a boolean, not a number")
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            raise InvalidInput(f"{what}: {v!r} is not a finite number")
        return Fraction(float(v))
    try:
        return Fraction(int(v) if isinstance(v, np.integer) else v)
    except (TypeError, ValueError, ZeroDivisionError):
        raise InvalidInput(f"{what}: {v!r} is not a rational number (write an int, a Fraction or 'p/q')") from None


def _real_rows(x: Any, name: str) -> list:
    torch = loaded_torch()
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().cpu().double().numpy()
    if isinstance(x, np.ndarray) and x.dtype != object:
        if x.ndim != 2:
            raise InvalidInput(f"{name}: expected one matrix (rows, cols), got shape {x.shape}")
        x = x.tolist()
    try:
        rows = [list(r) for r in x]
    except TypeError:
        raise InvalidInput(f"{name}: not a matrix (rows of numbers), got {type(x).__name__}") from None
    if not rows or any(len(r) != len(rows[0]) for r in rows) or not rows[0]:
        raise InvalidInput(f"{name}: must be a non-empty matrix with rows of one length, got rows of lengths "
                           f"{[len(r) for r in rows]}")
    return [[_fraction(v, f"{name}[{i}, {k}]") for k, v in enumerate(r)] for i, r in enumerate(rows)]


def _param(v: Any, name: str, lo: Fraction, hi: Fraction, where: str = "") -> Fraction:
    q = _fraction(v, f"{name}{where}")
    if not lo <= q <= hi:
        raise InvalidInput(f"{name}{where}: {q} is outside the parameter's interval [{lo}, {hi}]")
    return q


def _keys(compiled: Compiled, values: Any, example: str) -> None:
    if not isinstance(values, Mapping):
        raise InvalidInput(f"values: expected a mapping such as {example}, got {type(values).__name__}")
    names = list(compiled.matrices) + [p for p, _, _ in compiled.params]
    for key in values:
        if key not in names:
            raise InvalidInput(f"values: {key!r} does not occur in the statement (it uses {', '.join(names)})")
    for key in names:
        if key not in values:
            raise InvalidInput(f"values: the statement uses {key} but values has no {key!r}")


def _sizes(compiled: Compiled, shapes: dict) -> tuple[int, Optional[int]]:
    """(n, d) from {name: (rows, cols)}, or InvalidInput naming the matrix that does not fit."""
    first = compiled.matrices[0]
    n = shapes[first][0]
    d = None
    for name in compiled.matrices:
        rows, cols = shapes[name]
        role = compiled.role(name)
        if role == "tokens":
            d = cols if d is None else d
            want = (n, d)
        else:
            want = (n, n)
        if (rows, cols) != want:
            size = "n x d" if role == "tokens" else "n x n"
            raise InvalidInput(f"values: {name} is {rows} x {cols} but must be {size} with n = {n} (from {first})"
                               + (f", d = {d}" if role == "tokens" else ""))
    return n, d


def instance(compiled: Compiled, values: Any) -> Instance:
    """One exact instance of ``compiled`` from ``values`` (see the module docstring), validated."""
    _keys(compiled, values, "{'A': rows of rationals, 'alpha': '1/2'}")
    mats, stoch = {}, {}
    for name in compiled.matrices:
        if compiled.role(name) in ("", "stochastic"):
            E = exact_matrix(values[name], name)
            stoch[name] = E
            mats[name] = E.rows()
        else:
            mats[name] = _real_rows(values[name], name)
    n, d = _sizes(compiled, {k: (len(M), len(M[0])) for k, M in mats.items()})
    params = {p: _param(values[p], p, lo, hi) for p, lo, hi in compiled.params}
    return Instance(mats, params, n, d, stoch)


@dataclass
class Batch:
    """A validated batch of instances (:func:`batches`): ``floats[name]`` (B, rows, cols) float64,
    ``params[name]`` a list of B Fractions; :meth:`instance` gives instance b exactly."""

    compiled: Compiled
    floats: dict
    params: dict
    size: int
    n: int
    d: Optional[int]

    def instance(self, b: int) -> Instance:
        mats, stoch = {}, {}
        for name, X in self.floats.items():
            if self.compiled.role(name) in ("", "stochastic"):
                E = stoch[name] = ExactMatrix.from_floats(X[b])
                mats[name] = E.rows()
            else:
                mats[name] = [[Fraction(v) for v in row] for row in X[b].tolist()]
        return Instance(mats, {k: v[b] for k, v in self.params.items()}, self.n, self.d, stoch)


def _real_batch(x: Any, name: str) -> np.ndarray:
    torch = loaded_torch()
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().cpu().double().numpy()
    arr = np.asarray(x) if isinstance(x, (np.ndarray, list, tuple)) else None
    if arr is None or arr.dtype.kind not in "fiu":
        raise InvalidInput(f"{name}: expected a float array of shape (batch, rows, cols), got "
                           f"{type(x).__name__}" + (f" of dtype {arr.dtype}" if arr is not None else ""))
    if arr.ndim != 3 or 0 in arr.shape:
        raise InvalidInput(f"{name}: expected shape (batch, rows, cols), got {arr.shape}"
                           + ("; pass X[None] for one matrix" if arr.ndim == 2 else ""))
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        b, i, k = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidInput(f"{name}: matrix {b}, entry ({i}, {k}) is {arr[b, i, k]}, not a finite number")
    return arr


def batches(compiled: Compiled, values: Any) -> Batch:
    """``values`` as a batch ({matrix: (B, rows, cols) floats, parameter: (B,) floats or a sequence
    of exact rationals}; stochastic matrices through :func:`numerics.stochastic.as_stochastic`),
    validated: InvalidInput naming the symbol, the instance and what is wrong."""
    _keys(compiled, values, "{'A': array of shape (batch, n, n)}")
    floats = {}
    for name in compiled.matrices:
        if compiled.role(name) in ("", "stochastic"):
            batch = as_stochastic(values[name], name, square=True)
            if len(batch.lead) != 1:
                raise InvalidInput(f"{name}: expected shape (batch, n, n), got {batch.lead + (batch.n, batch.m)}"
                                   + ("; pass X[None] for one matrix" if not batch.lead else ""))
            floats[name] = batch.data.astype(np.float64, copy=False)
        else:
            floats[name] = _real_batch(values[name], name)
    counts = {name: len(X) for name, X in floats.items()}
    size = counts[compiled.matrices[0]]
    for name, B in counts.items():
        if B != size:
            raise InvalidInput(f"values: {name} has {B} instances but {compiled.matrices[0]} has {size}")
    n, d = _sizes(compiled, {k: X.shape[1:] for k, X in floats.items()})
    params = {}
    for p, lo, hi in compiled.params:
        raw = values[p]
        torch = loaded_torch()
        if torch is not None and isinstance(raw, torch.Tensor):
            raw = raw.detach().cpu().double().numpy()
        seq = raw.tolist() if isinstance(raw, np.ndarray) and raw.dtype != object else raw
        if isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__") or len(seq) != size:
            raise InvalidInput(f"{p}: expected {size} values (one per instance), got "
                               f"{len(seq) if hasattr(seq, '__len__') and not isinstance(seq, str) else repr(raw)}")
        params[p] = [_param(v, p, lo, hi, f" (instance {b})") for b, v in enumerate(seq)]
    return Batch(compiled, floats, params, size, n, d)


def _node(node: Any, vals: list, inst: Instance) -> Any:
    op, args = node.op, node.args
    if node.matrix:
        if op == "leaf":
            return inst.matrices[node.name]
        if op == "eye":
            return Mx.eye(inst.n)
        if op == "lin":
            if not args:
                return Mx.lin(node.const, [], inst.n, inst.n)
            X = vals[args[0]]
            return Mx.lin(node.const, [(c, vals[a]) for a, c in zip(args, node.coefs)], len(X), len(X[0]))
        if op == "smul":
            return Mx.smul(vals[args[0]], vals[args[1]])
        if op == "mmul":
            out = vals[args[0]]
            for a in args[1:]:
                out = Mx.matmul(out, vals[a])
            return out
        if op == "mpow":
            return Mx.mpow(vals[args[0]], node.power)
        if op == "T":
            return Mx.transpose(vals[args[0]])
        if op == "softmax":
            return Mx.softmax(vals[args[0]], node.name)
        raise AssertionError(f"unknown matrix node {op!r}")
    if op == "const":
        return node.const
    if op == "param":
        return inst.params[node.name]
    if op == "size":
        return Fraction(inst.n if node.name == "n" else inst.d)
    if op == "delta":
        return Mx.delta(vals[args[0]])
    if op == "fn":
        return FUNCTIONALS[node.name](vals[args[0]])
    if op == "lin":
        return V.vsum([node.const] + [V.mul(c, vals[a]) for a, c in zip(args, node.coefs)])
    if op == "mul":
        out = vals[args[0]]
        for a in args[1:]:
            out = V.mul(out, vals[a])
        return out
    if op == "pow":
        return V.power(vals[args[0]], node.power)
    if op == "rpow":
        return V.rpow(vals[args[0]], node.const)
    if op in ("exp", "log", "tanh"):
        return getattr(V, op)(vals[args[0]])
    if op == "abs":
        return V.absolute(vals[args[0]])
    if op in ("max", "min"):
        return (V.vmax if op == "max" else V.vmin)([vals[a] for a in args])
    raise AssertionError(f"unknown scalar node {op!r}")


def values_of(compiled: Compiled, inst: Instance, generic: bool = False) -> list:
    """Every node's value on ``inst`` (matrices as rows); :class:`~numerics.expr.values.Undefined`
    where the statement (or a ``where=`` hypothesis) has no value there. A delta-only program goes
    to :mod:`numerics.expr.exact` unless ``generic`` (then this module's evaluator, its cross-check)."""
    if compiled.legacy and not generic:
        try:
            return node_values(compiled, inst.stochastic)
        except ZeroDivisionError:
            raise Undefined("a division by 0") from None
    vals: list = []
    for node in compiled.nodes:
        vals.append(_node(node, vals, inst))
    return vals


def _undefined(compiled: Compiled, why: Exception) -> InvalidInput:
    return InvalidInput(f"statement: {compiled.statement} is undefined on this instance ({why})")


def sides(compiled: Compiled, values: Any) -> tuple:
    """(lhs, rhs) of ``compiled`` on one instance, each exact (Fraction, exponential-polynomial
    quotient) or a certified ball; InvalidInput for bad values or where the statement is undefined."""
    inst = values if isinstance(values, Instance) else instance(compiled, values)
    try:
        vals = values_of(compiled, inst)
    except Undefined as why:
        raise _undefined(compiled, why) from None
    return vals[compiled.lhs], vals[compiled.rhs]


def exact_sides(compiled: Compiled, values: Any) -> tuple[Fraction, Fraction]:
    """(lhs, rhs) as Fractions on one instance (``values`` as for :func:`sides`). A side that is not
    rational there (e^(1/3), sqrt(2)) is a one-line InvalidInput pointing to :func:`sides`."""
    if compiled.legacy:
        return rational_sides(compiled, values)
    lhs, rhs = sides(compiled, values)
    for side, v in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(v, Fraction):
            raise InvalidInput(f"statement: the {side} of {compiled.statement} is not a rational number on this "
                               f"instance (about {V.approx(v)[0]:.17g}); numerics.expr.sides gives it exactly or "
                               "as a certified ball")
    return lhs, rhs
