"""What a results store file is, and the look at one before anything changes it.

A store made by attnbounds carries SQLite's ``application_id`` (:data:`APPLICATION_ID`, the bytes
``attn``) and ``user_version`` (:data:`SCHEMA_VERSION`), set when it is created.
:func:`inspect_store` opens an existing file read-only (``immutable`` where no journal is beside
it, so that no ``-wal`` or ``-shm`` file is left) and tells what it is: new, empty, current, a store
of an older schema version (accepted, upgraded on the first write), a store of version 1's tables
without the stamp (the same), or refuses it with one line (:class:`~theory.errors.InvalidInput`):
not SQLite, damaged (``PRAGMA quick_check``), another application's file, a schema version this
attnbounds does not know, or a store whose schema holds anything its version does not define. A
store is data: a trigger, a view, an index of its own, or a table, column, index or constraint
that differs from its version's (:func:`schema_differences` compares each table's columns, indexes
with their columns and collations, and foreign keys) is refused, whatever it is named. A refused
file's bytes are never changed.
:class:`verification.store.ResultStore` runs it before opening a store for reading or writing, and
:func:`upgrade` when it opens one for writing that is not today's.

Schema version 2 gives each chunk mark the count of its summaries and the digest of its stored
content (:mod:`verification.chunk_marks`); version 3 has the same tables, its digest binding the
campaign's name and the chunk's key as well. A version 1 store's marks have no digest, a version 2
store's a digest of the content alone: both count as unverifiable (incomplete: resuming recomputes
those chunks, the paper refuses them until then; the upgrade clears version 2's digests).
"""
from __future__ import annotations

import functools
import os
import sqlite3
from pathlib import Path
from typing import Optional

from theory.errors import InvalidInput

APPLICATION_ID = int.from_bytes(b"attn", "big")   # PRAGMA application_id of every store (0x6174746e)
SCHEMA_VERSION = 3                                # PRAGMA user_version: bump when the tables or the marks change
MAGIC = b"SQLite format 3\x00"                   # the first 16 bytes of every SQLite file

_RECORDS = """
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
"""
_CHUNKS = """
CREATE TABLE IF NOT EXISTS chunks (
    campaign TEXT NOT NULL,
    chunk    TEXT NOT NULL,
    n        INTEGER NOT NULL,
    created  REAL NOT NULL,{marks}
    PRIMARY KEY (campaign, chunk)
);
"""
_SUMMARIES = """
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
# version 2: a chunk mark carries its summaries' count and the digest of its content
# (verification.chunk_marks); the records of one chunk are indexed (a chunk is rewritten whole)
MARK_COLUMNS = (("summaries", "INTEGER"), ("digest", "TEXT"))
_INDEX_V2 = "CREATE INDEX IF NOT EXISTS records_chunk ON records (campaign, chunk, theorem, instance);\n"
SCHEMA_V1 = _RECORDS + _CHUNKS.format(marks="") + _SUMMARIES
SCHEMA = (_RECORDS + _INDEX_V2
          + _CHUNKS.format(marks="".join(f"\n    {name:<8} {kind}," for name, kind in MARK_COLUMNS)) + _SUMMARIES)
# every layout this attnbounds reads (version 3: version 2's tables, marks whose digest binds the chunk's key)
SCHEMAS = {1: SCHEMA_V1, 2: SCHEMA, SCHEMA_VERSION: SCHEMA}
INDEXES = {1: ("records_campaign",), 2: ("records_campaign", "records_chunk"),
           SCHEMA_VERSION: ("records_campaign", "records_chunk")}
# SQLite's own tables a store may hold (ANALYZE's statistics: they steer the query planner only)
SQLITE_OWN = ("sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4")


def check_folder(path: str, create: bool = False) -> None:
    """The folder a new store would be created in can be: the nearest part of its path that exists
    is a folder this user can write (nothing in the way is a file). ``create`` (the command runs
    now) makes the missing folders; a check (:func:`check_writable`) creates nothing."""
    where = f"--db {path!r}"
    folder = Path(os.path.abspath(path)).parent
    try:
        nearest = next(p for p in (folder, *folder.parents) if p.exists() or p.is_symlink())
    except OSError as exc:              # a name too long to look up, say
        raise InvalidInput(f"{where}: cannot create its folder ({exc.strerror or exc})") from None
    if not nearest.is_dir():
        raise InvalidInput(f"{where}: {str(nearest)!r} is not a folder")
    if not os.access(nearest, os.W_OK | os.X_OK):
        raise InvalidInput(f"{where}: the results store cannot be written (folder {str(nearest)!r}: permission denied)")
    if not create and nearest != folder:
        from verification.options import unmakeable

        why = unmakeable(folder, nearest)   # made and removed in a temporary folder: nothing is left
        if why is not None:
            raise InvalidInput(f"{where}: cannot create its folder ({why})")
    if create and nearest != folder:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInput(f"{where}: cannot create its folder ({exc.strerror or exc})") from None


@functools.lru_cache(maxsize=None)
def expected_columns(version: int = SCHEMA_VERSION) -> dict[str, tuple]:
    """Each table's columns (name, type, not null, default, primary key, hidden) in schema ``version``."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMAS[version])
        return {t: columns_of(db, t) for t in TABLES}
    finally:
        db.close()


