"""Issue 60: a theory file over the whole vocabulary (logits and softmax, tokens, parameters, any number
of stochastic matrices, doubly stochastic and symmetric ones, where=) through `attnbounds stress ID
--theory F` and `stress --search`: classical true inequalities give 0 violated with at least 90% of
instances decided, their halved variants an exact counterexample of every symbol that violates the
statement exactly (re-checked here with numerics.expr.sides and compare, independently of the suite's
own re-check), found by the sweep or the search; the families keep every hypothesis exactly, both
samplers and Dask give the same counts, records, campaign_frame, regenerate and own.md carry every
symbol, a cell that does not fit is refused in one line."""
import json
import textwrap
from fractions import Fraction

import numpy as np
import pytest

from verification.cli import main

THEORY = textwrap.dedent('''
    from sympy import Rational
    from theory import Theorem, register
    from theory.expr import (A, B, I, Eq, col_min_sum, delta, entry_min, exp, logits, n, norm_inf, parameter, ptp,
                             slem, softmax, spread, tanh, tokens)

    L, X = logits("L"), tokens("X")
    alpha = parameter("alpha", 0, 1)


    def both(name, true, false, **kw):
        register(Theorem(id=f"lang.{name}", title=name, category="proved", statement=true, **kw))
        register(Theorem(id=f"lang.{name}_false", title=f"{name}, halved", category="conjecture", statement=false,
                         **kw))


    both("softmax", delta(softmax(L)) <= 1 - exp(-ptp(L)), delta(softmax(L)) <= (1 - exp(-ptp(L))) / 2)
    both("tanh", delta(softmax(L)) <= tanh(ptp(L) / 2), delta(softmax(L)) <= tanh(ptp(L) / 2) / 2)
    both("spread", spread(A * X) <= delta(A) * spread(X), spread(A * X) <= delta(A) * spread(X) / 2)
    both("slem", slem(A) <= delta(A), slem(A) <= delta(A) / 2)
    both("doeblin", delta(A) <= 1 - col_min_sum(A), delta(A) <= (1 - col_min_sum(A)) / 2)
    both("entry", entry_min(A) <= 1 / n, entry_min(A) <= 1 / (4 * n))
    both("lazy", delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A),
         delta(alpha * I + (1 - alpha) * A) <= (alpha + (1 - alpha) * delta(A)) / 2)
    both("norm", Eq(norm_inf(A * B), 1), Eq(norm_inf(A * B), Rational(1, 2)))
    both("transpose", delta(A * A.T) <= delta(A) * delta(A.T), delta(A * A.T) <= delta(A) * delta(A.T) / 2,
         assume=("doubly-stochastic",))
    both("symmetric", slem(A) <= delta(A), slem(A) <= delta(A) / 2, assume=("symmetric",))
    both("bounded", delta(softmax(L)) <= 1 - exp(-2), delta(softmax(L)) <= (1 - exp(-2)) / 4, where=[ptp(L) <= 2])
''')

# the cells of each statement: a few thousand instances (chunks of 1,000 beyond delta alone) at n = 2, 3, 4
CELLS = {"softmax": ["--families", "gauss-1,grid"], "tanh": ["--families", "gauss-4,grid"],
         "spread": ["--families", "sparse+gauss-1,dirichlet+grid", "--dims", "1,2"],
         "slem": ["--families", "dirichlet,sparse"], "doeblin": ["--families", "dirichlet,sparse"],
         "entry": ["--families", "dirichlet,hard"], "lazy": ["--families", "dirichlet,sparse"],
         "norm": ["--families", "dirichlet"], "transpose": [], "symmetric": [],
         "bounded": ["--families", "gauss-0.25,grid"]}


@pytest.fixture
def theory_file(tmp_path):
    from theory.plugins import unload_files

    path = tmp_path / "lang_bounds.py"
    path.write_text(THEORY)
    yield str(path)
    unload_files()                      # the registry as it was, for the other tests


def run_json(capsys, *argv, status=0):
    rc = main(list(argv))
    captured = capsys.readouterr()
    assert rc == status, captured.err
    return json.loads(captured.out.strip().splitlines()[-1]), captured.out


def sweep(theory_file, tmp_path, name, *extra, db="s.db"):
    return ["stress", f"lang.{name}", "--theory", theory_file, "--sizes", "2,3,4", "--instances", "1", "--json",
            "--db", str(tmp_path / db), "--out", str(tmp_path / "out"), *CELLS[name.removesuffix("_false")], *extra]


