"""verification.prove: the SMT campaign (records, vocabulary, resume, the loud stop), the
`attnbounds prove` command and the paper's part."""
from dataclasses import replace

import types

import pytest

from numerics.smt import STATEMENTS, SmtResult
from theory.verdicts import Verdict, ViolationError
from verification.cli import main
from verification.prove import checks
from verification.prove.paper import paper_part
from verification.prove.checks import ALL, QUICK, Plan, record, run_campaign, sensitivity_failures
from verification.prove.findings import Answer, reach
from verification.prove.report import rows
from verification.report.part import MissingCampaign
from verification.store import ResultStore


def test_campaign_stores_proofs_and_expected_counterexamples_and_resumes(store):
    plan = Plan(statements=("d1.iff", "d1.iff.one-sided"), max_n=3, timeout=30)
    recs = run_campaign(store, plan)
    by = {r["instance"]: r for r in recs}
    # the bound d1.iff relies on is proved first (its split encoding), at every size
    assert set(by) == {"d1.bound.split@2x2", "d1.bound.split@3x3", "d1.iff@2x2", "d1.iff@3x3", "d1.iff.one-sided@3x3"}
    assert plan.statements[0] == "d1.bound.split" and by["d1.bound.split@3x3"]["extra"]["smt"] == "proved"
    proved = by["d1.iff@3x3"]
    assert proved["verdict"] == "holds" and proved["extra"]["smt"] == "proved"
    # both solvers, both answers and times, per query; the hash of the query texts
    e = proved["extra"]
    assert e["cvc5"] == "proved" and e["solver2"].startswith("cvc5 ") and e["cvc5_seconds"] > 0
    assert [a[0] for a in e["answers"]] == ["if", "only-if"] and all(a[1] == a[3] == "unsat" for a in e["answers"])
    assert len(e["digest"]) == 64 and e["needs"] == ["d1.bound", "d1.bound.split"]
    assert proved["extra"]["scope"] == "all matrices of this size" and proved["backend"] == "z3"
    assert proved["provenance"]["solver"].startswith("z3 ") and proved["provenance"]["timeout_s"] == 30
    wrong = by["d1.iff.one-sided@3x3"]
    assert wrong["verdict"] == "not-applicable" and wrong["extra"]["expected"] == "counterexample"
    assert wrong["extra"]["smt"] == "counterexample" and wrong["extra"]["confirmed"] is True
    assert wrong["extra"]["counterexample"]["A"] and not sensitivity_failures(recs)
    assert reach(recs)["d1.iff"].largest == "3x3"
    assert [r[1] for r in rows(map(Answer.of, recs))] == ["d1.bound.split"] * 2 + ["d1.iff", "d1.iff", "d1.iff.one-sided"]
    n = store.count(plan.campaign)
    assert run_campaign(store, plan) and store.count(plan.campaign) == n      # resumed: nothing recomputed


def test_a_counterexample_to_a_proved_theorem_stops_loudly(store, monkeypatch):
    # a "true" statement whose encoding is deliberately wrong: its confirmed counterexample must stop the run
    fake = replace(STATEMENTS["d1.bound.strict"], key="fake", wrong=False, needs=())
    monkeypatch.setitem(checks.ALL, "fake", fake)
    monkeypatch.setattr(fake.__class__, "dims", lambda self, n: (3,))
    with pytest.raises(ViolationError, match="fake@3x3"):
        run_campaign(store, Plan(statements=("fake",), max_n=3, timeout=30))
    stored = list(store.records())
    assert stored and stored[0]["verdict"] == "violated"                   # stored before the stop


