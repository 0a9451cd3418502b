"""Trained transformers: how often D1's equality holds and how tight rollout is, per layer and head.

checks (model + corpus -> records), report (stored records -> tables, figures), command (CLI
``rollout`` + main-job section ``trained``). The models come from :mod:`numerics.sources.models`.
"""
from verification.trained.command import SECTION, register, verify_section  # noqa: F401
from verification.trained.paper import paper_part  # noqa: F401
