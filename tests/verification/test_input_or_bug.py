"""Bad input is one exception type, and only it is one line and exit 2; a bug is a traceback.

Issue 33 items 4-6: `verification.cli.main` catches :class:`theory.errors.InvalidInput` only (a
planted ``KeyError`` in a report, or the campaign runner's own bug check, is a traceback and exit
1); the environment is validated like an argument (``ATTNBOUNDS_MEMORY_BUDGET``, never at import:
``--help`` always answers); the kernels answer tensors they cannot read (meta, sparse, nested,
quantized, an empty tuple, a CUDA tensor without a GPU) with the same one-line kind; one rule of
renormalisation for ``factor_slack`` and ``factor_check``; Ctrl-C is one line and exit 130 with
every stored chunk kept, and the same command resumes to the same results.
"""
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from theory.errors import InvalidInput
from verification.cli import main
from verification.testing.fakes import chunks_in as _chunks, store_content as _content

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
CLI = "import sys; from verification.cli import main; sys.exit(main(sys.argv[1:]))"


def one_line(rc, err, *names):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, (rc, err)
    for name in names:
        assert name in lines[0], (name, lines[0])


def small_dobrushin(tmp_path):
    return ["dobrushin", "--sizes", "2", "--families", "dirichlet", "--db", str(tmp_path / "r.db"),
            "--out", str(tmp_path / "out")]


# -- item 4: a bug is never reported as bad input ------------------------------------------------
def test_invalid_input_is_a_value_error_and_every_validation_raises_it():
    from numerics.dobrushin import factor_check

    assert issubclass(InvalidInput, ValueError)
    with pytest.raises(InvalidInput, match="row 1 sums to 0.9"):
        factor_check(np.array([[1.0, 0.0], [0.5, 0.4]]))


def test_a_keyerror_planted_in_a_report_is_a_traceback_not_bad_input(tmp_path, monkeypatch, capsys):
    from verification.dobrushin import report

    def broken(*args, **kwargs):
        raise KeyError("a bug in the report")

    monkeypatch.setattr(report, "report", broken)
    with pytest.raises(KeyError, match="a bug in the report"):
        main(small_dobrushin(tmp_path))
    assert "error:" not in capsys.readouterr().err


def test_the_campaign_runners_bug_check_is_a_traceback(tmp_path, monkeypatch):
    """A record in the wrong vocabulary (a claim that says 'violated') is the campaign's bug: the
    runner's check raises a plain ValueError, which the CLI does not swallow."""
    from verification import campaign
    from verification.store import Record

    def bad_chunk(*args, **kwargs):
        return [Record("dobrushin.factor", "x", "supported")]     # an outcome for a proved theorem

    monkeypatch.setattr("verification.dobrushin.checks.check_chunk", bad_chunk, raising=False)
    real_run = campaign.run

    def run(store, name, chunks, **kw):
        chunks = [campaign.Chunk(c.key, bad_chunk, ()) for c in chunks]
        return real_run(store, name, chunks, **kw)

    monkeypatch.setattr(campaign, "run", run)
    with pytest.raises(ValueError, match="not a verdict") as info:
        main(small_dobrushin(tmp_path))
    assert not isinstance(info.value, InvalidInput)


