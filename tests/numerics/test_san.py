"""numerics.san: configurations and matching, data, deterministic training with checkpoint/resume,
spectra on planted low-rank weights, claim decisions, the attention source."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from numerics.rank.linear import energy_rank
from numerics.san import Data, SANConfig, TrainConfig, build, evaluate, flops_per_token, matched, params, train
from numerics.san.claims import decide, decide_exact, noise_floor
from numerics.san.data import PAIR_BYTES, PAIR_KEYS, prose_bytes
from numerics.san.spectra import layer_spectra, model_ranks, planted

TINY = SANConfig(block="standard", n_layer=1, n_head=2, d_model=16, ctx=16)
DATA = Data(ctx=16, n_facts=4)


def test_matching_and_counts():
    ref = SANConfig(block="standard", n_layer=2, d_model=48, n_head=4, ctx=128)
    d, f, p = (matched(ref, k) for k in ("depth", "flops", "params"))
    assert (d.n_layer, f.n_layer, p.n_layer) == (2, 4, 6) and p.block == "attention"
    assert abs(params(p) - params(ref)) < 0.01 * params(ref)              # 4 d^2 per SAN layer vs 12 d^2
    assert abs(flops_per_token(f) - flops_per_token(ref)) <= abs(flops_per_token(p) - flops_per_token(ref))
    assert sum(x.numel() for x in build(ref, 0).parameters()) == params(ref, embedding=True)
    with pytest.raises(ValueError, match="n_head"):
        SANConfig(d_model=10, n_head=4)
    with pytest.raises(ValueError, match="reference must be a standard"):
        matched(p, "depth")


def test_probes_answer_what_they_should():
    rows, mask = DATA.probe_eval("recall", 3)
    facts = dict(DATA.facts)
    for r, m in zip(rows, mask):
        for t in np.flatnonzero(m):                       # "[abc:" then the digit at byte t + 1
            assert facts[bytes(r[t - 3:t].astype(np.uint8))] == int(chr(r[t + 1]))
    rows, mask = DATA.probe_eval("retrieval", 3)
    for r, m in zip(rows, mask):
        for t in np.flatnonzero(m):                       # the queried key's pair byte appears in the context
            key, val = r[t], r[t + 1]
            pair = PAIR_BYTES[10 * list(PAIR_KEYS).index(key) + int(chr(val))]
            start = max(i for i in range(t) if r[i] == ord("<"))
            assert pair in r[start:t - 1] and r[t - 1] == ord("?")
            others = [b for b in r[start + 1:t - 1] if b in PAIR_BYTES and b != pair]
            assert len(others) == DATA.n_pairs - 1      # the other pairs are other keys
            assert all((list(PAIR_BYTES).index(b) // 10) != list(PAIR_KEYS).index(key) for b in others)
    a, b = DATA.batch(5, 7, 3), DATA.batch(5, 7, 3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_train_a_tiny_pair_a_few_steps():
    tc = TrainConfig(steps=4, batch=2, lr=1e-2, warmup=1)
    std = train(TINY, tc, DATA)
    san = train(matched(TINY, "params"), tc, DATA)
    for res in (std, san):
        assert not res.diverged and res.steps_done == 4 and np.isfinite(res.final_train_loss)
        ev = evaluate(res.model, DATA, n_val=4, n_probe=2)
        assert 0 < ev["val_loss"] < 8 and len(ev["loss_by_pos"]) == 16
        assert 0 <= ev["retrieval_acc"] <= 1 and ev["recall_n"] > 0
    assert std.model.blocks[0].mlp is not None and san.model.blocks[0].mlp is None


def test_checkpoint_resume_gives_identical_weights(tmp_path):
    tc = TrainConfig(steps=6, batch=2, lr=1e-2, warmup=1, fractions=(0.5, 1.0))
    whole = train(TINY, tc, DATA, ckpt_dir=tmp_path / "a")
    first = train(TINY, tc, DATA, ckpt_dir=tmp_path / "b", stop_after=4)   # killed after step 4
    assert first.steps_done == 4 and [s for s, _ in first.checkpoints] == [3]
    resumed = train(TINY, tc, DATA, ckpt_dir=tmp_path / "b")
    assert resumed.resumed_from == 3 and resumed.steps_done == 6
    for (k, v), (k2, v2) in zip(whole.model.state_dict().items(), resumed.model.state_dict().items()):
        assert k == k2 and torch.equal(v, v2), k
    assert whole.trace == resumed.trace
    with pytest.raises(ValueError, match="another run"):
        train(replace(TINY, n_layer=2), tc, DATA, ckpt_dir=tmp_path / "b")
    (tmp_path / "b" / "step000006.safetensors").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable"):
        train(TINY, tc, DATA, ckpt_dir=tmp_path / "b")
    fresh = train(TINY, replace(tc, seed=1), DATA)                   # another seed: other weights
    assert not torch.equal(fresh.model.wte.weight, whole.model.wte.weight)


def test_spectra_on_planted_low_rank_weights():
    cfg = SANConfig(block="attention", n_layer=1, n_head=2, d_model=32, ctx=16)
    model = build(cfg, 0)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    noise = cfg.init_std
    Wq = planted((32, 32), 3, noise, seed=1, scale=100 * noise)
    state["blocks.0.attn.q.weight"] = torch.as_tensor(Wq.T)           # W_Q = q.weight^T
    spec = layer_spectra(state, cfg, 0)
    r = model_ranks(state, cfg)[0]
    assert r["W_Q"]["threshold"] == 3                                  # the planted directions, not the bulk
    assert r["W_K"]["threshold"] == 0 and r["W_V"]["threshold"] == 0   # still at initialisation
    assert r["W_Q"]["energy_0.9"] <= 3 < r["W_K"]["energy_0.9"]
    # per-head kernel spectra from the factors equal the explicit products' singular values
    Wq_t, Wk_t = torch.as_tensor(Wq), state["blocks.0.attn.k.weight"].double().T
    for h in range(2):
        sl = slice(16 * h, 16 * (h + 1))
        ref = torch.linalg.svdvals(Wq_t[:, sl] @ Wk_t[:, sl].T)[:16].numpy()
        np.testing.assert_allclose(spec["QK"][h], ref, rtol=1e-9, atol=1e-12)
    assert (energy_rank(spec["QK"], 0.9) <= 3).all()                    # a rank-3 factor bounds the kernel


def test_claim_decisions_float_and_exact_agree():
    rng = np.random.default_rng(0)
    for _ in range(200):
        vals = list(rng.normal(rng.normal(0, 0.05), 0.02, rng.integers(1, 5)))
        noise = float(abs(rng.normal(0, 0.03)))
        for direction in (">", "<"):
            assert decide(vals, noise, direction)["outcome"] == decide_exact(vals, noise, direction)["outcome"]
    assert decide_exact([0.5], 0.1)["outcome"] == "inconclusive"        # one pair: no degrees of freedom
    assert decide_exact([0.5, 0.52, 0.49], 0.1, "<")["outcome"] == "refuted"
    # planted bug: a z of 2 instead of t(df = 1) = 12.7 would call this supported
    vals = [0.3, 0.1]
    d = decide(vals, 0.0)
    assert d["outcome"] == "inconclusive" and d["df"] == 1
    z_lo = 0.2 - 2 * np.std(vals, ddof=1) / np.sqrt(2)
    assert z_lo > 0 and d["interval"][0] < -0.5
    assert noise_floor([[1.0, 1.0], [2.0, 2.0]]) == 0.0
    with pytest.raises(ValueError, match="finite"):
        decide([float("nan")], 0.1)


def test_pair_bytes_are_bytes_the_prose_never_uses():
    assert len(set(PAIR_BYTES.tolist())) == 10 * len(PAIR_KEYS)
    assert not set(PAIR_BYTES.tolist()) & set(prose_bytes())
    with pytest.raises(ValueError, match="n_pairs"):
        Data(ctx=32, n_pairs=len(PAIR_KEYS) + 1)


def test_chance_levels_come_from_the_probe_rows():
    d = Data(ctx=64, n_facts=16)
    ret, rec = d.chance("retrieval", 64), d.chance("recall", 64)
    assert 1 / 3 <= ret["copy"] <= 0.5 and ret["copy"] > 0.1       # three context values, not one in ten
    assert 0.15 <= rec["majority"] <= 0.25 and rec["majority"] > 0.1
    rows, mask = d.probe_eval("recall", 64)
    answers = rows[:, 1:][mask]
    assert rec["majority"] == pytest.approx(np.bincount(answers).max() / answers.size)
    assert rec["n"] == answers.size


def test_explicit_kernel_is_the_same_model_with_other_rounding():
    tc = TrainConfig(steps=3, batch=2, lr=1e-2, warmup=1)
    a = train(TINY, tc, DATA)
    b = train(TINY, replace(tc, kernel="explicit"), DATA)
    diff = max(float((x - y).detach().abs().max()) for x, y in zip(a.model.parameters(), b.model.parameters()))
    assert 0 < diff < 1e-3                  # other rounding (a second numerical path), the same model
    with pytest.raises(ValueError, match="kernel"):
        TrainConfig(kernel="fast")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here: the GPU path runs where one is")
def test_cuda_training_is_deterministic():
    tc = TrainConfig(steps=3, batch=2, lr=1e-2, warmup=1, device="cuda")
    a, b = train(TINY, tc, DATA), train(TINY, tc, DATA)
    for x, y in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(x, y)
    ev = evaluate(a.model, DATA, n_val=4, n_probe=2)
    assert 0 < ev["val_loss"] < 8


def test_cuda_without_a_gpu_is_one_clear_error():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the error path is for machines without one")
    with pytest.raises(ValueError, match="no CUDA device"):
        train(TINY, TrainConfig(steps=1, batch=2, device="cuda"), DATA)


def test_attention_source_feeds_the_rollout_pipeline():
    from numerics.san.source import SANSource
    from numerics.sources.corpus import TextInput

    model = build(matched(TINY, "depth"), 0)
    inst = SANSource(model, "m").instance(TextInput("t", "abc def ghi jkl mno pqr", "test"))
    A = inst.attention
    assert A.shape == (1, 2, 16, 16) and inst.causal
    np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-6)
    assert np.all(np.triu(A, 1) == 0)
