"""Stress-testing at scale: sweeps of millions of seeded random instances stored as compact
per-chunk summaries, a guided search for tight cases and counterexamples, serial or on a Dask
cluster.

Its roles: ``checks`` (what is run: how each theorem is stress-tested, the names of campaigns and
chunks, the plan of a campaign and regeneration of any instance, the sweep of single matrices and
pairs, the rollout chain of stacks of L layers, per-chunk summaries, the guided search, the main
job's section design), ``findings`` (stored summaries and records -> typed per-cell tallies,
counterexamples, refutations), ``report`` (findings -> the tables, console lines and the progress
line), ``paper`` (findings -> the paper's part: tables, figures and macros), ``command`` (the
``stress`` subcommand and the main job's section).
"""
