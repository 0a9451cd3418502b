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
    """Train, decide and write one preset (the family's ``run`` and ``report``)."""
    from verification.san import checks, report

    t0 = time.perf_counter()
    plan = checks.Plan(preset, seed, tuple(kernels) if kernels else None, device, Path(out_dir))
    camps = checks.run(plan, store, executor, console)
    part = report.report(store, plan, out_dir, console)
    console.print(f"[dim]SAN {preset}: {len(part.tables)} tables and {len(part.figures)} figures in "
                  f"{time.perf_counter() - t0:.1f} s (tiny scale: conclusions are about directions only)[/dim]")
    return dict(campaigns=camps, part=part)


def verify_section(ctx: Any) -> None:
    from verification import family
    from verification.executors import local_pool

    with local_pool() as executor:
        family.verify(ctx, "san", "Attention-only transformers (SAN) at tiny scale: matched pairs, probes, spectra",
                      executor)


def _cmd(args: argparse.Namespace) -> int:
    from verification import family
    from verification.executors import executor_for

    with executor_for(args.workers, args.scheduler, args.connect_timeout) as executor:
        family.command("san", args, executor)
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
    size = p.add_mutually_exclusive_group()
    size.add_argument("--preset", default="quick", type=one_preset,
                      help="tiny (under a minute) | quick (about two CPU minutes, the main job) | paper (hours, resumable)")
    size.add_argument("--full", action="store_true", help="the plan of `attnbounds verify --full`: the paper preset")
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
