"""The ``attnbounds`` command line.

The subcommands and the family packages are listed once, in :mod:`verification.commands`. The
parser lists every subcommand from that table with its one-line help and imports nothing else:
only the module of the command that runs is imported (and asked to ``register`` its options), so
``attnbounds --help`` starts at once and ``attnbounds CMD --help`` still shows all of CMD's
options. ``attnbounds verify`` runs the families' sections in order (each family's
``command.verify_section(ctx)``), all writing to one results store and to ``paper/``. Common
options, the console and the section context live in :mod:`verification.options`. :func:`main`
pins the numerics first (:func:`numerics.pins.pin`): every command, the main job included, computes
with the published kernels; importing this module changes nothing.
"""
from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import threading
from importlib import import_module
from pathlib import Path
from typing import Any, Optional, Sequence

from numerics import pins
from theory.errors import InvalidInput
from verification.commands import COMMANDS, FAMILIES, SECTION_ALIASES, section_of
from verification.options import MAX_SEED, JobContext, Parser, add_common, check_out_dir, fail, make_console, name_list


def _cmd_theorems(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from theory import theorems
    from theory.plugins import source

    from verification.paper.typeset import latex_block, statement_latex, theorems_markdown

    if args.markdown:
        sys.stdout.write(theorems_markdown())
        return 0
    console = make_console()
    for th in theorems():  # statements contain brackets: never parse them as rich markup
        console.print(f"[bold]{escape(th.id)}[/bold]  ({th.category})  {escape(th.named_title)}")
        if th.hypotheses_words():
            console.print(f"    hypotheses: {th.hypotheses_words()}", markup=False)
        console.print(f"    statement: {th.statement}", markup=False)
        if args.latex:
            console.print(f"    latex:     {statement_latex(th)}", markup=False)
            console.print("    " + latex_block(th).replace("\n", "\n    "), markup=False)
        console.print(f"    equality:  {th.equality}", markup=False)
        console.print(f"    backends:  {', '.join(sorted(th.evaluators))}", markup=False)
        if th.is_expr:
            console.print(f"    matrices:  {', '.join(th.matrices)} (n x n, row-stochastic"
                          + "".join(f", {a}" for a in th.assume) + ")", markup=False)
        if source(th.id) != "built-in":
            console.print(f"    from:      {source(th.id)}", markup=False)
        if th.formal:
            console.print(f"    formal:    {', '.join(th.formal)} (Coq, theory/formal/; `make proofs`)", markup=False)
    return 0


def lanes(sections: Sequence[str], serial: bool, db: str, cores: Optional[int] = None,
          full: bool = False) -> tuple[list, list]:
    """The sections this process runs, in main-job order, and those a second process runs beside
    them (:data:`verification.commands.SECOND_LANE`; ``full``: :data:`~verification.commands.SECOND_LANE_FULL`):
    none with ``--serial``, one core, an in-memory store, or when one lane would be empty.

    >>> lanes(["dobrushin", "trained", "rank", "stress"], False, "r.db", cores=2)
    (['trained', 'stress'], ['dobrushin', 'rank'])
    >>> lanes(["dobrushin", "trained"], True, "r.db", cores=2)
    (['dobrushin', 'trained'], [])
    >>> lanes(["poincare", "trained", "prove"], False, "r.db", cores=2, full=True)
    (['poincare', 'trained'], ['prove'])
    """

    from verification.commands import SECOND_LANE, SECOND_LANE_FULL

    cores = (os.cpu_count() or 1) if cores is None else cores
    other = SECOND_LANE_FULL if full else SECOND_LANE
    second = [s for s in sections if s in other]
    first = [s for s in sections if s not in other]
    if serial or cores < 2 or db == ":memory:" or not first or not second:
        return list(sections), []
    return first, second


def _die_with_parent() -> None:
    """In the second lane's process: end when the process that started it ends (Linux), so a
    killed ``verify`` leaves no process writing to its store."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)    # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _start_lane(args: argparse.Namespace, sections: list, log: Path) -> Any:
    """``attnbounds verify --serial --only SECTIONS`` (same store, out, seed, size) in a second
    process, its output written to ``log``; the store's chunk transactions keep the two apart."""
    import subprocess

    cmd = [sys.executable, "-c", "import sys; from verification.cli import main; sys.exit(main())", "verify",
           "--serial", "--only", ",".join(sections), "--db", str(args.db), "--out", str(args.out),
           "--seed", str(args.seed)] + (["--full"] if args.full else [])
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=dict(os.environ, COLUMNS=os.environ.get("COLUMNS", "160")),
                                preexec_fn=_die_with_parent)


