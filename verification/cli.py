"""The ``attnbounds`` command line.

Every family package in :data:`FAMILIES` exposes ``register(subparsers)`` (its subcommand),
``SECTION`` and ``verify_section(ctx)`` (its quick part of the main job). ``attnbounds verify`` runs
the sections in order, all writing to one results store and to ``paper/``. Common options, the
console and the section context live in :mod:`verification.options`.
"""
from __future__ import annotations

import argparse
import sys
from importlib import import_module
from pathlib import Path
from typing import Optional

import numerics  # noqa: F401  (applies the thread policy before torch loads)
from verification.options import (JobContext, Parser, add_common, check_out_dir, fail,  # noqa: F401
                                  make_console, name_list)

# The family packages, in main-job order. Add a new family here.
FAMILIES: tuple[str, ...] = (
    "verification.dobrushin",
    "verification.trained",
    "verification.rank",
    "verification.poincare",
    "verification.modalities",
    "verification.san",
    "verification.prove",
    "verification.stress",
)
# main-job section name -> family package (each package's SECTION)
SECTIONS: dict[str, str] = {
    "dobrushin": "verification.dobrushin",
    "trained": "verification.trained",
    "rank": "verification.rank",
    "poincare": "verification.poincare",
    "modalities": "verification.modalities",
    "san": "verification.san",
    "prove": "verification.prove",
    "stress": "verification.stress",
}
COMMANDS = FAMILIES + ("verification.paper",)   # commands that are not families
# the subcommand of the trained-model section is `rollout`: either name selects it
SECTION_ALIASES: dict[str, str] = {"rollout": "trained"}


def _cmd_theorems(args: argparse.Namespace) -> int:
    from theory import theorems

    from rich.markup import escape

    if args.markdown:
        from theory.registry import theorems_markdown

        sys.stdout.write(theorems_markdown())
        return 0
    console = make_console()
    for th in theorems():  # statements contain brackets: never parse them as rich markup
        console.print(f"[bold]{escape(th.id)}[/bold]  ({th.category})  {escape(th.title)}")
        console.print(f"    statement: {th.statement}", markup=False)
        if args.latex:
            console.print(f"    latex:     {th.latex()}", markup=False)
            console.print("    " + th.latex_block().replace("\n", "\n    "), markup=False)
        console.print(f"    equality:  {th.equality}", markup=False)
        console.print(f"    backends:  {', '.join(sorted(th.evaluators))}", markup=False)
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from verification.store import ResultStore

    only = {SECTION_ALIASES.get(s, s) for s in args.only} if args.only else None
    with ResultStore(args.db) as store:
        ctx = JobContext(store=store, out_dir=Path(args.out), seed=args.seed, quick=not args.full,
                         only=only)
        for section, name in SECTIONS.items():
            if only and section not in only:
                continue
            import_module(name).verify_section(ctx)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="attnbounds", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("verify", help="the main job: quick checks of every theorem family")
    add_common(p)
    p.add_argument("--full", action="store_true", help="larger campaigns (default: quick)")
    p.add_argument("--only", default=None, type=name_list(tuple(SECTIONS) + tuple(SECTION_ALIASES), "section"),
                   help=f"comma-separated sections to run, of: {', '.join(SECTIONS)} "
                        "('rollout' is the same as 'trained')")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("theorems", help="list the registered theorems with their statements")
    p.add_argument("--latex", action="store_true", help="also print each statement's LaTeX and a theorem block")
    p.add_argument("--markdown", action="store_true", help="print the list as Markdown (docs/theorems.md)")
    p.set_defaults(func=_cmd_theorems)

    for name in COMMANDS:
        import_module(name).register(sub)
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # a bad argument (one line already printed) or --help
        return exc.code if isinstance(exc.code, int) else 2
    prog = f"attnbounds {args.command}"
    try:
        if getattr(args, "precheck", None) is not None:
            args.precheck(args)              # the command's own refusals, before anything is written
        if getattr(args, "out", None) is not None:
            check_out_dir(args.out)          # before any computation: a file there fails now
        if getattr(args, "reads_store", False):  # a command that only reads (and opens it read-only,
            # never check_writable): the store must exist
            if args.db != ":memory:" and not Path(args.db).is_file():
                raise FileNotFoundError(f"--db {args.db!r}: no results store there "
                                        "(fill one first, e.g. `attnbounds verify`)")
        elif getattr(args, "db", None) is not None:
            from verification.store import check_writable
            check_writable(args.db)          # likewise a read-only store
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        # bad input: a clear message, not a traceback from deep inside
        return fail(prog, exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)


if __name__ == "__main__":
    sys.exit(main())
