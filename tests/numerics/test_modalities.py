"""Vision and tabular models trained here: data splits, networks, deterministic training,
checkpoint/resume, and the checkpoint as an attention source."""
from pathlib import Path

import numpy as np
import pytest
import torch

from numerics.modalities import MODELS, PRESETS, NetConfig, build, load_checkpoint, load_dataset, train
from numerics.modalities.training import checkpoint_path, read, run_folder

TINY = PRESETS["tiny"]


def test_splits_are_deterministic_stratified_and_standardised_on_train():
    a, b = load_dataset("breast_cancer", 0), load_dataset("breast_cancer", 1)
    assert a.sha != b.sha                                     # another seed, another split
    assert np.allclose(a.x_train.mean(axis=0), 0, atol=1e-5)  # standardised with the train split's stats
    assert not np.allclose(a.x_test.mean(axis=0), 0, atol=1e-3)
    fr = lambda y: np.bincount(y) / len(y)  # noqa: E731
    assert np.allclose(fr(a.y_train), fr(a.y_test), atol=0.02)
    d = load_dataset("digits", 0)
    assert d.image_side == 8 and d.x_train.min() >= 0 and d.x_train.max() <= 1
    items = d.items(3)
    assert [it.index for it in items] == [0, 1, 2] and len({it.sha for it in items}) == 3
    with pytest.raises(ValueError, match="unknown data set 'iris'"):
        load_dataset("iris")


def test_vit_patches_are_row_major_and_attention_is_stochastic():
    cfg = NetConfig(kind="vit", n_inputs=64, n_classes=10, dim=8, depth=3, heads=2, patch=2, registers=3)
    torch.manual_seed(0)
    net = build(cfg)
    x = torch.arange(64, dtype=torch.float32)[None]
    assert net.patches(x)[0, 1].tolist() == [2.0, 3.0, 10.0, 11.0]   # second patch: columns 2-3 of rows 0-1
    logits, A = net(torch.rand(5, 64), attention=True)
    assert A.shape == (5, 3, 2, cfg.tokens, cfg.tokens) and cfg.tokens == 1 + 3 + 16
    assert torch.allclose(A.sum(-1), torch.ones(()), atol=1e-6) and (A >= 0).all()
    with pytest.raises(ValueError, match="not a multiple of heads"):
        NetConfig(kind="ft", n_inputs=4, n_classes=2, dim=10, heads=4)
    with pytest.raises(ValueError, match="registers"):
        NetConfig(kind="ft", n_inputs=4, n_classes=2, dim=8, heads=4, registers=2)


def tensors(path: Path) -> dict:
    _, model, optim = read(path)
    return {**{f"m.{k}": v for k, v in model.items()}, **{f"o.{i}.{k}": v for i, s in optim.items() for k, v in s.items()}}


def test_training_is_deterministic_and_resume_gives_identical_weights(tmp_path):
    spec = MODELS["ft-wine"]
    full = train(spec, TINY, 0, tmp_path / "a")
    assert [c.epoch for c in full] == list(TINY.checkpoint_epochs("ft"))
    assert full[0].step == 0 and full[-1].step > 0 and full[0].fingerprint != full[-1].fingerprint
    part = train(spec, TINY, 0, tmp_path / "b", stop_after=1)           # interrupted after epoch 1
    assert [c.epoch for c in part] == [0, 1]
    resumed = train(spec, TINY, 0, tmp_path / "b")                       # resumes from epoch 1
    assert [c.fingerprint for c in resumed] == [c.fingerprint for c in full]
    ta, tb = tensors(full[-1].path), tensors(resumed[-1].path)
    assert ta.keys() == tb.keys() and any(k.startswith("o.") for k in ta)   # optimiser state kept
    assert all(torch.equal(ta[k], tb[k]) for k in ta)
    other = train(spec, TINY, 1, tmp_path / "a")                          # another seed: other weights
    assert other[-1].fingerprint != full[-1].fingerprint


