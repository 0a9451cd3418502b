"""The SAN presets (model size, steps, seeds, sweep depths) and the campaign each names: light, so
that the command line lists them without loading the training stack."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

VERSION = "v1"


@dataclass(frozen=True)
class Preset:
    name: str
    d_model: int
    n_head: int
    ctx: int
    batch: int
    steps: int
    lr: float
    ref_layers: int
    seeds: int
    depths: tuple
    sweep_steps: int
    sweep_lr: float
    n_facts: int = 32
    n_val: int = 64
    n_probe: int = 16
    rollout_texts: int = 2


PRESETS = {
    "tiny": Preset("tiny", d_model=16, n_head=2, ctx=32, batch=4, steps=12, lr=3e-3, ref_layers=1, seeds=2,
                   depths=(2, 4), sweep_steps=8, sweep_lr=1e-2, n_facts=8, n_val=16, n_probe=4, rollout_texts=1),
    "quick": Preset("quick", d_model=32, n_head=4, ctx=64, batch=32, steps=150, lr=1e-2, ref_layers=1, seeds=2,
                    depths=(2, 6), sweep_steps=60, sweep_lr=1e-2, n_facts=16, n_val=96, n_probe=12),
    "paper": Preset("paper", d_model=96, n_head=4, ctx=128, batch=32, steps=6000, lr=2e-3, ref_layers=3, seeds=5,
                    depths=(2, 4, 8, 16, 32), sweep_steps=2000, sweep_lr=6e-3, n_facts=64, n_val=256, n_probe=64,
                    rollout_texts=8),
}


def campaign_name(preset: Preset, seed: int) -> str:
    """Named by the preset's settings too: other settings under the same name are another campaign
    (and another checkpoint folder), never a resume."""
    digest = hashlib.sha256(json.dumps(asdict(preset), sort_keys=True).encode()).hexdigest()[:8]
    return f"san-{VERSION}:{preset.name}:{digest}:s{seed}"
