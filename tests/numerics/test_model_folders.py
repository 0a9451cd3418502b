"""Model folders that cannot mean anything are refused (issue 48, items 4 and 6): a folder without its
tokenizer's files, a vocabulary of special tokens only, a weight that is not floating point, and an
opted-in pickle that would run code (one line, never advice to load it with weights_only=False)."""
import os
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from numerics.sources.folders import check_tokenizer, tokenizer_files
from numerics.sources.models import embedded_path, load_model
from numerics.sources.weights import refuse_non_float
from theory.errors import InvalidInput
from verification.testing.fakes import TOKENIZER, tiny_bert  # noqa: F401

TEXT = "The quick brown fox jumps over the lazy dog."
QUERY = "encoder.layer.0.attention.self.query.weight"


def load(path, **kw):
    return load_model(path, max_tokens=16, cache=False, **kw)


# -- a folder without a tokenizer ------------------------------------------------------------------
def test_a_folder_without_tokenizer_files_is_refused_naming_them_and_the_folder(tmp_path):
    bare = tiny_bert(tmp_path / "bare", tokenizer=False)
    with pytest.raises(InvalidInput) as err:
        load(bare)
    msg = str(err.value)
    assert "no tokenizer" in msg and "vocab.txt" in msg and "tokenizer.json" in msg and str(bare) in msg
    assert "\n" not in msg
    # the planted control: the same folder with the tokenizer files loads and measures
    for f in TOKENIZER:
        shutil.copy(embedded_path("minilm")[0] / f, bare / f)
    assert load(bare).attentions(TEXT).shape[:2] == (2, 2)


@pytest.mark.parametrize("keep", ["vocab.txt", "tokenizer.json"])
def test_either_file_of_the_class_is_enough(tmp_path, keep):
    folder = tiny_bert(tmp_path / keep)
    for f in ("vocab.txt", "tokenizer.json"):
        if f != keep:
            (folder / f).unlink()
    m = load(folder)
    assert m.encode(TEXT).special.sum() == 2          # [CLS] ... [SEP]: the words are content tokens


def test_a_vocabulary_of_special_tokens_only_is_refused(tmp_path):
    folder = tiny_bert(tmp_path / "specials")
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    with pytest.raises(InvalidInput, match=r"has no token besides its 5 special token\(s\)"):
        load(folder)
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nfox\n")   # one content token: loads
    m = load(folder)
    assert m.encode("fox zebra").special.tolist() == [True, False, True, True]   # zebra is [UNK]


def test_a_class_that_reads_no_file_is_not_asked_for_one(tmp_path):
    class Bytes:
        vocab_files_names: dict = {}
        all_special_ids = [0]

        def get_vocab(self):
            return {"<pad>": 0, "a": 1}

    check_tokenizer(Bytes(), tmp_path)               # nothing in the folder, nothing asked
    assert tokenizer_files(Bytes()) == ()
    Bytes.vocab_files_names = {"vocab_file": "vocab.json", "merges_file": "merges.txt"}
    with pytest.raises(InvalidInput, match="looked for vocab.json or merges.txt"):
        check_tokenizer(Bytes(), tmp_path)
    check_tokenizer(Bytes(), tmp_path, gguf=True)    # a GGUF carries its tokenizer inside


