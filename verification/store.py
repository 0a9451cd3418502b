"""The results store: SQLite through the standard library.

One row per checked instance (a :class:`Record`), written chunk by chunk in transactions. A run
killed at any moment loses at most the chunk in flight; re-running the same campaign skips the
chunks already stored (``done_chunks``), so it resumes instead of recomputing. A compact campaign
(stress sweeps of 10^8 instances) stores per chunk one *summary* per theorem (a JSON object: verdict
counts, smallest slack, histogram) and records only for the instances worth keeping; the summary is
written in the same transaction as the chunk's records.

Default location: ``paper/results.db`` (``ATTNBOUNDS_DB`` or ``--db`` override; ``:memory:`` works).

A command that only reads (``attnbounds paper``) opens the store with ``readonly=True``: SQLite's
``mode=ro``, no schema creation, no PRAGMA, no probe write, so a store its user cannot write is
read and the file's bytes never change. A WAL store with no ``-wal`` file beside it (no open
connection, every write merged) that belongs to another user, or lies in a folder that cannot be
written (SQLite cannot create its ``-shm`` index there), is opened ``immutable``; otherwise
``mode=ro`` reads the ``-wal`` too (a read-only connection may leave an empty ``-wal`` and a
``-shm`` beside a store of its own user).
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from theory.verdicts import Outcome, Verdict, judge  # noqa: F401
from verification.provenance import versions

DEFAULT_DB = Path("paper") / "results.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    id         INTEGER PRIMARY KEY,
    campaign   TEXT NOT NULL,
    chunk      TEXT NOT NULL,
    theorem    TEXT NOT NULL,
    instance   TEXT NOT NULL,
    verdict    TEXT NOT NULL,
    slack      REAL,
    value      REAL,
    bound      REAL,
    backend    TEXT,
    dtype      TEXT,
    provenance TEXT NOT NULL,
    extra      TEXT NOT NULL,
    versions   TEXT NOT NULL,
    created    REAL NOT NULL,
    UNIQUE (campaign, theorem, instance)
);
CREATE INDEX IF NOT EXISTS records_campaign ON records (campaign, theorem);
CREATE TABLE IF NOT EXISTS chunks (
    campaign TEXT NOT NULL,
    chunk    TEXT NOT NULL,
    n        INTEGER NOT NULL,
    created  REAL NOT NULL,
    PRIMARY KEY (campaign, chunk)
);
CREATE TABLE IF NOT EXISTS summaries (
    campaign TEXT NOT NULL,
    chunk    TEXT NOT NULL,
    theorem  TEXT NOT NULL,
    body     TEXT NOT NULL,
    versions TEXT NOT NULL,
    created  REAL NOT NULL,
    PRIMARY KEY (campaign, chunk, theorem)
);
"""


@dataclass
class Record:
    """One checked instance of one theorem."""

    theorem: str                  # registry id, e.g. "dobrushin.factor"
    instance: str                 # unique key of the instance within its campaign
    verdict: Verdict              # or an Outcome, for claims and statistical comparisons
    slack: Optional[float] = None  # bound minus value (>= 0 unless violated)
    value: Optional[float] = None  # the quantity bounded, e.g. delta((I+A)/2)
    bound: Optional[float] = None  # the bound, e.g. (1+delta(A))/2
    backend: str = "numpy"
    dtype: str = "float64"
    provenance: dict[str, Any] = field(default_factory=dict)  # seed, generator, model, layer, input...
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.verdict = judge(self.verdict)


def outcome_record(theorem: str, instance: str, outcome: "Outcome | str", statistic: float,
                   interval: "tuple[float, float] | None", method: str, **kw: Any) -> Record:
    """A record of a claim or statistical comparison: the outcome with its statistic, its interval
    (e.g. a 95% Wilson interval of a share, or estimate +- 2 standard errors) and how they were got."""
    extra = dict(kw.pop("extra", {}), statistic=float(statistic),
                 interval=None if interval is None else [float(interval[0]), float(interval[1])], method=method)
    return Record(theorem, instance, Outcome(outcome), extra=extra, **kw)


def _num(x: Optional[float]) -> Optional[float]:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def check_writable(path: str | os.PathLike) -> None:
    """Open the store at ``path`` and prove it accepts a write (then roll it back): a read-only
    file, a folder, or a non-database file is a ValueError naming ``--db`` before any work is done."""
    ResultStore(path).close()


_TABLES = ("records", "chunks", "summaries")


