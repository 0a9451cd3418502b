"""The paper quotes complete campaigns only (issue 33, item 1): before any part is built or anything
written, every campaign a family's part reads must hold every chunk of the main job's plan; a gap is
one line naming, once per campaign, the family, ``k of N chunks stored (M missing, e.g. key)`` or
``absent``, and the command that fills it.

Each family's needs are built from the plan code its command runs (``needs(store, plan)`` in
``verification.<family>.paper``); filling a store with every chunk mark but one (empty chunks:
:meth:`ResultStore.write_chunk` with no records) must be refused naming that one. End to end, through
the command line: a small dobrushin campaign with one chunk deleted, and a ``prove --max-n 2`` run
standing in for the main job's prove campaign, exit 2 and write nothing."""
import functools
import sqlite3
from importlib import import_module

import pytest

from verification.cli import main
from verification.measure.attention import VERSION
from verification.commands import FAMILIES
from verification.paper.build import check_complete
from verification.report.part import IncompleteCampaigns, MissingCampaign, Need, check_needs, resolve
from verification.store import ResultStore
from verification.testing.fakes import TOY_MAIN

PAPER = {family: f"{package}.paper" for family, package in FAMILIES.items()}


def fake_name(need: Need) -> str:
    """The campaign a fake run of ``need`` writes (a prefix gets a stand-in fingerprint)."""
    return need.campaign + "fake" if need.prefix else need.campaign


def fill(store, needs, skip=()):
    """Empty chunk marks for every chunk of ``needs`` but the (campaign, key) pairs of ``skip``."""
    for need in needs:
        for key in sorted(need.chunks):
            if (need.campaign, key) not in skip:
                store.write_chunk(fake_name(need), key, [])


def main_plan(family: str):
    """The main job's quick plan of ``family``: what the paper builder hands its ``needs``."""
    from verification.family import role

    return role(family, "checks").Plan.for_verify(0, False)


def refused(store, family, **kw) -> IncompleteCampaigns:
    with pytest.raises(IncompleteCampaigns) as err:
        check_complete(store, families=[PAPER[family]], **kw)
    return err.value


def test_every_family_says_what_its_paper_part_reads(tmp_path):
    """Every family of the one table has ``needs``: its own campaigns, each with chunk keys and the
    command that fills it (the trained campaigns modalities also reads are listed under modalities
    too, with the trained family's command)."""
    with ResultStore(tmp_path / "r.db") as s:
        for family, module in PAPER.items():
            needs = import_module(module).needs(s, main_plan(family))
            assert needs and all(isinstance(n, Need) and n.chunks and n.command.startswith("attnbounds ")
                                 for n in needs), family
            assert family in {n.family for n in needs}, family
            assert len({(n.campaign, n.prefix) for n in needs}) == len(needs), family


@pytest.mark.parametrize("family", list(FAMILIES))
def test_one_missing_chunk_is_refused_naming_family_campaign_count_and_command(tmp_path, family):
    with ResultStore(tmp_path / "r.db") as s:
        needs = import_module(PAPER[family]).needs(s, main_plan(family))
        need = max(needs, key=lambda n: (n.family == family, len(n.chunks)))     # its largest campaign
        dropped = sorted(need.chunks)[len(need.chunks) // 2]
        fill(s, needs, skip={(need.campaign, dropped)})
        err = refused(s, family)
    assert len(err.gaps) == 1, str(err)
    gap = err.gaps[0]
    assert gap["family"] == need.family and gap["campaign"] == fake_name(need) and gap["command"] == need.command
    assert (gap["stored"], gap["total"], gap["missing"]) == (len(need.chunks) - 1, len(need.chunks), [dropped])
    msg = str(err)
    assert (f"{fake_name(need)!r} {len(need.chunks) - 1} of {len(need.chunks)} chunks stored "
            f"(1 missing, e.g. {dropped!r}) (run `{need.command}`)") in msg, msg
    assert isinstance(err, MissingCampaign) and isinstance(err, ValueError)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f != "prove"])
def test_every_chunk_stored_is_complete_and_an_absent_campaign_is_named(tmp_path, family):
    with ResultStore(tmp_path / "r.db") as s:
        needs = import_module(PAPER[family]).needs(s, main_plan(family))
        err = refused(s, family)
        assert [g["stored"] for g in err.gaps] == [None] * len(needs)          # every campaign absent
        shown = needs[:IncompleteCampaigns.SHOWN]                               # one short line: the first
        assert all(f"{n.shown()!r} absent" in str(err) for n in shown)          # three, then how many more
        if len(needs) > len(shown):
            assert f"; and {len(needs) - len(shown)} more (of {family}" in str(err) and len(str(err)) < 700, str(err)
            assert not any(f"{n.shown()!r}" in str(err) for n in needs[len(shown):])
        fill(s, needs)
        check_complete(s, families=[PAPER[family]])                            # complete: no error


