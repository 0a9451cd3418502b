"""Machine-checked proofs of the Dobrushin theorems in small dimension, through two SMT solvers.

For fixed sizes each statement of docs/theory.md §1 becomes a list of queries for a counterexample
over exact rationals, each one SMT-LIB 2 text that z3 and cvc5 both decide: ``unsat`` from both
proves it at that size for *all* stochastic matrices, ``sat`` gives a counterexample that is
re-checked exactly (:mod:`numerics.smt.exact`), anything else is undecided; opposite answers are a
:class:`SolverDisagreement`.

    STATEMENTS[key]              the statements (with their premises ``needs`` and their per-query
                                 ``mutation``) and their deliberately wrong variants
    decide(statement, dims, timeout)   -> SmtResult (proved / counterexample / undecided, both solvers)
    digest(statement, dims)      the hash of the query texts (the key of a stored answer)
    SPLIT[key]                   case-split encodings (symmetry-reduced) that reach further
    statement_for(id, statement) a user's theorem over theory.expr as a Statement (numerics.smt.user)
"""
from numerics.smt.solve import (STATUSES, SmtResult, SolverDisagreement, decide, digest, fractions,  # noqa: F401
                                queries, recheck)
from numerics.smt.split import SPLIT, decide_split  # noqa: F401
from numerics.smt.statements import STATEMENTS, Mutation, Statement  # noqa: F401

__all__ = ["SPLIT", "STATEMENTS", "STATUSES", "Mutation", "SmtResult", "SolverDisagreement", "Statement", "decide",
           "decide_split", "digest", "fractions", "queries", "recheck"]
from numerics.smt.user import UserStatement, statement_for  # noqa: E402,F401  (a user's theorem over theory.expr)

__all__ += ["UserStatement", "statement_for"]
