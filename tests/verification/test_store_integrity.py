"""Damaged, foreign and old results stores, and refusals that write nothing (issue 33, items 3 and 7).

A store is stamped when created (SQLite ``application_id`` and ``user_version``); an existing file
is inspected read-only before anything is changed. A damaged store (``PRAGMA quick_check``), another
application's SQLite file, a store of another schema version and a store whose schema holds what its
version does not define (issue 59: a trigger, whatever it is named, a view, an index of its own or
redefined, another collation) are refused with one line (exit 2) by ``attnbounds paper``, ``store``
and a resumed ``attnbounds stress``, and by the library read-only or not, their bytes unchanged and
nothing left beside them. A refused command creates no store, no ``--out`` folders and no ``--db`` folder.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from theory.errors import InvalidInput
from theory.verdicts import Verdict
from verification.cli import main
from verification.chunk_marks import UNVERIFIABLE
from verification.store import APPLICATION_ID, SCHEMA, SCHEMA_VERSION, Record, ResultStore
from verification.store_file import SCHEMA_V1

ATTNBOUNDS = Path(sys.executable).with_name("attnbounds")
REPO = Path(__file__).resolve().parents[2]
SIDECARS = ("-wal", "-shm", "-journal")


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def beside(path: Path) -> list[str]:
    """The SQLite side files next to ``path``."""
    return sorted(s for s in SIDECARS if Path(str(path) + s).exists())


def recs(k: int, n: int = 40) -> list[Record]:
    return [Record("dobrushin.factor", f"{k}/{i}", Verdict.HOLDS, slack=0.1 * i,
                   provenance={"seed": k, "pad": "x" * 60}) for i in range(n)]


def filled(path: Path, chunks: int = 6) -> Path:
    with ResultStore(path) as s:
        for k in range(chunks):
            s.write_chunk("camp", f"c{k}", recs(k))
    assert beside(path) == [] and os.path.getsize(path) > 8 * 4096
    return path


def page_size(path: Path) -> int:
    size = int.from_bytes(Path(path).read_bytes()[16:18], "big")
    return 65536 if size == 1 else size


def garble(path: Path, first_page: int, last_page: int | None = None) -> None:
    """Overwrite pages ``first_page``..``last_page`` (1-based; one page when no last) with garbage."""
    ps = page_size(path)
    last = first_page if last_page is None else last_page
    with open(path, "r+b") as fh:
        fh.seek((first_page - 1) * ps)
        fh.write((bytes(range(256)) * (ps // 256 + 1))[:ps] * (last - first_page + 1))


# -- the kinds of file that are refused ------------------------------------------------------------

def damaged(tmp_path: Path) -> Path:
    p = filled(tmp_path / "damaged.db")
    garble(p, 3)
    with sqlite3.connect(f"file:{p}?mode=ro&immutable=1", uri=True) as con:   # SQLite agrees it is damaged
        assert con.execute("PRAGMA quick_check").fetchone()[0] != "ok"
    return p


def foreign(tmp_path: Path) -> Path:
    p = tmp_path / "foreign.db"
    con = sqlite3.connect(p)
    con.executescript("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
                      "INSERT INTO users (name) VALUES ('ada'), ('grace');")
    con.close()
    return p


def foreign_app(tmp_path: Path) -> Path:
    """Another application's stamp, even with tables named as ours."""
    p = tmp_path / "foreign-app.db"
    con = sqlite3.connect(p)
    con.executescript(SCHEMA + "PRAGMA application_id = 1111;")
    con.close()
    return p


def old_schema(tmp_path: Path) -> Path:
    """An unstamped store of an older layout: records without dtype, no summaries table."""
    p = tmp_path / "old.db"
    old = SCHEMA_V1.replace("    dtype      TEXT,\n", "")
    old = old[:old.index("CREATE TABLE IF NOT EXISTS summaries")]
    assert "dtype" not in old and "summaries" not in old
    con = sqlite3.connect(p)
    con.executescript(old)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("INSERT INTO chunks VALUES ('camp', 'c0', 0, 0)")
    con.commit()
    con.close()
    return p


def other_version(tmp_path: Path) -> Path:
    """Our stamp, another schema version."""
    p = filled(tmp_path / "v2.db", chunks=1)
    con = sqlite3.connect(p)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    assert beside(p) == []
    return p