def test_unconfirmed_or_algebraic_models_and_timeouts_are_undecided():
    st = STATEMENTS["d2.bound"]
    for res in (SmtResult("d2.bound", (2, 2, 2), "counterexample", 1.0, confirmed=False),
                SmtResult("d2.bound", (2, 2, 2), "counterexample", 1.0, reason="the model is not rational"),
                SmtResult("d2.bound", (2, 2, 2), "undecided", 3.0, reason="timeout")):
        r = record(st, res, 3.0)
        assert r.verdict is Verdict.UNDECIDED and r.extra["reason"], res
    wrong = record(STATEMENTS["d2.bound.strict"], SmtResult("d2.bound.strict", (2, 2, 2), "proved", 1.0), 3.0)
    assert wrong.verdict is Verdict.NOT_APPLICABLE
    assert sensitivity_failures([{"extra": wrong.extra}])                   # a variant that was not refuted
    only_z3 = SmtResult("d1.bound", (3,), "undecided", 1.0, cvc5="undecided", reason="z3 unsat, cvc5 unknown (x)")
    r = record(STATEMENTS["d1.bound"], only_z3, 3.0)
    assert r.verdict is Verdict.UNDECIDED and rows([Answer.of({"theorem": "t", "extra": r.extra})])[0][5:8] == ("proved", 1.0,
                                                                                                   "undecided")


def test_an_iff_is_never_proved_where_its_bound_is_not(store, monkeypatch):
    """The premise undecided at 3x3 (planted): d1.iff runs at 2x2 only, and the report never counts a
    stored "proved" whose premise is missing."""
    from numerics.smt import SPLIT

    from verification.prove.checks import records as solving

    real = solving.decide_split

    def fake(st, dims, timeout):
        if st.key == "d1.bound.split" and dims == (3,):
            return SmtResult(st.key, dims, "undecided", 0.1, reason="planted", digest=real(st, dims, timeout).digest)
        return real(st, dims, timeout)

    monkeypatch.setattr(solving, "decide_split", fake)
    recs = run_campaign(store, Plan(statements=("d1.iff",), max_n=3, timeout=30))
    assert {r["instance"] for r in recs} == {"d1.bound.split@2x2", "d1.bound.split@3x3", "d1.iff@2x2"}
    assert reach(recs)["d1.iff"].largest == "2x2"
    # a stored "proved" at 3x3 without the bound proved there is not reported proved
    stand_in = record(STATEMENTS["d1.iff"], SmtResult("d1.iff", (3,), "proved", 0.1), 30)
    fake_recs = [r for r in recs] + [{"theorem": stand_in.theorem, "extra": stand_in.extra}]
    assert reach(fake_recs)["d1.iff"].largest == "2x2"
    assert SPLIT["d1.iff.split"].needs == ("d1.bound",) and checks.select(("d2.iff",))[0] == "d2.bound.split"


def test_a_changed_encoding_is_never_served_a_stored_answer(store, monkeypatch):
    import z3

    plan = Plan(statements=("d1.bound",), max_n=2, timeout=30)
    first = run_campaign(store, plan)
    key = plan.chunk("d1.bound", 2).key
    st = STATEMENTS["d1.bound"]
    changed = replace(st, build=lambda dims: [(q[0], q[1] + [z3.BoolVal(True) == z3.BoolVal(True)], q[2])
                                               for q in st.build(dims)])
    monkeypatch.setitem(checks.ALL, "d1.bound", changed)
    assert plan.chunk("d1.bound", 2).key != key and key.startswith("d1.bound@2x2#")
    second = run_campaign(store, plan)
    assert len(first) == len(second) == 1                                               # solved again
    # the answer is one record per statement and size: the old encoding's chunk no longer holds it,
    # so it is not stored whole (going back to that encoding solves it again, never serves this one)
    assert store.done_chunks(plan.campaign) == {plan.chunk("d1.bound", 2).key}
    assert store.chunk_check(plan.campaign).problems == {key: "has 0 records, its mark says 1"}
    assert second[0]["extra"]["digest"] != first[0]["extra"]["digest"]


