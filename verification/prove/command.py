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
    """A built-in theorem id or statement key, or a registered theorem over theory.expr (``--theory``
    files are loaded before the command line is read)."""
    from theory import registry
    from theory.errors import InvalidInput
    from verification.prove.checks import ALL, TRUE, WRONG, is_user

    known = sorted({s.theorem for s in ALL.values()}) + list(TRUE + WRONG)
    if text in known:
        return text
    try:
        if is_user(text):
            return text
    except InvalidInput as exc:             # registered, but outside what the SMT encoding takes
        raise argparse.ArgumentTypeError(f"theorem {text!r}: {exc}") from None
    registry.load_all()
    th = registry.REGISTRY.get(text)
    if th is not None:
        raise argparse.ArgumentTypeError(f"theorem {text!r} has no SMT encoding: its statement is not over "
                                         "theory.expr (A, B, C, I, delta); prove takes "
                                         f"{', '.join(known)} or a theorem over theory.expr from --theory FILE.py")
    raise argparse.ArgumentTypeError(f"unknown theorem or statement {text!r}; known: {', '.join(known)}, or a "
                                     "theorem over theory.expr registered by --theory FILE.py")


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
    """:func:`verification.family.command`'s body (plan, run into ``--db``, report under ``--out``),
    then, with ``--json``, one JSON object as the last line of stdout. A user theorem filed as proved
    that is refuted stops the run loudly (:class:`~theory.verdicts.ViolationError`): its
    counterexample is stored, printed and in the JSON, and the exit status is
    :data:`verification.options.REFUTED` (as for ``stress``)."""
    import json
    import sys
    from pathlib import Path

    from theory.verdicts import ViolationError
    from verification.options import REFUTED, make_console
    from verification.prove import checks, report
    from verification.store import ResultStore

    plan = checks.Plan.from_args(args)
    console = make_console()
    with ResultStore(args.db) as store:
        stopped = None
        try:
            checks.run(plan, store, console=console)
        except ViolationError as exc:
            if not plan.expr:
                raise
            stopped = exc
        rc = report.report(store, plan, Path(args.out), console)
        if stopped is not None:          # the record is stored and printed above: say it loudly, once
            from rich.markup import escape

            bad = sorted({r["theorem"] for r in checks.plan_records(store, plan) if r["verdict"] == "violated"})
            console.print(f"[bold red]{escape(', '.join(bad))}: filed as proved (category='proved') but refuted by an "
                          "exactly re-checked counterexample (stored; the run stopped there)[/]")
            rc = REFUTED
        if args.json:
            console.file.flush()
            sys.stdout.write(json.dumps(report.json_result(checks.plan_records(store, plan), plan,
                                                           tuple(args.theorems))) + "\n")
            sys.stdout.flush()
    return rc      # 1 when a wrong variant was not refuted or the registry disagrees; REFUTED: a proved user theorem fails


def register(sub: Any) -> None:
    from verification.options import add_common, add_theory, int_at_least

    p = sub.add_parser("prove", help="prove the Dobrushin theorems for all matrices of small size with z3 and "
                                     "cvc5 (counterexamples re-checked exactly; resumable)")
    add_common(p)
    add_theory(p)
    p.add_argument("theorems", nargs="*", type=_name, metavar="THEOREM_ID",
                   help="registry ids (dobrushin.factor, dobrushin.factor.causal, dobrushin.product) or "
                        "statement keys (d1.bound, d1.iff, d2.bound, chain, ..., and the deliberately wrong "
                        "variants; an unknown one is refused with the list of all), or the ids of theorems over "
                        "theory.expr from --theory FILE.py (each proved for every value of its matrices and "
                        "parameters at every size 2..--max-n, tokens at the widths d = 1, 2, or refuted with an "
                        "exact counterexample; exp, log, tanh, softmax and slem are refused: stress those; not in "
                        "the same command as built-in ones); default all the built-in ones")
    p.add_argument("--full", action="store_true", help="the plan of `attnbounds verify --full`: sizes up to 12, "
                                                       "60 s per statement and size (default: the main job's "
                                                       "quick plan, sizes up to 3, 10 s)")
    p.add_argument("--max-n", type=int_at_least(2), default=None,
                   help="largest size n (D2: n x n x n); default 3 (12 with --full); a theorem from --theory: 2")
    p.add_argument("--timeout", type=_seconds, default=None,
                   help="seconds per statement and size, all its queries together, from "
                        f"{MIN_TIMEOUT:g} (1 ms) to {MAX_TIMEOUT:g} (one day); default 10 (60 with --full)")
    p.add_argument("--json", action="store_true",
                   help='print, as the last line of stdout, one JSON object {"theorem": ID, "results": [{"n": N, '
                        '"outcome": "proved" | "counterexample" | "undecided", "counterexample": null or {"A": '
                        '[["p/q", ...], ...], "alpha": "p/q", ...}, ...}]}: one result per statement and size (a user theorem: '
                        'one statement, its id; "theorem": the id asked, or the list of ids when not one)')
    p.set_defaults(func=_cmd)
