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


def work(k: int, seed: int = 0) -> ChunkResult:
    """A deterministic compact chunk: three records and two summaries (``seed``: another campaign's)."""
    recs = [Record("dobrushin.factor", f"{k}/{i}", Verdict.TIGHT if i % 2 else Verdict.HOLDS, slack=0.125 * i,
                   value=0.5, bound=0.5 + 0.125 * i, provenance={"seed": k + 100 * seed}) for i in range(3)]
    return ChunkResult(recs, {"dobrushin.factor": {"counts": {"holds": 3120 + k + 7 * seed, "tight": 880}, "n": 4000},
                              "dobrushin.factor.causal": {"counts": {"tight": 10}, "n": 10}})


def plan(keys: tuple = KEYS, seed: int = 0) -> list[Chunk]:
    return [Chunk(key, work, (k, seed)) for k, key in enumerate(keys)]


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
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
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


# -- a chunk's digest binds its campaign and its key (issue 59, items 1, 2 and 5) -------------------

TABLES = ("records", "summaries", "chunks")
COLUMNS = {"records": "chunk, theorem, instance, verdict, slack, value, bound, backend, dtype, provenance, extra, "
                      "versions, created",
           "summaries": "chunk, theorem, body, versions, created",
           "chunks": "chunk, n, created, summaries, digest"}


def refile(con, old: str, new: str, campaign: str = "%") -> None:
    """Everything stored under chunk key ``old`` (records, summaries, the mark) filed under ``new``."""
    for table in TABLES:
        con.execute(f"UPDATE {table} SET chunk = ? WHERE chunk = ? AND campaign LIKE ?", (new, old, campaign))


def swap(con, a: str, b: str, campaign: str = "%") -> None:
    """The issue's hostile store: two chunks swapped whole, each with its mark."""
    refile(con, a, "swapping", campaign)
    refile(con, b, a, campaign)
    refile(con, "swapping", b, campaign)


def copy_campaign(con, source: str, target: str) -> None:
    """``source``'s rows and marks copied under the name ``target`` (the issue: seed 0's as seed 1's)."""
    for table in TABLES:
        cols = COLUMNS[table]
        assert con.execute(f"INSERT INTO {table} (campaign, {cols}) SELECT ?, {cols} FROM {table} WHERE campaign = ?",
                           (target, source)).rowcount > 0


def of(rows: tuple, name: str) -> tuple:
    """``content`` restricted to one campaign."""
    return tuple([r for r in part if r[0] == name] for part in rows)


def test_a_chunk_moved_to_another_key_with_its_mark_is_refused_and_recomputed(tmp_path):
    """Two chunks swapped whole (records, summaries and marks): each mark's digest binds the key it
    was written under, so neither verifies; the paper refuses them and a resume recomputes exactly
    them, giving the untouched store's content."""
    from verification.chunk_marks import EDITED

    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        campaign.run(s, "camp", plan(), progress=False)
    before = content(db)
    with sqlite3.connect(db) as con:
        swap(con, "c0", "c2")
    assert content(db) != before
    with ResultStore(db, readonly=True) as s:
        assert s.done_chunks("camp") == {"c1"}
        assert s.chunk_check("camp").problems == {"c0": EDITED, "c2": EDITED}
        with pytest.raises(IncompleteCampaigns, match=r"'camp' 1 of 3 chunks stored \(2 not matching their marks, "
                                                      r"e.g. 'c0' was edited after it was stored or filed under another"):
            check_needs(s, [Need("toy", "camp", frozenset(KEYS), "attnbounds toy")])
    with ResultStore(db) as s:
        res = campaign.run(s, "camp", plan(), progress=False)
    assert (res.computed, res.recomputed, res.skipped) == (2, 2, 1)
    assert content(db) == before


def test_a_campaign_copied_under_another_name_is_refused_and_recomputed(tmp_path):
    """Seed 0's rows and marks copied as seed 1's campaign: the digest binds the campaign's name, so
    no chunk of seed 1 verifies; the resume of seed 1 computes every chunk, giving what a store that
    ran seed 1 holds."""
    untouched, db = tmp_path / "untouched.db", tmp_path / "r.db"
    with ResultStore(untouched) as s:
        for seed in (0, 1):
            campaign.run(s, f"camp-seed{seed}", plan(seed=seed), progress=False)
    with ResultStore(db) as s:
        campaign.run(s, "camp-seed0", plan(seed=0), progress=False)
    with sqlite3.connect(db) as con:
        copy_campaign(con, "camp-seed0", "camp-seed1")
    with ResultStore(db, readonly=True) as s:
        assert s.done_chunks("camp-seed1") == set() and s.done_chunks("camp-seed0") == set(KEYS)
        with pytest.raises(IncompleteCampaigns, match=r"'camp-seed1' 0 of 3 chunks stored \(3 not matching"):
            check_needs(s, [Need("toy", "camp-seed1", frozenset(KEYS), "attnbounds toy --seed 1")])
    with ResultStore(db) as s:
        res = campaign.run(s, "camp-seed1", plan(seed=1), progress=False)
    assert (res.computed, res.recomputed) == (3, 3)
    assert content(db) == content(untouched)


