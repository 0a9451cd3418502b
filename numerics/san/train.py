"""Deterministic training with safetensors checkpoints at fixed fractions, and evaluation.

:func:`train` runs AdamW (linear warm-up, cosine decay to a tenth) on one intra-op thread, so the
same (config, training config, data) gives bit-identical weights on one machine with one torch
build; CPU kernels differ between machines, so two machines may differ in the last bits, and the
claims are decided so that an outcome which flips under such a change is not reported (see
:attr:`TrainConfig.kernel`: a second numerical path, the same mathematics through another attention
kernel). ``device="cuda"`` trains on a GPU with deterministic algorithms (cuBLAS workspace fixed,
no TF32, no cuDNN autotuning); a CUDA run is its own run (another checkpoint key). At every fraction of :attr:`TrainConfig.fractions` it writes
``step<NNNNNN>.safetensors`` (weights, AdamW moments, and a JSON header with the step, the
configuration and the training-loss trace) atomically (a temporary file, then a rename). Given the
same ``ckpt_dir`` a killed run resumes from its last checkpoint and ends at the same final
weights as an uninterrupted run. Checkpoints are safetensors: nothing is ever unpickled.

A run *diverges* when a training loss is not finite or exceeds ``diverge_at``: training stops
there and the result says so (a finding for the trainability table, not an error).
"""
from __future__ import annotations

import json
import math
import os
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import numpy as np
import torch
from torch.nn import functional as F

from numerics.atomic import atomic_path
from numerics.device import single_thread
from numerics.san.config import SANConfig
from numerics.san.data import Data
from numerics.san.model import Decoder, build
from theory.errors import InvalidInput


KERNELS = ("sdpa", "explicit")
DEVICES = ("cpu", "cuda")


@contextmanager
def deterministic(device: str) -> Iterator[None]:
    """Deterministic settings for ``device`` (nothing to change on the CPU): on CUDA, deterministic
    algorithms, a fixed cuBLAS workspace, no TF32 and no cuDNN autotuning, restored afterwards."""
    if device == "cpu":
        yield
        return
    if not torch.cuda.is_available():
        raise InvalidInput("--device cuda: torch sees no CUDA device (torch.cuda.is_available() is False)")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    prev = (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.benchmark,
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(prev[0])
        torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = prev[1:]


def logits(model: Decoder, x: torch.Tensor, kernel: str = "sdpa") -> torch.Tensor:
    """The model's logits through the fused attention kernel or the explicit softmax path (the same
    mathematics, other rounding)."""
    if kernel == "sdpa":
        return model(x)
    h, _ = model.hidden(x, weights=True)
    return h @ model.wte.weight.T


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 300
    batch: int = 16
    lr: float = 3e-3
    warmup: int = 20
    weight_decay: float = 0.0
    clip: float = 1.0
    seed: int = 0                    # init seed and data order: shared inside a matched pair
    fractions: tuple = (0.125, 0.25, 0.5, 1.0)
    diverge_at: float = 20.0
    kernel: str = "sdpa"             # attention kernel: "sdpa" (fused) or "explicit" (softmax(QK^T) V)
    device: str = "cpu"              # "cpu" or "cuda" (deterministic settings)

    def __post_init__(self) -> None:
        if self.kernel not in KERNELS:
            raise InvalidInput(f"TrainConfig.kernel: {self.kernel!r} is not one of {', '.join(KERNELS)}")
        if self.device not in DEVICES:
            raise InvalidInput(f"TrainConfig.device: {self.device!r} is not one of {', '.join(DEVICES)}")
        for name in ("steps", "batch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidInput(f"TrainConfig.{name}: must be a positive integer, got {v!r}")
        if not (self.lr > 0) or self.warmup < 0:
            raise InvalidInput(f"TrainConfig: lr must be positive and warmup >= 0, got {self.lr}, {self.warmup}")
        if not self.fractions or any(not (0 < f <= 1) for f in self.fractions):
            raise InvalidInput(f"TrainConfig.fractions: each must lie in (0, 1], got {self.fractions}")


def checkpoint_steps(tc: TrainConfig) -> list[int]:
    """The steps after which a checkpoint is written (the last one is always ``steps``)."""
    return sorted({max(1, round(f * tc.steps)) for f in tc.fractions} | {tc.steps})


def lr_at(tc: TrainConfig, step: int) -> float:
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    t = (step - tc.warmup) / max(1, tc.steps - tc.warmup)
    return tc.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


@dataclass
class TrainResult:
    model: Decoder
    steps_done: int
    diverged: bool
    trace: list = field(default_factory=list)          # (step, training loss) every few steps
    checkpoints: list = field(default_factory=list)    # (step, path)
    resumed_from: int = 0

    @property
    def final_train_loss(self) -> float:
        tail = [l for _, l in self.trace[-5:]]
        return float(np.mean(tail)) if tail else math.nan


def run_key(cfg: SANConfig, tc: TrainConfig, data: Data) -> str:
    return f"{cfg.fingerprint()}-{data.fingerprint}-" + json.dumps(asdict(tc), sort_keys=True)


def save_checkpoint(path: Path, model: Decoder, opt: torch.optim.Optimizer, meta: dict) -> None:
    from safetensors.torch import save_file

    tensors = {f"model.{k}": v.detach().cpu().clone().contiguous() for k, v in model.state_dict().items()}
    names = [n for n, _ in model.named_parameters()]
    for i, st in opt.state_dict()["state"].items():
        for k, v in st.items():
            tensors[f"opt.{names[i]}.{k}"] = torch.as_tensor(v).detach().cpu().clone().contiguous()
    with atomic_path(path) as tmp:         # a temporary file renamed into place: whole or absent
        save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta, sort_keys=True)})


