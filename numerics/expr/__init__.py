"""A user's statement (:mod:`theory.expr`) computed: compiled once, evaluated in batches, decided
with certified verdicts (docs/theory.md §6).

Public API:

    compile_statement(s)        validate and compile a statement once          -> Compiled
    evaluate(c, mats)           batched float sides with rigorous error bounds -> lhs (B,), rhs (B,), err (B, 2)
    exact_sides(c, mats)        both sides exactly, one instance               -> (Fraction, Fraction)
    sides(c, values)            both sides exact or certified, one instance    -> (value, value)
    compare(x, y)               the certified sign of x - y                    -> -1, 0, 1 or None (undecided)
    decide(c, mats, assume)     certified verdicts per instance                -> Decision
    assumed(mats, assume)       which instances satisfy the hypotheses          -> (B,) bool
    exact_matrix(x, name)       one matrix as the exact rational matrix it stands for

``mats`` maps each matrix of the statement ("A", "B", "C") to row-stochastic float matrices of one
shape (B, n, n) (one (n, n) matrix, or rows of rationals, for :func:`exact_sides`). A float matrix
stands for its floats with every row divided by its exact sum (:mod:`numerics.stochastic`).

>>> from theory.expr import A, I, delta
>>> c = compile_statement(delta(A**2) <= delta(A)**2)          # a corollary of Theorem D2
>>> d = decide(c, {"A": np.array([[[0.5, 0.5], [0.25, 0.75]]])})
>>> str(d.verdicts[0]), exact_sides(c, {"A": [["1/2", "1/2"], ["1/4", "3/4"]]})
('tight', (Fraction(1, 16), Fraction(1, 16)))
"""
import numpy as np  # noqa: F401  (the doctest above)

from numerics.expr.certified import compare, exact_sides, sides
from numerics.expr.decide import Decision, assumed, decide
from numerics.expr.exact import exact_matrix
from numerics.expr.floats import evaluate
from numerics.expr.program import Compiled, compile_statement

__all__ = ["Compiled", "Decision", "assumed", "compare", "compile_statement", "decide", "evaluate", "exact_matrix", "exact_sides",
           "sides"]
