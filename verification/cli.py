"""The ``attnbounds`` command line.

Subcommands come from the modules in :data:`COMMANDS`: each defines ``register(subparsers)``.
``attnbounds verify`` (the main job) runs, in order, the ``verify_section(ctx)`` of each module in
:data:`SECTIONS`, all writing to one results store and to ``paper/``.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Optional

# Before torch loads: OpenMP workers that spin after each torch op starve the numba kernels.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from rich.console import Console  # noqa: E402

from verification.options import Parser, add_common, check_out_dir, fail, name_list  # noqa: E402

# Modules that add subcommands / main-job sections. Add a new family here.
COMMANDS: tuple[str, ...] = ("verification.dobrushin_job", "verification.trained", "verification.rank", "verification.poincare",)
# main-job section name -> module defining verify_section(ctx), in the order they run
SECTIONS: dict[str, str] = {"dobrushin": "verification.dobrushin_job", "trained": "verification.trained",
                            "rank": "verification.rank", "poincare": "verification.poincare"}


def make_console() -> Console:
    """A console for reports. When output is not a terminal (logs, CI, a pipe) it is wide enough
    that no table is ever cut; table cells fold rather than end in an ellipsis."""
    return Console() if sys.stdout.isatty() else Console(width=1000)


@dataclass
class JobContext:
    """What a main-job section gets: where to store, where to write, how much to do."""

    store: "object"
    out_dir: Path
    seed: int = 0
    quick: bool = True
    console: Console = field(default_factory=lambda: make_console())
    only: Optional[set[str]] = None

    @property
    def tables(self) -> Path:
        return self.out_dir / "tables"

    @property
    def figures(self) -> Path:
        return self.out_dir / "figures"


def _cmd_theorems(args: argparse.Namespace) -> int:
    from theory import theorems

    from rich.markup import escape

    console = make_console()
    for th in theorems():  # statements contain brackets: never parse them as rich markup
        console.print(f"[bold]{escape(th.id)}[/bold]  ({th.category})  {escape(th.title)}")
        console.print(f"    statement: {th.statement}", markup=False)
        if args.latex:
            console.print(f"    latex:     {th.latex()}", markup=False)
        console.print(f"    equality:  {th.equality}", markup=False)
        console.print(f"    backends:  {', '.join(sorted(th.evaluators))}", markup=False)
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from verification.store import ResultStore

    only = set(args.only) if args.only else None
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
    p.add_argument("--only", default=None, type=name_list(tuple(SECTIONS), "section"),
                   help=f"comma-separated sections to run, of: {', '.join(SECTIONS)}")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("theorems", help="list the registered theorems with their statements")
    p.add_argument("--latex", action="store_true")
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
        if getattr(args, "out", None) is not None:
            check_out_dir(args.out)          # before any computation: a file there fails now
        if getattr(args, "db", None) is not None:
            from verification.store import check_writable
            check_writable(args.db)          # likewise a read-only store
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        # bad input: a clear message, not a traceback from deep inside
        return fail(prog, exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)


if __name__ == "__main__":
    sys.exit(main())
