"""The scalar-bottleneck lemma (theory.san) evaluated on given weights.

At sequence length 1 the softmax over a single key is exactly 1, so every attention layer maps
its (normalised) input x to x W_V W_O whatever W_Q, W_K and QK-normalisation are; RMSNorm and the
gate only contribute scalars. A depth-L attention-only decoder therefore computes

    h_L = h_0 prod_{l=1..L} (I + c_l M_l),   M_l = diag(gamma_l) W_V^l W_O^l,
    c_l = g_l(h_{l-1}) / sqrt(mean(h_{l-1}^2) + eps)   (1 / rms without gate; 1 without norm and gate)

and logits c_f h_L diag(gamma_f) W_E^T: a fixed linear map modulated by L (+1) scalars.

- :func:`bottleneck_residual` (fast, float64): the model's own forward at T = 1 on every token
  against the product formula with the scalars read off the run; a filter, not a certificate.
- :func:`bottleneck_exact` (exact): the block recursion, as the model defines it, in exact dyadic
  integer arithmetic with each c_l a formal variable, against h_0 prod (I + c_l M_l) expanded over
  the 2^L monomials (M_l formed exactly): equal coefficient by coefficient, or not.
"""
from __future__ import annotations

import copy
from itertools import combinations
from typing import Any

import numpy as np
import torch

from theory.errors import InvalidInput

EXACT_MAX_LAYERS = 8          # 2^L monomials


def _check_attention_only(model: Any) -> None:
    if model.cfg.block != "attention":
        raise InvalidInput(f"bottleneck: the lemma is about attention-only decoders; {model.cfg.name} has "
                         "feed-forward layers")


