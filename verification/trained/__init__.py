"""Trained transformers: how often D1's equality holds and how tight rollout is, per layer and head
(docs/theory.md, sections 1 and 2).

checks (the plan, model + corpus -> records; ``checks.heads``: a user's statement on every head),
report (stored records -> findings, typed values: ``report.findings`` per model, ``report.models``
across the main job's models; rendered to tables and figures, Markdown/CSV and PNG/PDF), paper
(``paper_part``: the same findings as the paper's tables, figures and macros), command (the CLI
subcommand ``rollout`` and the main-job section ``trained``). The models come from
:mod:`numerics.sources.models`.
"""
