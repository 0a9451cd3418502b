"""Benchmarks of the stress sweep, against baselines run in the same session.

    sweep        one chunk all included (the counter sampler, campaign v2): sampling, one fused pass
                 (delta(A), delta((I+A)/2) and the certification statistics), exact certification of what it
                 cannot decide, summary, kept records, written to a results store (SQLite file);
                 also its parts apart: sampling only, and the checks on already drawn matrices
    dobrushin    the bare kernel on the same matrices (already sampled): the baseline
    before       the Dobrushin campaign's path (verification.dobrushin.checks.check_chunk: the same
                 vectorised check, every D1 instance certified exactly, one Record per instance,
                 D1 plus D2 on count/2 pairs) on the same family, n and count, written to a store

at n = 16 (chunks of 10,000) and n = 64 (chunks of 1,024), Dirichlet(1) and softmax (T = 1);
and a campaign of 8 chunks (n = 16, Dirichlet) through the serial executor and a local Dask
cluster of 2 worker processes (started and warmed once). The summary also prints what is shipped
per chunk (pickled arguments and result) and the driver's cost of storing one chunk, for the
scaling note. ``make test`` (benchmarks disabled) runs each once; the Dask case then uses threads.
"""
from __future__ import annotations

import pickle
import time

import numpy as np
import pytest

from numerics.dobrushin import dobrushin, factor_check
from verification import campaign
from verification.executors import DaskExecutor, SerialExecutor
from verification.store import ResultStore
from verification.stress.checks.plan import StressPlan, chunk_size, draw
from verification.stress.checks.sweep import chunks as stress_chunks
from numerics.dobrushin.batch import TIGHT
from verification.stress.checks.sweep import run_chunk

CASES = [pytest.param(f, n, id=f"{f}-n{n}") for f in ("dirichlet", "softmax-T1") for n in (16, 64)]


def _spec(family: str, n: int) -> dict:
    return {"theorem": "dobrushin.factor", "family": family, "n": n, "count": chunk_size(n), "seed": 0,
            "device": "cpu", "sampler": "counter"}


def _record(benchmark, bench_record, name: str, B: int, n: int, baseline: bool, target=None) -> None:  # noqa: ANN001
    if benchmark.disabled or benchmark.stats is None:
        return
    bench_record(group=benchmark.group, name=name, seconds=benchmark.stats.stats.median,
                 min=benchmark.stats.stats.min, matrices=B, ops=B * n * (n - 1) // 2 * n, baseline=baseline,
                 target=target)


@pytest.mark.parametrize("family,n", CASES)
def test_sweep(benchmark, bench_record, tmp_path, family, n):
    benchmark.group = f"stress {family} n={n}"
    spec = _spec(family, n)
    with ResultStore(tmp_path / "s.db") as store:
        def one() -> object:
            res = run_chunk(spec, 0)
            store.write_chunk("bench", "c0", res, res.summaries)
            return res
        res = benchmark(one)
        body = res.summaries["dobrushin.factor"]
        assert body["n"] == chunk_size(n) and sum(body["counts"].values()) == body["n"]
        assert "violated" not in body["counts"]
    _record(benchmark, bench_record, "sweep (all included)", chunk_size(n), n, baseline=False,
            target=("dobrushin (bare kernel)", 0.4, ">= 0.4x the bare kernel"))


@pytest.mark.parametrize("family,n", CASES)
def test_kernel_baseline(benchmark, bench_record, family, n):
    benchmark.group = f"stress {family} n={n}"
    A = draw("dobrushin.factor", family, n, 0, 0, "counter")
    got = benchmark(dobrushin, A)
    assert got.shape == (len(A),) and (got > 0).all() and (got <= 1).all()
    _record(benchmark, bench_record, "dobrushin (bare kernel)", len(A), n, baseline=True)


@pytest.mark.parametrize("family,n", CASES)
def test_parts(benchmark, bench_record, family, n):
    """The sweep's two parts apart: drawing the chunk, and checking already drawn matrices
    (filter, certification, summary)."""
    from verification.stress.checks.summaries import summarise
    from numerics.dobrushin.batch import check_batch

    benchmark.group = f"stress {family} n={n}"
    A = draw("dobrushin.factor", family, n, 0, 0, "counter")

    def check() -> dict:
        out = check_batch("dobrushin.factor", A)
        return summarise(out["verdict"], out["slack"], out["exact"])
    body = benchmark(check)
    assert body["n"] == len(A) and "violated" not in body["counts"]
    out = check_batch("dobrushin.factor", A)         # the same verdicts as the certified reference, one by one
    np.testing.assert_array_equal(out["verdict"] == TIGHT, np.asarray(factor_check(A).equality))
    _record(benchmark, bench_record, "sweep without sampling", len(A), n, baseline=False)


