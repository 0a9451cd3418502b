"""SMT family: the Dobrushin theorems (docs/theory.md, section 1) proved for all matrices of small
size by z3 (:mod:`numerics.smt`).

checks (plan -> chunks -> records), findings (stored records -> typed values: answers, reach,
symmetry, variants), report (findings -> tables), paper (``paper_part``: findings -> the paper's
tables and macros), command (the ``attnbounds prove`` subcommand and the ``prove`` section
of the main job).
"""