def exactly_violated(theorem, cex):
    """Every symbol of the statement is in the counterexample, exact and inside the hypotheses (checked here
    from their definitions), every where= relation holds, and the statement is false there: exactly, or by
    a certified margin (numerics.expr.sides, compare)."""
    from numerics.expr import compare, compile_statement, sides
    from theory import get

    th = get(theorem)
    compiled = compile_statement(th.statement, th.assume, th.where)
    kinds = dict(compiled.roles)
    params = {p: (lo, hi) for p, lo, hi in compiled.params}
    assert set(cex) == set(kinds) | set(params)
    inst = {}
    for name, value in cex.items():
        if name in params:
            assert isinstance(value, str)
            inst[name] = Fraction(value)
            assert params[name][0] <= inst[name] <= params[name][1]
            continue
        M = inst[name] = [[Fraction(x) for x in row] for row in value]
        assert all(isinstance(x, str) for row in value for x in row)
        if kinds[name] == "stochastic":
            assert all(min(row) >= 0 and sum(row) == 1 for row in M)
            if {"doubly-stochastic", "symmetric"} & set(th.assume):
                assert all(sum(col) == 1 for col in zip(*M))
            if "symmetric" in th.assume:
                assert all(M[i][j] == M[j][i] for i in range(len(M)) for j in range(len(M)))
    for w in th.where:
        lo, hi = sides(compile_statement(w), {k: v for k, v in inst.items()
                                              if k in compile_statement(w).matrices})
        assert compare(lo, hi) in (-1, 0)
    lhs, rhs = sides(compiled, inst)
    c = compare(lhs, rhs)
    return c is not None and (c != 0 if compiled.equal else c >= 0 if compiled.strict else c > 0)


@pytest.mark.parametrize("name", list(CELLS))
def test_a_true_statement_has_no_violation_and_is_decided(theory_file, tmp_path, capsys, name):
    got, _ = run_json(capsys, *sweep(theory_file, tmp_path, name))
    v = got["verdicts"]
    assert v["violated"] == 0 and got["counterexample"] is None
    assert got["instances"] == sum(v.values()) + got["not_applicable"] >= 2000
    assert v["undecided"] <= 0.1 * got["instances"]                       # at least 90% decided
    assert v["holds"] + v["tight"] > 0.5 * got["instances"]                # and mostly applicable
    if name == "norm":                                                     # an equality: tight everywhere
        assert v["tight"] == got["instances"]


@pytest.mark.parametrize("name", list(CELLS))
def test_a_false_variant_gets_an_exact_counterexample_of_every_symbol(theory_file, tmp_path, capsys, name):
    got, out = run_json(capsys, *sweep(theory_file, tmp_path, f"{name}_false"))
    assert got["verdicts"]["violated"] > 0 and "re-checked in exact arithmetic" in out
    assert exactly_violated(f"lang.{name}_false", got["counterexample"])
    assert got["sides"]["relation"] == ("=" if name == "norm" else "<=")


@pytest.mark.parametrize("name", ["softmax", "lazy", "spread", "transpose", "bounded"])
def test_the_search_finds_an_exact_counterexample_of_every_kind(theory_file, tmp_path, capsys, name):
    from verification.store import ResultStore

    got, out = run_json(capsys, "stress", f"lang.{name}_false", "--theory", theory_file, "--search", "--sizes", "2,3",
                        "--budget", "200", "--json", "--db", str(tmp_path / "q.db"), "--out", str(tmp_path / "o"))
    assert got["verdicts"]["violated"] >= 1 and exactly_violated(f"lang.{name}_false", got["counterexample"])
    with ResultStore(tmp_path / "q.db", readonly=True) as store:
        finds = list(store.records(got["campaign"]))
    # every violated find is stored with its exact counterexample, and every find inside the hypotheses
    for r in finds:
        if r["verdict"] == "refuted":
            assert exactly_violated(f"lang.{name}_false", r["extra"]["counterexample"])
    assert set(finds[0]["extra"]["values"]) == set(got["counterexample"])


def test_a_true_statement_survives_the_search(theory_file, tmp_path, capsys):
    got, _ = run_json(capsys, "stress", "lang.lazy", "--theory", theory_file, "--search", "--sizes", "2,3",
                      "--budget", "200", "--json", "--db", str(tmp_path / "q.db"), "--out", str(tmp_path / "o"))
    assert got["verdicts"]["violated"] == 0 and got["finds"] > 0 and got["counterexample"] is None


