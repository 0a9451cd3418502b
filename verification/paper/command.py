"""The ``attnbounds paper`` subcommand: regenerate the paper's tables, figures and macros from
the results store (never recomputing), and with ``--pdf`` compile it.

The store is opened read-only (a store its user cannot write is fine, and its bytes never
change). ``--readme`` without a findings block and ``--pdf`` without TeX are refused before
anything is written (:func:`_precheck`, run by the CLI before ``--out`` is touched), and so is a
``--from`` command line that cannot be read (another family's command, a bad option).

``--from COMMAND`` (a family's command line, e.g. ``"stress THEOREM [options]"``) points that
family's part at the campaigns of that command line (:func:`verification.paper.from_plans.plans_from`):
on a main job's store a user's own campaign becomes the paper's table, and the completeness check
asks for that plan's chunks, the other campaigns staying the main job's; on a store holding only the
user's run, the document of that run alone (:mod:`verification.paper.own`)."""
from __future__ import annotations

import argparse
from typing import Any


def _cmd(args: argparse.Namespace) -> int:
    from verification.options import make_console
    from pathlib import Path

    from verification.paper.build import build, update_readme
    from theory.errors import InvalidInput
    from verification.paper.from_plans import plans_from
    from verification.paper.own import OWN, build_own, main_job_missing, own_theorem
    from verification.store import ResultStore

    console = make_console()
    _precheck(args)
    plans = plans_from(args.from_command) if args.from_command is not None else None
    with ResultStore(args.db, readonly=True) as store:
        why = main_job_missing(store, plans, args.seed, args.full) if plans else None
        if why is None and plans and own_theorem(plans):
            why = "your own theorem's sweep is documented on its own"
        if why is not None:          # only the user's run: its document alone
            if args.pdf or args.readme:
                raise InvalidInput(f"--from on a store without a complete main job writes the document of that "
                                   f"run alone ({OWN}); --pdf and --readme need the main job's store")
            path = build_own(store, args.out, plans, note=why)
            why_own = ("a theorem of your own gets its own document, not the paper" if own_theorem(plans) else
                       "the store holds no complete main job, so not the paper")
            console.print(f"paper --from: {why_own}: the document of your run alone -> {path}", markup=False)
            return 0
        res = build(store, args.out, seed=args.seed, full=args.full, pdf=args.pdf, plans=plans)
    if args.readme:
        findings = res.out / "generated" / "findings.md"
        changed = update_readme(Path(args.readme), findings.read_text())
        console.print(f"{args.readme}: findings block {'updated' if changed else 'already current'}", markup=False)
    console.print(f"paper: {len(res.tables)} tables, {len(res.figures)} figure files, {len(res.macros)} "
                  f"macros from {len(res.parts)} families -> {res.out}"
                  + (f"; PDFs {', '.join(str(p) for p in res.pdfs.values())} (every build check passed)"
                     if res.pdfs else ""), markup=False)
    return 0


def _precheck(args: argparse.Namespace) -> None:
    from verification.paper.build import precheck
    from verification.paper.from_plans import plans_from

    precheck(args.readme, args.pdf)
    if args.from_command is not None:
        plans_from(args.from_command)     # a command line it cannot read: refused before anything is written


def register(sub: Any) -> None:
    from verification.options import add_common, add_theory

    p = sub.add_parser("paper", help="regenerate the paper (tables, figures, macros) from the store; --pdf compiles it")
    add_common(p, reads=True)
    add_theory(p)        # a theory file the --from line's theorems come from (it may also be inside --from)
    p.add_argument("--full", action="store_true", help="read the full-settings campaigns (default: quick)")
    p.add_argument("--pdf", action="store_true", help="also compile the paper and the three reproduction reports "
                   "(latexmk or pdflatex) and run the build checks on them")
    p.add_argument("--readme", default=None, metavar="FILE",
                   help="also rewrite FILE's findings block (docs/findings.md) from the same numbers")
    p.add_argument("--from", dest="from_command", default=None, metavar="COMMAND",
                   help="read a family's tables from the campaigns of this command line instead of the main job's, "
                        "e.g. --from \"stress dobrushin.factor --sizes 256 --instances 1000000\" or --from "
                        "\"dobrushin --seed 7 --full\" (parsed by that command itself; its every chunk must be "
                        "stored: run that command first); every other campaign stays the main job's, and on a "
                        "store with no complete main job it writes the document of that run alone (own.md); a "
                        "--theory FILE.py in COMMAND is run, as Python with your privileges: take such a line only "
                        "from someone you trust")
    p.set_defaults(func=_cmd, reads_store=True, precheck=_precheck)
