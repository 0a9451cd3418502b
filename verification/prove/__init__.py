"""SMT family: the Dobrushin theorems proved for all matrices of small size by z3 (``numerics.smt``).

checks (plan -> chunks -> records), report (stored records -> tables), command (CLI + section),
paper (the paper's part).
"""
from verification.prove.command import SECTION, register, verify_section  # noqa: F401
from verification.prove.paper import paper_part  # noqa: F401
