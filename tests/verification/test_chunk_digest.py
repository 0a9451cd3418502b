"""Completeness by content, not by chunk marks (issue 48, item 1).

A chunk mark carries what its chunk wrote (records, summaries, a digest of their stored content),
written in the same transaction; every reader checks it (:meth:`ResultStore.chunk_check`,
``done_chunks``). A record or summary deleted, added, moved or edited by hand (mark kept) makes its
chunk incomplete: resume recomputes it (giving the same content as before) and the paper refuses it,
naming it. Marks of a schema version 1 store carry no digest: unverifiable, so incomplete.
"""
from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from theory.verdicts import Verdict
from verification import campaign
from verification.campaign import Chunk, ChunkResult
from verification.chunk_marks import UNVERIFIABLE
from verification.report.part import IncompleteCampaigns, Need, check_needs
from verification.store import APPLICATION_ID, Record, ResultStore, check_writable
from verification.store_file import SCHEMA_V1, SCHEMA_VERSION

KEYS = ("c0", "c1", "c2")


def work(k: int) -> ChunkResult:
    """A deterministic compact chunk: three records and two summaries."""
    recs = [Record("dobrushin.factor", f"{k}/{i}", Verdict.TIGHT if i % 2 else Verdict.HOLDS, slack=0.125 * i,
                   value=0.5, bound=0.5 + 0.125 * i, provenance={"seed": k}) for i in range(3)]
    return ChunkResult(recs, {"dobrushin.factor": {"counts": {"holds": 3120 + k, "tight": 880}, "n": 4000},
                              "dobrushin.factor.causal": {"counts": {"tight": 10}, "n": 10}})


def plan() -> list[Chunk]:
    return [Chunk(key, work, (k,)) for k, key in enumerate(KEYS)]


def content(db: Path) -> tuple:
    """What the store holds, without row ids and timestamps: records, summaries, mark counts."""
    with sqlite3.connect(db) as con:
        return (con.execute("SELECT campaign, chunk, theorem, instance, verdict, slack, value, bound, backend, "
                            "dtype, provenance, extra FROM records ORDER BY 1, 2, 3, 4").fetchall(),
                con.execute("SELECT campaign, chunk, theorem, body FROM summaries ORDER BY 1, 2, 3").fetchall(),
                con.execute("SELECT campaign, chunk, n, summaries FROM chunks ORDER BY 1, 2").fetchall())


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def one(con, sql):
    con.execute(sql)
    assert con.total_changes >= 1, sql


# each edit by hand (the mark kept) -> the chunks it makes incomplete and what is said of c1
TAMPER = {
    "record deleted": ("DELETE FROM records WHERE chunk = 'c1' AND instance = '1/2'", {"c1"},
                       "has 2 records, its mark says 3"),
    "summary deleted": ("DELETE FROM summaries WHERE chunk = 'c1' AND theorem = 'dobrushin.factor'", {"c1"},
                        "has 1 summary, its mark says 2"),
    "summary count edited": ("UPDATE summaries SET body = replace(body, '\"tight\":880', '\"tight\":9880') "
                             "WHERE chunk = 'c1' AND theorem = 'dobrushin.factor'", {"c1"}, "was edited after it was stored"),
    "slack edited": ("UPDATE records SET slack = 0.0 WHERE chunk = 'c1' AND instance = '1/2'", {"c1"},
                     "was edited after it was stored"),
    "verdict edited": ("UPDATE records SET verdict = 'tight' WHERE chunk = 'c1' AND instance = '1/0'", {"c1"},
                       "was edited after it was stored"),
    "record added": ("INSERT INTO records (campaign, chunk, theorem, instance, verdict, slack, value, bound, backend, "
                     "dtype, provenance, extra, versions, created) SELECT campaign, chunk, theorem, 'forged', verdict, "
                     "slack, value, bound, backend, dtype, provenance, extra, versions, created FROM records "
                     "WHERE chunk = 'c1' AND instance = '1/0'", {"c1"}, "has 4 records, its mark says 3"),
    "record moved": ("UPDATE records SET chunk = 'c2' WHERE chunk = 'c1' AND instance = '1/0'", {"c1", "c2"},
                     "has 2 records, its mark says 3"),
    "mark count edited": ("UPDATE chunks SET n = 4 WHERE chunk = 'c1'", {"c1"}, "has 3 records, its mark says 4"),
    "mark deleted": ("DELETE FROM chunks WHERE chunk = 'c1'", {"c1"},
                     "holds 3 records and 2 summaries but no chunk mark"),
}


