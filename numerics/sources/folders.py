"""What a model folder must hold besides its weights, read as data: configuration without code, and a
tokenizer that can give a text content tokens.

- :func:`refuse_code`: a configuration file (``config.json``, ``tokenizer_config.json``, a processor
  configuration) that carries an ``auto_map`` asks for custom Python code from the folder; it is
  refused (model folders are data, never code), and so is one that is not a JSON object.
- :func:`load_tokenizer`: the folder's tokenizer (``AutoTokenizer``, ``trust_remote_code=False``,
  nothing downloaded), refused when it cannot mean anything:

  * the folder holds none of the files its tokenizer class reads (``vocab_files_names``: for a BERT
    folder ``vocab.txt``; for GPT-2 ``vocab.json`` or ``merges.txt``; for Llama ``tokenizer.model``)
    nor ``tokenizer.json`` (transformers' full tokenizer file, :data:`FULL_TOKENIZER_FILE`, from
    which it builds any class's tokenizer: what ``save_pretrained`` writes for a GPT-2 today).
    transformers would build the tokenizer from its special tokens alone, every word ``[UNK]``, and
    the measurement would run on nothing; the refusal names the files looked for and the folder. A
    GGUF carries its tokenizer inside and is not asked for files; a class that reads no file
    (ByT5's bytes) is not either.
  * its vocabulary holds no token but special ones (:func:`special_ids`): every text would be
    special tokens only, and no content token would be measured.

  Padding and truncation stored in ``tokenizer.json`` are switched off (MiniLM's pads to 128): the
  measurement truncates at its own token limit.

A vocabulary that has content tokens but maps a given corpus to special tokens only (English text
through a protein model's residue vocabulary) is not refused here: that is a property of the inputs,
and the report says so (:mod:`verification.trained.report`).
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from theory.errors import InvalidInput

CODE_KEYS = ("auto_map",)  # configuration keys that point at Python code to import
FULL_TOKENIZER_FILE = "tokenizer.json"   # transformers builds any tokenizer class from it alone
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


def special_ids(tokenizer: Any) -> frozenset:
    """The ids of the tokenizer's special tokens (CLS/SEP/BOS/EOS/pad/unk/mask, chat markers: every
    added token flagged special)."""
    ids = {int(i) for i in (tokenizer.all_special_ids or [])}
    for tid, tok in getattr(tokenizer, "added_tokens_decoder", {}).items():
        if getattr(tok, "special", False):
            ids.add(int(tid))
    return frozenset(ids)


def tokenizer_files(tokenizer: Any) -> tuple[str, ...]:
    """The files the tokenizer's class reads its vocabulary from (any one of them will do), in the
    class's order: ``vocab_files_names``' values, then :data:`FULL_TOKENIZER_FILE` (empty: a class
    that needs no file).

    >>> class GPT2:
    ...     vocab_files_names = {"vocab_file": "vocab.json", "merges_file": "merges.txt"}
    >>> tokenizer_files(GPT2())
    ('vocab.json', 'merges.txt', 'tokenizer.json')
    """
    names = getattr(type(tokenizer), "vocab_files_names", None) or {}
    files = [str(v) for v in names.values() if isinstance(v, str) and v]
    return tuple(dict.fromkeys(files + [FULL_TOKENIZER_FILE])) if files else ()


def check_tokenizer(tokenizer: Any, folder: Path, gguf: bool = False) -> None:
    """Refuse a tokenizer that cannot give a text content tokens (see the module docstring):
    none of its class's files in ``folder`` (not asked of a GGUF), or a vocabulary of special
    tokens only."""
    cls = type(tokenizer).__name__
    files = tokenizer_files(tokenizer)
    if not gguf and files and not any((folder / f).is_file() for f in files):
        raise InvalidInput(f"model folder {str(folder)!r} has no tokenizer: looked for "
                           f"{' or '.join(files)} (the files of its tokenizer class {cls}) and found none; "
                           "copy the checkpoint's tokenizer files into the folder")
    vocab = tokenizer.get_vocab()
    if not set(vocab.values()) - special_ids(tokenizer):
        where = f"model {str(folder)!r}" if gguf else f"model folder {str(folder)!r}"
        raise InvalidInput(f"{where}: its tokenizer ({cls}) has no token besides its {len(vocab)} special "
                           "token(s): every text would be special tokens only")


def load_tokenizer(folder: Path, common: dict, gguf: bool = False) -> Any:
    """The tokenizer of ``folder`` (``common``: the loader's keyword arguments, ``local_files_only``,
    ``trust_remote_code=False``, the ``gguf_file``), checked by :func:`check_tokenizer`, with the
    padding and truncation of its ``tokenizer.json`` switched off."""
    from transformers import AutoTokenizer

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            tokenizer = AutoTokenizer.from_pretrained(str(folder), **common)
    except Exception as exc:
        raise InvalidInput(f"model {str(folder)!r}: tokenizer could not be loaded: {type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:300]}") from None
    check_tokenizer(tokenizer, folder, gguf)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # tokenizer.json may pad/truncate (minilm: 128); we truncate ourselves
        backend.no_padding()
        backend.no_truncation()
    return tokenizer
