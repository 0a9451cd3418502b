"""Command-line options shared by every subcommand (checked before any computation), the console
and the context a main-job section receives.

A bad argument is one line on stderr naming the argument (``attnbounds dobrushin: error: argument
--seed: must be a non-negative integer, got '-1'``) and exit status 2, never a traceback and never a
silent reinterpretation. What can only be checked against the file system (the store is writable,
``--out`` is a folder) is checked here too, before the first chunk is computed.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Optional, Sequence

from theory.errors import InvalidInput

if TYPE_CHECKING:   # rich loads when a console is made, not when a parser is built
    from rich.console import Console


def make_console() -> Console:
    """A console for reports: 200 columns when output is not a terminal (logs, CI, a pipe), where
    :func:`verification.report.tables.print_table` widens a table to its full width rather than
    cut it; on a terminal, cells fold rather than end in an ellipsis."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


@dataclass
class JobContext:
    """What a main-job section gets: where to store, where to write, how much to do."""

    store: Any
    out_dir: Path
    seed: int = 0
    full: bool = False       # the larger campaigns (--full); the quick ones by default
    console: Console = field(default_factory=make_console)
    only: Optional[set[str]] = None

    @property
    def tables(self) -> Path:
        return self.out_dir / "tables"

    @property
    def figures(self) -> Path:
        return self.out_dir / "figures"


