"""The ``attnbounds rank`` subcommand and the ``rank`` section of the main job."""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from verification.rank import attention as att
from verification.rank import attention_report as att_report
from verification.rank import report as rank_report
from verification.rank import weights
from verification.rank.linear import FULL, QUICK, Plan, run_linear

SECTION = "rank"


PARTS = ("linear", "attention", "weights")
MAX_N = 64  # largest --n the exact certification finishes in minutes


def run(store: Any, plan: Plan, out_dir: Path, console: Any, parts: tuple[str, ...] = PARTS) -> dict:
    """Run the campaigns of ``parts`` (resuming), then write their tables and figures from the store."""
    summary: dict[str, Any] = {}
    tables, figures = out_dir / "tables", out_dir / "figures"
    if "linear" in parts:
        run_linear(store, plan, console)
        summary.update(rank_report.report_linear(store, plan, tables, figures, console))
    if "attention" in parts:
        ap = att.QUICK_ATT if not plan.full else att.FULL_ATT
        att.run_attention(store, ap, plan.seed, console)
        summary.update(att_report.report_attention(store, ap, tables, figures, console, seed=plan.seed))
    if "weights" in parts:
        weights.run_weights(store, console=console)
        summary.update(weights.report_weights(store, tables, figures, console))
    return summary


def verify_section(ctx: Any) -> None:
    """Main-job section: the quick plan (n = 8, a few seeds) and the trained heads (models cached
    in-process by numerics.sources.models when the trained section ran first)."""
    plan = replace(QUICK if ctx.quick else FULL, seed=ctx.seed)
    run(ctx.store, plan, Path(ctx.out_dir), ctx.console)


def _cmd(args: argparse.Namespace) -> int:
    from verification.options import make_console
    from verification.store import ResultStore

    plan = replace(FULL if args.full else QUICK, seed=args.seed)
    if args.n is not None:
        plan = replace(plan, n=args.n)
    if args.r_star is not None:
        plan = replace(plan, r_star=args.r_star)
    if plan.n > MAX_N:
        raise ValueError(f"--n {plan.n}: the exact (Fraction / 60-digit) certification grows like n^3; "
                         f"at most {MAX_N}")
    if not (1 <= plan.r_star <= plan.n - 2):
        raise ValueError(f"--r-star must satisfy 1 <= r* <= n - 2 (r* + 2 students), got r*={plan.r_star}, n={plan.n}")
    parts = args.part or PARTS
    with ResultStore(args.db) as store:
        run(store, plan, Path(args.out), make_console(), parts)
    return 0


def register(subparsers: Any) -> None:
    from verification.options import add_common, int_at_least, name_list

    p = subparsers.add_parser("rank", help="rank lower bounds (Entropic Bound): deficiency, achievability, recovery")
    add_common(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="the main-job size (default)")
    g.add_argument("--full", action="store_true", help="n = 16, r* = 4, many seeds and sizes")
    p.add_argument("--n", type=int_at_least(3), default=None, help="token dimension n of the linear surrogate (>= 3)")
    p.add_argument("--r-star", type=int_at_least(1), default=None, help="teacher rank r* (1 <= r* <= n - 2)")
    p.add_argument("--part", default=None, type=name_list(PARTS, "part"),
                   help="comma-separated: linear, attention, weights (default all)")
    p.set_defaults(func=_cmd)
