"""Input texts for the trained-model measurements: a default corpus and user corpora.

Default corpus (:func:`default_corpus`, name :data:`DEFAULT_NAME`): English text of three offline
sources of different register, interleaved input by input (pydoc, docstrings, licenses, pydoc, ...),
so that the first ``k`` inputs hold about ``k/3`` of each. Their content depends on the Python
version and the installed packages, so every input carries a hash of its text (records are keyed by
it). The sources (:data:`SOURCES`):

- ``pydoc``: the help texts of the Python language reference (``pydoc_data.topics``), topics in
  sorted key order;
- ``docstrings``: the docstrings of a fixed list of standard-library modules (:data:`DOC_MODULES`):
  the module's own, then those of the public functions and classes defined at the top of its source
  file, in sorted name order, read with ``ast`` from the file (never imported, so the texts do not
  depend on what else was imported or patched);
- ``licenses``: the license texts shipped with the installed distributions (their ``*.dist-info``
  folders, found through ``importlib.metadata``): the files named LICENSE / LICENCE / COPYING / NOTICE
  at the top of a dist-info folder or its ``licenses/`` folder (vendored and third-party copies
  skipped), distributions in sorted name order, a text that repeats an earlier one up to its
  copyright lines dropped. The files are read as text (data, never code).

Rule for each source: split its texts into blank-line separated blocks; keep a block unless one of
its lines is indented (code, grammar; licenses: every block, stripped) or a heading underline
(``****``, ``====``), or (docstrings) a doctest line (``>>>``, ``...``); whitespace-normalise; all
kept words form one stream per source, cut into consecutive windows whose word counts cycle through
:data:`LENGTHS` (3 .. 350 words, i.e. a few tokens up to about 512 tokens). :func:`pydoc_corpus` is the pydoc source
alone.

Antibody corpus (:func:`antibody_corpus`, name :data:`ANTIBODY_NAME`), the inputs of the protein
model AntiBERTy: the human germline V-gene segments of antibody heavy (IGHV), kappa (IGKV) and lambda
(IGLV) chains, amino acids in one-letter code, from the table ``all_germlines`` in the file
germlines module of the installed package ``anarci`` (located with ``importlib.util.find_spec``, never
imported; the file is parsed with ``ast`` and the table read with ``ast.literal_eval``: data, never
code). IMGT gap characters ``-`` are dropped, identical sequences kept once (first allele in sorted
name order), chains interleaved H, K, L. These are real germline sequences, not rearranged
antibodies: no D gene, no junction, no CDR3 beyond its germline start. Loaded by name
(``load_corpus("antibody-v-genes")``, ``--texts antibody-v-genes``).

User corpora (:func:`read_corpus`):

- ``*.jsonl``: one JSON object per line with a string field ``text`` (blank lines skipped);
  a line that is not JSON, not an object, or has no string ``text`` is an InvalidInput (a ValueError) naming file
  and line.
- any other file: blank-line separated blocks if the file has blank lines, else one input per line.

Policy (reported in :attr:`Corpus.notes`, never a crash): bytes that are not UTF-8 are replaced by
U+FFFD and the affected lines are listed; empty inputs are skipped; inputs longer than
:data:`MAX_CHARS` characters are cut there (the model then truncates at its token limit,
which the measurement records). A corpus with no non-empty input is an InvalidInput (a ValueError).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from theory.errors import InvalidInput

LENGTHS = (3, 12, 40, 100, 200, 350)  # words per default input, cycled
MAX_CHARS = 20_000                     # far beyond 512 tokens; protects the tokenizer
_HEADING = re.compile(r"^\s*([*=\-~^])\1{3,}\s*$")
SOURCES = ("pydoc", "docstrings", "licenses")      # the default corpus's sources, interleaved in this order
PREFIX = {"pydoc": "pydoc", "docstrings": "doc", "licenses": "lic"}   # input ids: "<prefix>:<k>"
DEFAULT_NAME = "pydoc+doc+lic"                      # the default corpus (part of every campaign name)
DOC_MODULES = ("abc", "argparse", "base64", "bisect", "calendar", "collections", "contextlib", "copy", "csv",
               "dataclasses", "datetime", "decimal", "difflib", "enum", "fractions", "functools", "glob", "gzip",
               "hashlib", "heapq", "html", "inspect", "ipaddress", "itertools", "json", "logging", "operator",
               "pathlib", "pickle", "pprint", "queue", "random", "re", "shlex", "shutil", "statistics", "string",
               "struct", "tempfile", "textwrap", "threading", "typing", "unittest", "uuid", "zipfile")
ANTIBODY_NAME = "antibody-v-genes"          # the antibody corpus (part of AntiBERTy's campaign names)
ANTIBODY_CHAINS = (("H", "IGHV"), ("K", "IGKV"), ("L", "IGLV"))
_LICENSE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE)([._-].*)?$", re.IGNORECASE)


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


def _prose_blocks(doc: str, loose: bool = False, doctest: bool = False) -> list[str]:
    """The kept blocks of ``doc`` (see the module docstring); ``loose``: indented lines kept;
    ``doctest``: blocks with doctest lines dropped too."""
    out = []
    for block in re.split(r"\n\s*\n", doc):
        lines = [ln for ln in block.split("\n") if ln.strip()]
        if not lines or any(_HEADING.match(ln) for ln in lines):
            continue
        if doctest and any(ln.lstrip().startswith((">>>", "... ")) for ln in lines):
            continue
        if not loose and any(ln[:1].isspace() for ln in lines):
            continue
        out.append(" ".join(" ".join(lines).split()))
    return out


def pydoc_texts() -> list[str]:
    """The ``pydoc`` source: one text per topic, topics in sorted key order."""
    from pydoc_data import topics  # standard library

    return [topics.topics[key] for key in sorted(topics.topics)]


def docstring_texts(modules: tuple[str, ...] = DOC_MODULES) -> list[str]:
    """The ``docstrings`` source: per module of ``modules`` (in order) its docstring, then those of
    the public functions and classes defined at the top of its source file, in sorted name order.
    Read from the source file (``ast``), never imported: the texts do not depend on what else was
    imported or patched (torch, for one, replaces ``inspect.getfile``)."""
    import ast
    import importlib.util

    out = []
    for name in modules:
        spec = importlib.util.find_spec(name)     # locate only
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        docs = [ast.get_docstring(tree)]
        defs: dict = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    not node.name.startswith("_"):
                defs.setdefault(node.name, node)  # the first definition of a name
        docs += [ast.get_docstring(defs[k]) for k in sorted(defs)]
        out += [d for d in docs if d and d.strip()]
    return out


def license_texts() -> list[str]:
    """The ``licenses`` source (see the module docstring): read as text, never imported."""
    import importlib.metadata as md

    dists = {}
    for d in md.distributions():
        name = (d.metadata["Name"] or "").lower()
        if name and name not in dists:
            dists[name] = d
    out, seen = [], set()
    for name in sorted(dists):
        files = []
        for f in dists[name].files or ():
            parts = f.parts
            if len(parts) < 2 or not parts[0].endswith(".dist-info") or not _LICENSE.match(parts[-1]):
                continue
            if len(parts) == 2 or (len(parts) == 3 and parts[1] == "licenses"):
                files.append(f)
        for f in sorted(files, key=str):
            try:
                text = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not text or not text.strip():
                continue
            # the same licence twice: the same words, or the same words but for its copyright lines
            # (a copyright line wrapped differently leaves a word of it behind: the whole text too)
            whole = " ".join(text.split())
            key = " ".join(" ".join(ln for ln in text.splitlines() if "copyright" not in ln.lower()).split())
            if key in seen or whole in seen:
                continue
            seen.update((key, whole))
            out.append(text)
    return out


def source_inputs(source: str, limit: Optional[int] = None) -> list[TextInput]:
    """The inputs of one source of the default corpus, in order (``limit``: the first ones)."""
    texts = {"pydoc": pydoc_texts, "docstrings": docstring_texts, "licenses": license_texts}[source]()
    words: list[str] = []
    for text in texts:
        for block in _prose_blocks(text, loose=source == "licenses", doctest=source == "docstrings"):
            words.extend(block.split())
    inputs, pos, k = [], 0, 0
    while pos < len(words) and (limit is None or len(inputs) < limit):
        size = LENGTHS[k % len(LENGTHS)]
        chunk = words[pos:pos + size]
        pos, k = pos + size, k + 1
        inputs.append(TextInput(id=f"{PREFIX[source]}:{len(inputs):04d}", text=" ".join(chunk), source=source))
    return inputs


def pydoc_corpus(limit: Optional[int] = None) -> Corpus:
    """The ``pydoc`` source alone (name ``pydoc``, source ``pydoc_data.topics``): the default
    corpus before it had three sources, the same texts (the attention-only training data uses it)."""
    inputs = [TextInput(id=t.id, text=t.text, source="pydoc_data.topics") for t in source_inputs("pydoc", limit)]
    return Corpus(name="pydoc", inputs=inputs,
                  notes=[f"{len(inputs)} inputs from pydoc_data.topics, lengths cycling {LENGTHS}"])


def default_corpus(limit: Optional[int] = None) -> Corpus:
    """The default corpus (see the module docstring): the sources interleaved, input by input, until
    ``limit`` inputs (None: until every source is used up)."""
    per = None if limit is None else -(-limit // len(SOURCES))
    lists = {s: source_inputs(s, per) for s in SOURCES}
    inputs: list[TextInput] = []
    for k in range(max(len(v) for v in lists.values())):
        inputs += [lists[s][k] for s in SOURCES if k < len(lists[s])]
    if limit is not None:
        inputs = inputs[:limit]
    counts = {s: sum(t.source == s for t in inputs) for s in SOURCES}
    return Corpus(name=DEFAULT_NAME, inputs=inputs,
                  notes=[f"{len(inputs)} inputs from {len(SOURCES)} sources, interleaved "
                         + ", ".join(f"{s} {n}" for s, n in counts.items()) + f"; word counts cycling {LENGTHS}"])


def _decode_lines(path: Path, notes: list[str]) -> list[str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInput(f"corpus file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise InvalidInput(f"corpus {str(path)!r} is a folder, not a file") from None
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
            raise InvalidInput(f"{path}:{no}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or "text" not in obj:
            raise InvalidInput(f"{path}:{no}: expected a JSON object with a 'text' field")
        if not isinstance(obj["text"], str):
            raise InvalidInput(f"{path}:{no}: field 'text' must be a string, got {type(obj['text']).__name__}")
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


def germline_v_genes() -> dict[str, list[tuple[str, str]]]:
    """{chain: [(gene allele, sequence)]} of the human germline V genes in ``anarci``'s table (see the
    module docstring), gaps dropped, each distinct sequence once, in sorted allele order."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("anarci")      # locate only: never import the package
    if spec is None or not spec.submodule_search_locations:
        raise InvalidInput(f"the {ANTIBODY_NAME} corpus needs the package 'anarci' (installed by `make setup`: "
                           "pip install --no-deps anarci)")
    path = Path(list(spec.submodule_search_locations)[0]) / "germlines.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        node = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                    and any(getattr(t, "id", None) == "all_germlines" for t in n.targets))
        table = ast.literal_eval(node)
        human = {c: table["V"][c]["human"] for c, _ in ANTIBODY_CHAINS}
    except (OSError, SyntaxError, ValueError, StopIteration, KeyError, TypeError) as exc:
        raise InvalidInput(f"{str(path)!r}: no readable table all_germlines['V'][chain]['human'] "
                           f"({type(exc).__name__}: {exc})") from None
    out: dict[str, list[tuple[str, str]]] = {}
    for chain, _ in ANTIBODY_CHAINS:
        seen: set[str] = set()
        out[chain] = []
        for allele in sorted(human[chain]):
            seq = str(human[chain][allele]).replace("-", "")
            if seq and re.fullmatch(r"[A-Z]+", seq) and seq not in seen:
                seen.add(seq)
                out[chain].append((allele, seq))
    return out


