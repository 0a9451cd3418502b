"""The ``attnbounds store`` subcommand: what a results store holds, with its completeness.
Read-only: the store is opened with ``readonly=True`` and must exist (the CLI checks, before
anything runs); its bytes never change.

Without options, one row per campaign (:func:`verification.results.campaigns`): its kind, theorems,
chunks (complete: their content matches their mark; incomplete: what a resume recomputes, or removes
where it lies outside the resumed run's plan), records
and summaries; the incomplete chunks' reasons follow the table. ``--campaign NAME`` prints that
campaign's rows instead (:func:`verification.results.campaign_frame`: a stress sweep's verified
chunks with their verdict counts, or a campaign's records; ``--records`` for a sweep's kept records,
a counterexample's exact matrices and sides included, ``--theorem ID`` for one theorem's). ``--json``
prints the same as one JSON object on the last line of stdout (the listing: ``{"db", "campaigns":
[{"campaign", "kind", "theorems", "chunks", "complete", "incomplete", "records", "summaries"}]}``),
``--csv FILE`` writes the table to FILE as well.

pandas loads when the command runs, not when its parser is built (``attnbounds store --help``
imports neither pandas nor torch; the command never imports torch).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

SHOWN_ROWS = 40       # rows of a campaign's frame printed (--csv FILE writes them all)
SHOWN_PROBLEMS = 5    # incomplete chunks named per campaign


def _precheck(args: argparse.Namespace) -> None:
    """The refusals that need no store: options that only go with ``--campaign``, and a ``--csv``
    that cannot be written (checked, nothing created)."""
    from theory.errors import InvalidInput

    if args.campaign is None:
        for flag, given in (("--theorem", args.theorem is not None), ("--records", args.records)):
            if given:
                raise InvalidInput(f"{flag} goes with --campaign NAME (it selects that campaign's rows)")
    if args.csv is not None:
        path = Path(args.csv)
        if not str(args.csv).strip():
            raise InvalidInput("--csv: an empty path; name the CSV file to write")
        if path.is_dir():
            raise InvalidInput(f"--csv {args.csv!r} is a folder; name the CSV file to write")
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise InvalidInput(f"--csv {args.csv!r}: no folder {str(folder)!r} to write it in")
        if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise InvalidInput(f"--csv {args.csv!r}: cannot write there (permission denied)")
        if Path(os.path.abspath(path)) == Path(os.path.abspath(args.db)):
            raise InvalidInput(f"--csv {args.csv!r} is the results store itself; name another file")


def _table(console: Any, frame: Any, title: str) -> None:
    """``frame`` as a rich table: text left, numbers right; no cell cut (folded on a terminal; in a
    log or a pipe the table is printed at its full width)."""
    from rich.table import Table
    from rich.text import Text

    from verification.report.tables import fmt

    t = Table(title=Text(title), show_lines=False)     # Text: a cell's brackets are data, never markup
    numeric = {c for c in frame.columns if frame[c].dtype.kind in "iufb" or str(frame[c].dtype) in ("Int64", "Float64")}
    for c in frame.columns:
        t.add_column(str(c), justify="right" if c in numeric else "left", overflow="fold")
    for row in frame.itertuples(index=False):
        t.add_row(*[Text(fmt(_plain(v))) for v in row])
    if console.is_terminal:
        console.print(t)
        return
    from rich.measure import Measurement

    need = Measurement.get(console, console.options.update(width=100_000), t).maximum
    width = console.width
    console.width = max(need, width)
    try:
        console.print(t)
    finally:
        console.width = width


def _plain(v: Any) -> Any:
    """A cell as Python: pandas' missing values as None, numpy scalars as int/float."""
    import pandas as pd

    if v is None or (not isinstance(v, (list, tuple, dict)) and pd.isna(v)):
        return None
    return v.item() if hasattr(v, "item") else v


def _problems(console: Any, campaign: str, problems: dict) -> None:
    keys = sorted(problems)
    for key in keys[:SHOWN_PROBLEMS]:
        console.print(f"  {campaign}: chunk {key!r} {problems[key]}", markup=False, highlight=False)
    if len(keys) > SHOWN_PROBLEMS:
        console.print(f"  {campaign}: and {len(keys) - SHOWN_PROBLEMS} more incomplete chunks", markup=False,
                      highlight=False)