def test_prove_command_runs_and_bad_arguments_are_one_line(tmp_path, capsys):
    db, out = str(tmp_path / "r.db"), str(tmp_path / "out")
    assert main(["prove", "dobrushin.factor.causal", "d1.bound", "--max-n", "2", "--timeout", "30",
                 "--db", db, "--out", out]) == 0
    text = capsys.readouterr().out
    assert "causal" in text and "d1.bound" in text and "proved" in text and "2x2" in text
    assert (tmp_path / "out" / "tables" / "prove-reach.md").exists()
    for argv, what in ((["prove", "dobrushin.nope"], "unknown theorem"), (["prove", "--timeout", "-1"], "positive"),
                       (["prove", "--max-n", "1"], ">= 2"), (["prove", "--timeout", "nan"], "positive")):
        assert main(argv + ["--db", db, "--out", out]) == 2
        err = capsys.readouterr().err.strip()
        assert what in err and len(err.splitlines()) == 1, err


def test_paper_part_reads_the_store_only(tmp_path):
    with ResultStore(tmp_path / "p.db") as s:
        with pytest.raises(MissingCampaign, match="attnbounds prove"):
            paper_part(s, QUICK)
        run_campaign(s, Plan(statements=("d1.bound", "d1.bound.strict"), max_n=3, timeout=QUICK.timeout))  # QUICK's campaign
        part = paper_part(s, QUICK)
    assert part.macros["ProveDOneBoundLargest"] == "3x3" and part.macros["ProveVariantsRefuted"] == "1"
    assert {t.name for t in part.tables} == {"prove-reach", "prove-variants", "prove-symmetry", "prove-formal"} \
        and part.commands


def _stand_in(key: str, dims: tuple, z3_status: str, cvc5_status: str) -> dict:
    st = ALL[key]
    both = z3_status if z3_status == cvc5_status else "undecided"
    r = record(st, SmtResult(key, dims, both, 0.5, cvc5=cvc5_status,
                             reason="" if both != "undecided" else "z3 unsat, cvc5 timeout" if z3_status == "proved"
                             else "timeout"), 60.0)
    return {"theorem": r.theorem, "extra": r.extra}


def test_the_symmetry_reduction_is_checked_and_a_disagreement_is_loud():
    """The exhaustive (symmetry-free) and split encodings are compared per size and solver; they agree
    up to the largest size both solvers prove both; a size where one encoding is proved and the other
    refuted is a disagreement that the prove command reports (exit 1)."""
    from verification.prove.report import alarms as _loud
    from verification.prove.findings import symmetry, symmetry_checked
    from verification.prove.report import symmetry_disagreements

    recs = [_stand_in("d1.bound.exhaustive", (2,), "proved", "proved"), _stand_in("d1.bound.split", (2,), "proved", "proved"),
            _stand_in("d1.bound.exhaustive", (3,), "proved", "proved"), _stand_in("d1.bound.split", (3,), "proved", "proved"),
            _stand_in("d1.bound.exhaustive", (4,), "undecided", "undecided"),
            _stand_in("d1.bound.split", (4,), "proved", "proved")]
    assert [s.agree for s in symmetry(recs)] == [True, True, None] and symmetry_checked(recs) == {"d1.bound": "3x3"}
    assert not symmetry_disagreements(recs)
    planted = recs[:2] + [_stand_in("d1.bound.exhaustive", (3,), "counterexample", "counterexample"), recs[3]]
    assert symmetry_checked(planted) == {"d1.bound": "2x2"}
    bad = symmetry_disagreements(planted)
    assert len(bad) == 1 and "d1.bound at 3x3" in bad[0]
    console = types.SimpleNamespace(print=lambda *a, **k: None)
    assert _loud(planted, console) == 1


def test_premises_of_premises_run_first_and_at_their_own_size(tmp_path):
    """causal.d2.lemma needs D2's bound (at n x n x n) and the causal lemma (at n x n), which needs D1's
    bound: all are planned, in that order, and the lemma statement runs only where its premises hold."""
    from verification.prove.checks import depth, premise_at, with_premises

    keys = with_premises(("causal.d2.lemma",))
    assert set(keys) >= {"d2.bound.split", "causal", "d1.bound.split", "causal.d2.lemma"}
    assert depth("d1.bound.split") == 0 and depth("causal") == 1 and depth("causal.d2.lemma") == 2
    assert premise_at("causal.d2.lemma", (3, 3, 3)) == {"d2.bound": [3, 3, 3], "causal": [3]}
    with ResultStore(tmp_path / "c.db") as s:
        got = run_campaign(s, Plan(statements=("causal.d2.lemma",), max_n=2, timeout=30.0))
    by = {r["extra"]["statement"]: r["extra"]["smt"] for r in got}
    assert by["causal.d2.lemma"] == "proved" and by["causal"] == "proved" and by["d1.bound.split"] == "proved"


