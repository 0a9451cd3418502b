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

from theory.errors import InvalidInput


def checkpoint_root(out_dir: str | os.PathLike, checkpoints: Optional[str | os.PathLike] = None) -> Path:
    """Where checkpoints go: ``checkpoints`` when given, else ``ATTNBOUNDS_CHECKPOINTS``, else
    ``<out_dir>/checkpoints`` (the family adds ``modalities/``)."""
    if checkpoints is not None:
        return Path(checkpoints)
    env = os.environ.get("ATTNBOUNDS_CHECKPOINTS")
    return Path(env) if env else Path(out_dir) / "checkpoints"


def measure_and_report(store: Any, preset: str, seed: int, out_dir: Path, checkpoints: Path, console: Any,
                       models: Optional[Sequence[str]] = None, text: Any = "minilm") -> dict:
    """Train (resuming) at every seed of the preset, measure (resuming), check the random baselines
    and the text encoder at the models' token counts, and write the report of one preset. ``text``:
    the text model at matched n (an embedded name, loaded from its installed package, or an object
    with the :class:`numerics.modalities.MatchedText` interface; None: not measured, the report says so)."""
    from numerics.modalities.presets import PRESETS
    from verification.modalities.checks import run_baselines, run_plan
    from verification.modalities.report.tables import write_report

    p = PRESETS[preset]
    t0 = time.perf_counter()
    measured = run_plan(store, preset, seed, Path(checkpoints) / "modalities", console, models)
    t1 = time.perf_counter()
    sizes = {m.tokens for m in measured} | {m.content for m in measured}
    base = run_baselines(store, sorted(sizes), p.baseline_count, seed, console)
    t2 = time.perf_counter()
    matched = measure_text(store, preset, measured, text, console)
    t3 = time.perf_counter()
    paths = write_report(store, preset, seed, out_dir, console, [m.campaign for m in measured])
    console.print(f"[dim]modalities ({preset}): {len(measured)} checkpoints over seeds {list(p.seed_list(seed))} in "
                  f"{t1 - t0:.1f} s, random baselines at n = {sorted(sizes)} in {t2 - t1:.1f} s, text at matched n in "
                  f"{t3 - t2:.1f} s, report in {time.perf_counter() - t3:.1f} s; checkpoints under "
                  f"{Path(checkpoints) / 'modalities'}[/dim]")
    return paths


def measure_text(store: Any, preset: str, measured: Sequence[Any], text: Any, console: Any) -> list[str]:
    """The text encoder cut to each model's token count (:func:`verification.modalities.checks.run_text`)
    on the trained main job's inputs; the campaigns measured."""
    from numerics.modalities.presets import PRESETS
    from numerics.modalities.text import MatchedText
    from verification.modalities.checks import run_text, text_lengths
    from verification.measure.text import FULL, QUICK
    from verification.measure.text import main_inputs

    if text is None:
        return []
    full = preset == "paper"
    if isinstance(text, str):
        from numerics.sources.models import load_model

        # the trained main job's token limit: the model is loaded once per process (cached)
        tokens = (FULL if full else QUICK[text])["max_tokens"]
        text = MatchedText(load_model(text, max_tokens=tokens))
    inputs = main_inputs("minilm", full)
    return list(run_text(store, text, inputs, text_lengths(measured), PRESETS[preset].text_inputs, console).values())


def _cmd(args: argparse.Namespace) -> int:
    from verification.options import make_console
    from verification.store import ResultStore

    ckpt = checkpoint_root(args.out, args.checkpoints)
    if ckpt.exists() and not ckpt.is_dir():
        raise InvalidInput(f"--checkpoints {str(ckpt)!r} exists and is not a folder")
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