def test_prove_refuses_the_sizes_a_smaller_run_did_not_reach(tmp_path):
    """The prove plan is the main job's (up to 3x3): a store holding its 2x2 level only lacks the
    3x3 chunks the plan runs next, and says so."""
    from verification.prove.checks import QUICK

    with ResultStore(tmp_path / "r.db") as s:
        (level2,) = import_module(PAPER["prove"]).needs(s, main_plan("prove"))
        assert all("@2" in k for k in level2.chunks)
        fill(s, [level2])
        err = refused(s, "prove")
    (gap,) = err.gaps
    assert gap["campaign"] == QUICK.campaign and gap["stored"] == len(level2.chunks)
    assert gap["total"] > gap["stored"] and not set(gap["missing"]) & level2.chunks
    assert "d1.bound@3x3" in " ".join(gap["missing"]) and all("3" in k.split("@")[1] for k in gap["missing"])
    assert "attnbounds prove --max-n 3 --timeout 10" in str(err)


def test_only_the_plan_chunks_count(tmp_path):
    """Chunks a user's run added to the same campaign (other families or sizes) neither fill a gap
    nor count: 11 missing are 11."""
    with ResultStore(tmp_path / "r.db") as s:
        need, causal = import_module(PAPER["dobrushin"]).needs(s, main_plan("dobrushin"))   # the random campaign,
        gone = sorted(need.chunks)[:11]                                                 # its causal-share check
        fill(s, [need, causal], skip={(need.campaign, k) for k in gone})
        for k in range(5):
            s.write_chunk(need.campaign, f"softmax-T2/n{k + 3}/c0", [])
        err = refused(s, "dobrushin")
    (gap,) = err.gaps
    assert gap["missing"] == gone and gap["stored"] == len(need.chunks) - 11
    assert f"{len(need.chunks) - 11} of {len(need.chunks)} chunks stored (11 missing, e.g. {gone[0]!r})" in str(err)


def test_a_campaign_two_families_read_is_named_once_with_one_command(tmp_path):
    with ResultStore(tmp_path / "r.db") as s:
        with pytest.raises(IncompleteCampaigns) as err:
            check_complete(s, families=[PAPER["trained"], PAPER["modalities"]])
    msg = str(err.value)
    for model in ("minilm", "smollm2"):
        assert msg.count(f"'trained-{VERSION}:{model}:") == 1, msg
    assert "trained (also read by modalities): " in msg and "attnbounds rollout" not in msg
    assert msg.count("(run `attnbounds verify --only trained --seed 0`)") == 1


def test_a_fingerprinted_campaign_resolves_to_the_one_the_paper_reads(tmp_path):
    """Of two fingerprints under the main job's settings, the one holding the most of the main job's
    inputs is checked, as :func:`verification.measure.text.find_campaign` reads it."""
    need = Need("toy", "toy:w", frozenset({"a", "b", "c"}), "attnbounds toy", prefix=True)
    with ResultStore(tmp_path / "r.db") as s:
        for key in ("a", "b", "c", "other"):
            s.write_chunk("toy:wfull", key, [])
        s.write_chunk("toy:wpart", "a", [])
        assert resolve(s, need) == ("toy:wfull", {"a", "b", "c", "other"})
        check_needs(s, [need])
        newest = Need("toy", "toy:w", need.chunks, "attnbounds toy", prefix=True, pick="newest")
        with pytest.raises(IncompleteCampaigns, match=r"'toy:wpart' 1 of 3 chunks stored \(2 missing, e.g. 'b'\)"):
            check_needs(s, [newest])


# -- end to end: `attnbounds paper` on small real campaigns ------------------------------------------

def _source(root, tables):
    """A one-section paper that inputs ``tables`` (the build checks that every table is cited)."""
    (root / "sections").mkdir(parents=True)
    (root / "main.tex").write_text(TOY_MAIN)
    (root / "sections" / "toy.tex").write_text("\\section{Toy}\n" + "".join(f"\\input{{tables/{t}}}\n" for t in tables))
    return root


def _paper(monkeypatch, family, src):
    """`attnbounds paper` in this process builds ``family`` alone, from ``src``."""
    import verification.paper.build as build_mod

    monkeypatch.setattr(build_mod, "build", functools.partial(build_mod.build, families=[PAPER[family]], source=src))


def _files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def assert_short_first_line(err: str, run: str) -> None:
    """The command line's refusal: a short first line (how many campaigns, the command that fills
    them), then what each lacks on an indented line below it (the issue: a first line of 599
    characters)."""
    lines = err.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("  ") and "Traceback" not in err, err
    assert lines[0].startswith("attnbounds paper: error: ") and run in lines[0] and len(lines[0]) < 160, lines[0]


