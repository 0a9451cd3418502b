"""Corpora: the default pydoc corpus and user files, including bad ones."""
import json
import re

import pytest

from theory.errors import InvalidInput

from numerics.sources.corpus import (DEFAULT_NAME, LENGTHS, MAX_CHARS, SOURCES, default_corpus, docstring_texts,
                                     license_texts, load_corpus, pydoc_corpus, read_corpus, source_inputs, text_hash)


def test_default_corpus_is_deterministic_with_the_length_mix():
    a, b = default_corpus(), default_corpus(limit=12)
    assert a.name == b.name == DEFAULT_NAME
    assert [t.text for t in a.inputs[:12]] == [t.text for t in b.inputs]
    assert len(a.inputs) > 300
    for src in SOURCES:                       # each source cycles through the lengths on its own
        sizes = [len(t.text.split()) for t in a.inputs if t.source == src][:len(LENGTHS)]
        assert sizes == list(LENGTHS), src
    assert len({t.id for t in a.inputs}) == len(a.inputs)
    assert all(t.text.strip() for t in a.inputs)


def test_the_pydoc_corpus_is_the_pydoc_source_alone():
    p, d = pydoc_corpus(limit=7), default_corpus(limit=21)
    assert p.name == "pydoc" and {t.source for t in p.inputs} == {"pydoc_data.topics"}
    assert [t.text for t in p.inputs] == [t.text for t in d.inputs if t.source == "pydoc"]
    assert [t.id for t in p.inputs] == [f"pydoc:{k:04d}" for k in range(7)]


def enough_sources(inputs, total: int, sources: int, each: int) -> None:
    """The issue's bar for the quick run: at least ``total`` inputs from at least ``sources`` sources,
    each with at least ``each`` of them."""
    counts = {}
    for t in inputs:
        counts[t.source] = counts.get(t.source, 0) + 1
    assert len(inputs) >= total, f"{len(inputs)} inputs"
    assert len(counts) >= sources and min(counts.values()) >= each, counts


def test_the_first_inputs_are_balanced_over_three_sources_of_different_register():
    c = default_corpus(limit=210)
    assert [t.source for t in c.inputs[:6]] == list(SOURCES) * 2          # interleaved input by input
    enough_sources(c.inputs, 210, 3, 70)
    with pytest.raises(AssertionError):                                 # planted: one source only
        enough_sources(source_inputs("pydoc", 210), 210, 3, 70)
    texts = {s: " ".join(t.text for t in c.inputs if t.source == s) for s in SOURCES}
    assert "statement" in texts["pydoc"] and "License" in texts["licenses"]
    assert "Return" in texts["docstrings"] and "Command-line parsing library" in texts["docstrings"]
    assert len({t.sha for t in c.inputs}) == len(c.inputs)               # no input repeats another


