"""The ``attnbounds san`` subcommand and the ``san`` section of the main job.

``attnbounds san --preset tiny|quick|paper``: train the matched pairs and the depth sweep (one
results-store chunk per model; checkpoints under ``<out>/checkpoints/san``, so a killed run resumes
inside a model too), decide the paper's claims, write tables and figures. tiny: under a minute (for
tests); quick: a few minutes (the main job); paper: hours (resumable).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def measure_and_report(store: Any, preset: str, seed: int, out_dir: Path, console: Any) -> dict:
    from verification.san.checks.claims import run_claims
    from verification.san.checks.presets import PRESETS
    from verification.san.checks.runs import run_campaign
    from verification.san.paper import paper_part
    from verification.san.report import write_part

    t0 = time.perf_counter()
    p = PRESETS[preset]
    camp = run_campaign(store, p, seed, Path(out_dir) / "checkpoints" / "san", console)
    run_claims(store, camp, preset, seed, console)
    part = paper_part(store, seed=seed, preset=preset)
    paths = write_part(part, Path(out_dir), console)
    console.print(f"[dim]SAN {preset}: {len(paths)} files in {time.perf_counter() - t0:.1f} s "
                  f"(tiny scale: conclusions are about directions only)[/dim]")
    return dict(campaign=camp, part=part, paths=paths)


def verify_section(ctx: Any) -> None:
    ctx.console.rule("[bold]Attention-only transformers (SAN) at tiny scale: matched pairs, probes, spectra")
    measure_and_report(ctx.store, "paper" if ctx.full else "quick", ctx.seed, ctx.out_dir, ctx.console)


def _cmd(args: argparse.Namespace) -> int:
    from verification.options import make_console
    from verification.store import ResultStore

    with ResultStore(args.db) as store:
        measure_and_report(store, args.preset, args.seed, Path(args.out), make_console())
    return 0


def register(sub: Any) -> None:
    from verification.options import add_common, name_list
    from verification.san.checks.presets import PRESETS

    p = sub.add_parser("san", help="attention-only vs standard decoders at tiny scale (resumable)")
    add_common(p)
    pick = name_list(tuple(PRESETS), "preset")

    def one_preset(text: str) -> str:
        names = pick(text)
        if len(names) != 1:
            raise argparse.ArgumentTypeError(f"give one preset, got {text!r}")
        return names[0]

    one_preset.__name__ = "preset"
    p.add_argument("--preset", default="quick", type=one_preset,
                   help="tiny (under a minute) | quick (a few minutes, the main job) | paper (hours, resumable)")
    p.set_defaults(func=_cmd)
