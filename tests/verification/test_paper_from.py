"""A paper of your own runs (issue 34): ``attnbounds paper --from "stress THEOREM [options]"`` reads
the stress family's sweep from the campaign of that command line (parsed by ``attnbounds stress``'s
own parser, planned as it plans) instead of the main job's, and the completeness check asks for that
plan's chunks. Another family's command line is refused in one line naming the families that support
``--from``; an incomplete ``--from`` campaign is refused like a main-job one.

The table's content is checked through :func:`verification.paper.build.collect` restricted to the
stress family (the command line builds every family, which needs a full main-job store); the
command line itself is checked for its refusals. The guided search and the rollout sweep stay the
main job's: the fixture ``small_stress_section`` makes those small."""
import pytest

from verification import campaign
from verification.campaign import Chunk
from verification.cli import main
from verification.paper.build import check_complete, collect
from verification.paper.from_plans import plans_from
from theory.errors import InvalidInput
from verification.report.part import IncompleteCampaigns, MissingCampaign
from verification.store import ResultStore
from verification.stress.checks import chunks as plan_chunks
from verification.stress.checks.search import search_campaign, search_chunk

STRESS = "verification.stress.paper"
USER = "stress dobrushin.factor --families dirichlet --sizes 5 --instances 20000"


def user_store(tmp_path, small_stress_section):
    """A store holding the user's sweep (run by the command line) and a small main-job search and
    rollout sweep."""
    db, out = str(tmp_path / "r.db"), str(tmp_path / "out")
    assert main(["stress", "dobrushin.factor", "--families", "dirichlet", "--sizes", "5", "--instances", "20000",
                 "--db", db, "--out", out]) == 0
    plans = small_stress_section()
    with ResultStore(db) as store:
        campaign.run(store, search_campaign("dobrushin.factor", 0),
                     [Chunk("n3/b40", search_chunk, ("dobrushin.factor", 3, 40, 0))], progress=False)
        rollout = plans["dobrushin.rollout"]
        campaign.run(store, rollout.campaign, plan_chunks(rollout), progress=False)
    return db, tmp_path / "out"


def test_a_users_campaign_becomes_the_stress_table(tmp_path, small_stress_section):
    db, out = user_store(tmp_path, small_stress_section)
    assert (out / "tables" / "stress-factor.md").exists()          # the command's table: the paper's name
    plans = plans_from(USER)
    (sweep,) = plans["stress"].sweeps
    assert sweep.sizes == (5,) and sweep.instances == 20000 and plans["stress"].search is None
    assert plans_from("attnbounds " + USER)["stress"] == plans["stress"]
    with ResultStore(db, readonly=True) as store:
        with pytest.raises(MissingCampaign):                        # the main job's sweep is not stored
            collect(store, families=[STRESS])
        [part] = collect(store, families=[STRESS], plans=plans)
    table = part.tables[0]
    assert table.name == "stress-factor"
    assert table.frame["family"].tolist() == ["dirichlet"] and table.frame["n"].tolist() == [5]
    assert table.frame["instances"].tolist() == [20000]
    assert part.macros["StressInstances"] == 20000 and part.macros["StressViolated"] == "0"
    assert "--sizes 5 --instances 20000" in part.commands[0] and "--sizes 5" in table.command
    assert part.tables[-1].name == "stress-rollout"                 # the rest: still the main job's


def test_the_completeness_check_asks_for_the_plans_chunks(tmp_path, small_stress_section):
    db, _ = user_store(tmp_path, small_stress_section)
    bigger = plans_from(USER.replace("20000", "60000"))                # the same campaign, more chunks
    with ResultStore(db, readonly=True) as store:
        assert len(check_complete(store, families=[STRESS], plans=plans_from(USER))) == 3
        with pytest.raises(IncompleteCampaigns, match=r"stress.*of \d+ chunks stored.*--instances 60000"):
            check_complete(store, families=[STRESS], plans=bigger)
        with pytest.raises(IncompleteCampaigns):
            collect(store, families=[STRESS], plans=bigger)


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def refusal(capsys) -> tuple[str, str]:
    """The refusal of an incomplete store: a short first line (how many campaigns, the command that
    fills them) and what each lacks on indented lines below it; (first line, the lines below)."""
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) >= 2 and "Traceback" not in err, err
    assert lines[0].startswith("attnbounds paper: error: ") and "the store lacks (it never recomputes): run `" in lines[0], err
    assert all(ln.startswith("  ") for ln in lines[1:]), err
    return lines[0], " ".join(lines[1:])


@pytest.mark.parametrize("command", ["verify", "nonsense", "theorems", "paper"])
def test_a_line_that_is_no_familys_command_is_refused(tmp_path, capsys, command):
    db, out = tmp_path / "r.db", tmp_path / "paper"
    ResultStore(db).close()
    assert main(["paper", "--db", str(db), "--out", str(out), "--from", command]) == 2
    line = one_line(capsys)
    assert "--from" in line and "families only: dobrushin, trained, rank, poincare, modalities, san, prove, stress" in line, line
    assert not out.exists()


def test_every_family_with_a_command_of_its_own_is_readable():
    """--from reads every family whose subcommand plans it (read from the command table, not a list
    kept by hand); the family's own check refuses a plan its part cannot show, in one line."""
    from verification.commands import FAMILIES
    from verification.paper.from_plans import from_families, plans_from

    assert from_families() == tuple(FAMILIES)
    for line, words in (("rollout --model minilm", "main job's inputs"), ("poincare --families gauss1", "every family")):
        with pytest.raises(InvalidInput, match=words):
            plans_from(line)