def test_docstrings_are_read_from_the_source_file_and_licenses_are_read_not_imported(tmp_path, monkeypatch):
    import sys

    (tmp_path / "corpus_probe_mod.py").write_text(
        '"""Module text."""\n'
        'class Base:\n    """Base text."""\n'
        'class Sub(Base):\n    pass\n'                           # no docstring of its own: nothing
        'def _private():\n    """Private text."""\n'
        'def alpha():\n    """Alpha text."""\n'
        'raise RuntimeError("never imported")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    texts = docstring_texts(("corpus_probe_mod",))
    assert texts == ["Module text.", "Base text.", "Alpha text."] and "corpus_probe_mod" not in sys.modules
    import inspect                                   # what another package patches in changes nothing
    monkeypatch.setattr(inspect, "getfile", lambda obj: "patched")
    assert "Work out which source or compiled file an object was defined in." in docstring_texts(("inspect",))
    before = set(sys.modules)
    lic = license_texts()
    imported = set(sys.modules) - before         # metadata parsing may load the standard library, no package
    assert len(lic) >= 10 and all(m.split(".")[0] in sys.stdlib_module_names for m in imported), imported
    assert len({" ".join(t.split()) for t in lic}) == len(lic)          # duplicates dropped


def test_text_file_lines_and_blocks(tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("first input\nsecond   input\n\nthird\n")
    c = read_corpus(lines)
    assert [t.text for t in c.inputs] == ["first input second input", "third"]  # has blank line: blocks
    flat = tmp_path / "flat.txt"
    flat.write_text("one\ntwo words\nthree\n")
    c = read_corpus(flat)
    assert [t.text for t in c.inputs] == ["one", "two words", "three"]
    assert [t.line for t in c.inputs] == [1, 2, 3]


def test_non_utf8_bytes_are_replaced_and_reported(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes("caf\xe9 ok\nplain line\n".encode("latin-1"))
    c = read_corpus(p)
    assert c.inputs[0].text == "caf\ufffd ok" and c.inputs[1].text == "plain line"
    assert any("not UTF-8" in note and "lines 1" in note for note in c.notes)


def test_empty_corpora_are_errors_naming_the_file(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_text("\n\n   \n")
    with pytest.raises(ValueError, match="empty.txt.*no non-empty input"):
        read_corpus(p)
    j = tmp_path / "empty.jsonl"
    j.write_text(json.dumps({"text": "  "}) + "\n")
    with pytest.raises(ValueError, match="no non-empty input"):
        read_corpus(j)
    with pytest.raises(InvalidInput, match="missing.txt"):
        read_corpus(tmp_path / "missing.txt")


def test_jsonl_errors_name_file_and_line(tmp_path):
    j = tmp_path / "c.jsonl"
    j.write_text(json.dumps({"text": "fine"}) + "\n\n" + json.dumps({"body": "no text"}) + "\n")
    with pytest.raises(ValueError, match=r"c\.jsonl:3: expected a JSON object with a 'text' field"):
        read_corpus(j)
    j.write_text(json.dumps({"text": "fine"}) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"c\.jsonl:2: not valid JSON"):
        read_corpus(j)
    j.write_text(json.dumps({"text": 5}) + "\n")
    with pytest.raises(ValueError, match=r"c\.jsonl:1: field 'text' must be a string"):
        read_corpus(j)
    j.write_text(json.dumps({"text": "a b"}) + "\n" + json.dumps({"text": ""}) + "\n"
                 + json.dumps({"text": "c"}) + "\n")
    c = load_corpus(j)
    assert [(t.text, t.line) for t in c.inputs] == [("a b", 1), ("c", 3)]
    assert any("empty" in n for n in c.notes)


def test_over_long_inputs_are_cut_and_reported(tmp_path):
    p = tmp_path / "long.txt"
    p.write_text("x" * (MAX_CHARS + 10) + "\nshort\n")
    c = read_corpus(p, limit=1)
    assert len(c.inputs) == 1 and len(c.inputs[0].text) == MAX_CHARS
    assert any("cut at" in n for n in c.notes)
    assert c.inputs[0].sha == text_hash("x" * MAX_CHARS)


def test_antibody_corpus_reads_anarcis_germline_table_as_data(tmp_path, monkeypatch):
    from numerics.sources.corpus import ANTIBODY_NAME, antibody_corpus, germline_v_genes, load_corpus

    genes = germline_v_genes()
    assert set(genes) == {"H", "K", "L"} and all(len(v) > 20 for v in genes.values())
    for chain, seqs in genes.items():
        assert len({s for _, s in seqs}) == len(seqs)                 # each distinct sequence once
        assert all(re.fullmatch(r"[ACDEFGHIKLMNPQRSTVWY]+", s) and 80 <= len(s) <= 110 for _, s in seqs), chain
    c = load_corpus(ANTIBODY_NAME, limit=6)
    assert c.name == ANTIBODY_NAME and [t.id.split(":")[0] for t in c.inputs] == ["IGHV", "IGKV", "IGLV"] * 2
    assert c.inputs[0].text == genes["H"][0][1] and "germline" in c.notes[0]
    assert len(antibody_corpus().inputs) == sum(len(v) for v in genes.values())
    # a file of that name in the working folder is a user corpus, not the named one
    monkeypatch.chdir(tmp_path)
    (tmp_path / ANTIBODY_NAME).write_text("one line\n")
    assert load_corpus(ANTIBODY_NAME).inputs[0].text == "one line"
    # the package is located, never imported
    import sys
    assert "anarci" not in sys.modules


def test_antibody_corpus_without_its_package_is_a_clear_error(monkeypatch):
    import importlib.util

    from numerics.sources import corpus as C

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "anarci" else real(name, *a))
    with pytest.raises(InvalidInput, match="anarci"):
        C.germline_v_genes()