# -- weights that are not floating point ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool, torch.uint8])
def test_an_integer_weight_is_refused_naming_file_tensor_and_dtypes(tmp_path, dtype):
    folder = tiny_bert(tmp_path / "m")
    sd = load_file(str(folder / "model.safetensors"))
    sd[QUERY] = (sd[QUERY] * 100).to(dtype)
    save_file(sd, str(folder / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(InvalidInput) as err:
        load(folder)
    msg = str(err.value)
    name = str(dtype).removeprefix("torch.")
    assert str(folder / "model.safetensors") in msg and QUERY in msg, msg
    assert f"dtype {name}" in msg and "float32" in msg and "floating" in msg, msg
    # the same file named directly (the state_dict path, not the folder's default load)
    shutil.copy(folder / "model.safetensors", folder / "other.safetensors")
    with pytest.raises(InvalidInput, match=f"tensor '{QUERY}' has dtype {name}"):
        load(folder / "other.safetensors")


def test_float16_weights_are_floating_and_load(tmp_path):
    folder = tiny_bert(tmp_path / "half")
    sd = {k: v.half() if v.is_floating_point() else v for k, v in load_file(str(folder / "model.safetensors")).items()}
    save_file(sd, str(folder / "model.safetensors"), metadata={"format": "pt"})
    assert load(folder).attentions(TEXT).dtype == torch.float32


def test_integer_buffers_stay_and_the_expected_dtype_is_the_files_own():
    class Module:
        def named_buffers(self):
            return iter([("embeddings.position_ids", None), ("embeddings.token_type_ids", None)])

    dtypes = {"bert.embeddings.position_ids": torch.int64, "embeddings.token_type_ids": torch.int64,
              "encoder.w": torch.bfloat16, "encoder.v": torch.bfloat16, "pooler.w": torch.float32}
    refuse_non_float(dtypes, {}, Module())            # buffers, with or without the base-model prefix
    dtypes["encoder.layer.0.attention.self.key.weight"] = torch.int8
    with pytest.raises(InvalidInput, match=r"has dtype int8, expected a floating dtype \(bfloat16"):
        refuse_non_float(dtypes, {"encoder.layer.0.attention.self.key.weight": "f.safetensors"}, Module())


# -- pickles ----------------------------------------------------------------------------------------
class Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_that_would_run_code_is_one_line_without_torchs_advice(tmp_path):
    folder = tiny_bert(tmp_path / "evil", pickled=True)
    marker = tmp_path / "pwned"
    torch.save({"x": Evil(marker)}, folder / "pytorch_model.bin")
    with pytest.raises(InvalidInput) as err:
        load(folder, allow_pickle=True)
    msg = str(err.value)
    assert "\n" not in msg and str(folder / "pytorch_model.bin") in msg
    assert "run code" in msg and "system" in msg, msg
    assert "weights_only=False" not in msg and "will likely succeed" not in msg, msg
    assert not marker.exists()


def test_a_pickle_that_is_not_one_of_tensors_is_one_line_without_torchs_advice(tmp_path):
    folder = tiny_bert(tmp_path / "junk", pickled=True)
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x02" + bytes(range(130, 200)))
    with pytest.raises(InvalidInput) as err:
        load(folder, allow_pickle=True)
    msg = str(err.value)
    assert "\n" not in msg and "pytorch_model.bin" in msg and "weights_only=False" not in msg, msg


def test_the_pickle_refusal_names_the_cli_flag_and_the_python_argument(tmp_path):
    folder = tiny_bert(tmp_path / "p", pickled=True)
    with pytest.raises(InvalidInput) as err:
        load(folder)
    assert "--allow-pickle" in str(err.value) and "allow_pickle=True in Python" in str(err.value)
    assert load(folder, allow_pickle=True).attentions(TEXT).shape[:2] == (2, 2)   # opted in: plain tensors load


# -- a folder written by transformers' own save_pretrained ------------------------------------------
def tiny_gpt2(folder):
    """A 2-layer GPT-2 and a byte-level BPE tokenizer trained here on one sentence (offline), both
    written by the installed transformers' ``save_pretrained``: tokenizer.json and
    tokenizer_config.json, no vocab.json or merges.txt."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator([TEXT] * 4, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = GPT2TokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                            unk_token="<|endoftext|>")
    cfg = GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=32, n_layer=2, n_head=2,
                     bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_a_gpt2_folder_written_by_save_pretrained_is_read(tmp_path):
    """transformers writes a GPT-2 tokenizer as tokenizer.json alone and loads it from there: so does
    the suite (it was refused as 'no tokenizer'); an auto_map in its tokenizer configuration is still
    refused, and so is the folder without tokenizer.json."""
    import json

    from transformers import AutoTokenizer

    folder = tiny_gpt2(tmp_path / "gpt2")
    assert (folder / "tokenizer.json").is_file() and not (folder / "vocab.json").exists()
    theirs = AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    m = load(folder)
    assert m.causal and (m.layers, m.heads) == (2, 2)
    assert m.encode(TEXT).ids.tolist() == theirs(TEXT)["input_ids"]
    assert m.attentions(TEXT).shape[:2] == (2, 2) and not m.encode(TEXT).special.any()
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**cfg, "auto_map": {"AutoTokenizer": ["x.T", None]}}))
    with pytest.raises(InvalidInput, match="tokenizer_config.json has 'auto_map'"):
        load(folder)
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    (folder / "tokenizer.json").unlink()
    with pytest.raises(InvalidInput, match="no tokenizer: looked for vocab.json or merges.txt or tokenizer.json"):
        load(folder)
