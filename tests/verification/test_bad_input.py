"""Hostile input to the command line: every bad argument is one line naming it, exit status 2.

Also: a model folder that carries code is refused without running or asking anything, and a
resumed trained-model run never serves another input's records (the a/b/a resume).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from verification.cli import main

REPO = Path(__file__).resolve().parents[2]


def run_cli(argv, capsys):
    """(exit status, stderr) of ``attnbounds argv`` run in-process."""
    rc = main(argv)
    return rc, capsys.readouterr().err


def assert_one_line_error(rc, err, *names):
    assert rc == 2, (rc, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "error:" in lines[0]
    for name in names:
        assert name in lines[0], (name, lines[0])


@pytest.mark.parametrize("argv, name", [
    (["verify", "--only", "bogus"], "--only"),
    (["verify", "--only", "Dobrushin"], "--only"),
    (["verify", "--only", "dobrushin,bogus"], "'bogus'"),
    (["verify", "--only", ""], "--only"),
    (["dobrushin", "--sizes", ""], "--sizes"),
    (["dobrushin", "--sizes", "2,,3"], "--sizes"),
    (["dobrushin", "--sizes", "1"], "--sizes"),
    (["dobrushin", "--sizes", "1000000"], "--sizes 1000000"),
    (["dobrushin", "--families", "dirichlet,bogus"], "--families"),
    (["dobrushin", "--families", "softmax-Tx"], "--families"),
    (["dobrushin", "--seed", "-1"], "--seed"),
    (["dobrushin", "--seed", "abc"], "--seed"),
    (["rollout", "--max-tokens", "0"], "--max-tokens"),
    (["rollout", "--max-tokens", "-1"], "--max-tokens"),
    (["rollout", "--limit", "-1"], "--limit"),
    (["rollout", "--limit", "0"], "--limit"),
    (["rank", "--part", "bogus"], "--part"),
    (["rank", "--n", "100000"], "--n"),
    (["poincare", "--families", "gauss9"], "--families"),
])
def test_bad_argument_is_one_line_naming_it(argv, name, tmp_path, capsys):
    rc, err = run_cli(argv + ["--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")], capsys)
    assert_one_line_error(rc, err, name)
    assert not (tmp_path / "out" / "tables").exists() or not any((tmp_path / "out" / "tables").iterdir())


def test_out_naming_a_file_fails_before_any_computation(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    rc, err = run_cli(["dobrushin", "--sizes", "2", "--db", str(tmp_path / "r.db"), "--out", str(f)], capsys)
    assert_one_line_error(rc, err, "--out", "file.txt")
    assert not (tmp_path / "r.db").exists()  # refused before the store was opened


def test_db_that_is_a_folder_or_not_sqlite(tmp_path, capsys):
    rc, err = run_cli(["dobrushin", "--sizes", "2", "--db", str(tmp_path), "--out", str(tmp_path / "o")], capsys)
    assert_one_line_error(rc, err, "--db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    rc, err = run_cli(["dobrushin", "--sizes", "2", "--db", str(junk), "--out", str(tmp_path / "o")], capsys)
    assert_one_line_error(rc, err, "--db", "junk.db")


def test_read_only_db_fails_before_computing(tmp_path, capsys):
    """A store that cannot be written is refused at once (root ignores file modes: the check then
    runs as an unprivileged user in a child process)."""
    from verification.store import ResultStore

    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"attnbounds-ro-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o755)
    try:
        db = folder / "ro.db"
        ResultStore(db).close()
        os.chmod(db, 0o444)
        for extra in folder.glob("ro.db-*"):
            os.chmod(extra, 0o444)
        argv = ["dobrushin", "--sizes", "2", "--db", str(db), "--out", str(folder / "out")]
        if os.geteuid() != 0:
            rc, err = run_cli(argv, capsys)
        else:
            os.chmod(folder, 0o777)  # --out may be created; the store file itself stays read-only
            rc, err = _as_unprivileged_user(lambda: main(argv))
        assert_one_line_error(rc, err, "--db", "ro.db", "cannot be written")
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _as_unprivileged_user(fn):
    """(exit status, stderr) of ``fn()`` run in a forked child as user/group 65534 (nobody)."""
    import io

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        rc = 70
        try:
            os.close(r)
            os.setgid(65534)
            os.setuid(65534)
            buf = io.StringIO()
            sys.stderr = buf
            try:
                rc = fn()
            except SystemExit as exc:
                rc = exc.code
            os.write(w, buf.getvalue().encode())
        except BaseException as exc:  # report anything unexpected to the parent
            os.write(w, f"child failed: {exc!r}".encode())
        finally:
            os._exit(rc if isinstance(rc, int) else 70)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode()


# ---- model folders are data ------------------------------------------------------------------
def _minilm_folder():
    from numerics.sources.models import embedded_path

    return embedded_path("minilm")[0]


def _copy_model(dst: Path) -> Path:
    src = _minilm_folder()
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file():
            (dst / f.name).symlink_to(f) if f.suffix == ".safetensors" else shutil.copy(f, dst / f.name)
    return dst


EVIL = """
from pathlib import Path
Path({marker!r}).write_text("custom code ran")
from transformers import BertConfig, BertModel
class EvilConfig(BertConfig):
    pass