def with_sql(name: str, *statements: str, make=None):
    """A kind of store: a filled one (or ``make``'s) to which ``statements`` were applied by hand."""
    def kind(tmp_path: Path) -> Path:
        p = (make or filled)(tmp_path / name)
        con = sqlite3.connect(p)
        for sql in statements:
            con.execute(sql)
        con.commit()
        con.close()
        assert beside(p) == []
        return p
    return kind


def unstamped_v1(path: Path) -> Path:
    return unstamped(path, SCHEMA_V1)


# a store is data: each of these is refused whatever its name (the issue: a trigger named like one of
# the store's indexes passed the check, and a trigger editing summaries was sealed into the next mark)
OBJECTS = {
    "trigger-edits-summaries": ("CREATE TRIGGER records_chunk AFTER INSERT ON summaries BEGIN UPDATE summaries SET "
                                "body = replace(body, '\"tight\":', '\"tight\":1') WHERE rowid = NEW.rowid; END",
                                "trigger 'records_chunk' on summaries"),
    "trigger-deletes-records": ("CREATE TRIGGER records_campaign AFTER INSERT ON records BEGIN DELETE FROM records "
                                "WHERE campaign = NEW.campaign AND chunk != NEW.chunk; END",
                                "trigger 'records_campaign' on records"),
    "view": ("CREATE VIEW tight AS SELECT * FROM records WHERE verdict = 'tight'", "view 'tight'"),
    "extra-index": ("CREATE INDEX records_verdict ON records (verdict)", "index 'records_verdict' on records"),
    "index-redefined": (["DROP INDEX records_chunk", "CREATE INDEX records_chunk ON records (campaign, chunk)"],
                        "index records_chunk's definition differs"),
}


def collated(tmp_path: Path) -> Path:
    """Today's tables and stamp, the chunk marks' campaign compared case-insensitively."""
    path = tmp_path / "collated.db"
    schema = SCHEMA.replace("CREATE TABLE IF NOT EXISTS chunks (\n    campaign TEXT NOT NULL,",
                            "CREATE TABLE IF NOT EXISTS chunks (\n    campaign TEXT NOT NULL COLLATE NOCASE,")
    assert schema != SCHEMA
    con = sqlite3.connect(path)
    con.executescript(schema + f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};")
    con.close()
    return path


KINDS = {
    **{kind: (with_sql(f"{kind}.db", *([sql] if isinstance(sql, str) else sql)), words) for kind, (sql, words) in OBJECTS.items()},
    "trigger-in-unstamped": (with_sql("unstamped.db", OBJECTS["trigger-deletes-records"][0], make=unstamped_v1),
                             "trigger 'records_campaign' on records"),
    "collation": (collated, "table chunks's definition differs"),
    "damaged": (damaged, "damaged"),
    "foreign": (foreign, "another application"),
    "foreign-app": (foreign_app, "another application's SQLite file"),
    "old-schema": (old_schema, "older, unversioned schema"),
    "other-version": (other_version, f"schema version {SCHEMA_VERSION + 1}"),
}


def assert_one_line(rc: int, err: str, *words: str) -> None:
    assert rc == 2, (rc, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])


def paper_argv(db: Path, out: Path) -> list[str]:
    return ["paper", "--db", str(db), "--out", str(out)]


def stress_argv(db: Path, out: Path) -> list[str]:
    return ["stress", "dobrushin.factor", "--instances", "20000", "--sizes", "3", "--db", str(db), "--out", str(out)]


def store_argv(db: Path, out: Path) -> list[str]:
    return ["store", "--db", str(db)]


ARGV = {"paper": paper_argv, "stress": stress_argv, "store": store_argv}


@pytest.mark.parametrize("command", list(ARGV))
@pytest.mark.parametrize("kind", list(KINDS))
def test_bad_store_is_refused_in_one_line_and_left_unchanged(kind, command, tmp_path, capsys):
    make, words = KINDS[kind]
    db = make(tmp_path)
    before, side = sha(db), beside(db)
    out = tmp_path / "out"
    rc = main(ARGV[command](db, out))
    assert_one_line(rc, capsys.readouterr().err, f"attnbounds {command}: error:", "--db", db.name, words)
    assert sha(db) == before and beside(db) == side        # not a byte changed, nothing left beside it
    assert not out.exists()                                # and nothing written anywhere else


