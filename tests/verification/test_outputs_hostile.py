"""Hostile use of the outputs: a store its user cannot write (``attnbounds paper`` reads it and
leaves its bytes alone), ``kill -9`` during ``attnbounds paper`` (no empty or truncated file, the
next run cleans up), every write site going through :mod:`numerics.atomic`, refusals that come
before anything is written, every missing campaign named at once, and ``attnbounds modalities``
checkpoints following ``--out``."""
from __future__ import annotations

import functools
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest

from theory.errors import InvalidInput

import numerics.atomic as atomic
from theory.verdicts import Verdict
from verification.cli import main
from verification.report.part import MissingCampaign
from verification.store import Record, ResultStore

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

from verification.measure.attention import VERSION  # noqa: E402
from verification.testing.fakes import TOY_MAIN as MAIN  # noqa: E402

# `attnbounds paper` with one toy family of N tables and N figures, in a fresh process (the CLI's
# own main; the family and the hand-written source folder are the only things swapped in)
DRIVER = r'''
import sys, types
from pathlib import Path

import verification.paper.build as build_mod
from verification.testing.fakes import toy_part

N, SRC, argv = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]


def paper_part(store, plan=None):
    return toy_part(store, plan, n=N)


mod = types.ModuleType("toy_family")
mod.paper_part = paper_part
sys.modules["toy_family"] = mod
real = build_mod.build


def build(*args, **kw):
    print("BUILD", flush=True)          # the store is open: from here on, files are written
    return real(*args, **dict(kw, families=["toy_family"], source=SRC))


build_mod.build = build
from verification.cli import main  # noqa: E402

sys.exit(main(argv))
'''


def toy_source(folder: Path, n: int) -> Path:
    """A hand-written source folder citing every table, figure and macro of the toy family."""
    (folder / "sections").mkdir(parents=True)
    (folder / "main.tex").write_text(MAIN)
    body = ["\\section{Toy}", "There are \\ToyCount{} instances."]
    for k in range(n):
        body += [f"\\input{{tables/toy-table-{k}}}",
                 f"\\includegraphics[width=0.3\\textwidth]{{figures/toy-figure-{k}.pdf}}"]
    (folder / "sections" / "toy.tex").write_text("\n".join(body) + "\n")
    return folder


def fill(path: Path) -> Path:
    with ResultStore(path) as s:
        s.write_chunk("toy-campaign", "c0", [Record(theorem="dobrushin.factor", instance=f"i{k}",
                                                    verdict=Verdict.TIGHT if k % 2 else Verdict.HOLDS,
                                                    slack=0.0 if k % 2 else 0.125 * k) for k in range(4)])
    return path


def driver(folder: Path) -> Path:
    path = folder / "driver.py"
    path.write_text(DRIVER)
    return path


def paper_argv(drv: Path, n: int, src: Path, db: Path, out: Path, *extra: str) -> list[str]:
    return [PYTHON, str(drv), str(n), str(src), "paper", "--db", str(db), "--out", str(out), *extra]


def child_env(**extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- 6: a command that only reads opens the store read-only ------------------------------------------

def _ro_mount_works(folder: Path) -> bool:
    probe = ("mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && ! touch \"$1/probe\" 2>/dev/null")
    if shutil.which("unshare") is None:
        return False
    try:
        run = subprocess.run(["unshare", "-rm", "sh", "-c", probe, "sh", str(folder)], capture_output=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return run.returncode == 0 and not (folder / "probe").exists()


def _setpriv_works() -> bool:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    try:
        run = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PYTHON, "-c",
                              "import verification.cli"], capture_output=True, timeout=120, cwd=ROOT, env=child_env())
    except (OSError, subprocess.SubprocessError):
        return False
    return run.returncode == 0


