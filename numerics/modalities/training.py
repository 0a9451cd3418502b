"""Deterministic CPU training with resumable safetensors checkpoints.

``train(spec, preset, seed, root)`` trains one model and keeps a checkpoint after each epoch of
``preset.checkpoint_epochs`` (epoch 0: the initialisation). Everything random comes from explicit
seeds: the initial weights from ``torch.manual_seed(model_seed(seed, name))``, each epoch's batch
order from a generator seeded by (seed, name, epoch); no dropout. Training runs on one intra-op
thread (:func:`numerics.device.single_thread`), so a rerun reproduces the weights bit for bit.

A checkpoint is one safetensors file (never a pickle): the weights (``model.*``), the AdamW state
(``optim.*``), and metadata (configuration, preset settings, data hash, epoch, step, test
accuracy, weight fingerprint). It is written to a temporary name and renamed, so an interrupted
run leaves whole checkpoints only; a rerun resumes from the latest one and reaches the same
weights as an uninterrupted run. A checkpoint written under other settings is refused, naming
the file.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np  # noqa: E402
import torch  # noqa: E402

from numerics.atomic import atomic_path  # noqa: E402
from numerics.device import single_thread  # noqa: E402
from numerics.modalities.data import Dataset, load_dataset  # noqa: E402
from numerics.modalities.networks import NetConfig, build  # noqa: E402
from numerics.modalities.presets import ModelSpec, Preset, spec_config  # noqa: E402
from theory.errors import InvalidInput

FORMAT = "attnbounds-modalities-v1"
WEIGHT_DECAY = 1e-4


@dataclass(frozen=True)
class Checkpoint:
    """What one kept checkpoint is (read from its metadata)."""

    path: Path
    model: str
    epoch: int
    step: int
    fraction: float          # epoch / total epochs
    accuracy: float          # test accuracy on the whole test split
    fingerprint: str         # sha256 (16 hex) of the weights and configuration


def derived_seed(*parts: Any) -> int:
    """A 63-bit seed from any parts (stable across runs and machines)."""
    return int.from_bytes(hashlib.sha256("\0".join(map(str, parts)).encode()).digest()[:8], "big") >> 1


def weights_fingerprint(state: dict, cfg: NetConfig) -> str:
    h = hashlib.sha256(cfg.json().encode())
    for k in sorted(state):
        t = state[k].detach().contiguous().cpu()
        h.update(f"{k}\0{tuple(t.shape)}\0{t.dtype}\0".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()[:16]


def run_folder(root: Path, preset: Preset, seed: int, name: str) -> Path:
    return Path(root) / preset.name / f"s{seed}" / name


def settings_hash(spec: ModelSpec, preset: Preset, seed: int, data: Dataset) -> str:
    s = dict(preset.settings(), model=spec.name, dataset=spec.dataset, data_sha=data.sha, seed=seed,
             format=FORMAT, weight_decay=WEIGHT_DECAY)
    return hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()[:16]


@torch.no_grad()
def accuracy(net: torch.nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    net.eval()
    pred = net(torch.from_numpy(x)).argmax(dim=-1).numpy()
    return float((pred == y).mean())


def optimiser(net: torch.nn.Module, preset: Preset) -> torch.optim.Optimizer:
    return torch.optim.AdamW(net.parameters(), lr=preset.lr, weight_decay=WEIGHT_DECAY)


def save(path: Path, net: torch.nn.Module, opt: torch.optim.Optimizer, meta: dict) -> None:
    from safetensors.torch import save_file

    tensors = {f"model.{k}": v.detach().contiguous().clone() for k, v in net.state_dict().items()}
    for idx, st in opt.state_dict()["state"].items():
        for k, v in st.items():
            tensors[f"optim.{idx}.{k}"] = torch.as_tensor(v).detach().contiguous().clone()
    try:
        with atomic_path(path) as tmp:     # a temporary file renamed into place: whole or absent
            save_file(tensors, str(tmp), metadata={k: str(v) for k, v in meta.items()})
    except OSError as exc:
        raise InvalidInput(f"checkpoint {str(path)!r} cannot be written ({exc.strerror or exc})") from None


def read(path: Path) -> tuple[dict, dict, dict]:
    """-> (metadata, model state, optimiser state by parameter index); a bad file is an InvalidInput (a ValueError)."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            meta = dict(f.metadata() or {})
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # SafetensorError, OSError, JSON errors in the header
        raise InvalidInput(f"checkpoint {str(path)!r} is unreadable: {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]}") from None
    if meta.get("format") != FORMAT:
        raise InvalidInput(f"checkpoint {str(path)!r} is not an attnbounds modalities checkpoint "
                         f"(format {meta.get('format')!r}, expected {FORMAT!r})")
    model = {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}
    optim: dict = {}
    for k, v in tensors.items():
        if k.startswith("optim."):
            _, idx, key = k.split(".", 2)
            optim.setdefault(int(idx), {})[key] = v
    return meta, model, optim


