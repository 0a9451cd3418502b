r"""The notation of the SMT (prove) family's tables and captions (:mod:`verification.prove.paper`):
the sizes of the statements proved ($n \times n \times n$), spelled once here so that the family's
modules hold no LaTeX."""
from __future__ import annotations

REACH_CAPTION = ("Dobrushin statements proved by both z3 and cvc5 for all row-stochastic matrices of every size "
                 r"up to the one shown (D2: $n \times n \times n$), within the stated budget per size and solver.")
