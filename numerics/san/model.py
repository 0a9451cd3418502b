"""The decoder in plain torch (nanoGPT's layout): standard blocks or attention-only blocks.

    standard   x <- x + Attn(N1(x));  x <- x + MLP(N2(x))                 (GELU MLP, ratio 4)
    attention  x <- x + g(x) Attn(N1(x))                                  (no MLP; g = 1 without gate)

N is RMSNorm without bias (``norm="rms"``: x / sqrt(mean(x^2) + eps) * gamma) or the identity
(``norm="none"``). QK-normalisation applies an RMSNorm per head to queries and keys. The optional
gate is one scalar per token and layer, g(x) = sigmoid(N1(x) w + b). Weights are ``nn.Linear``
(y = x W^T), no biases except the gate's. Positions are learned; the unembedding is tied to the
token embedding. Initialisation: N(0, init_std^2), residual projections scaled by 1/sqrt(2 L).
"""
from __future__ import annotations

import math
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from numerics.san.config import SANConfig
from theory.errors import InvalidInput

EPS = 1e-6


class RMSNorm(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def make_norm(cfg: SANConfig, dim: int) -> nn.Module:
    return RMSNorm(dim) if cfg.norm == "rms" else nn.Identity()


class Attention(nn.Module):
    def __init__(self, cfg: SANConfig):
        super().__init__()
        d = cfg.d_model
        self.n_head, self.head_dim = cfg.n_head, cfg.head_dim
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.q_norm = RMSNorm(cfg.head_dim) if cfg.qk_norm else None
        self.k_norm = RMSNorm(cfg.head_dim) if cfg.qk_norm else None

    def forward(self, x: torch.Tensor, weights: bool = False):
        B, T, C = x.shape
        split = lambda y: y.view(B, T, self.n_head, self.head_dim).transpose(1, 2)   # noqa: E731  (B, nh, T, hs)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if weights:                                           # explicit softmax: the probabilities come back
            att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)          # (B, nh, T, T)
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(-1)
            y = att @ v
        else:
            att, y = None, F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)      # (B, T, C): heads concatenated
        return self.o(y), att


class MLP(nn.Module):
    def __init__(self, cfg: SANConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, cfg: SANConfig):
        super().__init__()
        self.norm1 = make_norm(cfg, cfg.d_model)
        self.attn = Attention(cfg)
        self.gate = nn.Linear(cfg.d_model, 1) if cfg.gate else None
        self.norm2 = make_norm(cfg, cfg.d_model) if cfg.block == "standard" else None
        self.mlp = MLP(cfg) if cfg.block == "standard" else None

    def gate_value(self, xn: torch.Tensor) -> Optional[torch.Tensor]:
        """g(x) (B, T, 1) from the normalised input, or None without a gate."""
        return None if self.gate is None else torch.sigmoid(self.gate(xn))

    def forward(self, x: torch.Tensor, weights: bool = False):
        xn = self.norm1(x)
        a, att = self.attn(xn, weights)
        g = self.gate_value(xn)
        x = x + (a if g is None else g * a)
        if self.mlp is not None:
            x = x + self.mlp(self.norm2(x))
        return x, att


class Decoder(nn.Module):
    """``forward(idx)`` -> logits (B, T, vocab); ``attentions(idx)`` -> (L, B, H, T, T)."""

    def __init__(self, cfg: SANConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab, cfg.d_model)
        self.wpe = nn.Embedding(cfg.ctx, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm_f = make_norm(cfg, cfg.d_model)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        std = self.cfg.init_std
        for name, p in self.named_parameters():
            if name.endswith("norm.weight") or ".norm" in name or name.startswith("norm_f"):
                nn.init.ones_(p)
            elif name.endswith("gate.bias"):
                nn.init.zeros_(p)
            elif name.endswith(("attn.o.weight", "mlp.proj.weight")):
                nn.init.normal_(p, 0.0, std / math.sqrt(2 * self.cfg.n_layer))
            else:
                nn.init.normal_(p, 0.0, std)

    def hidden(self, idx: torch.Tensor, weights: bool = False):
        B, T = idx.shape
        if T > self.cfg.ctx:
            raise InvalidInput(f"Decoder: sequence length {T} exceeds the context {self.cfg.ctx}")
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        atts = []
        for block in self.blocks:
            x, att = block(x, weights)
            atts.append(att)
        return self.norm_f(x), atts

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        h, _ = self.hidden(idx)
        return h @ self.wte.weight.T                        # (B, T, vocab), tied unembedding

    @torch.no_grad()
    def attentions(self, idx: torch.Tensor) -> torch.Tensor:
        """Attention probabilities of every layer and head, (L, B, H, T, T)."""
        _, atts = self.hidden(idx, weights=True)
        return torch.stack(atts)


def build(cfg: SANConfig, seed: int) -> Decoder:
    """The decoder with its initial weights drawn from ``seed`` (a private generator state)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Decoder(cfg)
