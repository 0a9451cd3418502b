"""Issue 50: a theory file the package has never seen, through `attnbounds stress ID --theory F`:
true bounds give 0 violated, false ones an exact counterexample (rows exactly stochastic, the
inequality exactly false, re-checked here independently; the simplest kept one), the restated D1 the
built-in's verdicts, the same counts on two Dask workers, resume, a stop with one message, exit
status 3 and the --json line for a false "proved" bound (the same on a fresh and a resumed store,
whatever category stored the chunks), the guided search, a wrong equality condition shown and
failed, and the document `paper --from` writes."""
import json
import textwrap
from fractions import Fraction

import numpy as np
import pytest

from verification.cli import main

THEORY = textwrap.dedent('''
    from theory import Theorem, register
    from theory.expr import A, B, I, delta, Max

    register(Theorem(id="t50.square", title="delta(A^2) <= delta(A)^2", category="proved",
                     statement=delta(A**2) <= delta(A)**2))
    register(Theorem(id="t50.d1", title="Theorem D1 restated", category="proved",
                     statement=delta((I + A) / 2) <= (1 + delta(A)) / 2))
    register(Theorem(id="t50.convex", title="delta is convex", category="proved",
                     statement=delta((A + B) / 2) <= (delta(A) + delta(B)) / 2))
    register(Theorem(id="t50.wrong", title="a false bound", category="conjecture",
                     statement=delta(A * B) <= Max(delta(A), delta(B)) / 2))
    register(Theorem(id="t50.false_proved", title="a false bound filed as proved", category="proved",
                     statement=delta(A) <= delta(A**2)))
''')


@pytest.fixture
def theory_file(tmp_path):
    from theory.plugins import unload_files

    path = tmp_path / "user_bounds.py"
    path.write_text(THEORY)
    yield str(path)
    unload_files()                      # the registry as it was, for the other tests


def run_json(capsys, *argv, status=0):
    assert main(list(argv)) == status
    out = capsys.readouterr().out
    return json.loads(out.strip().splitlines()[-1]), out


def run_failing(capsys, *argv):
    """A run that ends with exit status 3 (verification.options.REFUTED): (its --json line, stdout,
    stderr); never a traceback."""
    from verification.options import REFUTED

    assert REFUTED == 3
    rc = main(list(argv))
    captured = capsys.readouterr()
    assert rc == REFUTED, captured.err
    assert "Traceback" not in captured.err
    return json.loads(captured.out.strip().splitlines()[-1]), captured.out, captured.err


def exactly_violated(theorem, cex):
    """The counterexample's matrices are exactly stochastic and violate the theorem, in exact arithmetic."""
    from numerics.expr import compile_statement, exact_sides
    from theory import get

    mats = {k: [[Fraction(x) for x in row] for row in rows] for k, rows in cex.items()}
    assert all(sum(row) == 1 and min(row) >= 0 for rows in mats.values() for row in rows)
    compiled = compile_statement(get(theorem).statement)
    lhs, rhs = exact_sides(compiled, mats)
    return lhs >= rhs if compiled.strict else lhs > rhs


def sweep(theory_file, tmp_path, theorem, *extra, db="s.db"):
    return ["stress", theorem, "--theory", theory_file, "--families", "dirichlet,sparse", "--sizes", "3,4",
            "--instances", "4000", "--json", "--db", str(tmp_path / db), "--out", str(tmp_path / "out"), *extra]


@pytest.mark.parametrize("theorem", ["t50.square", "t50.convex"])
def test_true_bound_has_no_violation_and_resumes(theory_file, tmp_path, capsys, theorem):
    got, out = run_json(capsys, *sweep(theory_file, tmp_path, theorem))
    assert got["theorem"] == theorem and got["counterexample"] is None
    assert got["verdicts"]["violated"] == 0 and got["verdicts"]["undecided"] == 0
    assert got["instances"] == sum(got["verdicts"].values()) + got["not_applicable"] == 40_000
    assert got["verdicts"]["tight"] > 0 and got["verdicts"]["holds"] > 0      # both occur on these families
    again, out2 = run_json(capsys, *sweep(theory_file, tmp_path, theorem))
    assert again == got and "0 chunks computed, 4 already stored" in out2


