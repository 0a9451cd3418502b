"""The Poincare family's report: stored records -> tables and figures (never recomputed).

* :mod:`~verification.poincare.report.tables`: the campaign's own tables (bounds, Villani outcomes,
  thresholds, SDE), each built once as a :class:`verification.report.tables.Table`.
* :mod:`~verification.poincare.report.findings`: the findings tables (Villani map with Wilson shares,
  collapsed lower bounds, expected loss).
* :mod:`~verification.poincare.report.figures`: C_P and its bounds against lambda and beta.
* :mod:`~verification.poincare.report.write`: ``report(store, plan, tables_dir, figures_dir, console)``
  writes and prints all of them.
"""
