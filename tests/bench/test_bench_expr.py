"""A statement of your own against the built-in kernel it restates, in the same session (issue 50, item 8):

    restated D1   numerics.expr.decide on delta((I + A)/2) <= (1 + delta(A))/2, compiled once: the
                  float pass with its error bounds, every tie certified exactly (about a quarter of
                  Dirichlet(1) matrices at n = 16 are tight), rationals for what is left
    built-in D1   numerics.dobrushin.factor_check on the same matrices: the baseline

10^5 Dirichlet(1) matrices at n = 16; target: the restated D1 at no less than a third of the
built-in's rate. Beside them the float evaluation alone (numerics.expr.evaluate) and the corollary of
D2 delta(A^2) <= delta(A)^2 for scale. With ``--benchmark-disable`` (make test) each runs once on
2,000 matrices and checks its answer against the built-in.

    softmax       numerics.expr.evaluate on delta(softmax(L)) <= 1 - exp(-ptp(L)), 10^5 standard
                  normal logits at n = 16 (the float pass with its bounds: exp, the row sums, the
                  softmax and exp rules, ptp), against the same pass on the delta-only statement
                  delta(A^2) <= delta(A) on the Dirichlet matrices; target: at least a fifth of its rate
    softmax sweep the same two statements decided (numerics.expr.decide: the float filter, then exact
                  or certified arithmetic for what it cannot separate), as a sweep decides a drawn
                  chunk, and through the public entry (attnbounds.decide on the batch); target: the
                  softmax statement at no less than a fifth of the delta-only statement's rate
"""
from __future__ import annotations

import numpy as np
import pytest

from numerics.dobrushin import factor_check
from numerics.expr import compile_statement, decide, evaluate
from numerics.sources.random import generator, sample
from theory.expr import A, I, delta, exp, logits, ptp, softmax

N = 16
D1 = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
SQUARE = compile_statement(delta(A**2) <= delta(A)**2)
BASELINE = "factor_check (built-in D1)"
L = logits("L")
SOFTMAX = compile_statement(delta(softmax(L)) <= 1 - exp(-ptp(L)))
DELTA_ONLY = compile_statement(delta(A**2) <= delta(A))
SOFT = f"statement: softmax against delta-only, n={N}"
SOFT_BASELINE = "evaluate (delta(A^2) <= delta(A), dirichlet)"


@pytest.fixture(scope="module")
def matrices(request):
    opt = request.config.getoption
    disabled = opt("benchmark_disable", False) and not opt("benchmark_enable", False)
    count = 2_000 if disabled else 100_000
    return sample("dirichlet", N, count, generator(0, "dirichlet", N, 0))


def _record(benchmark, bench_record, name, B, baseline=False, target=None):  # noqa: ANN001
    if benchmark.disabled or benchmark.stats is None:
        return
    bench_record(group=benchmark.group, name=name, seconds=benchmark.stats.stats.median,
                 min=benchmark.stats.stats.min, matrices=B, ops=B * N * (N - 1) // 2 * N, baseline=baseline,
                 target=target)


@pytest.mark.benchmark(group=f"statement: D1 restated, dirichlet n={N}")
def test_builtin_d1(benchmark, bench_record, matrices):
    fc = benchmark(factor_check, matrices)
    assert 0.15 < np.mean(fc.equality) < 0.4
    _record(benchmark, bench_record, BASELINE, len(matrices), baseline=True)


@pytest.mark.benchmark(group=f"statement: D1 restated, dirichlet n={N}")
def test_restated_d1(benchmark, bench_record, matrices):
    d = benchmark(decide, D1, {"A": matrices})
    np.testing.assert_array_equal(d.equal, factor_check(matrices).equality)
    assert d.counts()["violated"] == 0 and d.rational_count == 0
    _record(benchmark, bench_record, "decide (restated D1, exact ties included)", len(matrices),
            target=(BASELINE, 1 / 3, ">= 1/3 the built-in's rate"))


@pytest.mark.benchmark(group=f"statement: D1 restated, dirichlet n={N}")
def test_restated_d1_float_pass(benchmark, bench_record, matrices):
    lhs, rhs, err = benchmark(evaluate, D1, {"A": matrices})
    assert (rhs - lhs >= -(err[:, 0] + err[:, 1])).all()
    _record(benchmark, bench_record, "evaluate (float sides and bounds only)", len(matrices))


@pytest.mark.benchmark(group=f"statement: D1 restated, dirichlet n={N}")
def test_corollary_of_d2(benchmark, bench_record, matrices):
    d = benchmark(decide, SQUARE, {"A": matrices})
    assert d.counts()["violated"] == 0
    _record(benchmark, bench_record, "decide (delta(A^2) <= delta(A)^2)", len(matrices))


@pytest.fixture(scope="module")
def scores(matrices):
    return np.random.default_rng(0).standard_normal((len(matrices), N, N))


