"""The modalities family's report: the findings (:mod:`verification.modalities.findings`) rendered to
tables and figures (never recomputed).

    seeds        the seed-level tables (per seed, matched n, summary, power) and the cells they share:
                 each word beside the interval that decides it
    tables       every table and figure (share against depth and against the training step) defined
                 once (:func:`verification.modalities.report.tables.parts`) and the files of the command
                 line and the main job
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> dict:
    """The tables and figures of ``plan`` (:class:`verification.modalities.checks.Plan`) under
    ``out_dir`` (:func:`verification.modalities.report.tables.write_report`), from its findings
    (:func:`verification.modalities.findings.findings`: the checkpoint campaigns it measured)."""
    from verification.modalities.findings import findings
    from verification.modalities.report.tables import write_report

    return write_report(findings(store, plan), Path(out_dir), console)
