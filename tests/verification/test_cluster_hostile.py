"""`attnbounds stress` against hostile or broken cluster arguments: a server that accepts and never
answers, addresses that are not a scheduler's, an empty one, and a local `--workers` cluster that
must refuse every client without the run's own credentials. Each refusal is one line on stderr,
exit status 2, within the connect timeout plus a little, with no clean-up traceback or stall."""
import argparse
import asyncio
import gc
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import pytest

from verification.cli import main
from verification.executors import CONNECT_TIMEOUT, probe_scheduler
from verification.stress.command import make_executor

ROOT = Path(__file__).resolve().parents[2]
SLACK = 5.0             # seconds allowed beyond the connect timeout (start-up, a loaded machine)


@pytest.fixture
def silent_server():
    """A TCP server that accepts every connection and never sends a byte."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.2)
    held, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            held.append(conn)                    # keep it open, say nothing

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{srv.getsockname()[1]}", held
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    srv.close()


def run_bounded(argv, limit):
    """``main(argv)`` in a thread; (exit status or None if still running after ``limit`` s, seconds)."""
    box = {}

    def target():
        box["rc"] = main(argv)
        gc.collect()                 # a half-made distributed Client would stall here, in __del__

    t0 = time.monotonic()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit)
    return box.get("rc"), time.monotonic() - t0


def stress_args(tmp_path, *extra):
    return ["stress", "dobrushin.factor", "--instances", "10", "--db", str(tmp_path / "s.db"),
            "--out", str(tmp_path / "out"), *extra]


def one_error_line(err):
    lines = [s for s in err.splitlines() if s.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("attnbounds stress: error: ")
    return lines[0]


@pytest.mark.parametrize("timeout", [None, 2.0])
def test_silent_server_gives_up_within_the_connect_timeout(tmp_path, capfd, silent_server, timeout):
    address, held = silent_server
    extra = ["--scheduler", address] + (["--connect-timeout", str(timeout)] if timeout else [])
    limit = (timeout or CONNECT_TIMEOUT) + SLACK
    rc, seconds = run_bounded(stress_args(tmp_path, *extra), limit)
    assert rc == 2, f"still waiting after {seconds:.1f} s" if rc is None else rc
    assert held                                       # it did connect, then waited for the handshake
    assert (timeout or CONNECT_TIMEOUT) - 0.5 <= seconds <= limit
    line = one_error_line(capfd.readouterr().err)
    assert address in line and "handshake" in line and "--connect-timeout" in line


@pytest.mark.parametrize("address, what", [("garbage", "no scheme"), ("http://x:1", "scheme 'http'"),
                                           ("", "empty address"), ("tcp://127.0.0.1", "no port"),
                                           ("tcp://127.0.0.1:99999", "Port out of range"),
                                           ("tcp://:8786", "no host"), ("tcp://h:1/x", "more than")])
def test_bad_addresses_are_refused_at_once(tmp_path, capfd, address, what):
    rc, seconds = run_bounded(stress_args(tmp_path, "--scheduler", address), 10.0)
    assert rc == 2 and seconds < 3.0, (rc, seconds)
    line = one_error_line(capfd.readouterr().err)
    assert "--scheduler" in line and what in line and "tcp://HOST:PORT" in line
    assert not (tmp_path / "s.db").exists()            # refused before anything was opened


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_bad_connect_timeout(tmp_path, capfd, value):
    assert main(stress_args(tmp_path, "--scheduler", "tcp://127.0.0.1:8786", "--connect-timeout", value)) == 2
    assert "--connect-timeout" in one_error_line(capfd.readouterr().err)


@pytest.mark.parametrize("which", ["silent", "garbage"])
def test_whole_process_ends_promptly(tmp_path, silent_server, which):
    """The real command in its own process: one line, status 2, and the process ends promptly
    (before: no output after 170 s for the silent server; for 'garbage' the message, then a 40 s
    stall and a traceback from distributed's clean-up at exit)."""
    address = silent_server[0] if which == "silent" else "garbage"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "verification.cli", *stress_args(tmp_path, "--scheduler", address,
                                                                               "--connect-timeout", "2")],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)
    seconds = time.monotonic() - t0
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc.stderr)
    assert ("handshake within 2 s" if which == "silent" else "no scheme") in line
    assert seconds < 30, seconds            # CLI start-up (imports, about 5 s) included


def test_refused_port_is_one_line(tmp_path, capfd):
    with socket.socket() as s:                   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc, seconds = run_bounded(stress_args(tmp_path, "--scheduler", f"tcp://127.0.0.1:{port}",
                                          "--connect-timeout", "1"), 1 + SLACK)
    assert rc == 2 and seconds <= 1 + SLACK
    assert "Connection refused" in one_error_line(capfd.readouterr().err)


def refused(address, connection_args, limit=5.0):
    """True if ``address`` refuses (or never answers) a client with ``connection_args``."""
    t0 = time.monotonic()
    try:
        probe_scheduler(address, limit, connection_args)
    except (OSError, TimeoutError):          # refused by the server (TLS or protocol), or unanswered
        assert time.monotonic() - t0 < limit + 2
        return True
    return False


def no_verify(ctx):
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def test_local_cluster_refuses_clients_without_its_credentials(tmp_path):
    """``--workers``: the scheduler and every worker speak TLS with the run's own throw-away
    credentials; a plain TCP client, a TLS client without a certificate and a TLS client with a
    certificate of its own (server check off, as an attacker would) are all refused."""
    from distributed.security import Security

    other = Security.temporary()
    own_cert = no_verify(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    (tmp_path / "cert.pem").write_text(other.tls_client_cert)
    (tmp_path / "key.pem").write_text(other.tls_client_key)
    own_cert.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    args = argparse.Namespace(workers=1, scheduler=None, connect_timeout=CONNECT_TIMEOUT)
    # spawn, not fork: a forked worker can inherit a lock another thread of this process held (a hang)
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}):
        ex = make_executor(args)
    with ex:
        assert ex.address.startswith("tls://127.0.0.1:")
        assert probe_scheduler(ex.address, 5, ex.security.get_connection_args("client"))["type"] == "Scheduler"
        assert ex.submit(sum, [1, 2, 3]).result(timeout=30) == 6       # its own client works
        servers = [ex.address, *ex.client.scheduler_info()["workers"]]
        assert len(servers) == 2 and all(s.startswith("tls://") for s in servers)
        for address in servers:
            plain = "tcp://" + address.split("://", 1)[1]
            assert refused(plain, {})
            assert refused(address, {"ssl_context": no_verify(ssl.create_default_context())})
            assert refused(address, {"ssl_context": own_cert})
            assert refused(address, other.get_connection_args("client"))
        from distributed import Client
        from distributed.comm.core import CommClosedError

        t0 = time.monotonic()
        with pytest.raises((OSError, CommClosedError)):
            Client("tcp://" + ex.address.split("://", 1)[1], timeout=5, set_as_default=False)
        assert time.monotonic() - t0 < 10


def test_threads_cluster_opens_no_port():
    from verification.executors import DaskExecutor

    with DaskExecutor(workers=1, processes=False) as ex:
        assert ex.address.startswith("inproc://")


def test_probe_runs_beside_a_running_event_loop(silent_server):
    """The probe has its own loop and thread: callable from async code too, still bounded."""
    address, _ = silent_server

    async def inside():
        t0 = time.monotonic()
        with pytest.raises(TimeoutError, match="handshake"):
            probe_scheduler(address, 1.0)
        return time.monotonic() - t0

    assert asyncio.run(inside()) < 1.0 + SLACK