def test_the_paper_refuses_a_dobrushin_campaign_with_a_chunk_deleted(tmp_path, monkeypatch, capsys):
    from verification.dobrushin import checks as job

    monkeypatch.setattr(job.Plan, "instances", lambda self, n: 4)    # the main job's design, 4 per cell
    monkeypatch.setattr(job, "CHUNK", 4)
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        job.run(job.Plan(seed=0), s)
    plan = job.Plan(seed=0)
    _paper(monkeypatch, "dobrushin", _source(tmp_path / "src", ("dobrushin-d1-share", "dobrushin-d2-share",
                                                                  "dobrushin-summary", "dobrushin-causal-share")))
    assert main(["paper", "--db", str(db), "--out", str(tmp_path / "ok")]) == 0, capsys.readouterr().err
    assert "tables/dobrushin-summary.tex" in _files(tmp_path / "ok")
    capsys.readouterr()
    with sqlite3.connect(db) as con:                  # one chunk of the plan deleted, records and mark
        for table in ("records", "chunks"):
            con.execute(f"DELETE FROM {table} WHERE campaign = ? AND chunk = ?", (plan.campaign, "causal/n128/c0"))
    out = tmp_path / "out"
    assert main(["paper", "--db", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    total = len(plan.chunks())
    assert_short_first_line(err, "run `attnbounds verify --only dobrushin --seed 0`")
    assert (f"dobrushin: {plan.campaign!r} {total - 1} of {total} chunks stored (1 missing, e.g. 'causal/n128/c0') "
            "(run `attnbounds verify --only dobrushin --seed 0`)") in err, err
    assert _files(out) == []                          # refused before anything was written


def test_the_paper_refuses_a_dobrushin_chunk_with_a_record_deleted_and_a_rerun_restores_it(tmp_path, monkeypatch,
                                                                                            capsys):
    """Issue 48, item 1: one record of a main-job chunk deleted, its chunk mark kept (the paper used
    to publish the smaller count as the main job's): refused naming the chunk and what differs; the
    job run again computes that chunk alone, and the paper is then the one built before."""
    from verification.dobrushin import checks as job

    monkeypatch.setattr(job.Plan, "instances", lambda self, n: 4)
    monkeypatch.setattr(job, "CHUNK", 4)
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        job.run(job.Plan(seed=0), s)
    plan = job.Plan(seed=0)
    _paper(monkeypatch, "dobrushin", _source(tmp_path / "src", ("dobrushin-d1-share", "dobrushin-d2-share",
                                                                  "dobrushin-summary", "dobrushin-causal-share")))
    assert main(["paper", "--db", str(db), "--out", str(tmp_path / "ok")]) == 0, capsys.readouterr().err
    built = {p: (tmp_path / "ok" / p).read_bytes() for p in _files(tmp_path / "ok") if p.startswith("tables/")}
    capsys.readouterr()
    key = "causal/n128/c0"
    with sqlite3.connect(db) as con:
        (n,) = con.execute("SELECT n FROM chunks WHERE campaign = ? AND chunk = ?", (plan.campaign, key)).fetchone()
        assert con.execute("DELETE FROM records WHERE id = (SELECT MIN(id) FROM records WHERE campaign = ? AND "
                           "chunk = ?)", (plan.campaign, key)).rowcount == 1
    out = tmp_path / "out"
    assert main(["paper", "--db", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    total = len(plan.chunks())
    assert_short_first_line(err, "run `attnbounds verify --only dobrushin --seed 0`")
    assert (f"dobrushin: {plan.campaign!r} {total - 1} of {total} chunks stored (1 not matching its mark, e.g. "
            f"{key!r} has {n - 1} records, its mark says {n}) (run `attnbounds verify --only dobrushin --seed 0`)") in err
    assert _files(out) == []
    with ResultStore(db) as s:
        (res,) = [c for c in job.run(job.Plan(seed=0), s).campaigns if c.campaign == plan.campaign]
    assert (res.computed, res.recomputed, res.skipped) == (1, 1, total - 1)
    assert main(["paper", "--db", str(db), "--out", str(out)]) == 0, capsys.readouterr().err
    assert {p: (out / p).read_bytes() for p in _files(out) if p.startswith("tables/")} == built


def test_the_paper_refuses_a_smaller_prove_run_as_the_main_jobs(tmp_path, monkeypatch, capsys):
    """`prove --max-n 2` at the main job's budget fills the main job's campaign up to 2x2 only: the
    paper must not quote it as the main job's (3x3)."""
    from verification.prove.checks import QUICK

    db, out = tmp_path / "r.db", tmp_path / "out"
    assert main(["prove", "--max-n", "2", "--timeout", f"{QUICK.timeout:g}", "--db", str(db),
                 "--out", str(tmp_path / "prove")]) == 0, capsys.readouterr().err
    capsys.readouterr()
    _paper(monkeypatch, "prove", _source(tmp_path / "src", ("prove-reach", "prove-variants", "prove-symmetry")))
    assert main(["paper", "--db", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"prove: {QUICK.campaign!r}" in err and "missing, e.g. '" in err and "@3x3" in err, err
    assert "(run `attnbounds prove --max-n 3 --timeout 10`)" in err
    assert _files(out) == []
