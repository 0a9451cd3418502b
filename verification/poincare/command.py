"""The ``attnbounds poincare`` subcommand and the ``poincare`` section of the main job: the family's
one shape (:mod:`verification.family`).

Light at import: the parser is built from :mod:`verification.poincare.checks` (its plan, no numpy)
and :mod:`verification.options` only; the checks and the report (numpy, torch, scipy, matplotlib)
are imported when a command runs.
"""
from __future__ import annotations

import argparse

from verification.options import MAX_SEED, add_common, name_list
from verification.poincare.checks import LOSSES


def verify_section(ctx) -> None:
    from verification import family

    family.verify(ctx, "poincare", "Poincare constants of regularised attention / LoRA Gibbs measures")


def _cmd(args: argparse.Namespace) -> int:
    from verification import family

    family.command("poincare", args)
    return 0


def register(sub) -> None:
    p = sub.add_parser("poincare", help="estimated Poincare constants (rigorous 1-D brackets) vs Bakry-Emery / Holley-Stroock / test functions")
    add_common(p, max_seed=MAX_SEED["poincare"])
    p.add_argument("--families", default=None, type=name_list(LOSSES, "family"),
                   help=f"comma-separated, default all: {','.join(LOSSES)}")
    p.add_argument("--full", action="store_true", help="the plan of `attnbounds verify --full`: the full "
                                                       "(beta, lambda) grid and finer 2-D grids")
    p.add_argument("--no-sde", action="store_true", help="skip the Langevin simulations")
    p.set_defaults(func=_cmd)
