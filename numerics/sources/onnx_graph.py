"""An ONNX file read and validated as data, before anything runs: the ModelProto and the file's
sha256, the standard operator set (no custom-op domain), the one image input, the Softmax nodes,
and the graph values an attention source reads besides them (the residual stream entering the final
normalisation, each layer's input hidden states), found by walking the graph.

Refused in one line (:class:`~theory.errors.InvalidInput`, naming the file): a file that is not a
readable ONNX model, weights in external data files, a node in a custom-op domain (the domain is
named), an input that is not one image tensor ``(batch, 3, H, W)`` float32 with fixed ``H, W``, a
graph with no Softmax node. What is read from these: :mod:`numerics.sources.onnx_attention`.

>>> last_axis(-1, 4), last_axis(3, 4), last_axis(1, 4)
(True, True, False)
>>> allowed_domain(""), allowed_domain("ai.onnx"), allowed_domain("com.microsoft")
(True, True, False)
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Optional, Sequence

from theory.errors import InvalidInput

STANDARD_DOMAINS = ("", "ai.onnx")


def last_axis(axis: int, rank: int) -> bool:
    """Whether a Softmax ``axis`` is the last axis of a tensor of ``rank``."""
    return axis == -1 or axis == rank - 1


def allowed_domain(domain: str) -> bool:
    """The standard ONNX operator set (no custom-op library needed)."""
    return domain in STANDARD_DOMAINS


def walk(graph: Any):
    """Every node of ``graph`` and of its subgraphs (If / Loop / Scan bodies)."""
    import onnx

    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from walk(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from walk(g)


def read_model(path: Path) -> tuple[Any, str]:
    """(the ModelProto, sha256 of the file) or InvalidInput naming the file."""
    import onnx

    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise InvalidInput(f"model {str(path)!r} is a folder, not an .onnx file") from None
    except OSError as exc:
        raise InvalidInput(f"model {str(path)!r} cannot be read ({exc.strerror})") from None
    sha = hashlib.sha256(data).hexdigest()
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:       # protobuf DecodeError and kin: not an ONNX file
        raise InvalidInput(f"model {str(path)!r}: not a readable ONNX model ({type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:200]})") from None
    if not model.HasField("graph") or not len(model.graph.node):
        raise InvalidInput(f"model {str(path)!r}: not an ONNX model (no graph nodes)")
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        raise InvalidInput(f"model {str(path)!r}: its weights lie in external data files; save it as one "
                           ".onnx file (onnx.save_model(..., save_as_external_data=False))")
    return model, sha


def check_domains(model: Any, path: Path) -> None:
    for node in walk(model.graph):
        if not allowed_domain(node.domain):
            raise InvalidInput(f"model {str(path)!r}: node {node.name or node.op_type!r} is in the custom-op "
                               f"domain {node.domain!r}, which needs a custom-op library: refused")


def image_input_of(model: Any, path: Path) -> tuple[str, tuple[int, int]]:
    """The graph's one image input: its name and (H, W)."""
    import onnx

    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]

    def refuse(why: str) -> InvalidInput:
        return InvalidInput(f"model {str(path)!r}: {why}; an image model takes one tensor (batch, 3, H, W) float32 "
                            "with fixed H and W")
    if len(inputs) != 1:
        raise refuse(f"{len(inputs)} graph inputs ({', '.join(i.name for i in inputs) or 'none'})")
    inp = inputs[0]
    t = inp.type.tensor_type if inp.type.HasField("tensor_type") else None
    if t is None or t.elem_type != onnx.TensorProto.FLOAT or not t.HasField("shape"):
        raise refuse(f"input {inp.name!r} is not a float32 tensor of known rank")
    dims = [(d.dim_value if d.HasField("dim_value") else None) for d in t.shape.dim]
    if len(dims) != 4 or dims[1] != 3 or not (dims[2] and dims[3]) or dims[0] not in (None, 1):
        shown = "x".join("?" if d is None else str(d) for d in dims)
        raise refuse(f"input {inp.name!r} has shape {shown}")
    return inp.name, (int(dims[2]), int(dims[3]))


def opset_of(model: Any) -> int:
    """The model's version of the standard operator set."""
    return next((o.version for o in model.opset_import if o.domain in STANDARD_DOMAINS), 13)


def softmaxes(model: Any, path: Path) -> list[tuple[str, int]]:
    """(output name, axis) of every top-level Softmax node, in graph order; none: InvalidInput."""
    opset = opset_of(model)
    out = []
    for node in model.graph.node:
        if node.op_type == "Softmax" and allowed_domain(node.domain):
            axis = next((a.i for a in node.attribute if a.name == "axis"), -1 if opset >= 13 else 1)
            out.append((node.output[0], int(axis)))
    if not out:
        raise InvalidInput(f"model {str(path)!r}: no Softmax node, so no attention probabilities to read")
    return out


def residual_stream(model: Any, after: str) -> Optional[str]:
    """The last Add output (graph order) feeding a ReduceMean / LayerNormalization, after the
    Softmax output ``after`` (module docstring); None if there is none."""
    nodes = list(model.graph.node)
    start = next(i for i, n in enumerate(nodes) if after in n.output)
    norms = {x for n in nodes[start:] if n.op_type in ("ReduceMean", "LayerNormalization") for x in n.input[:1]}
    adds = [n.output[0] for n in nodes[start:] if n.op_type == "Add" and n.output[0] in norms]
    return adds[-1] if adds else None


def layer_inputs_of(model: Any, softmax_outputs: Sequence[str]) -> list[Optional[str]]:
    """Each Softmax's layer input hidden states, by value name (None where there is none): for the
    Softmax producing ``softmax_outputs[k]``, the value, among the ancestors of that Softmax and
    produced after the previous Softmax, that is read both by a normalisation (a
    LayerNormalization node, or a ReduceMean with a Sub reading the same value: a decomposed one)
    and by an Add after the Softmax (the residual connection): a pre-norm residual layer's input;
    the last such value in graph order (module docstring)."""
    nodes = list(model.graph.node)
    producer = {out: i for i, node in enumerate(nodes) for out in node.output}
    readers: dict = {}
    for i, node in enumerate(nodes):
        for x in node.input:
            readers.setdefault(x, []).append(i)

    def normalised(x: str) -> bool:
        ops = [nodes[i].op_type for i in readers.get(x, [])]
        return "LayerNormalization" in ops or ("ReduceMean" in ops and "Sub" in ops)

    out, previous = [], -1
    for name in softmax_outputs:
        at = producer[name]
        seen, stack = set(), [x for x in nodes[at].input if x]
        while stack:                                   # the ancestors of this Softmax after the previous one
            x = stack.pop()
            if x in seen or x not in producer or producer[x] <= previous:
                continue
            seen.add(x)
            stack.extend(v for v in nodes[producer[x]].input if v)
        found = [x for x in seen if normalised(x)
                 and any(nodes[i].op_type == "Add" and i > at for i in readers.get(x, []))]
        out.append(max(found, key=lambda x: producer[x]) if found else None)
        previous = at
    return out
