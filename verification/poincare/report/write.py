"""Everything the Poincare report writes and prints, from stored records only (no recomputation):
the tables of :mod:`verification.poincare.report.tables` and
:mod:`~verification.poincare.report.findings` (Markdown + CSV under ``tables_dir``, and on the
console) and the figures of :mod:`verification.poincare.report.figures` (under ``figures_dir``).
"""
from __future__ import annotations

from pathlib import Path

from verification.poincare.report.figures import constant_figures
from verification.poincare.report.findings import write_findings
from verification.poincare.report.tables import (bounds_table, by_instance, muckenhoupt_table, provenance,
                                                 sde_loss_table, sde_table, thresholds_table, villani_table)
from verification.report.tables import print_table


def report(store, plan, tables_dir, figures_dir, console) -> None:
    """Write and print every Poincare table of ``plan`` and draw its figures."""
    from verification.poincare.checks.sde import sde_campaign
    from verification.poincare.checks.villani import map_campaign

    bounds = bounds_table(store, plan)
    bounds.write(tables_dir)
    print_table(console, bounds.rows(), bounds.columns(), "Poincare: estimated constant and bounds")
    villani = villani_table(store, plan)
    villani.write(tables_dir)
    print_table(console, villani.rows(), villani.columns(), "Poincare: Villani condition")
    mk = muckenhoupt_table(store, plan)
    if len(mk.frame):
        mk.write(tables_dir)
        print_table(console, mk.rows(), mk.columns(), "Poincare: certified 1-D brackets (Muckenhoupt)")
    thresholds = thresholds_table(store, plan)
    thresholds.write(tables_dir)
    print_table(console, thresholds.rows(), thresholds.columns(), "Poincare: where each derivation goes through")
    sde = sde_campaign(plan.seed, plan.full)
    sdet = sde_table(store, sde, plan)
    if len(sdet.frame):
        sdet.write(tables_dir)
        print_table(console, sdet.rows(), sdet.columns(), "Poincare: Langevin SDE")
    sl = sde_loss_table(store, sde, plan)
    if len(sl.frame):
        sl.write(tables_dir)
        print_table(console, sl.rows(), sl.columns(), "Poincare: does the SDE minimise the loss?")
    write_findings(store, plan, dict(sorted(by_instance(store, plan.campaign).items())), sde,
                   map_campaign(plan.seed, plan.full), tables_dir, console)
    constant_figures(bounds.rows(), Path(figures_dir), provenance(plan))
