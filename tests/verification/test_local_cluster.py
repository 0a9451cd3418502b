"""The local Dask cluster of `--workers` (verification/local_cluster.py).

Ctrl-C of a run with worker processes, sent to the whole process group as a terminal sends it, is
one line on stderr and exit status 130 (before: 63-67 lines, two tracebacks from each worker
process), no process of the run is left, and the same command resumes to what a serial run
stores. The cluster serves no HTTP: no dashboard, `/health` or `/metrics` port on 127.0.0.1:8787
or anywhere, the scheduler reports no dashboard, and every port its processes listen on is a TLS
comm port; distributed's own LocalCluster with `dashboard_address=None` does open one (the planted
case, which the same check catches)."""
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from pathlib import Path

import dask
import psutil
import pytest

from verification import local_cluster
from verification.executors import DaskExecutor
from verification.testing.fakes import chunks_in, store_content as content

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
CLI = "import sys; from verification.cli import main; sys.exit(main(sys.argv[1:]))"
ONE_LINE = re.compile(r"attnbounds stress: interrupted: (\d+) chunks? stored by this run; run the same command to resume")


def group_gone(pgid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def default_sigint() -> None:
    # as from a terminal: a suite started in the background (`cmd &`) ignores SIGINT, the child
    # would inherit that, and the CLI rightly keeps an ignored SIGINT
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_to_the_process_group_of_a_run_with_workers_is_one_line_and_resumes(tmp_path):
    db = tmp_path / "r.db"
    argv = ["stress", "dobrushin.factor", "--families", "dirichlet", "--sizes", "3", "--instances", "2000000"]
    cmd = [sys.executable, "-c", CLI, *argv, "--db", str(db), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen([*cmd, "--workers", "2"], cwd=REPO, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 240
        while chunks_in(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be interrupted: make it longer"
        os.killpg(proc.pid, signal.SIGINT)          # what a terminal's Ctrl-C does: the whole group
        err = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and ONE_LINE.fullmatch(lines[0]), err
    said, stored = int(ONE_LINE.fullmatch(lines[0]).group(1)), chunks_in(db)
    assert stored >= 2 and said in (stored, stored - 1), (said, stored)  # the signal may fall between commit and count
    assert group_gone(proc.pid, 30), "a worker (or another process of the run) outlived the command"

    again = subprocess.run([*cmd, "--workers", "2"], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and not again.stderr.strip(), again.stderr
    assert f"{stored} already stored" in " ".join(again.stdout.split()), again.stdout
    fresh = tmp_path / "fresh.db"
    whole = subprocess.run([*cmd[:-4], "--db", str(fresh), "--out", str(tmp_path / "out2")], cwd=REPO, env=ENV,
                           capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    assert content(db) == content(fresh)            # resumed on the cluster == one serial run


# -- no HTTP ----------------------------------------------------------------------------------
def listening(pid: int) -> set:
    """The TCP ports process ``pid`` listens on."""
    return {c.laddr.port for c in psutil.Process(pid).net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}


def answers_http(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
            return r.status == 200
    except OSError:             # refused, reset, or not HTTP (a TLS comm port drops plain text)
        return False


def port_of(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


def test_the_worker_processes_ignore_sigint_and_nothing_serves_http():
    here = os.getpid()
    before = listening(here)
    # spawn, not fork: a worker forked from this multi-threaded test process can inherit a lock that
    # another thread held at the fork (an io buffer's, measured: a worker hung in logging's flush forever)
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}), DaskExecutor(workers=2) as ex:
        info = ex.client.scheduler_info()
        assert "dashboard" not in info["services"] and ex.cluster.dashboard_link == ""
        assert all(not w["services"] for w in info["workers"].values())
        pids = ex.client.run(os.getpid)
        assert ex.client.run(lambda: signal.getsignal(signal.SIGINT) == signal.SIG_IGN) == {a: True for a in pids}
        assert signal.getsignal(signal.SIGINT) != signal.SIG_IGN        # the command's own handler is kept
        comm = {port_of(ex.address)} | {port_of(a) for a in info["workers"]} \
            | {port_of(w["nanny"]) for w in info["workers"].values()}
        opened = (listening(here) - before).union(*(listening(p) for p in pids.values()))
        assert opened == comm and 8787 not in opened, (opened, comm)   # only the TLS comm ports
        assert not any(answers_http(p) for p in opened)


def test_a_threads_cluster_listens_on_nothing():
    before = listening(os.getpid())
    with DaskExecutor(workers=1, processes=False) as ex:
        assert ex.submit(sum, [1, 2]).result(timeout=30) == 3
        assert listening(os.getpid()) == before
        assert "dashboard" not in ex.client.scheduler_info()["services"]


def test_planted_distributeds_own_cluster_with_dashboard_off_still_serves_http():
    """The check above catches an HTTP server: distributed's LocalCluster with the dashboard
    'disabled' (``dashboard_address=None``) opens a port that answers ``/health`` to anyone."""
    from distributed import Client, LocalCluster

    before = listening(os.getpid())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # "Port 8787 is already in use" if it is
        with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
                Client(cluster, set_as_default=False):
            opened = listening(os.getpid()) - before
            assert opened and any(answers_http(p) for p in opened)
            assert "dashboard" in cluster.scheduler_info["services"]


# -- Ctrl-C held while the cluster starts ----------------------------------------------------
def blocked_in_a_child_of_a_new_thread() -> bool:
    """Whether a process spawned from a thread started now has SIGINT blocked."""
    box = {}

    def spawn():
        out = subprocess.run(["grep", "SigBlk", "/proc/self/status"], capture_output=True, text=True).stdout
        box["mask"] = int(out.split()[1], 16)

    t = threading.Thread(target=spawn)
    t.start()
    t.join()
    return bool(box["mask"] & (1 << (signal.SIGINT - 1)))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_sigint_is_held_while_the_cluster_starts_and_delivered_after():
    got = []
    outer = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        assert not blocked_in_a_child_of_a_new_thread()           # planted: outside, not blocked
        with local_cluster.sigint_held():
            assert blocked_in_a_child_of_a_new_thread()
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)
            assert got == []                                      # held, not raised in the block
        assert got == [signal.SIGINT]                             # delivered to the handler it found
        assert signal.getsignal(signal.SIGINT) is not None and not blocked_in_a_child_of_a_new_thread()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with local_cluster.sigint_held():                         # ignored stays ignored
            os.kill(os.getpid(), signal.SIGINT)
        assert got == [signal.SIGINT] and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, outer)
