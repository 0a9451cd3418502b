"""Stress-testing at scale: sweeps of millions of seeded random instances stored as compact
per-chunk summaries, a guided search for tight cases and counterexamples, serial or on a Dask
cluster.

Its roles: ``checks`` (what is run: the plan of a campaign and regeneration of any instance, the
sweep of single matrices and pairs, the rollout chain of stacks of L layers, per-chunk summaries,
the guided search, the main job's section design), ``report`` (stored summaries -> the tables and
the progress line), ``paper`` (the paper's part: tables, figure and macros), ``command`` (the
``stress`` subcommand and the main job's section).
"""
