"""Issue 59, points 16-19: what was a traceback, a silent exit 0 or a store left behind is one line,
exit status 2 (bad input) or 130 (Ctrl-C), and a refused command creates nothing.

- Ctrl-C while a ``--theory`` file loads; a theory file that calls ``sys.exit`` (loading, or in its
  ``equality_condition`` while the command runs); an equality condition that raises; a Ctrl-C
  after the command returned, while Python exits (it was printed, dropped, and the exit status 0);
- a ``--seed`` beyond what a command's draws take (``modalities --seed 4294967295``, ``san`` over
  2^63), ``rank --r-star 0``, ``--workers 1000``, an ``--out``, a
  ``--db`` folder or a checkpoint folder that cannot be made (a name too long), an image too large
  to decode within the memory budget: refused before anything is created;
- ``stress --search`` writes no ``.hypothesis/`` folder where it runs.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from theory.errors import InvalidInput
from verification.cli import main

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
D1 = ("from theory import Theorem, register\nfrom theory.expr import A, I, delta\n"
      "register(Theorem(id={id!r}, title='D1', category='proved', statement=delta((I + A) / 2) <= (1 + delta(A)) / 2"
      "{extra}))\n")


def left_behind(work: Path) -> list[str]:
    return sorted(str(p.relative_to(work)) for p in work.rglob("*"))


def refused(argv: list, tmp_path: Path, monkeypatch, capsys, *names: str) -> str:
    """``attnbounds ARGV --db work/sub/r.db --out work/out`` from ``work``: exit 2, one line naming
    ``names``, nothing left in ``work``; the line."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)
    rc = main([str(a) for a in argv] + ["--db", str(work / "sub" / "r.db"), "--out", str(work / "out")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, (rc, err)
    for name in names:
        assert name in lines[0], (name, lines[0])
    assert left_behind(work) == [], left_behind(work)
    return lines[0]


@pytest.fixture
def unload():
    from theory.plugins import unload_files

    yield
    unload_files()


# -- theory files: sys.exit, an equality condition that raises -------------------------------------------

def test_a_theory_file_that_calls_sys_exit_is_refused_naming_it(tmp_path, monkeypatch, capsys, unload):
    f = tmp_path / "exits.py"
    f.write_text("import sys\nsys.exit(0)\n")
    for argv in (["stress", "x.y", "--theory", f], ["theorems", "--theory", f]):
        work = tmp_path / "work"
        monkeypatch.chdir(tmp_path)
        rc = main([str(a) for a in argv] + (["--db", str(work / "r.db"), "--out", str(work)] if argv[0] != "theorems"
                                             else []))
        err = capsys.readouterr().err
        assert rc == 2 and len(err.strip().splitlines()) == 1, (rc, err)
        assert "exits.py: line 2: calls sys.exit(0) while it loads" in err, err
        assert not work.exists()


def test_sys_exit_in_an_equality_condition_is_refused_naming_the_file(tmp_path, monkeypatch, capsys, unload):
    f = tmp_path / "cond_exits.py"
    f.write_text("import sys\n\ndef cond(m):\n    sys.exit(3)\n\n" + D1.format(id="t59.exit", extra=", equality_condition=cond"))
    line = refused(["stress", "t59.exit", "--theory", f, "--sizes", "2", "--instances", "10"], tmp_path, monkeypatch,
                   capsys, "cond_exits.py", "line 4", "sys.exit(3)", "cond()")
    assert "while the command runs" in line


def test_an_equality_condition_that_raises_is_one_line_and_creates_nothing(tmp_path, monkeypatch, capsys, unload):
    f = tmp_path / "cond_raises.py"
    f.write_text("def cond(m):\n    return 1 / 0\n\n" + D1.format(id="t59.raise", extra=", equality_condition=cond"))
    refused(["stress", "t59.raise", "--theory", f, "--sizes", "2", "--instances", "10"], tmp_path, monkeypatch, capsys,
            "t59.raise", "equality_condition raised ZeroDivisionError: division by zero", "dirichlet/n2/c0/i0")


def test_an_equality_condition_that_raises_later_is_one_line_too(tmp_path, monkeypatch, capsys, unload):
    """A condition that raises on an instance after the first: one line naming the theorem, the
    instance and the exception (the store holds what was stored before it)."""
    from verification.stress.checks import expr

    monkeypatch.setattr(expr, "check_condition_first", lambda plan: None)     # as if the first instance passed
    f = tmp_path / "cond_later.py"
    f.write_text("def cond(m):\n    raise KeyError('row')\n\n" + D1.format(id="t59.later", extra=", equality_condition=cond"))
    rc = main(["stress", "t59.later", "--theory", str(f), "--sizes", "2", "--instances", "10", "--families", "dirichlet",
               "--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "t59.later: its equality_condition raised KeyError: 'row' on a dirichlet n = 2 instance (i0)" in err, err


# -- Ctrl-C: while a theory file loads, and as Python exits -------------------------------------------------

def test_ctrl_c_while_a_theory_file_loads_is_one_line_130_and_creates_nothing(tmp_path):
    slow = tmp_path / "slow.py"
    started = tmp_path / "loading"
    slow.write_text(f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('')\ntime.sleep(60)\n")
    work = tmp_path / "work"
    proc = subprocess.Popen([sys.executable, "-m", "verification.cli", "stress", "x.y", "--theory", str(slow),
                             "--db", str(work / "r.db"), "--out", str(work)], cwd=tmp_path, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert proc.returncode == 130 and len(lines) == 1 and "Traceback" not in err, (proc.returncode, err)
    assert lines[0] == "attnbounds stress: interrupted: 0 chunks stored by this run; run the same command to resume"
    assert not work.exists()


def test_a_ctrl_c_while_python_exits_is_130_not_a_dropped_traceback(tmp_path):
    """The command has returned; a SIGINT lands in an atexit callback (where Dask's, the process
    pools' and torch's run): Python would print the KeyboardInterrupt, drop it and exit 0."""
    script = ("import atexit, os, signal, sys, time\n"
              "atexit.register(lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(5)))\n"   # the last to run
              "from verification.cli import main\nsys.exit(main())\n")
    run = subprocess.run([sys.executable, "-c", script, "dobrushin", "--sizes", "2", "--families", "dirichlet",
                          "--db", ":memory:", "--out", str(tmp_path / "out")], cwd=tmp_path, env=ENV,
                         capture_output=True, text=True, timeout=300,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert run.returncode == 130 and "Traceback" not in run.stderr, (run.returncode, run.stderr)
    assert lines == ["attnbounds dobrushin: interrupted as it exited (the command had finished)"], run.stderr
    assert "D1/D2 on random families" in run.stdout          # the report was written before it


# -- seeds, rank --r-star, --workers ----------------------------------------------------------------------

@pytest.mark.parametrize("argv, bound", [
    (["modalities", "--preset", "tiny", "--seed", "4294967295"], "4294967290"),
    (["verify", "--only", "dobrushin", "--seed", str(2**32)], "4294967290"),
    (["san", "--preset", "tiny", "--seed", str(2**63)], str(2**63 - 1)),
    (["poincare", "--seed", str(2**64)], str(2**63 - 1)),
    (["rank", "--seed", str(10**12 + 1)], str(10**12)),
])
def test_a_seed_beyond_what_the_commands_draws_take_is_refused_first(argv, bound, tmp_path, monkeypatch, capsys):
    refused(argv, tmp_path, monkeypatch, capsys, "--seed", f"from 0 to {bound}", f"got '{argv[-1]}'")


def test_the_seed_bounds_cover_the_seeds_the_families_derive():
    from numerics.modalities.presets import PRESETS as MODALITIES
    from verification.options import MAX_SEED
    from verification.san.checks.presets import PRESETS as SAN
    from verification.san.checks.runs import plan

    assert all(max(p.seed_list(MAX_SEED["modalities"][0])) <= 2**32 - 1 for p in MODALITIES.values())
    assert any(max(p.seed_list(MAX_SEED["modalities"][0] + 1)) > 2**32 - 1 for p in MODALITIES.values())
    assert all(r.seed <= 2**64 - 1 for p in SAN.values() for r in plan(p, MAX_SEED["san"][0]))
    assert MAX_SEED["verify"][0] == min(v for k, (v, _) in MAX_SEED.items() if k != "verify")


def test_a_seed_takes_any_size_where_the_draws_do(capsys):
    from verification.cli import build_parser

    args = build_parser(["dobrushin"]).parse_args(["dobrushin", "--seed", str(2**70)])
    assert args.seed == 2**70


def test_rank_r_star_outside_its_range_is_refused_up_front_and_its_help_says_the_range(tmp_path, monkeypatch, capsys):
    """r* = 1 is planned (its rank-0 students are not: tests/verification/test_full_plans.py); r* = 0,
    r* > n - 2 and n = 2 are refused before anything is created."""
    refused(["rank", "--r-star", "0"], tmp_path, monkeypatch, capsys, "--r-star", ">= 1")
    refused(["rank", "--n", "8", "--r-star", "7"], tmp_path, monkeypatch, capsys, "--r-star", "1 <= r* <= n - 2")
    refused(["rank", "--n", "2"], tmp_path, monkeypatch, capsys, "--n", ">= 3")
    assert main(["rank", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "1 <= r* <= n - 2" in text and "3 <= n <= 64" in text


@pytest.mark.parametrize("command", [["stress", "dobrushin.factor", "--instances", "10"], ["san", "--preset", "tiny"]])
def test_workers_beyond_two_per_core_are_refused(command, tmp_path, monkeypatch, capsys):
    from verification.executors import check_workers, max_workers

    line = refused(command + ["--workers", "1000"], tmp_path, monkeypatch, capsys, "--workers", "got 1000",
                   f"at most {max_workers()}")
    assert "per core" in line
    assert check_workers(4, cores=2) == 4
    with pytest.raises(InvalidInput, match="at most 4"):
        check_workers(5, cores=2)


# -- folders that cannot be made, images too large -----------------------------------------------------------

def test_an_out_a_db_folder_or_a_checkpoint_folder_that_cannot_be_made(tmp_path, monkeypatch, capsys):
    long = "a" * 300                                   # over NAME_MAX: mkdir says "File name too long"
    work = tmp_path / "work"
    base = ["dobrushin", "--sizes", "2", "--families", "dirichlet"]
    for argv, name in ((base + ["--out", str(work / long)], "--out"),
                       (base + ["--out", str(work / "x" / long / "y")], "--out"),
                       (base + ["--db", str(work / long / "r.db")], "--db"),
                       (["modalities", "--preset", "tiny", "--checkpoints", str(work / long)], "--checkpoints")):
        work.mkdir(exist_ok=True)
        monkeypatch.chdir(work)
        full = list(argv) + ([] if "--db" in argv else ["--db", str(work / "s" / "r.db")])
        rc = main(full + ([] if "--out" in argv else ["--out", str(work / "o")]))
        err = capsys.readouterr().err
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
        assert name in err and "name too long" in err, err
        assert left_behind(work) == [], left_behind(work)      # the probe's temporary folder is gone too


def test_an_image_over_the_memory_budget_is_refused_from_its_header(tmp_path, monkeypatch):
    from PIL import Image
    from skimage import io

    from numerics.sources.images import read_images

    big = tmp_path / "big.png"
    Image.new("RGB", (200, 150)).save(big)
    monkeypatch.setenv("ATTNBOUNDS_MEMORY_BUDGET", "0.001")             # 1 MiB: about 13,400 pixels

    def never(*args, **kwargs):
        raise AssertionError("decoded before its size was checked")

    monkeypatch.setattr(io, "imread", never)
    with pytest.raises(InvalidInput, match=r"big\.png' is 200 x 150 pixels \(0\.0 megapixels\).*over the memory "
                                           r"budget.*ATTNBOUNDS_MEMORY_BUDGET") as err:
        read_images(str(big))
    assert "\n" not in str(err.value)


def test_every_bundled_photograph_fits_the_default_budget(monkeypatch):
    import skimage

    from numerics.sources.images import SKIMAGE_PHOTOS, check_size

    monkeypatch.delenv("ATTNBOUNDS_MEMORY_BUDGET", raising=False)
    folder = Path(skimage.__file__).parent / "data"
    found = [folder / name for name in SKIMAGE_PHOTOS if (folder / name).is_file()]
    assert found
    for path in found:
        check_size(path)


# -- --search writes no .hypothesis/ ---------------------------------------------------------------------

def test_search_writes_no_hypothesis_folder_where_it_runs(tmp_path):
    env = {k: v for k, v in ENV.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    run = subprocess.run([sys.executable, "-m", "verification.cli", "stress", "dobrushin.factor", "--search",
                          "--budget", "40", "--sizes", "3", "--db", str(tmp_path / "o" / "r.db"),
                          "--out", str(tmp_path / "o")], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]
    assert not list((tmp_path / "o").rglob(".hypothesis"))
