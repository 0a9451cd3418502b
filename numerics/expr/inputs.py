"""The values of a statement's symbols on a batch of instances, checked once (the inputs convention of
:mod:`numerics.expr`): what each value stands for exactly, and the float the batched evaluator uses.

``values`` maps every matrix of the statement (:attr:`~numerics.expr.program.Compiled.matrices`) and
every parameter (:attr:`~numerics.expr.program.Compiled.params`) to its values on B instances:

    stochastic   (B, n, n) nonnegative floats, rows summing to 1 within the dtype's tolerance; stands
                 for its floats with every row divided by its exact sum (:mod:`numerics.stochastic`)
    logits       (B, n, n) finite floats (numpy or torch, any real float or integer dtype); stands
                 for its floats exactly
    tokens       (B, n, d) finite floats; stands for its floats exactly
    parameter    (B,) floats (each stands for itself) or B exact rationals (Fraction, int, "p/q"),
                 or one value for every instance; each within the parameter's [lo, hi] exactly

Every matrix has the same B and n; every tokens matrix the same d. A rational parameter is
evaluated at its nearest float, with that rounding as its error bound. Anything else is one line,
:class:`~theory.errors.InvalidInput`, naming the symbol, the instance and what is wrong.

>>> from theory.expr import A, delta, parameter, I
>>> from numerics.expr.program import compile_statement
>>> a = parameter("alpha", 0, 1)
>>> c = compile_statement(delta(a * I + (1 - a) * A) <= 1)
>>> inp = inputs(c, {"A": np.eye(2)[None].repeat(2, 0), "alpha": ["1/3", 1]})
>>> inp.params["alpha"], inp.param(c.params[0][0], 0)
(array([0.33333333, 1.        ]), Fraction(1, 3))
>>> inputs(c, {"A": np.eye(2)[None], "alpha": ["3/2"]})
Traceback (most recent call last):
...
theory.errors.InvalidInput: alpha: 3/2 at instance 0 is outside [0, 1]
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from numerics import kernels as K
from numerics.expr.program import Compiled, up
from numerics.stochastic import as_stochastic, loaded_torch, torch_compute_dtype
from theory.errors import InvalidInput

NOT_GRID = 1 << 20           # "not exact" in a node's fractional-bit count
GRID = 50                    # inputs are tested on the 2^-50 grid (numerics.kernels.exact_grid)
CHUNK_BYTES = 16 * 2 ** 20   # float64 bytes of one matrix node per chunk of instances


@dataclass
class Inputs:
    """Validated inputs: ``data[name]`` (B, n, n) or (B, n, d) float64 C-contiguous; ``row_dev[name]``
    (B,) a rigorous bound on the float matrix's error (max_i |exact row sum - 1| for a stochastic
    one, 0 for logits and tokens, which stand for their floats); ``bits[name]`` (B,) the fractional
    bits of stochastic matrices on the exact grid (rows summing to exactly 1), :data:`NOT_GRID`
    elsewhere; ``params[name]`` (B,) the floats used for a parameter, ``param_err[name]`` (B,) a
    bound on |float - exact value|, ``param_bits[name]`` (B,) its fractional bits where the float is
    the exact value (:data:`NOT_GRID` elsewhere), ``param_exact[name]`` the exact values where they
    were given as rationals (None: the floats are the values)."""

    data: dict
    row_dev: dict
    bits: dict
    size: int
    n: int
    d: int = 0
    params: dict = field(default_factory=dict)
    param_err: dict = field(default_factory=dict)
    param_bits: dict = field(default_factory=dict)
    param_exact: dict = field(default_factory=dict)

    def chunk_size(self) -> int:
        side = max(self.n, self.d)
        return max(1, CHUNK_BYTES // (8 * side * side))

    def param(self, name: str, b: int) -> Fraction:
        """The exact value of parameter ``name`` on instance ``b``."""
        exact = self.param_exact.get(name)
        return exact[b] if exact is not None else Fraction(float(self.params[name][b]))


def inputs(compiled: Compiled, mats: Any) -> Inputs:
    """``mats`` checked against ``compiled`` (see the module docstring); InvalidInput naming what is
    wrong and where otherwise."""
    if not isinstance(mats, Mapping):
        raise InvalidInput(f"mats: expected a mapping such as {{'A': array of shape (batch, n, n)}}, "
                           f"got {type(mats).__name__}")
    pnames = [p[0] for p in compiled.params]
    for key in mats:
        if key not in compiled.matrices and key not in pnames:
            raise InvalidInput(f"mats: {key!r} does not occur in the statement (it uses "
                               f"{', '.join(list(compiled.matrices) + pnames)})")
    data, dev, bits, first, first_tokens = {}, {}, {}, None, None
    for name in compiled.matrices:
        if name not in mats:
            raise InvalidInput(f"mats: the statement uses {name} but mats has no {name!r}")
        role = compiled.role(name) or "stochastic"
        if role == "stochastic":
            batch = as_stochastic(mats[name], name, square=True)
            if len(batch.lead) != 1:
                raise InvalidInput(f"{name}: expected shape (batch, n, n), got {batch.lead + (batch.n, batch.m)}"
                                   + ("; pass X[None] for one matrix" if not batch.lead else ""))
            X = np.ascontiguousarray(batch.data, dtype=np.float64)
            dev[name], bits[name] = batch.row_dev.astype(np.float64), grid_bits(X)
        else:
            X = real_batch(mats[name], name, role)
            dev[name], bits[name] = np.zeros(len(X)), np.full(len(X), NOT_GRID, dtype=np.int64)
        if first is not None and X.shape[:2] != data[first].shape[:2]:
            raise InvalidInput(f"mats: {name} has shape {X.shape} but {first} has {data[first].shape}; every matrix "
                               "of a statement has the same batch size and the same n")
        if role == "tokens":
            if first_tokens is not None and X.shape[2] != data[first_tokens].shape[2]:
                raise InvalidInput(f"mats: {name} has shape {X.shape} but {first_tokens} has "
                                   f"{data[first_tokens].shape}; every tokens matrix has the same d")
            first_tokens = first_tokens or name
        first = first or name
        data[name] = X
    B, n = data[first].shape[:2]
    d = data[first_tokens].shape[2] if first_tokens else 0
    inp = Inputs(data=data, row_dev=dev, bits=bits, size=B, n=n, d=d)
    for name, lo, hi in compiled.params:
        if name not in mats:
            raise InvalidInput(f"mats: the statement uses the parameter {name} but mats has no {name!r}")
        v, err, g, exact = parameter_values(mats[name], name, lo, hi, B)
        inp.params[name], inp.param_err[name], inp.param_bits[name], inp.param_exact[name] = v, err, g, exact
    return inp


def real_batch(x: Any, name: str, role: str) -> np.ndarray:
    """A logits (B, n, n) or tokens (B, n, d) batch as float64 (exactly: every float and every integer
    below 2^53 is a float64), C-contiguous; InvalidInput naming a non-finite entry and where."""
    want = "(batch, n, n)" if role == "logits" else "(batch, n, d)"
    torch = loaded_torch()
    if torch is not None and isinstance(x, torch.Tensor):
        if x.is_complex():
            raise InvalidInput(f"{name}: complex tensor (dtype {x.dtype}); {role} are real")
        x = x.detach().to(torch_compute_dtype(x, name)).cpu().numpy()
    elif isinstance(x, (list, tuple)):
        try:
            x = np.asarray(x)
        except ValueError:
            raise InvalidInput(f"{name}: ragged nested list; expected {role} of shape {want}") from None
    if not isinstance(x, np.ndarray):
        raise InvalidInput(f"{name}: expected a numpy array or torch tensor of shape {want}, got {type(x).__name__}")
    if x.dtype.kind == "b" or x.dtype.kind not in "iuf":
        raise InvalidInput(f"{name}: dtype {x.dtype}; {role} are real floats (exact rationals go to exact_sides)")
    if x.dtype.kind in "iu" and x.size and np.abs(x).max() >= 2 ** 53:
        raise InvalidInput(f"{name}: integer entries of 2^53 or more are not exact as floats; pass floats")
    if x.ndim != 3:
        raise InvalidInput(f"{name}: expected shape {want}, got {x.shape}" + ("; pass X[None] for one matrix"
                                                                              if x.ndim == 2 else ""))
    if 0 in x.shape:
        raise InvalidInput(f"{name}: empty batch or matrix (shape {x.shape})")
    if role == "logits" and x.shape[1] != x.shape[2]:
        raise InvalidInput(f"{name}: logits must be square (batch, n, n), got {x.shape}")
    X = np.ascontiguousarray(x, dtype=np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        b, i, k = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidInput(f"{name}: non-finite entry {X[b, i, k]} at instance {b}, row {i}, column {k}")
    return X


def rational(x: Any, what: str) -> Fraction:
    """One exact value: a Fraction, an int, a finite float (the rational it stands for), a "p/q"
    string or any numbers.Rational (sympy's included); InvalidInput naming ``what`` otherwise."""
    if isinstance(x, (bool, np.bool_)):
        raise InvalidInput(f"{what}: a boolean ({x}); give a number")
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise InvalidInput(f"{what}: non-finite value {x}")
        return Fraction(float(x))
    if isinstance(x, (numbers.Rational, np.integer)):
        return Fraction(int(x.numerator), int(x.denominator)) if not isinstance(x, np.integer) else Fraction(int(x))
    if isinstance(x, str):
        try:
            return Fraction(x.strip())
        except (ValueError, ZeroDivisionError):
            pass
    raise InvalidInput(f"{what}: {x!r} is not a rational number (write 1/2, a Fraction, an int or a float)")


def parameter_values(x: Any, name: str, lo: Fraction, hi: Fraction, B: int) -> tuple:
    """A parameter's values on B instances -> (floats (B,), error bounds (B,), fractional bits (B,),
    the exact values as a tuple of Fractions, or None where the floats are the values)."""
    torch = loaded_torch()
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    if isinstance(x, (list, tuple)) and x and all(type(v) is float for v in x):
        x = np.array(x)                                  # plain floats: the batched path
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        v = np.broadcast_to(x.astype(np.float64), (B,)) if x.ndim == 0 else x.astype(np.float64)
        if v.shape != (B,):
            raise InvalidInput(f"{name}: expected one value per instance, shape ({B},), got {x.shape}")
        bad = ~np.isfinite(v)
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            raise InvalidInput(f"{name}: non-finite value {float(v[b])} at instance {b}")
        out = (v < up(lo)) | (v > -up(-hi))          # exact comparisons: the float bounds nearest inside
        if out.any():
            b = int(np.flatnonzero(out)[0])
            raise InvalidInput(f"{name}: {float(v[b])!r} at instance {b} is outside [{lo}, {hi}]")
        v = np.ascontiguousarray(v)
        return v, np.zeros(B), float_bits(v), None
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "b" or x.dtype.kind not in "iuO":
            raise InvalidInput(f"{name}: dtype {x.dtype}; give floats or exact rationals")
        x = x.tolist()
    if not isinstance(x, (list, tuple)):
        x = [x] * B
    if len(x) != B:
        raise InvalidInput(f"{name}: expected one value per instance ({B}), got {len(x)}")
    exact = tuple(rational(v, f"{name} at instance {b}") for b, v in enumerate(x))
    for b, q in enumerate(exact):
        if not lo <= q <= hi:
            raise InvalidInput(f"{name}: {q} at instance {b} is outside [{lo}, {hi}]")
    floats, errs, bits = np.empty(B), np.empty(B), np.empty(B, dtype=np.int64)
    for b, q in enumerate(exact):
        try:
            f = float(q)
        except OverflowError:
            f = float("inf")
        floats[b] = f
        gap = abs(Fraction(f) - q) if np.isfinite(f) else None
        errs[b] = float("inf") if gap is None else up(gap)
        bits[b] = dyadic(q) if gap == 0 else NOT_GRID
    return floats, errs, bits, exact


def dyadic(c: Fraction) -> int:
    """Fractional bits of c if it is a float-exact dyadic rational, else NOT_GRID."""
    q = c.denominator
    if q & (q - 1) or abs(c.numerator) >= 2 ** 53:
        return NOT_GRID
    return q.bit_length() - 1


def float_bits(v: np.ndarray) -> np.ndarray:
    """Per float of v (B,): the fewest fractional bits g (at most :data:`GRID`) with v a multiple of
    2^-g, :data:`NOT_GRID` where there is none."""
    mant, expo = np.frexp(v)
    ints = (mant * 2.0 ** 53).astype(np.int64)                       # v = ints * 2^(expo - 53), exact
    low = np.where(ints != 0, ints & -ints, 1 << 53)
    tz = np.frexp(low.astype(np.float64))[1] - 1                     # trailing zero bits of ints
    g = np.where(ints != 0, np.maximum(53 - expo - tz, 0), 0)
    return np.where(g <= GRID, g, NOT_GRID).astype(np.int64)


def grid_bits(X: np.ndarray) -> np.ndarray:
    """Per matrix of X (B, n, n): the fewest fractional bits g with every entry a multiple of 2^-g,
    if that is at most 50 and every row sums to exactly 1 (:func:`numerics.kernels.exact_grid`);
    :data:`NOT_GRID` otherwise."""
    out = np.full(len(X), NOT_GRID, dtype=np.int64)
    on = np.flatnonzero(K.exact_grid(X, 2.0 ** -GRID))
    if len(on):
        v = (X[on] * 2.0 ** GRID).astype(np.int64).reshape(len(on), -1)      # exact integers <= 2^50
        low = np.where(v != 0, v & -v, 1 << GRID)                            # lowest set bit
        tz = np.frexp(low.astype(np.float64))[1] - 1
        out[on] = np.maximum(GRID - tz.min(axis=1), 0)
    return out