def test_checkpoints_from_other_settings_or_altered_files_are_refused(tmp_path):
    spec = MODELS["ft-wine"]
    cks = train(spec, TINY, 0, tmp_path)
    folder = run_folder(tmp_path, TINY, 0, spec.name)
    assert cks[0].path == checkpoint_path(folder, 0)
    from safetensors.torch import save_file
    meta, model, _ = read(cks[-1].path)
    model = {f"model.{k}": (v + 1 if k == "cls" else v) for k, v in model.items()}
    altered = tmp_path / "altered.safetensors"
    save_file(model, str(altered), metadata=meta)
    with pytest.raises(ValueError, match="differs from the recorded"):
        load_checkpoint(altered)
    save_file(model, str(cks[-1].path), metadata=dict(meta, settings="0" * 16))
    with pytest.raises(ValueError, match="written with other settings"):
        train(spec, TINY, 0, tmp_path)
    cks[0].path.write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match="unreadable"):
        load_checkpoint(cks[0].path)


def test_checkpoint_source_gives_attention_instances(tmp_path):
    spec = MODELS["vit-reg"]
    ck = train(spec, TINY, 0, tmp_path)[-1]
    src = load_checkpoint(ck.path)
    items = src.data.items(3)
    insts = src.instances(items)
    cfg = src.config
    assert [i.input for i in insts] == [it.id for it in items] and not src.causal
    inst = insts[1]
    assert inst.attention.shape == (cfg.depth, cfg.heads, cfg.tokens, cfg.tokens)
    assert inst.attention.dtype == np.float64
    assert inst.special.tolist() == [True] * (1 + TINY.registers) + [False] * 16
    from numerics.device import single_thread

    with torch.no_grad(), single_thread():   # the same floats as one forward pass of the same batch
        _, A = src.net(torch.from_numpy(src.data.x_test[[it.index for it in items]]), attention=True)
    assert np.array_equal(inst.attention, A[1].double().numpy())
    p = inst.provenance
    assert p["test_accuracy"] == ck.accuracy and p["epoch"] == ck.epoch and p["weights"] == ck.fingerprint
    assert p["n_special"] == 1 + TINY.registers and p["label"] == items[1].label


class WordModel:
    """A stand-in text model: one token per word between [CLS] = 1 and [SEP] = 2, and attention that
    is the identity (so a cut is visible in the shape)."""

    name, fingerprint, causal, quantised = "words", "0" * 16, False, False
    special_ids = frozenset({1, 2})

    def encode(self, text):
        from numerics.sources.models import Encoded

        ids = [1] + [10 + len(w) for w in text.split()] + [2]
        return Encoded(ids=torch.tensor(ids), special=torch.tensor([i in (1, 2) for i in ids]), truncated=False,
                       n_tokens_full=len(ids))

    def attentions_of(self, enc):
        T = len(enc.ids)
        return torch.eye(T).expand(2, 3, T, T).clone()


def test_matched_text_cuts_to_exactly_T_tokens_and_keeps_the_closing_token():
    from numerics.modalities import MatchedText, content_length
    from numerics.sources.corpus import TextInput

    m = MatchedText(WordModel())
    t = TextInput("t:0", "one two three four five six", "test")
    assert m.tokens(t) == 8 and m.fits(t, 8) and not m.fits(t, 9)
    enc = m.cut(t, 5)
    assert enc.ids.tolist() == [1, 13, 13, 15, 2] and enc.special.tolist() == [True, False, False, False, True]
    inst = m.instance(t, 5)
    assert inst.attention.shape == (2, 3, 5, 5) and inst.provenance["T"] == 5 and inst.provenance["tokens_full"] == 8
    assert int((~inst.special).sum()) == 3 and content_length(3, 2) == 5      # content tokens: T - [CLS], [SEP]
    with pytest.raises(ValueError, match="fewer than T = 9"):
        m.cut(t, 9)
