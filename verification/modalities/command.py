"""The ``attnbounds modalities`` subcommand and the ``modalities`` section of the main job: the
family's one shape (:mod:`verification.family`: :class:`verification.modalities.checks.Plan`).

Checkpoints go under ``<out>/checkpoints/modalities`` (as ``attnbounds san``'s go under
``<out>/checkpoints/san``), or under ``--checkpoints`` / ``ATTNBOUNDS_CHECKPOINTS`` when given:
never under the working directory unless ``--out`` is there."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional, Sequence


def measure_and_report(store: Any, preset: str, seed: int, out_dir: Path, checkpoints: Path, console: Any,
                       models: Optional[Sequence[str]] = None, text: Any = "minilm") -> dict:
    """Train (resuming) at every seed of the preset, measure (resuming), check the random baselines
    and the text encoder at the models' token counts, and write the report of one preset. ``text``:
    the text model at matched n (an embedded name, loaded from its installed package, or an object
    with the :class:`numerics.modalities.MatchedText` interface; None: not measured, the report says so)."""
    from verification.modalities import checks, report

    plan = checks.Plan(preset, seed, tuple(models) if models else None, Path(checkpoints), text)
    checks.run(plan, store, console=console)
    return report.report(store, plan, out_dir, console)


def _cmd(args: argparse.Namespace) -> int:
    from verification import family

    family.command("modalities", args)
    return 0


def register(sub: Any) -> None:
    from numerics.modalities.presets import MODELS, PRESETS
    from verification.options import MAX_SEED, add_common, name_list

    p = sub.add_parser("modalities", help="D1 equality shares in small vision and tabular transformers "
                       "trained here (scikit-learn's bundled data; resumable)")
    add_common(p, max_seed=MAX_SEED["modalities"])
    size = p.add_mutually_exclusive_group()
    size.add_argument("--preset", default="quick", choices=tuple(PRESETS),
                      help="tiny (seconds, tests) | quick (main job, about 2 minutes) | paper (larger, longer)")
    size.add_argument("--full", action="store_true", help="the plan of `attnbounds verify --full`: the paper preset")
    p.add_argument("--models", default=None, type=name_list(tuple(MODELS), "model"),
                   help=f"comma-separated, default all: {','.join(MODELS)}")
    p.add_argument("--checkpoints", default=None,
                   help="folder of the safetensors checkpoints (resumed from; default <out>/checkpoints, "
                        "or ATTNBOUNDS_CHECKPOINTS)")
    p.set_defaults(func=_cmd)


def verify_section(ctx: Any) -> None:
    """The quick preset (``--full``: the paper preset)."""
    from verification import family

    family.verify(ctx, "modalities", "Beyond text: D1 equality in vision and tabular transformers trained here")
