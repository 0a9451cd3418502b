"""ONNX transformer exports as attention sources (numerics.sources.onnx_attention) and image inputs
(numerics.sources.images), on a tiny ONNX model built here with onnx.helper: one attention layer
over the 16 pixels of a 4 x 4 image (tokens), whose Softmax output is the (1, 1, 16, 16) attention.
The real DINOv2 is tested through the CLI in tests/verification/test_rollout_dinov2.py."""
import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is a dependency (pyproject): `make setup` installs it")
pytest.importorskip("onnxruntime", reason="onnxruntime is a dependency (pyproject): `make setup` installs it")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from numerics.sources import images  # noqa: E402
from numerics.sources.onnx_attention import high_norm, is_onnx, load_onnx  # noqa: E402
from theory.errors import InvalidInput  # noqa: E402

SIDE = 4                 # a 4 x 4 image: 16 tokens, one per pixel, 3 channels each


def tiny_model(path, *, softmax=True, domain="", image_input=True, square=True, scale=1.0, nan=False):
    """Write a one-layer attention model to ``path``: tokens = pixels (1, 16, 3), Q = X Wq, K = X Wk,
    P = Softmax(Q K^T / 2) (1, 1, 16, 16), out = P X + X, then a ReduceMean (a 'final norm');
    ``nan``: a NaN added to the logits of token 0's row (NaN attention on every input)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((scale * rng.standard_normal((3, 2))).astype(np.float32), "wq"),
             numpy_helper.from_array((scale * rng.standard_normal((3, 2))).astype(np.float32), "wk"),
             numpy_helper.from_array(np.array([1, 3, SIDE * SIDE], dtype=np.int64), "shape_cn"),
             numpy_helper.from_array(np.array([1, 1, SIDE * SIDE, SIDE * SIDE], dtype=np.int64), "shape_att"),
             numpy_helper.from_array(np.array([1, SIDE * SIDE, SIDE * SIDE], dtype=np.int64), "shape_p"),
             numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")]
    nodes = [helper.make_node("Reshape", ["pixels", "shape_cn"], ["x_cn"]),
             helper.make_node("Transpose", ["x_cn"], ["x"], perm=[0, 2, 1]),            # (1, 16, 3)
             helper.make_node("MatMul", ["x", "wq"], ["q"]),
             helper.make_node("MatMul", ["x", "wk"], ["k"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"]),
             helper.make_node("Mul", ["s0", "half"], ["s1"]),
             helper.make_node("Reshape", ["s1", "shape_att"], ["s"])]                    # (1, 1, 16, 16)
    if not square:     # logits (1, 1, 16, 2): a Softmax whose output is not a square attention matrix
        nodes[-1] = helper.make_node("Unsqueeze", ["q", "axis1"], ["s"])
        inits.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"))
    if nan:
        bias = np.zeros((1, 1, SIDE * SIDE, SIDE * SIDE), dtype=np.float32)
        bias[0, 0, 0, 3] = np.nan
        inits.append(numpy_helper.from_array(bias, "nan_bias"))
        nodes[-1].output[0] = "s_clean"
        nodes.append(helper.make_node("Add", ["s_clean", "nan_bias"], ["s"]))
    if softmax:
        nodes.append(helper.make_node("Softmax", ["s"], ["p"], axis=-1, name="attn/Softmax"))
    else:
        nodes.append(helper.make_node("Relu", ["s"], ["p"]))
    if domain:
        nodes.append(helper.make_node("FancyOp", ["p"], ["p2"], domain=domain, name="fancy"))
        out_name = "p2"
    elif square:
        nodes += [helper.make_node("Reshape", ["p", "shape_p"], ["p3"]),
                  helper.make_node("MatMul", ["p3", "x"], ["ax"]),
                  helper.make_node("Add", ["ax", "x"], ["resid"]),                         # residual stream
                  helper.make_node("ReduceMean", ["resid"], ["out"], axes=[-1])]
        out_name = "out"
    else:
        out_name = "p"
    shape = [1, 3, SIDE, SIDE] if image_input else [1, 48]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, None)], inits)
    opsets = [helper.make_opsetid("", 13)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="test")
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def bn_model(path, opset, training=False):
    """A patch embedding with batch normalisation under one attention layer, as a CNN-stem vision
    transformer exports it: Conv 1x1 (3 -> 4 channels), BatchNormalization (running statistics),
    tokens = pixels (1, 16, 4), P = Softmax(X Wq (X Wk)^T) (1, 1, 16, 16), at ``opset``
    (``training``: the node also outputs the batch statistics, i.e. training mode)."""
    rng = np.random.default_rng(0)
    C = 4

    def init(a, name):
        return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)
    inits = [init(rng.standard_normal((C, 3, 1, 1)), "w"), init(rng.standard_normal(C), "b"),
             init(rng.uniform(0.5, 2, C), "gamma"), init(rng.standard_normal(C), "beta"),
             init(rng.standard_normal(C), "mean"), init(rng.uniform(0.5, 2, C), "var"),
             init(rng.standard_normal((C, 2)), "wq"), init(rng.standard_normal((C, 2)), "wk"),
             numpy_helper.from_array(np.array([1, C, SIDE * SIDE], dtype=np.int64), "shape_cn"),
             numpy_helper.from_array(np.array([1, 1, SIDE * SIDE, SIDE * SIDE], dtype=np.int64), "shape_att")]
    bn_out = ["bn", "run_mean", "run_var"] if training else ["bn"]
    nodes = [helper.make_node("Conv", ["pixels", "w", "b"], ["c"], name="patch/conv"),
             helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], bn_out, name="patch/bn",
                              **({"training_mode": 1} if training and opset >= 14 else {})),
             helper.make_node("Reshape", ["bn", "shape_cn"], ["x_cn"]),
             helper.make_node("Transpose", ["x_cn"], ["x"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["x", "wq"], ["q"]),
             helper.make_node("MatMul", ["x", "wk"], ["k"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"]),
             helper.make_node("Reshape", ["s0", "shape_att"], ["s"]),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1, name="attn/Softmax")]
    graph = helper.make_graph(nodes, "bn", [helper.make_tensor_value_info("pixels", TensorProto.FLOAT,
                                                                          [1, 3, SIDE, SIDE])],
                              [helper.make_tensor_value_info("p", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="test")
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def png(path, array):
    from skimage import io

    io.imsave(str(path), np.asarray(array, dtype=np.uint8), check_contrast=False)
    return path


@pytest.fixture
def photo(tmp_path):
    rng = np.random.default_rng(1)
    return png(tmp_path / "noise.png", rng.integers(0, 256, (9, 7, 3)))


def test_tiny_model_attention_is_the_softmax_output(tmp_path, photo):
    m = load_onnx(tiny_model(tmp_path / "tiny.onnx"), cache=False)
    assert (m.layers, m.heads, m.tokens, m.max_tokens, m.causal, m.quantised) == (1, 1, 16, 16, False, False)
    assert m.name.startswith("tiny-") and m.name.endswith(m.fingerprint[:8])
    item = images.read_images(str(photo)).inputs[0]
    inst = m.instance(item)
    assert inst.attention.shape == (1, 1, 16, 16) and inst.attention.dtype == np.float64
    assert np.array_equal(inst.attention.astype(np.float32).astype(np.float64), inst.attention)   # widened exactly
    assert np.allclose(inst.attention.sum(-1), 1, atol=1e-6)
    assert inst.special.tolist() == [True] + [False] * 15                # CLS: token 0
    # the attention is the softmax of the logits, recomputed here from the same pixels and weights
    x = m.pixels(item)[0].reshape(3, 16).T.astype(np.float64)
    w = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(tmp_path / "tiny.onnx")).graph.initializer}
    s = (x @ w["wq"]) @ (x @ w["wk"]).T / 2
    p = np.exp(s - s.max(-1, keepdims=True))
    assert np.allclose(inst.attention[0, 0], p / p.sum(-1, keepdims=True), atol=1e-5)
    prov = inst.provenance
    assert prov["input"] == "noise" and prov["text_sha"] == item.sha and prov["T"] == 16
    assert "reference evaluator" in prov["attention_read"]
    assert "cut to its Softmax outputs" in prov["attention_read"]
    assert "ImageNet" in prov["normalisation"] and isinstance(prov["high_norm_tokens"], list)
    assert m.residual_output == "resid"


def test_reference_evaluator_agrees_with_onnxruntime(tmp_path, photo):
    """The cross-check of the engine: onnxruntime (its CPU-dispatched kernels, optimisations off) on
    the same graph and pixels gives the same attention to float32 rounding, and a second reading by
    the reference evaluator is bit-identical."""
    import onnxruntime as ort

    path = tiny_model(tmp_path / "tiny.onnx")
    m = load_onnx(path, cache=False)
    x = m.pixels(images.read_images(str(photo)).inputs[0])
    model = onnx.load(str(path))
    model.graph.output.append(helper.make_tensor_value_info(m.attention_outputs[0], TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    theirs = sess.run([m.attention_outputs[0]], {m.input_name: x})[0][0]
    ours = m.run(x)[0][0]
    assert ours.shape == theirs.shape and np.allclose(ours, theirs, rtol=0, atol=1e-5)
    assert np.array_equal(ours, load_onnx(path, cache=False).run(x)[0][0])


# -- what onnx's reference evaluator gets wrong: evaluated right, and cross-checked -----------------------

def test_batchnorm_below_opset_14_gives_the_attention_of_opset_14(tmp_path, photo):
    """onnx's own kernel normalises by the batch's statistics below opset 14 (the attention of the
    planted check below differs); read here, the same network at opsets 13 and 14 gives the same
    coefficients, bit for bit, and both are what onnxruntime computes."""
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    item = images.read_images(str(photo)).inputs[0]
    got = {}
    for opset in (13, 14):
        m = load_onnx(bn_model(tmp_path / f"bn{opset}.onnx", opset), cache=False)
        x = m.pixels(item)
        got[opset] = m.attentions(item)
        theirs = ort.InferenceSession(str(tmp_path / f"bn{opset}.onnx"), providers=["CPUExecutionProvider"]).run(
            None, {"pixels": x})[0]
        assert np.allclose(got[opset], theirs, rtol=0, atol=1e-5)
    assert np.array_equal(got[13], got[14])
    onnx_own = ReferenceEvaluator(str(tmp_path / "bn13.onnx")).run(None, {"pixels": x})[0]
    assert np.abs(onnx_own - got[13]).max() > 0.01          # the bug this reading avoids


def test_the_cross_check_refuses_a_node_the_reference_evaluator_gets_wrong(tmp_path, monkeypatch):
    """Without its BatchNormalization fix, the opset-13 network is refused in one line naming the
    node (its values differ from onnxruntime's far beyond float rounding); at opset 14 onnx's own
    kernel is right and the file loads."""
    from numerics.sources import onnx_check

    monkeypatch.setattr(onnx_check, "NEW_OPS", [])
    with pytest.raises(InvalidInput) as err:
        load_onnx(bn_model(tmp_path / "bn13.onnx", 13), cache=False)
    msg = str(err.value)
    assert "'patch/bn' (BatchNormalization)" in msg and "onnxruntime" in msg and "bn13.onnx" in msg
    assert "float rounding allows" in msg and "\n" not in msg
    assert load_onnx(bn_model(tmp_path / "bn14.onnx", 14), cache=False).layers == 1


def test_the_cross_check_accepts_rounding_and_refuses_more(tmp_path, monkeypatch):
    """A Softmax kernel a few units in the last place off is rounding (accepted); one that moves a
    probability by 1e-4 is not (refused naming the node)."""
    from onnx.reference.op_run import OpRun

    from numerics.sources import onnx_check

    def softmax_off_by(factor):
        def _run(self, x, axis=-1, **_):
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            p = e / e.sum(axis=axis, keepdims=True)
            p[..., 0, 0] *= np.float32(factor)
            return (p.astype(x.dtype),)
        return type("Softmax", (OpRun,), {"op_domain": "", "_run": _run})

    path = tiny_model(tmp_path / "tiny.onnx")
    monkeypatch.setattr(onnx_check, "NEW_OPS", [onnx_check.BatchNormalization, softmax_off_by(1 + 2 ** -21)])
    assert load_onnx(path, cache=False).layers == 1
    monkeypatch.setattr(onnx_check, "NEW_OPS", [onnx_check.BatchNormalization, softmax_off_by(1 + 1e-4 * 16)])
    with pytest.raises(InvalidInput, match=r"node 'attn/Softmax' \(Softmax\) evaluates differently"):
        load_onnx(path, cache=False)


def test_batchnorm_in_training_mode_is_refused(tmp_path):
    for opset in (13, 14):
        with pytest.raises(InvalidInput, match=r"'patch/bn' is in training mode.*eval\) mode") as err:
            load_onnx(bn_model(tmp_path / f"t{opset}.onnx", opset, training=True), cache=False)
        assert f"t{opset}.onnx" in str(err.value)


def test_rounding_bound_of_a_matmul_is_twice_gamma_of_the_terms():
    """The bound of a MatMul: 2 gamma_(K+c) times (an upper bound on) |A| |B|, never below the
    true |A||B| bound; a sum computed in another order stays within it."""
    from onnx import helper as h

    from numerics.sources.onnx_check import FEW_ULPS, disagreement, gamma, product_terms, rounding_bound

    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 64)).astype(np.float32)
    b = rng.standard_normal((64, 2)).astype(np.float32)
    exact = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert np.all(product_terms(a.astype(np.float64), b.astype(np.float64)) >= exact)
    y = a @ b
    bound = rounding_bound(h.make_node("MatMul", ["a", "b"], ["y"]), [a, b], y, 17)
    assert np.all(bound >= 2 * gamma(64 + FEW_ULPS, 2.0 ** -24) * exact)
    reversed_order = np.float32(0) + np.zeros_like(y)
    for k in range(63, -1, -1):                  # the sums in the opposite order, rounded at each step
        reversed_order = (reversed_order + a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)
    assert disagreement(y, reversed_order, bound) is None
    assert disagreement(y, y + np.float32(0.05), bound) is not None


def test_same_file_elsewhere_same_fingerprint_and_attention(tmp_path, photo):
    a = load_onnx(tiny_model(tmp_path / "tiny.onnx"), cache=False)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "other.onnx").write_bytes((tmp_path / "tiny.onnx").read_bytes())
    b = load_onnx(tmp_path / "b" / "other.onnx", cache=False)
    named = load_onnx(tmp_path / "tiny.onnx", name="embedded-name", cache=False)
    assert a.fingerprint == b.fingerprint == named.fingerprint and a.name != b.name and named.name == "embedded-name"
    item = images.read_images(str(photo)).inputs[0]
    assert np.array_equal(a.attentions(item), b.attentions(item))
    scaled = load_onnx(tiny_model(tmp_path / "scaled.onnx", scale=2.0), cache=False)
    assert scaled.fingerprint != a.fingerprint and not np.array_equal(scaled.attentions(item), a.attentions(item))


def test_preprocessor_config_beside_the_file(tmp_path, photo):
    base = load_onnx(tiny_model(tmp_path / "tiny.onnx"), cache=False)
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"image_mean": [0.5] * 3, "image_std": [0.5] * 3,
                                                                   "size": {"height": 8, "width": 8}}))
    m = load_onnx(tmp_path / "tiny.onnx", cache=False)
    assert m.normalisation.mean == (0.5, 0.5, 0.5) and m.normalisation.size == (4, 4)   # the graph's size wins
    assert "preprocessor_config.json" in m.normalisation.origin and "ignored" in m.normalisation.origin
    assert m.fingerprint != base.fingerprint
    item = images.read_images(str(photo)).inputs[0]
    assert not np.array_equal(m.attentions(item), base.attentions(item))
    (tmp_path / "preprocessor_config.json").write_text(json.dumps({"image_mean": [0.5] * 3, "image_std": [0, 1, 1]}))
    with pytest.raises(InvalidInput, match="preprocessor_config.json.*std > 0"):
        load_onnx(tmp_path / "tiny.onnx", cache=False)


@pytest.mark.parametrize("kw, message", [
    (dict(nan=True), r"attention on a probe image .* is not finite: layer 0 \(Softmax output 'p'\), head 0, row 0"),
    (dict(softmax=False), "no Softmax node"),
    (dict(domain="com.example.custom"), "custom-op domain 'com.example.custom'"),
    (dict(image_input=False), "image model takes one tensor"),
    (dict(square=False), "no Softmax over the last axis has a square"),
])
def test_refusals_name_the_file(tmp_path, kw, message):
    path = tiny_model(tmp_path / "bad.onnx", **kw)
    with pytest.raises(InvalidInput, match=message) as err:
        load_onnx(path, cache=False)
    assert "bad.onnx" in str(err.value) and "\n" not in str(err.value)


def test_a_text_file_named_onnx_is_refused(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("this is not a protobuf, just some words\n" * 3)
    with pytest.raises(InvalidInput, match="notes.onnx.*(not a readable ONNX model|not an ONNX model)"):
        load_onnx(path, cache=False)
    with pytest.raises(InvalidInput, match="no such file"):
        load_onnx(tmp_path / "absent.onnx", cache=False)
    assert is_onnx(path) and is_onnx("dinov2") and not is_onnx("minilm") and not is_onnx("folder/")


def test_high_norm_tokens_flagged_above_twice_the_median():
    r = np.ones((6, 3))
    r[0] = 100.0                    # CLS is never flagged
    r[4] = 2.5                      # 2.5 x the median patch norm
    flagged, ratio = high_norm(r)
    assert flagged == [4] and ratio == 2.5
    assert high_norm(None) == (None, None)
    assert high_norm(np.ones((4, 2)))[0] == []


# -- images ------------------------------------------------------------------------------------------

def test_image_conversions(tmp_path):
    gray = np.tile(np.linspace(0, 255, 8, dtype=np.uint8), (6, 1))
    g = images.to_tensor(gray, (3, 4), (0, 0, 0), (1, 1, 1))
    assert g.shape == (1, 3, 3, 4) and np.array_equal(g[0, 0], g[0, 1]) and np.array_equal(g[0, 1], g[0, 2])
    rgba = np.zeros((4, 4, 4), dtype=np.uint8)
    rgba[..., 0] = 255
    rgba[..., 3] = 255                           # opaque red
    t = images.to_tensor(rgba, (4, 4), (0, 0, 0), (1, 1, 1))
    assert t.shape == (1, 3, 4, 4) and np.all(t[0, 0] == 1) and np.all(t[0, 1:] == 0)
    rgba[..., 3] = 0                             # transparent: white
    assert np.all(images.to_tensor(rgba, (4, 4), (0, 0, 0), (1, 1, 1)) == 1)
    # anti-aliased resizing: a one-pixel checkerboard shrunk by 4 averages towards gray (no aliasing)
    board = (np.indices((16, 16)).sum(0) % 2 * 255).astype(np.uint8)
    small = images.to_tensor(board, (4, 4), (0, 0, 0), (1, 1, 1))
    assert np.all(np.abs(small - 0.5) < 0.2)


def test_reading_a_folder_and_a_list(tmp_path):
    d = tmp_path / "imgs"
    d.mkdir()
    png(d / "b.png", np.full((5, 5), 10))
    png(d / "a.png", np.full((5, 5, 3), 200))
    (d / "notes.txt").write_text("ignored")
    c = images.load_images(str(d))
    assert [t.id for t in c.inputs] == ["a", "b"] and c.name == "imgs"
    assert all(len(t.sha) == 16 for t in c.inputs) and c.inputs[0].sha != c.inputs[1].sha
    listed = images.load_images(f"{d / 'b.png'},{d / 'a.png'}")
    assert [t.id for t in listed.inputs] == ["b", "a"]
    twice = images.load_images(f"{d / 'a.png'},{d / 'a.png'}")
    assert len(twice.inputs) == 1 and any("measured once" in n for n in twice.notes)
    assert len(images.load_images(str(d), limit=1).inputs) == 1


def _bad(folder, kind):
    """A bad --images target of one kind, under ``folder``."""
    if kind == "absent":
        return folder / "absent.png"
    if kind == "empty":
        (folder / "empty.png").write_bytes(b"")
        return folder / "empty.png"
    if kind == "text":
        (folder / "text.png").write_text("not an image")
        return folder / "text.png"
    (folder / "nothing").mkdir()
    (folder / "nothing" / "readme.txt").write_text("no image here")
    return folder / "nothing"


@pytest.mark.parametrize("kind, message", [
    ("absent", "absent.png' does not exist"),
    ("empty", "empty.png' is empty"),
    ("text", "text.png'.*not a readable PNG/JPEG"),
    ("folder", "nothing' holds no .png/.jpg/.jpeg"),
])
def test_image_refusals_name_the_file(tmp_path, kind, message):
    target = _bad(tmp_path, kind)
    with pytest.raises(InvalidInput, match=message) as err:
        images.load_images(str(target))
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidInput, match="empty name"):
        images.load_images(f"{target},")


def test_the_bundled_photographs(tmp_path):
    c = images.load_images(None)
    ids = [t.id for t in c.inputs]
    assert c.name == images.DEFAULT_NAME and ids[:4] == ["chelsea", "astronaut", "coffee", "rocket"]
    assert {t.source for t in c.inputs} <= {"scikit-image", "scikit-learn"} and len(set(ids)) == len(ids)
    assert "photographs bundled" in c.notes[0]
    assert [t.id for t in images.load_images(None, limit=2).inputs] == ids[:2]
    x = images.pixels(c.inputs[0], (14, 14), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    assert x.shape == (1, 3, 14, 14) and x.dtype == np.float32


def test_an_image_changed_after_reading_is_refused(tmp_path):
    p = png(tmp_path / "x.png", np.full((4, 4), 7))
    item = images.load_images(str(p)).inputs[0]
    png(p, np.full((4, 4), 8))
    with pytest.raises(InvalidInput, match="changed since it was read"):
        images.pixels(item, (4, 4), (0, 0, 0), (1, 1, 1))