def test_an_untouched_store_verifies_every_chunk(tmp_path):
    """The planted case: nothing edited, nothing to recompute (so the tests below can fail)."""
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        first = campaign.run(s, "camp", plan(), progress=False)
        assert first.computed == 3 and s.done_chunks("camp") == set(KEYS)
        assert s.chunk_check("camp").problems == {}
    with ResultStore(db, readonly=True) as s:
        assert s.done_chunks("camp") == set(KEYS)
        check_needs(s, [Need("toy", "camp", frozenset(KEYS), "attnbounds toy")])
    with ResultStore(db) as s:
        again = campaign.run(s, "camp", plan(), progress=False)
    assert (again.computed, again.skipped, again.recomputed) == (0, 3, 0)


@pytest.mark.parametrize("edit", list(TAMPER))
def test_an_edit_by_hand_is_found_refused_and_recomputed_to_the_same_content(edit, tmp_path):
    sql, bad, said = TAMPER[edit]
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        campaign.run(s, "camp", plan(), progress=False)
    before = content(db)
    with ResultStore(db, readonly=True) as reader:
        assert reader.done_chunks("camp") == set(KEYS)           # checked once and kept ...
        with sqlite3.connect(db) as con:
            one(con, sql)
        assert reader.done_chunks("camp") == set(KEYS) - bad      # ... until another connection writes
        problems = reader.chunk_check("camp").problems
        assert set(problems) == bad and said in problems["c1"], problems
        need = Need("toy", "camp", frozenset(KEYS), "attnbounds toy")
        with pytest.raises(IncompleteCampaigns) as err:
            check_needs(reader, [need])
    msg = str(err.value)
    assert "\n" not in msg and "'camp'" in msg and "(run `attnbounds toy`)" in msg
    assert f"'c1' {said}" in msg or f"missing, e.g. 'c1'" in msg, msg
    with ResultStore(db) as s:                                    # resume: only those chunks, again
        res = campaign.run(s, "camp", plan(), progress=False)
        assert (res.computed, res.skipped) == (len(bad), 3 - len(bad))
        assert res.recomputed == (0 if edit == "mark deleted" else len(bad))   # no mark: simply missing
        assert s.done_chunks("camp") == set(KEYS) and s.chunk_check("camp").problems == {}
    assert content(db) == before                                  # the same content as before the edit


def test_a_resume_says_which_chunk_it_computes_again(tmp_path):
    from io import StringIO

    from rich.console import Console

    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        campaign.run(s, "camp", plan(), progress=False)
    with sqlite3.connect(db) as con:
        one(con, TAMPER["summary deleted"][0])
    out = StringIO()
    with ResultStore(db) as s:
        res = campaign.run(s, "camp", plan(), console=Console(file=out, width=400), progress=False)
    assert res.recomputed == 1 and res.computed == 1
    assert "camp: 1 stored chunk does not match its mark, computed again (e.g. 'c1' has 1 summary, " \
           "its mark says 2)" in out.getvalue(), out.getvalue()


