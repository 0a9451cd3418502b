"""`attnbounds prove ID --theory FILE.py`: a user's theorem over theory.expr proved for all matrices of
small size by z3 and cvc5, or refuted with an exact counterexample; --json; resume; one-line refusals."""
import json
from fractions import Fraction

import pytest

from numerics.expr import compile_statement, exact_sides
from verification.cli import main
from verification.store import ResultStore

THEORY = '''
from theory import Theorem, register
from theory.expr import A, B, I, delta, Max
register(Theorem(id="mine.square", title="delta(A^2) <= delta(A)^2", category="proved",
                 statement=delta(A**2) <= delta(A)**2))
register(Theorem(id="mine.wrong", title="a false bound", category="conjecture",
                 statement=delta(A * B) <= Max(delta(A), delta(B)) / 2))
register(Theorem(id="mine.filed", title="a false bound filed as proved", category="proved",
                 statement=delta(A) <= delta(A**2)))
'''


@pytest.fixture
def theory(tmp_path):
    """The theory file, and the registry as it was before the test once it ends."""
    from theory.plugins import unload_files

    path = tmp_path / "mine.py"
    path.write_text(THEORY)
    yield str(path)
    unload_files()                      # its theorems leave the registry (theory.plugins' public reset)


def _prove(tmp_path, capsys, *argv):
    rc = main(["prove", *argv, "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out"), "--json"])
    out = capsys.readouterr().out
    return rc, out, json.loads(out.strip().splitlines()[-1])


def test_a_true_theorem_is_proved_at_n2_and_resumed_from_the_store(tmp_path, capsys, theory):
    rc, out, js = _prove(tmp_path, capsys, "mine.square", "--theory", theory)
    assert rc == 0 and js["theorem"] == "mine.square"
    assert [(r["n"], r["outcome"], r["counterexample"]) for r in js["results"]] == [(2, "proved", None)]  # default 2
    assert js["results"][0]["z3"] == js["results"][0]["cvc5"] == "proved"
    assert "n = 2: proved for every 2x2 row-stochastic A" in out
    assert (tmp_path / "out" / "tables" / "prove-expr.md").exists()
    with ResultStore(tmp_path / "r.db") as store:
        campaigns = [c for c in store.campaigns() if c.startswith("prove.")]
        assert campaigns == ["prove.expr-smt-v2-timeout10s"]              # never the paper's campaign
        before = (store.count(campaigns[0]), sorted(store.done_chunks(campaigns[0])))
    rc, out, again = _prove(tmp_path, capsys, "mine.square", "--theory", theory)
    assert rc == 0 and again == js and "SMT proofs" not in out            # answered from the store
    with ResultStore(tmp_path / "r.db") as store:
        assert (store.count(campaigns[0]), sorted(store.done_chunks(campaigns[0]))) == before


def test_a_false_theorem_is_refuted_with_an_exact_counterexample(tmp_path, capsys, theory):
    from theory import get

    rc, out, js = _prove(tmp_path, capsys, "mine.wrong", "--theory", theory, "--max-n", "3")
    assert rc == 0 and js["theorem"] == "mine.wrong"
    (res,) = js["results"]                                                 # refuted at 2: n = 3 not run
    assert res["n"] == 2 and res["outcome"] == "counterexample" and res["confirmed"] is True
    mats = {k: [[Fraction(v) for v in row] for row in M] for k, M in res["counterexample"].items()}
    assert sorted(mats) == ["A", "B"]
    assert all(sum(row) == 1 and min(row) >= 0 and len(row) == 2 for M in mats.values() for row in M)
    lhs, rhs = exact_sides(compile_statement(get("mine.wrong").statement), mats)
    assert lhs > rhs and (str(lhs), str(rhs)) == (res["lhs"], res["rhs"])
    assert "counterexample, re-checked exactly" in out and "n = 3: not run (refuted" in out
    for k, M in res["counterexample"].items():
        assert f"{k} = [[{', '.join(M[0])}]" in out
    with ResultStore(tmp_path / "r.db") as store:                          # a conjecture: an outcome, refuted
        (rec,) = [r for r in store.records() if r["theorem"] == "mine.wrong"]
        assert rec["verdict"] == "refuted" and rec["extra"]["statistic"] == float(rhs - lhs)


def test_a_false_theorem_filed_as_proved_stops_loudly_with_its_counterexample(tmp_path, capsys, theory):
    from verification.options import REFUTED

    rc, out, js = _prove(tmp_path, capsys, "mine.filed", "--theory", theory)
    assert rc == REFUTED == 3 and "filed as proved" in out          # as stress: not 1 (a bug), not 2 (bad input)
    assert js["results"][0]["outcome"] == "counterexample" and js["results"][0]["counterexample"]["A"]