@pytest.mark.benchmark(group=SOFT)
def test_delta_only_float_pass(benchmark, bench_record, matrices):
    lhs, rhs, err = benchmark(evaluate, DELTA_ONLY, {"A": matrices})
    assert (rhs - lhs >= -(err[:, 0] + err[:, 1])).all()
    _record(benchmark, bench_record, SOFT_BASELINE, len(matrices), baseline=True)


@pytest.mark.benchmark(group=SOFT)
def test_softmax_float_pass(benchmark, bench_record, scores):
    lhs, rhs, err = benchmark(evaluate, SOFTMAX, {"L": scores})
    assert (np.abs(rhs - lhs) > err.sum(axis=1)).mean() > 0.99 and (rhs - lhs >= -err.sum(axis=1)).all()
    _record(benchmark, bench_record, "evaluate (delta(softmax(L)) <= 1 - exp(-ptp(L)))", len(scores),
            target=(SOFT_BASELINE, 1 / 5, ">= 1/5 the delta-only statement's rate"))


SWEEP_SOFT = f"statement sweep: softmax against delta-only, decide, n={N}"
SWEEP_SOFT_BASELINE = "decide (delta(A^2) <= delta(A), dirichlet)"


@pytest.mark.benchmark(group=SWEEP_SOFT)
def test_delta_only_decide(benchmark, bench_record, matrices):
    d = benchmark(decide, DELTA_ONLY, {"A": matrices})
    assert d.counts()["violated"] == 0
    _record(benchmark, bench_record, SWEEP_SOFT_BASELINE, len(matrices), baseline=True)


@pytest.mark.benchmark(group=SWEEP_SOFT)
def test_softmax_decide(benchmark, bench_record, scores):
    d = benchmark(decide, SOFTMAX, {"L": scores})
    assert d.counts()["violated"] == 0 and d.counts()["undecided"] == 0
    _record(benchmark, bench_record, "decide (delta(softmax(L)) <= 1 - exp(-ptp(L)))", len(scores),
            target=(SWEEP_SOFT_BASELINE, 1 / 5, ">= 1/5 the delta-only statement's rate"))


@pytest.mark.benchmark(group=SWEEP_SOFT)
def test_softmax_public_decide(benchmark, bench_record, scores):
    from attnbounds import decide as public_decide

    r = benchmark(public_decide, delta(softmax(L)) <= 1 - exp(-ptp(L)), L=scores)
    assert r.verdicts == tuple(str(v) for v in decide(SOFTMAX, {"L": scores}).verdicts)
    _record(benchmark, bench_record, "attnbounds.decide (the same, the public entry)", len(scores),
            target=(SWEEP_SOFT_BASELINE, 1 / 5, ">= 1/5 the delta-only statement's rate"))


# -- the sweep itself: one stress chunk of 10^4 counter-sampled matrices at n = 16, drawn, decided and
# summarised, as `attnbounds stress` runs it (the restated D1 from a theory file against dobrushin.factor)
SWEEP = f"stress chunk: sweep of Dirichlet(1), n={N}"
SWEEP_BASELINE = "built-in D1 chunk (verification.stress.checks.sweep)"


@pytest.fixture(scope="module")
def restated(tmp_path_factory):
    from theory.plugins import load_file, unload_files

    path = tmp_path_factory.mktemp("theory") / "restated.py"
    path.write_text("from theory import Theorem, register\nfrom theory.expr import A, I, delta\n"
                    "register(Theorem(id='bench.d1', title='D1 restated', category='proved', "
                    "statement=delta((I + A) / 2) <= (1 + delta(A)) / 2))\n")
    load_file(path)
    yield "bench.d1"
    unload_files()


def _chunk_spec(theorem):
    from verification.stress.checks.plan import StressPlan

    return StressPlan(theorem, ("dirichlet",), (N,), 10_000)


@pytest.mark.benchmark(group=SWEEP)
def test_sweep_chunk_builtin(benchmark, bench_record):
    from verification.stress.checks import chunks

    (chunk,) = chunks(_chunk_spec("dobrushin.factor"))
    out = benchmark(chunk.run)
    assert out.summaries["dobrushin.factor"]["n"] == 10_000
    _record(benchmark, bench_record, SWEEP_BASELINE, 10_000, baseline=True)


@pytest.mark.benchmark(group=SWEEP)
def test_sweep_chunk_restated(benchmark, bench_record, restated):
    from verification.stress.checks import chunks

    (chunk,) = chunks(_chunk_spec(restated))
    (builtin,) = chunks(_chunk_spec("dobrushin.factor"))
    out = benchmark(chunk.run)
    assert out.summaries[restated]["counts"] == builtin.run().summaries["dobrushin.factor"]["counts"]
    _record(benchmark, bench_record, "restated D1 chunk (verification.stress.checks.expr)", 10_000,
            target=(SWEEP_BASELINE, 1 / 3, ">= 1/3 the built-in's rate"))