def test_every_macro_and_table_the_section_cites_is_in_the_part(tmp_path):
    import re
    from pathlib import Path

    from verification.prove.checks import ALL, TRUE, WRONG
    from verification.prove.checks import QUICK

    tex = (Path(__file__).resolve().parents[2] / "paper" / "sections" / "prove.tex").read_text()
    with ResultStore(tmp_path / "s.db") as s:
        for key in TRUE + WRONG:           # one stand-in record per statement (the part reads records only)
            st = ALL[key]
            dims = st.at if st.wrong else st.dims(2)
            res = SmtResult(key, dims, "counterexample" if st.wrong else "proved", 0.5, confirmed=st.wrong or None)
            s.write_chunk(QUICK.campaign, key, [record(st, res, QUICK.timeout)])
        part = paper_part(s, QUICK)
    cited = set(re.findall(r"\\(Prove[A-Za-z]+)", tex))
    assert cited and cited <= set(part.macros), cited - set(part.macros)
    # every table is typeset (tables/<name>), cited from an appendix (Table~\ref{tab:name}) or cited as data
    # (\DataRef{name}), and none is unknown
    assert set(re.findall(r"tables/([\w-]+)", tex)) | set(re.findall(r"\\DataRef\{([\w-]+)\}", tex)) \
        | set(re.findall(r"\\ref\{tab:([\w-]+)\}", tex)) == {t.name for t in part.tables}
    assert part.macros["ProveVariantsRefuted"] == part.macros["ProveVariants"] == str(len(WRONG))


def test_the_registrys_sizes_are_checked_against_the_store(monkeypatch):
    """A registry entry "proved up to dims" contradicted by a stored counterexample (budget >= 60 s)
    is reported; a timeout there only leaves it unconfirmed; a record under a smaller budget, or
    beyond dims, is not judged."""
    import types

    import theory
    from verification.prove.report import registry_mismatches

    fake = types.SimpleNamespace(id="dobrushin.factor", smt_checked=(("d1.bound", (3,), 1.0),))
    monkeypatch.setattr(theory, "theorems", lambda: [fake])
    st = STATEMENTS["d1.bound"]

    def rec(dims, status, timeout):
        r = record(st, SmtResult("d1.bound", dims, status, 1.0, cvc5="proved" if status == "proved" else "",
                                 reason="" if status == "proved" else "timeout"), timeout)
        return {"theorem": r.theorem, "extra": r.extra}

    assert not registry_mismatches([rec((2,), "proved", 60.0), rec((3,), "proved", 60.0), rec((4,), "undecided", 60.0)])
    assert not registry_mismatches([rec((3,), "undecided", 3.0)])                 # a quick budget: not judged
    unconfirmed: list = []
    assert not registry_mismatches([rec((2,), "proved", 60.0), rec((3,), "undecided", 60.0)], unconfirmed)
    assert len(unconfirmed) == 1 and "d1.bound proved up to 3" in unconfirmed[0] and "undecided at 3x3" in unconfirmed[0]
    bad = registry_mismatches([rec((2,), "proved", 60.0), rec((3,), "counterexample", 60.0)])
    assert len(bad) == 1 and "d1.bound proved up to 3" in bad[0] and "counterexample at 3x3" in bad[0]


def test_every_statement_text_the_paper_prints_is_typeset_without_ascii_mathematics():
    """The variants' texts reach the paper's tables as cells: each is set as mathematics (the paper's
    MATH_LABELS, with a remark in parentheses kept), so a changed text is caught here."""
    from verification.paper.latex import ascii_math
    from verification.paper.tables import cell_tex

    for key, st in ALL.items():
        if st.wrong:
            assert ascii_math(cell_tex(st.text)) == [], (key, st.text)


