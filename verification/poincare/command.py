"""The ``attnbounds poincare`` subcommand and the ``poincare`` section of the main job.

Light at import: the parser is built from :mod:`verification.poincare.checks.plan` and
:mod:`verification.options` only; the checks and the report (numpy, torch, scipy, matplotlib) are
imported when a command runs.
"""
from __future__ import annotations

import argparse

from verification.options import add_common, name_list
from verification.poincare.checks.plan import LOSSES, Plan


def verify_section(ctx) -> None:
    from verification.poincare.checks.bounds import run_campaign
    from verification.poincare.checks.sde import run_sde
    from verification.poincare.checks.villani import run_villani_map
    from verification.poincare.report.write import report

    plan = Plan(seed=ctx.seed, full=ctx.full)
    ctx.console.rule("[bold]Poincare constants of regularised attention / LoRA Gibbs measures")
    run_campaign(ctx.store, plan, ctx.console)
    run_villani_map(ctx.store, plan.seed, plan.full, console=ctx.console)
    run_sde(ctx.store, plan.seed, plan.full, ctx.console)
    report(ctx.store, plan, ctx.tables, ctx.figures, ctx.console)


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verification.options import make_console
    from verification.poincare.checks.bounds import run_campaign
    from verification.poincare.checks.sde import run_sde
    from verification.poincare.checks.villani import MAP_LOSSES, run_villani_map
    from verification.poincare.report.write import report
    from verification.store import ResultStore

    fams = args.families or LOSSES
    plan = Plan(seed=args.seed, full=args.full, families=fams)
    console = make_console()
    out = Path(args.out)
    with ResultStore(args.db) as store:
        run_campaign(store, plan, console)
        fams = tuple(f for f in MAP_LOSSES if f in plan.families)
        if fams:
            run_villani_map(store, plan.seed, plan.full, fams, console)
        if not args.no_sde:
            run_sde(store, plan.seed, plan.full, console)
        report(store, plan, out / "tables", out / "figures", console)
    return 0


def register(sub) -> None:
    p = sub.add_parser("poincare", help="estimated Poincare constants (rigorous 1-D brackets) vs Bakry-Emery / Holley-Stroock / test functions")
    add_common(p)
    p.add_argument("--families", default=None, type=name_list(LOSSES, "family"),
                   help=f"comma-separated, default all: {','.join(LOSSES)}")
    p.add_argument("--full", action="store_true", help="the full (beta, lambda) grid and finer 2-D grids")
    p.add_argument("--no-sde", action="store_true", help="skip the Langevin simulations")
    p.set_defaults(func=_cmd)