def _cmd_verify(args: argparse.Namespace) -> int:
    from verification.family import main_plans
    from verification.store import ResultStore

    only = {section_of(s) for s in args.only} if args.only else None
    sections = [s for s in FAMILIES if not only or s in only]
    plans = main_plans(sections, args.seed, args.full, FAMILIES)   # every plan checked before the store is opened
    for plan in plans:           # and what it loads installed (the full plan's larger decoders: `make setup-full`)
        getattr(plan, "check_installed", lambda: None)()
    here, there = lanes(sections, args.serial, str(args.db), full=args.full)
    with ResultStore(args.db) as store:
        ctx = JobContext(store=store, out_dir=Path(args.out), seed=args.seed, full=args.full,
                         only=only)
        log = Path(args.out) / "verify-second-lane.log"
        child = _start_lane(args, there, log) if there else None
        if child is not None:
            ctx.console.print(f"sections {', '.join(there)} run in a second process beside these (output: {log}; "
                              "shown below when they finish; `--serial` runs all in one)", markup=False)
        try:
            for section in here:
                import_module(f"{FAMILIES[section]}.command").verify_section(ctx)
        except BaseException as exc:
            if child is not None:       # Ctrl-C reached it too: let it store its chunk; else stop it now
                try:
                    if not isinstance(exc, KeyboardInterrupt):
                        child.terminate()
                    child.wait(timeout=30)
                except Exception:
                    child.kill()
                    child.wait()
            raise
        if child is None:
            return 0
        ctx.console.rule(f"[bold]second process: {', '.join(there)}")
        rc = child.wait()
        sys.stdout.flush()
        ctx.console.file.write(log.read_text(errors="replace"))
        ctx.console.file.flush()
    if rc == 130:
        raise KeyboardInterrupt
    return rc


def register_verify(sub: Any) -> None:
    p = sub.add_parser("verify", help=COMMANDS["verify"].help)
    add_common(p, max_seed=MAX_SEED["verify"])
    p.add_argument("--full", action="store_true", help="larger campaigns (default: quick)")
    p.add_argument("--only", default=None, type=name_list(tuple(FAMILIES) + tuple(SECTION_ALIASES), "section"),
                   help=f"comma-separated sections to run, of: {', '.join(FAMILIES)} "
                        "('rollout' is the same as 'trained')")
    p.add_argument("--serial", action="store_true",
                   help="run every section in order in this process (default on two or more cores: "
                        "dobrushin, rank, poincare, san and prove in a second process beside the others)")
    p.set_defaults(func=_cmd_verify)


def register_theorems(sub: Any) -> None:
    from verification.options import add_theory

    p = sub.add_parser("theorems", help=COMMANDS["theorems"].help)
    add_theory(p)
    p.add_argument("--latex", action="store_true",
                   help="also print each statement's LaTeX and a theorem block (a result with a name, e.g. "
                        "Theorem D1, is a `named` environment: verification.paper.typeset.NAMED_RESULT defines it)")
    p.add_argument("--markdown", action="store_true", help="print the list as Markdown (docs/theorems.md)")
    p.set_defaults(func=_cmd_theorems)


