"""Machine-checked proofs of the Dobrushin theorems in small dimension, through the z3 SMT solver.

For fixed sizes each statement of docs/theory.md §1 becomes a query for a counterexample over exact
rationals: ``unsat`` proves it at that size for *all* stochastic matrices, ``sat`` gives a
counterexample that is re-checked exactly (:mod:`numerics.smt.exact`), ``unknown`` is undecided.

    STATEMENTS[key]              the statements and their deliberately wrong variants
    decide(statement, dims, timeout)   -> SmtResult (proved / counterexample / undecided)
    SPLIT[key]                   case-split encodings (symmetry-reduced) that reach further
"""
from numerics.smt.solve import STATUSES, SmtResult, decide, fractions, recheck  # noqa: F401
from numerics.smt.split import SPLIT, decide_split  # noqa: F401
from numerics.smt.statements import STATEMENTS, Statement  # noqa: F401

__all__ = ["SPLIT", "STATEMENTS", "STATUSES", "SmtResult", "Statement", "decide", "decide_split",
           "fractions", "recheck"]