def test_the_families_keep_every_hypothesis_exactly():
    """birkhoff and symmetric are doubly stochastic (and symmetric) in exact arithmetic, from both
    samplers; grid is quarters in [-8, 8]; gauss-s has standard deviation s; a symmetric logits matrix is
    symmetric; a parameter takes its ends about 1/8 of the time each and stays in its interval."""
    from numerics.sources.counter_random import real_counter, regenerate_one, sample_counter
    from numerics.sources.random import generator, parameter_values, parameter_words, real, sample
    from numerics.stochastic import ExactMatrix
    from verification.stress.checks.draws import Law, draw_values

    for family in ("birkhoff", "symmetric"):
        for M in list(sample_counter(family, 4, 50, seed=1, chunk=0)) + list(sample(family, 3, 50,
                                                                                    generator(1, family, 3, 0))):
            E = ExactMatrix.from_floats(M).rows()
            assert all(sum(col) == 1 for col in zip(*E)) and all(sum(row) == 1 for row in E)
            assert family == "birkhoff" or all(E[i][j] == E[j][i] for i in range(len(E)) for j in range(len(E)))
            assert (M > 0).all()                       # the covering permutations: positive but for a 0 weight
    assert (regenerate_one("symmetric", 5, 2, 3, 7) == sample_counter("symmetric", 5, 9, 2, 3)[7]).all()
    for Z in (real_counter("grid", 3, 2, 4000, 0, 0), real("grid", 3, 2, 4000, generator(0, "grid", 3, 0))):
        assert (Z * 4 == np.round(Z * 4)).all() and Z.min() == -8 and Z.max() == 8
    for s in (0.25, 4):
        assert abs(real_counter(f"gauss-{s}", 4, 4, 4000, 0, 0).std() / s - 1) < 0.05
    law = Law((("L", "logits"), ("X", "tokens")), (("alpha", Fraction(1, 3), Fraction(2)),), ("symmetric",))
    for sampler in ("counter", "numpy"):
        v = draw_values(law, "grid", 3, 2, 0, 0, sampler, 1000)
        assert (v["L"] == np.swapaxes(v["L"], 1, 2)).all() and v["X"].shape == (1000, 3, 2)
        assert all(Fraction(1, 3) <= a <= 2 for a in v["alpha"])
    alphas = parameter_values(parameter_words(8000, generator(0, "p", 2, 0)), Fraction(0), Fraction(1))
    assert 0.1 < alphas.count(0) / 8000 < 0.15 and 0.1 < alphas.count(1) / 8000 < 0.15
    assert all(a.denominator <= 2 ** 16 for a in alphas)