def load_checkpoint(path: Path) -> tuple[dict, dict, dict]:
    """(model state, optimiser state by parameter name, metadata) of one checkpoint file."""
    from safetensors import safe_open

    model, opt = {}, {}
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {})["meta"])
            for k in f.keys():
                if k.startswith("model."):
                    model[k[len("model."):]] = f.get_tensor(k)
                else:
                    name, _, field_ = k[len("opt."):].rpartition(".")
                    opt.setdefault(name, {})[field_] = f.get_tensor(k)
    except Exception as exc:   # safetensors raises its own error types for a damaged file
        raise InvalidInput(f"checkpoint {str(path)!r} is not a readable numerics.san checkpoint "
                         f"({type(exc).__name__}: {exc}); delete it to resume from the one before") from None
    return model, opt, meta


def checkpoints_in(ckpt_dir: Path) -> list[tuple[int, Path]]:
    return sorted((int(p.stem[4:]), p) for p in Path(ckpt_dir).glob("step*.safetensors"))


def _restore(model: Decoder, opt: torch.optim.Optimizer, path: Path, key: str) -> tuple[int, list, bool]:
    state, ostate, meta = load_checkpoint(path)
    if meta.get("key") != key:
        raise InvalidInput(f"checkpoint {str(path)!r} belongs to another run (configuration, data or "
                         "training settings differ): use another checkpoint folder")
    model.load_state_dict(state)
    names = [n for n, _ in model.named_parameters()]
    sd = opt.state_dict()
    sd["state"] = {i: ostate[n] for i, n in enumerate(names) if n in ostate}
    opt.load_state_dict(sd)
    return int(meta["step"]), list(meta["trace"]), bool(meta["diverged"])


def train(cfg: SANConfig, tc: TrainConfig, data: Data, ckpt_dir: Optional[os.PathLike] = None,
          stop_after: Optional[int] = None) -> TrainResult:
    """Train (or resume) one model; ``stop_after`` stops after that step (a simulated kill)."""
    if data.ctx != cfg.ctx:
        raise InvalidInput(f"train: data context {data.ctx} differs from the model context {cfg.ctx}")
    key = run_key(cfg, tc, data)
    dev = torch.device(tc.device)
    with single_thread(), deterministic(tc.device):
        model = build(cfg, tc.seed).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, betas=(0.9, 0.95), weight_decay=tc.weight_decay)
        start, trace, diverged, saved = 0, [], False, []
        at = set(checkpoint_steps(tc))
        if ckpt_dir is not None:
            ckpt_dir = Path(ckpt_dir)
            ckpt_dir.mkdir(parents=True, exist_ok=True)
            saved = checkpoints_in(ckpt_dir)
            if saved:
                start, trace, diverged = _restore(model, opt, saved[-1][1], key)
        resumed = start
        every = max(1, tc.steps // 50)
        step = start
        while step < tc.steps and not diverged:
            for g in opt.param_groups:
                g["lr"] = lr_at(tc, step)
            x, y = (torch.from_numpy(a).to(dev) for a in data.batch(tc.seed, step, tc.batch))
            loss = F.cross_entropy(logits(model, x, tc.kernel).reshape(-1, cfg.vocab), y.reshape(-1))
            value = float(loss.detach())
            if not math.isfinite(value) or value > tc.diverge_at:
                diverged = True
                trace.append([step, value if math.isfinite(value) else None])
                break
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), tc.clip)
            opt.step()
            step += 1
            if step % every == 0 or step == tc.steps:
                trace.append([step, value])
            if ckpt_dir is not None and step in at:
                path = ckpt_dir / f"step{step:06d}.safetensors"
                save_checkpoint(path, model, opt, dict(key=key, step=step, trace=trace, diverged=False,
                                                       config=cfg.to_dict()))
                saved.append((step, path))
            if stop_after is not None and step >= stop_after:
                break
    return TrainResult(model, step, diverged, trace, saved, resumed)


@torch.no_grad()
def evaluate(model: Decoder, data: Data, n_val: int = 64, n_probe: int = 16, seed: int = 0,
             kernel: str = "sdpa") -> dict:
    """Validation loss (nats per byte), its mean by position (ctx,), probe accuracies (argmax at the
    answer positions) with the counts behind them, and each probe's chance levels
    (:meth:`numerics.san.data.Data.chance`, from the same rows) and accuracy above the larger one."""
    dev = next(model.parameters()).device
    with single_thread(), deterministic(dev.type):
        model.eval()
        rows = torch.from_numpy(data.val_rows(n_val)).to(dev)
        out_logits = logits(model, rows[:, :-1], kernel)
        nll = F.cross_entropy(out_logits.reshape(-1, out_logits.shape[-1]), rows[:, 1:].reshape(-1),
                              reduction="none").view(rows.shape[0], -1)          # (n_val, ctx)
        out = dict(val_loss=float(nll.mean()), loss_by_pos=nll.mean(0).tolist(),
                   val_loss_se=float(nll.mean(1).std() / math.sqrt(n_val)))
        for kind in ("retrieval", "recall"):
            prow, mask = data.probe_eval(kind, n_probe, seed)
            prow, mask = torch.from_numpy(prow).to(dev), torch.from_numpy(mask).to(dev)
            pred = logits(model, prow[:, :-1], kernel).argmax(-1)
            hit = (pred == prow[:, 1:])[mask]
            out[f"{kind}_acc"], out[f"{kind}_n"] = float(hit.float().mean()), int(hit.numel())
            chance = data.chance(kind, n_probe, seed)               # from the same rows
            out[f"{kind}_chance_copy"], out[f"{kind}_chance_majority"] = chance["copy"], chance["majority"]
            out[f"{kind}_above_chance"] = out[f"{kind}_acc"] - max(chance["copy"], chance["majority"])
        model.train()
    return out
