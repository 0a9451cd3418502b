"""Vision and tabular transformers trained here: D1 equality per layer, measured by the
trained-model pipeline unchanged.

Plan: for each model of :data:`numerics.modalities.MODELS` at a preset, train (resuming from its
safetensors checkpoints), then for each kept checkpoint (epoch 0 = the initialisation baseline)
measure the first ``preset.test_limit`` test examples with
:func:`verification.trained.checks.instance_records`: D1's exact verdict on the head-averaged
attention and on every head, for all tokens and for content tokens (patches / features; CLS and
registers dropped, rows renormalised exactly), slack, the pair attaining delta, and the rollout
chain (D2) per layer. Nothing is measured twice and nothing is re-implemented here.

One campaign per checkpoint, named by preset, seed, model, epoch and the weights' fingerprint:
other weights are another campaign, never a resume. One chunk per block of test examples.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from verification import campaign
from verification.store import Record

VERSION = "v1"
PREFIX = f"modalities-{VERSION}"


@dataclass(frozen=True)
class Measured:
    """One measured checkpoint."""

    model: str
    epoch: int
    step: int
    accuracy: float
    campaign: str
    path: Path


def campaign_prefix(preset: str, seed: int) -> str:
    return f"{PREFIX}:{preset}:s{seed}:"


def campaign_name(preset: str, seed: int, model: str, epoch: int, fingerprint: str) -> str:
    return f"{campaign_prefix(preset, seed)}{model}:e{epoch:04d}:w{fingerprint}"


def block_records(path: str, indices: Sequence[int], comparison: bool = True) -> list[Record]:
    """Every record of the test examples ``indices`` on the checkpoint at ``path`` (one chunk)."""
    from numerics.modalities import load_checkpoint
    from verification.trained.checks import instance_records

    src = load_checkpoint(path)
    items = src.data.items()
    insts = src.instances([items[i] for i in indices])
    return [r for inst in insts for r in instance_records(inst, comparison)]


def chunks_of(path: Path, items: Sequence[Any], size: int) -> list[campaign.Chunk]:
    out = []
    for start in range(0, len(items), size):
        block = items[start:start + size]
        h = hashlib.sha256("".join(it.sha for it in block).encode()).hexdigest()[:8]
        out.append(campaign.Chunk(f"test{start}-{start + len(block) - 1}#{h}", block_records,
                                  (str(path), tuple(it.index for it in block))))
    return out


def run_plan(store: Any, preset_name: str, seed: int, root: Path, console: Any = None,
             models: Optional[Sequence[str]] = None, executor: Any = None) -> list[Measured]:
    """Train (resuming) and measure every checkpoint of every model; return what was measured."""
    from numerics.modalities import MODELS, PRESETS, load_checkpoint, train

    preset = PRESETS[preset_name]
    out: list[Measured] = []
    for name in models or tuple(MODELS):
        spec = MODELS[name]
        for ck in train(spec, preset, seed, Path(root), console):
            src = load_checkpoint(ck.path)
            items = src.data.items(preset.test_limit)
            name_c = campaign_name(preset.name, seed, spec.name, ck.epoch, ck.fingerprint)
            campaign.run(store, name_c, chunks_of(ck.path, items, preset.chunk), executor=executor,
                         console=console, description=f"{spec.name} epoch {ck.epoch}: measuring",
                         progress=console is not None)
            out.append(Measured(spec.name, ck.epoch, ck.step, ck.accuracy, name_c, ck.path))
    return out