@functools.lru_cache(maxsize=None)
def expected_objects(version: int = SCHEMA_VERSION) -> dict[tuple[str, str], tuple[str, frozenset]]:
    """The schema objects of ``version``: (type, name) -> (the table it is on, the texts of its
    ``CREATE`` statement a store of that version may hold, whitespace aside): as a new store of
    that version has them, and, from version 2 on, as :func:`upgrade` makes them of version 1's
    tables (SQLite rewrites a table's text when a column is added)."""
    out: dict[tuple[str, str], tuple[str, set]] = {}
    scripts = [SCHEMAS[version]] + ([SCHEMA_V1] if version > 1 else [])
    for script in scripts:
        db = sqlite3.connect(":memory:")
        try:
            db.executescript(script)
            if script is not SCHEMAS[version]:
                upgrade(db)
            for kind, name, table, sql in db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
                if name.startswith("sqlite_"):
                    continue
                out.setdefault((kind, name), (table, set()))[1].add(normal(sql))
        finally:
            db.close()
    return {k: (table, frozenset(texts)) for k, (table, texts) in out.items()}


def normal(sql: Optional[str]) -> str:
    """A ``CREATE`` statement's text without the whitespace that does not change it.

    >>> normal("CREATE TABLE t (\\n    a  TEXT NOT NULL,\\n    b INT\\n)")
    'CREATE TABLE t(a TEXT NOT NULL,b INT)'
    """
    import re

    text = re.sub(r"\s+", " ", sql or "").strip()
    return re.sub(r" ?([(),]) ?", r"\1", text)


def columns_of(db: sqlite3.Connection, table: str) -> tuple:
    return tuple(tuple(r[1:]) for r in db.execute(f'PRAGMA table_xinfo("{table}")'))


def objects_of(db: sqlite3.Connection) -> list[tuple[str, str, str, Optional[str]]]:
    """Every schema object of ``db`` as (type, name, table, SQL), but SQLite's own: the indexes it
    makes for a table's constraints (implied by the table's text) and ANALYZE's statistics."""
    return [tuple(r) for r in db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
            if not (r[0] == "index" and r[1].startswith("sqlite_autoindex_") and r[3] is None)
            and not (r[0] == "table" and r[1] in SQLITE_OWN)]


def described(kind: str, name: str, table: str) -> str:
    """A schema object as a refusal names it: ``trigger 'records_chunk' on records``."""
    return f"{kind} {name!r}" + (f" on {table}" if kind in ("index", "trigger") else "")


