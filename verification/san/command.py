"""The ``attnbounds san`` subcommand and the ``san`` section of the main job.

``attnbounds san --preset tiny|quick|paper``: train the matched pairs and the depth sweep along each
numerical path (``--kernels``, by default the fused and the explicit attention kernel; one
results-store chunk per model; checkpoints under ``<out>/checkpoints/san``, so a killed run resumes
inside a model too), decide the paper's claims (paired t over seed pairs, Holm, TOST, minimum
detectable effects; an outcome that flips between the paths is inconclusive), write tables and
figures. The runs are independent: ``--workers K`` trains them on a local Dask cluster of K
processes, ``--scheduler ADDRESS`` on an existing one; the store holds the same records as a serial
run. ``--device cuda`` trains on a GPU with deterministic settings (its own campaign). tiny: under a
minute (for tests); quick: about two CPU minutes (the main job); paper: hours on a CPU (resumable).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Optional, Sequence


def measure_and_report(store: Any, preset: str, seed: int, out_dir: Path, console: Any, executor: Any = None,
                       device: str = "cpu", kernels: Optional[Sequence[str]] = None) -> dict:
    from verification.san.checks.claims import run_claims
    from verification.san.checks.presets import KERNELS, PRESETS
    from verification.san.checks.runs import run_campaign
    from verification.san.paper import paper_part
    from verification.san.report import write_part

    t0 = time.perf_counter()
    p = PRESETS[preset]
    camps = {k: run_campaign(store, p, seed, Path(out_dir) / "checkpoints" / "san", console, executor, k, device)
             for k in (kernels or KERNELS)}
    run_claims(store, camps, preset, seed, console)
    part = paper_part(store, seed=seed, preset=preset, device=device, kernels=tuple(camps))
    paths = write_part(part, Path(out_dir), console)
    console.print(f"[dim]SAN {preset}: {len(paths)} files in {time.perf_counter() - t0:.1f} s "
                  f"(tiny scale: conclusions are about directions only)[/dim]")
    return dict(campaigns=camps, part=part, paths=paths)


def verify_section(ctx: Any) -> None:
    ctx.console.rule("[bold]Attention-only transformers (SAN) at tiny scale: matched pairs, probes, spectra")
    from verification.executors import local_pool

    with local_pool() as executor:
        measure_and_report(ctx.store, "paper" if ctx.full else "quick", ctx.seed, ctx.out_dir, ctx.console, executor)


def _cmd(args: argparse.Namespace) -> int:
    from verification.options import make_console
    from verification.store import ResultStore

    from verification.executors import executor_for

    with ResultStore(args.db) as store, executor_for(args.workers, args.scheduler, args.connect_timeout) as executor:
        measure_and_report(store, args.preset, args.seed, Path(args.out), make_console(), executor, args.device,
                           args.kernels)
    return 0


def _scheduler(text: str) -> str:
    from verification.executors import check_scheduler_address

    try:
        return check_scheduler_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def _seconds(text: str) -> float:
    from verification.executors import check_timeout

    try:
        return check_timeout(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None


def register(sub: Any) -> None:
    from verification.executors import CONNECT_TIMEOUT
    from verification.options import add_common, name_list, positive_int
    from verification.san.checks.presets import KERNELS, PRESETS

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
                   help="tiny (under a minute) | quick (about two CPU minutes, the main job) | paper (hours, resumable)")
    p.add_argument("--kernels", default=KERNELS, type=name_list(KERNELS, "kernel"),
                   help="comma-separated numerical paths, the primary first (default: "
                        f"{','.join(KERNELS)}); with one, no outcome is checked for robustness")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where the models train (cuda: deterministic algorithms, its own campaign)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", default=None, type=positive_int, metavar="K",
                       help="train the runs on a local Dask cluster of K worker processes (TLS, throw-away credentials)")
    where.add_argument("--scheduler", default=None, type=_scheduler, metavar="ADDRESS",
                       help="train the runs on an existing Dask cluster at tcp://HOST:PORT or tls://HOST:PORT "
                            "(a scheduler can run code here: join only clusters you control)")
    p.add_argument("--connect-timeout", default=CONNECT_TIMEOUT, type=_seconds, metavar="SECONDS",
                   help="--scheduler: give up, with one line and exit status 2, if no Dask scheduler completes the "
                        f"connect and handshake within SECONDS (default {CONNECT_TIMEOUT:g})")
    p.set_defaults(func=_cmd)
