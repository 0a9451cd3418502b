"""A trained decoder as an attention source (:class:`numerics.sources.AttentionSource`), so the
Dobrushin / rollout measurements of trained models run on it unchanged.

Inputs are texts (``numerics.sources.corpus.TextInput``) encoded as UTF-8 bytes and cut at the
model's context. Byte-level tokens have no special tokens; the attention is causal.
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch

from numerics.san.model import Decoder
from numerics.sources import AttentionInstance
from theory.errors import InvalidInput


def weights_hash(model: Decoder) -> str:
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().to(torch.float32).contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


class SANSource:
    """``instance(text_input)`` -> the attention (L, H, T, T) of one byte-encoded text."""

    causal = True
    quantised = False

    def __init__(self, model: Decoder, name: str, provenance: dict | None = None):
        self.model, self.name = model, name
        self.max_tokens = model.cfg.ctx
        self.fingerprint = weights_hash(model)
        self.provenance = dict(provenance or {}, model=name, weights=self.fingerprint)

    def instance(self, text_input: Any) -> AttentionInstance:
        ids = torch.tensor(list(text_input.text.encode("utf-8"))[: self.max_tokens], dtype=torch.int64)
        if ids.numel() < 2:
            raise InvalidInput(f"{text_input.id}: fewer than two bytes; attention needs n >= 2")
        from numerics.device import single_thread

        with single_thread():   # one intra-op thread: sums split one way whatever the machine's cores
            A = self.model.attentions(ids[None])[:, 0].to(torch.float64).numpy()   # (L, H, T, T)
        return AttentionInstance(model=self.name, input=text_input.id, sha=text_input.sha, attention=A,
                                 special=np.zeros(A.shape[-1], dtype=bool), causal=True,
                                 provenance=dict(self.provenance, input=text_input.id, sha=text_input.sha,
                                                 tokens=int(A.shape[-1])))