def test_a_users_dobrushin_campaign_becomes_the_dobrushin_tables(store):
    """``--from "dobrushin --families ... --sizes ..."``: the family's part and its completeness
    need read that plan's campaign, and its tables show that plan's cells only."""
    from verification.dobrushin import checks
    from verification.dobrushin.paper import needs, paper_part

    plan = plans_from("dobrushin --families dirichlet,causal --sizes 3 --seed 4")["dobrushin"]
    assert plan == checks.Plan(families=("dirichlet", "causal"), sizes=(3,), seed=4)
    need, causal = needs(store, plan=plan)
    assert need.campaign == plan.campaign and need.chunks == {c.key for c in plan.chunks()}
    assert causal.campaign == plan.causal_campaign and causal.chunks == {"causal/n3"}
    assert "attnbounds dobrushin --families dirichlet,causal --sizes 3 --seed 4" == need.command == causal.command
    checks.run(plan, store)
    part = paper_part(store, plan=plan)
    share = next(t for t in part.tables if t.name == "dobrushin-d1-share")
    assert share.columns() == ["family", "n=3"] and len(share.frame) == 2
    assert part.macros["DOneRandomInstances"] == str(2 * plan.instances(3))


@pytest.mark.parametrize("command, why", [("stress dobrushin.product", "dobrushin.factor and dobrushin.rollout"),
                                          ("stress dobrushin.factor --search", "--search"),
                                          ("stress dobrushin.factor --sizes x", "--sizes"),
                                          ("stress dobrushin.factor --help", "--help")])
def test_a_stress_command_line_the_paper_cannot_read_is_refused(tmp_path, capsys, command, why):
    db, out = tmp_path / "r.db", tmp_path / "paper"
    ResultStore(db).close()
    assert main(["paper", "--db", str(db), "--out", str(out), "--from", command]) == 2
    line = one_line(capsys)
    assert why in line, line
    assert not out.exists()


def test_an_incomplete_from_campaign_is_refused_by_the_command_line(tmp_path, capsys, small_stress_section):
    db, _ = user_store(tmp_path, small_stress_section)
    capsys.readouterr()
    out = tmp_path / "paper"
    assert main(["paper", "--db", db, "--out", str(out), "--from", USER.replace("20000", "60000")]) == 2
    head, below = refusal(capsys)
    assert "--instances 60000" in head and "chunks stored" in below, (head, below)
    assert len(head) < 300 and not out.exists()


def test_help_documents_from(capsys):
    try:
        assert main(["paper", "--help"]) == 0
    except SystemExit as exc:
        assert exc.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--from COMMAND" in text and "document of that run alone" in text


OWN_RUN = "stress dobrushin.factor --families dirichlet --sizes 4 --instances 1000"


def test_a_store_holding_only_your_run_gives_the_document_of_that_run(tmp_path, capsys):
    """Issue 49: ``paper --from`` on a store with no main job writes the document of that run alone
    (its table, command and provenance), exit 0; the same on an empty store, or with a chunk of the
    run missing, is one line and exit 2, and nothing is written."""
    import pandas as pd

    db, out = str(tmp_path / "r.db"), tmp_path / "paper"
    assert main(OWN_RUN.split() + ["--db", db, "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    assert main(["paper", "--db", db, "--out", str(out), "--from", OWN_RUN]) == 0
    assert "document of your run alone" in capsys.readouterr().out
    doc = (out / "own.md").read_text()
    assert "attnbounds stress dobrushin.factor --families dirichlet --sizes 4 --instances 1000" in doc
    assert "Philox4x32-10" in doc and "| dirichlet | 4 | 10000 |" in doc
    frame = pd.read_csv(out / "tables" / "stress-factor.csv")
    assert frame["family"].tolist() == ["dirichlet"] and frame["instances"].tolist() == [10000]
    # the main paper still refuses the same store
    assert main(["paper", "--db", db, "--out", str(tmp_path / "main")]) == 2
    assert "complete campaigns" in refusal(capsys)[0] and not (tmp_path / "main").exists()
    # a run that is not in the store: refused, nothing written
    empty = tmp_path / "e.db"
    ResultStore(empty).close()
    assert main(["paper", "--db", str(empty), "--out", str(tmp_path / "e"), "--from", OWN_RUN]) == 2
    head, below = refusal(capsys)
    assert "your run" in head and "run `attnbounds stress" in head and "absent" in below
    assert not (tmp_path / "e").exists()


def test_a_document_of_your_run_refuses_an_incomplete_run(tmp_path, capsys):
    import sqlite3

    db = str(tmp_path / "r.db")
    assert main(OWN_RUN.replace("--sizes 4", "--sizes 3,4").split() + ["--db", db, "--out", str(tmp_path / "run")]) == 0
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM chunks WHERE chunk LIKE '%n3%'")
    capsys.readouterr()
    line_from = OWN_RUN.replace("--sizes 4", "--sizes 3,4")
    assert main(["paper", "--db", db, "--out", str(tmp_path / "p"), "--from", line_from]) == 2
    head, below = refusal(capsys)
    assert "your run" in head and "1 of 2 chunks" in below and not (tmp_path / "p").exists()
