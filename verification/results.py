"""A results store as pandas tables: the campaigns it holds with their completeness, and one
campaign's rows. Read-only: a store given by its path is opened with ``readonly=True``
(:class:`~verification.store.ResultStore`: SQLite's ``mode=ro``, the file's bytes never change).

:func:`campaigns` has one row per campaign: its ``kind`` (the family of names it belongs to,
:func:`kind_of`), the theorems its records and summaries are about, and its chunks, split into
``complete`` (the chunk's content matches its mark, :mod:`verification.chunk_marks`) and
``incomplete`` (damaged, edited, unverifiable or holding content with no mark: what a resume of the
campaign recomputes). :func:`campaign_frame` has, for a campaign stored as per-chunk summaries (a
stress sweep), one row per summary of a verified chunk: its family, size and verdict counts; for a
campaign of records, one row per record of a verified chunk, its provenance flattened into columns.
An incomplete chunk contributes no row; the frame's ``attrs["incomplete"]`` says what is wrong with
each (chunk key -> reason).

>>> from verification.store import Record, ResultStore
>>> store = ResultStore(":memory:")
>>> _ = store.write_chunk("demo.squares-v1", "n2/c0", [Record("dobrushin.factor", "i0", "holds", slack=0.5,
...                                                          provenance={"n": 2, "seed": 0})])
>>> campaigns(store)[["campaign", "kind", "theorems", "complete", "incomplete"]].to_dict("records")
[{'campaign': 'demo.squares-v1', 'kind': 'demo', 'theorems': 'dobrushin.factor', 'complete': 1, 'incomplete': 0}]
>>> campaign_frame(store, "demo.squares-v1")[["chunk", "instance", "verdict", "slack", "n", "seed"]].to_dict("records")
[{'chunk': 'n2/c0', 'instance': 'i0', 'verdict': 'holds', 'slack': 0.5, 'n': 2, 'seed': 0}]
"""
from __future__ import annotations

import difflib
import os
import re
from contextlib import contextmanager
from typing import Any, Iterator, Optional, Union

import pandas as pd

from theory.errors import InvalidInput
from theory.verdicts import Verdict
from verification.store import ResultStore

#: the columns of :func:`campaigns`, in order
LISTING = ("campaign", "kind", "theorems", "chunks", "complete", "incomplete", "records", "summaries")
#: the verdicts a summary counts (the store's words for them), in the order of their columns
VERDICTS = tuple(v.value for v in Verdict)
#: the columns of a summary campaign's :func:`campaign_frame`
SUMMARY_COLUMNS = ("chunk", "theorem", "family", "n", "layers", "instances", *VERDICTS, "exact", "min_slack")
#: a record campaign's :func:`campaign_frame` starts with these; the record's provenance keys follow, then
#: the rest of its ``extra`` as ``extra.<key>``; ``counterexample``: a counterexample's exact matrices
#: ({name: rows of "p/q"}) where the record holds one, else None
RECORD_COLUMNS = ("chunk", "instance", "theorem", "verdict", "slack", "value", "bound", "backend", "dtype",
                  "counterexample")
SHOWN = 5        # known campaigns an unknown name's refusal lists

_KIND = re.compile(r"^(.*?)(?=[.:]|-v\d|$)")
_STRESS_KEY = re.compile(r"^(?P<f>[^/]+)/n(?P<n>\d+)(?:/L(?P<L>\d+))?(?:/d\d+)?/c\d+$")
_SIZE_KEY = re.compile(r"^n(?P<n>\d+)(?:/|$)")

Store = Union[str, "os.PathLike[str]", ResultStore]


def kind_of(campaign: str) -> str:
    """The kind of a campaign, read from its name: what comes before its first ``.`` or ``:`` or
    its version (``-v<digits>``).

    >>> kind_of("stress.dobrushin.factor-v2-seed0-cellsab3b21e3"), kind_of("stress-search.dobrushin.factor-v1-seed0")
    ('stress', 'stress-search')
    >>> kind_of("trained-v3:minilm:pydoc:max128"), kind_of("trained-baseline-v1-seed0-m10"), kind_of("mine")
    ('trained', 'trained-baseline', 'mine')
    """
    m = _KIND.match(campaign)
    return m.group(1) if m and m.group(1) else campaign


