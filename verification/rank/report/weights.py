"""Tables and the figure of the trained-head ranks (:mod:`verification.rank.checks.weights`),
rendered from their findings (:mod:`verification.rank.findings.weights`).

Per (model, circuit): energy (0.9, 0.99) and entropy effective ranks of the QK kernels and OV
circuits against the head dimension, and the share of heads whose rank = dh is certified; per
layer: the mean effective ranks over heads. smollm2 is the 4-bit GGUF model dequantised by
transformers: its numbers are those of the quantised weights (said in every table).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verification.rank.checks.weights import CAMPAIGN, MODELS
from verification.rank.findings.weights import WeightsFindings, weights_findings
from verification.rank.report import cells as C
from verification.report.aggregate import group as _group
from verification.report.aggregate import pyplot as _plt
from verification.report.figures import save_figure
from verification.report.tables import Table, print_table


def _label(name: str, quantised: bool) -> str:
    return f"{name} (quantised 4-bit)" if quantised else name


SUMMARY_COLUMNS = ["model", "circuit", "heads (all layers)", "head dim", "energy_0.9 mean (min-max)",
                   "energy_0.99 mean (min-max)", "entropy rank mean (min-max)", "energy_0.99 / dh",
                   "rank = dh certified"]


def summary_rows(f: WeightsFindings) -> list[list]:
    """One row per (model, circuit): effective ranks over all heads, the certified head-rank share."""
    return [[_label(c.model, c.quantised), c.circuit.upper(), c.heads, c.head_dim,
             f"{c.energy_90.mean:.1f} ({c.energy_90.lo}-{c.energy_90.hi})",
             f"{c.energy_99.mean:.1f} ({c.energy_99.lo:.0f}-{c.energy_99.hi:.0f})",
             f"{c.entropy.mean:.1f} ({c.entropy.lo:.1f}-{c.entropy.hi:.1f})", f"{c.energy_99.mean / c.head_dim:.2f}",
             C.count(c.certified)] for c in f.circuits]


SPECTRA = "spectra via QR of each factor + SVD of the dh x dh core"
LAYER_COLUMNS = ["model", "layer", "QK energy_0.99", "OV energy_0.99", "QK entropy rank", "OV entropy rank"]


def summary_table(f: WeightsFindings, prov: str, command: str) -> Table:
    """``rank-weights``: :func:`summary_rows` with its caption; ``command`` fills its campaign."""
    return Table.from_rows(
        "rank-weights", summary_rows(f), SUMMARY_COLUMNS,
        "Effective ranks of per-head QK kernels W_Q W_K^T and OV circuits W_V W_O of the embedded models "
        "(biases ignored; for smollm2 the static QK kernel is the RoPE kernel at relative offset 0; "
        "smollm2 weights are 4-bit GGUF dequantised: quantised weights).", prov,
        campaigns=(CAMPAIGN,), command=command)


def layer_rows(f: WeightsFindings) -> list[list]:
    """One row per (model, layer): mean (over heads) energy_0.99 and entropy ranks of QK and OV."""
    return [[_label(c.model, c.quantised), c.layer, c.qk_energy, c.ov_energy, c.qk_entropy, c.ov_entropy]
            for c in f.layers]


def report_weights(store: Any, plan: Any, tables: Path, figures: Path, console: Any,
                   models: tuple[str, ...] = MODELS, f: WeightsFindings = None) -> dict:
    """Tables and the figure of the trained-head ranks of ``plan`` (a
    :class:`verification.rank.checks.Plan`: the command that fills them) from their findings ``f``
    (default: read from the store, for ``models``)."""
    f = weights_findings(store, models) if f is None else f
    prov = f"campaign {CAMPAIGN}; models {', '.join(models)}; {SPECTRA}"
    command = plan.part_command("weights")
    table = summary_table(f, prov, command)
    table.write(tables)
    print_table(console, table.rows(), table.columns(), "rank: trained heads")
    Table.from_rows("rank_weights_layers", layer_rows(f), LAYER_COLUMNS,
                    "Per-layer mean (over heads) effective ranks of the head circuits.", prov,
                    campaigns=(CAMPAIGN,), command=command).write(tables)
    _figure(f.records, figures, prov)
    return {"weights_records": len(f.records)}


def _figure(recs: list, figures: Path, prov: str) -> None:
    plt = _plt()
    models = sorted({x["provenance"]["model"] for x in recs})
    fig, axes = plt.subplots(1, max(len(models), 1), figsize=(4.5 * max(len(models), 1), 3.3), squeeze=False)
    for ax, model in zip(axes[0], models):
        rs = [x for x in recs if x["provenance"]["model"] == model]
        dh = rs[0]["provenance"]["head_dim"]
        for circuit, style in (("qk", "-"), ("ov", "--")):
            cell = _group([x for x in rs if x["provenance"]["circuit"] == circuit], lambda x: (x["provenance"]["layer"],))
            layers = [k[0] for k in cell]
            ax.plot(layers, [np.mean([x["value"] for x in v]) / dh for v in cell.values()], "o" + style, ms=3,
                    label=f"{circuit.upper()} energy_0.99 / dh")
            ax.plot(layers, [np.mean([x["extra"]["entropy"] for x in v]) / dh for v in cell.values()], "s" + style,
                    ms=3, label=f"{circuit.upper()} entropy / dh")
        ax.set(xlabel="layer", ylabel="effective rank / head dim", ylim=(0, 1.05),
               title=_label(model, rs[0]["provenance"]["quantised"]) + f", dh={dh}")
        ax.legend(fontsize=6)
    fig.tight_layout()
    save_figure(fig, figures, "rank_weights", prov)
    plt.close(fig)
