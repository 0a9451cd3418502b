"""verification.results and `attnbounds store`: a store filled by a small stress run is listed with
its chunks complete, its frame counts every instance, a summary deleted by hand makes its chunk
incomplete, and no listing changes a byte of the store."""
from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from theory.errors import InvalidInput
from verification.cli import main
from verification.results import LISTING, VERDICTS, campaign_frame, campaigns
from verification.store import ResultStore
from verification.stress.checks.plan import StressPlan

PLAN = StressPlan("dobrushin.factor", ("dirichlet",), (3,), instances=10)


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """A store holding one stress campaign, filled through the CLI (as a user would)."""
    where = tmp_path_factory.mktemp("results")
    db, out = where / "r.db", where / "out"
    assert main(["stress", "dobrushin.factor", "--families", "dirichlet", "--sizes", "3", "--instances", "10",
                 "--db", str(db), "--out", str(out)]) == 0
    return db


@pytest.fixture
def db(filled, tmp_path) -> Path:
    """A copy of the filled store of this test's own (a test may damage it)."""
    for f in filled.parent.iterdir():
        if f.name.startswith(filled.name):
            shutil.copy2(f, tmp_path / f.name)
    return tmp_path / filled.name


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stored(db: Path, sql: str) -> list:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute(sql).fetchall()


def test_the_listing_has_the_stress_campaign_complete(db):
    frame = campaigns(db)
    assert list(frame.columns) == list(LISTING)
    assert frame["campaign"].tolist() == [PLAN.campaign]
    row = frame.iloc[0]
    keys = PLAN.chunk_keys()
    assert (row["kind"], row["theorems"]) == ("stress", "dobrushin.factor")
    assert (row["chunks"], row["complete"], row["incomplete"]) == (len(keys), len(keys), 0)
    assert row["records"] == stored(db, "SELECT COUNT(*) FROM records")[0][0] > 0
    assert row["summaries"] == len(keys)
    assert frame.attrs["problems"] == {}


def test_the_frame_counts_every_instance_of_the_plan(db):
    frame = campaign_frame(db, PLAN.campaign)
    assert frame["chunk"].tolist() == PLAN.chunk_keys()
    assert set(frame["family"]) == {"dirichlet"} and set(frame["n"]) == {3}
    verdicts = frame[list(VERDICTS)].sum(axis=1)
    assert (verdicts == frame["instances"]).all()
    assert int(frame["instances"].sum()) == PLAN.total() > 0
    bodies = [json.loads(b) for (b,) in stored(db, "SELECT body FROM summaries")]
    assert int(frame["tight"].sum()) == sum(b["counts"].get("tight", 0) for b in bodies)
    assert frame.attrs["incomplete"] == {}


def test_the_records_frame_has_one_row_per_record_with_its_provenance(db):
    frame = campaign_frame(db, PLAN.campaign, records=True)
    want = sorted(i for (i,) in stored(db, "SELECT instance FROM records"))
    assert sorted(frame["instance"]) == want
    assert {"family", "seed", "provenance.chunk", "slack"} <= set(frame.columns)
    assert set(frame["verdict"]) <= set(VERDICTS) and (frame["family"] == "dirichlet").all()
    one = campaign_frame(db, PLAN.campaign, theorem="dobrushin.factor", records=True)
    assert len(one) == len(frame)


def test_a_summary_deleted_by_hand_makes_its_chunk_incomplete(db):
    key = PLAN.chunk_keys()[0]
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM summaries WHERE chunk = ?", (key,))
    con.close()
    row = campaigns(db).iloc[0]
    assert (row["complete"], row["incomplete"], row["summaries"]) == (len(PLAN.chunk_keys()) - 1, 1, 0)
    assert "summar" in campaigns(db).attrs["problems"][PLAN.campaign][key]
    frame = campaign_frame(db, PLAN.campaign)       # no summary left: the records, none of a verified chunk
    assert frame.empty and key in frame.attrs["incomplete"]


def test_no_listing_changes_a_byte_of_the_store(db, capsys):
    before = sha(db)
    campaigns(db)
    campaign_frame(db, PLAN.campaign)
    campaign_frame(db, PLAN.campaign, records=True)
    with ResultStore(db, readonly=True) as store:    # an open store is used as it is
        assert campaigns(store)["campaign"].tolist() == [PLAN.campaign]
    for argv in ([], ["--json"], ["--campaign", PLAN.campaign], ["--campaign", PLAN.campaign, "--records"]):
        assert main(["store", "--db", str(db), *argv]) == 0
    capsys.readouterr()
    assert sha(db) == before