def parse_key(chunk: str) -> tuple[Optional[str], Optional[int], Optional[int]]:
    """``(family, n, layers)`` of a chunk key where it has a stress sweep's form
    ``<family>/n<n>/c<k>`` (a rollout's ``<family>/n<n>/L<L>/c<k>``); a key starting ``n<n>/`` (a
    guided search's) gives its n; None for what a key does not say.

    >>> parse_key("dirichlet/n16/c2"), parse_key("softmax-T1/n4/L12/c0"), parse_key("n3/b500"), parse_key("k7")
    (('dirichlet', 16, None), ('softmax-T1', 4, 12), (None, 3, None), (None, None, None))
    """
    m = _STRESS_KEY.match(chunk)
    if m:
        return m["f"], int(m["n"]), int(m["L"]) if m["L"] else None
    m = _SIZE_KEY.match(chunk)
    return None, int(m["n"]) if m else None, None


@contextmanager
def opened(db: Store) -> Iterator[ResultStore]:
    """``db`` as a store: an open :class:`~verification.store.ResultStore` as it is (left open), a
    path opened read-only (and closed after); anything else is an InvalidInput."""
    if isinstance(db, ResultStore):
        yield db
        return
    if not isinstance(db, (str, os.PathLike)):
        raise InvalidInput(f"db: a results store's path or an open ResultStore, got {type(db).__name__}")
    with ResultStore(db, readonly=True) as store:
        yield store


def _rows(store: ResultStore, table: str, sql: str, args: tuple = ()) -> list[tuple]:
    """The rows of one aggregate query on ``table`` (none when the store has no such table)."""
    if table not in store._tables:
        return []
    with store._guard():
        return store._db.execute(sql, args).fetchall()


def _names(store: ResultStore) -> list[str]:
    """Every campaign with something stored: a chunk mark, a record or a summary."""
    names: set[str] = set()
    for table in ("chunks", "records", "summaries"):
        names.update(c for (c,) in _rows(store, table, f"SELECT DISTINCT campaign FROM {table}"))
    return sorted(names)


def _theorems(store: ResultStore, campaign: Optional[str] = None) -> dict[str, list[str]]:
    where, args = ("WHERE campaign = ?", (campaign,)) if campaign is not None else ("", ())
    out: dict[str, set[str]] = {}
    for table in ("records", "summaries"):
        for c, th in _rows(store, table, f"SELECT DISTINCT campaign, theorem FROM {table} {where}", args):
            out.setdefault(c, set()).add(th)
    return {c: sorted(ths) for c, ths in out.items()}


def _counts(store: ResultStore, table: str) -> dict[str, int]:
    return dict(_rows(store, table, f"SELECT campaign, COUNT(*) FROM {table} GROUP BY campaign"))


def campaigns(db: Store) -> pd.DataFrame:
    """One row per campaign in the store (by name), with the columns :data:`LISTING`: ``theorems``
    (comma-separated), ``chunks`` (chunk keys holding a mark or content), ``complete`` (their
    content matches their mark), ``incomplete`` (every other: what a resume recomputes, or removes
    outside its plan),
    ``records`` and ``summaries`` (rows stored under the campaign, complete chunks or not).
    ``attrs["problems"]``: campaign -> {chunk key: what is wrong}, for the campaigns with an
    incomplete chunk. Read-only."""
    with opened(db) as store:
        names = _names(store)
        theorems = _theorems(store)
        records, summaries = _counts(store, "records"), _counts(store, "summaries")
        rows, problems = [], {}
        for c in names:
            checked = store.chunk_check(c)
            if checked.problems:
                problems[c] = dict(sorted(checked.problems.items()))
            rows.append((c, kind_of(c), ",".join(theorems.get(c, ())), len(checked.verified) + len(checked.problems),
                         len(checked.verified), len(checked.problems), records.get(c, 0), summaries.get(c, 0)))
    frame = pd.DataFrame(rows, columns=list(LISTING))
    for col in LISTING[3:]:
        frame[col] = frame[col].astype("int64")
    frame.attrs["problems"] = problems
    return frame


