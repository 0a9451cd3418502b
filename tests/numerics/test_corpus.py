"""Corpora: the default pydoc corpus and user files, including bad ones."""
import json

import pytest

from numerics.sources.corpus import LENGTHS, MAX_CHARS, default_corpus, load_corpus, read_corpus, text_hash


def test_default_corpus_is_deterministic_with_the_length_mix():
    a, b = default_corpus(), default_corpus(limit=12)
    assert [t.text for t in a.inputs[:12]] == [t.text for t in b.inputs]
    assert len(a.inputs) > 100
    sizes = [len(t.text.split()) for t in a.inputs[:len(LENGTHS)]]
    assert sizes == list(LENGTHS)
    assert len({t.id for t in a.inputs}) == len(a.inputs)
    assert all(t.text.strip() for t in a.inputs)


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
    with pytest.raises(FileNotFoundError, match="missing.txt"):
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
