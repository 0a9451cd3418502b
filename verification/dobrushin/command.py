"""The ``attnbounds dobrushin`` subcommand and the ``dobrushin`` section of the main job.

Light at import: the checks, the kernels and the store load only when a command runs."""
from __future__ import annotations

import argparse
from typing import Any


def verify_section(ctx: Any) -> None:
    from verification.dobrushin.checks import Plan, run_campaign
    from verification.dobrushin.report import report

    plan = Plan(seed=ctx.seed, full=ctx.full)
    ctx.console.rule("[bold]Dobrushin coefficient: Theorems D1 and D2 on random families")
    run_campaign(ctx.store, plan, ctx.console)
    report(ctx.store, plan, ctx.tables, ctx.console)


def check_plan(plan: Any) -> None:
    """Refuse a plan whose chunks would exceed the memory budget (before computing anything)."""
    from numerics.device import check_memory, chunk_memory
    from verification.dobrushin.checks import CHUNK

    n = max(plan.sizes)
    check_memory(f"--sizes {n}", chunk_memory(n, min(CHUNK, plan.instances(n))))


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from numerics.sources.random import DISTRIBUTIONS
    from verification.dobrushin.checks import SIZES, Plan, run_campaign
    from verification.dobrushin.report import report
    from verification.options import make_console
    from verification.store import ResultStore

    plan = Plan(families=args.families or DISTRIBUTIONS, sizes=args.sizes or SIZES, seed=args.seed, full=args.full)
    check_plan(plan)
    console = make_console()
    with ResultStore(args.db) as store:
        run_campaign(store, plan, console)
        report(store, plan, Path(args.out) / "tables", console)
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
    p.add_argument("--full", action="store_true", help="10x the quick instance counts")
    p.set_defaults(func=_cmd)
