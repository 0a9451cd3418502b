"""A loaded transformers model as an attention source: a text tokenised (framed by its template,
truncated at its token limit, special tokens marked) and run forward, giving its attention
probabilities and, for ``rollout --check``, what a statement's symbols bind to.

Besides the attention, :meth:`LoadedModel.states` reads what ``rollout --check`` binds a statement's
``logits`` and ``tokens`` symbols to (:mod:`numerics.sources.states`): each layer's pre-softmax scores,
the inputs of ``torch.nn.functional.softmax`` whose outputs are the attention returned (read by
wrapping that function during the forward pass: :func:`softmax_inputs`; a model that computes its
attention otherwise is refused for them), and each layer's input hidden states (``hidden_states``).

How a model is found, loaded and fingerprinted: :mod:`numerics.sources.models`.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from numerics.sources import AttentionInstance
from theory.errors import InvalidInput

MAX_TOKENS = 512                       # inputs are truncated here (minilm's position limit)


@dataclass
class Encoded:
    """One tokenised input."""

    ids: torch.Tensor         # (T,) int64 token ids fed to the model
    special: torch.Tensor     # (T,) bool, True on special tokens (CLS/SEP/BOS/EOS/pad/chat markers)
    truncated: bool           # the text had more than max_tokens tokens and was cut
    n_tokens_full: int        # token count before truncation


@dataclass
class LoadedModel:
    """A loaded model plus what is needed to turn a text into attention matrices."""

    name: str                   # model id: embedded name, or folder/file name + content hash
    causal: bool                # attention is lower triangular (decided by probing the model)
    module: Any                 # the transformers model (eval, float32, eager attention)
    config: Any
    quantised: bool             # weights came from a quantised file (GGUF): quantised attention
    tokenizer: Any
    source: str                 # resolved path of the weights
    max_tokens: int = MAX_TOKENS
    template: Optional[str] = None   # e.g. chat framing; "{text}" is replaced by the input
    special_ids: frozenset = field(default_factory=frozenset)
    fingerprint: str = ""            # hash of weights, configuration, tokenizer and settings
    notes: tuple[str, ...] = ()      # what a table of its attention must say (QUANTISED_NOTE, ...)
    # the symbol kinds rollout --check binds on it (numerics.sources.states; :meth:`states`), and why not the others
    symbol_kinds = ("stochastic", "logits", "tokens")
    unbound: dict = field(default_factory=dict)

    @property
    def layers(self) -> int:
        return int(self.config.num_hidden_layers)

    @property
    def heads(self) -> int:
        return int(self.config.num_attention_heads)

    def encode(self, text: str) -> Encoded:
        """Tokenise ``text`` (framed by ``template``), truncating at ``max_tokens``."""
        if not isinstance(text, str):
            raise InvalidInput(f"model {self.name}: input must be str, got {type(text).__name__}")
        framed = self.template.format(text=text) if self.template else text
        ids = self.tokenizer(framed, add_special_tokens=True)["input_ids"]
        if len(ids) == 0:
            raise InvalidInput(f"model {self.name}: input {text[:40]!r} has no tokens")
        full = len(ids)
        if full > self.max_tokens:  # cut the content, keep the closing special tokens (SEP, im_end)
            tail = 0
            while tail < len(ids) - 1 and int(ids[len(ids) - 1 - tail]) in self.special_ids:
                tail += 1
            tail = min(tail, self.max_tokens // 2)
            ids = list(ids[: self.max_tokens - tail]) + (list(ids[len(ids) - tail:]) if tail else [])
        ids = torch.tensor(ids, dtype=torch.int64)
        special = torch.tensor([int(i) in self.special_ids for i in ids.tolist()], dtype=torch.bool)
        return Encoded(ids=ids, special=special, truncated=full > self.max_tokens, n_tokens_full=full)

    @torch.no_grad()
    def attentions_of(self, enc: Encoded) -> torch.Tensor:
        """Attention probabilities ``(layers, heads, T, T)`` float32 of an encoded input."""
        return self.forward(enc)["attention"]

    @torch.no_grad()
    def forward(self, enc: Encoded, scores: bool = False, hidden: bool = False) -> dict:
        """One forward pass of an encoded input: ``{"attention": (layers, heads, T, T)}`` float32, with
        ``scores``: ``"scores"`` (layers, heads, T, T), what the model passed to its attention softmax
        (:func:`softmax_inputs`), and with ``hidden``: ``"hidden"`` (layers, T, d), each layer's input
        hidden states (transformers' ``hidden_states[l]``, l < layers)."""
        ids = enc.ids[None, :]                                    # (1, T)
        calls: list = []
        with softmax_inputs(calls) if scores else contextlib.nullcontext():
            out = self.module(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True,
                              **({"output_hidden_states": True} if hidden else {}))
        att = getattr(out, "attentions", None)
        if not att or any(a is None for a in att):
            raise InvalidInput(f"model {self.name} returned no attention probabilities "
                             "(architecture without eager attention output?)")
        got = {"attention": torch.stack([a[0] for a in att]).float()}           # (layers, heads, T, T)
        if scores:
            got["scores"] = self._scores(calls, att)
        if hidden:
            hs = getattr(out, "hidden_states", None)
            if not hs or len(hs) < len(att):
                raise InvalidInput(f"model {self.name}: no hidden states returned for its {len(att)} layers; a tokens "
                                   "symbol cannot be bound on it")
            got["hidden"] = torch.stack([h[0] for h in hs[:len(att)]]).float()   # (layers, T, d)
        return got

    def _scores(self, calls: list, att: Any) -> torch.Tensor:
        """The softmax inputs whose outputs are the returned attention, one per layer, in order."""
        shape = tuple(att[0].shape)
        seen = [(x, y) for x, y in calls if tuple(y.shape) == shape]
        if len(seen) != len(att) or not all(torch.equal(y, a) for (_, y), a in zip(seen, att)):
            raise InvalidInput(f"model {self.name}: its pre-softmax scores cannot be read (torch.nn.functional.softmax "
                               f"made {len(seen)} attention-shaped outputs for {len(att)} layers, not the attention "
                               "returned); a logits symbol cannot be bound on it")
        return torch.stack([x[0] for x, _ in seen]).float()

    def states(self, text_input: Any, kinds: Any = ("logits", "tokens")) -> tuple:
        """``(instance, {kind: values})`` of one corpus input: its :class:`~numerics.sources.AttentionInstance`
        (as :meth:`instance`) and, for each of ``kinds``, what a statement's symbol of that kind is bound
        to (:mod:`numerics.sources.states`): ``"logits"`` (layers, heads, T, T) float64, the scores with
        a causal model's masked entries 0; ``"tokens"`` (layers, T, d) float64, each layer's input."""
        from numerics.device import single_thread
        from numerics.sources.states import logits_bound, tokens_bound

        enc = self.encode(text_input.text)
        with single_thread():
            got = self.forward(enc, scores="logits" in kinds, hidden="tokens" in kinds)
        inst = self._instance(text_input, enc, got["attention"].double().numpy())
        where = f"model {self.name}, input {text_input.id}"
        out = {}
        if "logits" in kinds:
            out["logits"] = logits_bound(got["scores"].numpy(), inst.attention, self.causal, where)
        if "tokens" in kinds:
            L, _, T, _ = inst.attention.shape
            out["tokens"] = tokens_bound(got["hidden"].numpy(), L, T, where)
        return inst, out

    def instance(self, text_input: Any) -> AttentionInstance:
        """The :class:`~numerics.sources.AttentionInstance` of one corpus input (a ``TextInput``)."""
        from numerics.device import single_thread

        enc = self.encode(text_input.text)
        with single_thread():   # one intra-op thread: sums split one way whatever the machine's cores
            A = self.attentions_of(enc).double().numpy()          # (L, H, T, T), float32 widened exactly
        return self._instance(text_input, enc, A)

    def _instance(self, text_input: Any, enc: Encoded, A: Any) -> AttentionInstance:
        return AttentionInstance(
            model=self.name, input=text_input.id, sha=text_input.sha, attention=A,
            special=enc.special.numpy(), causal=bool(self.causal),
            provenance=dict(model=self.name, quantised=bool(self.quantised), causal=bool(self.causal),
                            input=text_input.id, source=text_input.source, text_sha=text_input.sha,
                            T=int(A.shape[-1]), truncated=bool(enc.truncated), tokens_full=int(enc.n_tokens_full)))

    def attentions(self, text: str) -> torch.Tensor:
        """Attention probabilities ``(layers, heads, T, T)`` float32 for one text."""
        return self.attentions_of(self.encode(text))

    def special_mask(self, text: str) -> torch.Tensor:
        """``(T,)`` bool, True where the token is special (same tokenisation as ``attentions``)."""
        return self.encode(text).special


@contextlib.contextmanager
def softmax_inputs(calls: list):
    """Within the block, every call of ``torch.nn.functional.softmax`` appends ``(input, output)`` to
    ``calls``: transformers' eager attention computes its probabilities with it (``attn_weights =
    nn.functional.softmax(scores, dim=-1)``), so its inputs are the scores as the model scaled and
    masked them (:meth:`LoadedModel.forward` keeps those whose outputs are the attention returned).
    Restored on exit."""
    F = torch.nn.functional
    real = F.softmax

    def spy(x: Any, *args: Any, **kw: Any) -> Any:
        y = real(x, *args, **kw)
        calls.append((x, y))
        return y

    F.softmax = spy
    try:
        yield calls
    finally:
        F.softmax = real
