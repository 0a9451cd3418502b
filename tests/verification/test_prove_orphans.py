"""`attnbounds prove` under hostile use: a driver killed with ``kill -9`` leaves no z3 child running
(numerics.smt.solve ties each solver child to its parent), and an absurd ``--timeout`` is one line on
stderr with exit status 2, never a traceback."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from numerics.smt import STATEMENTS, decide, solve
from verification.cli import main
from verification.prove import command
from verification.prove.checks import Plan

ROOT = Path(__file__).resolve().parents[2]

# the driver, with one of the two ties to the parent disabled (each must suffice on its own)
DRIVER = {
    "both": "",
    "pdeathsig-only": "solve._watchdog = lambda parent: None",
    "watchdog-only": "solve.PR_SET_PDEATHSIG = 0",          # prctl(0, ...) is EINVAL: no parent-death signal
}


def _procs() -> dict:
    """pid -> (state, ppid, process group, session) of every process now (from /proc/<pid>/stat)."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            text = (d / "stat").read_text()
        except OSError:
            continue                                   # ended meanwhile
        f = text[text.rindex(")") + 2:].split()       # the command name may hold spaces and parentheses
        out[int(d.name)] = (f[0], int(f[1]), int(f[2]), int(f[3]))
    return out


def _session(sid: int) -> dict:
    """The live (not zombie) processes of session ``sid``: the driver's descendants, reparented or not."""
    return {pid: p for pid, p in _procs().items() if p[3] == sid and p[0] not in "ZX"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the parent-death signal is Linux's")
@pytest.mark.parametrize("tie", sorted(DRIVER))
def test_killing_the_driver_kills_its_solver_children(tie, tmp_path):
    # d2.bound at 3x3x3 (the direct nonlinear encoding) keeps z3 busy for minutes; its budget is an hour
    code = ("import sys\nfrom numerics.smt import solve\n" + DRIVER[tie] +
            "\nfrom verification.cli import main\nsys.exit(main(sys.argv[1:]))")
    argv = [sys.executable, "-c", code, "prove", "d2.bound", "--max-n", "3", "--timeout", "3600",
            "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    log = tmp_path / "driver.log"
    with open(log, "wb") as err:
        driver = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=err, start_new_session=True)     # its own session: sid == its pid
    sid = driver.pid
    try:
        # wait for a solver child that has been alive for a second (the 3x3x3 query, not the quick 2x2x2 one)
        first_seen: dict = {}
        deadline = time.monotonic() + 180
        while True:
            assert driver.poll() is None, f"the driver ended early ({driver.returncode}): {log.read_text()}"
            assert time.monotonic() < deadline, "no long-running solver child appeared"
            now = time.monotonic()
            kids = {pid for pid, p in _session(sid).items() if p[1] == driver.pid}
            first_seen = {pid: first_seen.get(pid, now) for pid in kids}
            if any(now - t >= 1.0 for t in first_seen.values()):
                break
            time.sleep(0.1)
        procs = _procs()
        assert all(procs[pid][2] == procs[driver.pid][2] for pid in kids if pid in procs)   # the driver's group

        os.kill(driver.pid, signal.SIGKILL)
        t_kill = time.monotonic()
        driver.wait()                                  # reaped: the driver's pid is gone for good
        left = _session(sid)
        while left and time.monotonic() - t_kill < 5.0:
            time.sleep(0.05)
            left = _session(sid)
        gone_after = time.monotonic() - t_kill
        assert not left, f"still running {gone_after:.1f} s after kill -9 of the driver: {left}"
        print(f"{tie}: solver children {sorted(kids)} gone {gone_after:.2f} s after kill -9 of the driver")
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for pid in _session(sid):                      # never leave a solver behind, even when the test fails
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.parametrize("value", ["1e9", "86400.5", "1e400", "inf", "-inf", "nan", "0.0001", "0", "-1"])
def test_an_out_of_range_timeout_is_one_line_and_exit_2(value, tmp_path, capsys):
    rc = main(["prove", "d1.bound", "--max-n", "2", f"--timeout={value}",      # "=": "-inf" is not an option
               "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "--timeout" in err and "86400" in err and repr(value) in err, err


def test_the_timeout_bounds_are_in_the_help_and_the_ends_are_accepted(tmp_path, capsys):
    assert main(["prove", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "0.001 (1 ms) to 86400 (one day)" in text, text
    assert (solve.MIN_TIMEOUT, solve.MAX_TIMEOUT) == (0.001, 86400.0)
    assert (command.MIN_TIMEOUT, command.MAX_TIMEOUT) == (solve.MIN_TIMEOUT, solve.MAX_TIMEOUT)   # the help's
    assert Plan(timeout=0.001).timeout == 0.001 and Plan(timeout=86400).timeout == 86400
    assert decide(STATEMENTS["d1.bound"], (2,), timeout=86400).status == "proved"


@pytest.mark.parametrize("value", [1e9, float("inf"), float("nan"), 0, -1, 1e-4])
def test_the_library_refuses_an_out_of_range_timeout_too(value):
    with pytest.raises(ValueError, match="86400"):
        decide(STATEMENTS["d1.bound"], (2,), timeout=value)
    with pytest.raises(ValueError, match="86400"):
        Plan(timeout=value)
