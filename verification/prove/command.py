"""The ``attnbounds prove`` subcommand and the ``prove`` section of the main job.

Light at import: z3, the statements and the exact re-check load only when a command runs (the
bounds of ``--timeout`` in the help are those of :data:`numerics.smt.solve.MIN_TIMEOUT` and
:data:`numerics.smt.solve.MAX_TIMEOUT`, which the tests compare)."""
from __future__ import annotations

import argparse
from typing import Any

MIN_TIMEOUT, MAX_TIMEOUT = 0.001, 86400.0     # numerics.smt.solve's, without loading z3 for the help


def verify_section(ctx: Any) -> None:
    from verification.prove.checks import FULL, QUICK, run_campaign
    from verification.prove.report import report

    plan = FULL if ctx.full else QUICK
    ctx.console.rule("[bold]Dobrushin theorems through two SMT solvers (z3, cvc5): proved for all small matrices")
    records = run_campaign(ctx.store, plan, ctx.console)
    report(records, plan.campaign, ctx.tables, ctx.console)
    _loud(records, ctx.console)


def _loud(records: list, console: Any) -> int:
    from verification.prove.checks import sensitivity_failures
    from verification.prove.report import registry_mismatches, symmetry_disagreements

    wrong = registry_mismatches(records)
    split = symmetry_disagreements(records)
    for line in split:
        console.print(f"[bold red]{line}: the symmetry reduction of the split encoding is wrong, or an encoding is[/]")
    for line in wrong:
        console.print(f"[bold red]{line}: correct theory's smt_checked[/]")
    bad = sensitivity_failures(records)
    for r in bad:
        console.print(f"[bold red]the wrong variant {r['extra']['statement']} at {r['extra']['shape']} came back "
                      f"{r['extra']['smt']}, not with a confirmed counterexample: the encoding cannot be trusted "
                      "to fail[/]")
    return 1 if bad or wrong or split else 0


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
    from pathlib import Path

    from verification.options import make_console
    from verification.prove.checks import Plan, run_campaign, select
    from verification.prove.report import report
    from verification.store import ResultStore

    plan = Plan(statements=select(tuple(args.theorems)), max_n=args.max_n, timeout=args.timeout)
    console = make_console()
    with ResultStore(args.db) as store:
        records = run_campaign(store, plan, console)
        report(records, plan.campaign, Path(args.out) / "tables", console)
    return _loud(records, console)


def register(sub: Any) -> None:
    from verification.options import add_common, int_at_least

    p = sub.add_parser("prove", help="prove the Dobrushin theorems for all matrices of small size with z3 and "
                                     "cvc5 (counterexamples re-checked exactly; resumable)")
    add_common(p)
    p.add_argument("theorems", nargs="*", type=_name, metavar="THEOREM_ID",
                   help="registry ids (dobrushin.factor, dobrushin.factor.causal, dobrushin.product) or "
                        "statement keys (d1.bound, d1.iff, d2.bound, chain, ..., and the deliberately wrong "
                        "variants; an unknown one is refused with the list of all); default all")
    p.add_argument("--max-n", type=int_at_least(2), default=4, help="largest size n (D2: n x n x n), default 4")
    p.add_argument("--timeout", type=_seconds, default=60.0,
                   help="seconds per statement and size, all its queries together, from "
                        f"{MIN_TIMEOUT:g} (1 ms) to {MAX_TIMEOUT:g} (one day); default 60")
    p.set_defaults(func=_cmd)
