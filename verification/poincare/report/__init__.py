"""The Poincare family's report: its findings (:mod:`verification.poincare.findings`) -> tables and
figures (never recomputed).

* :mod:`~verification.poincare.report.tables`: the campaign's own tables (bounds, Villani outcomes,
  thresholds, SDE), each built once as a :class:`verification.report.tables.Table`.
* :mod:`~verification.poincare.report.findings`: the findings tables (Villani map with its boundary,
  collapsed lower bounds, expected loss).
* :mod:`~verification.poincare.report.figures`: C_P and its bounds against lambda and beta.
* :func:`report` (here): writes (Markdown + CSV under ``out_dir/tables``, figures under
  ``out_dir/figures``) and prints all of them.
"""
from __future__ import annotations

from pathlib import Path

from verification.poincare.findings import findings as findings_of
from verification.poincare.report.figures import constant_figures
from verification.poincare.report.findings import write_findings
from verification.poincare.report.tables import (bounds_table, muckenhoupt_table, provenance, sde_loss_table,
                                                 sde_table, thresholds_table, villani_table)
from verification.report.tables import print_table


def report(store, plan, out_dir, console) -> None:
    """Write (under ``out_dir/tables``) and print every Poincare table of ``plan`` and draw its
    figures (under ``out_dir/figures``)."""
    tables_dir, figures_dir = Path(out_dir) / "tables", Path(out_dir) / "figures"
    f = findings_of(store, plan)
    bounds = bounds_table(f, plan)
    bounds.write(tables_dir)
    print_table(console, bounds.rows(), bounds.columns(), "Poincare: estimated constant and bounds")
    villani = villani_table(f, plan)
    villani.write(tables_dir)
    print_table(console, villani.rows(), villani.columns(), "Poincare: Villani condition")
    mk = muckenhoupt_table(f, plan)
    if len(mk.frame):
        mk.write(tables_dir)
        print_table(console, mk.rows(), mk.columns(), "Poincare: certified 1-D brackets (Muckenhoupt)")
    thresholds = thresholds_table(f, plan)
    thresholds.write(tables_dir)
    print_table(console, thresholds.rows(), thresholds.columns(), "Poincare: where each derivation goes through")
    sdet = sde_table(f, plan)
    if len(sdet.frame):
        sdet.write(tables_dir)
        print_table(console, sdet.rows(), sdet.columns(), "Poincare: Langevin SDE")
    sl = sde_loss_table(f, plan)
    if len(sl.frame):
        sl.write(tables_dir)
        print_table(console, sl.rows(), sl.columns(), "Poincare: does the SDE minimise the loss?")
    write_findings(f, plan, tables_dir, console)
    constant_figures(f.instances, Path(figures_dir), provenance(plan))