@pytest.mark.parametrize("sampler", ["counter", "numpy"])
@pytest.mark.parametrize("family,n", CASES)
def test_sampling(benchmark, bench_record, family, n, sampler):
    benchmark.group = f"stress {family} n={n}"
    A = benchmark(draw, "dobrushin.factor", family, n, 0, 0, sampler)
    assert A.shape == (chunk_size(n), n, n)
    np.testing.assert_array_equal(A, draw("dobrushin.factor", family, n, 0, 0, sampler))   # regenerable
    _record(benchmark, bench_record, f"sampling only ({sampler}{', v1' if sampler == 'numpy' else ''})",
            len(A), n, baseline=False)


@pytest.mark.parametrize("family,n", CASES)
def test_before(benchmark, bench_record, tmp_path, family, n):
    from verification.dobrushin.checks import check_chunk

    benchmark.group = f"stress {family} n={n}"
    count = chunk_size(n) if not benchmark.disabled else 100
    with ResultStore(tmp_path / "b.db") as store:
        def one() -> list:
            recs = check_chunk(family, n, 0, count, 0)
            store.write_chunk("bench", "c0", recs)
            return recs
        recs = benchmark(one)
    assert sum(r.theorem == "dobrushin.factor" for r in recs) == count
    _record(benchmark, bench_record, "before: per-instance records", count, n, baseline=True)


PLAN = StressPlan("dobrushin.factor", ("dirichlet",), (16,), instances=80_000)
SMALL_PLAN = StressPlan("dobrushin.factor", ("dirichlet",), (4,), instances=20_000)   # benchmarks disabled


@pytest.fixture(scope="module")
def cluster(request):
    disabled = request.config.getoption("benchmark_disable", False)
    with DaskExecutor(workers=2, processes=not disabled) as ex:
        if not disabled:
            warm = StressPlan("dobrushin.factor", ("dirichlet",), (16,), instances=20_000, seed=99)
            with ResultStore(":memory:") as s:            # import numerics and JIT on both workers
                campaign.run(s, warm.campaign, stress_chunks(warm), executor=ex, progress=False)
        yield ex


@pytest.mark.parametrize("which", ["serial", "dask-2-workers"])
def test_executor(benchmark, bench_record, request, which):
    benchmark.group = "executor: 8 chunks of 10,000, n=16 dirichlet"
    ex = SerialExecutor() if which == "serial" else request.getfixturevalue("cluster")
    plan = SMALL_PLAN if benchmark.disabled else PLAN
    chunks = stress_chunks(plan)

    def one() -> int:
        with ResultStore(":memory:") as s:
            return campaign.run(s, plan.campaign, chunks, executor=ex, progress=False).computed
    assert benchmark.pedantic(one, rounds=3 if not benchmark.disabled else 1, iterations=1) == len(chunks)
    _record(benchmark, bench_record, which, plan.total(), 16, baseline=which == "serial")
    if which == "serial" and not benchmark.disabled:
        chunk = stress_chunks(PLAN)[0]
        res = chunk.run()
        with ResultStore(":memory:") as s:
            t0 = time.perf_counter()
            for k in range(20):
                s.write_chunk("w", f"c{k}", res, res.summaries)
            write = (time.perf_counter() - t0) / 20
            stored = [row["body"] for row in s.summaries("w")]
        body = res.summaries["dobrushin.factor"]
        assert len(stored) == 20 and all(b == body for b in stored)      # stored as computed, 20 times
        assert sum(body["counts"].values()) == body["n"] == chunk_size(16)
        print(f"\nshipped per chunk: arguments {len(pickle.dumps(chunk.args))} bytes, result "
              f"{len(pickle.dumps(res))} bytes; driver stores a chunk in {1e3 * write:.2f} ms")


def _cuda() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU (the sweep's --device cuda path)")
@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_sweep_on_cuda(benchmark, bench_record, device):
    """One chunk (n = 64, Dirichlet, counter sampler) with the float filter on the GPU against the
    same chunk on the CPU: the same verdicts (certification is exact on the CPU either way)."""
    family, n = "dirichlet", 64
    benchmark.group = f"stress {family} n={n} on cuda"
    spec = {**_spec(family, n), "device": device}
    res = benchmark(run_chunk, spec, 0)
    cpu = run_chunk({**spec, "device": "cpu"}, 0)
    assert res.summaries["dobrushin.factor"]["counts"] == cpu.summaries["dobrushin.factor"]["counts"]
    _record(benchmark, bench_record, f"sweep (all included, {device})", chunk_size(n), n, baseline=device == "cpu")
