"""A kept checkpoint as an :class:`~numerics.sources.AttentionSource`: test examples in, attention
instances out, so that the trained-model measurements (verification.trained.checks) run on it
unchanged.

``load_checkpoint(path)`` rebuilds the network from the file's configuration, loads the weights
(strictly) and checks them against the fingerprint written at training time. ``instances(items)``
runs the test examples in one batch and returns, per example, the attention probabilities
``(L, H, T, T)`` (the model's float32, widened exactly to float64) and the special-token mask
(CLS and registers: the first ``n_special`` tokens).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch  # noqa: E402

from numerics.device import single_thread  # noqa: E402
from numerics.modalities.data import Dataset, TestItem, example_sha, load_dataset  # noqa: E402
from numerics.modalities.networks import NetConfig, build  # noqa: E402
from numerics.modalities.training import read, weights_fingerprint  # noqa: E402
from numerics.sources import AttentionInstance  # noqa: E402
from theory.errors import InvalidInput

TOKEN_KINDS = {"vit": "patch", "ft": "feature"}


@dataclass
class CheckpointSource:
    """One trained (or initial) network on its test split."""

    name: str                 # "<model>@e<epoch>"
    fingerprint: str          # weights + configuration hash (campaign key)
    net: Any
    config: NetConfig
    data: Dataset
    meta: dict = field(default_factory=dict)
    causal: bool = False
    quantised: bool = False

    @property
    def provenance(self) -> dict:
        m = self.meta
        return dict(model=m["model"], family=m["family"], dataset=m["dataset"], seed=int(m["seed"]),
                    epoch=int(m["epoch"]), step=int(m["step"]), fraction=float(m["fraction"]),
                    test_accuracy=float(m["accuracy"]), weights=self.fingerprint,
                    checkpoint=Path(m["path"]).name, preset=json.loads(m["preset"])["preset"],
                    data_sha=m["data_sha"], n_special=self.config.n_special,
                    registers=self.config.registers, token_kind=TOKEN_KINDS[self.config.kind],
                    quantised=False, causal=False)

    @torch.no_grad()
    def instances(self, items: Sequence[TestItem]) -> list[AttentionInstance]:
        """The attention of each test example (one batched forward pass)."""
        if not items:
            return []
        n = len(self.data.x_test)
        bad = [it.index for it in items if not 0 <= it.index < n]
        if bad:
            raise InvalidInput(f"{self.name}: test example {bad[0]} is outside the test split (0..{n - 1})")
        x = torch.from_numpy(self.data.x_test[[it.index for it in items]])
        with single_thread():
            self.net.eval()
            logits, A = self.net(x, attention=True)                  # (B, C), (B, L, H, T, T)
        pred = logits.argmax(dim=-1).tolist()
        T = self.config.tokens
        special = torch.zeros(T, dtype=torch.bool)
        special[: self.config.n_special] = True
        out = []
        for b, it in enumerate(items):
            if it.sha and it.sha != item_sha(self.data, it.index):
                raise InvalidInput(f"{self.name}: test example {it.id} does not match the split of seed "
                                 f"{self.data.seed} (hash differs)")
            att = A[b].double().numpy()                                # float32 widened exactly
            prov = dict(self.provenance, input=it.id, text_sha=it.sha, label=it.label,
                        predicted=int(pred[b]), correct=bool(pred[b] == it.label), T=T)
            out.append(AttentionInstance(model=self.name, input=it.id, sha=it.sha, attention=att,
                                         special=special.numpy().copy(), causal=False, provenance=prov))
        return out

    def instance(self, item: TestItem) -> AttentionInstance:
        return self.instances([item])[0]


def item_sha(data: Dataset, index: int) -> str:
    return example_sha(data.x_test[index], data.y_test[index])


_LOADED: dict[tuple, CheckpointSource] = {}


def load_checkpoint(path: str | Path) -> CheckpointSource:
    """The network of one checkpoint file, checked against its fingerprint (cached by file)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInput(f"checkpoint {str(p)!r}: no such file")
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if key in _LOADED:
        return _LOADED[key]
    meta, state, _ = read(p)
    try:
        cfg = NetConfig(**json.loads(meta["config"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"checkpoint {str(p)!r}: bad configuration in its metadata ({exc})") from None
    net = build(cfg)
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise InvalidInput(f"checkpoint {str(p)!r}: weights do not fit its configuration: "
                         f"{' '.join(str(exc).split())[:200]}") from None
    fp = weights_fingerprint(net.state_dict(), cfg)
    if fp != meta.get("fingerprint"):
        raise InvalidInput(f"checkpoint {str(p)!r}: weights hash {fp} differs from the recorded "
                         f"{meta.get('fingerprint')!r} (file altered?)")
    net.eval()
    meta["path"] = str(p)
    src = CheckpointSource(name=f"{meta['model']}@e{int(meta['epoch'])}", fingerprint=fp, net=net,
                           config=cfg, data=load_dataset(meta["dataset"], int(meta["seed"])), meta=meta)
    _LOADED[key] = src
    return src
