"""Input texts for the trained-model measurements: a default corpus and user corpora.

Default corpus: English prose from the standard library's ``pydoc_data.topics`` (the help texts of
the Python language reference; their content depends on the Python version, so every input
carries a hash of its text). Deterministic rule:

1. topics in sorted key order; each topic split into blank-line separated blocks;
2. a block is *prose* unless one of its lines is indented (code, grammar) or it is a heading
   underline (``****``, ``====``); prose blocks are whitespace-normalised;
3. all prose words form one stream, cut into consecutive windows whose word counts cycle through
   :data:`LENGTHS` (3 .. 350 words, i.e. a few tokens up to about 512 tokens).

User corpora (:func:`read_corpus`):

- ``*.jsonl``: one JSON object per line with a string field ``text`` (blank lines skipped);
  a line that is not JSON, not an object, or has no string ``text`` is a ValueError naming file
  and line.
- any other file: blank-line separated blocks if the file has blank lines, else one input per line.

Policy (reported in :attr:`Corpus.notes`, never a crash): bytes that are not UTF-8 are replaced by
U+FFFD and the affected lines are listed; empty inputs are skipped; inputs longer than
:data:`MAX_CHARS` characters are cut there (the model then truncates at its token limit,
which the measurement records). A corpus with no non-empty input is a ValueError.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

LENGTHS = (3, 12, 40, 100, 200, 350)  # words per default input, cycled
MAX_CHARS = 20_000                     # far beyond 512 tokens; protects the tokenizer
_HEADING = re.compile(r"^\s*([*=\-~^])\1{3,}\s*$")


@dataclass(frozen=True)
class TextInput:
    """One input text and where it came from."""

    id: str          # e.g. "pydoc:0007" or "notes.txt:12"
    text: str
    source: str      # corpus name or file path
    line: int = 0    # first line in the file (0 for the default corpus)

    @property
    def sha(self) -> str:
        return text_hash(self.text)


@dataclass
class Corpus:
    name: str
    inputs: list[TextInput]
    notes: list[str] = field(default_factory=list)  # what the policy did (replaced bytes, cuts, skips)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _prose_blocks(doc: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", doc):
        lines = [ln for ln in block.split("\n") if ln.strip()]
        if not lines or any(ln[:1].isspace() for ln in lines) or any(_HEADING.match(ln) for ln in lines):
            continue
        out.append(" ".join(" ".join(lines).split()))
    return out


def default_corpus(limit: Optional[int] = None) -> Corpus:
    """The pydoc-topics corpus (see the module docstring); ``limit`` keeps the first inputs."""
    from pydoc_data import topics  # standard library

    words: list[str] = []
    for key in sorted(topics.topics):
        for block in _prose_blocks(topics.topics[key]):
            words.extend(block.split())
    inputs, pos, k = [], 0, 0
    while pos < len(words) and (limit is None or len(inputs) < limit):
        size = LENGTHS[k % len(LENGTHS)]
        chunk = words[pos:pos + size]
        pos, k = pos + size, k + 1
        inputs.append(TextInput(id=f"pydoc:{len(inputs):04d}", text=" ".join(chunk), source="pydoc_data.topics"))
    return Corpus(name="pydoc", inputs=inputs,
                  notes=[f"{len(inputs)} inputs cut from {len(words)} prose words, lengths cycling {LENGTHS}"])


def _decode_lines(path: Path, notes: list[str]) -> list[str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"corpus file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"corpus {str(path)!r} is a folder, not a file") from None
    lines, bad = [], []
    for no, chunk in enumerate(raw.split(b"\n"), start=1):
        try:
            lines.append(chunk.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(chunk.decode("utf-8", errors="replace"))
            bad.append(no)
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        notes.append(f"{path}: {len(bad)} line(s) with bytes that are not UTF-8, replaced by U+FFFD "
                     f"(lines {shown})")
    return [ln.rstrip("\r") for ln in lines]


def _cap(text: str, where: str, notes: list[str]) -> str:
    if len(text) > MAX_CHARS:
        notes.append(f"{where}: {len(text)} characters, cut at {MAX_CHARS}")
        return text[:MAX_CHARS]
    return text


def _read_jsonl(path: Path, lines: list[str], notes: list[str]) -> list[TextInput]:
    inputs, empty = [], 0
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{no}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or "text" not in obj:
            raise ValueError(f"{path}:{no}: expected a JSON object with a 'text' field")
        if not isinstance(obj["text"], str):
            raise ValueError(f"{path}:{no}: field 'text' must be a string, got {type(obj['text']).__name__}")
        text = " ".join(obj["text"].split())
        if not text:
            empty += 1
            continue
        inputs.append(TextInput(id=f"{path.name}:{no}", text=_cap(text, f"{path}:{no}", notes),
                                source=str(path), line=no))
    if empty:
        notes.append(f"{path}: {empty} empty 'text' value(s) skipped")
    return inputs


def _read_text(path: Path, lines: list[str], notes: list[str]) -> list[TextInput]:
    inputs: list[TextInput] = []
    blocks = any(not ln.strip() for ln in lines[:-1]) and sum(1 for ln in lines if ln.strip()) > 0
    if blocks:  # blank-line separated blocks
        start, cur = 0, []
        for no, line in enumerate(lines + [""], start=1):
            if line.strip():
                if not cur:
                    start = no
                cur.append(line.strip())
            elif cur:
                text = " ".join(" ".join(cur).split())
                inputs.append(TextInput(id=f"{path.name}:{start}", text=_cap(text, f"{path}:{start}", notes),
                                        source=str(path), line=start))
                cur = []
        notes.append(f"{path}: blank-line separated blocks ({len(inputs)} inputs)")
    else:
        for no, line in enumerate(lines, start=1):
            text = " ".join(line.split())
            if text:
                inputs.append(TextInput(id=f"{path.name}:{no}", text=_cap(text, f"{path}:{no}", notes),
                                        source=str(path), line=no))
        notes.append(f"{path}: one input per line ({len(inputs)} inputs)")
    return inputs


def read_corpus(path: str | Path, limit: Optional[int] = None) -> Corpus:
    """A user corpus (see the module docstring)."""
    path = Path(path)
    notes: list[str] = []
    lines = _decode_lines(path, notes)
    if path.suffix.lower() == ".jsonl":
        inputs = _read_jsonl(path, lines, notes)
    else:
        inputs = _read_text(path, lines, notes)
    if not inputs:
        raise ValueError(f"corpus {str(path)!r} has no non-empty input")
    if limit is not None:
        inputs = inputs[:limit]
    return Corpus(name=path.name, inputs=inputs, notes=notes)


def load_corpus(path: str | Path | None = None, limit: Optional[int] = None) -> Corpus:
    """The default corpus when ``path`` is None, else :func:`read_corpus`."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    return default_corpus(limit) if path is None else read_corpus(path, limit)
