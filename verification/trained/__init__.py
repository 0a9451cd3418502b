"""Trained transformers: how often D1's equality holds and how tight rollout is, per layer and head
(docs/theory.md, sections 1 and 2).

checks (model + corpus -> records), report (stored records -> tables and figures, Markdown/CSV and
PNG/PDF), paper (``paper_part``: the paper's tables, figures and macros), command (the CLI
subcommand ``rollout`` and the main-job section ``trained``). The models come from
:mod:`numerics.sources.models`.
"""