def test_false_bound_gives_an_exact_counterexample(theory_file, tmp_path, capsys):
    from verification.store import ResultStore
    from verification.stress.findings.counterexamples import simplicity

    got, out = run_json(capsys, *sweep(theory_file, tmp_path, "t50.wrong"))
    assert got["verdicts"]["violated"] > 0
    cex = got["counterexample"]
    assert set(cex) == {"A", "B"} and "simplest kept counterexample" in out
    assert exactly_violated("t50.wrong", cex)
    # the simplest of the kept ones (dirichlet's come first in the plan, with 2^53 denominators; a 0/1
    # pair of the sparse family is kept too): the smallest n, then the smallest denominators
    with ResultStore(tmp_path / "s.db", readonly=True) as store:
        kept = [r["extra"]["counterexample"] for r in store.records(got["campaign"])
                if "counterexample" in r["extra"]]
    assert any(simplicity(k)[1] > 2 ** 40 for k in kept)
    assert simplicity(cex) == min(simplicity(k) for k in kept) and simplicity(cex)[:2] == (3, 1)


def test_restated_d1_finds_the_built_in_verdicts(theory_file, tmp_path, capsys):
    cells = ["--families", "dirichlet,softmax-T1", "--sizes", "3,16", "--instances", "40000", "--json",
             "--db", str(tmp_path / "d1.db"), "--out", str(tmp_path / "out")]
    mine, _ = run_json(capsys, "stress", "t50.d1", "--theory", theory_file, *cells)
    builtin, _ = run_json(capsys, "stress", "dobrushin.factor", *cells)
    assert mine["instances"] == builtin["instances"] == 40_000
    # the same instances (one sampler), both decided exactly: the same verdicts, not only the same share
    assert mine["verdicts"] == builtin["verdicts"]
    assert 0.2 < mine["verdicts"]["tight"] / mine["instances"] < 0.5


def test_two_dask_workers_give_the_same_counts(theory_file, tmp_path, capsys):
    serial, _ = run_json(capsys, *sweep(theory_file, tmp_path, "t50.wrong", db="a.db"))
    dask, out = run_json(capsys, *sweep(theory_file, tmp_path, "t50.wrong", "--workers", "2", db="b.db"))
    assert "Dask scheduler" in out
    assert dask == serial


def test_a_false_proved_bound_stops_with_one_message_and_its_json(theory_file, tmp_path, capsys):
    got, out, err = run_failing(capsys, *sweep(theory_file, tmp_path, "t50.false_proved"))
    ref = got["refuted"]
    # the chunk summaries count every violating instance; 16 per chunk are kept as records, and it says so
    assert ref["checked"] == got["instances"] == 10_000 and ref["violated"] == got["verdicts"]["violated"] > ref["kept"]
    assert ref["kept"] == 16 and ref["chunks"] == 1
    assert (f"t50.false_proved is filed as proved (category='proved') but is false: {ref['violated']:,} of the "
            "10,000 instances checked violate it" in err)
    assert "16 of them kept as records" in err and "at most 16 per chunk" in err
    assert "simplest kept counterexample" in err and "re-checked in exact arithmetic" in err
    assert exactly_violated("t50.false_proved", got["counterexample"])
    # resumed: the stored chunks give the same outcome, computing nothing
    again, out2, err2 = run_failing(capsys, *sweep(theory_file, tmp_path, "t50.false_proved"))
    assert again == got and err2 == err and "nothing computed" in out2


