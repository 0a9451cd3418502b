"""The ``attnbounds prove`` subcommand and the ``prove`` section of the main job.

Light at import: z3, the statements and the exact re-check load only when a command runs (the
bounds of ``--timeout`` in the help are those of :data:`numerics.smt.solve.MIN_TIMEOUT` and
:data:`numerics.smt.solve.MAX_TIMEOUT`, which the tests compare)."""
from __future__ import annotations

import argparse
from typing import Any

MIN_TIMEOUT, MAX_TIMEOUT = 0.001, 86400.0     # numerics.smt.solve's, without loading z3 for the help


def verify_section(ctx: Any) -> None:
    from verification import family

    family.verify(ctx, "prove", "Dobrushin theorems through two SMT solvers (z3, cvc5): proved for all small matrices")


def _name(text: str) -> str:
    from verification.prove.checks import ALL, TRUE, WRONG

    known = sorted({s.theorem for s in ALL.values()}) + list(TRUE + WRONG)
    if text not in known:
        raise argparse.ArgumentTypeError(f"unknown theorem or statement {text!r}; known: {', '.join(known)}")
    return text


def _seconds(text: str) -> float:
    from numerics.smt.solve import check_timeout

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    try:
        return check_timeout(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive finite number of seconds from {MIN_TIMEOUT:g} "
                                         f"to {MAX_TIMEOUT:g} (one day), got {text!r}") from None


def _cmd(args: argparse.Namespace) -> int:
    from verification import family

    return family.command("prove", args)      # 1 when a wrong variant was not refuted, or the registry disagrees


def register(sub: Any) -> None:
    from verification.options import add_common, int_at_least

    p = sub.add_parser("prove", help="prove the Dobrushin theorems for all matrices of small size with z3 and "
                                     "cvc5 (counterexamples re-checked exactly; resumable)")
    add_common(p)
    p.add_argument("theorems", nargs="*", type=_name, metavar="THEOREM_ID",
                   help="registry ids (dobrushin.factor, dobrushin.factor.causal, dobrushin.product) or "
                        "statement keys (d1.bound, d1.iff, d2.bound, chain, ..., and the deliberately wrong "
                        "variants; an unknown one is refused with the list of all); default all")
    p.add_argument("--full", action="store_true", help="the plan of `attnbounds verify --full`: sizes up to 12, "
                                                       "60 s per statement and size (default: the main job's "
                                                       "quick plan, sizes up to 3, 10 s)")
    p.add_argument("--max-n", type=int_at_least(2), default=None,
                   help="largest size n (D2: n x n x n); default 3 (12 with --full)")
    p.add_argument("--timeout", type=_seconds, default=None,
                   help="seconds per statement and size, all its queries together, from "
                        f"{MIN_TIMEOUT:g} (1 ms) to {MAX_TIMEOUT:g} (one day); default 10 (60 with --full)")
    p.set_defaults(func=_cmd)
