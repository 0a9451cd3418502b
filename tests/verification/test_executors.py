"""The executors: a local Dask cluster stores exactly what the serial executor stores (chunks
arrive in any order), a worker killed mid-run loses nothing, a driver killed mid-run resumes, and
a loud stop cancels what is in flight. Workers get a plan and a chunk index, never matrices. Both
executors are concurrent.futures executors, and the standard library's thread and process pools
plug into the campaign runner unchanged; a bad scheduler address is refused before anything
connects (hostile servers and the local cluster's TLS: test_cluster_hostile.py)."""
import concurrent.futures as cf
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from theory.errors import InvalidInput
from theory.verdicts import ViolationError
from verification import campaign
from verification.campaign import Chunk
from verification.executors import DaskExecutor, SerialExecutor
from verification.store import Record, ResultStore
from verification.stress.checks.plan import StressPlan
from verification.stress.checks.sweep import chunks as stress_chunks

PLAN = StressPlan("dobrushin.factor", ("dirichlet", "softmax-T1"), (3,), instances=60_000)   # 6 chunks
ROOT = Path(__file__).resolve().parents[2]


def contents(store, name=PLAN.campaign):
    summaries = sorted((r["chunk"], r["theorem"], repr(r["body"])) for r in store.summaries(name))
    records = sorted((r["chunk"], r["instance"], r["verdict"], r["slack"], r["value"], r["bound"],
                      repr(r["provenance"]), repr(r["extra"])) for r in store.records(name))
    return summaries, records


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    with ResultStore(tmp_path_factory.mktemp("serial") / "s.db") as s:
        campaign.run(s, PLAN.campaign, stress_chunks(PLAN), progress=False)
        return contents(s)


def test_what_is_shipped_is_a_plan_and_an_index():
    for chunk in stress_chunks(PLAN):
        spec, k = chunk.args
        assert isinstance(k, int) and set(spec) == {"theorem", "family", "n", "count", "seed", "device", "sampler"}
        assert all(isinstance(v, (str, int)) for v in spec.values())


def test_local_cluster_stores_what_serial_stores(store, serial):
    with DaskExecutor(workers=2, processes=False) as ex:
        res = campaign.run(store, PLAN.campaign, stress_chunks(PLAN), executor=ex, progress=False)
    assert res.computed == 6 and contents(store) == serial


def toy_chunk(k):
    """A chunk whose worker needs only verification.store (worker processes start fast)."""
    time.sleep(0.2)
    return [Record("dobrushin.factor", f"i{k}-{j}", "holds", slack=k + j / 10) for j in range(3)]


