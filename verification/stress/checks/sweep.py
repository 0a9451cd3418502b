"""The sweep: one chunk of a stress campaign, from its seed to its summary.

Per chunk: draw the chunk's matrices from its own generator
(:func:`verification.stress.checks.plan.draw`), check them with the one batched check of Theorems
D1 and D2 (:func:`numerics.dobrushin.batch.check_batch`: float filter, exact certification), and
store one summary per chunk with the records worth keeping
(:mod:`verification.stress.checks.summaries`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numerics.dobrushin.batch import NAMES, check_batch
from verification.campaign import ChunkResult
from verification.store import Record
from verification.stress.checks.campaigns import chunk_key
from verification.stress.checks.plan import chunk_size, draw, provenance
from verification.stress.checks.summaries import keep, summarise

def chunks(plan: Any) -> list:
    """The chunks of a :class:`~verification.stress.checks.plan.StressPlan`: ``run_chunk(spec, k)`` with
    ``spec`` the cell (theorem, family, n, count, seed, device): what a worker receives."""
    from verification.campaign import Chunk

    out = []
    for f, n, L, count in plan.cells():
        if L is not None:
            raise ValueError(f"{plan.theorem}: stacks of layers; its chunks are verification.stress.checks.rollout.chunks")
        spec = {"theorem": plan.theorem, "family": f, "n": n, "count": chunk_size(n), "seed": plan.seed,
                "device": plan.device, "sampler": plan.sampler}
        out += [Chunk(chunk_key(f, n, k), run_chunk, (spec, k)) for k in range(count)]
    return out


def run_chunk(spec: dict, k: int) -> ChunkResult:
    """Chunk ``k`` of the cell ``spec`` (theorem, family, n, count, seed, device): its summary
    and records of the instances worth keeping. What a worker receives: ``spec`` and ``k``."""
    theorem, family, n, seed = spec["theorem"], spec["family"], spec["n"], spec["seed"]
    device = spec.get("device", "cpu")
    sampler = spec.get("sampler", "numpy")
    A = draw(theorem, family, n, k, seed, sampler)
    out = check_batch(theorem, A, device)
    v, s = out["verdict"], out["slack"]
    body = summarise(v, s, out["exact"])
    body["device"] = device
    body["sent"] = int(np.count_nonzero(out["sent"]))
    prov = provenance(theorem, family, n, k, seed, sampler=sampler)
    key = f"{family}/n{n}/c{k}"
    records = [Record(theorem, f"{key}/i{i}", NAMES[v[i]], slack=float(s[i]), value=float(out["value"][i]),
                      bound=float(out["bound"][i]), backend="numba" if device == "cpu" else f"torch-{device}",
                      provenance={**prov, "index": i},
                      extra={"kept": why, "exact_path": bool(out["exact"][i])})
               for i, why in sorted(keep(v, s).items())]
    return ChunkResult(records, {theorem: body})