UNPLANNED = {
    # content under a key outside the plan, no mark: copied from c0 with other instance ids
    "no mark": ["INSERT INTO records (campaign, chunk, theorem, instance, verdict, slack, value, bound, backend, dtype, "
                "provenance, extra, versions, created) SELECT campaign, 'c9', theorem, instance || '-x', verdict, "
                "slack, value, bound, backend, dtype, provenance, extra, versions, created FROM records "
                "WHERE chunk = 'c0'",
                "INSERT INTO summaries SELECT campaign, 'c9', theorem, body, versions, created FROM summaries "
                "WHERE chunk = 'c0'"],
    # a whole chunk with its mark moved to a key outside the plan
    "a mark that does not verify": ["UPDATE records SET chunk = 'c9' WHERE chunk = 'c2'",
                                    "UPDATE summaries SET chunk = 'c9' WHERE chunk = 'c2'",
                                    "UPDATE chunks SET chunk = 'c9' WHERE chunk = 'c2'"],
}


@pytest.mark.parametrize("kind", list(UNPLANNED))
def test_content_under_a_key_outside_the_plan_is_refused_and_removed_by_the_command_named(kind, tmp_path):
    """Content under a key the plan does not define, with no mark or one it does not match, is
    nobody's: the paper refuses the campaign naming that key and the command, and that command (a
    resume) removes it, so the paper then reads exactly the untouched store."""
    from io import StringIO

    from rich.console import Console

    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        campaign.run(s, "camp", plan(), progress=False)
    before = content(db)
    with sqlite3.connect(db) as con:
        for sql in UNPLANNED[kind]:
            one(con, sql)
    need = Need("toy", "camp", frozenset(KEYS), "attnbounds toy")
    with ResultStore(db, readonly=True) as s, pytest.raises(IncompleteCampaigns) as err:
        check_needs(s, [need])
    assert "'c9' " in str(err.value) and "(run `attnbounds toy`)" in str(err.value), str(err.value)
    out = StringIO()
    with ResultStore(db) as s:
        res = campaign.run(s, "camp", plan(), console=Console(file=out, width=400), progress=False)
        assert s.chunk_check("camp").problems == {}
    assert res.removed == 1 and res.computed == (1 if kind == "a mark that does not verify" else 0)
    assert "camp: removed what 1 chunk key outside the plan held that no mark vouches for (e.g. 'c9'" in out.getvalue()
    assert content(db) == before
    with ResultStore(db, readonly=True) as s:
        check_needs(s, [need])


def test_a_resume_keeps_verified_chunks_outside_its_plan(tmp_path):
    """A smaller plan of the same campaign (fewer instances) never removes what a mark vouches for."""
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        campaign.run(s, "camp", plan(KEYS + ("c3",)), progress=False)
    before = content(db)
    with ResultStore(db) as s:
        res = campaign.run(s, "camp", plan(), progress=False)
        assert (res.computed, res.removed) == (0, 0) and s.done_chunks("camp") == set(KEYS) | {"c3"}
    assert content(db) == before


def test_a_version_2_store_is_unverifiable_and_its_digests_cleared_when_written(tmp_path):
    """Version 2's digests bound the content alone: read as unverifiable (the bytes unchanged), and
    the first open for writing clears them; the resume recomputes every chunk to the same content."""
    db = tmp_path / "v2.db"
    with ResultStore(db) as s:
        campaign.run(s, "camp", plan(), progress=False)
    before = content(db)
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA user_version = 2")
    stamped = sha(db)
    with ResultStore(db, readonly=True) as s:
        assert s.done_chunks("camp") == set() and s.chunk_check("camp").problems == {k: UNVERIFIABLE for k in KEYS}
    assert sha(db) == stamped
    with ResultStore(db) as s:
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert con.execute("SELECT COUNT(*) FROM chunks WHERE digest IS NOT NULL").fetchone()[0] == 0
        res = campaign.run(s, "camp", plan(), progress=False)
        assert (res.computed, res.recomputed) == (3, 3) and s.done_chunks("camp") == set(KEYS)
    assert content(db) == before


# -- the same, end to end: `attnbounds stress`, `store`, `paper --from` ------------------------------

TWO_SIZES = "stress dobrushin.factor --families dirichlet --sizes 3,4 --instances 4000"