class EvilModel(BertModel):
    pass
"""


@pytest.mark.models
@pytest.mark.parametrize("where", ["config.json", "tokenizer_config.json"])
def test_model_folder_with_auto_map_is_refused_and_runs_nothing(tmp_path, where):
    folder = _copy_model(tmp_path / "model")
    marker = tmp_path / "pwned.txt"
    (folder / "evil.py").write_text(EVIL.format(marker=str(marker)))
    cfg = json.loads((folder / where).read_text())
    cfg["auto_map"] = {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel",
                       "AutoTokenizer": ["evil.EvilConfig", None]}
    (folder / where).write_text(json.dumps(cfg))
    code = "import sys; from verification.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, "rollout", "--model", str(folder), "--limit", "1",
                           "--max-tokens", "16", "--db", ":memory:", "--out", str(tmp_path / "out")],
                          cwd=REPO, input="y\ny\ny\n", capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "auto_map" in proc.stderr and where in proc.stderr and "Traceback" not in proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if ln.strip()]) == 1, proc.stderr
    assert "[y/N]" not in proc.stdout + proc.stderr
    assert not marker.exists(), "code from the model folder ran"


@pytest.mark.models
def test_loaders_never_trust_remote_code(monkeypatch, tmp_path):
    """Every transformers loader is called with trust_remote_code=False (a planted True fails)."""
    import transformers

    from numerics.sources import models

    seen = []
    for cls in ("AutoConfig", "AutoModel", "AutoTokenizer"):
        orig = getattr(transformers, cls).from_pretrained

        def spy(*a, _orig=orig, _cls=cls, **kw):
            seen.append((_cls, kw.get("trust_remote_code", "missing")))
            return _orig(*a, **kw)
        monkeypatch.setattr(getattr(transformers, cls), "from_pretrained", spy)
    models.load_model(_copy_model(tmp_path / "m"), cache=False)
    assert {c for c, _ in seen} == {"AutoConfig", "AutoModel", "AutoTokenizer"}
    assert all(v is False for _, v in seen), seen


@pytest.mark.models
def test_broken_model_files_are_one_line_errors(tmp_path, capsys):
    from numerics.sources.models import embedded_path

    folder, gguf = embedded_path("smollm2")
    cut = tmp_path / "cut.gguf"
    with open(folder / gguf, "rb") as fh:
        cut.write_bytes(fh.read(1024))
    rc, err = run_cli(["rollout", "--model", str(cut), "--db", ":memory:", "--out", str(tmp_path / "o")], capsys)
    assert_one_line_error(rc, err, "cut.gguf", "GGUF")

    bad = _copy_model(tmp_path / "bad")
    cfg = json.loads((bad / "config.json").read_text())
    cfg["hidden_size"] = "big"
    (bad / "config.json").write_text(json.dumps(cfg))
    rc, err = run_cli(["rollout", "--model", str(bad), "--db", ":memory:", "--out", str(tmp_path / "o")], capsys)
    assert_one_line_error(rc, err, "config.json", "hidden_size")

    (bad / "config.json").write_text("{not json")
    rc, err = run_cli(["rollout", "--model", str(bad), "--db", ":memory:", "--out", str(tmp_path / "o")], capsys)
    assert_one_line_error(rc, err, "config.json", "not valid JSON")


# ---- resume keyed by content --------------------------------------------------------------------
@pytest.mark.models
def test_aba_resume_never_serves_another_inputs_records(tmp_path, capsys):
    """``--texts a/t.txt``, then ``b/t.txt`` (same name, other text), then ``a/t.txt`` again on one
    store: the third report equals the first, and both texts' records are stored side by side."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "t.txt").write_text("The cat sat on the mat.\nA dog barked twice at night.\n")
    (tmp_path / "b" / "t.txt").write_text("Stocks fell sharply today.\nRain is expected tomorrow morning.\n")
    db, out = str(tmp_path / "r.db"), tmp_path / "out"

    def run(which):
        rc, err = run_cli(["rollout", "--model", "minilm", "--texts", str(tmp_path / which / "t.txt"),
                           "--max-tokens", "16", "--db", db, "--out", str(out)], capsys)
        assert rc == 0, err
        return {p.name: p.read_bytes() for p in sorted((out / "tables").glob("trained-*minilm*"))}

    first, second, third = run("a"), run("b"), run("a")
    assert first and third == first
    assert second["trained-d1-minilm.csv"] != first["trained-d1-minilm.csv"] or \
        second["trained-rollout-minilm.csv"] != first["trained-rollout-minilm.csv"]
    with sqlite3.connect(db) as con:
        shas = {json.loads(p)["text_sha"] for (p,) in            # the model's records (not the random baselines)
                con.execute("SELECT provenance FROM records WHERE campaign LIKE 'trained-v%'")}
    assert len(shas) == 4  # two texts in each file, none overwritten

    # an edited line, then reverted: the reverted run reports the original numbers again
    (tmp_path / "a" / "t.txt").write_text("The cat sat on the mat.\nA dog barked once.\n")
    run("a")
    (tmp_path / "a" / "t.txt").write_text("The cat sat on the mat.\nA dog barked twice at night.\n")
    assert run("a") == first


