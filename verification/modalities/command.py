"""The ``attnbounds modalities`` subcommand and the ``modalities`` section of the main job.

Checkpoints go under ``<out>/checkpoints/modalities`` (as ``attnbounds san``'s go under
``<out>/checkpoints/san``), or under ``--checkpoints`` / ``ATTNBOUNDS_CHECKPOINTS`` when given:
never under the working directory unless ``--out`` is there."""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any, Optional, Sequence


def checkpoint_root(out_dir: str | os.PathLike, checkpoints: Optional[str | os.PathLike] = None) -> Path:
    """Where checkpoints go: ``checkpoints`` when given, else ``ATTNBOUNDS_CHECKPOINTS``, else
    ``<out_dir>/checkpoints`` (the family adds ``modalities/``)."""
    if checkpoints is not None:
        return Path(checkpoints)
    env = os.environ.get("ATTNBOUNDS_CHECKPOINTS")
    return Path(env) if env else Path(out_dir) / "checkpoints"


def measure_and_report(store: Any, preset: str, seed: int, out_dir: Path, checkpoints: Path, console: Any,
                       models: Optional[Sequence[str]] = None) -> dict:
    """Train (resuming), measure (resuming) and write the report of one preset."""
    from verification.modalities.checks import run_plan
    from verification.modalities.report import write_report

    t0 = time.perf_counter()
    measured = run_plan(store, preset, seed, Path(checkpoints) / "modalities", console, models)
    paths = write_report(store, preset, seed, out_dir, console, [m.campaign for m in measured])
    console.print(f"[dim]modalities ({preset}): {len(measured)} checkpoints in {time.perf_counter() - t0:.1f} s; "
                  f"checkpoints under {Path(checkpoints) / 'modalities'}[/dim]")
    return paths


def _cmd(args: argparse.Namespace) -> int:
    from verification.options import make_console
    from verification.store import ResultStore

    ckpt = checkpoint_root(args.out, args.checkpoints)
    if ckpt.exists() and not ckpt.is_dir():
        raise ValueError(f"--checkpoints {str(ckpt)!r} exists and is not a folder")
    console = make_console()
    with ResultStore(args.db) as store:
        measure_and_report(store, args.preset, args.seed, Path(args.out), ckpt, console, args.models)
    return 0


def register(sub: Any) -> None:
    from numerics.modalities.presets import MODELS, PRESETS
    from verification.options import add_common, name_list

    p = sub.add_parser("modalities", help="D1 equality shares in small vision and tabular transformers "
                       "trained here (scikit-learn's bundled data; resumable)")
    add_common(p)
    p.add_argument("--preset", default="quick", choices=tuple(PRESETS),
                   help="tiny (seconds, tests) | quick (main job, about 2 minutes) | paper (larger, longer)")
    p.add_argument("--models", default=None, type=name_list(tuple(MODELS), "model"),
                   help=f"comma-separated, default all: {','.join(MODELS)}")
    p.add_argument("--checkpoints", default=None,
                   help="folder of the safetensors checkpoints (resumed from; default <out>/checkpoints, "
                        "or ATTNBOUNDS_CHECKPOINTS)")
    p.set_defaults(func=_cmd)


def verify_section(ctx: Any) -> None:
    """The quick preset (``--full``: the paper preset)."""
    ctx.console.rule("[bold]Beyond text: D1 equality in vision and tabular transformers trained here")
    measure_and_report(ctx.store, "paper" if ctx.full else "quick", ctx.seed, ctx.out_dir,
                       checkpoint_root(ctx.out_dir), ctx.console)
