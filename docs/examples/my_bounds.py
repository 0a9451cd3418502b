"""A theory file: bounds of your own over row-stochastic matrices, for `--theory` (docs/your-theorem.md).

Each statement is a sympy relation over theory.expr's vocabulary; id, title, category and statement
are all a theorem needs: hypotheses (row-stochastic), evaluators and a witness are derived.
"""
from theory import Theorem, register
from theory.expr import A, B, I, Max, delta

# a corollary of Theorem D2 (submultiplicativity), with A = B
register(Theorem(id="mine.square", title="delta(A^2) <= delta(A)^2", category="proved",
                 statement=delta(A**2) <= delta(A)**2))

# Theorem D1 restated in the vocabulary: the suite's built-in sweep must agree verdict for verdict
register(Theorem(id="mine.d1", title="Theorem D1, restated", category="proved",
                 statement=delta((I + A) / 2) <= (1 + delta(A)) / 2,
                 equality_condition=None))

# delta is convex: the mean of two attention matrices mixes no worse than their average
register(Theorem(id="mine.convex", title="delta is convex", category="proved",
                 statement=delta((A + B) / 2) <= (delta(A) + delta(B)) / 2))

# a guess that is false: a conjecture, so its counterexamples are findings, never a stop
register(Theorem(id="mine.guess", title="a product halves the larger coefficient", category="conjecture",
                 statement=delta(A * B) <= Max(delta(A), delta(B)) / 2))
