"""The model families and the three presets (``tiny`` for tests, ``quick`` for the main job,
``paper`` for the paper's numbers).

A *model* is an architecture on a data set (:data:`MODELS`); a *preset* fixes its size, how long
it trains, at which fractions of training a checkpoint is kept (0 = the initialisation baseline),
and how many test inputs are measured per checkpoint.

The quick preset trains four seeds per model (the power calculation of
:func:`verification.modalities.report.seeds.power_table` reports what they can detect) within the main
job's budget, which the pinned kernels (:mod:`numerics.pins`) and SAN models that learn share with it: the tabular models train 12 epochs (their test accuracy is flat
after about 5-12 of 24, measured on seeds 0-7), the ViTs 12. The paper preset trains six seeds: ten would take
about 90 CPU minutes on 2 cores (one seed of the four models took about 9), more than the paper's plan (`attnbounds verify --full`,
:mod:`verification.plan_cost`) holds within two hours beside the trained section.

>>> PRESETS["quick"].checkpoint_epochs()
(0, 2, 6, 12)
>>> spec_config(MODELS["vit-reg"], PRESETS["tiny"], 10, 64).tokens
19
>>> PRESETS["quick"].seed_list(0)
(0, 1, 2, 3)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:   # torch stays unloaded until a network is built: the CLI lists presets from here
    from numerics.modalities.networks import NetConfig


@dataclass(frozen=True)
class ModelSpec:
    name: str          # "vit", "vit-reg", "ft-cancer", "ft-wine"
    family: str        # row label in the side-by-side table
    kind: str          # "vit" | "ft"
    dataset: str       # numerics.modalities.data.DATASETS
    registers: bool = False


MODELS: dict[str, ModelSpec] = {
    "vit": ModelSpec("vit", "ViT (digits)", "vit", "digits"),
    "vit-reg": ModelSpec("vit-reg", "ViT + registers (digits)", "vit", "digits", registers=True),
    "ft-cancer": ModelSpec("ft-cancer", "FT-Transformer (breast cancer)", "ft", "breast_cancer"),
    "ft-wine": ModelSpec("ft-wine", "FT-Transformer (wine)", "ft", "wine"),
}


@dataclass(frozen=True)
class Preset:
    name: str
    dim: int
    depth: int
    heads: int
    registers: int                   # register tokens of the vit-reg model
    epochs: int                      # ViT epochs (full training split each epoch)
    tab_epochs: int                  # FT-Transformer epochs (small tables: more passes)
    batch: int
    lr: float
    fractions: tuple[float, ...]     # checkpoints kept, as fractions of training (0: initialisation)
    test_limit: Optional[int]        # test inputs measured per checkpoint (None: the whole split)
    train_limit: Optional[int] = None  # first N training examples only (tiny: a few steps)
    patch: int = 2
    chunk: int = 16                  # test inputs per store chunk
    # what is measured, not how a model trains (kept out of settings(): checkpoints stay valid)
    seeds: int = 3                   # training seeds per model: seed, seed + 1, ... (split, init, batches)
    baseline_count: int = 200        # random matrices per (family, token count) at the models' n
    text_inputs: int = 40            # MiniLM inputs cut to each model's token count

    def seed_list(self, seed: int) -> tuple[int, ...]:
        """The training seeds of a run whose base seed is ``seed``."""
        return tuple(int(seed) + i for i in range(self.seeds))

    def epochs_of(self, kind: str) -> int:
        return self.epochs if kind == "vit" else self.tab_epochs

    def checkpoint_epochs(self, kind: str = "vit") -> tuple[int, ...]:
        """Epochs after which a checkpoint is kept (0: before any training)."""
        e = self.epochs_of(kind)
        return tuple(sorted({int(round(f * e)) for f in self.fractions}))

    def settings(self) -> dict:
        return dict(preset=self.name, dim=self.dim, depth=self.depth, heads=self.heads,
                    registers=self.registers, epochs=self.epochs, tab_epochs=self.tab_epochs,
                    batch=self.batch, lr=self.lr, train_limit=self.train_limit, patch=self.patch)


PRESETS: dict[str, Preset] = {
    "tiny": Preset("tiny", dim=16, depth=2, heads=2, registers=2, epochs=2, tab_epochs=2, batch=32, lr=2e-3,
                   fractions=(0.0, 0.5, 1.0), test_limit=4, train_limit=96, chunk=4, baseline_count=40,
                   text_inputs=4),
    "quick": Preset("quick", dim=32, depth=4, heads=4, registers=4, epochs=12, tab_epochs=12, batch=64,
                    lr=2e-3, fractions=(0.0, 0.2, 0.5, 1.0), test_limit=40, seeds=4),
    "paper": Preset("paper", dim=64, depth=6, heads=8, registers=4, epochs=40, tab_epochs=80, batch=64,
                    lr=1e-3, fractions=(0.0, 0.05, 0.1, 0.25, 0.5, 1.0), test_limit=None, chunk=32, seeds=6,
                   baseline_count=1000, text_inputs=150),
}


def spec_config(spec: ModelSpec, preset: Preset, n_classes: int, n_inputs: int) -> NetConfig:
    """The network of ``spec`` at ``preset``'s size."""
    from numerics.modalities.networks import NetConfig

    return NetConfig(kind=spec.kind, n_inputs=n_inputs, n_classes=n_classes, dim=preset.dim,
                     depth=preset.depth, heads=preset.heads, patch=preset.patch,
                     registers=preset.registers if spec.registers else 0)
