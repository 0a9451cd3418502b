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
from typing import Any

from theory.errors import InvalidInput


def verify_section(ctx: Any) -> None:
    from verification import family
    from verification.executors import local_pool

    with local_pool() as executor:
        family.verify(ctx, "san", "Attention-only transformers (SAN) at tiny scale: matched pairs, probes, spectra",
                      executor)


def check_device(device: str) -> None:
    """``--device cuda`` needs a CUDA device here: refused before a cluster is joined or the store
    is opened (a refused command creates nothing)."""
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InvalidInput("--device cuda: torch sees no CUDA device (torch.cuda.is_available() is False)")


def _cmd(args: argparse.Namespace) -> int:
    from verification import family
    from verification.executors import executor_for

    from verification.san.checks import Plan

    check_device(args.device)
    Plan.from_args(args)          # its refusals (the checkpoint folder) before a cluster starts
    with executor_for(args.workers, args.scheduler, args.connect_timeout) as executor:
        family.command("san", args, executor)
    return 0


def register(sub: Any) -> None:
    from verification.options import MAX_SEED, add_common, add_executor, name_list
    from verification.san.checks.presets import KERNELS, PRESETS

    p = sub.add_parser("san", help="attention-only vs standard decoders at tiny scale (resumable)")
    add_common(p, max_seed=MAX_SEED["san"])
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
    add_executor(p, "train the runs")
    p.set_defaults(func=_cmd)
