"""Dobrushin family: Theorems D1/D2 on random row-stochastic matrices.

Its roles: ``checks`` (the campaign's plan -> chunks -> one record per instance, each checked by
the one vectorised check of D1/D2, :func:`numerics.dobrushin.batch.check_batch`),
``findings`` (stored records -> typed values: shares per family and n, the causal-share
test), ``report`` (findings -> the per-family, per-n tables), ``paper`` (findings -> the paper's
tables, figures and macros), ``command`` (the ``dobrushin`` subcommand and the main job's section).
"""
