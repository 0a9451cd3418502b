"""SMT family: the Dobrushin theorems (docs/theory.md, section 1) proved for all matrices of small
size by z3 (:mod:`numerics.smt`).

checks (plan -> chunks -> records), report (stored records -> tables), paper (``paper_part``: the
paper's tables and macros), command (the ``attnbounds prove`` subcommand and the ``prove`` section
of the main job).
"""
