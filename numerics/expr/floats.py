"""The batched float evaluator of a compiled statement, with a rigorous error bound per side.

"Exact" means the statement evaluated in exact arithmetic on what the inputs stand for
(:mod:`numerics.expr.inputs`): a stochastic matrix's floats with every row divided by its exact
sum, logits and tokens their floats, a parameter its float or the rational it was given as. Every
node carries, per instance, its float value and a bound on |float - exact| (for a matrix: on the
largest row sum of |float - exact|, which bounds every entry too), propagated through the program
with unit roundoff u = 2^-53, eta = 2^-1074 (underflow) and, for exp, log, tanh, sqrt and powers,
the libm assumption below (rho, h):

    input X       max_i |s_i - 1| for a stochastic X, s_i the exact row sum (X_i - X_i / s_i has L1
                  norm |s_i - 1|); 0 for logits and tokens; a parameter |fl(p) - p|
    lin           sum |c_i| e_i + sum (|fl(c_i) - c_i| + u |fl(c_i)|) M_i + (k + 1) 2u S + k cols eta
    s X           e_s |X| + |s| e_X + u |s| M_X + cols eta          (s a scalar node)
    X Y           e_X M_Y + |X| e_Y + 1.01 k u M_X M_Y + k cols eta  (k the inner size; any summation
                  order, FMA or not)
    X^T           rows e_X      (a row sum of |E^T| is a column sum of |E|: at most rows times e_X)
    softmax(S)    2 s / (1 - s) + 1.01 (cols + 1) u + cols 2^-1000, s = (1 + rho)(1 + e_S + 800 u)(e_S
                  + 0.63 cols u) + rho, where e_S <= 1/4; at most 2 + 2 (cols + 2) u (two probability
                  vectors). With m_i the row's float maximum, t_ij = fl(S_ij - m_i) is within
                  delta_ij = e_S + 1.01 u |t_ij| of the exact S_ij - m_i, so each weight exp(t_ij)(1 +- rho)
                  is the exact one times w_ij, |w_ij - 1| <= (1 + rho)(1 + delta) delta_ij + rho; the
                  normalised weights then differ by at most 2 sum_j P_ij |w_ij - 1| / (1 - that sum)
                  in L1, and P_ij <= e^(t_ij + delta_ij + e_S), |t| e^t <= 1/e bound the u |t_ij| part
                  by 0.63 u per entry. Entries more than 800 below the row's maximum are below
                  2^-1150 in both (the 2^-1000 term), the mask's entries are exact zeros; then the sum
                  and the divisions.
    delta(M)      e_M + 4 (n + 4) u M + 2 eta   (delta is 1-Lipschitz in the row L1 distance; the
                  min-form kernel's row sums, overlaps and halving, in any order)
    entry_min/max e_M          ptp, spread: 2 e_M + u |v|          norm_inf: e_M + 1.01 cols u v
    norm_1        rows e_M + 1.01 rows u v     trace: rows e_M + 1.01 rows u sum |M_ii|
    col_min_sum   min(rows, cols) e_M + 1.01 cols u sum_j |min_i M_ij|
    norm_fro      sqrt(rows) e_M + 1.01 (rho + 1.01 N u)(v + sqrt(N eta)) + sqrt(N eta) + h  (N entries)
    slem          inf: a float value from numpy's eigenvalues, always left to the certified path
    scalar lin    |fl(c_0) - c_0| + sum (|c_i| e_i + |fl(c_i) - c_i| |v_i|) + (k + 1) 2u S + k eta
    x y           |x| e_y + |y| e_x + e_x e_y + 2u |xy| + eta;   1/y: e_y / (|y| (|y| - e_y)) + 2u/|y| + eta
    max, min      the largest of the arguments' bounds            |x|: e_x
    exp(x)        (|v| + h) / (1 - rho) (E(e_x) + rho) + h,  E(e) = e + e^2 for e <= 1 (>= e^e - 1)
    log(x)        e_x / (x - e_x) + rho (|v| + h) / (1 - rho) + h where x - e_x > 0, else inf
    tanh(x)       min(e_x, 2) + rho min((|v| + h) / (1 - rho), 1) + h
    x^q           (q rational, not an integer) the argument's part q (x + e)^(q-1) e (q > 1),
                  min(e^q, q (x - e)^(q-1) e) (0 < q < 1), |q| (x - e)^(q-1) e (q < 0), plus libm's
                  and the rounded exponent's part; inf where x - e < 0 (x > e for q < 0) unless
                  the argument is nonnegative by construction (a norm, a delta, exp, ...)

(M: a bound on the float matrix's largest absolute row sum, static bound plus error; where the
program has no static bound, one for the chunk from the arguments' (a transpose: rows times its
argument's), else per instance from the floats (logits, tokens:
:func:`numerics.expr.float_trace.magnitude`); |X| the exact
matrix's; S the sum of the magnitudes added; v the float value.) The constants are
deliberately loose: the bound only decides which instances the exact path must see, and a looser
bound sends a few more there. The bound is computed in floats and multiplied by ``SAFE`` =
1 + 2^-30 for that rounding. A domain error (log of a value <= 0, a power of a negative value, a
division by 0) gives the value nan or inf and the bound inf: the exact path decides there.

The libm assumption: numpy's float64 ``exp``, ``log``, ``tanh``, ``sqrt`` and ``power`` are within
:data:`LIBM_ULPS` ulp of the true value (relative error rho = LIBM_ULPS 2^-52, absolute h =
LIBM_ULPS eta where the result is subnormal). That is far above what glibc documents for these
functions (at most a few ulp; numpy's own SIMD exp/log are documented within 4 ulp), and
``tests/numerics/test_expr_floats.py`` checks it against mpmath on many random arguments over the
ranges the rules use; see docs/reliability.md.

Where the inputs lie on a dyadic grid (entries multiples of 2^-g, rows summing to exactly 1:
one-hot, coarse dyadic; parameters that are dyadic floats) every operation whose values provably
fit in 53 bits is exact (sums, products, transposes, entry_min/max, ptp, spread, col_min_sum,
norm_inf, norm_1, trace, |x|; never exp, log, tanh, powers, softmax or norm_fro); the error is then
0 and the float value is the exact one (tracked per node and instance as the number of fractional
bits, :data:`NOT_GRID` where not exact).

The delta kernel is :func:`numerics.kernels.dobrushin_batch`, the compiled min-form behind
:func:`numerics.dobrushin.dobrushin` (inputs are validated once here, intermediate matrices are
not revalidated); products are numpy's batched matmul.

This module walks the program (:func:`trace`, :func:`evaluate`); the rules above are coded in
:mod:`numerics.expr.float_matrix` (matrix nodes) and :mod:`numerics.expr.float_scalar` (scalar nodes
and functionals of a matrix), over the per-node state and shared bounds of
:mod:`numerics.expr.float_trace`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from numerics.expr.float_matrix import matrix_step
from numerics.expr.float_scalar import nonnegative, scalar_step
from numerics.expr.float_trace import LIBM_ULPS, Trace
from numerics.expr.inputs import NOT_GRID, Inputs, inputs
from numerics.expr.program import Compiled

__all__ = ["LIBM_ULPS", "NOT_GRID", "SAFE", "Inputs", "Trace", "evaluate", "inputs", "trace"]

SAFE = 1.0 + 2.0 ** -30


def trace(compiled: Compiled, inp: Inputs, lo: int, hi: int) -> Trace:
    """Every node of ``compiled`` (the ``where=`` relations' included) on instances lo..hi of ``inp``."""
    nodes = compiled.nodes
    tr = Trace([], [], [], [node.mag if math.isfinite(node.mag) else None for node in nodes], nodes, (inp.n, inp.d))
    pos = nonnegative(nodes)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for k, node in enumerate(nodes):
            if node.matrix:
                v, e, g = matrix_step(k, tr, inp, lo, hi)
            else:
                v, e, g = scalar_step(k, tr, inp, lo, hi, pos)
                e = np.where(np.isfinite(v), e, np.inf)
            tr.value.append(v)
            tr.err.append(e)
            tr.bits.append(g)
    return tr


def evaluate(compiled: Compiled, mats: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both sides of ``compiled`` on every instance of ``mats`` (:func:`numerics.expr.inputs.inputs`:
    {"A": (B, n, n), "L": (B, n, n), "alpha": (B,), ...}) -> (lhs (B,), rhs (B,), err (B, 2)), float64,
    with ``err[:, 0]`` and ``err[:, 1]`` rigorous bounds on |lhs - exact lhs| and |rhs - exact rhs|
    (see the module docstring; 0 where the float evaluation is provably exact, inf where no bound
    holds, e.g. near a division by zero, a log of a value near 0, or slem).

    >>> from theory.expr import A, I, delta
    >>> from numerics.expr.program import compile_statement
    >>> c = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
    >>> lhs, rhs, err = evaluate(c, {"A": np.array([[[0.75, 0.25], [0.25, 0.75]]])})
    >>> lhs, rhs, err                     # dyadic rows summing to exactly 1: exact, tight
    (array([0.75]), array([0.75]), array([[0., 0.]]))
    >>> from theory.expr import logits, softmax, exp, ptp
    >>> L = logits("L")
    >>> c = compile_statement(delta(softmax(L)) <= 1 - exp(-ptp(L)))
    >>> lhs, rhs, err = evaluate(c, {"L": np.array([[[0.0, 1.0], [1.0, 0.0]]])})
    >>> bool(lhs[0] < rhs[0]), bool((err < 1e-13).all())
    (True, True)
    """
    inp = inputs(compiled, mats)
    lhs, rhs, err = np.empty(inp.size), np.empty(inp.size), np.empty((inp.size, 2))
    step = inp.chunk_size()
    for lo in range(0, inp.size, step):
        hi = min(lo + step, inp.size)
        tr = trace(compiled, inp, lo, hi)
        lhs[lo:hi], rhs[lo:hi] = tr.value[compiled.lhs], tr.value[compiled.rhs]
        err[lo:hi, 0], err[lo:hi, 1] = tr.err[compiled.lhs] * SAFE, tr.err[compiled.rhs] * SAFE
    return lhs, rhs, err
