"""Small transformers for images and tables that return their attention probabilities.

- :class:`ViT`: an 8x8 image cut into ``patch x patch`` patches (2x2: 16 patches), each flattened
  and embedded linearly, plus learned position embeddings; a CLS token in front and, in the
  register variant (Darcet et al. 2024, "Vision transformers need registers"), ``registers``
  learned tokens after it (no position embedding); pre-norm blocks; a linear head on the final
  CLS state. Token order: ``[CLS, reg_1 .. reg_R, patch_1 .. patch_P]`` (patches row-major).
- :class:`FTTransformer`: the feature tokenizer of Gorishniy et al. 2021 ("Revisiting deep
  learning models for tabular data"): feature j becomes the token ``x_j W_j + b_j``; a CLS token in
  front; pre-norm blocks with a ReGLU feed-forward layer, the first block without its attention
  LayerNorm (as in the paper); head LayerNorm -> ReLU -> Linear on CLS.
  Token order: ``[CLS, feature_1 .. feature_F]``.

Attention is computed explicitly (``softmax(q k^T / sqrt(d_head))``, float32, no dropout), so the
probabilities the model uses are the probabilities returned: ``forward(x, attention=True)`` gives
``(logits, A)`` with ``A`` of shape ``(B, L, H, T, T)``. Special tokens always come first:
``n_special = 1 + registers``.

>>> import torch
>>> cfg = NetConfig(kind="vit", n_inputs=64, n_classes=10, dim=8, depth=2, heads=2, patch=2, registers=1)
>>> torch.manual_seed(0) is not None and build(cfg) is not None
True
>>> logits, A = build(cfg)(torch.zeros(3, 64), attention=True)
>>> tuple(logits.shape), tuple(A.shape), cfg.tokens, cfg.n_special
((3, 10), (3, 2, 2, 18, 18), 18, 2)
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import torch  # noqa: E402
from torch import nn  # noqa: E402

from theory.errors import InvalidInput

KINDS = ("vit", "ft")


@dataclass(frozen=True)
class NetConfig:
    """Architecture of one network (everything that changes its function)."""

    kind: str              # "vit" | "ft"
    n_inputs: int          # pixels (64 for 8x8 digits) or features
    n_classes: int
    dim: int = 32
    depth: int = 4
    heads: int = 4
    mlp_ratio: int = 2
    patch: int = 2         # ViT only: patch side (8 must be a multiple)
    registers: int = 0     # ViT only: register tokens after CLS

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidInput(f"network kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        for k in ("n_inputs", "n_classes", "dim", "depth", "heads", "mlp_ratio", "patch"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidInput(f"network setting {k} must be a positive integer, got {v!r}")
        if self.dim % self.heads:
            raise InvalidInput(f"network dim {self.dim} is not a multiple of heads {self.heads}")
        if self.registers < 0 or (self.kind == "ft" and self.registers):
            raise InvalidInput(f"registers must be >= 0 and only on a ViT, got {self.registers!r} for {self.kind}")
        if self.kind == "vit":
            side = math.isqrt(self.n_inputs)
            if side * side != self.n_inputs or side % self.patch:
                raise InvalidInput(f"ViT: {self.n_inputs} pixels are not a square image cut into "
                                 f"{self.patch}x{self.patch} patches")

    @property
    def n_special(self) -> int:
        """Leading special tokens: CLS and the registers."""
        return 1 + self.registers

    @property
    def tokens(self) -> int:
        if self.kind == "vit":
            return self.n_special + self.n_inputs // (self.patch * self.patch)
        return self.n_special + self.n_inputs

    def json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, T, D = x.shape
        hd = D // self.heads
        q, k, v = self.qkv(x).reshape(B, T, 3, self.heads, hd).permute(2, 0, 3, 1, 4)  # (3, B, H, T, hd)
        p = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(hd), dim=-1)              # (B, H, T, T)
        y = (p @ v).transpose(1, 2).reshape(B, T, D)                                      # (B, T, D)
        return self.out(y), p


class Block(nn.Module):
    """Pre-norm block: x + attn(LN(x)), then x + mlp(LN(x)); ``reglu`` for the FT-Transformer."""

    def __init__(self, dim: int, heads: int, mlp_ratio: int, reglu: bool, first_norm: bool = True):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim) if first_norm else nn.Identity()
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        hidden = dim * mlp_ratio
        self.reglu = reglu
        self.fc1 = nn.Linear(dim, 2 * hidden if reglu else hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, p = self.attn(self.norm1(x))
        x = x + a
        h = self.fc1(self.norm2(x))
        if self.reglu:
            u, g = h.chunk(2, dim=-1)
            h = u * torch.relu(g)
        else:
            h = torch.nn.functional.gelu(h)
        return x + self.fc2(h), p


class Encoder(nn.Module):
    """Tokens -> blocks -> CLS state -> logits; collects each block's attention."""

    def __init__(self, cfg: NetConfig, reglu: bool):
        super().__init__()
        self.blocks = nn.ModuleList(Block(cfg.dim, cfg.heads, cfg.mlp_ratio, reglu, first_norm=not (reglu and i == 0))
                                    for i in range(cfg.depth))

    def run(self, x: torch.Tensor, attention: bool):
        maps = []
        for blk in self.blocks:
            x, p = blk(x)
            if attention:
                maps.append(p)
        return x, (torch.stack(maps, dim=1) if attention else None)    # (B, L, H, T, T)