def selected(argv: Sequence[str]) -> Optional[str]:
    """The subcommand named in ``argv``: its first word that is not an option (the top-level
    parser has no option that takes a value), if it is in the table."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: every subcommand listed with its help from the table; only the one
    ``argv`` selects is imported and registered with its options (``argv`` None: all of them)."""
    parser = Parser(prog="attnbounds", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = selected(argv) if argv is not None else None
    for name, cmd in COMMANDS.items():
        if argv is None or name == chosen:
            getattr(import_module(cmd.module), cmd.register)(sub)
        else:
            sub.add_parser(name, help=cmd.help)     # listed, not loaded
    return parser


def check_environment() -> None:
    """The environment variables a command reads, checked before it does anything:
    ``ATTNBOUNDS_MEMORY_BUDGET`` (GiB, :func:`numerics.device.memory_budget`) and
    ``ATTNBOUNDS_DB`` (the default ``--db``, checked with the option). A bad value is
    :class:`~theory.errors.InvalidInput` naming the variable. ``--help`` never reads them."""
    from numerics.device import memory_budget

    memory_budget()


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised while handling, a KeyboardInterrupt (Ctrl-C)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def interrupt_exit(prog: str, stored: int) -> int:
    """Ctrl-C: one line saying how many chunks this run stored, exit status 130."""
    print(f"{prog}: interrupted: {stored} chunk{'' if stored == 1 else 's'} stored by this run; "
          "run the same command to resume", file=sys.stderr)
    return 130


def _command(argv: list[str]) -> int:
    """Load the ``--theory`` files, read the command line, check what can be checked before
    anything is written, run the command; its exit status (:func:`main` turns what it raises into
    one line)."""
    from theory.plugins import theory_files

    files = theory_files(argv)
    if files:                            # their ids must be known when the command line is read
        from theory.plugins import load_file

        for f in files:
            load_file(f)
    try:
        args = build_parser(argv).parse_args(argv)
    except SystemExit as exc:  # a bad argument (one line already printed) or --help
        return exc.code if isinstance(exc.code, int) else 2
    check_environment()                  # the environment is input too: checked before anything
    if getattr(args, "precheck", None) is not None:
        args.precheck(args)              # the command's own refusals, before anything is written
    if getattr(args, "out", None) is not None:
        check_out_dir(args.out)          # before any computation: a file there fails now
    if getattr(args, "reads_store", False):  # a command that only reads (and opens it read-only,
        # never check_writable): the store must exist
        if args.db != ":memory:" and not Path(args.db).is_file():
            raise InvalidInput(f"--db {args.db!r}: no results store there "
                               "(fill one first, e.g. `attnbounds verify`)")
    elif getattr(args, "db", None) is not None:
        from verification.store import check_writable
        check_writable(args.db)          # likewise a read-only store
    try:
        return int(args.func(args) or 0)
    except SystemExit as exc:            # a theory file's function called sys.exit: its mistake, in one line
        from theory.plugins import user_exit

        said = user_exit(exc)
        if said is None:
            raise
        raise InvalidInput(said) from None


def main(argv: Optional[list[str]] = None) -> int:
    """``attnbounds ARGV``: the exit status; bad input is one line and 2, Ctrl-C one line and 130.
    Called without ``argv`` (the process's own command line: the ``attnbounds`` script, ``python -m
    verification.cli``), a Ctrl-C after the command returns, while Python exits, is 130 too
    (:func:`_late_interrupt`)."""
    pins.pin()                           # the published numerics, before a theory file or a command loads numpy
    own_line = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = f"attnbounds {selected(argv) or ''}".rstrip()
    from verification import campaign

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, campaign.on_interrupt)    # Ctrl-C: remembered even where Python drops it
    stored_before = campaign.stored_in_this_process()          # main may run many times in one process
    campaign.clear_interrupt()
    try:
        status = _command(argv)
        if campaign.was_interrupted():      # an interrupt that Python printed and dropped
            raise KeyboardInterrupt
        return status
    except (KeyboardInterrupt, SystemError) as exc:
        # Ctrl-C (SIGINT), at any moment from the first --theory file on: every finished chunk is in
        # the store (one transaction each; the one being written is rolled back), so the same command
        # resumes where this one stopped. A signal that lands inside a compiled (numba) function comes
        # back as a SystemError raised from it
        if not interrupted(exc):
            raise
        return interrupt_exit(prog, campaign.stored_in_this_process() - stored_before)
    except InvalidInput as exc:
        # bad input (the one type every validation raises): one line, exit 2. Anything else is a
        # bug and goes up as a traceback (exit 1): a bug is never reported as the user's mistake
        return fail(prog, exc)
    except Exception:
        # a signal that lands inside a foreign call can come back as that library's error, its
        # KeyboardInterrupt not chained (ctypes, under z3: "ArgumentError: argument 1:
        # KeyboardInterrupt"); the handler remembered it, so it is the interrupt, not a bug
        if not campaign.was_interrupted():
            raise
        return interrupt_exit(prog, campaign.stored_in_this_process() - stored_before)
    finally:
        campaign.clear_interrupt()          # handled (or gone up): never left for a later command
        if own_line and signal.getsignal(signal.SIGINT) is campaign.on_interrupt:
            signal.signal(signal.SIGINT, functools.partial(_late_interrupt, prog))


def _late_interrupt(prog: str, signum: int, frame: Any) -> None:
    """SIGINT once the command has returned, while Python exits (its atexit callbacks and finalisers:
    the Dask cluster's, the process pools', torch's): Python would print the KeyboardInterrupt, drop it
    and exit 0. Here it is one line and exit status 130, at once (the store is closed already)."""
    try:
        sys.stdout.flush()
    except Exception:                       # interrupted inside a write to stdout: what is written stays
        pass
    os.write(2, f"{prog}: interrupted as it exited (the command had finished)\n".encode())
    os._exit(130)


if __name__ == "__main__":
    sys.exit(main())
