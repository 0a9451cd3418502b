"""The rank family's tables and figures, aggregated from stored records only (never recomputed).

    linear     R(r) vs r, GD (population, finite data), estimators; the outcome shares (Wilson 95%)
    attention  kernel recovery, GD students, the interpolation ladder
    softmax    softmax recovery by value map (regression vs nonlinear fit), estimators on recovered kernels
    weights    effective ranks of trained heads, per model and per layer
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> dict:
    """The tables (under ``out_dir/tables``) and figures (``out_dir/figures``) of every part of
    ``plan`` (a :class:`verification.rank.checks.Plan`), from the store; the summary numbers each
    part's report returns."""
    summary: dict[str, Any] = {}
    tables, figures = Path(out_dir) / "tables", Path(out_dir) / "figures"
    if "linear" in plan.parts:
        from verification.rank.report.linear import report_linear

        summary.update(report_linear(store, plan, tables, figures, console))
    if "attention" in plan.parts:
        from verification.rank.report.attention import report_attention

        summary.update(report_attention(store, plan, tables, figures, console))
    if "weights" in plan.parts:
        from verification.rank.report.weights import report_weights

        summary.update(report_weights(store, plan, tables, figures, console))
    return summary
