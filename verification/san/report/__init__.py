"""The SAN family's report: stored records -> tables and figures (never recomputed).

    tables    the table builders and figures (runs, probes, claims, robustness, spectra,
              trainability, rollout, bottleneck) and :func:`~verification.san.report.tables.write_part`
    claims    the reproduction report's typeset tables: the claims, what each numerical path found,
              the power analysis, the identity checks
    part      one preset's results as a Part (tables, figures, macros): what the paper selects from
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> Any:
    """The Part of ``plan`` (:class:`verification.san.checks.Plan`; its preset, seed, device and
    numerical paths) written under ``out_dir`` (tables: Markdown and CSV; figures: PNG and PDF); the Part."""
    from verification.san.report.part import paper_part
    from verification.san.report.tables import write_part

    part = paper_part(store, plan)
    write_part(part, Path(out_dir), console)
    return part
