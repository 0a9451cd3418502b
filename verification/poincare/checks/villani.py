"""Where does Villani's condition (the seed's route to Poincare for every lambda > 0) fail?

A map over a (beta, lambda) grid (8 x 8 quick, 12 x 12 full) and several data seeds per family
(3 quick, 6 full): one outcome record per point (theory: poincare.gibbs.villani, a conjecture here),
statistic lambda_V(beta) with its grid-error interval, refuted where lambda < lambda_V (a failure
enclosed in interval arithmetic: ``certified``), supported where lambda is above the interval (an
estimate for attn2 / lora2, a proof for attn1), inconclusive inside it. lambda_V depends on beta and
the data only, so each (family, data seed) chunk computes its derivative table once
(numerics.poincare.villani) and decides its grid from it. The report gives the refuted share of the
grid per family with a Wilson interval (verification.poincare.report.findings). The condition:
docs/theory.md section 4.
"""
from __future__ import annotations

import numpy as np

from numerics.poincare.losses import family
from verification import campaign
from verification.poincare.checks.bounds import villani_record
from verification.store import Record

VERSION = "v1"
MAP_FAMILIES = ("attn1", "attn2", "lora2")


def map_grid(full: bool) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(betas, lambdas), log-spaced: 8 x 8 quick, 12 x 12 full."""
    n = 12 if full else 8
    betas = np.geomspace(0.25, 64.0, n)
    lams = np.geomspace(1e-3, 3.0, n)
    return tuple(float(f"{b:.4g}") for b in betas), tuple(float(f"{x:.4g}") for x in lams)


def map_seeds(seed: int, full: bool) -> tuple[int, ...]:
    """Data seeds of the map: ``seed`` and the next 2 (quick) or 5 (full)."""
    return tuple(seed + k for k in range(6 if full else 3))


def map_campaign(seed: int, full: bool) -> str:
    return f"poincare.villani-map-{VERSION}-seed{seed}-{'full' if full else 'quick'}"


def map_chunk(name: str, data_seed: int, full: bool, certify: bool = True) -> list[Record]:
    """Every (beta, lambda) point of one family on one data set."""
    fam = family(name, data_seed)
    betas, lams = map_grid(full)
    recs = []
    for beta in betas:
        for lam in lams:
            key = f"{name}-s{data_seed}-b{beta:g}-l{lam:g}"
            prov = {**fam.provenance, "seed": data_seed, "beta": beta, "lambda": lam, "grid": f"{len(betas)}x{len(lams)}"}
            extra = {"family": name, "data_seed": data_seed, "beta": beta, "lam": lam, "kind": "map"}
            recs.append(villani_record(fam, beta, lam, key, prov, extra, certify=certify))
    return recs


def run_villani_map(store, seed: int, full: bool, families=MAP_FAMILIES, console=None) -> None:
    chunks = [campaign.Chunk(f"{name}-s{s}", map_chunk, (name, s, full)) for name in families
              for s in map_seeds(seed, full)]
    campaign.run(store, map_campaign(seed, full), chunks, console=console, description="Villani map")