def test_the_category_does_not_change_the_outcome_of_a_store(theory_file, tmp_path, capsys):
    """The same false statement filed as a conjecture, then as proved: a store holding the conjecture's
    chunks stops the proved one as a fresh store does (sweep and search)."""
    from theory.plugins import unload_files

    relabelled = tmp_path / "relabelled.py"
    relabelled.write_text(THEORY.replace('title="a false bound", category="conjecture"',
                                         'title="a false bound", category="proved"'))
    search = ["--search", "--sizes", "3", "--budget", "300"]
    conj, _ = run_json(capsys, *sweep(theory_file, tmp_path, "t50.wrong"))
    conj_search, _ = run_json(capsys, "stress", "t50.wrong", "--theory", theory_file, *search, "--json",
                              "--db", str(tmp_path / "s.db"), "--out", str(tmp_path / "out"))
    assert conj["verdicts"]["violated"] > 0 and conj_search["verdicts"]["violated"] > 0
    unload_files()
    for db in ("s.db", "fresh.db"):              # the conjecture's store, and a fresh one
        got, _, err = run_failing(capsys, *sweep(str(relabelled), tmp_path, "t50.wrong", db=db))
        assert got["campaign"] == conj["campaign"] and "filed as proved" in err
        assert exactly_violated("t50.wrong", got["counterexample"])
        found, _, err = run_failing(capsys, "stress", "t50.wrong", "--theory", str(relabelled), *search, "--json",
                                    "--db", str(tmp_path / db), "--out", str(tmp_path / "out"))
        assert found["campaign"] == conj_search["campaign"] and "the guided search found" in err
        assert exactly_violated("t50.wrong", found["counterexample"])


def test_the_statement_names_the_campaign(theory_file, tmp_path, capsys):
    got, _ = run_json(capsys, *sweep(theory_file, tmp_path, "t50.square"))
    other = tmp_path / "other.py"
    other.write_text(THEORY.replace("delta(A**2) <= delta(A)**2", "delta(A**3) <= delta(A)**3"))
    from theory.plugins import unload_files

    unload_files()                      # one process: the first file's t50.square goes before the second's
    changed, _ = run_json(capsys, *sweep(str(other), tmp_path, "t50.square"))
    assert changed["campaign"] != got["campaign"]


def test_guided_search_finds_a_counterexample(theory_file, tmp_path, capsys):
    got, out = run_json(capsys, "stress", "t50.wrong", "--theory", theory_file, "--search", "--sizes", "3",
                        "--budget", "300", "--json", "--db", str(tmp_path / "q.db"), "--out", str(tmp_path / "o"))
    assert got["verdicts"]["violated"] >= 1 and got["counterexample"] is not None
    assert "re-checked in exact arithmetic" in out


def test_a_false_proved_bound_found_by_the_search_stops_with_one_message(theory_file, tmp_path, capsys):
    argv = ["stress", "t50.false_proved", "--theory", theory_file, "--search", "--sizes", "3", "--budget", "100",
            "--json", "--db", str(tmp_path / "q.db"), "--out", str(tmp_path / "o")]
    got, _, err = run_failing(capsys, *argv)
    assert got["refuted"]["violated"] >= 1 and "the guided search found" in err and "filed as proved" in err
    assert exactly_violated("t50.false_proved", got["counterexample"])
    again, out, _ = run_failing(capsys, *argv)                  # resumed: the same outcome
    assert again == got and "search t50.false_proved" not in out