@torch.no_grad()
def bottleneck_scalars(model: Any, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Run ``model`` (float64 copy) at T = 1 on ``tokens`` (N,): (h_0 (N, D), h_L (N, D), c (N, L))."""
    m = copy.deepcopy(model).to(torch.float64)
    h0 = m.wte(tokens) + m.wpe(torch.zeros_like(tokens))
    x, cs = h0[:, None, :], []
    for block in m.blocks:
        xn = block.norm1(x)
        c = torch.ones(x.shape[0], 1, 1, dtype=x.dtype)
        if model.cfg.norm == "rms":
            c = c * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        g = block.gate_value(xn)
        cs.append((c if g is None else c * g)[:, 0, 0])
        x, _ = block(x)
    return h0, x[:, 0, :], torch.stack(cs, 1)


def content_matrices(model: Any) -> list[torch.Tensor]:
    """M_l = diag(gamma_l) W_V^l W_O^l, float64 (D, D) each (gamma = 1 without norm)."""
    out = []
    for block in model.blocks:
        a = block.attn
        M = a.v.weight.detach().to(torch.float64).T @ a.o.weight.detach().to(torch.float64).T
        if model.cfg.norm == "rms":
            M = block.norm1.weight.detach().to(torch.float64)[:, None] * M
        out.append(M)
    return out


@torch.no_grad()
def bottleneck_residual(model: Any, tokens: Any = None) -> dict:
    """Relative max-norm gap between the model at T = 1 and h_0 prod (I + c_l M_l), over ``tokens``
    (default: every token), and the same for the logits; with the scalars c (N, L)."""
    _check_attention_only(model)
    tokens = torch.arange(model.cfg.vocab) if tokens is None else torch.as_tensor(tokens)
    h0, hL, c = bottleneck_scalars(model, tokens)
    h = h0.clone()
    for l, M in enumerate(content_matrices(model)):
        h = h + c[:, l:l + 1] * (h @ M)
    rel = float((h - hL).abs().max() / hL.abs().max().clamp_min(1e-300))
    m = copy.deepcopy(model).to(torch.float64)
    logits = m(tokens[:, None])[:, 0, :]
    hf = m.norm_f(h[:, None, :])[:, 0, :] @ m.wte.weight.T
    rel_logits = float((hf - logits).abs().max() / logits.abs().max().clamp_min(1e-300))
    eps = np.finfo(np.float64).eps
    bound = 64 * (model.cfg.n_layer + 1) * model.cfg.d_model * eps      # float64 rounding, generous
    return dict(residual=max(rel, rel_logits), bound=bound, ok=max(rel, rel_logits) <= bound,
                scalars=c.numpy(), tokens=int(tokens.numel()))


def _dyadic(A: np.ndarray) -> tuple[np.ndarray, int]:
    """A float64 array as exact integers (object dtype) times 2^e."""
    A = np.asarray(A, dtype=np.float64)
    if not np.isfinite(A).all():
        raise InvalidInput("bottleneck_exact: weights are not finite")
    mant, expo = np.frexp(A)
    ints = (mant * 2.0 ** 53).astype(np.int64)
    e = int(expo.min()) - 53 if A.size else 0
    Z = np.array([int(i) << int(s) for i, s in zip(ints.ravel(), (expo.ravel() - 53 - e))],
                 dtype=object).reshape(A.shape)
    return Z, e


def _equal(a: tuple, b: tuple) -> bool:
    (za, ea), (zb, eb) = a, b
    if ea > eb:
        za, ea, zb, eb = zb, eb, za, ea
    shift = eb - ea
    return all(int(x) == int(y) << shift for x, y in zip(za, zb))


def bottleneck_exact(model: Any, token: int = 0) -> dict:
    """Exact check at one token (see the module docstring): ``equal`` True when every one of the
    2^L coefficients agrees exactly; ``decided`` False beyond :data:`EXACT_MAX_LAYERS` layers."""
    _check_attention_only(model)
    L, D, H, dh = model.cfg.n_layer, model.cfg.d_model, model.cfg.n_head, model.cfg.head_dim
    if L > EXACT_MAX_LAYERS:
        return dict(equal=None, decided=False, monomials=2 ** L)
    h0 = (model.wte.weight[token].detach().double() + model.wpe.weight[0].detach().double()).numpy()
    h0 = _dyadic(h0)
    gam, Wv, Wo, Ms = [], [], [], []
    for block in model.blocks:
        g = block.norm1.weight.detach().double().numpy() if model.cfg.norm == "rms" else np.ones(D)
        v, o = block.attn.v.weight.detach().double().numpy().T, block.attn.o.weight.detach().double().numpy().T
        gam.append(_dyadic(g))
        Wv.append(_dyadic(v))
        Wo.append(_dyadic(o))
        Zg, eg = gam[-1]
        Ms.append(((Zg[:, None] * Wv[-1][0]).dot(Wo[-1][0]), eg + Wv[-1][1] + Wo[-1][1]))   # diag(gamma) W_V W_O
    # the model's recursion: h <- h + c_l * concat_h(1 * (x gamma W_V)_h) W_O, one monomial per subset
    model_terms = {(): h0}
    for l in range(L):
        new = dict(model_terms)
        for S, (z, e) in model_terms.items():
            xg = z * gam[l][0]                                        # normalised input, up to the scalar
            v = xg.dot(Wv[l][0])
            heads = [1 * v[h * dh:(h + 1) * dh] for h in range(H)]    # softmax over one key: weight exactly 1
            y = np.concatenate(heads).dot(Wo[l][0])
            new[S + (l,)] = (y, e + gam[l][1] + Wv[l][1] + Wo[l][1])
        model_terms = new
    # the formula: h_0 prod_l (I + c_l M_l), coefficient of c_S = h_0 M_{s1} M_{s2} ...
    equal = True
    for k in range(L + 1):
        for S in combinations(range(L), k):
            z, e = h0
            for l in S:
                z, e = z.dot(Ms[l][0]), e + Ms[l][1]
            equal = equal and _equal((z, e), model_terms[S])
    return dict(equal=bool(equal), decided=True, monomials=2 ** L)

