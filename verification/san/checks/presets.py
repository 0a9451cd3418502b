"""The SAN presets (model size, steps, seeds, sweep depths) and the campaign each names: light, so
that the command line lists them without loading the training stack.

Every preset's standard reference has at least two layers (a key -> value lookup needs two composed
attention layers: with a one-layer reference the standard model cannot do it while its
parameter-matched SAN of three layers can, and the comparison would measure depth). ``quick`` is
the main job's preset: 32 wide, 32 bytes of context, batch 32, learning rate 1e-2 (20% warm-up),
180 steps, six seed pairs (df = 5; each run costs a few CPU seconds), trained twice, once per
numerical path (:data:`KERNELS`: the fused and the explicit attention kernel, the same mathematics
with other rounding), so that an outcome which flips with the path is reported inconclusive. The
batch and steps are what the training gate needs: the models leave a plateau at the unigram
entropy after 130-170 steps, at a time that varies with the seed (measured, fused path, 6 seeds:
batch 16 x 170 steps, 7 of 12 flops/params-matched runs passed the gate; batch 32 x 130 steps, 5 of
12; batch 32 x 180 steps, 24 of 24 runs of all four roles). ``paper`` is the preset that decides:
48 wide, 64 bytes of context, 1000 steps, six seed pairs; measured on this 2-core machine with
``--workers 2`` (docs/experiments.md); minutes on a GPU (``--device cuda``)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from theory.errors import InvalidInput

VERSION = "v3"     # v3: validation loss and probes at every checkpoint, spectra at initialisation; bump when a run's settings or records change: a new campaign, not a resume
KERNELS = ("sdpa", "explicit")     # the numerical paths: the first is the primary one


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
    warmup: float = 0.1         # learning-rate warm-up, a share of the steps (then cosine to 0.1 lr)

    def __post_init__(self) -> None:
        if self.ref_layers < 2:
            raise InvalidInput(f"Preset {self.name!r}: the standard reference needs at least two layers (a "
                             f"lookup composes two attention layers), got ref_layers={self.ref_layers}")


PRESETS = {
    "tiny": Preset("tiny", d_model=16, n_head=2, ctx=32, batch=4, steps=12, lr=3e-3, ref_layers=2, seeds=3,
                   depths=(2, 4), sweep_steps=8, sweep_lr=1e-2, n_facts=8, n_val=16, n_probe=4, rollout_texts=1),
    "quick": Preset("quick", d_model=32, n_head=4, ctx=32, batch=32, steps=180, lr=1e-2, ref_layers=2, seeds=6,
                    depths=(2, 6), sweep_steps=60, sweep_lr=1e-2, n_facts=16, n_val=256, n_probe=48,
                    rollout_texts=1, warmup=0.2),
    "paper": Preset("paper", d_model=48, n_head=4, ctx=64, batch=32, steps=1000, lr=6e-3, ref_layers=2, seeds=6,
                    depths=(2, 8), sweep_steps=300, sweep_lr=1e-2, n_facts=16, n_val=256, n_probe=64,
                    rollout_texts=2),
}


def campaign_name(preset: Preset, seed: int, kernel: str = "sdpa", device: str = "cpu") -> str:
    """Named by the preset's settings too: other settings under the same name are another campaign
    (and another checkpoint folder), never a resume. A numerical path other than the primary one,
    or a device other than the CPU, is named as a suffix.

    >>> campaign_name(PRESETS["tiny"], 0, "explicit").endswith(":s0:explicit")
    True
    """
    digest = hashlib.sha256(json.dumps(asdict(preset), sort_keys=True).encode()).hexdigest()[:8]
    tail = ("" if kernel == KERNELS[0] else f":{kernel}") + ("" if device == "cpu" else f":{device}")
    return f"san-{VERSION}:{preset.name}:{digest}:s{seed}{tail}"