def antibody_corpus(limit: Optional[int] = None) -> Corpus:
    """The antibody corpus (module docstring): human germline V genes, chains interleaved H, K, L."""
    genes = germline_v_genes()
    inputs: list[TextInput] = []
    for k in range(max(len(v) for v in genes.values())):
        for chain, prefix in ANTIBODY_CHAINS:
            if k < len(genes[chain]) and (limit is None or len(inputs) < limit):
                allele, seq = genes[chain][k]
                inputs.append(TextInput(id=f"{prefix}:{allele}", text=seq, source=f"anarci germlines {prefix}"))
    counts = {p: sum(t.id.startswith(p) for t in inputs) for _, p in ANTIBODY_CHAINS}
    return Corpus(name=ANTIBODY_NAME, inputs=inputs,
                  notes=[f"{len(inputs)} human germline V-gene segments (anarci's table; germline, not rearranged): "
                         + ", ".join(f"{p} {n}" for p, n in counts.items())])


NAMED_CORPORA = {ANTIBODY_NAME: antibody_corpus}


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
        raise InvalidInput(f"corpus {str(path)!r} has no non-empty input")
    if limit is not None:
        inputs = inputs[:limit]
    return Corpus(name=path.name, inputs=inputs, notes=notes)


def load_corpus(path: str | Path | None = None, limit: Optional[int] = None) -> Corpus:
    """The default corpus when ``path`` is None, a named corpus (:data:`NAMED_CORPORA`) when ``path``
    is its name and no such file exists, else :func:`read_corpus`."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInput(f"limit must be a positive integer, got {limit!r}")
    if path is None:
        return default_corpus(limit)
    if str(path) in NAMED_CORPORA and not Path(path).exists():
        return NAMED_CORPORA[str(path)](limit)
    return read_corpus(path, limit)
