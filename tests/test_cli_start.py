"""What starts, and what it loads: ``attnbounds --help`` lists every command from the table in
:mod:`verification.commands` without importing any command's module (nor torch, sympy, pandas,
numba, matplotlib) in under 0.3 s; ``attnbounds CMD --help`` shows CMD's options, importing CMD's
module only and none of the heavy libraries, in under 0.5 s; a Dask worker running a D1 stress
chunk loads neither sympy nor pandas nor matplotlib.

How it is measured: each case runs in a fresh interpreter (nothing already in ``sys.modules``),
which reports the modules loaded when it is done and the CPU time of the process from just before
``from verification.cli import main`` to the return of ``main`` (the interpreter's own start-up,
20-60 ms and the same for any program, is left out; CPU time, because start-up is CPU-bound and a
wall clock on a shared machine measures the other jobs). The import set is asserted on every run;
the time is the median of three runs, against the budget times ``ATTNBOUNDS_START_SLACK``
(default 1: set it higher on a slow CI runner).
"""
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from verification.commands import COMMANDS, FAMILIES

ROOT = Path(__file__).resolve().parents[1]
SLACK = float(os.environ.get("ATTNBOUNDS_START_SLACK", "1"))
HEAVY = ("torch", "sympy", "pandas", "numba", "matplotlib")                 # never for --help
HEAVY_COMMAND = HEAVY + ("scipy", "transformers")                          # nor for a command's parser
PROBE = r"""
import contextlib, io, json, sys, time
t0 = time.process_time()
from verification.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
    code = main(sys.argv[2:])
seconds = time.process_time() - t0
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "seconds": seconds, "modules": sorted(sys.modules), "out": out.getvalue(),
               "err": err.getvalue()}, f)
"""


def start(tmp_path: Path, *argv: str, runs: int = 3) -> tuple[float, list[dict]]:
    """Run ``attnbounds ARGV`` ``runs`` times, each in a fresh interpreter: (median seconds, reports)."""
    reports = []
    for k in range(runs):
        report = tmp_path / f"report-{k}.json"
        subprocess.run([sys.executable, "-c", PROBE, str(report), *argv], cwd=ROOT, check=True, timeout=120)
        reports.append(json.loads(report.read_text()))
    return statistics.median(r["seconds"] for r in reports), reports


def loaded(reports: list[dict], names: tuple[str, ...]) -> list[str]:
    return sorted({n for r in reports for n in names if n in r["modules"]})


def test_help_lists_every_command_and_imports_none(tmp_path):
    seconds, reports = start(tmp_path, "--help")
    r = reports[0]
    assert r["code"] == 0 and r["out"].startswith("usage: attnbounds")
    listed = [m.group(1) for m in re.finditer(r"^    (\S+)", r["out"], re.M)]       # "    NAME   help"
    assert listed == list(COMMANDS)                                      # the table, in its order
    assert not loaded(reports, HEAVY), f"attnbounds --help imports {loaded(reports, HEAVY)}"
    modules = {m.rpartition(".")[0] if m.endswith(".command") else m for m in reports[0]["modules"]}
    assert not modules & set(FAMILIES.values()), "attnbounds --help imports a family"
    assert seconds < 0.3 * SLACK, f"attnbounds --help takes {seconds:.3f} s (median of 3; budget 0.3 s)"


# Each command's own module decides this one: it fails for a command whose module imports something
# heavy at module level (see the README's "Command line"); written while the families were reshaped.
@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_help_loads_only_that_command(tmp_path, name):
    seconds, reports = start(tmp_path, name, "--help")
    r = reports[0]
    assert r["code"] == 0 and r["out"].startswith(f"usage: attnbounds {name}")
    assert "--" in r["out"] or name == "theorems", "the command's options are missing"
    heavy = loaded(reports, HEAVY_COMMAND)
    assert not heavy, f"attnbounds {name} --help imports {heavy} ({COMMANDS[name].module})"
    others = sorted({c.module for c in COMMANDS.values()} - {COMMANDS[name].module, "verification.cli"})
    assert not [m for m in others if m in r["modules"]], "another command's module was imported"
    assert seconds < 0.5 * SLACK, f"attnbounds {name} --help takes {seconds:.3f} s (median of 3; budget 0.5 s)"


def test_a_wrong_command_is_one_line_and_imports_nothing(tmp_path):
    _, reports = start(tmp_path, "no-such-command", runs=1)
    r = reports[0]
    assert r["code"] == 2 and "invalid choice" in r["err"] and "Traceback" not in r["err"]
    assert not loaded(reports, HEAVY)


def test_the_table_says_what_each_command_registers():
    """The one-line help in the table is the help the command registers (its module imported here)."""
    from importlib import import_module

    from verification.options import Parser

    for name, cmd in COMMANDS.items():
        sub = Parser(prog="attnbounds").add_subparsers(dest="command")
        getattr(import_module(cmd.module), cmd.register)(sub)
        assert [(a.dest, a.help) for a in sub._choices_actions] == [(name, cmd.help)]


WORKER = r"""
import json, sys
from verification.stress.checks.plan import StressPlan
from verification.stress.checks.sweep import chunks, run_chunk  # what a Dask worker unpickles

spec, k = chunks(StressPlan("dobrushin.factor", ("dirichlet",), (3,), instances=10_000))[0].args
result = run_chunk(dict(spec, count=500), k)
json.dump({"summaries": sorted(result.summaries), "modules": sorted(sys.modules)}, open(sys.argv[1], "w"))
"""


def test_a_stress_chunk_loads_no_symbolic_table_or_plot_library(tmp_path):
    """A worker process running one D1 chunk (the function a Dask worker receives, by name)."""
    report = tmp_path / "worker.json"
    subprocess.run([sys.executable, "-c", WORKER, str(report)], cwd=ROOT, check=True, timeout=300)
    r = json.loads(report.read_text())
    assert r["summaries"] == ["dobrushin.factor"]
    heavy = [m for m in ("sympy", "pandas", "matplotlib") if m in r["modules"]]
    assert not heavy, f"a D1 stress chunk imports {heavy}"
