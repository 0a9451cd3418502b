"""Dobrushin family: Theorems D1/D2 on random row-stochastic matrices.

Its roles: ``checks`` (the campaign's plan -> chunks -> one record per instance, each checked by
the one vectorised check of D1/D2, :func:`numerics.dobrushin.batch.check_batch`),
``report`` (stored records -> the per-family, per-n table), ``paper`` (the paper's tables,
figures and macros), ``command`` (the ``dobrushin`` subcommand and the main job's section).
"""