def cli(argv: list, capsys) -> tuple[int, str, str]:
    from verification.cli import main

    rc = main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def listed(db: Path, capsys) -> dict:
    import json

    rc, out, _ = cli(["store", "--db", str(db), "--json"], capsys)
    assert rc == 0
    return {c["campaign"]: c for c in json.loads(out.splitlines()[-1])["campaigns"]}


def test_the_issues_moved_chunk_end_to_end(tmp_path, capsys):
    """``dirichlet/n3/c0`` and ``dirichlet/n4/c0`` swapped whole: `store` says incomplete, `paper
    --from` refuses (bytes unchanged, nothing written), `stress` recomputes both, and the store then
    holds what it held before."""
    db = tmp_path / "r.db"
    assert cli([*TWO_SIZES.split(), "--db", str(db), "--out", str(tmp_path / "run")], capsys)[0] == 0
    before = content(db)
    with sqlite3.connect(db) as con:
        swap(con, "dirichlet/n3/c0", "dirichlet/n4/c0")
    (name, row), = listed(db, capsys).items()
    assert (row["complete"], row["incomplete"]) == (0, 2)
    moved = sha(db)
    rc, _, err = cli(["paper", "--db", str(db), "--out", str(tmp_path / "paper"), "--from", TWO_SIZES], capsys)
    assert rc == 2 and "'dirichlet/n3/c0' was edited after it was stored or filed under another key" in err, err
    assert sha(db) == moved and not (tmp_path / "paper").exists()
    rc, out, _ = cli([*TWO_SIZES.split(), "--db", str(db), "--out", str(tmp_path / "run")], capsys)
    assert rc == 0 and "2 to compute" in out and "2 stored chunks do not match their marks" in out, out
    assert content(db) == before and listed(db, capsys)[name]["incomplete"] == 0


def test_the_issues_copied_campaign_end_to_end(tmp_path, capsys):
    """Seed 0's rows and marks copied as seed 1's campaign: `paper --from "... --seed 1"` refuses,
    `stress --seed 1` computes every chunk, giving what a store that ran seed 1 holds."""
    untouched, db = tmp_path / "untouched.db", tmp_path / "r.db"
    for seed, store in ((0, untouched), (1, untouched), (0, db)):
        assert cli([*TWO_SIZES.split(), "--seed", str(seed), "--db", str(store), "--out", str(tmp_path / "run")],
                   capsys)[0] == 0
    names = sorted(listed(untouched, capsys))
    assert len(names) == 2 and "seed0" in names[0] and "seed1" in names[1]
    with sqlite3.connect(db) as con:
        copy_campaign(con, names[0], names[1])
    copied = sha(db)
    rc, _, err = cli(["paper", "--db", str(db), "--out", str(tmp_path / "paper"), "--from",
                      f"{TWO_SIZES} --seed 1"], capsys)
    assert rc == 2 and f"{names[1]!r} 0 of 2 chunks stored" in err, err
    assert sha(db) == copied and not (tmp_path / "paper").exists()
    rc, out, _ = cli([*TWO_SIZES.split(), "--seed", "1", "--db", str(db), "--out", str(tmp_path / "run")], capsys)
    assert rc == 0 and "2 to compute" in out, out
    assert content(db) == content(untouched)


def test_the_issues_unplanned_key_end_to_end(tmp_path, capsys):
    """A summary under a key outside the plan, no mark: `paper --from` refuses naming the command,
    that command removes it, and `paper --from` then writes the document of the untouched store."""
    db = tmp_path / "r.db"
    assert cli([*TWO_SIZES.split(), "--db", str(db), "--out", str(tmp_path / "run")], capsys)[0] == 0
    before = content(db)
    with sqlite3.connect(db) as con:
        one(con, "INSERT INTO summaries SELECT campaign, 'dirichlet/n9/c0', theorem, body, versions, created "
                 "FROM summaries WHERE chunk = 'dirichlet/n3/c0'")
    rc, _, err = cli(["paper", "--db", str(db), "--out", str(tmp_path / "paper"), "--from", TWO_SIZES], capsys)
    assert rc == 2 and "'dirichlet/n9/c0' holds 0 records and 1 summary but no chunk mark" in err, err
    command = err[err.rindex("(run `") + 6:err.rindex("`)")]
    assert command.startswith("attnbounds stress dobrushin.factor")
    rc, out, _ = cli([*command.split()[1:], "--db", str(db), "--out", str(tmp_path / "run")], capsys)
    assert rc == 0 and "removed what 1 chunk key outside the plan held" in out, out
    assert content(db) == before
    rc, out, err = cli(["paper", "--db", str(db), "--out", str(tmp_path / "paper"), "--from", TWO_SIZES], capsys)
    assert rc == 0 and (tmp_path / "paper" / "own.md").exists(), err
