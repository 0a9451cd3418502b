"""SAN campaigns: presets -> runs (one chunk per trained model) -> records.

A *run* is one decoder trained from one seed on one data order:

    pair runs    per seed: the standard reference (depth L_s) and its three attention-only
                 partners matched for depth, FLOPs and parameters (numerics.san.config.matched);
                 all with QK-norm, no gate, the same seed and data order inside a seed pair
    sweep runs   attention-only stacks of growing depth with and without QK-norm, seed 0, at a
                 higher learning rate (trainability)

A campaign trains every run of a preset along one numerical path (``kernel``: the fused or the
explicit attention kernel) on one device; its chunks are independent, so any executor (serial, a
local Dask cluster, a remote one) trains them in parallel and the store holds the same records.
Each chunk trains (or resumes from its safetensors checkpoints), evaluates, measures the weight
spectra at every checkpoint and, on the primary numerical path only, checks the scalar-bottleneck
lemma (attention-only runs) and runs the Dobrushin rollout measurements of the trained-model
family (``verification.measure.attention.instance_records``) on a few held-out texts. Records:

    san.claim.trainable   one per run: outcome (finite, validation loss below the bigram model's
                          validation loss on the same windows, :func:`bigram_validation`),
                          with every measurement of the run in ``extra``: the learning curve
                          (validation loss and probes at initialisation and every checkpoint),
                          spectra at initialisation and every checkpoint, the bigram entropy, and
                          the validation text's bytes per token under a stated tokenizer
    san.bottleneck        one per attention-only run: tight (identity certified exactly, float
                          residual within rounding), violated, or undecided (too deep for the exact path)
    dobrushin.factor / dobrushin.product   the rollout records of each held-out text
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from theory.verdicts import Verdict
from verification import campaign as C
from verification.san.checks.presets import KERNELS, Preset, campaign_name
from verification.store import Record, outcome_record

ROLES = ("std", "san-depth", "san-flops", "san-params")


@dataclass(frozen=True)
class Run:
    key: str          # chunk key, unique in the campaign
    role: str         # one of ROLES, or "sweep"
    seed: int
    cfg: Any          # numerics.san.SANConfig
    tc: Any           # numerics.san.TrainConfig


def plan(preset: Preset, seed: int = 0, kernel: str = "sdpa", device: str = "cpu") -> list[Run]:
    """Every run of a preset; seeds ``seed`` .. ``seed + seeds - 1`` (the sweep uses ``seed``)."""
    from numerics.san import SANConfig, TrainConfig, matched

    ref = SANConfig(block="standard", n_layer=preset.ref_layers, n_head=preset.n_head, d_model=preset.d_model,
                    ctx=preset.ctx, qk_norm=True)
    runs = []
    for s in range(seed, seed + preset.seeds):
        tc = TrainConfig(steps=preset.steps, batch=preset.batch, lr=preset.lr, seed=s,
                         warmup=max(1, int(preset.steps * preset.warmup)), kernel=kernel, device=device)
        if "std" in preset.roles:
            runs.append(Run(f"std-L{ref.n_layer}-s{s}", "std", s, ref, tc))
        for kind in ("depth", "flops", "params"):
            if f"san-{kind}" not in preset.roles:
                continue
            cfg = matched(ref, kind)
            runs.append(Run(f"san-{kind}-L{cfg.n_layer}-s{s}", f"san-{kind}", s, cfg, tc))
    tc = TrainConfig(steps=preset.sweep_steps, batch=preset.batch, lr=preset.sweep_lr, seed=seed,
                     warmup=max(1, preset.sweep_steps // 10), kernel=kernel, device=device)
    for depth in preset.depths:
        for qk in (False, True):
            cfg = replace(ref, block="attention", n_layer=depth, qk_norm=qk)
            runs.append(Run(f"sweep-{cfg.name}-s{seed}", "sweep", seed, cfg, tc))
    return runs


def unigram_entropy(data: Any) -> float:
    """Entropy (nats) of the byte distribution of the training prose: a model that learnt nothing
    beyond byte frequencies reaches it."""
    p = np.bincount(data.train, minlength=256).astype(float)
    p = p[p > 0] / p.sum()
    return float(-(p * np.log(p)).sum())


def bigram_entropy(data: Any) -> float:
    """Conditional entropy H(X_t | X_{t-1}) (nats) of the training bytes: what a model that learnt
    the byte pairs (and nothing longer) reaches; reported beside the unigram entropy."""
    x = np.asarray(data.train, dtype=np.int64)
    pairs = np.bincount(x[:-1] * 256 + x[1:], minlength=256 * 256).astype(float).reshape(256, 256)
    total = pairs.sum()
    row = pairs.sum(axis=1, keepdims=True)
    nz = pairs > 0
    return float(-(pairs[nz] / total * np.log((pairs / np.where(row > 0, row, 1))[nz])).sum())


BIGRAM_SMOOTHING = (1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0)


def bigram_validation(data: Any, n_val: int) -> dict:
    """The bigram model's validation loss: byte-pair counts of the training bytes with add-k
    smoothing, scored on the same held-out windows as the models (``data.val_rows(n_val)``: each
    byte predicted from the one before it, every prediction a model makes having at least that
    byte of context), at the k of :data:`BIGRAM_SMOOTHING` that gives the *lowest* loss there (the
    strongest such baseline: the gate it sets is the hardest). ``{"loss", "k"}``, nats per byte."""
    x = np.asarray(data.train, dtype=np.int64)
    pairs = np.bincount(x[:-1] * 256 + x[1:], minlength=256 * 256).astype(float).reshape(256, 256)
    rows = data.val_rows(n_val)
    prev, nxt = rows[:, :-1].reshape(-1), rows[:, 1:].reshape(-1)
    best = None
    for k in BIGRAM_SMOOTHING:
        p = (pairs[prev, nxt] + k) / (pairs[prev].sum(axis=1) + 256 * k)
        value = float(-np.log(p).mean())
        if best is None or value < best["loss"]:
            best = dict(loss=value, k=k)
    return best


def _spectra(ckpts: list, cfg: Any) -> dict:
    from numerics.san import load_checkpoint
    from numerics.san.spectra import model_ranks

    return {str(step): model_ranks(load_checkpoint(path)[0], cfg) for step, path in ckpts}


def _init_spectra(cfg: Any, seed: int) -> list:
    """The ranks of the model as initialised (step 0; the threshold rank is ~0 there by design)."""
    from numerics.san import build
    from numerics.san.spectra import model_ranks

    return model_ranks(build(cfg, seed).state_dict(), cfg)


def _bottleneck(model: Any, prov: dict, key: str) -> Record:
    from numerics.san.bottleneck import bottleneck_exact, bottleneck_residual

    fast = bottleneck_residual(model)
    exact = bottleneck_exact(model, token=int(ord("T")))
    if not fast["ok"] or exact["equal"] is False:
        verdict = Verdict.VIOLATED
    else:
        verdict = Verdict.TIGHT if exact["decided"] else Verdict.UNDECIDED
    c = fast["scalars"]
    return Record("san.bottleneck", f"{key}|T1", verdict, slack=0.0 if verdict is Verdict.TIGHT else None,
                  value=fast["residual"], bound=fast["bound"], backend="torch+exact-dyadic", provenance=prov,
                  extra=dict(residual=fast["residual"], exact=exact["equal"], monomials=exact["monomials"],
                             c_min=[float(v) for v in c.min(0)], c_max=[float(v) for v in c.max(0)],
                             tokens=fast["tokens"], exact_token=int(ord("T"))))


def _curve(ckpts: list, cfg: Any, data: Any, preset: Preset, run: Run) -> dict:
    """The learning curve of one run: validation loss (nats/byte) and probe accuracies at
    initialisation (step 0) and at every checkpoint, by the same :func:`numerics.san.evaluate`."""
    from numerics.san import build, evaluate, load_checkpoint

    out = {}
    for step, path in [(0, None)] + list(ckpts):
        model = build(cfg, run.seed)
        if path is not None:
            model.load_state_dict(load_checkpoint(path)[0])
        ev = evaluate(model, data, n_val=preset.n_val, n_probe=preset.n_probe, seed=run.seed, kernel=run.tc.kernel)
        out[str(step)] = dict(val_loss=ev["val_loss"], retrieval_acc=ev["retrieval_acc"], recall_acc=ev["recall_acc"])
    return out


def run_records(preset: Preset, run: Run, ckpt_root: str) -> list[Record]:
    """Train (resuming from checkpoints), evaluate and measure one run: its records."""
    from numerics.san import evaluate, flops_per_token, params, train
    from numerics.san.data import bytes_per_token
    from numerics.san.source import SANSource
    from numerics.sources.corpus import TextInput
    from verification.measure.attention import instance_records

    data = preset.data()
    res = train(run.cfg, run.tc, data, ckpt_dir=Path(ckpt_root) / run.key)
    ev = evaluate(res.model, data, n_val=preset.n_val, n_probe=preset.n_probe, seed=run.seed, kernel=run.tc.kernel)
    res.model.cpu()                                 # measurements below run on the CPU
    H1 = unigram_entropy(data)
    H2v = bigram_validation(data, preset.n_val)
    prov = dict(preset=preset.name, run=run.key, role=run.role, seed=run.seed, model=run.cfg.name,
                kernel=run.tc.kernel, device=run.tc.device, torch=_torch_version(),
                config=run.cfg.to_dict(), train=asdict(run.tc), data=data.fingerprint,
                corpus="pydoc_data.topics (bytes)")
    val, se = ev["val_loss"], ev["val_loss_se"]
    finite = not res.diverged and math.isfinite(val)
    iv = (val - 2 * se, val + 2 * se) if finite else None
    bar = H2v["loss"]
    outcome = "supported" if finite and iv[1] < bar else "refuted" if not finite or iv[0] > bar else "inconclusive"
    extra = dict(ev, role=run.role, key=run.key, n_layer=run.cfg.n_layer, block=run.cfg.block,
                 qk_norm=run.cfg.qk_norm, params=params(run.cfg), flops=flops_per_token(run.cfg),
                 diverged=res.diverged, steps_done=res.steps_done, trace=res.trace, unigram=H1,
                 resumed_from=res.resumed_from, spectra=_spectra(res.checkpoints, run.cfg),
                 spectra_init=_init_spectra(run.cfg, run.seed), curve=_curve(res.checkpoints, run.cfg, data, preset, run),
                 checkpoint_steps=[s for s, _ in res.checkpoints], bigram=bigram_entropy(data),
                 bigram_val=H2v["loss"], bigram_k=H2v["k"],
                 bytes_per_token=bytes_per_token(bytes(data.val)))
    recs = [outcome_record("san.claim.trainable", run.key, outcome, val if finite else math.inf, iv,
                           "validation loss +- 2 se over held-out windows, against the bigram model's loss on "
                           "the same windows", value=val if finite else None, bound=bar, backend="torch", provenance=prov, extra=extra)]
    primary = run.tc.kernel == KERNELS[0]          # the lemma and the rollout: on the primary path only
    if run.cfg.block == "attention" and not res.diverged and primary:
        recs.append(_bottleneck(res.model, prov, run.key))
    if run.role != "sweep" and not res.diverged and primary:
        source = SANSource(res.model, run.key, prov)
        starts = np.linspace(0, len(data.val) - preset.ctx - 1, preset.rollout_texts).astype(int)
        for i, s0 in enumerate(starts):
            text = bytes(data.val[s0: s0 + preset.ctx]).decode("utf-8", errors="replace")
            recs += instance_records(source.instance(TextInput(f"val:{i}", text, "pydoc-val")), comparison=False)
    return recs


def _torch_version() -> str:
    import torch

    return torch.__version__


def run_campaign(store: Any, preset: Preset, seed: int, ckpt_root: Path, console: Any = None,
                 executor: Any = None, kernel: str = "sdpa", device: str = "cpu") -> str:
    """Train (or resume) every run of ``preset`` along one numerical path on ``executor`` (default:
    serial); returns the campaign's name."""
    name = campaign_name(preset, seed, kernel, device)
    root = Path(ckpt_root) / name.replace(":", "_")
    chunks = [C.Chunk(r.key, run_records, (preset, r, str(root))) for r in plan(preset, seed, kernel, device)]
    C.run(store, name, chunks, executor=executor, console=console,
          description=f"SAN {preset.name} ({kernel} kernel): training")
    return name