def test_paper_reads_a_store_its_user_cannot_write(tmp_path):
    """The store lies in a read-only bind mount (root ignores file modes; a mount it cannot
    override), else it belongs to root and the command runs as nobody: `paper` succeeds and the
    store's bytes do not change."""
    (tmp_path / "probe").mkdir()
    if _ro_mount_works(tmp_path / "probe"):
        base = tmp_path
        how = "ro-mount"
    elif _setpriv_works():
        base = Path(tempfile.mkdtemp(prefix="attnbounds-ro-"))   # pytest's tmp_path is private to root
        os.chmod(base, 0o755)
        how = "setpriv"
    else:
        pytest.skip("neither a read-only bind mount (unshare -rm) nor an unprivileged user (setpriv) works here")
    try:
        n = 2
        store_dir = base / "store"
        store_dir.mkdir()
        db = fill(store_dir / "r.db")
        assert not Path(str(db) + "-wal").exists()          # closed cleanly: a WAL store, all merged
        os.chmod(store_dir, 0o755)
        os.chmod(db, 0o644)
        before = sha(db)
        src = toy_source(base / "src", n)
        drv = driver(base)
        out = base / "out"
        work = base / "work"
        for d in (out, work):
            d.mkdir()
            os.chmod(d, 0o777)
        for p in [base, *base.rglob("*")]:
            if p.is_dir() and p not in (out, work):
                os.chmod(p, 0o755)
            elif p.is_file():
                os.chmod(p, 0o644)
        cmd = paper_argv(drv, n, src, db, out)
        env = child_env(MPLCONFIGDIR=str(work), HOME=str(work))
        if how == "ro-mount":
            script = "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && shift && exec \"$@\""
            cmd = ["unshare", "-rm", "sh", "-c", script, "sh", str(store_dir), *cmd]
        else:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work, env=env)
        assert run.returncode == 0, (how, run.stdout[-2000:], run.stderr[-2000:])
        assert (out / "tables" / "toy-table-0.tex").is_file() and (out / "figures" / "toy-figure-1.pdf").is_file()
        assert "cannot be written" not in run.stderr
        assert sha(db) == before
        assert sorted(p.name for p in store_dir.iterdir()) == ["r.db"]     # nothing created beside it
    finally:
        if base != tmp_path:
            shutil.rmtree(base, ignore_errors=True)


def test_paper_leaves_a_writable_store_byte_identical(tmp_path, monkeypatch, capsys):
    """As a user who could write it (root here), `paper` still writes nothing to the store."""
    src = toy_source(tmp_path / "src", 1)
    db = fill(tmp_path / "r.db")
    before = sha(db)
    _toy_paper(monkeypatch, src)
    assert main(["paper", "--db", str(db), "--out", str(tmp_path / "out")]) == 0, capsys.readouterr().err
    assert sha(db) == before


def test_a_read_only_store_reads_as_before_and_refuses_writes(tmp_path):
    db = fill(tmp_path / "r.db")
    with ResultStore(db) as s:
        want = list(s.records("toy-campaign"))
    with ResultStore(db, readonly=True) as s:
        assert list(s.records("toy-campaign")) == want and s.count() == 4 and s.done_chunks("toy-campaign") == {"c0"}
        with pytest.raises(ValueError, match="read-only"):
            s.write_chunk("x", "y", [])
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")                                 # no tables at all: nothing stored, no error
    with ResultStore(empty, readonly=True) as s:
        assert s.count() == 0 and list(s.records()) == [] and s.done_chunks("c") == set()
    assert empty.read_bytes() == b""
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite" * 200)
    with pytest.raises(ValueError, match="not a usable SQLite"):
        ResultStore(junk, readonly=True)
    with pytest.raises(InvalidInput, match="no results store"):
        ResultStore(tmp_path / "none.db", readonly=True)
    assert not (tmp_path / "none.db").exists()


# -- 7: every file written atomically ---------------------------------------------------------------

WRITES = re.compile(
    r"\.write_text\(|\.write_bytes\(|\.savefig\(|\bsave_file\(|\btorch\.save\(|\bnp\.save[z]?\(|"
    r"\bjson\.dump\(|\bpickle\.dump\(|\bshutil\.(copy|copy2|copyfile|copytree|move)\(|\bos\.rename\(|"
    r"\.to_(csv|latex|json|html|parquet|pickle|excel)\(\s*(?!\)|hrules|index|header|float_format|columns|sep)"
    r"|\bopen\([^)]*[\"'][wax]b?\+?[\"']|\.open\(\s*[\"'][wax]|\bos\.open\(|\bos\.replace\(")
