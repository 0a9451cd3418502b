"""The ``attnbounds rank`` subcommand and the ``rank`` section of the main job.

Light at import: building the parser (:func:`register`) imports nothing heavy; the campaigns
(:mod:`verification.rank.checks`) and reports (:mod:`verification.rank.report`) are imported only
when the command or the section runs. Quick by default, ``--full`` for the larger campaign (as
every family).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from theory.errors import InvalidInput
from verification.options import add_common, int_at_least, make_console, name_list

PARTS = ("linear", "attention", "weights")
MAX_N = 64  # largest --n the exact certification finishes in minutes


def run(store: Any, plan: Any, out_dir: Path, console: Any, parts: tuple[str, ...] = PARTS) -> dict:
    """Run the campaigns of ``parts`` (resuming), then write their tables and figures from the
    store; ``plan`` is a :class:`verification.rank.checks.linear.Plan` (its ``full`` and ``seed``
    choose the attention plan too)."""
    summary: dict[str, Any] = {}
    tables, figures = out_dir / "tables", out_dir / "figures"
    if "linear" in parts:
        from verification.rank.checks.linear import run_linear
        from verification.rank.report.linear import report_linear

        run_linear(store, plan, console)
        summary.update(report_linear(store, plan, tables, figures, console))
    if "attention" in parts:
        from verification.rank.checks import attention as att
        from verification.rank.report.attention import report_attention

        ap = att.QUICK_ATT if not plan.full else att.FULL_ATT
        att.run_attention(store, ap, plan.seed, console)
        summary.update(report_attention(store, ap, tables, figures, console, seed=plan.seed))
    if "weights" in parts:
        from verification.rank.checks.weights import run_weights
        from verification.rank.report.weights import report_weights

        run_weights(store, console=console)
        summary.update(report_weights(store, tables, figures, console))
    return summary


def verify_section(ctx: Any) -> None:
    """Main-job section: the quick plan (n = 8, a few seeds) and the trained heads (models cached
    in-process by numerics.sources.models when the trained section ran first)."""
    from dataclasses import replace

    from verification.rank.checks.linear import FULL, QUICK

    plan = replace(FULL if ctx.full else QUICK, seed=ctx.seed)
    run(ctx.store, plan, Path(ctx.out_dir), ctx.console)


def _cmd(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from verification.rank.checks.linear import FULL, QUICK
    from verification.store import ResultStore

    plan = replace(FULL if args.full else QUICK, seed=args.seed)
    if args.n is not None:
        plan = replace(plan, n=args.n)
    if args.r_star is not None:
        plan = replace(plan, r_star=args.r_star)
    if plan.n > MAX_N:
        raise InvalidInput(f"--n {plan.n}: the exact (Fraction / 60-digit) certification grows like n^3; "
                         f"at most {MAX_N}")
    if not (1 <= plan.r_star <= plan.n - 2):
        raise InvalidInput(f"--r-star must satisfy 1 <= r* <= n - 2 (r* + 2 students), got r*={plan.r_star}, n={plan.n}")
    parts = args.part or PARTS
    with ResultStore(args.db) as store:
        run(store, plan, Path(args.out), make_console(), parts)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("rank", help="rank lower bounds (Entropic Bound): deficiency, achievability, recovery")
    add_common(p)
    p.add_argument("--full", action="store_true",
                   help="the larger campaign: n = 16, r* = 4, many seeds and sizes (default: the quick, main-job size)")
    p.add_argument("--n", type=int_at_least(3), default=None, help="token dimension n of the linear surrogate (>= 3)")
    p.add_argument("--r-star", type=int_at_least(1), default=None, help="teacher rank r* (1 <= r* <= n - 2)")
    p.add_argument("--part", default=None, type=name_list(PARTS, "part"),
                   help="comma-separated: linear, attention, weights (default all)")
    p.set_defaults(func=_cmd)