def test_a_bug_through_the_console_script_exits_1_with_its_traceback(tmp_path):
    code = ("import sys; from verification.dobrushin import report\n"
            "def broken(*a, **k): raise KeyError('planted')\n"
            "report.report = broken\n"
            "from verification.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, *small_dobrushin(tmp_path)], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" in proc.stderr and "KeyError: 'planted'" in proc.stderr


# -- item 5: every input validated, the environment included ---------------------------------
@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", "0", ""])
def test_a_bad_memory_budget_is_one_line_and_never_breaks_help(value, tmp_path):
    env = dict(ENV, ATTNBOUNDS_MEMORY_BUDGET=value)
    helped = subprocess.run([sys.executable, "-c", CLI, "--help"], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=120)
    assert helped.returncode == 0 and "Traceback" not in helped.stderr, helped.stderr
    proc = subprocess.run([sys.executable, "-c", CLI, *small_dobrushin(tmp_path)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    one_line(proc.returncode, proc.stderr, "ATTNBOUNDS_MEMORY_BUDGET", repr(value))
    assert not (tmp_path / "r.db").exists()


def test_memory_budget_is_read_when_asked(monkeypatch):
    from numerics.device import check_memory, memory_budget

    monkeypatch.setenv("ATTNBOUNDS_MEMORY_BUDGET", "0.25")
    assert memory_budget() == 2 ** 28
    with pytest.raises(InvalidInput, match="over the memory budget of 0.25 GiB"):
        check_memory("--sizes 4096", 2 ** 29)


@pytest.mark.parametrize("tol", [float("nan"), -1e-9, "abc", True])
def test_row_tol_must_be_a_number_at_least_zero(tol):
    from numerics.dobrushin import dobrushin, factor_check, rollout

    A = np.array([[1.0, 0.0], [0.5, 0.4]])            # row 1 sums to 0.9: never used as it is
    for fn in (dobrushin, factor_check, rollout):
        with pytest.raises(InvalidInput, match="row_tol"):
            fn(A if fn is not rollout else A[None], row_tol=tol)
    with pytest.raises(InvalidInput, match="row_tol"):
        dobrushin(torch.tensor(A), row_tol=tol)


def _api():
    from numerics.dobrushin import (dobrushin, factor_check, factor_equality, factor_slack, product_equality,
                                    rollout, rollout_tightness)

    return {"dobrushin": dobrushin, "factor_slack": factor_slack, "factor_equality": factor_equality,
            "factor_check": factor_check, "rollout": rollout, "rollout_tightness": rollout_tightness,
            "product_equality": lambda x: product_equality(x, x)}


def _unreadable():
    A = torch.softmax(torch.randn(2, 4, 4, generator=torch.Generator().manual_seed(0)), -1)
    return {"meta": (torch.empty(2, 4, 4, device="meta"), "meta"),
            "empty tuple": ((), "empty tuple"),
            "empty list": ([], "empty list"),
            "sparse": (A.to_sparse(), "sparse_coo tensor; pass x.to_dense()"),
            "quantized": (torch.quantize_per_tensor(A, 0.01, 0, torch.quint8), "quantized"),
            "nested": (torch.nested.nested_tensor([A[0], A[1]]), "nested")}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", ["meta", "empty tuple", "empty list", "sparse", "quantized", "nested"])
@pytest.mark.parametrize("fn", ["dobrushin", "factor_slack", "factor_equality", "factor_check", "rollout",
                                "rollout_tightness", "product_equality"])
def test_tensors_the_kernels_cannot_read_are_invalid_input(fn, case):
    x, words = _unreadable()[case]
    with pytest.raises(InvalidInput, match=words):
        _api()[fn](x)


def test_a_cuda_tensor_without_a_gpu_is_invalid_input(monkeypatch):
    from numerics.stochastic import check_tensor

    fake = types.SimpleNamespace(is_nested=False, layout=torch.strided, is_meta=False, is_quantized=False,
                                 device=torch.device("cuda"), shape=(2, 2))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InvalidInput, match="CUDA tensor but torch sees no CUDA device"):
        check_tensor(fake, "P")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_factor_slack_and_factor_check_measure_the_same_renormalised_matrix(dtype):
    """Rows of low-precision attention sum to 1 only within the dtype's tolerance: every entry point
    measures the matrix with each row divided by its exact sum (verdict, delta and slack alike)."""
    from numerics.dobrushin import factor_check, factor_slack

    g = torch.Generator().manual_seed(0)
    A = torch.softmax(torch.randn(3000, 6, 6, generator=g) * 2, -1).to(dtype)
    raw, renorm = factor_check(A), factor_check(A, renormalise=True)
    assert np.array_equal(np.asarray(factor_slack(A)), np.asarray(renorm.slack))
    assert np.array_equal(np.asarray(raw.equality), np.asarray(renorm.equality))
    assert np.array_equal(np.asarray(raw.delta), np.asarray(renorm.delta))


@pytest.mark.parametrize("argv, name", [
    (["stress", "dobrushin.factor", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1e9"], "--connect-timeout"),
    (["stress", "dobrushin.factor", "--connect-timeout", "nan"], "--connect-timeout"),
    (["san", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1e9"], "--connect-timeout"),
])
def test_connect_timeout_is_bounded(argv, name, tmp_path, capsys):
    rc = main(argv + ["--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")])
    one_line(rc, capsys.readouterr().err, name)


def test_san_takes_the_connect_timeout_its_scheduler_error_suggests(tmp_path, capsys):
    t0 = time.perf_counter()
    rc = main(["san", "--preset", "tiny", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1",
               "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    one_line(rc, err, "--scheduler", "cannot reach")
    assert "--connect-timeout" in err and time.perf_counter() - t0 < 30


# -- item 6: Ctrl-C ---------------------------------------------------------------------------
def interrupt_after(cmd: list, db: Path, chunks: int) -> tuple[str, list[str]]:
    """Run ``cmd``, send it SIGINT once ``db`` holds ``chunks`` chunks; check exit 130 and no
    traceback; -> (stderr, its non-empty lines)."""
    # the child starts with SIGINT at its default, as from a terminal: a suite started in the background
    # (`cmd &`) ignores SIGINT, the child would inherit that, and the CLI rightly keeps an ignored SIGINT
    proc = subprocess.Popen(cmd, cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    while _chunks(db) < chunks and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be interrupted: make it longer"
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    return err, [ln for ln in err.splitlines() if ln.strip()]


@pytest.mark.parametrize("argv", [
    ["stress", "dobrushin.factor", "--families", "dirichlet", "--sizes", "3", "--instances", "2000000"],
])
def test_ctrl_c_is_one_line_exit_130_and_the_same_command_resumes_to_the_same_results(argv, tmp_path):
    db = tmp_path / "r.db"
    cmd = [sys.executable, "-c", CLI, *argv, "--db", str(db), "--out", str(tmp_path / "out")]
    err, lines = interrupt_after(cmd, db, 2)
    assert lines[-1].startswith(f"attnbounds {argv[0]}: interrupted: ") and "run the same command to resume" in lines[-1]
    stored = _chunks(db)
    said = int(lines[-1].split("interrupted: ", 1)[1].split()[0])
    assert stored >= 2 and said in (stored, stored - 1), (said, stored)   # the signal may fall between commit and count
    again = subprocess.run(cmd, cwd=REPO, env=ENV, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    fresh = tmp_path / "fresh.db"
    whole = subprocess.run([*cmd[:-4], "--db", str(fresh), "--out", str(tmp_path / "out2")], cwd=REPO, env=ENV,
                           capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    assert _content(db) == _content(fresh)


def test_budget_without_search_is_refused_not_ignored(tmp_path, capsys):
    rc = main(["stress", "dobrushin.factor", "--budget", "100", "--instances", "10", "--sizes", "3",
               "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")])
    one_line(rc, capsys.readouterr().err, "--budget 100", "--search")
    assert not (tmp_path / "r.db").exists()


def test_an_unreachable_scheduler_leaves_no_store_behind(tmp_path, capsys):
    rc = main(["stress", "dobrushin.factor", "--instances", "10", "--sizes", "3", "--scheduler", "tcp://127.0.0.1:9",
               "--connect-timeout", "1", "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")])
    one_line(rc, capsys.readouterr().err, "--scheduler")
    assert sorted(tmp_path.iterdir()) == []


def test_an_interrupt_inside_compiled_code_is_still_an_interrupt(tmp_path, monkeypatch, capsys):
    """A SIGINT that lands inside a numba function comes back as a SystemError raised while the
    KeyboardInterrupt was pending: the same one line and exit 130; any other SystemError is a bug."""
    from verification import cli
    from verification.dobrushin import report

    def interrupted_in_numba(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("<function> returned a result with an exception set")

    monkeypatch.setattr(report, "report", interrupted_in_numba)
    assert main(small_dobrushin(tmp_path)) == 130
    assert "interrupted: " in capsys.readouterr().err
    assert cli.interrupted(SystemError("x")) is False

    def bug(*args, **kwargs):
        raise SystemError("a real one")

    monkeypatch.setattr(report, "report", bug)
    with pytest.raises(SystemError, match="a real one"):
        main(small_dobrushin(tmp_path))


def test_an_interrupt_inside_a_foreign_call_is_still_an_interrupt(tmp_path, monkeypatch, capsys):
    """A SIGINT that lands while ctypes converts an argument (z3's calls) comes back as
    ``ctypes.ArgumentError("argument 1: KeyboardInterrupt")`` with nothing chained: the handler
    remembered it, so it is one line and exit 130; the same error without an interrupt is a bug."""
    import ctypes

    from verification import campaign
    from verification.dobrushin import report

    def interrupted_in_ctypes(*args, **kwargs):
        from types import SimpleNamespace

        # the SIGINT handler records the interrupt first (a frame where it only records, so that the
        # KeyboardInterrupt it would raise is the one ctypes swallows here)
        campaign.on_interrupt(2, SimpleNamespace(f_code=SimpleNamespace(co_name="__del__")))
        raise ctypes.ArgumentError("argument 1: KeyboardInterrupt: ")

    monkeypatch.setattr(report, "report", interrupted_in_ctypes)
    assert main(small_dobrushin(tmp_path)) == 130
    assert "interrupted: " in capsys.readouterr().err and not campaign.was_interrupted()

    def bug(*args, **kwargs):
        raise ctypes.ArgumentError("argument 1: a real one")

    monkeypatch.setattr(report, "report", bug)
    with pytest.raises(ctypes.ArgumentError, match="a real one"):
        main(small_dobrushin(tmp_path))


def test_ctrl_c_during_prove_is_one_line_exit_130_and_keeps_what_was_proved(tmp_path):
    db = tmp_path / "p.db"
    cmd = [sys.executable, "-c", CLI, "prove", "--max-n", "3", "--timeout", "10", "--db", str(db),
           "--out", str(tmp_path / "out")]
    err, lines = interrupt_after(cmd, db, 1)
    assert lines[-1].startswith("attnbounds prove: interrupted: ")
    assert _chunks(db) >= 1


def test_an_interrupt_python_would_drop_is_remembered_and_raised_at_a_safe_point(tmp_path, capsys, monkeypatch):
    """A SIGINT inside an at-fork lock callback (seen in CI while prove forked a solver) is printed
    and dropped by Python: the handler only remembers it there, and the CLI still exits 130 with its
    one line once the command returns (the campaign runner raises it after the chunk it stores)."""
    from verification import campaign
    from verification.dobrushin import report

    def _releaseLock():                      # the frame Python would drop an exception from
        campaign.on_interrupt(signal.SIGINT, sys._getframe())

    def dropped(*args, **kwargs):            # the interrupt lands where Python drops it
        _releaseLock()

    with pytest.raises(KeyboardInterrupt):
        campaign.on_interrupt(signal.SIGINT, sys._getframe())          # anywhere else: at once
    real = report.report
    monkeypatch.setattr(report, "report", dropped)
    rc = main(small_dobrushin(tmp_path))
    assert rc == 130 and f"interrupted: {_chunks(tmp_path / 'r.db')} chunks stored" in capsys.readouterr().err
    assert not campaign.was_interrupted()                              # nothing left for the next command
    monkeypatch.setattr(report, "report", real)
    assert main(small_dobrushin(tmp_path)) == 0