def test_the_json_line_of_a_builtin_statement(tmp_path, capsys):
    rc, _, js = _prove(tmp_path, capsys, "d1.bound", "--max-n", "2", "--timeout", "30")
    assert rc == 0 and js["theorem"] == "d1.bound"
    assert [(r["statement"], r["n"], r["outcome"], r["theorem"]) for r in js["results"]] == [
        ("d1.bound", 2, "proved", "dobrushin.factor")]


def test_bad_theorems_are_one_line_and_exit_2(tmp_path, capsys, theory):
    bad = tmp_path / "bad.py"
    bad.write_text("from theory import Theorem, register\nfrom theory.expr import A, B, delta\n"
                   "register(Theorem(id='mine.bad', title='t', category='conjecture', statement=delta(A + B) <= 1))\n")
    db, out = str(tmp_path / "r.db"), str(tmp_path / "out")
    for argv, what in ((["mine.bad", "--theory", str(bad)], "rows sum to 2"),
                       (["rank.linear.deficiency"], "not over theory.expr"),
                       (["mine.nope", "--theory", theory], "unknown theorem"),
                       (["mine.square", "d1.bound", "--theory", theory], "two commands")):
        assert main(["prove", *argv, "--db", db, "--out", out, "--json"]) == 2, argv
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert what in err and len(err.splitlines()) == 1 and not captured.out, (argv, err)


HYPOTHESES = '''
from sympy import Rational
from theory import Theorem, register
from theory.expr import A, I, delta
register(Theorem(id="hyp.causal", title="a causal half", category="proved", assume=("causal",),
                 statement=delta((I + A) / 2) >= Rational(1, 2)))
register(Theorem(id="hyp.positive", title="a positive matrix contracts", category="proved", assume=("positive",),
                 statement=delta(A) < 1))
register(Theorem(id="hyp.bare", title="delta < 1 without the hypothesis", category="conjecture",
                 statement=delta(A) < 1))
register(Theorem(id="hyp.causal_false", title="a false causal bound", category="conjecture", assume=("causal",),
                 statement=delta(A) <= Rational(1, 2)))
'''


def test_the_hypotheses_decide_what_prove_proves_and_refutes(tmp_path, capsys):
    """prove, like the stress sweep and search, ranges over the matrices that satisfy assume=: the
    theorems true under their hypotheses are proved (the search and the sweep find no counterexample
    either, tests/verification/test_stress_expr.py), the same bound without them is refuted, and a
    false causal bound's counterexample is causal."""
    from theory import get
    from theory.plugins import unload_files

    path = tmp_path / "hyp.py"
    path.write_text(HYPOTHESES)
    try:
        for theorem in ("hyp.causal", "hyp.positive"):
            rc, _, js = _prove(tmp_path, capsys, theorem, "--theory", str(path), "--max-n", "3")
            assert rc == 0 and [(r["n"], r["outcome"]) for r in js["results"]] == [(2, "proved"), (3, "proved")]
        rc, _, js = _prove(tmp_path, capsys, "hyp.bare", "--theory", str(path))
        assert rc == 0 and js["results"][0]["outcome"] == "counterexample"
        A = [[Fraction(v) for v in row] for row in js["results"][0]["counterexample"]["A"]]
        assert min(v for row in A for v in row) == 0                           # outside "positive"
        rc, _, js = _prove(tmp_path, capsys, "hyp.causal_false", "--theory", str(path), "--max-n", "3")
        (res,) = [r for r in js["results"] if r["outcome"] == "counterexample"]
        A = [[Fraction(v) for v in row] for row in res["counterexample"]["A"]]
        assert all(A[i][j] == 0 for i in range(len(A)) for j in range(i + 1, len(A)))   # causal
        lhs, rhs = exact_sides(compile_statement(get("hyp.causal_false").statement), {"A": A})
        assert lhs > rhs
    finally:
        unload_files()


