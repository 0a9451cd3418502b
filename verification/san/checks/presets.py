"""The SAN presets (model size, steps, seeds, sweep depths) and the campaign each names: light, so
that the command line lists them without loading the training stack.

Every preset's standard reference has at least two layers, as the paper's models have (with one layer
the standard model composes no attention layers while its matched attention-only partners do, and a
comparison would measure that). ``quick`` is
the main job's preset: 32 wide, 32 bytes of context, batch 32, 1000 steps at learning rate 2e-2 (10%
warm-up), three seed pairs (df = 2) of the standard reference and its depth-matched attention-only
partner only (:attr:`Preset.roles`: the claims about the FLOPs- and parameter-matched roles are not
testable there, their records say why), trained twice, once per numerical path (:data:`KERNELS`: the
fused and the explicit attention kernel, the same mathematics with other rounding), so that an outcome
which flips with the path is reported inconclusive. Steps and learning rate are what the training gate
needs: a run has learned when it beats the bigram model on validation (about 2.2 nats per byte on
these windows). Measured with the pinned kernels (numerics.pins) on this 2-core machine, seed 0/1, fused
path: at 180 steps (the old preset) every role sat at 2.5-2.9, above the bigram model; 600 steps at
1e-2, reference 2.15, SAN 2.25 (fails); 1000 steps at 1e-2, 1.76 / 1.99 / 1.89 (reference / depth /
FLOPs-matched), 30 / 24 / 47 s a run; 800 steps at 2e-2, 1.85 / 2.06 in 24 / 18 s. The fact table
has 8 entries (16 before). Half the training rows are probe rows, three quarters of their samples
retrieval samples of three pairs, each key and value in one byte (numerics.san.data: with the two-byte
pairs of v4 no reference ever retrieved above the copy chance, the induction circuit they need forming
only after thousands of steps of probe data). Measured with the single-byte pairs, 1000 steps at 2e-2,
references of seeds 0-2: with a quarter of the rows probes and four pairs, 0.27 (seed 0), under the
copy chance; half the rows and four pairs, 0.66 / 0.66 / 0.26 (the depth-matched SAN 1.00 each); half
the rows, three pairs, half the samples retrieval, 0.97 / 0.74 / 1.00, and one reference of six in the
main job at 0.24 (copy chance 0.39-0.40); three quarters retrieval (the main job's
twelve runs), 1.00 / 0.82 / 1.00 (fused path) and 1.00 / 0.99 / 1.00 (explicit), the depth-matched SAN
1.00 each, recall 0.97-1.00, validation losses 1.71-1.78 (reference) and 1.98-2.02 (depth-matched
SAN), every run below the bigram model's 2.19. Before that, the fact table: with 16, one reference of three (seed 2) recalled 0.30 at 800 steps and the
recall probe's positive control failed; with 8, seed 2 recalls 1.00 (reference and SAN), but one
depth-matched SAN of six runs (three seeds, two paths) stayed at 2.22 against the bigram model's 2.19
after 800 steps: hence 1000. The quick preset has no depth sweep (``depths=()``: at 60 steps no sweep
run beat the bigram model, so its QK-norm claims were never testable, and its minute is what the
longer training needs); the paper preset keeps it. The depth sweep (trainability with and without QK-norm, one seed, 60 steps) is kept for its
table; its claims have no degrees of freedom and are never decided. ``paper`` is the preset that
decides (``attnbounds san --preset paper``, ``attnbounds verify --full``): the quick preset's width,
context, batch, steps and learning rate (validated above: every run beats the bigram model), all four
roles, eight seed pairs (the report's power analysis at the quick preset's spread asked for 4 for the
depth gap; never fewer than 6), the depth sweep at 2 and 8 layers (300 steps), and a table of 32 facts
instead of 8, so that the recall probe is off its ceiling. Measured with the pinned kernels, seed 0/1,
fused path, 1000 steps (another session's work beside it): 12 facts, recall 0.96-1.00 for every role
(ceiling); 16 facts, the reference 0.98; 32 facts, reference 0.86 / 0.95 and depth-matched SAN 0.83,
retrieval 0.99-1.00; 64 facts, reference recall 0.35 and retrieval 0.53 (its positive control at
risk). Before, the paper preset was 48 wide with 64 bytes of context at learning rate 6e-3 (102
minutes before the pinned kernels, which double the cost, so about 3.5 hours). Its wall time on this
2-core machine is :data:`MEASURED` (``--workers 2``, both numerical paths); minutes on a GPU
(``--device cuda``)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from theory.errors import InvalidInput

VERSION = "v5"     # bump when a run's settings or records change: a new campaign, not a resume
KERNELS = ("sdpa", "explicit")     # the numerical paths: the first is the primary one


@dataclass(frozen=True)
class Measured:
    """A preset's measured cost: ``minutes`` of wall time for the whole preset (both numerical paths)
    on ``machine``, by ``command``, at ``commit`` on ``date``; ``cpu_minutes`` of processor time (user +
    system, the workers included); ``settings``: the digest of the preset's settings it was measured at
    (:func:`settings_digest`): a preset whose settings changed since reads as not measured
    (:func:`measured`). Kept beside the presets, not in them: a preset's settings name its campaign, a
    measurement does not."""

    settings: str
    minutes: float
    cpu_minutes: float
    machine: str
    command: str
    commit: str
    date: str

    def text(self) -> str:
        return (f"{self.minutes:.0f} minutes of wall time ({self.cpu_minutes:.0f} CPU minutes) on {self.machine} "
                f"(commit {self.commit}, {self.date})")


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
    probe_share: float = 0.5    # the share of training rows that are probe rows (numerics.san.data.Data)
    n_pairs: int = 3            # key/value pairs of a retrieval sample
    retrieval_share: float = 0.75   # the share of probe samples that are retrieval samples (the rest: recall)
    roles: tuple = ("std", "san-depth", "san-flops", "san-params")   # the matched roles trained per seed

    def data(self):
        """The training and evaluation data of this preset (:class:`numerics.san.data.Data`)."""
        from numerics.san import Data

        return Data(ctx=self.ctx, n_facts=self.n_facts, probe_share=self.probe_share, n_pairs=self.n_pairs,
                    retrieval_share=self.retrieval_share)

    def __post_init__(self) -> None:
        if self.ref_layers < 2:
            raise InvalidInput(f"Preset {self.name!r}: the standard reference needs at least two layers (with "
                             f"one it composes no attention layers while its attention-only partners do), got ref_layers={self.ref_layers}")


PRESETS = {
    "tiny": Preset("tiny", d_model=16, n_head=2, ctx=32, batch=4, steps=12, lr=3e-3, ref_layers=2, seeds=3,
                   depths=(2, 4), sweep_steps=8, sweep_lr=1e-2, n_facts=8, n_val=16, n_probe=4, rollout_texts=1),
    "quick": Preset("quick", d_model=32, n_head=4, ctx=32, batch=32, steps=1000, lr=2e-2, ref_layers=2, seeds=3,
                    depths=(), sweep_steps=60, sweep_lr=1e-2, n_facts=8, n_val=256, n_probe=48,
                    rollout_texts=1, warmup=0.1, roles=("std", "san-depth")),
    "paper": Preset("paper", d_model=32, n_head=4, ctx=32, batch=32, steps=1000, lr=2e-2, ref_layers=2, seeds=8,
                    depths=(2, 8), sweep_steps=300, sweep_lr=1e-2, n_facts=32, n_val=256, n_probe=48,
                    rollout_texts=1, warmup=0.1),
}


def campaign_name(preset: Preset, seed: int, kernel: str = "sdpa", device: str = "cpu") -> str:
    """Named by the preset's settings too: other settings under the same name are another campaign
    (and another checkpoint folder), never a resume. A numerical path other than the primary one,
    or a device other than the CPU, is named as a suffix.

    >>> campaign_name(PRESETS["tiny"], 0, "explicit").endswith(":s0:explicit")
    True
    """
    digest = settings_digest(preset)
    tail = ("" if kernel == KERNELS[0] else f":{kernel}") + ("" if device == "cpu" else f":{device}")
    return f"san-{VERSION}:{preset.name}:{digest}:s{seed}{tail}"


def settings_digest(preset: Preset) -> str:
    """The digest of a preset's settings, as its campaigns are named by."""
    return hashlib.sha256(json.dumps(asdict(preset), sort_keys=True).encode()).hexdigest()[:8]


def measured(name: str) -> "Measured | None":
    """The measured cost of preset ``name`` where it was measured at the preset's present settings, else None.

    >>> measured("paper").settings == settings_digest(PRESETS["paper"]), measured("quick")
    (True, None)
    """
    m = MEASURED.get(name)
    return m if m is not None and name in PRESETS and m.settings == settings_digest(PRESETS[name]) else None


# preset name -> its measured cost: the paper preset measured with `time -v` (user 2713 s + system 1020 s)
MEASURED: dict[str, Measured] = {
    "paper": Measured("8075594e", 40.6, 62.2, "the 2-core machine of docs/experiments.md, with other work running beside it",
                      "attnbounds san --preset paper --workers 2", "045048a", "2026-12-07"),
}