def _cmd(args: argparse.Namespace) -> int:
    import json

    from numerics.atomic import write_text
    from verification.options import make_console
    from verification.results import campaign_frame, campaigns, kind_of
    from verification.store import ResultStore

    _precheck(args)
    with ResultStore(args.db, readonly=True) as store:
        if args.campaign is None:
            frame = campaigns(store)
        else:
            frame = campaign_frame(store, args.campaign, args.theorem, records=args.records)
    if args.csv is not None:
        write_text(args.csv, frame.to_csv(index=False))
    if args.json:
        if args.campaign is None:
            rows = [dict(r, theorems=[t for t in r["theorems"].split(",") if t]) for r in frame.to_dict("records")]
            out = {"db": args.db, "campaigns": rows}
        else:
            out = {"db": args.db, "campaign": args.campaign, "theorem": args.theorem,
                   "incomplete": frame.attrs["incomplete"], "rows": _records(frame)}
        print(json.dumps(out, default=_plain))
        return 0
    console = make_console()
    wrote = f"; CSV -> {args.csv}" if args.csv is not None else ""
    if args.campaign is None:
        if frame.empty:
            console.print(f"--db {args.db}: no campaign stored{wrote}", markup=False)
            return 0
        _table(console, frame, f"campaigns in {args.db}")
        bad, chunks = frame[frame["incomplete"] > 0], int(frame["chunks"].sum())
        console.print(f"{len(frame)} campaign{'s' * (len(frame) != 1)}, {chunks} chunk{'s' * (chunks != 1)}; "
                      + (f"{len(bad)} with incomplete chunks (a resume of the command that ran them recomputes "
                         "those of its plan and removes the others; the paper refuses them until then):" if len(bad) else "every chunk complete")
                      + wrote, markup=False, highlight=False)
        for campaign in bad["campaign"]:
            _problems(console, campaign, frame.attrs["problems"][campaign])
        return 0
    incomplete = frame.attrs["incomplete"]
    shown = frame.head(SHOWN_ROWS)
    what = "record" if "instance" in frame.columns else "chunk summar"
    plural = ("s" if what == "record" else "ies") if len(frame) != 1 else ("" if what == "record" else "y")
    _table(console, shown, f"{args.campaign} ({kind_of(args.campaign)})"
                           + (f", theorem {args.theorem}" if args.theorem else ""))
    more = (f" (the first {len(shown)} shown; --csv FILE writes them all)" if len(frame) > len(shown) else "")
    console.print(f"{len(frame)} {what}{plural} of verified chunks{more}; "
                  + (f"{len(incomplete)} incomplete chunk{'s' * (len(incomplete) != 1)} left out (a resume "
                     "recomputes them):" if incomplete else "no incomplete chunk") + wrote,
                  markup=False, highlight=False)
    if incomplete:
        _problems(console, args.campaign, incomplete)
    return 0


def _records(frame: Any) -> list[dict]:
    """The frame's rows as JSON-ready dicts: missing values (NaN, pandas' NA) as None."""
    import pandas as pd

    return [{k: (None if not isinstance(v, (list, dict, tuple)) and pd.isna(v) else v) for k, v in row.items()}
            for row in frame.astype(object).to_dict("records")]


def register(sub: Any) -> None:
    from verification.commands import COMMANDS

    p = sub.add_parser("store", help=COMMANDS["store"].help,
                       description="List the campaigns a results store holds (kind, theorems, chunks complete and "
                                   "incomplete, records, summaries), or one campaign's rows. Read-only.")
    p.add_argument("--db", default=os.environ.get("ATTNBOUNDS_DB", "paper/results.db"),
                   help="results store to read (SQLite file, opened read-only: its bytes are never changed; it must "
                        "exist: fill it first, e.g. `attnbounds verify`) (default: $ATTNBOUNDS_DB, else "
                        "paper/results.db)")
    p.add_argument("--campaign", default=None, metavar="NAME",
                   help="print this campaign's rows instead of the listing: a stress sweep's verified chunks with "
                        "their verdict counts, or the campaign's records with their provenance")
    p.add_argument("--theorem", default=None, metavar="ID", help="with --campaign: only this theorem's rows")
    p.add_argument("--records", action="store_true",
                   help="with --campaign: the records even of a campaign stored as summaries (a sweep keeps the "
                        "instances worth a record: violated, undecided, the smallest slacks), each with what it keeps "
                        "(a counterexample's exact matrices in the column counterexample, its sides as extra.lhs, "
                        "extra.relation, extra.rhs)")
    p.add_argument("--json", action="store_true",
                   help="print the listing (or the campaign's rows) as one JSON object, the last line of stdout")
    p.add_argument("--csv", default=None, metavar="FILE", help="also write the table to FILE (CSV)")
    p.set_defaults(func=_cmd, reads_store=True, precheck=_precheck)
