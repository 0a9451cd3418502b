"""The ``attnbounds rank`` subcommand and the ``rank`` section of the main job: the family's one
shape (:mod:`verification.family`: :class:`verification.rank.checks.Plan`, its ``run``, the
report's ``report``).

Light at import: building the parser (:func:`register`) imports nothing heavy; the campaigns
(:mod:`verification.rank.checks`) and reports (:mod:`verification.rank.report`) are imported only
when the command or the section runs.
"""
from __future__ import annotations

import argparse
from typing import Any

from verification.options import MAX_SEED, add_common, int_at_least, name_list

from verification.rank.checks import MAX_N, PARTS


def verify_section(ctx: Any) -> None:
    """Main-job section: the quick plan (n = 8, a few seeds) and the trained heads (models cached
    in-process by numerics.sources.models when the trained section ran first)."""
    from verification import family

    family.verify(ctx, "rank")


def _cmd(args: argparse.Namespace) -> int:
    from verification import family

    family.command("rank", args)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("rank", help="rank lower bounds (Entropic Bound): deficiency, achievability, recovery")
    add_common(p, max_seed=MAX_SEED["rank"])
    p.add_argument("--full", action="store_true",
                   help="the plan of `attnbounds verify --full`: n = 16, r* = 4, many seeds and sizes "
                        "(default: the quick, main-job size)")
    p.add_argument("--n", type=int_at_least(3), default=None,
                   help=f"token dimension n of the linear surrogate (3 <= n <= {MAX_N}; default 8, 16 with --full); a "
                        "sample size whose N inputs x 4 columns do not exceed n is raised to n // 4 + 1 (least squares "
                        "needs more columns than rows)")
    p.add_argument("--r-star", type=int_at_least(1), default=None,
                   help="teacher rank r* of the linear surrogate (1 <= r* <= n - 2: students of rank r* - 1 (when "
                        "positive), r* and r* + 2 are trained; default 3, 4 with --full)")
    p.add_argument("--part", default=None, type=name_list(PARTS, "part"),
                   help="comma-separated: linear, attention, weights (default all)")
    p.set_defaults(func=_cmd)