def test_json_is_one_object_on_the_last_line(db, capsys):
    assert main(["store", "--db", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["db"] == str(db)
    [c] = out["campaigns"]
    assert list(c) == list(LISTING)
    frame = campaigns(db).iloc[0]
    assert c["theorems"] == ["dobrushin.factor"]
    assert {k: c[k] for k in LISTING[3:]} == {k: int(frame[k]) for k in LISTING[3:]}
    assert main(["store", "--db", str(db), "--campaign", PLAN.campaign, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["rows"]
    assert [r["chunk"] for r in rows] == PLAN.chunk_keys() and rows[0]["layers"] is None


def test_the_human_listing_names_an_incomplete_chunk(db, capsys):
    key = PLAN.chunk_keys()[0]
    with sqlite3.connect(db) as con:
        con.execute("UPDATE records SET slack = slack + 1 WHERE chunk = ?", (key,))
    con.close()
    assert main(["store", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert PLAN.campaign in out and f"chunk {key!r} was edited after it was stored" in out


def test_csv_writes_the_table(db, tmp_path):
    path = tmp_path / "frame.csv"
    assert main(["store", "--db", str(db), "--campaign", PLAN.campaign, "--csv", str(path)]) == 0
    import pandas as pd

    back = pd.read_csv(path)
    assert back["chunk"].tolist() == PLAN.chunk_keys()
    assert back["instances"].sum() == PLAN.total()


@pytest.mark.parametrize("argv, says", [
    (["--campaign", "stress.nope"], "campaign 'stress.nope' is not in"),
    (["--campaign", PLAN.campaign, "--theorem", "dobrushin.product"], "holds nothing of theorem 'dobrushin.product'"),
    (["--theorem", "dobrushin.factor"], "--theorem goes with --campaign"),
    (["--csv", "/no/such/folder/x.csv"], "no folder"),
])
def test_a_refusal_is_one_line_and_exit_2(db, capsys, argv, says):
    before = sha(db)
    assert main(["store", "--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err
    if argv[0] == "--campaign" and argv[1] == "stress.nope":
        assert PLAN.campaign in err            # the known campaigns are listed
    assert sha(db) == before


def test_the_api_refuses_an_unknown_campaign_and_a_missing_store(db, tmp_path):
    with pytest.raises(InvalidInput, match=r"campaign 'x' is not in .* 1 campaign: stress\.dobrushin"):
        campaign_frame(db, "x")
    with pytest.raises(InvalidInput, match="no results store there"):
        campaigns(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()
    with pytest.raises(InvalidInput, match="db: a results store's path"):
        campaigns(42)


def test_a_missing_store_is_one_line_and_creates_nothing(tmp_path, capsys):
    assert main(["store", "--db", str(tmp_path / "none.db")]) == 2
    assert "no results store there" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_the_command_imports_no_torch(db):
    code = ("import sys; from verification.cli import main; rc = main(['store', '--db', sys.argv[1], '--json']); "
            "print(rc, 'torch' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout.strip().splitlines()[-1]
    assert out == "0 False True"


def test_a_records_frame_keeps_a_counterexample_and_what_its_record_keeps(tmp_path, capsys):
    """The exact matrices of a counterexample (and the record's extra: its sides as written) reach the
    frame and `store --records --json`; a record that holds none has None there."""
    from verification.store import Record

    db = tmp_path / "c.db"
    cex = {"A": [["0", "1"], ["1/2", "1/2"]]}
    with ResultStore(str(db)) as store:
        store.write_chunk("mine.c-v1", "n2/c0", [
            Record("mine.c", "n2/c0/i0", "violated", slack=-0.25, provenance={"n": 2},
                   extra={"counterexample": cex, "lhs": "1/2", "relation": ">=", "rhs": "3/4", "kept": "violated"}),
            Record("mine.c", "n2/c0/i1", "holds", slack=0.5, provenance={"n": 2}, extra={"kept": "smallest-slack"})])
    frame = campaign_frame(db, "mine.c-v1", records=True)
    assert frame["counterexample"].tolist() == [cex, None]
    assert frame[["extra.lhs", "extra.relation", "extra.rhs"]].iloc[0].tolist() == ["1/2", ">=", "3/4"]
    assert main(["store", "--db", str(db), "--campaign", "mine.c-v1", "--records", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["rows"]
    assert rows[0]["counterexample"] == cex and rows[0]["extra.relation"] == ">=" and rows[1]["counterexample"] is None