@pytest.mark.parametrize("command", ["paper", "stress"])
def test_damaged_store_through_the_installed_command(command, tmp_path):
    """As a user runs it: a fresh process, one line on stderr, exit status 2, the bytes unchanged."""
    db = damaged(tmp_path)
    before = sha(db)
    argv = (paper_argv if command == "paper" else stress_argv)(db, tmp_path / "out")
    # the console script where this Python has it (make test's venv), else the same entry point
    cmd = [str(ATTNBOUNDS)] if ATTNBOUNDS.exists() else [sys.executable, "-m", "verification.cli"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))))
    run = subprocess.run([*cmd, *argv], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert_one_line(run.returncode, run.stderr, "--db", "damaged", "quick_check")
    assert sha(db) == before and beside(db) == []


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("readonly", [False, True])
def test_the_library_refuses_before_changing_anything(kind, readonly, tmp_path):
    make, words = KINDS[kind]
    db = make(tmp_path)
    before, side = sha(db), beside(db)
    with pytest.raises(InvalidInput, match="--db") as exc:
        ResultStore(db, readonly=readonly)
    assert words in str(exc.value) and "\n" not in str(exc.value)
    assert sha(db) == before and beside(db) == side


def test_a_new_store_is_stamped(tmp_path):
    db = tmp_path / "r.db"
    ResultStore(db).close()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID == int.from_bytes(b"attn", "big")
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with ResultStore(db) as s:                              # and opens again as it is
        s.write_chunk("camp", "c0", recs(0, 2))
    with ResultStore(db, readonly=True) as s:
        assert s.count("camp") == 2


def unstamped(db: Path, schema: str) -> Path:
    """A store as attnbounds wrote it before the stamp: ``schema``'s tables (version 1's), WAL, one
    chunk mark (without a digest: version 1 had none)."""
    con = sqlite3.connect(db)
    con.executescript(schema)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("INSERT INTO chunks VALUES ('camp', 'c0', 0, 0)")
    con.commit()
    con.close()
    return db


def test_a_store_made_before_the_stamp_is_read_as_it_is_and_stamped_on_writing(tmp_path):
    """Version 1's tables without the stamp (what attnbounds wrote before it) are read as they are
    (its mark has no digest: unverifiable, so not done) and upgraded by the first open for writing."""
    db = unstamped(tmp_path / "legacy.db", SCHEMA_V1)
    before = sha(db)
    with ResultStore(db, readonly=True) as s:
        assert s.done_chunks("camp") == set() and s.chunk_check("camp").problems == {"c0": UNVERIFIABLE}
    assert sha(db) == before
    with ResultStore(db) as s:
        assert s.done_chunks("camp") == set()
        s.write_chunk("camp", "c1", recs(1, 1))
        assert s.done_chunks("camp") == {"c1"} and set(s.chunk_check("camp").problems) == {"c0"}
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3


def test_a_store_from_before_chunk_summaries_is_read_and_upgraded(tmp_path):
    """The layout attnbounds wrote before the summaries table (records and chunks as today's) is
    its own: read as it is, and the first open for writing adds the table and the stamp."""
    db = unstamped(tmp_path / "pre-summaries.db", SCHEMA_V1[:SCHEMA_V1.index("CREATE TABLE IF NOT EXISTS summaries")])
    before = sha(db)
    with ResultStore(db, readonly=True) as s:
        assert s.done_chunks("camp") == set() and list(s.summaries("camp")) == []
        assert s.chunk_check("camp").problems == {"c0": UNVERIFIABLE}
    assert sha(db) == before
    with ResultStore(db) as s:
        s.write_chunk("camp", "c1", recs(1, 1), summaries={"dobrushin.factor": {"n": 1}})
    with ResultStore(db, readonly=True) as s:
        assert [r["chunk"] for r in s.summaries("camp")] == ["c1"] and s.done_chunks("camp") == {"c1"}
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


@pytest.mark.parametrize("blank", ["zero-bytes", "sqlite-without-tables"])
def test_an_empty_file_is_initialised(blank, tmp_path):
    db = tmp_path / "e.db"
    if blank == "zero-bytes":
        db.write_bytes(b"")
    else:
        con = sqlite3.connect(db)
        con.execute("PRAGMA user_version = 0")
        con.execute("VACUUM")                               # a valid SQLite file, no tables
        con.close()
        assert db.stat().st_size > 0
    with ResultStore(db) as s:
        s.write_chunk("camp", "c0", recs(0, 1))
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_damage_found_later_while_reading_or_writing_is_one_line(tmp_path):
    """Damage the opening check could not see (it happened after the store was opened) is an
    InvalidInput naming the store, from a read (mid-iteration) or a write, never a DatabaseError."""
    db = filled(tmp_path / "later.db")
    good = db.read_bytes()
    pages = os.path.getsize(db) // page_size(db)
    for readonly in (True, False):
        db.write_bytes(good)
        s = ResultStore(db, readonly=readonly)
        try:
            garble(db, 3, pages)
            with pytest.raises(InvalidInput, match=r"--db '.*later\.db': the results store is damaged"):
                list(s.records("camp"))
            if not readonly:
                with pytest.raises(InvalidInput, match="damaged"):
                    s.write_chunk("camp", "c9", recs(9, 1))
        finally:
            s.close()


def test_a_bug_is_still_not_bad_input(tmp_path):
    """Only the store's state becomes InvalidInput: a row SQLite cannot bind is an sqlite3 error."""
    with ResultStore(tmp_path / "r.db") as s:
        broken = recs(0, 2)
        broken[1].instance = {"not": "a string"}
        with pytest.raises(sqlite3.Error) as exc:
            s.write_chunk("camp", "c0", broken)
        assert not isinstance(exc.value, InvalidInput)


# -- 7: a refusal writes nothing ---------------------------------------------------------------------

@pytest.mark.parametrize("bad", [["--sizes", "100000"], ["--instances", str(10 ** 23)], ["--instances", "1e23"]])
def test_a_refused_stress_plan_creates_no_store_and_no_folders(bad, tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    rc = main(["stress", "dobrushin.factor", *bad, "--db", str(work / "s.db"), "--out", str(work / "out")])
    assert_one_line(rc, capsys.readouterr().err, bad[0])
    assert sorted(work.iterdir()) == []                    # no empty store, no tables/ or figures/


def test_a_refused_stress_plan_leaves_an_existing_out_folder_as_it_was(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    rc = main(["stress", "dobrushin.factor", "--sizes", "100000", "--db", str(tmp_path / "s.db"), "--out", str(out)])
    assert rc == 2, capsys.readouterr().err
    assert sorted(tmp_path.iterdir()) == [out] and sorted(out.iterdir()) == []


def test_a_db_in_a_missing_folder_is_made_only_when_the_command_runs(tmp_path, capsys):
    """A refused command creates no folder for its store; one that runs creates it then (the issue:
    ``--db /missing/dir/x.db`` made the folder before the command's own refusals)."""
    db = tmp_path / "missing" / "dir" / "x.db"
    rc = main(["stress", "dobrushin.factor", "--instances", "10", "--sizes", "100000", "--db", str(db),
               "--out", str(tmp_path / "out")])
    assert_one_line(rc, capsys.readouterr().err, "--sizes")
    assert sorted(tmp_path.iterdir()) == []
    from verification.store import check_writable

    check_writable(db)                                  # a check creates nothing
    assert sorted(tmp_path.iterdir()) == []
    rc = main(["stress", "dobrushin.factor", "--instances", "10", "--sizes", "3", "--db", str(db),
               "--out", str(tmp_path / "out")])
    assert rc == 0 and db.is_file()


def test_a_db_or_out_that_is_empty_or_under_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    for argv, name in [(["--db", ""], "--db ''"), (["--out", ""], "--out ''"),
                       (["--db", str(tmp_path / "f" / "x.db")], "is not a folder")]:
        rc = main(["stress", "dobrushin.factor", "--instances", "10", "--sizes", "3",
                   *(["--db", str(tmp_path / "s.db")] if argv[0] != "--db" else []),
                   *(["--out", str(tmp_path / "out")] if argv[0] != "--out" else []), *argv])
        assert_one_line(rc, capsys.readouterr().err, name)
    assert sorted(tmp_path.iterdir()) == [tmp_path / "f"]


def test_out_checks_create_nothing_and_still_refuse_a_file(tmp_path):
    from verification.options import check_out_dir

    check_out_dir(tmp_path / "a" / "b")
    assert sorted(tmp_path.iterdir()) == []
    (tmp_path / "f").write_text("x")
    for out in (tmp_path / "f", tmp_path / "f" / "deeper"):
        with pytest.raises(InvalidInput, match="exists and is not a folder"):
            check_out_dir(out)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "tables").write_text("x")
    with pytest.raises(InvalidInput, match="tables"):
        check_out_dir(tmp_path / "o")


def test_checking_a_new_store_creates_no_file(tmp_path):
    from verification.store import check_writable

    check_writable(tmp_path / "new.db")
    assert sorted(tmp_path.iterdir()) == []
