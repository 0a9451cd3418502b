"""`attnbounds verify` in two lanes (verification.cli.lanes, _cmd_verify): which sections run where,
that the second lane's output is shown and its exit status is the command's, that an interrupt in
it is an interrupt of the command, and that a failure of the first lane stops the second."""
from __future__ import annotations

import subprocess
import sys

import pytest

from verification import cli
from verification.commands import FAMILIES, SECOND_LANE


def test_the_lanes_split_the_sections_and_fall_back_to_one():
    every = list(FAMILIES)
    here, there = cli.lanes(every, False, "r.db", cores=2)
    assert there == [s for s in every if s in SECOND_LANE] and set(here) | set(there) == set(every)
    assert "trained" in here and "modalities" in here        # modalities reads trained's campaigns
    assert here.index("trained") < here.index("modalities")
    for args in ((every, True, "r.db", 2), (every, False, "r.db", 1), (every, False, ":memory:", 2),
                 (["dobrushin", "rank"], False, "r.db", 2), (["trained"], False, "r.db", 2)):
        assert cli.lanes(*args) == (list(args[0]), []), args


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """Two toy sections: `a` here (writes a file), `b` in the second lane (a stand-in process whose
    output and exit status the test sets)."""
    pkg = tmp_path / "toy_lane_a"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "command.py").write_text(
        "def verify_section(ctx):\n"
        "    import os\n"
        "    if os.environ.get('TOY_LANE_FAIL'):\n"
        "        raise RuntimeError('a planted bug in the first lane')\n"
        "    (ctx.out_dir / 'a-ran').write_text('yes')\n")
    (pkg / "checks.py").write_text(                           # the plan the main job checks before it runs
        "class Plan:\n"
        "    @classmethod\n"
        "    def for_verify(cls, seed, full):\n"
        "        return cls()\n"
        "    def check(self):\n"
        "        pass\n")
    (tmp_path / "toy_lane_b").mkdir()
    (tmp_path / "toy_lane_b" / "__init__.py").write_text("")
    (tmp_path / "toy_lane_b" / "checks.py").write_text((pkg / "checks.py").read_text())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "FAMILIES", {"a": "toy_lane_a", "b": "toy_lane_b"})
    monkeypatch.setattr("verification.commands.SECOND_LANE", ("b",))
    monkeypatch.setattr(cli, "section_of", lambda s: s)
    started = []

    def fake_lane(args, sections, log, code=0, text="b: 3 chunks stored\n", sleep=0.0):
        log.parent.mkdir(parents=True, exist_ok=True)
        script = f"import sys, time; time.sleep({sleep}); print({text!r}, end=''); sys.exit({code})"
        with open(log, "w") as out:
            child = subprocess.Popen([sys.executable, "-c", script], stdout=out, stderr=subprocess.STDOUT)
        started.append((sections, child))
        return child

    return tmp_path, fake_lane, started


def _args(tmp_path):
    from argparse import Namespace

    return Namespace(db=str(tmp_path / "r.db"), out=str(tmp_path / "out"), seed=0, full=False, only=None,
                     serial=False)


def test_the_second_lane_runs_beside_and_its_output_and_status_come_back(toy, monkeypatch, capsys):
    tmp_path, fake_lane, started = toy
    monkeypatch.setattr(cli, "lanes", lambda sections, serial, db, cores=None, full=False: (["a"], ["b"]))
    monkeypatch.setattr(cli, "_start_lane", fake_lane)
    assert cli._cmd_verify(_args(tmp_path)) == 0
    out = capsys.readouterr().out
    assert started and started[0][0] == ["b"] and (tmp_path / "out" / "a-ran").read_text() == "yes"
    assert "b: 3 chunks stored" in out and "second process" in out
    # its failure is the command's: exit status and its one line
    monkeypatch.setattr(cli, "_start_lane", lambda a, s, log: fake_lane(a, s, log, code=2, text="b: error: bad\n"))
    assert cli._cmd_verify(_args(tmp_path)) == 2
    assert "b: error: bad" in capsys.readouterr().out
    # an interrupt there is an interrupt of verify
    monkeypatch.setattr(cli, "_start_lane", lambda a, s, log: fake_lane(a, s, log, code=130))
    with pytest.raises(KeyboardInterrupt):
        cli._cmd_verify(_args(tmp_path))


def test_a_failure_in_the_first_lane_stops_the_second(toy, monkeypatch):
    tmp_path, fake_lane, started = toy
    monkeypatch.setenv("TOY_LANE_FAIL", "1")
    monkeypatch.setattr(cli, "lanes", lambda sections, serial, db, cores=None, full=False: (["a"], ["b"]))
    monkeypatch.setattr(cli, "_start_lane", lambda a, s, log: fake_lane(a, s, log, sleep=600))
    with pytest.raises(RuntimeError, match="planted bug"):
        cli._cmd_verify(_args(tmp_path))
    (_, child), = started
    assert child.poll() is not None                          # stopped, not left running


def test_the_real_second_lane_command_is_verify_serial_only(tmp_path, monkeypatch):
    """What the second process runs: this interpreter, `verify --serial --only SECTIONS`, the same
    store, output folder, seed and size, no stdin."""
    seen = {}

    class Fake:
        def __init__(self, cmd, **kw):
            seen.update(cmd=cmd, **kw)

    monkeypatch.setattr(subprocess, "Popen", Fake)
    args = _args(tmp_path)
    args.full = True
    cli._start_lane(args, ["dobrushin", "prove"], tmp_path / "out" / "lane.log")
    cmd = seen["cmd"]
    assert cmd[0] == sys.executable and cmd[cmd.index("verify") + 1:] == [
        "--serial", "--only", "dobrushin,prove", "--db", args.db, "--out", args.out, "--seed", "0", "--full"]
    assert seen["stdin"] is subprocess.DEVNULL and seen["preexec_fn"] is cli._die_with_parent
