"""A text model at a vision or tabular model's token count: MiniLM inputs cut to exactly ``T`` tokens.

The D1 equality share depends on the number of tokens n (random matrices at n = 17 and n = 128
differ), so the text encoder is compared with the small models trained here at *their* token
count as well as as-is. :class:`MatchedText` wraps a loaded text model
(:func:`numerics.sources.models.load_model`, read from its installed package, never downloaded)
and turns one input text into the attention of its first tokens: the tokenisation of the whole
text, cut to ``T`` tokens with its closing special tokens kept (MiniLM: ``[CLS] w_1 .. w_{T-2}
[SEP]``), exactly as the model's own truncation at ``max_tokens`` does. A text with fewer than
``T`` tokens is not used (:meth:`MatchedText.fits`): every matched instance has exactly ``T``
tokens, so its content tokens number ``T`` minus the model's special tokens (2 for MiniLM).

Any object with ``encode``, ``attentions_of``, ``special_ids``, ``name``, ``fingerprint`` and
``causal`` (a :class:`numerics.sources.models.LoadedModel`) can be wrapped.

>>> content_length(16, n_special=2)      # MiniLM inputs whose content matches 16 patches
18
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch  # noqa: E402

from numerics.sources import AttentionInstance  # noqa: E402
from theory.errors import InvalidInput


def content_length(n_content: int, n_special: int = 2) -> int:
    """The token count ``T`` whose content tokens number ``n_content``."""
    return int(n_content) + int(n_special)


@dataclass
class MatchedText:
    """A text model whose inputs are cut to a given token count."""

    model: Any

    @property
    def name(self) -> str:
        return str(self.model.name)

    @property
    def fingerprint(self) -> str:
        return str(self.model.fingerprint)

    def tokens(self, text_input: Any) -> int:
        """Token count of the whole text (before any cut)."""
        return int(self.model.encode(text_input.text).n_tokens_full)

    def fits(self, text_input: Any, T: int) -> bool:
        """The text has at least ``T`` tokens (within the model's own limit), so it can be cut to ``T``."""
        enc = self.model.encode(text_input.text)
        return len(enc.ids) >= int(T)

    def cut(self, text_input: Any, T: int) -> Any:
        """The encoding of ``text_input`` cut to exactly ``T`` tokens, closing special tokens kept."""
        enc = self.model.encode(text_input.text)
        ids = [int(i) for i in enc.ids.tolist()]
        T = int(T)
        if T < 2 or len(ids) < T:
            raise InvalidInput(f"{self.name}: input {text_input.id} has {len(ids)} tokens, fewer than T = {T}")
        tail = 0
        while tail < len(ids) - 1 and ids[len(ids) - 1 - tail] in self.model.special_ids:
            tail += 1
        tail = min(tail, T // 2)
        ids = ids[: T - tail] + (ids[len(ids) - tail:] if tail else [])
        special = torch.tensor([i in self.model.special_ids for i in ids], dtype=torch.bool)
        return type(enc)(ids=torch.tensor(ids, dtype=torch.int64), special=special,
                         truncated=enc.n_tokens_full > T, n_tokens_full=enc.n_tokens_full)

    def instance(self, text_input: Any, T: int) -> AttentionInstance:
        """The attention of the first ``T`` tokens of ``text_input`` (``(L, H, T, T)``, float64)."""
        enc = self.cut(text_input, T)
        A = self.model.attentions_of(enc).double().numpy()
        if A.shape[-1] != int(T):
            raise InvalidInput(f"{self.name}: attention of input {text_input.id} has {A.shape[-1]} tokens, not {T}")
        return AttentionInstance(
            model=self.name, input=text_input.id, sha=text_input.sha, attention=A, special=enc.special.numpy(),
            causal=bool(self.model.causal),
            provenance=dict(model=self.name, quantised=bool(getattr(self.model, "quantised", False)),
                            causal=bool(self.model.causal), input=text_input.id,
                            source=getattr(text_input, "source", ""), text_sha=text_input.sha, T=int(T),
                            matched_T=int(T), truncated=bool(enc.truncated), tokens_full=int(enc.n_tokens_full)))