class Parser(argparse.ArgumentParser):
    """argparse, but an error is one line (no usage block) with exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _int(text: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def nonnegative_int(text: str) -> int:
    v = _int(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return v


def positive_int(text: str) -> int:
    v = _int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (>= 1), got {text!r}")
    return v


def int_at_least(lo: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        v = _int(text)
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {text!r}")
        return v
    parse.__name__ = f"int>={lo}"
    return parse


def name_list(known: Optional[Sequence[str]] = None, what: str = "name",
              accept: Optional[Callable[[str], bool]] = None) -> Callable[[str], tuple[str, ...]]:
    """Comma-separated names; empty items and unknown names are errors listing the known ones."""
    def parse(text: str) -> tuple[str, ...]:
        items = [s.strip() for s in text.split(",")]
        if not text.strip() or any(not s for s in items):
            raise argparse.ArgumentTypeError(f"empty {what} in {text!r}; give a comma-separated list")
        if known is not None:
            bad = [s for s in items if s not in known and not (accept and accept(s))]
            if bad:
                raise argparse.ArgumentTypeError(
                    f"unknown {what}{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))}; "
                    f"known: {', '.join(known)}")
        return tuple(dict.fromkeys(items))
    parse.__name__ = f"{what} list"
    return parse


def family_list(text: str) -> tuple[str, ...]:
    """Comma-separated random-matrix families, each checked by the instance source that defines them
    (:func:`numerics.sources.random.check_family`): an unknown name or an unusable temperature is a
    one-line error naming the option."""
    from numerics.sources.random import check_family

    items = [s.strip() for s in text.split(",")]
    if not text.strip() or any(not s for s in items):
        raise argparse.ArgumentTypeError(f"empty family in {text!r}; give a comma-separated list")
    try:
        return tuple(dict.fromkeys(check_family(s) for s in items))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


family_list.__name__ = "family list"


def int_list(lo: int, what: str = "size") -> Callable[[str], tuple[int, ...]]:
    """Comma-separated integers >= ``lo``; an empty list is an error."""
    def parse(text: str) -> tuple[int, ...]:
        items = [s.strip() for s in text.split(",")]
        if not text.strip() or any(not s for s in items):
            raise argparse.ArgumentTypeError(f"empty {what} in {text!r}; give comma-separated integers")
        out = []
        for s in items:
            try:
                v = int(s)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{what} {s!r} is not an integer") from None
            if v < lo:
                raise argparse.ArgumentTypeError(f"{what} {v} is below {lo}")
            out.append(v)
        return tuple(dict.fromkeys(out))
    parse.__name__ = f"{what} list"
    return parse


# The largest --seed of a command whose draws bound it, and why (its one-line refusal says so); the
# others take any non-negative integer (numpy's SeedSequence takes them all). torch seeds its
# generators with integers below 2^64 and scikit-learn's random_state is below 2^32; the families
# derive their seeds from the base seed as said (tests/verification/test_one_line_nothing_created.py
# checks the modalities and san derivations against these bounds; each bound was run once).
TORCH_SEEDS = "torch seeds its generators with integers below 2^64"
MAX_SEED: dict[str, tuple[int, str]] = {
    "modalities": (2**32 - 6, "scikit-learn's random_state is below 2^32 and a preset trains seeds seed .. seed + 5"),
    "san": (2**63 - 1, f"{TORCH_SEEDS} and a preset trains seeds seed .. seed + 5"),
    "poincare": (2**63 - 1, f"{TORCH_SEEDS} and its runs use seed + k, k < 1000"),
    "rank": (10**12, f"{TORCH_SEEDS} and the draws' seeds are up to 10^6 x seed + 10^5"),
}
_LEAST = min(MAX_SEED, key=lambda k: MAX_SEED[k][0])     # verify runs every section at one seed
MAX_SEED["verify"] = (MAX_SEED[_LEAST][0], f"the {_LEAST} section's bound: {MAX_SEED[_LEAST][1]}")


def seed_int(limit: Optional[tuple[int, str]] = None) -> Callable[[str], int]:
    """``--seed``: a non-negative integer, at most ``limit``'s bound where the command has one
    (:data:`MAX_SEED`: (bound, why))."""
    if limit is None:
        return nonnegative_int

    def parse(text: str) -> int:
        v = nonnegative_int(text)
        if v > limit[0]:
            raise argparse.ArgumentTypeError(f"must be an integer from 0 to {limit[0]} ({limit[1]}), got {text!r}")
        return v
    parse.__name__ = "seed"
    return parse


def add_common(p: argparse.ArgumentParser, reads: bool = False,
               max_seed: Optional[tuple[int, str]] = None) -> None:
    """``--db``, ``--out`` and ``--seed``, taken by every subcommand but ``theorems`` (which reads
    no store and writes nothing). ``reads``: the command only reads the store (``paper``): it is
    opened read-only and must exist (``reads_store``, checked by the CLI before anything runs),
    and its help says so instead of promising a resume. ``max_seed``: the command's entry of
    :data:`MAX_SEED` (its --seed is refused above it, before anything is created)."""
    db_help = ("results store to read (SQLite file, opened read-only: its bytes are never changed; it must "
               "exist: fill it first, e.g. `attnbounds verify`)" if reads else
               "results store (SQLite file; ':memory:' for none): every chunk is stored as it finishes, "
               "so re-running the same command resumes")
    p.add_argument("--db", default=os.environ.get("ATTNBOUNDS_DB", "paper/results.db"),
                   help=f"{db_help} (default: $ATTNBOUNDS_DB, else paper/results.db)")
    if reads:
        p.set_defaults(reads_store=True)
    p.add_argument("--out", default="paper", help="where tables/ and figures/ are written")
    seeds = ">= 0" if max_seed is None else f"0 .. {max_seed[0]}"
    p.add_argument("--seed", type=seed_int(max_seed), default=0,
                   help=f"the base seed of the campaigns to read ({seeds}): the one the commands that filled the "
                        "store ran with" if reads else f"base seed of every random draw ({seeds})")


def add_theory(p: argparse.ArgumentParser) -> None:
    """``--theory FILE.py`` (repeatable), on every command that takes a theorem id: the file's
    theorems join the registry before the command line is read (:func:`verification.cli.main`,
    :func:`theory.plugins.load_file`), so its ids are accepted like the built-ins'."""
    p.add_argument("--theory", action="append", default=[], metavar="FILE.py",
                   help="a Python file that registers theorems (theory.register(Theorem(...)) with a statement "
                        "over theory.expr: A, B, C, I, delta); repeatable; see docs/your-theorem.md. The file is "
                        "Python run with your privileges (so is one named in a `paper --from` line): use only "
                        "files you trust")


