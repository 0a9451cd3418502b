"""Where instances come from, behind one small protocol.

- :mod:`numerics.sources.random`: random row-stochastic families, one deterministic generator per
  (seed, family, n, chunk): any chunk regenerates on its own.
- :mod:`numerics.sources.corpus`: input texts (the default pydoc corpus, user files), each with a
  content hash.
- :mod:`numerics.sources.models`: trained transformers. A model is an :class:`AttentionSource`: it
  turns one input into an :class:`AttentionInstance` (the attention probabilities ``(L, H, T, T)``,
  the special-token mask, provenance). The small transformers trained by later campaigns (other
  modalities, attention-only stacks) implement the same protocol, so the Dobrushin measurements
  run on them unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

__all__ = ["AttentionInstance", "AttentionSource"]   # the protocol; each source is its own module


@dataclass(frozen=True)
class AttentionInstance:
    """The attention of one input to one model."""

    model: str                 # the source's name
    input: str                 # the input's id
    sha: str                   # hash of the input's content: records are keyed by it
    attention: np.ndarray      # (L, H, T, T) float64 (the model's floats, widened exactly)
    special: np.ndarray        # (T,) bool: special tokens (CLS/SEP/BOS/EOS/pad/chat markers, registers)
    causal: bool               # lower-triangular attention
    provenance: dict[str, Any] = field(default_factory=dict)


class AttentionSource(Protocol):
    """A trained model seen as a source of attention instances."""

    name: str
    fingerprint: str           # hash of weights, configuration and settings (campaign key)
    causal: bool
    quantised: bool

    def instance(self, item: Any) -> AttentionInstance:
        """The attention of one input item (a text, an image, a table row)."""
        ...