def test_tables_are_never_cut_when_output_is_not_a_terminal(capsys):
    from verification.cli import make_console
    from verification.report.tables import print_table

    cols = [f"a fairly long column title number {i}" for i in range(14)]
    rows = [[f"value {i}-{j} [0.12, 0.34]" for j in range(14)] for i in range(3)]
    print_table(make_console(), rows, cols, "wide")
    out = capsys.readouterr().out
    assert "…" not in out and "..." not in out
    assert "a fairly long column title number 13" in out and "value 2-13 [0.12, 0.34]" in out


# ---- degenerate attention: named, and refused before a new store exists -------------------------
def attention_onnx(path, *, scale=1.0, sink=False):
    """One attention layer over the 16 pixels of a 4 x 4 image, P = Softmax(X Wq (X Wk)^T); ``scale``
    multiplies the weights (1e30: logits overflow to inf on a real image, NaN attention, while the
    probe image, all zeros, gives logits 0); ``sink``: +1000 on column 0 of the logits (every token
    puts all its attention on token 0, the CLS token, a special one)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array((scale * rng.standard_normal((3, 2))).astype(np.float32), "wq"),
             numpy_helper.from_array((scale * rng.standard_normal((3, 2))).astype(np.float32), "wk"),
             numpy_helper.from_array(np.array([1, 3, 16], dtype=np.int64), "cn"),
             numpy_helper.from_array(np.array([1, 1, 16, 16], dtype=np.int64), "att")]
    nodes = [helper.make_node("Reshape", ["image", "cn"], ["x_cn"]),
             helper.make_node("Transpose", ["x_cn"], ["x"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["x", "wq"], ["q"]),
             helper.make_node("MatMul", ["x", "wk"], ["k"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"]),
             helper.make_node("Reshape", ["s0", "att"], ["s"])]
    if sink:
        bias = np.zeros((1, 1, 16, 16), dtype=np.float32)
        bias[..., 0] = 1000.0
        inits.append(numpy_helper.from_array(bias, "sink"))
        nodes[-1].output[0] = "s1"
        nodes.append(helper.make_node("Add", ["s1", "sink"], ["s"]))
    nodes.append(helper.make_node("Softmax", ["s"], ["p"], axis=-1))
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("p", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def noise_png(path):
    import numpy as np
    from skimage import io

    io.imsave(str(path), np.random.default_rng(1).integers(0, 256, (9, 7, 3)).astype(np.uint8), check_contrast=False)
    return path


@pytest.mark.parametrize("kind, what", [("nan", "is not finite"), ("sink", "on special tokens only")])
def test_degenerate_attention_is_refused_naming_model_input_layer_head_and_creates_nothing(tmp_path, capsys, kind,
                                                                                           what):
    pytest.importorskip("onnxruntime")
    from numerics.sources.onnx_attention import load_onnx

    model = attention_onnx(tmp_path / f"{kind}.onnx", **({"scale": 1e30} if kind == "nan" else {"sink": True}))
    name = load_onnx(model, cache=False).name         # loads: the probe image's attention is fine
    photo = noise_png(tmp_path / "noise.png")
    work = tmp_path / "work"
    work.mkdir()
    rc, err = run_cli(["rollout", "--model", str(model), "--images", str(photo), "--db", str(work / "sub" / "r.db"),
                       "--out", str(work / "out")], capsys)
    assert_one_line_error(rc, err, f"model {name}", "input noise", "layer 0", "head 0", what)
    assert not list(work.iterdir())                   # a new store: refused before it was made
    # mid-run on a store that exists: the same line, from the chunk that measures it
    good = attention_onnx(tmp_path / "good.onnx")
    db = str(tmp_path / "r.db")
    assert run_cli(["rollout", "--model", str(good), "--images", str(photo), "--db", db,
                    "--out", str(tmp_path / "out")], capsys)[0] == 0
    rc, err = run_cli(["rollout", "--model", str(model), "--images", str(photo), "--db", db,
                       "--out", str(tmp_path / "out")], capsys)
    assert_one_line_error(rc, err, f"model {name}", "input noise", "layer 0", "head 0", what)


def test_a_model_folder_is_refused_before_its_weights_are_read(tmp_path, monkeypatch, capsys):
    """A folder without a tokenizer (or with an auto_map) is refused before any weight is read, and
    before the default corpus is read (a path's own refusals come first)."""
    from numerics.sources import corpus, models
    from verification.testing.fakes import tiny_bert

    bare = tiny_bert(tmp_path / "bare", tokenizer=False)
    capsys.readouterr()                                # the folder's writing, not the command's
    read = []
    monkeypatch.setattr(models, "build_module", lambda *a, **k: read.append("weights"))
    rc, err = run_cli(["rollout", "--model", str(bare), "--db", ":memory:", "--out", str(tmp_path / "o")], capsys)
    assert_one_line_error(rc, err, "no tokenizer", str(bare))
    assert read == []
    (bare / "config.json").write_text(json.dumps({**json.loads((bare / "config.json").read_text()),
                                                  "auto_map": {"AutoModel": "evil.Model"}}))
    monkeypatch.setattr(corpus, "default_corpus", lambda *a, **k: read.append("corpus"))
    rc, err = run_cli(["rollout", "--model", str(bare), "--db", ":memory:", "--out", str(tmp_path / "o")], capsys)
    assert_one_line_error(rc, err, "auto_map")
    assert read == []