def version1_store(db: Path) -> Path:
    """A store as attnbounds wrote it at schema version 1: stamped, marks without a digest."""
    con = sqlite3.connect(db)
    con.executescript(SCHEMA_V1 + f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1;")
    for k, key in enumerate(KEYS):
        for r in work(k):
            con.execute("INSERT INTO records (campaign, chunk, theorem, instance, verdict, slack, value, bound, "
                        "backend, dtype, provenance, extra, versions, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        ("camp", key, r.theorem, r.instance, r.verdict.value, r.slack, r.value, r.bound, r.backend,
                         r.dtype, '{"seed": %d}' % k, "{}", "{}", 0.0))
        con.execute("INSERT INTO chunks VALUES ('camp', ?, 3, 0)", (key,))
    con.commit()
    con.close()
    return db


def test_a_version_1_store_is_read_as_unverifiable_and_upgraded_when_written(tmp_path):
    db = version1_store(tmp_path / "v1.db")
    check_writable(db)                                           # a probe upgrades nothing
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1
    before = sha(db)
    with ResultStore(db, readonly=True) as s:
        assert s.done_chunks("camp") == set() and s.count("camp") == 9
        assert s.chunk_check("camp").problems == {k: UNVERIFIABLE for k in KEYS}
        with pytest.raises(IncompleteCampaigns, match=r"'camp' 0 of 3 chunks stored \(3 not matching their marks, "
                                                      r"e.g. 'c0' was written before chunk digests"):
            check_needs(s, [Need("toy", "camp", frozenset(KEYS), "attnbounds toy")])
    assert sha(db) == before                                     # read-only: not a byte changed
    with ResultStore(db) as s:                                   # the first open for writing upgrades it
        assert s.done_chunks("camp") == set() and s.count("camp") == 9
        res = campaign.run(s, "camp", plan(), progress=False)
        assert (res.computed, res.recomputed) == (3, 3) and s.done_chunks("camp") == set(KEYS)
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        assert [c[1] for c in con.execute("PRAGMA table_info(chunks)")][-2:] == ["summaries", "digest"]
        assert con.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'records_chunk'").fetchone()[0] == 1
        assert con.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 9     # rewritten, not added to
    with ResultStore(db, readonly=True) as s:
        check_needs(s, [Need("toy", "camp", frozenset(KEYS), "attnbounds toy")])


def test_an_upgraded_store_opens_as_a_current_one(tmp_path):
    """Upgrading gives exactly the tables a new store has (the inspection accepts it as current)."""
    from verification.store_file import inspect_store

    db = version1_store(tmp_path / "v1.db")
    assert inspect_store(db) == "older"
    ResultStore(db).close()
    assert inspect_store(db) == "current"


def test_the_refusal_is_one_short_line_naming_the_first_three(tmp_path):
    """Many incomplete campaigns: the first three with what is wrong, then how many more, of which
    families and how many more commands (the issue: one line of 6,400 characters)."""
    with ResultStore(tmp_path / "r.db") as s:
        campaign.run(s, "camp", plan(), progress=False)
        with sqlite3.connect(tmp_path / "r.db") as con:
            one(con, TAMPER["record deleted"][0])
        needs = [Need("toy", "camp", frozenset(KEYS), "attnbounds toy")]
        needs += [Need("toy", f"absent{k}", frozenset({"a"}), "attnbounds toy") for k in range(40)]
        needs += [Need("other", f"gone{k}", frozenset({"a"}), f"attnbounds other --k {k}") for k in range(50)]
        with pytest.raises(IncompleteCampaigns) as err:
            check_needs(s, needs)
    msg = str(err.value)
    assert len(err.value.gaps) == 91 and "\n" not in msg and len(msg) < 400, (len(msg), msg)
    head = ("the paper reads only complete campaigns of the main job (it never recomputes); 91 are not: "
            "toy: 'camp' 2 of 3 chunks stored (1 not matching its mark, e.g. 'c1' has 2 records, its mark "
            "says 3), 'absent0' absent, 'absent1' absent (run `attnbounds toy`); and 88 more (of toy, other; ")
    assert msg == head + ("run `attnbounds other --k 0`, `attnbounds other --k 1`, `attnbounds other --k 2` and 47 "
                          "more commands)")
    with ResultStore(tmp_path / "r.db", readonly=True) as s, pytest.raises(IncompleteCampaigns) as err:
        check_needs(s, needs[::-1], fills_all="attnbounds all")         # the one that is stored comes first
    assert str(err.value) == head[:head.index("), 'absent0'") + 1] + (
        " (run `attnbounds toy`); other: 'gone49' absent (run `attnbounds other --k 49`); other: 'gone48' absent "
        "(run `attnbounds other --k 48`); and 88 more (of other, toy; `attnbounds all` fills them all)")


