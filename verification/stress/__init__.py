"""Stress-testing at scale: sweeps of millions of seeded random instances stored as compact
per-chunk summaries, a guided search for tight cases and counterexamples, serial or on a Dask
cluster.

plan (campaign, chunks, regeneration of any instance), sweep (one chunk: float filter, exact
certification, summary), rollout (the rollout chain: Theorem D2 at every step of stacks of L
random layers), summaries (per-chunk summary, kept instances, merge), search (hypothesis
``target()`` and a local optimiser on the simplex rows), report (tables, progress), command (the
``stress`` subcommand), paper_part (the paper's part).
"""
from verification.stress.command import SECTION, register, verify_section  # noqa: F401
from verification.stress.paper_part import paper_part  # noqa: F401