def scheduler_address(text: str) -> str:
    """``--scheduler``: tcp://HOST:PORT or tls://HOST:PORT, checked before anything connects."""
    from verification.executors import check_scheduler_address

    try:
        return check_scheduler_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def connect_seconds(text: str) -> float:
    """``--connect-timeout``: seconds in (0, 600] (:func:`verification.executors.check_timeout`, the
    one rule; its message without the option's name, which argparse adds)."""
    from verification.executors import check_timeout

    try:
        return check_timeout(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None


def worker_count(text: str) -> int:
    """``--workers``: :func:`verification.executors.check_workers` (its message without the option's
    name, which argparse adds)."""
    from verification.executors import check_workers

    try:
        return check_workers(_int(text))
    except argparse.ArgumentTypeError:
        raise
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None


worker_count.__name__ = "worker count"


def add_executor(p: argparse.ArgumentParser, what: str) -> None:
    """The executor options, declared once for every command that has them: ``--workers K`` (a
    local Dask cluster) or ``--scheduler ADDRESS`` (an existing one), and ``--connect-timeout``;
    ``what`` says what runs there ("run the chunks", "train the runs"). The command builds its
    executor with :func:`verification.executors.executor_for` from the three."""
    from verification.executors import CONNECT_TIMEOUT, WORKERS_PER_CORE

    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", default=None, type=worker_count, metavar="K",
                       help=f"{what} on a local Dask cluster of K worker processes (1 <= K <= {WORKERS_PER_CORE} per "
                            "core of this machine); it speaks TLS with credentials made in memory for this run, so no "
                            "other user of the machine can join it or send it code (no dashboard is served)")
    where.add_argument("--scheduler", default=None, type=scheduler_address, metavar="ADDRESS",
                       help=f"{what} on an existing Dask cluster at tcp://HOST:PORT or tls://HOST:PORT (tls:// "
                            "credentials from the Dask configuration). That cluster runs what this command sends, "
                            "and this command unpickles what it sends back: a scheduler can run code here, so join "
                            "only clusters you control")
    p.add_argument("--connect-timeout", default=CONNECT_TIMEOUT, type=connect_seconds, metavar="SECONDS",
                   help="--scheduler: give up, with one line and exit status 2, if no Dask scheduler completes the "
                        f"connect and handshake within SECONDS (default {CONNECT_TIMEOUT:g})")


def check_out_dir(out: str | os.PathLike) -> Path:
    """``--out`` must be a folder, or creatable as one, where tables/ and figures/ can be written:
    no part of ``out/tables`` or ``out/figures`` that exists is a file, the nearest folder of them
    that exists can be written by this user, and the missing folders can be made there
    (:func:`unmakeable`: a name too long, a file system that refuses new folders). Nothing is left
    behind (the writers create their folders when they write), so a refusal later leaves no empty
    folder."""
    if not str(out).strip():
        raise InvalidInput(f"--out {str(out)!r}: an empty path; name a folder (default: paper)")
    path = Path(out)
    for sub in (path / "tables", path / "figures"):
        try:
            nearest = None
            for part in (sub, *sub.parents):        # out/tables, out, ..., up to the first that exists
                if part.exists() or part.is_symlink():
                    if not part.is_dir():
                        raise InvalidInput(f"--out {str(out)!r}: {str(part)!r} exists and is not a folder")
                    nearest = part
                    break
        except OSError as exc:                      # a name too long to look up, say
            raise InvalidInput(f"--out {str(out)!r}: cannot be made ({exc.strerror or exc})") from None
        nearest = nearest if nearest is not None else Path(os.getcwd())
        if not os.access(nearest, os.W_OK | os.X_OK):
            raise InvalidInput(f"--out {str(out)!r}: cannot write there ({str(nearest)!r}: permission denied)")
        why = unmakeable(sub, nearest)
        if why is not None:
            raise InvalidInput(f"--out {str(out)!r}: {str(sub)!r} cannot be made ({why})")
    return path


# the exit status of a command that finds a user's theorem false as filed: a theorem filed as proved
# with an exactly re-checked counterexample, or whose equality condition disagrees with the exact
# tight verdict on an instance (`stress`, `stress --search`, `prove`; docs/reliability.md). Not 1 (a
# bug: a traceback) nor 2 (bad input: one line), nor 130 (interrupted)
REFUTED = 3


def unmakeable(target: Path, nearest: Path) -> Optional[str]:
    """Why the folder ``target`` cannot be made under ``nearest`` (the nearest part of it that
    exists), in the system's words, or None: its missing names are made inside a temporary folder
    made in ``nearest``, which is then removed, so nothing is left either way."""
    import shutil
    import tempfile

    try:
        rest = Path(target).relative_to(nearest)
    except ValueError:
        rest = Path(".")
    try:
        probe = Path(tempfile.mkdtemp(prefix=".attnbounds-check-", dir=nearest))
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        (probe / rest).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return None


def fail(prog: str, exc: BaseException) -> int:
    """One line on stderr for bad input, exit status 2. An error with a ``headline`` and ``details``
    (a list of lines: :class:`verification.report.part.IncompleteCampaigns`) says the short headline
    on that line, what is wrong and what to run, and the details indented below it."""
    head, details = getattr(exc, "headline", None), getattr(exc, "details", None)
    if head and details:
        print(f"{prog}: error: {one_line(head)}", *(f"  {one_line(d)}" for d in details), sep="\n", file=sys.stderr)
    else:
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
    return 2
