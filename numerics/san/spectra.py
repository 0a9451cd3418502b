"""Weight spectra of the decoders, per layer, from a state dict (a checkpoint or a live model).

Row-vector convention (``nn.Linear`` stores (out, in), y = x W^T): W_Q = q.weight^T (D, D), and
likewise W_K, W_V, W_O. Measured per layer:

    routing   W_Q, W_K (D x D) and the per-head kernels W_Q^h W_K^h^T (rank <= dh)
    content   W_V, W_O (D x D) and the per-head circuits W_V^h W_O^h (rank <= dh)

Estimators are the rank family's (:mod:`numerics.rank.linear`), never re-implemented: the energy
effective rank (tau = 0.9), the entropy effective rank (p ~ sigma^2), and the noise-calibrated
threshold rank (Gavish-Donoho with the matrix's own initialisation standard deviation as the noise
level: a matrix still at its random initialisation has threshold rank ~0, so the threshold rank
counts the directions training has grown out of the random bulk). Per-head spectra go through the
factors (:func:`numerics.rank.weights.product_singular_values`), never forming D x D products.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import torch

from numerics.rank.linear import energy_rank, entropy_rank, threshold_rank
from numerics.rank.weights import product_singular_values
from numerics.san.config import SANConfig
from theory.errors import InvalidInput

MATRICES = ("W_Q", "W_K", "W_V", "W_O")
CIRCUITS = ("QK", "OV")
ROUTING, CONTENT = ("W_Q", "W_K", "QK"), ("W_V", "W_O", "OV")
_NAMES = {"W_Q": "q", "W_K": "k", "W_V": "v", "W_O": "o"}


def layer_matrices(state: Mapping[str, torch.Tensor], cfg: SANConfig, layer: int) -> dict[str, torch.Tensor]:
    """W_Q, W_K, W_V, W_O of one layer as float64 (D, D), row-vector convention."""
    out = {}
    for name, short in _NAMES.items():
        key = f"blocks.{layer}.attn.{short}.weight"
        if key not in state:
            raise InvalidInput(f"spectra: state has no {key!r} (not a numerics.san decoder?)")
        out[name] = state[key].detach().to(torch.float64).T
    return out


def init_std(cfg: SANConfig, name: str) -> float:
    """The standard deviation a matrix is initialised with (numerics.san.model)."""
    return cfg.init_std / math.sqrt(2 * cfg.n_layer) if name == "W_O" else cfg.init_std


def layer_spectra(state: Mapping[str, torch.Tensor], cfg: SANConfig, layer: int) -> dict[str, np.ndarray]:
    """Singular values: (D,) for each matrix, (H, dh) for the QK and OV circuits."""
    W = layer_matrices(state, cfg, layer)
    H, dh = cfg.n_head, cfg.head_dim
    heads = lambda M: M.reshape(M.shape[0], H, dh).permute(1, 0, 2)     # noqa: E731  (D, D) -> (H, D, dh) columns
    out = {k: torch.linalg.svdvals(v).numpy() for k, v in W.items()}
    out["QK"] = product_singular_values(heads(W["W_Q"]), heads(W["W_K"])).numpy()
    W_O_rows = W["W_O"].reshape(H, dh, -1).transpose(1, 2)                # (H, D, dh): (W_O^h)^T
    out["OV"] = product_singular_values(heads(W["W_V"]), W_O_rows).numpy()
    return out


def ranks(spec: Mapping[str, np.ndarray], cfg: SANConfig) -> dict[str, dict[str, float]]:
    """Effective ranks of one layer's spectra: energy_0.9, entropy, and (plain matrices) threshold;
    circuits averaged over heads."""
    out = {}
    for name, s in spec.items():
        r = {"energy_0.9": float(np.mean(energy_rank(s, 0.9))), "entropy": float(np.mean(entropy_rank(s)))}
        if name in MATRICES:
            r["threshold"] = float(threshold_rank(s, init_std(cfg, name), (cfg.d_model, cfg.d_model)))
        out[name] = r
    return out


def model_ranks(state: Mapping[str, torch.Tensor], cfg: SANConfig) -> list[dict[str, dict[str, float]]]:
    """:func:`ranks` for every layer."""
    return [ranks(layer_spectra(state, cfg, l), cfg) for l in range(cfg.n_layer)]


def planted(shape: tuple[int, int], rank: int, noise: float, seed: int, scale: float = 1.0) -> np.ndarray:
    """A test matrix: ``rank`` orthogonal directions of singular value ``scale`` * (1, 2/3, ...)
    plus i.i.d. N(0, noise^2) entries."""
    rng = np.random.default_rng(seed)
    m, n = shape
    U = np.linalg.qr(rng.standard_normal((m, rank)))[0]
    V = np.linalg.qr(rng.standard_normal((n, rank)))[0]
    s = scale * np.array([1.0 / (1 + 0.5 * i) for i in range(rank)])
    return (U * s) @ V.T + noise * rng.standard_normal((m, n))