def unknown_campaign(campaign: str, known: list[str], where: str) -> InvalidInput:
    """The refusal of a campaign name the store does not hold: the nearest known names first, at
    most :data:`SHOWN` of them.

    >>> print(unknown_campaign("stress.x-v2", ["rank.a-v1", "stress.x-v1", "stress.y-v1"], "--db 'r.db'"))
    campaign 'stress.x-v2' is not in --db 'r.db'; it holds 3 campaigns: stress.x-v1, stress.y-v1, rank.a-v1
    """
    if not known:
        return InvalidInput(f"campaign {campaign!r} is not in {where}; it holds no campaign")
    near = difflib.get_close_matches(campaign, known, n=SHOWN, cutoff=0.5)
    shown = (near + [c for c in known if c not in near])[:SHOWN]
    more = f", and {len(known) - len(shown)} more (attnbounds store lists them)" if len(known) > len(shown) else ""
    return InvalidInput(f"campaign {campaign!r} is not in {where}; it holds {len(known)} "
                        f"campaign{'s' * (len(known) != 1)}: {', '.join(shown)}{more}")


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    """A JSON object's keys flattened (nested objects as ``outer.inner``)."""
    out: dict[str, Any] = {}
    for k, v in (d.items() if isinstance(d, dict) else ()):
        if isinstance(v, dict) and v:
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _count(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _summary_row(chunk: str, theorem: str, body: dict) -> dict[str, Any]:
    family, n, layers = parse_key(chunk)
    if layers is None:
        layers = _count(body.get("layers"))
    counts = body.get("counts")
    if isinstance(counts, dict):     # a sweep's chunk: every instance counted, an absent verdict had none
        instances = _count(body.get("n"))
        verdicts = {v: _count(counts.get(v, 0)) for v in VERDICTS}
    else:                            # a guided search's: what it found, and the verdicts it counted of those
        instances = _count(body.get("found"))
        verdicts = {v: _count(body.get(v)) for v in VERDICTS}
    return {"chunk": chunk, "theorem": theorem, "family": family, "n": n, "layers": layers, "instances": instances,
            **verdicts, "exact": _count(body.get("exact")), "min_slack": body.get("min_slack")}


def _record_row(rec: dict) -> dict[str, Any]:
    extra = dict(rec.get("extra") or {})
    row = {c: rec.get(c) for c in RECORD_COLUMNS if c != "counterexample"}
    row["counterexample"] = extra.pop("counterexample", None)
    for k, v in _flat(rec.get("provenance") or {}).items():
        row[f"provenance.{k}" if k in row else k] = v
    for k, v in _flat(extra).items():
        row[f"extra.{k}"] = v
    return row


def campaign_frame(db: Store, campaign: str, theorem: Optional[str] = None, records: bool = False) -> pd.DataFrame:
    """The rows of one ``campaign`` (of one ``theorem`` when given), from its verified chunks only.

    A campaign stored as summaries (a stress sweep: one per chunk and theorem) gives one row per
    summary, the columns :data:`SUMMARY_COLUMNS`: ``family``, ``n`` and ``layers`` read from the chunk
    key (None where it does not say them), ``instances`` and the count of each verdict (0 where the
    summary counts none; a guided search's summary counts only what it found, and says nothing of
    the verdicts it does not name: None), ``exact`` (verdicts the exact path decided), ``min_slack``.
    A campaign of records (or any, with ``records=True``: a sweep keeps the instances worth a
    record) gives one row per record: :data:`RECORD_COLUMNS` (``counterexample``: the exact matrices of
    a counterexample, {name: rows of "p/q"}, else None), then its provenance keys (nested ones as
    ``outer.inner``; one named like a column above as ``provenance.<key>``), then the rest of what the
    record keeps (its ``extra``) as ``extra.<key>`` (a counterexample's exact sides: ``extra.lhs``,
    ``extra.relation``, ``extra.rhs``, as the statement writes them).

    ``attrs``: ``campaign``, ``theorem``, ``incomplete`` (chunk key -> what is wrong, for the chunks
    left out). An unknown campaign or a theorem the campaign has nothing of is an InvalidInput
    naming it (an unknown campaign's lists the nearest known ones). Read-only."""
    with opened(db) as store:
        where = f"--db {store.path!r}"
        known = _names(store)
        if campaign not in known:
            raise unknown_campaign(campaign, known, where)
        theorems = _theorems(store, campaign).get(campaign, [])
        if theorem is not None and theorem not in theorems:
            raise InvalidInput(f"campaign {campaign!r} in {where} holds nothing of theorem {theorem!r}; its theorems: "
                               f"{', '.join(theorems) or 'none'}")
        checked = store.chunk_check(campaign)
        sums = _rows(store, "summaries", "SELECT COUNT(*) FROM summaries WHERE campaign = ?", (campaign,))
        if sums and sums[0][0] and not records:
            rows = [_summary_row(s["chunk"], s["theorem"], s["body"]) for s in store.summaries(campaign, theorem)
                    if s["chunk"] in checked.verified]
            frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
            for col in ("n", "layers", "instances", *VERDICTS, "exact"):
                frame[col] = frame[col].astype("Int64")
            frame["min_slack"] = frame["min_slack"].astype("float64")
        else:
            rows = [_record_row(r) for r in store.records(campaign, theorem) if r["chunk"] in checked.verified]
            columns = list(dict.fromkeys([*RECORD_COLUMNS, *(k for r in rows for k in r)]))
            frame = pd.DataFrame(rows, columns=columns)
            for col in ("slack", "value", "bound"):
                frame[col] = frame[col].astype("float64")
    frame.attrs.update(campaign=campaign, theorem=theorem, incomplete=dict(sorted(checked.problems.items())))
    return frame