class ViT(Encoder):
    def __init__(self, cfg: NetConfig):
        super().__init__(cfg, reglu=False)
        self.cfg = cfg
        self.side = math.isqrt(cfg.n_inputs)
        n_patch = cfg.n_inputs // cfg.patch ** 2
        self.embed = nn.Linear(cfg.patch ** 2, cfg.dim)
        self.pos = nn.Parameter(torch.randn(1, n_patch, cfg.dim) * 0.02)
        self.cls = nn.Parameter(torch.randn(1, 1, cfg.dim) * 0.02)
        self.reg = nn.Parameter(torch.randn(1, cfg.registers, cfg.dim) * 0.02) if cfg.registers else None
        self.norm = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.n_classes)

    def patches(self, x: torch.Tensor) -> torch.Tensor:
        B, p, s = x.shape[0], self.cfg.patch, self.side
        img = x.reshape(B, s // p, p, s // p, p)                                  # (B, gy, p, gx, p)
        return img.permute(0, 1, 3, 2, 4).reshape(B, (s // p) ** 2, p * p)         # (B, P, p*p) row-major

    def forward(self, x: torch.Tensor, attention: bool = False):
        B = x.shape[0]
        tok = self.embed(self.patches(x)) + self.pos                             # (B, P, D)
        parts = [self.cls.expand(B, -1, -1)]
        if self.reg is not None:
            parts.append(self.reg.expand(B, -1, -1))
        h, A = self.run(torch.cat(parts + [tok], dim=1), attention)               # (B, T, D)
        logits = self.head(self.norm(h[:, 0]))
        return (logits, A) if attention else logits


class FTTransformer(Encoder):
    def __init__(self, cfg: NetConfig):
        super().__init__(cfg, reglu=True)
        self.cfg = cfg
        bound = 1 / math.sqrt(cfg.dim)                                            # the paper's uniform init
        self.weight = nn.Parameter(torch.empty(cfg.n_inputs, cfg.dim).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(cfg.n_inputs, cfg.dim).uniform_(-bound, bound))
        self.cls = nn.Parameter(torch.empty(1, 1, cfg.dim).uniform_(-bound, bound))
        self.norm = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.n_classes)

    def forward(self, x: torch.Tensor, attention: bool = False):
        B = x.shape[0]
        tok = x[:, :, None] * self.weight + self.bias                             # (B, F, D)
        h, A = self.run(torch.cat([self.cls.expand(B, -1, -1), tok], dim=1), attention)
        logits = self.head(torch.relu(self.norm(h[:, 0])))
        return (logits, A) if attention else logits


def build(cfg: NetConfig) -> nn.Module:
    """A fresh network (its initial weights come from torch's global generator: seed it first)."""
    return ViT(cfg) if cfg.kind == "vit" else FTTransformer(cfg)
