"""The ``attnbounds dobrushin`` subcommand and the ``dobrushin`` section of the main job: the
family's one shape (:mod:`verification.family`: ``checks.Plan``, ``checks.run``, ``report.report``).

Light at import: the checks, the kernels and the store load only when a command runs."""
from __future__ import annotations

import argparse
from typing import Any


def verify_section(ctx: Any) -> None:
    from verification import family

    family.verify(ctx, "dobrushin", "Dobrushin coefficient: Theorems D1 and D2 on random families")


def _cmd(args: argparse.Namespace) -> int:
    from verification import family

    family.command("dobrushin", args)
    return 0


def register(sub: Any) -> None:
    from numerics.sources.random import DISTRIBUTIONS
    from verification.options import add_common, family_list, int_list

    p = sub.add_parser("dobrushin", help="Theorems D1/D2 on random stochastic families (resumable)")
    add_common(p)
    p.add_argument("--families", default=None, type=family_list,
                   help=f"comma-separated, default all: {','.join(DISTRIBUTIONS)} (or softmax-T<temperature>)")
    p.add_argument("--sizes", default=None, type=int_list(2, "size"),
                   help="comma-separated n >= 2 (Theorem D1 needs two tokens), default 2,3,4,5,8,16,32,64,128")
    p.add_argument("--full", action="store_true", help="the plan of `attnbounds verify --full`: 10x the quick "
                                                       "instance counts")
    p.set_defaults(func=_cmd)
