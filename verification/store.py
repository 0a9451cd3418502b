"""The results store: SQLite through the standard library.

One row per checked instance (a :class:`Record`), written chunk by chunk in transactions: a run
killed at any moment loses at most the chunk in flight, and re-running the same campaign skips the
stored chunks (``done_chunks``). A compact campaign (stress sweeps of 10^8 instances) stores per
chunk one *summary* per theorem (verdict counts, smallest slack, histogram) and records only for the
instances worth keeping, in the chunk's transaction.

A chunk is stored when its *mark* (same transaction: the number of its records and summaries and a
digest binding its campaign, its key and their content, :mod:`verification.chunk_marks`) agrees with
its content. Every reader goes through that check (:meth:`ResultStore.chunk_check`, ``done_chunks``):
a chunk edited, deleted, moved to another key or copied under another campaign after it was stored
is incomplete, so resume recomputes it and the paper refuses it, naming it. What does not verify
under a key outside a resumed run's plan is removed by that run (:meth:`ResultStore.discard`).
Marks of schema versions 1 and 2 cannot be verified: resume recomputes those chunks.

Default location: ``paper/results.db`` (``ATTNBOUNDS_DB`` or ``--db`` override; ``:memory:`` works).
A command that only reads (``attnbounds paper``) opens the store with ``readonly=True``: SQLite's
``mode=ro`` (``immutable`` for a merged WAL store of another user or in a read-only folder), no
schema creation, no PRAGMA, no probe write: the file's bytes never change.

A store is stamped when it is created: SQLite's ``application_id`` (:data:`APPLICATION_ID`, the
bytes ``attn``) and ``user_version`` (:data:`SCHEMA_VERSION`). Every open first inspects an existing
file read-only (:func:`inspect_store`) and changes nothing unless it passes: a file that is not
SQLite, a damaged one (``PRAGMA quick_check``), another application's, one of another schema version,
or one holding a trigger, a view or an index of its own (a store is data, never code) is refused
with one line (:class:`~theory.errors.InvalidInput`), its bytes untouched. A store of schema version
1 or 2 (or made before the stamp) is read as it is and upgraded by the first open for writing
(:func:`~verification.store_file.upgrade`). An empty file, or an SQLite file with no tables, is
initialised; a store damaged where the inspection did not look is the same one-line refusal, never
a traceback. :func:`check_writable` creates nothing: a store that does not exist yet needs an
existing, writable folder and is created only by the command that runs.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from theory.errors import InvalidInput
from theory.verdicts import Outcome, Verdict, judge  # noqa: F401
from verification import chunk_marks
from verification.provenance import versions
from verification.store_file import (APPLICATION_ID, SCHEMA, SCHEMA_VERSION, TABLES, check_folder,  # noqa: F401
                                       columns_of, inspect_store, ro_uri, sqlite_error, upgrade)

DEFAULT_DB = Path("paper") / "results.db"

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
    """Prove, before any work and without creating anything, that the store at ``path`` can be
    written: an existing store is inspected (:func:`inspect_store`), opened and given a write that
    is rolled back (nothing is stamped or created); a store not there yet needs an existing folder
    this user can write (it is created only when the command runs). A folder, a read-only file, a
    non-database, damaged, foreign or other-schema file is an InvalidInput naming ``--db``."""
    path = str(path)
    if path == ":memory:":
        return
    where = f"--db {path!r}"
    if not path.strip():
        raise InvalidInput(f"{where}: an empty path; name a results store file (default paper/results.db)")
    state = inspect_store(path)
    if state == "new":
        check_folder(path)
    elif state == "empty":             # nothing to write a probe into: the file and folder must be writable
        if not os.access(path, os.R_OK | os.W_OK):
            raise InvalidInput(f"{where}: the results store cannot be written (permission denied)")
        check_folder(path)
    else:
        ResultStore(path, _probe=state).close()      # inspected just now: not twice


class ResultStore:
    """SQLite-backed store of :class:`Record` rows, grouped into campaigns and chunks.

    Opening checks that the store can be written (a write inside a transaction that is rolled
    back), so a read-only store fails at once, not after the first chunk has been computed.
    ``readonly=True`` opens an existing store for reading only and writes nothing at all (see the
    module docstring); writing to it is an InvalidInput (a ValueError)."""

    def __init__(self, path: str | os.PathLike = DEFAULT_DB, readonly: bool = False, *,
                 _probe: Optional[str] = None):
        self.path = str(path)
        self.readonly = bool(readonly)
        self._versions = json.dumps(versions(), sort_keys=True)
        self._checked: dict[str, tuple[int, chunk_marks.Checked]] = {}   # campaign -> (data_version, check)
        self._modes: dict[str, str] = {}     # campaign -> the kernel mode its stored chunks were made with ("" unknown)
        if self.readonly and self.path != ":memory:":
            self._open_readonly()
            return
        self._tables = set(TABLES)
        where = f"--db {self.path!r}"
        # _probe (check_writable's, with the state it found): prove a write, create and stamp nothing
        _probe_only = _probe is not None
        state = "new"
        if _probe_only:
            if _probe not in ("current", "older", "unstamped"):
                raise ValueError(f"{where}: a {_probe} store has no table to probe")
            state = _probe
        elif self.path != ":memory:":
            state = inspect_store(self.path)      # read-only: a refusal leaves the file as it was
            if state == "new":
                check_folder(self.path, create=True)     # the command runs now: its folder may be made
        try:
            self._db = sqlite3.connect(self.path, timeout=30)
            if state != "current" and not _probe_only:   # create the tables (or upgrade older ones) in one go
                upgrade(self._db)
            self._digests = self._mark_columns = True
            if self.path != ":memory:" and not _probe_only:
                self._db.execute("PRAGMA journal_mode=WAL")
            with self._db:  # a real write, rolled back: proves the store is writable now
                self._db.execute("SAVEPOINT probe")
                self._db.execute("INSERT INTO chunks (campaign, chunk, n, created) VALUES ('', '', 0, 0)")
                self._db.execute("ROLLBACK TO probe")
                self._db.execute("RELEASE probe")
        except sqlite3.Error as exc:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            if isinstance(exc, sqlite3.OperationalError):
                raise InvalidInput(f"{where}: the results store cannot be written ({exc})") from None
            err = sqlite_error(where, exc)
            if err is None:
                raise
            raise err from None

    def _open_readonly(self) -> None:
        where = f"--db {self.path!r}"
        if Path(self.path).is_dir():
            raise InvalidInput(f"{where} is a folder, not a results store file")
        if not Path(self.path).is_file():
            raise InvalidInput(f"{where}: no results store there (fill one first, e.g. `attnbounds verify`)")
        # read-only, immutable: a damaged or foreign file is refused as it is; only today's marks verify
        current = inspect_store(self.path) == "current"

        def connect(immutable: bool) -> sqlite3.Connection:
            db = sqlite3.connect(ro_uri(self.path, immutable), uri=True, timeout=30)
            try:
                names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            except BaseException:
                db.close()
                raise
            self._tables = names & set(TABLES)
            self._mark_columns = "chunks" in names and "digest" in {c[0] for c in columns_of(db, "chunks")}
            self._digests = self._mark_columns and current
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
            raise InvalidInput(f"{where}: the results store cannot be read ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise InvalidInput(f"{where} is not a usable SQLite database: {exc}") from None

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """An SQLite error that is the store's state (damaged in a page the opening did not read,
        disk full, read-only) as one line naming ``--db``; any other error goes up as it is."""
        try:
            yield
        except sqlite3.Error as exc:
            err = sqlite_error(f"--db {self.path!r}", exc)
            if err is None:
                raise
            raise err from None

    # -- writing -------------------------------------------------------------------------------
    def write_chunk(self, campaign: str, chunk: str, records: Iterable[Record],
                    summaries: Optional[dict[str, dict[str, Any]]] = None) -> int:
        """Store all records of one chunk (and its per-theorem ``summaries``: theorem id -> JSON
        object) and mark the chunk done, in one transaction: whatever was stored under the chunk's
        key before (an incomplete chunk being recomputed) is replaced whole, and the mark carries
        the counts and the digest of the content as stored (:mod:`verification.chunk_marks`)."""
        if self.readonly:
            raise InvalidInput(f"--db {self.path!r} was opened read-only: nothing can be written to it")
        self._check_kernel_mode(campaign, chunk)
        rows = []
        now = time.time()
        for r in records:
            rows.append((campaign, chunk, r.theorem, r.instance, judge(r.verdict).value,
                         _num(r.slack), _num(r.value), _num(r.bound), r.backend, r.dtype,
                         json.dumps(r.provenance, sort_keys=True, default=str),
                         json.dumps(r.extra, sort_keys=True, default=str), self._versions, now))
        with self._guard(), self._db:  # one transaction: all of the chunk or none of it
            for table in ("records", "summaries"):
                self._db.execute(f"DELETE FROM {table} WHERE campaign = ? AND chunk = ?", (campaign, chunk))
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
            n, n_sums, digest = chunk_marks.content(self._db, campaign, chunk).get(
                chunk, (0, 0, chunk_marks.empty_digest(campaign, chunk)))   # read back: what a reader will hash
            self._db.execute("INSERT OR REPLACE INTO chunks (campaign, chunk, n, created, summaries, digest) "
                             "VALUES (?,?,?,?,?,?)", (campaign, chunk, n, now, n_sums, digest))
        self._checked.pop(campaign, None)
        return n

    def _check_kernel_mode(self, campaign: str, chunk: str) -> None:
        """Refuse to add a chunk made with one kernel mode (numerics.pins: ``pinned``, ``native`` or
        ``unpinned``) to a campaign whose stored chunks were made with another: a resumed campaign would mix numbers
        of two numerical set-ups under one name. Only verified chunks count (:meth:`chunk_check`: a
        chunk whose ``versions`` were edited is recomputed, never trusted); records from before the
        mode was recorded pass."""
        mode = kernel_mode(self._versions)
        if not mode:
            return
        stored = self._modes.get(campaign)
        if stored is None:
            verified = self.chunk_check(campaign).verified - {chunk}
            modes = set()
            with self._guard():
                for table in ("records", "summaries") if verified else ():
                    modes.update(kernel_mode(v) for k, v in self._db.execute(
                        f"SELECT DISTINCT chunk, versions FROM {table} WHERE campaign = ?", (campaign,))
                        if k in verified)
            other = sorted(modes - {"", mode})
            stored = self._modes[campaign] = other[0] if other else mode
        if stored and stored != mode:
            raise InvalidInput(
                f"--db {self.path!r}: campaign {campaign!r} holds chunks computed with {stored} kernels, and this "
                f"run computes with {mode} kernels (numerics.pins; {MODE_SETTINGS.get(mode, mode)}): resuming "
                f"would mix the two in one campaign. Run it with the same setting as before, or into another "
                f"store (--db)")

    def discard(self, campaign: str, keep: Iterable[str]) -> dict[str, str]:
        """Remove what ``campaign`` holds under chunk keys outside ``keep`` (a run's plan) that does not
        verify (:meth:`chunk_check`: content under a key without a mark, a mark its content does not
        match, a mark that cannot be verified), marks included, in one transaction that checks again
        what it removes; a verified chunk is never removed. Returns chunk key -> what was wrong.
        A resume calls it (:func:`verification.campaign.run`): nothing a mark vouches for is lost,
        and what the paper refuses as nobody's is gone."""
        if self.readonly:
            raise InvalidInput(f"--db {self.path!r} was opened read-only: nothing can be written to it")
        keep = set(keep)
        if not set(self.chunk_check(campaign).problems) - keep:      # the common case: nothing to do
            return {}
        with self._guard():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                checked = chunk_marks.check(self._db, campaign, digests=self._digests,
                                            summaries="summaries" in self._tables)
                gone = {k: why for k, why in sorted(checked.problems.items()) if k not in keep}
                for table in ("records", "summaries", "chunks"):
                    self._db.executemany(f"DELETE FROM {table} WHERE campaign = ? AND chunk = ?",
                                         [(campaign, k) for k in gone])
                self._db.commit()
            except BaseException:
                self._db.rollback()
                raise
        self._checked.pop(campaign, None)
        return gone

    # -- reading -------------------------------------------------------------------------------
    def chunk_check(self, campaign: str) -> chunk_marks.Checked:
        """``campaign``'s chunk marks checked against its stored content, in one pass
        (:func:`verification.chunk_marks.check`): the verified chunk keys, and what is wrong with
        every other mark (and with content under a key that has none). Kept until the store
        changes (SQLite's ``data_version``, or a chunk written through this store)."""
        if "chunks" not in self._tables:   # a read-only store without the table: nothing stored
            return chunk_marks.Checked(frozenset(), {})
        with self._guard():
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            kept = self._checked.get(campaign)
            if kept is None or kept[0] != version:
                kept = self._checked[campaign] = (version, chunk_marks.check(
                    self._db, campaign, digests=self._digests, summaries="summaries" in self._tables))
        return kept[1]

    def done_chunks(self, campaign: str) -> set[str]:
        """The chunks of ``campaign`` stored whole: their content matches their mark
        (:meth:`chunk_check`); resume skips these and recomputes every other."""
        return set(self.chunk_check(campaign).verified)

    def campaigns(self, prefix: str = "", first: bool = False) -> dict[str, float]:
        """The campaigns with a stored chunk whose name starts with ``prefix`` -> when their last
        chunk was stored (``first``: their first; chunk marks, not records)."""
        if "chunks" not in self._tables:
            return {}
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with self._guard():
            rows = self._db.execute(f"SELECT campaign, {'MIN' if first else 'MAX'}(created) FROM chunks WHERE campaign "
                                    "LIKE ? ESCAPE '\\' GROUP BY campaign", (like,)).fetchall()
        return {c: t for c, t in rows if c.startswith(prefix)}

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
        with self._guard():        # a page damaged further on fails here, mid-iteration
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
        with self._guard():
            for c, k, th, body, ver, created in self._db.execute(sql + " ORDER BY chunk, theorem", args):
                yield {"campaign": c, "chunk": k, "theorem": th, "body": json.loads(body),
                       "versions": json.loads(ver), "created": created}

    def payload_bytes(self, campaign: str, chunks: Optional[Iterable[str]] = None) -> int:
        """Bytes of ``campaign``'s stored values (records, summaries, chunk marks with their digests;
        8 per number), without SQLite's page and index overhead: what a campaign costs before the file's slack;
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
             "chunks": "LENGTH(campaign)+LENGTH(chunk)+16" + (
                 "+IFNULL(LENGTH(digest),0)+(CASE WHEN summaries IS NULL THEN 0 ELSE 8 END)" if self._mark_columns else "")}
        where, args = ("campaign = ?", (campaign,)) if chunk is None else ("campaign = ? AND chunk = ?", (campaign, chunk))
        with self._guard():
            return int(sum(self._db.execute(f"SELECT IFNULL(SUM({expr}), 0) FROM {table} WHERE {where}",
                                            args).fetchone()[0] for table, expr in q.items()
                           if table in self._tables))

    def count(self, campaign: Optional[str] = None) -> int:
        if "records" not in self._tables:
            return 0
        with self._guard():
            if campaign is None:
                return self._db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
            return self._db.execute("SELECT COUNT(*) FROM records WHERE campaign = ?", (campaign,)).fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# how a process gets each kernel mode (numerics.pins.summary), for a refusal to mix them
MODE_SETTINGS = {"native": "ATTNBOUNDS_NATIVE_KERNELS=1",
                 "pinned": "ATTNBOUNDS_NATIVE_KERNELS unset, pinned by the command line or attnbounds.pin_numerics()",
                 "unpinned": "a script that never called attnbounds.pin_numerics()"}


def kernel_mode(versions_json: Optional[str]) -> str:
    """The kernel mode a record's versions name: ``pinned``, ``native`` or ``unpinned`` (numerics.pins.summary;
    "pinned, applied late: ..." is pinned), or "" where they name none (older records).

    >>> kernel_mode('{"kernels": "pinned, applied late: torch"}'), kernel_mode('{"torch": "2.13"}'), kernel_mode(None)
    ('pinned', '', '')
    """
    try:
        v = json.loads(versions_json) if versions_json else {}
    except ValueError:
        return ""
    k = v.get("kernels") if isinstance(v, dict) else None
    return str(k).split(",")[0].split()[0] if k else ""

