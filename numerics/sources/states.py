"""What a model computes besides its attention probabilities, read so that a statement's symbols
can be bound to it (``attnbounds rollout --check``, :mod:`verification.trained.checks`): each
layer's pre-softmax scores (a ``logits`` symbol) and each layer's input hidden states (a ``tokens``
symbol). The sources read them (:meth:`numerics.sources.models.LoadedModel.states`,
:meth:`numerics.sources.onnx_attention.OnnxAttentionModel.states`); this module turns what they
read into the values bound, and refuses what cannot be bound, in one line naming the model, the
input and the symbol's kind.

Scores: the tensor the model passes to its attention softmax, ``(L, H, T, T)``, as the model
scales, masks (and soft-caps) it: transformers' eager attention computes ``softmax(scores)`` with
``scores = Q K^T * scale + mask``, the mask adding the most negative float (``torch.finfo.min``)
where a token may not attend. Those masked entries are what a statement cannot take as they are
(``exp`` of -3.4e38 is not 0, though its float is), so the mask is made explicit instead:

- a bidirectional model (an encoder, a ViT) masks nothing: every score is bound as it is, and the
  head's attention is ``softmax(L)``;
- a causal model (a decoder) masks exactly the entries above the diagonal: they are bound to 0 and
  the head's attention is ``softmax(L, mask="causal")``, which ignores them (a statement about
  ``softmax(L)`` of such an L speaks of the matrix with zeros there, not of the head);
- any other mask (a sliding window reaching back less far than the input, padding) is refused.

A masked entry is a score below :data:`MASK_FLOOR` or not finite. Every bound score is the model's
float, widened exactly to float64 (it stands for itself, :mod:`numerics.expr.inputs`). As a check
that the scores read are the ones that made the attention, ``softmax`` of the bound scores (masked
as said) must give the model's attention within :data:`ATTENTION_AGREEMENT` in every entry (float32
rounding of a softmax is about 1e-7); else the scores are refused as misread. This identifies the
tensor; it decides nothing: a verdict is decided on the bound values exactly or with a certified
enclosure.

Layer inputs: the hidden states ``(L, T, d)`` entering each layer (layer 0: the embeddings as the
first layer reads them; layer l > 0: the residual stream the layer l - 1 put out), ``d`` the model
width. They must be finite.

>>> s = np.array([[[[0.5, -3.4e38], [1.0, 2.0]]]], dtype=np.float32)
>>> A = np.array([[[[1.0, 0.0], [0.2689414, 0.7310586]]]])
>>> logits_bound(s, A, True, "model m, input t")[0, 0]
array([[0.5, 0. ],
       [1. , 2. ]])
>>> logits_bound(s, A, False, "model m, input t")
Traceback (most recent call last):
...
theory.errors.InvalidInput: model m, input t: layer 0, head 0, row 0, column 1: the model masks this score (-3.4e+38; padding), and only a causal mask (entries above the diagonal, with softmax(L, mask="causal")) can be bound to a logits symbol
"""
from __future__ import annotations

from typing import Any

import numpy as np

from theory.errors import InvalidInput

MASK_FLOOR = -1e30            # a score below this (or not finite) is a masked entry
ATTENTION_AGREEMENT = 1e-4    # max |softmax(bound scores) - attention| accepted as "the scores of this attention"
KINDS = ("stochastic", "logits", "tokens")   # what a model's symbols can be bound to


def softmax_rows(L: np.ndarray, causal: bool) -> np.ndarray:
    """Row-wise softmax of ``L`` (..., T, T) in float64, over the entries j <= i when ``causal``.

    >>> softmax_rows(np.zeros((2, 2)), True).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    L = np.asarray(L, dtype=np.float64)
    keep = np.tril(np.ones(L.shape[-2:], dtype=bool)) if causal else np.ones(L.shape[-2:], dtype=bool)
    z = np.where(keep, L, -np.inf)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.where(keep, np.exp(z), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


def logits_bound(scores: Any, attention: Any, causal: bool, where: str) -> np.ndarray:
    """The ``(L, H, T, T)`` float64 values a logits symbol is bound to on each head (module
    docstring): the model's scores, the entries above the diagonal of a causal model set to 0;
    InvalidInput (naming ``where``, the layer, head, row and column) for a mask that is not causal
    or absent, or scores whose softmax is not the model's ``attention``."""
    s = np.asarray(scores)
    if s.shape != np.shape(attention) or s.ndim != 4:
        raise InvalidInput(f"{where}: the scores read have shape {s.shape}, the attention {np.shape(attention)}; "
                           "the logits cannot be bound")
    T = s.shape[-1]
    upper = np.triu(np.ones((T, T), dtype=bool), 1) if causal else np.zeros((T, T), dtype=bool)
    with np.errstate(invalid="ignore"):
        masked = ~np.isfinite(s) | (s < MASK_FLOOR)
    bad = masked & ~upper
    if bad.any():
        l, h, i, j = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidInput(f"{where}: layer {l}, head {h}, row {i}, column {j}: the model masks this score "
                           f"({float(s[l, h, i, j]):.2g}; {'a sliding window or padding' if causal else 'padding'}), "
                           'and only a causal mask (entries above the diagonal, with softmax(L, mask="causal")) can be '
                           "bound to a logits symbol")
    L = np.where(upper, 0.0, s.astype(np.float64))
    gap = np.abs(softmax_rows(L, causal) - np.asarray(attention, dtype=np.float64))
    if not gap.max(initial=0.0) <= ATTENTION_AGREEMENT:
        l, h, i, j = (int(v) for v in np.unravel_index(int(np.nanargmax(gap)), gap.shape))
        raise InvalidInput(f"{where}: the scores read are not those of the attention (layer {l}, head {h}, row {i}, "
                           f"column {j}: softmax of the scores {float(gap[l, h, i, j]) :.2g} away from the attention); "
                           "the logits cannot be bound")
    return L


def tokens_bound(hidden: Any, layers: int, tokens: int, where: str) -> np.ndarray:
    """The ``(L, T, d)`` float64 layer inputs a tokens symbol is bound to (module docstring), or
    InvalidInput naming ``where`` for a wrong shape or a value that is not finite."""
    X = np.asarray(hidden)
    if X.ndim != 3 or X.shape[:2] != (layers, tokens) or X.shape[2] < 1:
        raise InvalidInput(f"{where}: the layer inputs read have shape {X.shape}, not ({layers}, {tokens}, d); "
                           "the tokens cannot be bound")
    bad = ~np.isfinite(X)
    if bad.any():
        l, i, k = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidInput(f"{where}: layer {l}'s input, token {i}, feature {k} is {X[l, i, k]}, not finite; the "
                           "tokens cannot be bound")
    return X.astype(np.float64)
