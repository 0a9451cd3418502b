"""The rank family's tables and figures, rendered from its findings (:mod:`verification.rank.findings`).

    linear     R(r) vs r, GD (population, finite data), estimators; the outcome shares (Wilson 95%)
    attention  kernel recovery, GD students, the interpolation ladder
    softmax    softmax recovery by value map (regression vs nonlinear fit), estimators on recovered kernels
    weights    effective ranks of trained heads, per model and per layer
    cells      how a typed finding is written into a cell or a macro
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> dict:
    """The tables (under ``out_dir/tables``) and figures (``out_dir/figures``) of every part of
    ``plan`` (a :class:`verification.rank.checks.Plan`), from the store; the summary numbers each
    part's report returns."""
    from verification.rank.findings import findings

    found = findings(store, plan)
    summary: dict[str, Any] = {}
    tables, figures = Path(out_dir) / "tables", Path(out_dir) / "figures"
    if found.linear is not None:
        from verification.rank.report.linear import report_linear

        summary.update(report_linear(store, plan, tables, figures, console, found.linear))
    if found.attention is not None:
        from verification.rank.report.attention import report_attention

        summary.update(report_attention(store, plan, tables, figures, console, found.attention))
    if found.weights is not None:
        from verification.rank.report.weights import report_weights

        summary.update(report_weights(store, plan, tables, figures, console, f=found.weights))
    return summary
