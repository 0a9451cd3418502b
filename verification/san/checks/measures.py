"""Measures of one stored SAN run: its summary as the store holds it (:func:`summaries`, in plan
order), the loss a claim compares (a diverged run counts at the unigram entropy) and the spectral
measures of its weights over training (threshold and entropy ranks, late growth, half-growth times),
from which :mod:`verification.san.checks.decide` builds the claims' per-seed values.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np

ROUTING, CONTENT = ("W_Q", "W_K", "QK"), ("W_V", "W_O", "OV")
RUN_ORDER = {"std": 0, "san-depth": 1, "san-flops": 2, "san-params": 3}


def summaries(store: Any, campaign: str) -> list[dict]:
    """The run records of a SAN campaign: extra + seed, in plan order (per seed the reference,
    then the matched runs; then the depth sweep by depth, without QK-norm first), never in the
    order a pool of workers happened to store them."""
    out = [dict(r["extra"], seed=r["provenance"]["seed"], verdict=r["verdict"])
           for r in store.records(campaign, theorem="san.claim.trainable")]
    return sorted(out, key=lambda r: (r["role"] == "sweep", r["seed"], RUN_ORDER.get(r["role"], len(RUN_ORDER)),
                                      r["n_layer"], bool(r["qk_norm"]), r["key"]))


def digest(runs: list[dict]) -> str:
    keys = sorted((r["key"], r["val_loss"], r["diverged"]) for r in runs)
    return hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:12]


def loss(run: dict) -> float:
    v = run["val_loss"]
    return run["unigram"] if run["diverged"] or not math.isfinite(v) else v


def rank_at(run: dict, names: tuple, estimator: str, where: str) -> float:
    """Mean over layers and ``names`` of one estimator at the early (second) or final checkpoint, or
    at the checkpoint of step ``where``."""
    steps = sorted(run["spectra"], key=int)
    step = steps[-1] if where == "final" else steps[min(1, len(steps) - 1)] if where == "early" else where
    layers = run["spectra"][step]
    return float(np.mean([layer[n][estimator] for layer in layers for n in names if estimator in layer[n]]))


def late_share(run: dict, names: tuple) -> float:
    """Share of the final threshold rank gained after the early checkpoint (0: settled early)."""
    fin, early = rank_at(run, names, "threshold", "final"), rank_at(run, names, "threshold", "early")
    return (fin - early) / max(fin, 1.0)


def rank_path(run: dict, names: tuple, estimator: str = "threshold") -> list[tuple[float, float]]:
    """(fraction of training, mean rank over layers and ``names``) at initialisation (the run's
    ``spectra_init``) and at every checkpoint."""
    total = max(int(s) for s in run["spectra"])
    pts = [(0.0, float(np.mean([layer[n][estimator] for layer in run["spectra_init"] for n in names])))]
    for step in sorted(run["spectra"], key=int):
        pts.append((int(step) / total, rank_at(run, names, estimator, step)))
    return pts


def growth_time(run: dict, names: tuple) -> float:
    """Half-growth time of the threshold rank of ``names``: the fraction of training at which the
    rank, linear between checkpoints, first reaches half-way from its initial to its final value (0
    when it does not grow: nothing to wait for)."""
    pts = rank_path(run, names)
    r0, r1 = pts[0][1], pts[-1][1]
    if not r1 > r0:
        return 0.0
    half = r0 + 0.5 * (r1 - r0)
    for (t0, a), (t1, b) in zip(pts, pts[1:]):
        if b >= half:
            return t0 + (t1 - t0) * ((half - a) / (b - a) if b != a else 1.0)
    return 1.0


def late_drift(run: dict, circuit: str) -> float:
    """Relative change of a circuit's entropy rank after the early checkpoint (0: settled early)."""
    fin, early = rank_at(run, (circuit,), "entropy", "final"), rank_at(run, (circuit,), "entropy", "early")
    return abs(fin - early) / max(fin, 1e-12)
