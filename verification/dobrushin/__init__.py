"""Dobrushin family: Theorems D1/D2 on random row-stochastic matrices.

checks (plan -> chunks -> records), report (stored records -> tables), command (CLI + section).
"""
from verification.dobrushin.command import SECTION, register, verify_section  # noqa: F401
from verification.dobrushin.paper import paper_part  # noqa: F401