def test_every_symbol_is_in_the_records_campaign_frame_regenerate_and_own_md(theory_file, tmp_path, capsys):
    from numerics.expr import exact_matrix
    from theory.plugins import unload_files
    from verification.results import campaign_frame
    from verification.stress.checks.plan import regenerate

    args = sweep(theory_file, tmp_path, "lazy_false")
    got, out = run_json(capsys, *args)
    cex = got["counterexample"]
    assert set(cex) == {"A", "alpha"} and f"alpha = {cex['alpha']}" in out
    assert main(["store", "--db", str(tmp_path / "s.db"), "--campaign", got["campaign"], "--records", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["rows"]
    kept = [r["counterexample"] for r in rows if r["counterexample"]]
    assert cex in kept and all(set(k) == {"A", "alpha"} and isinstance(k["alpha"], str) for k in kept)
    frame = campaign_frame(str(tmp_path / "s.db"), got["campaign"], records=True)
    row = frame[[c == cex for c in frame["counterexample"]]].iloc[0]
    # what own.md (`paper --from` this run) says of the sweep: the counterexample with its parameter
    from verification.store import ResultStore
    from verification.stress.checks import Plan
    from verification.stress.checks.plan import StressPlan
    from verification.stress.report import own_lines

    plan = Plan((StressPlan("lang.lazy_false", ("dirichlet", "sparse"), (2, 3, 4), 1),))
    with ResultStore(tmp_path / "s.db", readonly=True) as store:
        assert f"  alpha = {cex['alpha']}" in "\n".join(own_lines(store, plan))
    # regenerated in a process that has not loaded the theory file: the same exact values
    unload_files()
    m = regenerate(got["campaign"], row["chunk"], int(row["index"]), theory=theory_file)
    assert set(m) == {"A", "alpha"} and isinstance(m["alpha"], Fraction) and str(m["alpha"]) == cex["alpha"]
    assert [[str(x) for x in r] for r in exact_matrix(m["A"], "A").rows()] == cex["A"]


def test_tokens_cells_run_over_d_and_regenerate(theory_file, tmp_path, capsys):
    from verification.stress.checks.campaigns import chunk_dim
    from verification.stress.checks.plan import regenerate

    from verification.results import campaign_frame

    got, out = run_json(capsys, *sweep(theory_file, tmp_path, "spread_false"))
    assert "(2 families x 3 sizes x 2 widths d = 12 cells" in out
    chunks = set(campaign_frame(str(tmp_path / "s.db"), got["campaign"])["chunk"])
    assert {"sparse+gauss-1/n2/d2/c0", "dirichlet+grid/n4/d1/c0"} <= chunks and len(chunks) == 12
    cex = got["counterexample"]
    assert set(cex) == {"A", "X"} and len(cex["X"]) == len(cex["A"])
    frame = campaign_frame(str(tmp_path / "s.db"), got["campaign"], records=True)
    row = frame[[c == cex for c in frame["counterexample"]]].iloc[0]
    m = regenerate(got["campaign"], row["chunk"], int(row["index"]), theory=theory_file)
    assert m["X"].shape == (len(cex["A"]), chunk_dim(row["chunk"]))
    assert [[str(Fraction(x)) for x in r] for r in m["X"].tolist()] == cex["X"]
    # the widths name the campaign
    other, _ = run_json(capsys, *sweep(theory_file, tmp_path, "spread_false")[:-2], "--dims", "3")
    assert other["campaign"] != got["campaign"]


def test_both_samplers_and_two_dask_workers(theory_file, tmp_path, capsys):
    cells = ["--sizes", "2,3", "--instances", "1", "--json", "--out", str(tmp_path / "o"), "--families", "grid"]
    serial, _ = run_json(capsys, "stress", "lang.softmax_false", "--theory", theory_file, *cells,
                         "--db", str(tmp_path / "a.db"))
    dask, out = run_json(capsys, "stress", "lang.softmax_false", "--theory", theory_file, *cells,
                         "--db", str(tmp_path / "b.db"), "--workers", "2")
    assert "Dask scheduler" in out and dask == serial
    numpy, _ = run_json(capsys, "stress", "lang.softmax_false", "--theory", theory_file, *cells, "--sampler", "numpy",
                        "--db", str(tmp_path / "c.db"))
    assert numpy["campaign"] != serial["campaign"] and numpy["instances"] == serial["instances"] == 2000
    assert exactly_violated("lang.softmax_false", numpy["counterexample"])


@pytest.mark.parametrize("extra,message", [
    (["--families", "grid"], "'grid' draws real matrices (logits, tokens) but the statement has none"),
    (["--families", "sparse"], "does not fit the theorem's hypotheses (assume='symmetric' needs one of symmetric)"),
    (["--dims", "2"], "--dims: applies to a statement with a tokens matrix"),
    (["--families", "dirichlet+grid"], "names a stochastic and a real family, but the statement has no logits"),
])
def test_a_cell_that_does_not_fit_is_refused_in_one_line(theory_file, tmp_path, capsys, extra, message):
    rc = main(["stress", "lang.symmetric", "--theory", theory_file, "--db", str(tmp_path / "x.db"), *extra])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()


def test_plain_families_of_both_kinds_pair_and_defaults_follow_the_hypotheses(theory_file):
    from theory.plugins import load_file
    from verification.stress.checks.draws import families
    from verification.stress.checks.plan import StressPlan
    from verification.stress.checks.specs import spec_of

    load_file(theory_file)
    spread = spec_of("lang.spread")
    assert families(spread.law, ("dirichlet", "sparse", "grid")) == ("dirichlet+grid", "sparse+grid")
    assert spread.dims == (1, 2, 4) and all("+" in f for f in spread.families)
    assert spec_of("lang.transpose").families == ("birkhoff", "symmetric")
    assert spec_of("lang.symmetric").families == ("symmetric",)
    assert spec_of("lang.softmax").families == ("gauss-0.25", "gauss-1", "gauss-4", "grid")
    # the parameter's interval and where= name the campaign; chunks beyond delta hold 1,000 instances
    lazy = StressPlan("lang.lazy", ("dirichlet",), (3,), 1)
    assert "alpha in [0, 1]" in lazy.spec.statement and lazy.total() == 1000
    assert "where ptp(L) <= 2" in spec_of("lang.bounded").statement


def test_the_hypothesis_check_and_the_witness_know_every_kind(theory_file):
    from theory import get
    from theory.plugins import load_file

    load_file(theory_file)
    lazy = get("lang.lazy")
    w = lazy.witness()
    assert set(w) == {"A", "alpha"} and lazy.hypotheses(w)
    assert "alpha: 3/2 is outside its interval [0, 1]" == lazy.hypotheses({**w, "alpha": "3/2"}).reason
    spread = get("lang.spread")
    w = spread.witness()
    assert set(w) == {"A", "X"} and spread.hypotheses(w)
    assert "X: has 3 rows but A has 2" in spread.hypotheses({**w, "X": [[1], [2], [3]]}).reason
    sym = get("lang.symmetric")
    assert "entries (0, 1) and (1, 0) differ (assumed symmetric)" in sym.hypotheses(
        {"A": [["1/2", "1/2"], ["1/4", "3/4"]]}).reason
    assert "column 0 sums to 3/4" in get("lang.transpose").hypotheses({"A": [["1/2", "1/2"], ["1/4", "3/4"]]}).reason
    soft = get("lang.softmax")
    assert set(soft.witness()) == {"L"} and "L: must be square" in soft.hypotheses({"L": [[0, 1]]}).reason