# -- end to end: `attnbounds stress` and the paper's completeness check (`--from`) -------------------

USER = "stress dobrushin.factor --families dirichlet --sizes 5 --instances 20000"


def stress(db: Path, out: Path, capsys) -> str:
    from verification.cli import main

    assert main([*USER.split(), "--db", str(db), "--out", str(out)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("edit", ["summary deleted", "summary count edited", "record deleted"])
def test_stress_and_the_paper_see_a_chunk_edited_by_hand(edit, tmp_path, small_stress_section, capsys):
    """The issue's cases: a compact chunk's summary deleted or its tight count edited, or one of its
    records deleted, the mark kept: the paper refuses naming the campaign and the chunk, `stress`
    computes that chunk again, and the store then holds what it held before the edit."""
    from verification.campaign import Chunk as C
    from verification.paper.build import check_complete
    from verification.paper.from_plans import plans_from
    from verification.stress.checks import chunks as plan_chunks
    from verification.stress.checks.search import search_campaign, search_chunk

    db, out = tmp_path / "r.db", tmp_path / "out"
    stress(db, out, capsys)
    plans = small_stress_section()
    with ResultStore(db) as s:                                   # the main job's search and rollout, small
        campaign.run(s, search_campaign("dobrushin.factor", 0),
                     [C("n3/b40", search_chunk, ("dobrushin.factor", 3, 40, 0))], progress=False)
        campaign.run(s, plans["dobrushin.rollout"].campaign, plan_chunks(plans["dobrushin.rollout"]), progress=False)
    (sweep,) = plans_from(USER)["stress"].sweeps
    with ResultStore(db, readonly=True) as s:
        check_complete(s, families=["verification.stress.paper"], plans=plans_from(USER))
    before = content(db)
    key = sweep.chunk_keys()[1]
    with sqlite3.connect(db) as con:
        (body,) = con.execute("SELECT body FROM summaries WHERE chunk = ?", (key,)).fetchone()
        tight = f'"tight":{__import__("json").loads(body)["counts"]["tight"]}'
        sql = {"summary deleted": "DELETE FROM summaries WHERE chunk = ?",
               "summary count edited": f"UPDATE summaries SET body = replace(body, '{tight}', '\"tight\":9120') "
                                       "WHERE chunk = ?",
               "record deleted": "DELETE FROM records WHERE id = (SELECT MIN(id) FROM records WHERE chunk = ?)"}[edit]
        assert con.execute(sql, (key,)).rowcount == 1
    with ResultStore(db, readonly=True) as s, pytest.raises(IncompleteCampaigns) as err:
        check_complete(s, families=["verification.stress.paper"], plans=plans_from(USER))
    msg = str(err.value)
    assert f"stress: {sweep.campaign!r} {len(sweep.chunk_keys()) - 1} of {len(sweep.chunk_keys())} chunks stored " \
           f"(1 not matching its mark, e.g. {key!r} " in msg and "\n" not in msg, msg
    said = stress(db, out, capsys)                               # resumed: that chunk, and only it
    assert f"{len(sweep.chunk_keys()):,} chunks" in said and ", 1 to compute," in said, said
    assert "1 chunks computed" in said
    assert content(db) == before
    with ResultStore(db, readonly=True) as s:
        check_complete(s, families=["verification.stress.paper"], plans=plans_from(USER))