def info(path: Path, meta: dict) -> Checkpoint:
    return Checkpoint(path=path, model=meta["model"], epoch=int(meta["epoch"]), step=int(meta["step"]),
                      fraction=float(meta["fraction"]), accuracy=float(meta["accuracy"]),
                      fingerprint=meta["fingerprint"])


def checkpoint_path(folder: Path, epoch: int) -> Path:
    return folder / f"epoch{epoch:04d}.safetensors"


def train(spec: ModelSpec, preset: Preset, seed: int, root: Path, console: Any = None,
          stop_after: Optional[int] = None) -> list[Checkpoint]:
    """Train ``spec`` at ``preset`` (resuming from the latest kept checkpoint) and return its
    checkpoints in order. ``stop_after``: stop once that epoch's checkpoint is written (a test
    of interruption and resume)."""
    data = load_dataset(spec.dataset, seed)
    cfg = spec_config(spec, preset, data.n_classes, data.x_train.shape[1])
    folder = run_folder(root, preset, seed, spec.name)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"checkpoint folder {str(folder)!r} cannot be created ({exc.strerror or exc})") from None
    marks = preset.checkpoint_epochs(spec.kind)
    total = preset.epochs_of(spec.kind)
    xs, ys = data.x_train, data.y_train
    if preset.train_limit is not None:
        xs, ys = xs[: preset.train_limit], ys[: preset.train_limit]
    per_epoch = -(-len(xs) // preset.batch)
    settings = settings_hash(spec, preset, seed, data)
    kept: dict[int, Checkpoint] = {}
    for e in marks:  # what is already there, checked against these settings
        p = checkpoint_path(folder, e)
        if p.exists():
            meta, _, _ = read(p)
            if meta.get("settings") != settings:
                raise InvalidInput(f"checkpoint {str(p)!r} was written with other settings (model, preset, seed "
                                 "or data); remove it or choose another --checkpoints folder")
            kept[e] = info(p, meta)
    if all(e in kept for e in marks):
        return [kept[e] for e in marks]
    with single_thread():
        torch.manual_seed(derived_seed(seed, spec.name, "init"))
        net = build(cfg)
        opt = optimiser(net, preset)
        start = 0
        done = [e for e in marks[: next((i for i, e in enumerate(marks) if e not in kept), len(marks))]]
        if done:  # resume from the latest checkpoint with every earlier one kept
            start = done[-1]
            _, state, ostate = read(kept[start].path)
            net.load_state_dict(state, strict=True)
            if ostate:
                sd = opt.state_dict()
                opt.load_state_dict({"state": ostate, "param_groups": sd["param_groups"]})
        xt, yt = torch.from_numpy(xs), torch.from_numpy(ys)
        loss_fn = torch.nn.CrossEntropyLoss()
        for epoch in range(start, total + 1):
            if epoch > start:
                net.train()
                g = torch.Generator().manual_seed(derived_seed(seed, spec.name, "epoch", epoch))
                order = torch.randperm(len(xt), generator=g)
                for b in range(per_epoch):
                    idx = order[b * preset.batch:(b + 1) * preset.batch]
                    opt.zero_grad(set_to_none=True)
                    loss_fn(net(xt[idx]), yt[idx]).backward()
                    opt.step()
            if epoch in marks and epoch not in kept:
                acc = accuracy(net, data.x_test, data.y_test)
                fp = weights_fingerprint(net.state_dict(), cfg)
                meta = dict(format=FORMAT, model=spec.name, family=spec.family, dataset=spec.dataset,
                            seed=seed, epoch=epoch, step=epoch * per_epoch, fraction=epoch / total,
                            accuracy=acc, fingerprint=fp, config=cfg.json(), settings=settings,
                            preset=json.dumps(preset.settings(), sort_keys=True), data_sha=data.sha,
                            torch=torch.__version__)
                p = checkpoint_path(folder, epoch)
                save(p, net, opt, meta)
                kept[epoch] = info(p, meta)
                if console is not None:
                    console.print(f"[dim]{spec.name}: epoch {epoch}/{total} (step {epoch * per_epoch}), "
                                  f"test accuracy {acc:.3f}[/dim]")
                if stop_after is not None and epoch >= stop_after:
                    break
    return [kept[e] for e in marks if e in kept]