def test_a_shrunk_search_counterexample_carries_its_own_slack_and_size(tmp_path, capsys):
    """The search shrinks a 3x3 counterexample to a 2x2 one: the record says n = 2 and the 2x2
    matrix's own exact slack, not the 3x3 one's."""
    from numerics.expr import compile_statement, exact_sides
    from theory import get
    from theory.plugins import unload_files
    from verification.store import ResultStore

    path = tmp_path / "shrink.py"
    path.write_text("from theory import Theorem, register\nfrom theory.expr import A, delta\n"
                    "register(Theorem(id='t50.shrink', title='t', category='conjecture', "
                    "statement=delta(A) <= delta(A**2)))\n")
    try:
        got, _ = run_json(capsys, "stress", "t50.shrink", "--theory", str(path), "--search", "--sizes", "3",
                          "--budget", "100", "--json", "--db", str(tmp_path / "q.db"), "--out", str(tmp_path / "o"))
        compiled = compile_statement(get("t50.shrink").statement)
        with ResultStore(tmp_path / "q.db", readonly=True) as store:
            shrunk = [r for r in store.records(got["campaign"]) if r["extra"].get("shrunk")]
        assert shrunk and any(r["provenance"]["n"] == 2 for r in shrunk)      # shrunk below the searched n = 3
        for r in shrunk:
            cex = r["extra"]["counterexample"]
            lhs, rhs = exact_sides(compiled, {k: [[Fraction(x) for x in row] for row in M] for k, M in cex.items()})
            assert r["provenance"]["n"] == len(cex["A"]) == r["extra"]["shape"][-1]
            assert r["extra"]["slack_exact"] == str(rhs - lhs) and r["slack"] == float(rhs - lhs) < 0
            assert r["extra"]["statistic"] == r["slack"]
    finally:
        unload_files()


HYPOTHESES = textwrap.dedent('''
    from sympy import Rational
    from theory import Theorem, register
    from theory.expr import A, I, delta

    register(Theorem(id="t59.causal", title="a causal half", category="proved", assume=("causal",),
                     statement=delta((I + A) / 2) >= Rational(1, 2)))
    register(Theorem(id="t59.positive", title="a positive matrix contracts", category="proved",
                     assume=("positive",), statement=delta(A) < 1))
''')


@pytest.mark.parametrize("theorem,holds", [("t59.causal", lambda M: not np.triu(M, 1).any()),
                                           ("t59.positive", lambda M: (M > 0).all())])
def test_the_search_keeps_to_the_hypotheses(tmp_path, capsys, theorem, holds):
    """True theorems under assume=: the search (hypothesis, the optimiser, the shrinking) draws only
    instances that satisfy them, so it finds no counterexample (before: a non-causal matrix, the swap
    matrix) and every find it keeps satisfies them."""
    from theory.plugins import unload_files
    from verification.store import ResultStore
    from verification.stress.checks.search import matrix_of

    path = tmp_path / "hyp.py"
    path.write_text(HYPOTHESES)
    try:
        got, _ = run_json(capsys, "stress", theorem, "--theory", str(path), "--search", "--sizes", "2,3",
                          "--budget", "200", "--json", "--db", str(tmp_path / "h.db"), "--out", str(tmp_path / "o"))
        assert got["counterexample"] is None and got["verdicts"]["violated"] == 0 and got["finds"] > 0
        with ResultStore(tmp_path / "h.db", readonly=True) as store:
            finds = list(store.records(got["campaign"]))
        assert all(holds(matrix_of(r)) for r in finds)
    finally:
        unload_files()


def test_the_sweep_counts_instances_outside_the_hypotheses_not_applicable(tmp_path):
    """A chunk of a family that breaks the hypothesis (sparse: exact zeros, under assume=("positive",)):
    every instance with a zero entry is not-applicable, none is a counterexample."""
    from theory.plugins import load_file, unload_files
    from verification.stress.checks.expr import run_chunk, spec_part
    from verification.stress.checks.plan import chunk_size, draw_matrices

    path = tmp_path / "hyp.py"
    path.write_text(HYPOTHESES)
    try:
        load_file(str(path))
        spec = {"theorem": "t59.positive", "family": "sparse", "n": 3, "count": chunk_size(3), "seed": 0,
                "sampler": "counter", **spec_part("t59.positive")}
        out = run_chunk(spec, 0)
        counts = out.summaries["t59.positive"]["counts"]
        zeros = int((draw_matrices("sparse", 3, 0, 0, "counter", 1) <= 0).any(axis=(1, 2)).sum())
        assert zeros > 0 and counts["not-applicable"] == zeros and counts.get("violated", 0) == 0
        assert not [r for r in out if "counterexample" in r.extra]
    finally:
        unload_files()


