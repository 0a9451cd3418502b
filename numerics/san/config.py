"""Configurations of the small decoders, their parameter and FLOP counts, and matched pairs.

A :class:`SANConfig` describes one nanoGPT-style decoder: ``block="standard"`` (attention + MLP)
or ``block="attention"`` (attention and residual only: a Simple Attention Network, SAN), with
optional QK-normalisation and an optional scalar residual gate. Counts follow Kaplan et al.
(2020): non-embedding parameters N (biases and norm gains included), forward FLOPs per token
2 N + 2 n_layer n_ctx d_model, training FLOPs three times that.

Matched pairs against a standard reference of depth L_s (same width, heads, context):

    depth    SAN of depth L_s                       (feed-forward layers deleted in place)
    params   SAN depth with the closest N           (the freed budget put into attention depth)
    flops    SAN depth with the closest FLOPs/token

>>> ref = SANConfig(block="standard", n_layer=2, d_model=48, n_head=4, ctx=128)
>>> [matched(ref, kind).n_layer for kind in MATCH_KINDS]
[2, 4, 6]
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace

from theory.errors import InvalidInput

BLOCKS = ("standard", "attention")
NORMS = ("rms", "none")
MATCH_KINDS = ("depth", "flops", "params")


@dataclass(frozen=True)
class SANConfig:
    """One decoder. ``vocab`` 256: byte-level tokens; learned positions; tied unembedding."""

    block: str = "standard"
    n_layer: int = 2
    n_head: int = 4
    d_model: int = 48
    ctx: int = 64
    vocab: int = 256
    mlp_ratio: int = 4
    qk_norm: bool = False
    gate: bool = False
    norm: str = "rms"
    init_std: float = 0.02

    def __post_init__(self) -> None:
        if self.block not in BLOCKS:
            raise InvalidInput(f"SANConfig.block: {self.block!r} is not one of {', '.join(BLOCKS)}")
        if self.norm not in NORMS:
            raise InvalidInput(f"SANConfig.norm: {self.norm!r} is not one of {', '.join(NORMS)}")
        for name in ("n_layer", "n_head", "d_model", "ctx", "vocab", "mlp_ratio"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidInput(f"SANConfig.{name}: must be a positive integer, got {v!r}")
        if self.d_model % self.n_head:
            raise InvalidInput(f"SANConfig: d_model {self.d_model} is not a multiple of n_head {self.n_head}")
        if not (self.init_std > 0):
            raise InvalidInput(f"SANConfig.init_std: must be positive, got {self.init_std!r}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    @property
    def name(self) -> str:
        """Short label, e.g. ``std-L2`` or ``san-L6-qk-gate``."""
        tags = ("-qk" if self.qk_norm else "") + ("-gate" if self.gate else "") + ("-nonorm" if self.norm == "none" else "")
        return f"{'std' if self.block == 'standard' else 'san'}-L{self.n_layer}{tags}"

    def to_dict(self) -> dict:
        return asdict(self)

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:12]


def layer_params(cfg: SANConfig) -> int:
    """Non-embedding parameters of one block (weights, norm gains, gate)."""
    d = cfg.d_model
    norms = d if cfg.norm == "rms" else 0
    attn = 4 * d * d + norms + (2 * cfg.head_dim if cfg.qk_norm else 0) + ((d + 1) if cfg.gate else 0)
    mlp = 2 * cfg.mlp_ratio * d * d + norms if cfg.block == "standard" else 0
    return attn + mlp


def params(cfg: SANConfig, embedding: bool = False) -> int:
    """Non-embedding parameter count N (with ``embedding``: plus token and position tables)."""
    n = cfg.n_layer * layer_params(cfg) + (cfg.d_model if cfg.norm == "rms" else 0)
    return n + ((cfg.vocab + cfg.ctx) * cfg.d_model if embedding else 0)


def flops_per_token(cfg: SANConfig, training: bool = True) -> int:
    """Kaplan's count: forward 2 N + 2 n_layer ctx d (+ 2 vocab d for the unembedding), x3 to train."""
    fwd = 2 * params(cfg) + 2 * cfg.n_layer * cfg.ctx * cfg.d_model + 2 * cfg.vocab * cfg.d_model
    return 3 * fwd if training else fwd


def matched(reference: SANConfig, kind: str, **overrides) -> SANConfig:
    """The attention-only partner of a standard ``reference`` matched by ``kind`` (see the module
    docstring); ``overrides`` (qk_norm, gate) apply to the partner."""
    if reference.block != "standard":
        raise InvalidInput(f"matched: the reference must be a standard block, got {reference.block!r}")
    if kind not in MATCH_KINDS:
        raise InvalidInput(f"matched: kind {kind!r} is not one of {', '.join(MATCH_KINDS)}")
    base = replace(reference, block="attention", **overrides)
    if kind == "depth":
        return base
    target = params(reference) if kind == "params" else flops_per_token(reference)
    measure = params if kind == "params" else flops_per_token
    best = min(range(1, 8 * reference.n_layer + 1),
               key=lambda L: (abs(measure(replace(base, n_layer=L)) - target), L))
    return replace(base, n_layer=best)