def _ro_uri(path: str, immutable: bool = False) -> str:
    from urllib.parse import quote

    return f"file:{quote(os.path.abspath(path))}?mode=ro" + ("&immutable=1" if immutable else "")


class ResultStore:
    """SQLite-backed store of :class:`Record` rows, grouped into campaigns and chunks.

    Opening checks that the store can be written (a write inside a transaction that is rolled
    back), so a read-only store fails at once, not after the first chunk has been computed.
    ``readonly=True`` opens an existing store for reading only and writes nothing at all (see the
    module docstring); writing to it is a ValueError."""

    def __init__(self, path: str | os.PathLike = DEFAULT_DB, readonly: bool = False):
        self.path = str(path)
        self.readonly = bool(readonly)
        self._versions = json.dumps(versions(), sort_keys=True)
        if self.readonly and self.path != ":memory:":
            self._open_readonly()
            return
        self._tables = set(_TABLES)
        where = f"--db {self.path!r}"
        if self.path != ":memory:":
            p = Path(self.path)
            if p.is_dir():
                raise ValueError(f"{where} is a folder, not a results store file")
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ValueError(f"{where}: cannot create its folder ({exc.strerror or exc})") from None
        try:
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.executescript(_SCHEMA)
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            with self._db:  # a real write, rolled back: proves the store is writable now
                self._db.execute("SAVEPOINT probe")
                self._db.execute("INSERT INTO chunks (campaign, chunk, n, created) VALUES ('', '', 0, 0)")
                self._db.execute("ROLLBACK TO probe")
                self._db.execute("RELEASE probe")
        except sqlite3.OperationalError as exc:
            raise ValueError(f"{where}: the results store cannot be written ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{where} is not a usable SQLite database: {exc}") from None

    def _open_readonly(self) -> None:
        where = f"--db {self.path!r}"
        if Path(self.path).is_dir():
            raise ValueError(f"{where} is a folder, not a results store file")
        if not Path(self.path).is_file():
            raise FileNotFoundError(f"{where}: no results store there (fill one first, e.g. `attnbounds verify`)")

        def connect(immutable: bool) -> sqlite3.Connection:
            db = sqlite3.connect(_ro_uri(self.path, immutable), uri=True, timeout=30)
            try:
                names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            except BaseException:
                db.close()
                raise
            self._tables = names & set(_TABLES)
            return db

        # A WAL store read with mode=ro needs its -shm index, which SQLite creates when missing
        # (and a read-only connection leaves behind). Without a -wal file no connection is open and
        # the main file holds everything: another user's store is then read immutable, so that no
        # file owned by this user is left beside it (it would make the store read-only for its
        # owner). Immutable is also the way when the folder cannot be written and no -wal holds
        # writes not yet merged.
        wal = Path(self.path + "-wal")
        try:
            if wal.exists() or os.stat(self.path).st_uid == os.geteuid():
                try:
                    self._db = connect(False)
                except sqlite3.OperationalError:
                    if wal.exists() and wal.stat().st_size > 0:
                        raise
                    self._db = connect(True)
            else:
                self._db = connect(True)
        except sqlite3.OperationalError as exc:
            raise ValueError(f"{where}: the results store cannot be read ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{where} is not a usable SQLite database: {exc}") from None

    # -- writing -------------------------------------------------------------------------------
    def write_chunk(self, campaign: str, chunk: str, records: Iterable[Record],
                    summaries: Optional[dict[str, dict[str, Any]]] = None) -> int:
        """Store all records of one chunk (and its per-theorem ``summaries``: theorem id -> JSON
        object) and mark the chunk done, in one transaction."""
        if self.readonly:
            raise ValueError(f"--db {self.path!r} was opened read-only: nothing can be written to it")
        rows = []
        now = time.time()
        for r in records:
            rows.append((campaign, chunk, r.theorem, r.instance, judge(r.verdict).value,
                         _num(r.slack), _num(r.value), _num(r.bound), r.backend, r.dtype,
                         json.dumps(r.provenance, sort_keys=True, default=str),
                         json.dumps(r.extra, sort_keys=True, default=str), self._versions, now))
        with self._db:  # one transaction: all of the chunk or none of it
            self._db.executemany(
                "INSERT OR REPLACE INTO records (campaign, chunk, theorem, instance, verdict, slack, "
                "value, bound, backend, dtype, provenance, extra, versions, created) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            if summaries:
                self._db.executemany(
                    "INSERT OR REPLACE INTO summaries (campaign, chunk, theorem, body, versions, created) "
                    "VALUES (?,?,?,?,?,?)",
                    [(campaign, chunk, th, json.dumps(body, sort_keys=True, separators=(",", ":")),
                      self._versions, now) for th, body in summaries.items()])
            self._db.execute("INSERT OR REPLACE INTO chunks (campaign, chunk, n, created) VALUES (?,?,?,?)",
                             (campaign, chunk, len(rows), now))
        return len(rows)

    # -- reading -------------------------------------------------------------------------------
    def done_chunks(self, campaign: str) -> set[str]:
        if "chunks" not in self._tables:   # a read-only store without the table: nothing stored
            return set()
        cur = self._db.execute("SELECT chunk FROM chunks WHERE campaign = ?", (campaign,))
        return {row[0] for row in cur}

    def records(self, campaign: Optional[str] = None, theorem: Optional[str] = None,
                prefix: bool = False) -> Iterator[dict[str, Any]]:
        """Stored rows as dicts (provenance/extra/versions decoded). ``prefix`` matches
        campaign names that start with ``campaign``."""
        if "records" not in self._tables:
            return
        sql, args = "SELECT * FROM records WHERE 1=1", []
        if campaign is not None:
            if prefix:
                sql += " AND campaign LIKE ? ESCAPE '\\'"
                args.append(campaign.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
            else:
                sql += " AND campaign = ?"
                args.append(campaign)
        if theorem is not None:
            sql += " AND theorem = ?"
            args.append(theorem)
        sql += " ORDER BY id"
        cur = self._db.execute(sql, args)
        names = [d[0] for d in cur.description]
        for row in cur:
            rec = dict(zip(names, row))
            for key in ("provenance", "extra", "versions"):
                rec[key] = json.loads(rec[key])
            yield rec

    def summaries(self, campaign: str, theorem: Optional[str] = None) -> Iterator[dict[str, Any]]:
        """Stored chunk summaries of ``campaign`` (in chunk-key order) as dicts: campaign, chunk,
        theorem, body (decoded), versions (decoded), created."""
        if "summaries" not in self._tables:
            return
        sql, args = "SELECT campaign, chunk, theorem, body, versions, created FROM summaries WHERE campaign = ?", [campaign]
        if theorem is not None:
            sql += " AND theorem = ?"
            args.append(theorem)
        for c, k, th, body, ver, created in self._db.execute(sql + " ORDER BY chunk, theorem", args):
            yield {"campaign": c, "chunk": k, "theorem": th, "body": json.loads(body),
                   "versions": json.loads(ver), "created": created}

    def payload_bytes(self, campaign: str, chunks: Optional[Iterable[str]] = None) -> int:
        """Bytes of ``campaign``'s stored values (records, summaries, chunk marks; 8 per number),
        without SQLite's page and index overhead: what a campaign costs before the file's slack;
        over the chunk keys ``chunks`` only when given (a report reads its plan's chunks)."""
        if chunks is not None:
            return sum(self.payload_bytes_of(campaign, k) for k in chunks)
        return self.payload_bytes_of(campaign, None)

    def payload_bytes_of(self, campaign: str, chunk: Optional[str]) -> int:
        """:meth:`payload_bytes` of one chunk (of the whole campaign when ``chunk`` is None)."""
        q = {"records": "LENGTH(campaign)+LENGTH(chunk)+LENGTH(theorem)+LENGTH(instance)+LENGTH(verdict)"
                        "+IFNULL(LENGTH(backend),0)+IFNULL(LENGTH(dtype),0)+LENGTH(provenance)+LENGTH(extra)"
                        "+LENGTH(versions)+40",
             "summaries": "LENGTH(campaign)+LENGTH(chunk)+LENGTH(theorem)+LENGTH(body)+LENGTH(versions)+8",
             "chunks": "LENGTH(campaign)+LENGTH(chunk)+16"}
        where, args = ("campaign = ?", (campaign,)) if chunk is None else ("campaign = ? AND chunk = ?", (campaign, chunk))
        return int(sum(self._db.execute(f"SELECT IFNULL(SUM({expr}), 0) FROM {table} WHERE {where}",
                                        args).fetchone()[0] for table, expr in q.items()
                       if table in self._tables))

    def count(self, campaign: Optional[str] = None) -> int:
        if "records" not in self._tables:
            return 0
        if campaign is None:
            return self._db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM records WHERE campaign = ?", (campaign,)).fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def record_dict(r: Record) -> dict[str, Any]:
    d = asdict(r)
    d["verdict"] = judge(r.verdict).value
    return d
