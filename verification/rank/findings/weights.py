"""Findings of the trained-head ranks (:mod:`verification.rank.checks.weights`): per (model,
circuit) the effective ranks over all heads against the head dimension and the heads whose full rank
is certified; per (model, layer) the mean effective ranks over heads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from verification.findings import Share
from verification.rank.checks.weights import CAMPAIGN, MODELS
from verification.report.aggregate import group


@dataclass(frozen=True)
class Spread:
    """Mean, least and largest of a rank over heads."""

    mean: float
    lo: Any
    hi: Any

    @classmethod
    def of(cls, values: list) -> "Spread":
        return cls(float(np.mean(values)), min(values), max(values))


@dataclass(frozen=True)
class CircuitCell:
    """One (model, circuit) over every head of every layer: energy (0.9, 0.99) and entropy ranks,
    the head dimension, and the heads whose rank = head dim is certified."""

    model: str
    quantised: bool
    circuit: str
    heads: int
    head_dim: int
    energy_90: Spread
    energy_99: Spread
    entropy: Spread
    certified: Share


@dataclass(frozen=True)
class LayerCell:
    """One (model, layer): mean (over heads) energy_0.99 and entropy ranks of the QK and OV circuits."""

    model: str
    quantised: bool
    layer: int
    qk_energy: float
    ov_energy: float
    qk_entropy: float
    ov_entropy: float


@dataclass(frozen=True)
class WeightsFindings:
    """The circuits and layers of the embedded models of :data:`MODELS`, per (model, circuit) the mean
    energy_0.99 rank over heads / head dim by layer (``curves``: (model, circuit, layers, ratios)),
    and the records (the report's figure)."""

    circuits: tuple
    layers: tuple
    curves: tuple
    records: list


def findings_of(recs: list[dict]) -> WeightsFindings:
    """The :class:`WeightsFindings` of the weights campaign's records ``recs``."""
    circuits = []
    for (model, circuit), rs in group(recs, lambda x: (x["provenance"]["model"], x["provenance"]["circuit"])).items():
        p = rs[0]["provenance"]
        circuits.append(CircuitCell(model, p["quantised"], circuit, len(rs), p["head_dim"],
                                    Spread.of([x["extra"]["energy_0.9"] for x in rs]), Spread.of([x["value"] for x in rs]),
                                    Spread.of([x["extra"]["entropy"] for x in rs]),
                                    Share.wilson(sum(x["verdict"] == "tight" for x in rs), len(rs))))
    layers = []
    for (model, layer), rs in group(recs, lambda x: (x["provenance"]["model"], x["provenance"]["layer"])).items():
        by = {c: [x for x in rs if x["provenance"]["circuit"] == c] for c in ("qk", "ov")}
        layers.append(LayerCell(model, rs[0]["provenance"]["quantised"], layer,
                                *(float(np.mean([x["value"] for x in by[c]])) for c in ("qk", "ov")),
                                *(float(np.mean([x["extra"]["entropy"] for x in by[c]])) for c in ("qk", "ov"))))
    curves = []
    for (model, circuit), rs in group(recs, lambda x: (x["provenance"]["model"], x["provenance"]["circuit"])).items():
        dh = rs[0]["provenance"]["head_dim"]
        cell = group(rs, lambda x: (x["provenance"]["layer"],))
        curves.append((model, circuit, tuple(k[0] for k in cell),
                       tuple(float(np.mean([x["value"] for x in v])) / dh for v in cell.values())))
    return WeightsFindings(tuple(circuits), tuple(layers), tuple(curves), recs)


def weights_findings(store: Any, models: tuple[str, ...] = MODELS) -> WeightsFindings:
    """The :class:`WeightsFindings` of the stored weights campaign, for the embedded ``models``."""
    return findings_of([x for x in store.records(campaign=CAMPAIGN) if x["provenance"]["model"] in models])