VOCABULARY = '''
from theory import Theorem, register
from theory.expr import (A, Eq, I, Rational, delta, entry_min, exp, logits, n, norm_1, norm_inf, parameter, ptp,
                         slem, softmax, spread, tokens, trace)
alpha = parameter("alpha", 0, 1)
X, L = tokens("X"), logits("L")
register(Theorem(id="voc.mix", title="a residual mix contracts", category="proved",
                 statement=delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A)))
register(Theorem(id="voc.mix_wrong", title="a residual mix, wrong", category="conjecture",
                 statement=delta(alpha * I + (1 - alpha) * A) <= alpha * delta(A)))
register(Theorem(id="voc.spread", title="delta contracts the spread", category="proved",
                 statement=spread(A * X) <= delta(A) * spread(X)))
register(Theorem(id="voc.min", title="the smallest entry", category="proved", statement=entry_min(A) <= 1 / n))
register(Theorem(id="voc.rows", title="rows sum to 1", category="proved", statement=Eq(norm_inf(A), 1)))
register(Theorem(id="voc.trace", title="a trace of 1", category="conjecture", statement=Eq(trace(A), 1)))
register(Theorem(id="voc.where", title="entries at least 1/4", category="proved",
                 statement=delta(A) <= Rational(1, 2), where=[entry_min(A) >= Rational(1, 4)]))
register(Theorem(id="voc.doubly", title="columns sum to 1", category="proved", assume=("doubly-stochastic",),
                 statement=Eq(norm_1(A), 1)))
register(Theorem(id="voc.symmetric", title="symmetric logits", category="proved", assume=("symmetric",),
                 statement=Eq(norm_1(L), norm_inf(L))))
register(Theorem(id="voc.softmax", title="softmax contracts", category="proved",
                 statement=delta(softmax(L)) <= 1 - exp(-ptp(L))))
register(Theorem(id="voc.slem", title="slem below delta", category="proved", statement=slem(A) <= delta(A)))
'''


@pytest.fixture
def vocabulary(tmp_path):
    from theory.plugins import unload_files

    path = tmp_path / "voc.py"
    path.write_text(VOCABULARY)
    yield str(path)
    unload_files()


def test_a_parameter_theorem_is_proved_and_a_false_one_refuted_with_the_parameters_exact_value(
        tmp_path, capsys, vocabulary):
    from numerics.expr import compare, sides
    from theory import get

    rc, out, js = _prove(tmp_path, capsys, "voc.mix", "--theory", vocabulary, "--max-n", "2")
    assert rc == 0 and [(r["n"], r["outcome"]) for r in js["results"]] == [(2, "proved")]
    assert js["results"][0]["scope"] == "2x2 row-stochastic A, alpha in [0, 1]"
    assert "n = 2: proved for every 2x2 row-stochastic A, alpha in [0, 1]" in out
    rc, out, js = _prove(tmp_path, capsys, "voc.mix_wrong", "--theory", vocabulary)
    (res,) = js["results"]
    assert rc == 0 and res["outcome"] == "counterexample" and res["confirmed"] is True
    cex = res["counterexample"]
    assert sorted(cex) == ["A", "alpha"] and isinstance(cex["alpha"], str)
    assert 0 <= Fraction(cex["alpha"]) <= 1 and f"alpha = {cex['alpha']}" in out
    lhs, rhs = sides(compile_statement(get("voc.mix_wrong").statement), cex)     # the exact re-check, again
    assert compare(lhs, rhs) == 1 and (str(lhs), str(rhs)) == (res["lhs"], res["rhs"])


def test_tokens_are_proved_at_the_widths_the_result_names(tmp_path, capsys, vocabulary):
    rc, out, js = _prove(tmp_path, capsys, "voc.spread", "--theory", vocabulary)
    (res,) = js["results"]
    assert rc == 0 and res["outcome"] == "proved" and "d = 1, 2 (these widths only)" in res["scope"]
    assert "real 2xd X with d = 1, 2 (these widths only)" in out
    rc, _, js = _prove(tmp_path, capsys, "voc.min", "--theory", vocabulary, "--max-n", "3")
    assert rc == 0 and [r["outcome"] for r in js["results"]] == ["proved", "proved"]


def test_equalities_where_relations_and_assumptions(tmp_path, capsys, vocabulary):
    for theorem in ("voc.rows", "voc.where", "voc.doubly", "voc.symmetric"):
        rc, out, js = _prove(tmp_path, capsys, theorem, "--theory", vocabulary)
        assert rc == 0 and js["results"][0]["outcome"] == "proved", (theorem, js)
    assert "where entry_min(A) >= 1/4" in _prove(tmp_path, capsys, "voc.where", "--theory", vocabulary)[2][
        "results"][0]["scope"]
    rc, out, js = _prove(tmp_path, capsys, "voc.trace", "--theory", vocabulary)
    (res,) = js["results"]
    assert rc == 0 and res["outcome"] == "counterexample" and res["lhs"] != res["rhs"]
    assert f"lhs = {res['lhs']} != rhs = {res['rhs']}" in out


@pytest.mark.parametrize("theorem, what", [("voc.softmax", "softmax"), ("voc.slem", "slem")])
def test_what_smt_cannot_encode_is_refused_in_one_line_creating_nothing(tmp_path, capsys, vocabulary, theorem, what):
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert main(["prove", theorem, "--theory", vocabulary, "--db", str(db), "--out", str(out), "--json"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and f"prove cannot take {what}" in err and "attnbounds stress" in err, err
    assert not captured.out and not db.exists() and not out.exists()