def test_paper_from_writes_the_document_of_the_run(theory_file, tmp_path, capsys):
    args = sweep(theory_file, tmp_path, "t50.wrong")
    assert main(args) == 0
    line = " ".join(args[:args.index("--json")])
    assert main(["paper", "--db", str(tmp_path / "s.db"), "--out", str(tmp_path / "doc"), "--from", line]) == 0
    text = (tmp_path / "doc" / "own.md").read_text()
    assert r"\delta\left(A B\right) \leq" in text                      # the statement, typeset by sympy
    assert "Hypotheses: $A$ and $B$ are row-stochastic $n \\times n$ matrices, of one size $n$." in text
    assert "tight share [95%]" in text and "| sparse | 4 |" in text     # the table by family and size
    assert "simplest kept counterexample" in text and "re-checked in exact arithmetic" in text
    assert (tmp_path / "doc" / "tables" / "stress-t50-wrong.csv").is_file()
    # the instances checked (4 cells of one 10,000-instance chunk), not only the 4,000 asked
    assert "40,000 instances checked (`--instances 4,000` asked" in text
    assert "t50.wrong 40000 instances checked (4000 asked, rounded up to whole chunks)" in text


def test_bad_theory_files_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    for text, what in (("x = 1 / 0\n", "line 1: ZeroDivisionError"), ("x = 1\n", "registers no theorem"),
                       ("from theory.expr import A, B, delta\nfrom theory import Theorem, register\n"
                        "register(Theorem(id='b.b', title='t', category='proved', statement=delta(A + B) <= 1))\n",
                        "rows sum to 2")):
        bad.write_text(text)
        assert main(["stress", "b.b", "--theory", str(bad), "--db", str(tmp_path / "x.db")]) == 2
        err = capsys.readouterr().err
        assert what in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()
    from theory import registry

    assert "b.b" not in registry.REGISTRY
    assert main(["stress", "no.such", "--theory", str(tmp_path / "absent.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_an_equality_condition_is_checked_against_the_exact_verdicts(tmp_path, capsys):
    from numerics.expr import compile_statement, exact_sides
    from theory.expr import A as Asym, delta
    from theory.plugins import unload_files

    path = tmp_path / "cond.py"
    path.write_text(textwrap.dedent('''
        from theory import Theorem, register
        from theory.expr import A, delta

        def disjoint(m):      # delta(A) = 1 exactly when two rows have disjoint supports
            rows = m["A"]
            return any(all(x * y == 0 for x, y in zip(r, s)) for r in rows for s in rows)

        register(Theorem(id="t50.cond", title="delta <= 1", category="proved", statement=delta(A) <= 1,
                         equality_condition=disjoint))
        register(Theorem(id="t50.cond_wrong", title="delta <= 1", category="proved", statement=delta(A) <= 1,
                         equality_condition=lambda m: False))
    '''))
    try:
        base = ["--theory", str(path), "--families", "sparse", "--sizes", "4", "--instances", "10", "--json",
                "--db", str(tmp_path / "c.db"), "--out", str(tmp_path / "o")]
        right, out = run_json(capsys, "stress", "t50.cond", *base)
        cond = right["equality_condition"]
        assert cond["checked"] == right["instances"] == 10_000 and right["verdicts"]["tight"] > 0
        assert cond["tight_said"] == right["verdicts"]["tight"] and cond["tight_missed"] == cond["said_not_tight"] == 0
        assert "agrees with every exact verdict" in out
        wrong, out, err = run_failing(capsys, "stress", "t50.cond_wrong", *base)
        assert wrong["equality_condition"]["tight_missed"] == wrong["verdicts"]["tight"] > 0
        assert "DISAGREES" in out
        # the mismatch shown: the instance, what the condition said, what exact arithmetic says
        bad = wrong["condition_mismatch"]
        assert bad["disagree"] == wrong["verdicts"]["tight"] and bad["said"] is False and bad["tight"] is True
        A = [[Fraction(x) for x in row] for row in bad["matrices"]["A"]]
        lhs, rhs = exact_sides(compile_statement(delta(Asym) <= 1), {"A": A})
        assert lhs == rhs == 1 and (bad["lhs"], bad["rhs"]) == ("1", "1")
        assert "its equality condition disagrees with the exact tight verdict" in err
        assert f"({bad['instance']})" in err and "the condition says not tight; exact arithmetic says" in err
    finally:
        unload_files()


# -- issue 59: sides as written, rows that add up, counterexamples in the records, regenerate -----------
GE = textwrap.dedent('''
    from theory import Theorem, register
    from theory.expr import A, B, I, delta

    register(Theorem(id="t59.ge", title="a false lower bound", category="conjecture",
                     statement=delta((I + A) / 2) >= delta(A)))
    register(Theorem(id="t59.ratio", title="a ratio, undefined where delta(A) = 0", category="proved",
                     statement=delta(A * B) / delta(A) <= 1))
''')


@pytest.fixture
def ge_file(tmp_path):
    from theory.plugins import unload_files

    path = tmp_path / "ge_bounds.py"
    path.write_text(GE)
    yield str(path)
    unload_files()


def test_a_ge_statement_prints_its_sides_as_written(ge_file, tmp_path, capsys):
    """delta((I + A)/2) >= delta(A): its lhs is delta((I + A)/2), in the JSON, the printed line, own.md,
    the records (store --records --json, campaign_frame) and prove, never the swapped normal form."""
    from numerics.expr import exact_matrix
    from verification.results import campaign_frame

    args = ["stress", "t59.ge", "--theory", ge_file, "--families", "dirichlet", "--sizes", "3", "--instances", "10",
            "--json", "--db", str(tmp_path / "g.db"), "--out", str(tmp_path / "o")]
    got, out = run_json(capsys, *args)
    sides, cex = got["sides"], got["counterexample"]
    A = exact_matrix(cex["A"], "A")
    ahat = [[(int(i == k) + a) / 2 for k, a in enumerate(row)] for i, row in enumerate(A.rows())]
    lhs, rhs = delta_of(ahat), delta_of(A.rows())               # computed here, from the definition
    assert sides == {"lhs": str(lhs), "relation": ">=", "rhs": str(rhs)} and lhs < rhs
    assert f"lhs = {lhs}, rhs = {rhs}: lhs >= rhs is false" in out
    line = " ".join(args[:args.index("--json")])
    assert main(["paper", "--db", str(tmp_path / "g.db"), "--out", str(tmp_path / "doc"), "--from", line]) == 0
    assert f"lhs = {lhs}, rhs = {rhs}: lhs >= rhs is false" in (tmp_path / "doc" / "own.md").read_text()
    capsys.readouterr()
    assert main(["store", "--db", str(tmp_path / "g.db"), "--campaign", got["campaign"], "--records", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["rows"]
    first = next(r for r in rows if r["instance"] == cex_instance(out))
    assert first["counterexample"] == cex                        # the exact matrices, as "p/q" strings
    assert (first["extra.lhs"], first["extra.relation"], first["extra.rhs"]) == (str(lhs), ">=", str(rhs))
    frame = campaign_frame(str(tmp_path / "g.db"), got["campaign"], records=True)
    refuted = frame[frame["verdict"] == "refuted"]
    assert len(refuted) == min(got["verdicts"]["violated"], 16)          # kept in full: at most 16 per chunk
    assert all(set(c) == {"A"} for c in refuted["counterexample"]) and set(refuted["extra.relation"]) == {">="}
    # prove at n = 2 (the swap matrix refutes it): its sides as written too
    capsys.readouterr()
    proof, said = run_json(capsys, "prove", "t59.ge", "--theory", ge_file, "--max-n", "2", "--json",
                           "--db", str(tmp_path / "p.db"), "--out", str(tmp_path / "po"))
    (res,) = proof["results"]
    assert "t59.ge: delta((1/2)*I + (1/2)*A) >= delta(A)" in said                 # the statement as written
    assert f"lhs = {res['lhs']} < rhs = {res['rhs']}" in said                     # the sides too
    M = exact_matrix(res["counterexample"]["A"], "A")
    ahat = [[(int(i == k) + a) / 2 for k, a in enumerate(row)] for i, row in enumerate(M.rows())]
    assert res["outcome"] == "counterexample"
    assert (res["lhs"], res["rhs"]) == (str(delta_of(ahat)), str(delta_of(M.rows())))


def delta_of(rows) -> Fraction:
    """delta by its definition: half the largest l1 distance between two rows (exact)."""
    rows = [[Fraction(x) for x in r] for r in rows]
    return max(sum(abs(a - b) for a, b in zip(r, s)) for r in rows for s in rows) / 2


def cex_instance(out: str) -> str:
    return out.split("simplest kept counterexample (", 1)[1].split(")", 1)[0]


def test_the_table_has_a_column_for_every_verdict_and_rows_add_up(ge_file, tmp_path, capsys):
    """delta(A B)/delta(A) is undefined where delta(A) = 0 (one-hot rows all in one column: half the
    hard 2 x 2 draws): those instances are not applicable, and the table says how many."""
    import csv

    got, out = run_json(capsys, "stress", "t59.ratio", "--theory", ge_file, "--families", "hard,dirichlet",
                        "--sizes", "2", "--instances", "2", "--json", "--db", str(tmp_path / "r.db"),
                        "--out", str(tmp_path / "o"))
    assert got["not_applicable"] > 0
    assert sum(got["verdicts"].values()) + got["not_applicable"] == got["instances"] == 20_000
    with open(tmp_path / "o" / "tables" / "stress-t59-ratio.csv") as f:
        rows = [r for r in csv.DictReader(f) if r.get("family")]
    verdicts = ("holds", "tight", "violated", "undecided", "not applicable")
    assert {r["family"]: int(r["not applicable"]) > 0 for r in rows} == {"hard": True, "dirichlet": False}
    for r in rows:
        assert sum(int(r[v]) for v in verdicts) == int(r["instances"]) == 10_000


def test_an_instance_of_a_user_theorem_regenerates_through_regenerate(ge_file, tmp_path, capsys):
    """regenerate(campaign, chunk, index, theory=FILE): the stored counterexample's exact matrices, in a
    process that has not loaded the theory file (without theory=, one line saying to pass it)."""
    from numerics.expr import exact_matrix
    from theory.errors import InvalidInput
    from theory.plugins import unload_files
    from verification.stress.checks.plan import regenerate

    got, out = run_json(capsys, "stress", "t59.ge", "--theory", ge_file, "--families", "dirichlet", "--sizes", "3",
                        "--instances", "10", "--json", "--db", str(tmp_path / "g.db"), "--out", str(tmp_path / "o"))
    chunk, _, index = cex_instance(out).rpartition("/i")
    unload_files()                                  # as a fresh process: t59.ge is not registered
    with pytest.raises(InvalidInput, match="pass theory='FILE.py'"):
        regenerate(got["campaign"], chunk, int(index))
    m = regenerate(got["campaign"], chunk, int(index), theory=ge_file)
    assert set(m) == {"A"} and m["A"].shape == (3, 3)
    assert [[str(x) for x in row] for row in exact_matrix(m["A"], "A").rows()] == got["counterexample"]["A"]