def _replan(command: str) -> Plan:
    import shlex

    from verification.cli import build_parser

    argv = shlex.split(command)[1:]
    return Plan.from_args(build_parser(argv).parse_args(argv))


@pytest.mark.parametrize("argv", [["d1.iff", "--max-n", "2", "--timeout", "5"], ["--timeout", "5"], ["--max-n", "3"],
                                  ["--full", "--timeout", "5"], ["dobrushin.product", "--full"], ["d1.bound", "--seed", "4"]])
def test_a_prove_command_lines_plan_is_reproduced_by_its_command(argv):
    """``Plan.command()`` of a plan made by ``attnbounds prove ...``: the line that plans it again
    (the statement keys when not all, ``--max-n`` where it drops the preset's per-statement limits)."""
    plan = _replan(" ".join(["attnbounds", "prove"] + argv))
    again = _replan(plan.command())
    assert (again.statements, again.max_n, again.timeout, again.upto, again.full) == \
        (plan.statements, plan.max_n, plan.timeout, plan.upto, plan.full), plan.command()
    assert plan.provenance()["preset"] == ("full" if "--full" in argv else "quick")


def test_the_main_jobs_prove_command_is_the_one_the_paper_prints():
    """The main job's plans keep the line the paper has always printed; it plans every statement at
    least as far as the main job's plan (the planted contrast: ``--max-n 2`` does not)."""
    assert Plan.for_verify(0, False) == QUICK and QUICK.command() == "attnbounds prove --max-n 3 --timeout 10"
    assert Plan.for_verify(0, True) == checks.FULL and checks.FULL.command() == "attnbounds prove --max-n 12 --timeout 60"
    for plan in (QUICK, checks.FULL):
        filled = _replan(plan.command())
        assert filled.campaign == plan.campaign and all(filled.largest(k) >= plan.largest(k) for k in plan.statements)
    short = _replan("attnbounds prove --max-n 2 --timeout 10")
    assert not all(short.largest(k) >= QUICK.largest(k) for k in QUICK.statements)


def test_run_returns_what_each_level_did(store):
    from verification.plan import RunResult

    plan = Plan(statements=("d1.bound",), max_n=3, timeout=30)
    first, again = checks.run(plan, store), checks.run(plan, store)
    assert isinstance(first, RunResult) and first.family == "prove" and first.names() == (plan.campaign,)
    assert len(first.campaigns) == 2 and (first.computed, first.records) == (2, 2)     # one run per level
    assert (again.computed, again.skipped) == (0, 2)


def test_findings_hold_the_answers_reach_and_variants_as_values():
    """The findings of stored answers: each answer's solvers, the reach of a true statement with its
    dims, the symmetry comparison, the wrong variants refuted as a share and the solvers' clashes."""
    from verification.prove.findings import of_records

    recs = [_stand_in("d1.bound.exhaustive", (2,), "proved", "proved"), _stand_in("d1.bound.split", (2,), "proved", "proved"),
            _stand_in("d1.bound.split", (3,), "proved", "undecided"),
            _stand_in("d1.iff.one-sided", (3,), "counterexample", "counterexample"),
            _stand_in("d2.bound.strict", (2, 2, 2), "proved", "proved")]
    recs[3]["extra"]["confirmed"] = True
    found = of_records(recs + [recs[0]])                               # a repeated answer counts once
    assert len(found.answers) == 5 and found.answers[2].z3 == "proved" and found.answers[2].cvc5 == "undecided"
    split = {r.statement: r for r in found.reach}["d1.bound.split"]
    assert (split.largest, split.largest_dims, split.undecided) == ("2x2", (2,), "3x3")
    assert [(s.bound, s.agree) for s in found.symmetry] == [("d1.bound", True)] and found.checked("d1.bound") == "2x2"
    assert (found.variants.k, found.variants.n) == (1, 2) and found.clashes == 0 and found.true_refuted == ()