def schema_differences(db: sqlite3.Connection, objects: list[tuple[str, str, str, Optional[str]]],
                       version: int = SCHEMA_VERSION) -> list[str]:
    """How the schema of ``db`` (its ``objects``, :func:`objects_of`) differs from schema
    ``version``'s (empty when it is that one): a table, column or index missing, an object the
    version does not define (a trigger, a view, an index or table of its own, whatever its name),
    or one whose definition differs (columns, constraints, collations, an index's columns)."""
    out = []
    want = expected_objects(version)
    have = {(kind, name): (table, sql) for kind, name, table, sql in objects}
    for (kind, name), (table, sql) in have.items():
        if (kind, name) not in want or want[(kind, name)][0] != table:
            out.append(f"{described(kind, name, table)} not in version {version}")
    for t, cols in expected_columns(version).items():
        if ("table", t) not in have:
            out.append(f"no table {t}")
            continue
        got = columns_of(db, t)
        names_have, names_want = [c[0] for c in got], [c[0] for c in cols]
        missing = [c for c in names_want if c not in names_have]
        extra = [c for c in names_have if c not in names_want]
        if missing:
            out.append(f"table {t} lacks column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        if extra:
            out.append(f"table {t} has column{'s' if len(extra) > 1 else ''} {', '.join(extra)} not in version "
                       f"{version}")
        if not missing and not extra and got != cols:
            out.append(f"table {t}'s columns differ from version {version}'s")
        elif not missing and not extra and normal(have[("table", t)][1]) not in want[("table", t)][1]:
            out.append(f"table {t}'s definition differs from version {version}'s (a constraint, collation or option)")
    for (kind, name), (table, texts) in want.items():
        if kind != "index":
            continue
        if (kind, name) not in have:
            out.append(f"no index {name}")
        elif have[(kind, name)][0] == table and normal(have[(kind, name)][1]) not in texts:
            out.append(f"index {name}'s definition differs from version {version}'s")
    return out


def upgrade(db: sqlite3.Connection) -> None:
    """Make the store behind ``db`` today's, in one transaction: create what is missing (a new or
    empty store: every table; one from before chunk summaries: that table), give a version 1 (or
    unstamped) store's chunk marks the columns of version 2 (its marks keep no digest: they count
    as unverifiable, :mod:`verification.chunk_marks`) and the index of one chunk's records, clear a
    version 2 store's digests (they bind the content alone: unverifiable too), and stamp it
    (``application_id``, ``user_version`` = :data:`SCHEMA_VERSION`). Run only on a store
    :func:`inspect_store` accepted."""
    db.execute("BEGIN IMMEDIATE")
    try:
        was = db.execute("PRAGMA user_version").fetchone()[0]
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        have = {c[0] for c in columns_of(db, "chunks")}
        for name, kind in MARK_COLUMNS:
            if name not in have:
                db.execute(f"ALTER TABLE chunks ADD COLUMN {name} {kind}")
        if was < SCHEMA_VERSION:            # marks of an older recipe: recomputed, never trusted
            db.execute("UPDATE chunks SET digest = NULL WHERE digest IS NOT NULL")
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.commit()
    except BaseException:
        db.rollback()
        raise


def sqlite_error(where: str, exc: sqlite3.Error) -> Optional[InvalidInput]:
    """The one-line refusal for an SQLite error that is the store's state (damaged, full, read-only,
    unreadable), else None (a bug: it goes up as it is)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if type(exc) is sqlite3.DatabaseError or name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") \
            or name.startswith("SQLITE_CORRUPT"):
        return InvalidInput(f"{where}: the results store is damaged ({exc}); nothing was changed: move it "
                            "aside (or restore a copy) and re-run")
    if name in ("SQLITE_FULL", "SQLITE_READONLY") or name.startswith(("SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN")):
        return InvalidInput(f"{where}: the results store cannot be read or written ({exc})")
    return None


def has_sidecar(path: str) -> bool:
    return any(os.path.exists(path + s) for s in ("-wal", "-journal"))


def inspect_store(path: str | os.PathLike) -> str:
    """What the file at ``path`` is, read-only and changing nothing (an existing file is opened
    ``immutable`` unless a ``-wal`` or ``-journal`` lies beside it): ``"new"`` (no file),
    ``"empty"`` (0 bytes, or an SQLite file without tables: to be initialised), ``"unstamped"``
    (made before the stamp: version 1's tables, or those but the ``summaries`` table that came after
    them), ``"older"`` (stamped schema version 1 or 2; :func:`upgrade` makes these two today's on the
    first open for writing) or ``"current"`` (stamped, schema version :data:`SCHEMA_VERSION`). A
    folder, a file that is not SQLite, a damaged file (``PRAGMA quick_check``), another
    application's file, a store of a schema version not in :data:`SCHEMAS` and a store whose schema
    is not its version's (a trigger, a view, an index of its own, a table defined otherwise:
    :func:`schema_differences`) are an InvalidInput naming ``--db`` and what was found."""
    path = str(path)
    where = f"--db {path!r}"
    kept = "; it was left unchanged"
    if os.path.isdir(path):
        raise InvalidInput(f"{where} is a folder, not a results store file")
    if not os.path.lexists(path):
        return "new"
    if not os.path.isfile(path):
        raise InvalidInput(f"{where} is not a regular file, not a results store")
    wal = path + "-wal"
    wal_size = os.path.getsize(wal) if os.path.isfile(wal) else 0
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError as exc:
        raise InvalidInput(f"{where}: the results store cannot be read ({exc.strerror or exc})") from None
    if not head and not wal_size:
        return "empty"
    if head and not head.startswith(MAGIC):
        raise InvalidInput(f"{where} is not a usable SQLite database (no SQLite header: not a results store){kept}")

    def connect(immutable: bool) -> sqlite3.Connection:
        return sqlite3.connect(ro_uri(path, immutable), uri=True, timeout=30)

    try:
        if has_sidecar(path):
            try:
                db = connect(False)
                db.execute("PRAGMA schema_version").fetchone()
            except sqlite3.OperationalError:
                if wal_size > 0:
                    raise
                db = connect(True)
        else:
            db = connect(True)
    except sqlite3.Error as exc:
        err = sqlite_error(where, exc)
        raise (err or InvalidInput(f"{where}: the results store cannot be read ({exc})")) from None
    try:
        problems = [line.strip() for (row,) in db.execute("PRAGMA quick_check") for line in str(row).splitlines()
                    if line.strip() and not line.startswith("*** in database")]
        if problems and problems != ["ok"]:
            more = f"; and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''}" if len(problems) > 1 else ""
            raise InvalidInput(f"{where}: the results store is damaged (SQLite's quick_check: {problems[0]}{more}); "
                               "nothing was changed: move it aside (or restore a copy) and re-run")
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        objects = objects_of(db)
        differences = {v: schema_differences(db, objects, v) if objects else [] for v in SCHEMAS}
    except sqlite3.Error as exc:
        err = sqlite_error(where, exc)
        if err is None:
            raise
        raise err from None
    finally:
        db.close()
    if app not in (0, APPLICATION_ID):
        raise InvalidInput(f"{where} is another application's SQLite file (application_id {app:#010x}, not "
                           f"attnbounds' {APPLICATION_ID:#010x}), not a results store{kept}")
    ours = {(kind, name) for v in SCHEMAS for kind, name in expected_objects(v)}
    unknown = [(kind, name, table) for kind, name, table, _ in objects if (kind, name) not in ours]
    readable = f"schema versions {', '.join(map(str, SCHEMAS))} (older ones are upgraded when written)"
    data = "; a results store holds data only, never triggers, views or indexes of its own"
    fix = " (drop them with sqlite3, or move the store aside)"
    if app == APPLICATION_ID:
        if version not in SCHEMAS:
            raise InvalidInput(f"{where}: a results store of schema version {version}; this attnbounds reads "
                               f"{readable}{kept} (use the attnbounds that made it, or move it aside)")
        if differences[version]:
            raise InvalidInput(f"{where}: a results store stamped schema version {version} whose schema is not "
                               f"version {version}'s ({'; '.join(differences[version])})"
                               + (data + kept + fix if any(k != "table" for k, _, _ in unknown) else kept))
        return "current" if version == SCHEMA_VERSION else "older"
    if not objects and version == 0:
        return "empty"
    if any(kind == "table" for kind, _, _ in unknown) or version != 0:
        what = ", ".join(described(*o) for o in unknown) if unknown else f"user_version {version}"
        raise InvalidInput(f"{where} is an SQLite file of another application ({what}), not an attnbounds "
                           f"results store{kept}")
    if unknown:
        raise InvalidInput(f"{where}: a results store (unstamped) holding schema objects attnbounds does not define "
                           f"({', '.join(described(*o) for o in unknown)}){data}{kept}{fix}")
    # made before the stamp: version 1's layout, or the one before chunk summaries (ours too)
    if differences[1] not in ([], ["no table summaries"]) and differences[SCHEMA_VERSION]:
        raise InvalidInput(f"{where}: a results store of an older, unversioned schema "
                           f"({'; '.join(differences[1])}); this attnbounds reads {readable}{kept} (move it aside "
                           "to start a new store)")
    return "unstamped"


TABLES = ("records", "chunks", "summaries")


def ro_uri(path: str, immutable: bool = False) -> str:
    from urllib.parse import quote

    return f"file:{quote(os.path.abspath(path))}?mode=ro" + ("&immutable=1" if immutable else "")
