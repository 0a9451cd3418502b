"""The modalities family's report: stored records -> statistics, tables and figures (never recomputed).

    stages       records -> per-(model, seed, checkpoint, layer) shares; the text rows as-is
    seeds        across seeds: mean, spread, t intervals; random baselines and text at matched n; the
                 tables of them (per seed, matched n, summary, power)
    comparisons  the seed-level tests (against the references, initialisation, depth) on one footing:
                 each word from the interval printed beside it, simultaneous over the run
                 (Bonferroni); TOST, minimum detectable effects
    tables       every table and figure (share against depth and against the training step) defined
                 once (:func:`verification.modalities.report.tables.parts`) and the files of the command
                 line and the main job
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> dict:
    """The tables and figures of ``plan`` (:class:`verification.modalities.checks.Plan`) under
    ``out_dir`` (:func:`verification.modalities.report.tables.write_report`), over the checkpoint
    campaigns it measured (:func:`verification.modalities.checks.measured_campaigns`)."""
    from verification.modalities.checks import measured_campaigns
    from verification.modalities.report.tables import write_report

    return write_report(store, plan, Path(out_dir), console, measured_campaigns(store, plan))
