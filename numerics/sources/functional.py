"""Functional checks of the embedded text models: does the checkpoint read do what it was published
to do? One measurement per input, beside a trivial baseline on the same input (the claim
``trained.functional`` of :mod:`theory.trained`; the campaign and its decision:
:mod:`verification.trained.checks.functional`). The image model's check is
:mod:`numerics.sources.saliency`.

- **Decoders** (SmolLM2, Gemma 3: a causal :class:`~numerics.sources.loaded.LoadedModel`):
  :func:`decoder_loss`, the mean loss per token (nats) of the text's tokens, each predicted from the
  tokens before it, the input framed as the attention measurement frames it (SmolLM2's chat turn,
  Gemma's ``<bos>``) and cut at its first :data:`DECODER_TOKENS` tokens, and only the text's own
  tokens scored (not the framing, no special token). The logits are the last hidden state times the token embedding (both checkpoints tie their
  output layer to it: their GGUF files hold no ``output.weight``), soft-capped where the
  configuration says so. Baseline: a unigram model of the same tokenizer, add-one smoothed over the
  whole vocabulary, fitted on corpus inputs disjoint from those scored (:func:`split_texts`).
- **Masked encoders** (AntiBERTy): :func:`masked_accuracy`, the share of masked residues predicted
  exactly, :data:`MASK_RATE` of each sequence's residues replaced by ``[MASK]`` at once (positions
  drawn from ``numpy.random.default_rng([seed, i])``), predicted by the checkpoint's own
  masked-language-model head (``cls.predictions.*`` of its weights; special tokens excluded from the
  prediction, as the package's ``fill_masks`` does). Baseline: the residue most frequent in the
  sequences not scored.
- **Sentence encoders** (all-MiniLM-L6-v2, whose weights hold no masked-language-model head, so no
  masked-token accuracy can be measured): :func:`pair_similarity`, the cosine of the embeddings of
  the two halves of one text (mean pooling over every token, then unit length: the package's
  ``modules.json``), against the cosine of the first half with the second half of another text
  (a derangement drawn from ``numpy.random.default_rng(seed)``).

A check's inputs (:func:`split_texts`): the first ``count`` corpus inputs of at least
:data:`MIN_WORDS` words are scored; a decoder's unigram is fitted on every input after the last
one scored. Every forward pass runs on one torch thread (:func:`numerics.device.single_thread`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from theory.errors import InvalidInput

MIN_WORDS = 40          # a scored text has at least this many words (halves of 20 words or more)
MASK_RATE = 0.15        # share of residues masked at once (BERT's rate)
DECODER_TOKENS = 64     # a decoder's input is cut here (the first 64 tokens of its framing and text): a forward
                        # pass of Gemma 3 on one thread, with its 262,144-way output, costs about 1.5 s at 64 tokens
HEAD = ("cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias",
        "cls.predictions.decoder.weight", "cls.predictions.bias")


@dataclass(frozen=True)
class Paired:
    """One check's measurements: per scored input, the model's value and the baseline's of
    ``metric`` (``better``: "lower" or "higher"), and how many units each averages (tokens,
    residues, 1)."""

    metric: str
    better: str
    baseline: str
    inputs: tuple[str, ...]
    model: tuple[float, ...]
    reference: tuple[float, ...]
    units: tuple[int, ...]

    @property
    def improvement(self) -> tuple[float, ...]:
        """Per input, how much better the model is than the baseline (> 0: better)."""
        sign = -1.0 if self.better == "lower" else 1.0
        return tuple(sign * (m - b) for m, b in zip(self.model, self.reference))


def split_texts(inputs: Sequence[Any], count: int, min_words: int = MIN_WORDS) -> tuple[list, list]:
    """(scored, rest): the first ``count`` of ``inputs`` with at least ``min_words`` words, and every
    input after the last of them (a baseline's fitting texts, disjoint from the scored ones)."""
    scored, last = [], -1
    for k, t in enumerate(inputs):
        if len(scored) == count:
            break
        if len(t.text.split()) >= min_words:
            scored.append(t)
            last = k
    if len(scored) < 2:
        raise InvalidInput(f"a functional check needs two inputs of at least {min_words} words; the corpus has "
                           f"{len(scored)}")
    return scored, list(inputs[last + 1:])


def hidden(model: Any, ids: torch.Tensor) -> torch.Tensor:
    """``(T, d)`` float32: the last hidden state of ``model``'s module on the token ids ``(T,)``."""
    from numerics.device import single_thread

    with torch.no_grad(), single_thread():
        out = model.module(input_ids=ids[None, :], attention_mask=torch.ones_like(ids)[None, :])
    return out.last_hidden_state[0].float()


def scored_positions(model: Any, ids: torch.Tensor) -> list[int]:
    """The positions of a framed input whose token is the text's own: after the framing's prefix
    (``template`` up to ``{text}``, with the tokenizer's own special tokens), not special."""
    prefix = model.template.split("{text}")[0] if model.template else ""
    head = list(model.tokenizer(prefix, add_special_tokens=True)["input_ids"])
    start = len(head) if ids[:len(head)].tolist() == head else 1
    return [p for p in range(max(start, 1), len(ids)) if int(ids[p]) not in model.special_ids]


def unigram(model: Any, texts: Sequence[str], vocab: int) -> np.ndarray:
    """``(vocab,)`` log-probabilities of a unigram model of ``model``'s tokenizer fitted on ``texts``
    (no framing, no special token), add-one smoothed over the whole vocabulary."""
    counts = np.ones(vocab, dtype=np.float64)
    for ids in model.tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
        ids = [i for i in ids if i not in model.special_ids and 0 <= i < vocab]
        np.add.at(counts, np.asarray(ids, dtype=np.int64), 1.0)
    return np.log(counts) - np.log(counts.sum())


def decoder_loss(model: Any, scored: Sequence[Any], fit: Sequence[Any], max_tokens: int = DECODER_TOKENS) -> Paired:
    """Mean loss per token (nats) of each scored text, its framed input cut at ``max_tokens``, against the
    unigram baseline (module docstring)."""
    if not model.causal:
        raise InvalidInput(f"model {model.name}: the loss per token is a decoder's check; this model is not causal")
    weight = model.module.get_input_embeddings().weight.detach().float()          # (V, d): the tied output layer
    cap = getattr(model.config, "final_logit_softcapping", None)
    uni = unigram(model, [t.text for t in fit], int(weight.shape[0]))
    ids_of, mine, theirs, units = [], [], [], []
    for t in scored:
        ids = model.encode(t.text).ids[:max_tokens]
        pos = scored_positions(model, ids)
        if not pos:
            raise InvalidInput(f"model {model.name}: input {t.id} has no token of its own text to score")
        logits = hidden(model, ids)[[p - 1 for p in pos]] @ weight.T                # (k, V)
        if cap:
            logits = torch.tanh(logits / cap) * cap
        target = ids[pos]
        nll = -torch.log_softmax(logits.double(), dim=-1).gather(1, target[:, None])[:, 0]
        ids_of.append(t.id)
        mine.append(float(nll.mean()))
        theirs.append(float(-uni[target.numpy()].mean()))
        units.append(len(pos))
    return Paired("loss per token (nats)", "lower", "unigram, add-one, fitted on disjoint inputs", tuple(ids_of),
                  tuple(mine), tuple(theirs), tuple(units))


def mlm_head(model: Any) -> dict[str, torch.Tensor]:
    """The masked-language-model head of ``model``'s weights file (:data:`HEAD`), float32; a file
    without one is refused."""
    from safetensors import safe_open

    path = Path(model.source)
    if path.suffix != ".safetensors" or not path.is_file():
        raise InvalidInput(f"model {model.name}: no safetensors weights at {str(path)!r} to read a masked-LM head from")
    with safe_open(str(path), "pt") as f:
        missing = [k for k in HEAD if k not in f.keys()]
        if missing:
            raise InvalidInput(f"model {model.name}: its weights hold no masked-language-model head (no {missing[0]})")
        return {k: f.get_tensor(k).float() for k in HEAD}


def mlm_logits(model: Any, head: dict, states: torch.Tensor) -> torch.Tensor:
    """``(T, V)``: BERT's prediction head (dense, the configuration's activation, LayerNorm, the decoder)."""
    act = {"gelu": torch.nn.functional.gelu, "relu": torch.relu}.get(getattr(model.config, "hidden_act", "gelu"))
    if act is None:
        raise InvalidInput(f"model {model.name}: activation {model.config.hidden_act!r} of its head is not supported")
    w = head[HEAD[0]].shape[0]
    h = act(states @ head[HEAD[0]].T + head[HEAD[1]])
    h = torch.nn.functional.layer_norm(h, (w,), head[HEAD[2]], head[HEAD[3]], float(model.config.layer_norm_eps))
    return h @ head[HEAD[4]].T + head[HEAD[5]]


def masked_accuracy(model: Any, scored: Sequence[Any], fit: Sequence[Any], seed: int = 0,
                    rate: float = MASK_RATE) -> Paired:
    """Masked-token accuracy per sequence against the most frequent residue (module docstring)."""
    mask_id = getattr(model.tokenizer, "mask_token_id", None)
    if mask_id is None:
        raise InvalidInput(f"model {model.name}: its tokenizer has no mask token")
    head = mlm_head(model)
    counts: dict[int, int] = {}
    for t in fit:
        for i in model.tokenizer(t.text, add_special_tokens=False)["input_ids"]:
            if i not in model.special_ids:
                counts[i] = counts.get(i, 0) + 1
    if not counts:
        raise InvalidInput(f"model {model.name}: no fitting sequence for the frequency baseline")
    mode = max(sorted(counts), key=lambda i: counts[i])
    special = sorted(model.special_ids)
    ids_of, mine, theirs, units = [], [], [], []
    for k, t in enumerate(scored):
        ids = model.encode(t.text).ids
        content = [p for p in range(len(ids)) if int(ids[p]) not in model.special_ids]
        m = max(1, int(round(rate * len(content))))
        pos = sorted(int(p) for p in np.random.default_rng([seed, k]).choice(content, size=m, replace=False))
        masked = ids.clone()
        masked[pos] = mask_id
        logits = mlm_logits(model, head, hidden(model, masked)[pos])
        logits[:, special] = -float("inf")
        truth = ids[pos]
        ids_of.append(t.id)
        mine.append(float((logits.argmax(dim=-1) == truth).double().mean()))
        theirs.append(float((truth == mode).double().mean()))
        units.append(m)
    return Paired("masked-token accuracy", "higher", "the most frequent residue of the unscored sequences",
                  tuple(ids_of), tuple(mine), tuple(theirs), tuple(units))


def sentence_embedding(model: Any, text: str) -> torch.Tensor:
    """``(d,)`` unit vector: the mean of the last hidden state over every token, normalised."""
    v = hidden(model, model.encode(text).ids).double().mean(dim=0)
    return v / torch.linalg.vector_norm(v)


def derangement(n: int, seed: int) -> list[int]:
    """A permutation of ``range(n)`` (n >= 2) with no fixed point, the first one
    ``numpy.random.default_rng(seed)`` draws."""
    rng = np.random.default_rng(seed)
    while True:
        p = [int(i) for i in rng.permutation(n)]
        if all(i != j for i, j in enumerate(p)):
            return p


def pair_similarity(model: Any, scored: Sequence[Any], seed: int = 0) -> Paired:
    """Cosine of the two halves of each text against its first half with another text's second half."""
    if model.causal:
        raise InvalidInput(f"model {model.name}: the sentence check is an encoder's; this model is causal")
    halves = []
    for t in scored:
        words = t.text.split()
        h = len(words) // 2
        halves.append((sentence_embedding(model, " ".join(words[:h])), sentence_embedding(model, " ".join(words[h:]))))
    other = derangement(len(halves), seed)
    mine = tuple(float(a @ b) for a, b in halves)
    theirs = tuple(float(halves[i][0] @ halves[other[i]][1]) for i in range(len(halves)))
    return Paired("cosine of two halves of one text", "higher", "halves of two texts (a seeded derangement)",
                  tuple(t.id for t in scored), mine, theirs, tuple(1 for _ in scored))
