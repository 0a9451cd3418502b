"""The report's figures of one model (PNG + PDF), drawn from its findings: the share of inputs with
D1 equality per layer and head (a panel per token set that has records), the distribution of D1's
slack, and the rollout bounds by depth (median and quartile band).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verification.report.figures import save_figure
from verification.trained.findings.model import ModelFindings
from verification.trained.findings.records import VARIANTS
from verification.trained.report.tables import VARIANT_TITLES

CURVE_LABELS = {"value": ("delta(R_l)", "-"), "bound": ("prod delta(Ahat)", "-"),
                "prod_factor_bound": ("prod (1+delta(A))/2", "--")}


def figures(f: ModelFindings, model: Any, fig_dir: Path, s: str, prov: str) -> list[Path]:
    """``trained_heatmap_<s>``, ``trained_slack_<s>`` and ``trained_rollout_<s>`` of ``model``'s findings."""
    from matplotlib.ticker import MaxNLocator

    from verification.report.aggregate import pyplot

    plt = pyplot()
    q = " (4-bit quantised weights)" if model.quantised else ""
    paths: list[Path] = []
    variants = [v for v in VARIANTS if v in f.sets and f.sets[v].heads.size]   # never an empty panel
    fig, axes = plt.subplots(1, len(variants), figsize=(3.2 * len(variants) + 1, 4.5), squeeze=False)
    for ax, v in zip(axes[0], variants):
        im = ax.imshow(f.sets[v].heads, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_title(VARIANT_TITLES[v], fontsize=9)
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.colorbar(im, ax=axes[0].tolist(), label="share of inputs with D1 equality")
    fig.suptitle(f"{model.name}{q}: D1 equality per head", fontsize=10)
    paths += save_figure(fig, fig_dir, f"trained_heatmap_{s}", prov)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for v in variants:
        sl = np.array(f.sets[v].slacks, dtype=float)
        pos = sl[sl > 0]
        label = f"{VARIANT_TITLES[v]}: {np.sum(sl == 0)}/{sl.size} exactly 0"
        ax.hist(np.log10(pos) if pos.size else [], bins=30, histtype="step", label=label)
    ax.set_xlabel("log10 slack of D1 on head-averaged A (slack > 0 only)")
    ax.set_ylabel("layer x input count")
    ax.legend(fontsize=7)
    ax.set_title(f"{model.name}{q}: D1 slack", fontsize=10)
    fig.tight_layout()
    paths += save_figure(fig, fig_dir, f"trained_slack_{s}", prov)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for c in f.curves:
        label, style = CURVE_LABELS[c.key]
        xs = [l + 1 for l in c.layers]
        ax.plot(xs, list(c.median), style, marker=".", label=label)
        ax.fill_between(xs, list(c.q25), list(c.q75), alpha=0.2)
    ax.set_yscale("log")
    ax.set_xlabel("depth l")
    ax.set_ylabel("median over inputs (IQR band)")
    ax.legend(fontsize=8)
    ax.set_title(f"{model.name}{q}: rollout bounds, all tokens", fontsize=10)
    fig.tight_layout()
    paths += save_figure(fig, fig_dir, f"trained_rollout_{s}", prov)
    plt.close(fig)
    return paths
