"""An ONNX graph's reference evaluation checked against a second evaluator, node by node, and the
nodes onnx's reference evaluator gets wrong evaluated as the standard says
(:mod:`numerics.sources.onnx_attention` reads every ONNX model through both).

**BatchNormalization.** onnx's reference evaluator normalises by the batch's own statistics below
opset 14 (its ``BatchNormalization_9`` reads the ``momentum`` attribute's default as a request for
training mode), so the same network exported at opset 13 and at opset 14 gave other attention.
The standard's inference mode (one output at opsets 7-13; ``training_mode=0`` from opset 14) is
``y = scale (x - mean) / sqrt(var + epsilon) + bias`` with the stored running statistics:
:class:`BatchNormalization` computes it, the same numpy expression as onnx's opset-14 kernel, so
both opsets give the same floats. A node in training mode (several outputs, ``training_mode=1``) is
refused: the attention would depend on the batch, not on the trained network.

**Cross-check** (:func:`cross_check`): on the probe image, every node of the graph is evaluated by
onnxruntime on exactly the inputs the reference evaluator gave it (the node cut loose from the
graph: each of its inputs a graph input fed the reference's value, its outputs renamed; one
onnxruntime session with its graph optimisations off runs them all, the weights fed as arrays), and
each of its outputs is compared with the reference's. Two float implementations of one operation on
the same inputs differ by rounding alone, which is bounded by the magnitudes involved (Higham,
*Accuracy and Stability of Numerical Algorithms*, §3.1: a sum of K terms computed in any order, with
or without fused multiply-adds, is within ``gamma_K = K u / (1 - K u)`` times the sum of the terms'
absolute values of the exact sum; ``u`` the unit roundoff of the output's type, 2^-24 for float32).
Each implementation is within that of the exact value, so the two are within twice it: an output
element is accepted when

    |reference - onnxruntime| <= 2 gamma_(K + c) M + 2 (K + c) tiny

where ``M`` bounds the magnitude of the terms and ``K`` is their number (:func:`magnitude`, each in
O(size) operations): for MatMul and Gemm an upper bound on ``|A| |B|`` (:func:`product_terms`; K the
inner dimension), for Conv the largest ``|x|`` times each output channel's sum of ``|w|``, plus
``|b|``, for a Reduce node's sum or mean its input's largest ``|x|`` (times K for a sum), for Add
and Sub ``|a| + |b|``, for Mul and Div the output, for Resize (linear, cubic: a weighted sum of 2 or
4 values per resized axis, the weights' absolute values summing to less than 2) twice the largest
input, for BatchNormalization, LayerNormalization and Softmax the terms of their formulas (a
variance computed as E[x^2] - E[x]^2 included), and for any other node (elementwise functions) the
largest absolute value among its inputs and output, with K = 1. An upper bound on M makes the check
less sharp, never wrong. ``c`` = :data:`FEW_ULPS` covers the few roundings each formula adds and the
accuracy of exp, erf, tanh and kin in libm and in onnxruntime's MLAS; ``tiny`` (the smallest normal
number) a kernel that flushes subnormal results to zero. Operators that do no arithmetic (data
movement, shapes, comparisons, IEEE conversions: :data:`EXACT`), and every integer or boolean
output, must agree exactly; where either side is not finite the two must agree exactly too (both
NaN, the same infinity). The first node (graph order) whose outputs disagree is refused in one line
naming the node, its operator, the output, the largest difference and its bound. A wrong evaluation
is orders of magnitude beyond rounding (the opset-13 BatchNormalization above: differences of the
order of the values themselves), while on DINOv2-S every node's largest difference is under 2% of
its bound.

Nodes whose inputs or outputs are not tensors (sequences, optionals) cannot be fed to onnxruntime
alone and are not cross-checked; nor are the bodies of If / Loop / Scan nodes (the node is, as a whole).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from onnx.reference.op_run import OpRun

from theory.errors import InvalidInput

FEW_ULPS = 8                 # roundings a formula adds beyond its sums, and exp/erf/tanh accuracy
SUFFIX = "::onnxruntime"     # the renamed outputs of a node cut loose (its own value, not the graph's)


class BatchNormalization(OpRun):
    """ONNX BatchNormalization in inference mode at every opset (module docstring); a node in
    training mode is refused."""

    op_domain = ""

    def _run(self, x, scale, bias, mean, var, **attrs):  # noqa: ANN001, ANN003, ANN202 (onnx's OpRun signature)
        outputs = [o for o in self.onnx_node.output if o]
        if len(outputs) > 1 or attrs.get("training_mode") == 1:
            raise InvalidInput(f"BatchNormalization node {self.onnx_node.name or outputs[0]!r} is in training mode "
                               "(it normalises by the batch's own statistics): export the model in inference "
                               "(eval) mode")
        eps = attrs.get("epsilon")
        eps = 1e-5 if eps is None else eps
        shape = (-1,) + (1,) * (x.ndim - 2)
        s, b, m, v = (np.asarray(t).reshape(shape) for t in (scale, bias, mean, var))
        return ((s * (x - m) / np.sqrt(v + eps) + b).astype(x.dtype),)


NEW_OPS = [BatchNormalization]       # the reference evaluator's own kernels replaced by these
# operators that do no arithmetic (data movement, shapes, IEEE conversions): both evaluators must agree exactly
EXACT = frozenset(("Reshape", "Transpose", "Concat", "Gather", "GatherElements", "GatherND", "Shape", "Size",
                   "Unsqueeze", "Squeeze", "Slice", "Expand", "Constant", "ConstantOfShape", "Identity", "Flatten",
                   "Split", "Tile", "Cast", "CastLike", "Pad", "DepthToSpace", "SpaceToDepth", "Where",
                   "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor"))
# operators whose bound reads their inputs' values (magnitude); any other: its largest |value|
WIDENED = frozenset(("MatMul", "Gemm", "Add", "Sub", "Sum", "Mean", "Mul", "Div", "Conv", "ConvTranspose",
                     "ReduceSum", "ReduceL1", "ReduceMean", "Einsum", "BatchNormalization", "LayerNormalization",
                     "Resize", "Softmax", "LogSoftmax"))


def unit_roundoff(dtype: Any) -> Optional[float]:
    """Half the distance from 1 to the next float of ``dtype`` (None: not a float type).

    >>> unit_roundoff(np.float32) == 2.0 ** -24, unit_roundoff(np.int64)
    (True, None)
    """
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return None
    return float(np.finfo(dt).eps) / 2


def gamma(k: int, u: float) -> float:
    """``k u / (1 - k u)``: the relative error bound of k roundings (inf when k u >= 1)."""
    ku = k * u
    return ku / (1 - ku) if ku < 1 else float("inf")


def _attr(node: Any, name: str, default: Any = None) -> Any:
    import onnx

    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _finite_max(*arrays: Any) -> float:
    vals = [np.abs(a[np.isfinite(a)]).max() for a in arrays
            if isinstance(a, np.ndarray) and a.dtype.kind == "f" and np.isfinite(a).any()]
    return float(max(vals)) if vals else 0.0


def _rowmax(x: np.ndarray, axis: int) -> np.ndarray:
    return np.abs(x).max(axis=axis, keepdims=True) if x.shape[axis] else np.zeros_like(x.sum(axis=axis, keepdims=True))


def product_terms(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """An upper bound on ``|A| |B|`` (numpy matmul broadcasting, float64) in O(size) operations:
    ``min(||a_i||_1 max_k |b_kj|, max_k |a_ik| ||b_j||_1)``.

    >>> a, b = np.array([[1.0, -2.0]]), np.array([[3.0], [-1.0]])
    >>> float(product_terms(a, b)[0, 0]) >= float((np.abs(a) @ np.abs(b))[0, 0])
    True
    """
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    l1a, maxa = np.abs(a2).sum(axis=-1, keepdims=True), _rowmax(a2, -1)          # (..., m, 1)
    l1b, maxb = np.abs(b2).sum(axis=-2, keepdims=True), _rowmax(b2, -2)          # (..., 1, n)
    out = np.minimum(l1a * maxb, maxa * l1b)
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


def einsum_terms(equation: str, ins: list) -> int:
    """The number of products summed into one output of an einsum (the contracted indices' ranges);
    an equation with an ellipsis or no ``->``: the product of the inputs' sizes (an upper bound).

    >>> einsum_terms("ij,jk->ik", [np.zeros((2, 3)), np.zeros((3, 4))])
    3
    """
    eq = equation.replace(" ", "")
    if "..." in eq or "->" not in eq:
        return int(np.prod([max(1, np.size(x)) for x in ins]))
    lhs, out = eq.split("->")
    ranges: dict = {}
    for term, x in zip(lhs.split(","), ins):
        for letter, dim in zip(term, np.shape(x)):
            ranges[letter] = dim
    return int(np.prod([d for letter, d in ranges.items() if letter not in out] or [1]))


def magnitude(node: Any, ins: list, y: np.ndarray, opset: int) -> tuple[Any, int]:
    """``(M, K)`` of the output ``y`` of ``node`` on ``ins`` (module docstring): the magnitude of the
    terms (an array broadcastable to ``y``, or a number: an upper bound on it, computed in O(size))
    and their count."""
    op = node.op_type
    if op not in WIDENED:
        return _finite_max(*ins, y), 1
    f64 = [np.asarray(x, dtype=np.float64) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x for x in ins]
    if op == "MatMul":
        return product_terms(f64[0], f64[1]), int(np.shape(f64[0])[-1])
    if op == "Gemm":
        a = f64[0].T if _attr(node, "transA", 0) else f64[0]
        b = f64[1].T if _attr(node, "transB", 0) else f64[1]
        m = abs(_attr(node, "alpha", 1.0)) * product_terms(a, b)
        if len(f64) > 2 and isinstance(f64[2], np.ndarray):
            m = m + abs(_attr(node, "beta", 1.0)) * np.abs(f64[2])
        return m, int(a.shape[1]) + 2
    if op in ("Add", "Sub"):
        return np.abs(f64[0]) + np.abs(f64[1]), 1
    if op in ("Sum", "Mean"):
        return sum(np.abs(x) for x in f64 if isinstance(x, np.ndarray)), len([x for x in node.input if x])
    if op in ("Mul", "Div"):
        return np.abs(y.astype(np.float64)), 2
    if op in ("Conv", "ConvTranspose"):     # per output channel: max |x| times the channel's sum of |w|, plus |b|
        w = np.abs(f64[1])
        per = w.sum(axis=tuple(i for i in range(w.ndim) if i != (0 if op == "Conv" else 1)))
        if op == "ConvTranspose":      # (C_in, C_out / group, ...): every input channel's weights, each group
            per = np.tile(per, max(1, y.shape[1] // max(1, per.size)))[:y.shape[1]]
        m = _finite_max(ins[0]) * per
        if len(f64) > 2 and isinstance(f64[2], np.ndarray):
            m = m + np.abs(f64[2])
        k = int(w[0].size if op == "Conv" else w.shape[0] * np.prod(w.shape[2:])) + 1
        return m.reshape((1, -1) + (1,) * (y.ndim - 2)), k
    if op in ("ReduceSum", "ReduceL1", "ReduceMean"):
        k = max(1, int(np.size(ins[0]) // max(1, y.size)))
        return _finite_max(ins[0]) * (1 if op == "ReduceMean" else k), k
    if op == "Einsum":
        k = einsum_terms(_text(_attr(node, "equation", "")), ins)
        return k * float(np.prod([_finite_max(x) for x in ins if isinstance(x, np.ndarray)])), k
    if op == "BatchNormalization":
        x, s, b, m, v = f64[:5]
        shape = (-1,) + (1,) * (x.ndim - 2)
        eps = _attr(node, "epsilon", 1e-5)
        sd = np.sqrt(v.reshape(shape) + eps)
        return (np.abs(s.reshape(shape)) * (np.abs(x) + np.abs(m.reshape(shape))) / sd + np.abs(b.reshape(shape))
                + np.abs(y.astype(np.float64))), 6
    if op == "LayerNormalization":
        x = f64[0]
        axis = _attr(node, "axis", -1) % x.ndim
        axes = tuple(range(axis, x.ndim))
        k = int(np.prod(x.shape[axis:]))
        mu = x.mean(axis=axes, keepdims=True)
        var = x.var(axis=axes, keepdims=True) + _attr(node, "epsilon", 1e-5)
        sd = np.sqrt(var)
        scale = np.abs(f64[1]) if len(f64) > 1 and isinstance(f64[1], np.ndarray) else 1.0
        bias = f64[2] if len(f64) > 2 and isinstance(f64[2], np.ndarray) else 0.0
        yy = y.astype(np.float64)
        m = (scale * (np.abs(x).mean(axis=axes, keepdims=True) + np.abs(x - mu)) / sd
             + np.abs(yy - bias) * (1 + (x * x).mean(axis=axes, keepdims=True) / var) + np.abs(yy))
        return m, k + 6
    if op == "Resize":     # a weighted sum of 2 (linear) or 4 (cubic) inputs along each resized axis
        x = f64[0]
        resized = sum(a != b for a, b in zip(x.shape, y.shape))
        taps = {"nearest": 1, "linear": 2, "cubic": 4}.get(_text(_attr(node, "mode", "nearest")), 4)
        return 2 * _finite_max(ins[0]), max(1, taps ** resized)
    if op in ("Softmax", "LogSoftmax"):
        x = f64[0]
        default = -1 if opset >= 13 else 1
        axis = _attr(node, "axis", default) % x.ndim
        axes = (axis,) if opset >= 13 else tuple(range(axis, x.ndim))
        k = int(np.prod([x.shape[a] for a in axes]))
        xf = np.where(np.isfinite(x), np.abs(x), 0.0)
        top = xf.max(axis=axes, keepdims=True)
        yy = np.abs(y.astype(np.float64))
        if op == "Softmax":
            return yy * (1 + xf + 2 * top), k + 6
        return xf + 2 * top + yy + 1, k + 6
    return _finite_max(*ins, y), 1


def rounding_bound(node: Any, ins: list, y: np.ndarray, opset: int) -> Any:
    """The largest difference rounding allows between two float evaluations of ``node`` on ``ins``
    whose output is ``y`` (module docstring); an array broadcastable to ``y`` or a number."""
    u = unit_roundoff(y.dtype)
    m, k = magnitude(node, ins, y, opset)
    tiny = float(np.finfo(y.dtype).tiny)
    with np.errstate(invalid="ignore", over="ignore"):
        return 2 * gamma(k + FEW_ULPS, u) * m + 2 * (k + FEW_ULPS) * tiny


def disagreement(a: np.ndarray, b: np.ndarray, bound: Any) -> Optional[tuple[float, float]]:
    """None when ``a`` (the reference) and ``b`` (onnxruntime) agree within ``bound`` (module
    docstring), else (the largest difference, its bound) at the worst element.

    >>> disagreement(np.float32([1.0, np.nan]), np.float32([1.0 + 2 ** -23, np.nan]), 2 ** -22)
    >>> disagreement(np.float32([1.0, 2.0]), np.float32([1.0, 2.5]), 1e-6)
    (0.5, 1e-06)
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return float("inf"), 0.0
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        return None if np.array_equal(a, b) else (float("inf"), 0.0)
    differ = a != b                                       # NaN != NaN: looked at below
    if not differ.any():
        return None
    idx = np.flatnonzero(differ)
    a64, b64 = a.ravel()[idx].astype(np.float64), b.ravel()[idx].astype(np.float64)
    lim = np.broadcast_to(np.asarray(bound, dtype=np.float64), a.shape).ravel()[idx]
    with np.errstate(invalid="ignore", over="ignore"):
        both_nan = np.isnan(a64) & np.isnan(b64)
        finite = np.isfinite(a64) & np.isfinite(b64)
        diff = np.abs(a64 - b64)
        ok = both_nan | (finite & ~(diff > lim))
        if ok.all():
            return None
        worst = np.where(ok, -np.inf, np.where(finite, diff / np.where(lim > 0, lim, np.finfo(np.float64).tiny),
                                                np.inf))
    i = int(np.argmax(worst))
    return (float(diff[i]) if finite[i] else float("inf")), float(lim[i])


def _tensor_type(value: Any) -> Optional[int]:
    import onnx

    if not isinstance(value, np.ndarray):
        return None
    try:
        return onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
    except (KeyError, TypeError, ValueError):
        return None


def _loose(sub: Any, results: dict) -> tuple[Any, list, dict]:
    """The graph of ``sub`` with every top-level node cut loose (module docstring), the nodes kept
    and what to feed it: (ModelProto, [(node, its input values, [(output, renamed output), ...])],
    {input name: value})."""
    import onnx
    from onnx import helper

    g = sub.graph
    nodes, feeds_needed, kept = [], {}, []
    for node in g.node:
        outs = [o for o in node.output if o]
        ins = [results.get(n) if n else None for n in node.input]
        if any(n and _tensor_type(results.get(n)) is None for n in list(node.input) + outs):
            continue
        loose = onnx.NodeProto()
        loose.CopyFrom(node)
        del loose.output[:]
        loose.output.extend([f"{o}{SUFFIX}" if o else "" for o in node.output])
        nodes.append(loose)
        for n in node.input:                # the weights too: fed as arrays, not copied into the graph
            if n:
                feeds_needed[n] = results[n]
        for attr in node.attribute:         # a subgraph's reads of the outer graph: fed too
            for sg in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                for n in OpRun.implicit_inputs(sg):
                    if n in results and _tensor_type(results[n]) is not None:
                        feeds_needed[n] = results[n]
        kept.append((node, ins, [(o, f"{o}{SUFFIX}") for o in outs]))
    graph_inputs = [helper.make_tensor_value_info(n, _tensor_type(v), list(v.shape)) for n, v in feeds_needed.items()]
    graph_outputs = [helper.make_tensor_value_info(r, _tensor_type(results[o]), list(results[o].shape))
                     for _, _, pairs in kept for o, r in pairs]
    graph = helper.make_graph(nodes, "cut-loose", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=list(sub.opset_import), ir_version=sub.ir_version)
    return model, kept, feeds_needed


def cross_check(sub: Any, results: dict, where: str) -> int:
    """Refuse (:class:`~theory.errors.InvalidInput`, one line naming ``where`` and the node) the first
    node of ``sub`` whose reference output ``results`` (every value of one reference run, the
    intermediate ones included) onnxruntime does not reproduce within rounding (module docstring);
    the number of nodes checked."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise InvalidInput(f"model {where}: onnxruntime, which cross-checks an ONNX model's evaluation, is not "
                           "installed (`make setup` installs it)") from None
    model, kept, feeds = _loose(sub, results)
    opset = next((o.version for o in sub.opset_import if o.domain in ("", "ai.onnx")), 13)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    try:
        session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [r for _, _, pairs in kept for _, r in pairs]
        got = dict(zip(names, session.run(names, feeds)))
    except Exception as exc:
        raise InvalidInput(f"model {where}: its graph could not be cross-checked against onnxruntime "
                           f"({type(exc).__name__}: {' '.join(str(exc).split())[:300]})") from None
    for node, ins, pairs in kept:
        for out, renamed in pairs:
            ref = np.asarray(results[out])
            theirs = np.asarray(got[renamed])
            if ref.shape == theirs.shape and ref.dtype == theirs.dtype and \
                    np.array_equal(ref, theirs, equal_nan=ref.dtype.kind in "fc"):
                continue                          # the same values: nothing to bound
            exact = ref.dtype.kind != "f" or node.op_type in EXACT
            with np.errstate(all="ignore"):       # inf and NaN in the values: compared below, never warned
                bound = 0.0 if exact else rounding_bound(node, ins, ref, opset)
                bad = disagreement(ref, theirs, bound)
            if bad is not None:
                diff, lim = bad
                label = f"{node.name!r} ({node.op_type})" if node.name else f"{node.op_type} -> {out!r}"
                raise InvalidInput(
                    f"model {where}: node {label} evaluates differently in onnx's reference evaluator and in "
                    f"onnxruntime on the probe image (output {out!r}: difference {diff:.3g}, float rounding allows "
                    f"{lim:.3g}); its attention would not be what the network computes, refused")
    return len(kept)