def test_killed_worker_process_loses_nothing(store):
    import cloudpickle
    import dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])   # workers cannot import a test module
    chunks = [Chunk(f"c{k}", toy_chunk, (k,)) for k in range(8)]
    campaign.run(store, "serial", chunks, progress=False)
    killed = []
    # real worker processes, spawned: a worker forked from this multi-threaded test process can
    # inherit a lock another thread held at the fork and hang (measured once in logging's flush)
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}), \
            DaskExecutor(workers=2, processes=True, window=2) as ex:
        pids = ex.client.run(os.getpid)

        def kill_one(chunk, records):          # after the first stored chunk, SIGKILL a worker process
            if not killed:
                addr, pid = sorted(pids.items())[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(addr)
            return ""
        res = campaign.run(store, "dask", chunks, executor=ex, window=ex.window, progress=False, status=kill_one)
    assert killed and res.computed == 8
    strip = lambda rows: sorted((r["chunk"], r["instance"], r["slack"]) for r in rows)  # noqa: E731
    assert strip(store.records("dask")) == strip(store.records("serial"))


DRIVER = """
import sys, time
from verification import campaign
from verification.campaign import Chunk
from verification.executors import DaskExecutor, SerialExecutor
from verification.store import Record, ResultStore

def toy_chunk(k):
    time.sleep(0.2)
    return [Record("dobrushin.factor", f"i{k}-{j}", "holds", slack=k + j / 10) for j in range(3)]

chunks = [Chunk(f"c{k}", toy_chunk, (k,)) for k in range(8)]
if __name__ == "__main__":
    with ResultStore(sys.argv[1]) as s, DaskExecutor(workers=1, processes=False, window=1) as ex:
        campaign.run(s, "toy", chunks, executor=ex, window=ex.window, progress=False)
"""


def test_killed_driver_resumes(tmp_path):
    db, script = tmp_path / "d.db", tmp_path / "driver.py"
    script.write_text(DRIVER)
    proc = subprocess.Popen([sys.executable, str(script), str(db)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if db.exists():
                with ResultStore(db) as s:
                    if len(s.done_chunks("toy")) >= 2:
                        break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)           # the driver dies between chunks or mid-chunk
    finally:
        proc.wait()
    with ResultStore(db) as s:
        before = len(s.done_chunks("toy"))
        assert 2 <= before < 8
        chunks = [Chunk(f"c{k}", toy_chunk, (k,)) for k in range(8)]
        with DaskExecutor(workers=2, processes=False) as ex:
            res = campaign.run(s, "toy", chunks, executor=ex, progress=False)
        assert res.skipped == before and res.computed == 8 - before
        campaign.run(s, "serial", chunks, progress=False)
        strip = lambda rows: sorted((r["chunk"], r["instance"], r["slack"]) for r in rows)  # noqa: E731
        assert strip(s.records("toy")) == strip(s.records("serial"))


def violated_after(k):
    if k == 1:
        return [Record("dobrushin.factor", f"i{k}", "violated", slack=-1.0)]
    time.sleep(0.05)
    return [Record("dobrushin.factor", f"i{k}", "holds", slack=1.0)]


def test_loud_stop_through_the_cluster(store):
    chunks = [Chunk(f"c{k}", violated_after, (k,)) for k in range(8)]
    with DaskExecutor(workers=2, processes=False, window=2) as ex:
        with pytest.raises(ViolationError, match="dobrushin.factor"):
            campaign.run(store, "toy", chunks, executor=ex, window=ex.window, progress=False)
    assert "c1" in store.done_chunks("toy") and len(store.done_chunks("toy")) < 8


def test_bad_cluster_arguments():
    with pytest.raises(ValueError, match="exactly one of"):
        DaskExecutor()
    with pytest.raises(ValueError, match="--workers"):
        DaskExecutor(workers=0)
    with pytest.raises(ValueError, match="cannot reach a Dask scheduler"):
        DaskExecutor(scheduler="tcp://127.0.0.1:9", timeout=1)
    for bad, what in (("garbage", "no scheme"), ("http://x:1", "scheme 'http'"), ("", "empty address"),
                      (None, "exactly one of"), ("tcp://h:0", "no port")):
        t0 = time.monotonic()
        with pytest.raises(ValueError, match=what):
            DaskExecutor(scheduler=bad)
        assert time.monotonic() - t0 < 1.0
    with pytest.raises(ValueError, match="tls:// needs client credentials"):
        DaskExecutor(scheduler="tls://127.0.0.1:9", timeout=1)
    for t in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="--connect-timeout"):
            DaskExecutor(scheduler="tcp://127.0.0.1:9", timeout=t)


def square(x):
    if x < 0:
        raise ArithmeticError(f"negative: {x}")
    return x * x


@pytest.fixture(params=["serial", "dask"])
def any_executor(request):
    ex = SerialExecutor() if request.param == "serial" else DaskExecutor(workers=1, processes=False)
    yield ex
    ex.shutdown()


def test_executors_are_concurrent_futures_executors(any_executor):
    """submit / map / shutdown / with, as for any concurrent.futures.Executor."""
    ex = any_executor
    assert isinstance(ex, cf.Executor)
    fut = ex.submit(square, 7)
    assert isinstance(fut, cf.Future) and fut.result(timeout=30) == 49
    bad = ex.submit(square, -1)
    with pytest.raises(ArithmeticError, match="negative"):
        bad.result(timeout=30)
    assert list(ex.map(square, range(6), timeout=30)) == [0, 1, 4, 9, 16, 25]
    assert list(ex.map(pow, [2, 3], [3, 2])) == [8, 9]
    futures = [ex.submit(square, k) for k in range(5)]
    assert sorted(f.result() for f in cf.as_completed(futures, timeout=30)) == [0, 1, 4, 9, 16]
    with ex as same:
        assert same is ex
    with pytest.raises(RuntimeError, match="after shutdown"):
        ex.submit(square, 1)
    ex.shutdown()                               # idempotent


def test_dask_submit_cancel_reaches_the_task():
    with DaskExecutor(workers=1, processes=False) as ex:
        blocker = ex.submit(time.sleep, 1.0)          # one worker thread: the next one waits
        fut = ex.submit(square, 3)
        assert fut.cancel() and fut.cancelled()
        deadline = time.monotonic() + 10
        while not fut.dask_future.cancelled() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fut.dask_future.cancelled()
        blocker.result(timeout=30)


def test_standard_thread_and_process_pools_plug_in(tmp_path):
    """A ``ThreadPoolExecutor`` or ``ProcessPoolExecutor`` runs a campaign unchanged, storing what
    the serial executor stores; the runner never holds more than ``window`` chunks in flight and
    leaves the pool open (its owner shuts it down)."""
    import multiprocessing

    chunks = [Chunk(f"c{k}", violated_after, (k + 2,)) for k in range(6)]     # all hold
    strip = lambda rows: sorted((r["chunk"], r["instance"], r["verdict"], r["slack"]) for r in rows)  # noqa: E731
    with ResultStore(tmp_path / "s.db") as s:
        campaign.run(s, "serial", chunks, progress=False)
        with cf.ThreadPoolExecutor(max_workers=3) as pool:
            res = campaign.run(s, "threads", chunks, executor=pool, window=2, progress=False)
            assert res.computed == 6 and pool.submit(square, 4).result() == 16     # still open
        # fork: the child has this test module loaded, so the chunk function pickles by name
        with cf.ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
            res = campaign.run(s, "processes", chunks, executor=pool, progress=False)
        assert res.computed == 6
        assert strip(s.records("threads")) == strip(s.records("processes")) == strip(s.records("serial"))


def test_window_bounds_the_chunks_in_flight(store):
    """At most ``window`` chunks are submitted and not yet stored; a loud stop cancels the rest."""
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def counted(k):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return violated_after(k)

    chunks = [Chunk(f"c{k}", counted, (k + 2,)) for k in range(12)]
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        assert campaign.run(store, "w", chunks, executor=pool, window=3, progress=False).computed == 12
    assert 1 <= state["most"] <= 3
    with pytest.raises(ValueError, match="window"):
        campaign.run(store, "w0", chunks, window=0, progress=False)
    stop = [Chunk(f"c{k}", violated_after, (k,)) for k in range(40)]           # c1 is violated
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        with pytest.raises(ViolationError):
            campaign.run(store, "stop", stop, executor=pool, window=4, progress=False)
    assert "c1" in store.done_chunks("stop") and len(store.done_chunks("stop")) < 10


def test_the_main_jobs_local_pool_is_serial_on_one_core_and_two_spawned_processes_otherwise():
    import concurrent.futures as cf

    from verification.executors import SerialExecutor, local_pool

    assert isinstance(local_pool(1), SerialExecutor)
    with local_pool(8) as pool:
        assert isinstance(pool, cf.ProcessPoolExecutor) and pool._max_workers == 2
        assert pool.submit(sum, [1, 2, 3]).result(timeout=120) == 6


@pytest.mark.parametrize("section", ["rank", "poincare"])
def test_a_familys_run_hands_its_executor_to_every_campaign(section, tmp_path, monkeypatch):
    """``run(plan, store, executor)`` runs every campaign of the plan on that executor (a family
    that took an executor and ignored it would run its chunks serially behind the caller's back)."""
    from importlib import import_module

    from verification.commands import FAMILIES

    seen = []
    monkeypatch.setattr(campaign, "run", lambda store, name, chunks, **kw: seen.append((name, kw.get("executor"))))
    checks = import_module(f"{FAMILIES[section]}.checks")
    pool = SerialExecutor()
    with ResultStore(tmp_path / "s.db") as s:
        checks.run(checks.Plan.for_verify(0, False), s, executor=pool)
    assert seen and all(ex is pool for _, ex in seen), seen


def test_trained_refuses_an_executor_it_cannot_use(tmp_path):
    from verification.trained import checks

    with ResultStore(tmp_path / "s.db") as s, pytest.raises(InvalidInput, match="take no executor"):
        checks.run(checks.Plan.for_verify(0, False), s, executor=SerialExecutor())