# a writer that wants a file name writes to the temporary path of `with atomic_path(...) as tmp`
NAMED = re.compile(r"\.savefig\(\s*tmp\b|\bsave_file\([^,()]*,\s*str\(tmp\)")
ALLOWED = {("verification/options.py", "probe.write_bytes("),     # --out's write probe, removed at once
           ("numerics/sources/embedded.py", "os.rename(tmp, out)"),    # a prepared model folder, moved in whole
           ("numerics/sources/embedded.py", 'with open(tmp, "wb") as fh:'),   # join_files: inside atomic_path, streamed
           ("verification/cli.py", 'with open(log, "w") as out:'),   # verify's second lane: a live log, streamed
           ("verification/testing/fakes.py", "torch.save(model.state_dict()")}   # a test's planted pickle folder


def test_every_write_site_goes_through_the_atomic_helper():
    bad = []
    for pkg in ("verification", "numerics", "theory"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "numerics/atomic.py":
                continue
            lines = path.read_text().splitlines()
            for i, line in enumerate(lines):
                code = line.split("#", 1)[0]
                if not WRITES.search(code) or any(rel == f and s in code for f, s in ALLOWED):
                    continue
                if NAMED.search(code) and any("atomic_path(" in lines[j] for j in range(max(0, i - 3), i)):
                    continue
                bad.append(f"{rel}:{i + 1}: {line.strip()}")
    assert not bad, "files written without numerics.atomic:\n" + "\n".join(bad)


def test_atomic_helper_leaves_the_old_file_when_a_write_fails(tmp_path, monkeypatch):
    from verification.paper.build import BEGIN, END, update_readme

    readme = tmp_path / "README.md"
    old = f"# x\n{BEGIN}\n- old\n{END}\n"
    readme.write_text(old)
    os.chmod(readme, 0o640)

    def crash(*a, **k):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(atomic.os, "replace", crash)
        with pytest.raises(OSError):
            update_readme(readme, "- new\n")
    assert readme.read_text() == old and sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
    assert update_readme(readme, "- new\n") is True
    assert readme.read_text() == f"# x\n{BEGIN}\n- new\n{END}\n" and (readme.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
    # a temporary file of a dead process is removed by the next write into its folder; a live one is kept
    dead = subprocess.Popen([PYTHON, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "sub" / f".a.tex{atomic.MARK}{dead.pid}-00ff"
    live = tmp_path / "sub" / f".b.tex{atomic.MARK}{os.getppid()}-00ff"
    stale.parent.mkdir()
    stale.write_bytes(b"half")
    live.write_bytes(b"half")
    assert atomic.is_temp(stale) and atomic.is_temp(live) and not atomic.is_temp(tmp_path / "a.tex")
    atomic.write_text(tmp_path / "sub" / "c.tex", "c")
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == [live.name, "c.tex"]


def _complete(path: Path) -> str | None:
    """Why ``path`` is not a whole file (None when it is)."""
    data = path.read_bytes()
    if not data:
        return "empty"
    if path.suffix == ".pdf" and not (data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")):
        return "truncated PDF"
    if path.suffix == ".png":
        from PIL import Image

        try:
            with Image.open(path) as im:
                im.load()
        except Exception as exc:  # noqa: BLE001 - any decoding error is a truncated file
            return f"unreadable PNG ({exc})"
    return None


def _final_files(folder: Path) -> int:
    try:
        return sum(1 for e in os.scandir(folder) if not atomic.is_temp(e.name))
    except FileNotFoundError:
        return 0


def test_kill_9_during_paper_leaves_whole_files_only(tmp_path):
    """Six runs killed with SIGKILL: three at random moments of the writing part of a run, three
    the moment the j-th figure file (random j) appears under its final name, when a writer that
    is not atomic has just opened it. Every file left is whole and equal to a complete run's."""
    n = 4
    src = toy_source(tmp_path / "src", n)
    db = fill(tmp_path / "r.db")
    drv = driver(tmp_path)
    env = child_env(MPLCONFIGDIR=str(tmp_path / "mpl"))

    def start(out: Path) -> tuple[subprocess.Popen, float]:
        proc = subprocess.Popen(paper_argv(drv, n, src, db, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=tmp_path)
        line = proc.stdout.readline()
        assert line.strip() == "BUILD", (line, proc.stderr.read()[-2000:] if proc.poll() is not None else "")
        return proc, time.perf_counter()

    ref = tmp_path / "ref"
    proc, t0 = start(ref)
    _, err = proc.communicate(timeout=300)
    window = time.perf_counter() - t0                    # the writing part of one run
    assert proc.returncode == 0, err[-2000:]
    want = snapshot(ref)
    assert len([k for k in want if k.startswith("figures/")]) == 2 * n

    rng = random.Random(7)
    outs, killed = [], 0
    for k in range(6):
        out = tmp_path / f"out{k}"
        proc, t0 = start(out)
        if k % 2 == 0:
            time.sleep(rng.uniform(0.0, 1.0) * window)
        else:
            j = rng.randint(1, 2 * n)
            while proc.poll() is None and _final_files(out / "figures") < j and time.perf_counter() - t0 < 120:
                time.sleep(0.0005)
        if proc.poll() is None:
            proc.kill()
            killed += 1
        proc.communicate(timeout=60)
        outs.append(out)
        for p in sorted(out.rglob("*")) if out.exists() else []:
            if not p.is_file():
                continue
            if atomic.is_temp(p):                        # a recognisable temporary file: ignored
                continue
            rel = p.relative_to(out).as_posix()
            assert _complete(p) is None, f"kill {k}: {rel} is {_complete(p)}"
            if rel in want:                              # same store, same bytes: whole and final
                assert p.read_bytes() == want[rel], f"kill {k}: {rel} differs from a complete run"
    assert killed >= 5, f"only {killed} of 6 runs were still writing when killed (window {window:.2f} s)"
    # the next run in a killed folder completes it and removes the temporary files left there
    proc, _ = start(outs[-1])
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert snapshot(outs[-1]) == want


# -- 8: refusals before anything is written; every missing campaign named; checkpoints follow --out --

from verification.testing.fakes import toy_part  # noqa: E402  (one toy family for every test)


def _toy_paper(monkeypatch, src: Path, families=("toy_family",)) -> None:
    """`attnbounds paper` in this process builds the toy family from ``src``."""
    import verification.paper.build as build_mod

    mod = types.ModuleType("toy_family")
    mod.paper_part = toy_part
    monkeypatch.setitem(sys.modules, "toy_family", mod)
    monkeypatch.setattr(build_mod, "build", functools.partial(build_mod.build, families=list(families), source=src))


def test_readme_without_markers_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys):
    src = toy_source(tmp_path / "src", 1)
    db = fill(tmp_path / "r.db")
    _toy_paper(monkeypatch, src)
    readme = tmp_path / "README.md"
    readme.write_text("# no findings block here\n")
    out = tmp_path / "out"
    assert main(["paper", "--db", str(db), "--out", str(out), "--readme", str(readme)]) == 2
    err = capsys.readouterr().err
    assert "README.md" in err and "findings block" in err and "Traceback" not in err
    assert not out.exists()                              # --out never touched
    assert readme.read_text() == "# no findings block here\n"
    assert main(["paper", "--db", str(db), "--out", str(out), "--readme", str(tmp_path / "none.md")]) == 2
    assert "none.md" in capsys.readouterr().err and not out.exists()


def test_pdf_without_tex_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys):
    import verification.paper.build as build_mod

    src = toy_source(tmp_path / "src", 1)
    db = fill(tmp_path / "r.db")
    _toy_paper(monkeypatch, src)
    monkeypatch.setattr(build_mod, "tex_engine", lambda main="main.tex": None)
    out = tmp_path / "out"
    t0 = time.perf_counter()
    assert main(["paper", "--db", str(db), "--out", str(out), "--pdf"]) == 2
    err = capsys.readouterr().err
    assert "no TeX engine" in err and "apt-get install" in err
    assert not out.exists() and time.perf_counter() - t0 < 5
    with pytest.raises(ValueError, match="no TeX engine"):   # the library call refuses first too
        with ResultStore(db, readonly=True) as s:
            build_mod.build(s, out, pdf=True)
    assert not out.exists()


def test_every_missing_campaign_is_named_in_one_message(tmp_path, monkeypatch, capsys):
    from verification.paper.build import collect

    def other_part(store, seed=0, full=False):
        raise MissingCampaign("other-campaign", "attnbounds other --seed 0")

    mod = types.ModuleType("other_family")
    mod.paper_part = other_part
    monkeypatch.setitem(sys.modules, "other_family", mod)
    tm = types.ModuleType("toy_family")
    tm.paper_part = toy_part
    monkeypatch.setitem(sys.modules, "toy_family", tm)
    with ResultStore(tmp_path / "empty.db") as s:
        with pytest.raises(MissingCampaign) as err:
            collect(s, families=["toy_family", "other_family"])
    assert err.value.missing == [("toy-campaign", "attnbounds toy"), ("other-campaign", "attnbounds other --seed 0")]
    assert re.search(r"toy-campaign.*attnbounds toy.*other-campaign.*attnbounds other --seed 0", str(err.value))
    assert err.value.campaign == "toy-campaign" and err.value.command == "attnbounds toy"
    # the real families on an empty store: a short first line, how many campaigns and the main job that
    # fills them all, then the first three campaigns with the commands that fill them and how many more,
    # on lines below it (issue 48, item 5; the first line was 599 characters)
    empty = tmp_path / "real.db"
    ResultStore(empty).close()
    assert main(["paper", "--db", str(empty), "--out", str(tmp_path / "out")]) == 2
    msg = capsys.readouterr().err
    first, *below = msg.strip().splitlines()
    assert "Traceback" not in msg and len(msg) < 1000 and below and all(ln.startswith("  ") for ln in below), msg
    assert len(first) < 160 and first.endswith("(it never recomputes): run `attnbounds verify --seed 0`"), first
    for cmd in ("attnbounds verify --only dobrushin --seed 0", "attnbounds verify --only trained --seed 0"):
        assert msg.count(f"(run `{cmd}`)") == 1, cmd      # each command once, after its family's campaigns
    assert re.search(r"\n  and \d+ more \(of trained, rank, poincare, modalities, san, prove, stress; "
                     r"`attnbounds verify --seed 0` fills them all\)$", msg.strip()), msg
    # the trained campaign shown once, with one command (modalities reads it too)
    assert msg.count(f"'trained-{VERSION}:minilm:") == 1
    assert "trained (also read by modalities)" in msg and "attnbounds rollout" not in msg


def test_modalities_checkpoints_follow_out(tmp_path, monkeypatch, capsys):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("ATTNBOUNDS_CHECKPOINTS", raising=False)
    out = tmp_path / "out"
    assert main(["modalities", "--preset", "tiny", "--models", "ft-wine", "--db", ":memory:",
                 "--out", str(out)]) == 0, capsys.readouterr().err
    assert list(cwd.iterdir()) == []                     # nothing under the working directory
    kept = sorted((out / "checkpoints" / "modalities").rglob("*.safetensors"))
    assert kept and not any(atomic.is_temp(p) for p in kept)
    assert (out / "tables" / "modalities_share.md").is_file()
    assert str(out / "checkpoints" / "modalities") in " ".join(capsys.readouterr().out.split())
    from verification.modalities.checks import checkpoint_root

    assert checkpoint_root(out) == out / "checkpoints"
    assert checkpoint_root(out, tmp_path / "ck") == tmp_path / "ck"          # --checkpoints wins
    monkeypatch.setenv("ATTNBOUNDS_CHECKPOINTS", str(tmp_path / "env"))
    assert checkpoint_root(out) == tmp_path / "env"                         # then the environment
    assert checkpoint_root(out, tmp_path / "ck") == tmp_path / "ck"
