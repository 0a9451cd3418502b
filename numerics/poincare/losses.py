"""Regularised regression losses whose Gibbs measures docs/theory.md section 4 studies.

Families (all deterministic given a seed; data small on purpose so the truth is computable):

* ``GaussianFamily(dim)``             L = 0: F = lambda/2 |theta|^2, the Bakry-Emery equality case.
* ``AttentionScalar(dim=1)``          theta = s, the query-key scale of one softmax attention layer
                                      (value weight fixed at v0): L bounded in s.
* ``AttentionScalar(dim=2)``          theta = (s, v): scale and value weight; L unbounded in v.
* ``LoRADirectional``                 theta = (b, c): rank-1 LoRA W0 + b c u w^T of a tanh net along
                                      fixed unit directions u, w; L depends on p = b c only.
* ``AttentionFull`` / ``LoRAFull``    higher-dimensional versions for the Langevin SDE.

The attention layer: for sequence i with tokens x_i1..x_iT (d dims), query = last token, scores
c_ij = <x_iT, x_ij> / sqrt(d), values u_ij = <w, x_ij>; prediction v * g_i(s) with
g_i(s) = sum_j softmax(s c_i)_j u_ij; loss L = 1/(2n) sum_i (prediction_i - y_i)^2.
The LoRA net: f(x) = a^T tanh((W0 + B A) x), loss 1/(2n) sum_i (f(x_i) - y_i)^2.

Every family offers ``loss`` (torch, theta of shape (..., dim) -> (...)), ``F(lam)`` a vectorised
numpy callable, ``grad_F`` (torch autograd, batched), and certified bounds where they exist:
``loss_range()`` (interval containing L over all of parameter space, or None when L is unbounded)
and, for ``AttentionScalar(1)``, ``hessian_lower()`` (a certified m with L'' >= -m everywhere).
Certified quantities (here and in numerics.poincare.loss_bounds) are evaluated in mpmath at 50 digits from the exact float data and rounded
outward, so their rounding error is far below anything they are compared with.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import mpmath
import numpy as np
import torch

from theory.errors import InvalidInput

_DPS = 50


def _as_tensor(theta) -> torch.Tensor:
    return theta if isinstance(theta, torch.Tensor) else torch.as_tensor(np.asarray(theta, dtype=np.float64))


@dataclass
class LossFamily:
    """Common interface. Subclasses define ``dim``, ``name`` and ``loss``."""

    name: str = "family"
    dim: int = 1
    seed: int = 0
    provenance: dict = field(default_factory=dict)

    def loss(self, theta: torch.Tensor) -> torch.Tensor:  # (..., dim) -> (...)
        raise NotImplementedError

    def loss_np(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape[-1] != self.dim:
            raise InvalidInput(f"{self.name}: theta must have last dimension {self.dim}, got shape {theta.shape}")
        with torch.no_grad():
            return self.loss(torch.as_tensor(theta)).numpy()

    def F(self, lam: float) -> Callable[[np.ndarray], np.ndarray]:
        """F = L + lam/2 |theta|^2 as a vectorised numpy callable on (..., dim) (or (...,) if dim 1)."""
        if not lam > 0:
            raise InvalidInput(f"{self.name}: regularisation lambda must be > 0, got {lam}")

        def F(theta):
            theta = np.asarray(theta, dtype=np.float64)
            if self.dim == 1 and (theta.ndim == 0 or theta.shape[-1] != 1):
                theta = theta[..., None]
            return self.loss_np(theta) + 0.5 * lam * np.sum(theta ** 2, axis=-1)

        return F

    def F_torch(self, theta: torch.Tensor, lam: float) -> torch.Tensor:
        return self.loss(theta) + 0.5 * lam * (theta ** 2).sum(-1)

    def grad_F(self, theta: torch.Tensor, lam: float) -> torch.Tensor:
        """Batched gradient of F: (B, dim) -> (B, dim) (chains are independent, so the sum trick)."""
        with torch.enable_grad():
            th = theta.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.F_torch(th, lam).sum(), th)
        return g

    def loss_range(self) -> Optional[tuple[float, float]]:
        """Certified [inf L, sup L] bracket over all parameters, None if L is unbounded."""
        return None

    def to(self, device) -> "LossFamily":
        """Move the family's torch data to ``device`` (in place; returns self)."""
        for k, v in list(vars(self).items()):
            if isinstance(v, torch.Tensor):
                setattr(self, k, v.to(device))
        return self

    def oscillation(self) -> Optional[float]:
        r = self.loss_range()
        return None if r is None else r[1] - r[0]


@dataclass
class GaussianFamily(LossFamily):
    """L = 0: the Gibbs measure is N(0, 1/(beta lambda) I)."""

    def __post_init__(self):
        self.name = f"gauss{self.dim}"
        self.provenance = {"family": self.name}

    def loss(self, theta):
        theta = _as_tensor(theta)
        return torch.zeros(theta.shape[:-1], dtype=theta.dtype)

    def loss_range(self):
        return (0.0, 0.0)

    def loss_mp(self, theta):
        return mpmath.mpf(0)


def attention_data(n: int = 6, T: int = 4, d: int = 3, seed: int = 0, s_true: float = 2.0,
                   v_true: float = 1.0, noise: float = 0.1):
    """Deterministic attention data: scores c (n, T), values u (n, T), targets y (n,), tokens X."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, T, d))                       # (n, T, d)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    c = np.einsum("nd,ntd->nt", X[:, -1], X) / math.sqrt(d)  # (n, T)
    u = X @ w                                                # (n, T)
    a = np.exp(s_true * c - (s_true * c).max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    y = v_true * (a * u).sum(-1) + noise * rng.standard_normal(n)
    return c, u, y, X


@dataclass
class AttentionScalar(LossFamily):
    """Softmax attention with a scalar query-key scale s (dim 1, value v0 fixed) or (s, v) (dim 2)."""

    n: int = 6
    T: int = 4
    d: int = 3
    v0: float = 1.0

    def __post_init__(self):
        if self.dim not in (1, 2):
            raise InvalidInput(f"AttentionScalar: dim must be 1 or 2, got {self.dim}")
        self.name = f"attn{self.dim}"
        self.c, self.u, self.y, _ = attention_data(self.n, self.T, self.d, self.seed)
        self._c, self._u, self._y = (torch.as_tensor(z) for z in (self.c, self.u, self.y))
        self.provenance = {"family": self.name, "seed": self.seed, "n": self.n, "T": self.T,
                           "d": self.d, "v0": self.v0 if self.dim == 1 else None,
                           "data": "attention_data(s_true=2, v_true=1, noise=0.1)"}

    def g(self, s: torch.Tensor) -> torch.Tensor:  # (...) -> (..., n)
        a = torch.softmax(s[..., None, None] * self._c, dim=-1)   # (..., n, T)
        return (a * self._u).sum(-1)

    def loss(self, theta):
        theta = _as_tensor(theta)
        s = theta[..., 0]
        v = theta[..., 1] if self.dim == 2 else torch.full_like(s, self.v0)
        pred = v[..., None] * self.g(s)                          # (..., n)
        return 0.5 * ((pred - self._y) ** 2).mean(-1)

    # -- high precision ---------------------------------------------------------------------------
    def g_mp(self, s) -> list:
        out = []
        for ci, ui in zip(self.c.tolist(), self.u.tolist()):
            m = max(s * cj for cj in ci)
            e = [mpmath.exp(s * cj - m) for cj in ci]
            out.append(mpmath.fsum(ej * uj for ej, uj in zip(e, ui)) / mpmath.fsum(e))
        return out

    def loss_mp(self, theta):
        s, v = (theta, mpmath.mpf(self.v0)) if self.dim == 1 else theta
        return mpmath.fsum((v * gi - yi) ** 2 for gi, yi in zip(self.g_mp(s), self.y.tolist())) / (2 * self.n)

    def moments_mp(self, s):
        """m2(s) = mean g_i^2, m1(s) = mean y_i g_i: L(s, v) = v^2 m2 / 2 - v m1 + mean y^2 / 2."""
        g = self.g_mp(s)
        return (mpmath.fsum(gi ** 2 for gi in g) / self.n,
                mpmath.fsum(gi * yi for gi, yi in zip(g, self.y.tolist())) / self.n)

    # -- certified bounds (value fixed, dim 1) ----------------------------------------------------
    def _residual_range(self, i: int):
        """min and max over g in [min u_i, max u_i] of (v0 g - y_i)^2."""
        lo, hi = self.v0 * min(self.u[i]), self.v0 * max(self.u[i])
        lo, hi = min(lo, hi), max(lo, hi)
        yi = self.y[i]
        rmax = max(abs(lo - yi), abs(hi - yi))
        rmin = 0.0 if lo <= yi <= hi else min(abs(lo - yi), abs(hi - yi))
        return mpmath.mpf(rmin), mpmath.mpf(rmax)

    def loss_range(self):
        if self.dim == 2:
            return None  # quadratic in v: unbounded above
        with mpmath.workdps(_DPS):
            lo = mpmath.fsum(self._residual_range(i)[0] ** 2 for i in range(self.n)) / (2 * self.n)
            hi = mpmath.fsum(self._residual_range(i)[1] ** 2 for i in range(self.n)) / (2 * self.n)
            return (float(mpmath.mpf(lo) * (1 - mpmath.mpf(10) ** -15)),
                    float(mpmath.mpf(hi) * (1 + mpmath.mpf(10) ** -15)))

    def hessian_lower(self) -> float:
        """Certified m >= 0 with L''(s) >= -m for all s (dim 1).

        L'' = 1/n sum_i [v0^2 g_i'^2 + (v0 g_i - y_i) v0 g_i''] and g_i'' = E_a[(c - c_bar)^2 (u - u_bar)]
        (third mixed central moment of the softmax weights a), so |g_i''| <= osc(u_i) osc(c_i)^2 / 4.
        """
        if self.dim != 1:
            raise InvalidInput("hessian_lower: L has no global Hessian lower bound in dim 2 (see theory.poincare)")
        with mpmath.workdps(_DPS):
            terms = []
            for i in range(self.n):
                osc_c = mpmath.mpf(max(self.c[i])) - mpmath.mpf(min(self.c[i]))
                osc_u = mpmath.mpf(max(self.u[i])) - mpmath.mpf(min(self.u[i]))
                terms.append(abs(mpmath.mpf(self.v0)) * self._residual_range(i)[1] * osc_u * osc_c ** 2 / 4)
            return float(mpmath.fsum(terms) / self.n * (1 + mpmath.mpf(10) ** -15))


def lora_data(n: int = 8, d: int = 3, h: int = 4, seed: int = 0, noise: float = 0.05, scale: float = 2.5):
    """Deterministic LoRA data: inputs X (n, d), base W0 (h, d), head a (h,), targets from the net with
    W0 + scale u w^T (a rank-one update along the unit directions u, w) plus Gaussian noise."""
    rng = np.random.default_rng(seed + 1000)
    X = rng.standard_normal((n, d))
    W0 = rng.standard_normal((h, d)) / math.sqrt(d)
    a = rng.standard_normal(h)
    u = rng.standard_normal(h)
    u /= np.linalg.norm(u)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    W_true = W0 + scale * np.outer(u, w)
    y = np.tanh(X @ W_true.T) @ a + noise * rng.standard_normal(n)
    return X, W0, a, u, w, y


@dataclass
class LoRADirectional(LossFamily):
    """Rank-1 LoRA with B = b u, A = c w^T (fixed unit u, w): theta = (b, c), W = W0 + b c u w^T."""

    n: int = 8
    d: int = 3
    h: int = 4
    dim: int = 2

    def __post_init__(self):
        self.name = "lora2"
        self.X, self.W0, self.a, self.u, self.w, self.y = lora_data(self.n, self.d, self.h, self.seed)
        self.z0 = self.X @ self.W0.T                    # (n, h) pre-activations at p = 0
        self.dz = np.outer(self.X @ self.w, self.u)     # (n, h): z(p) = z0 + p dz
        self._z0, self._dz, self._a, self._y = (torch.as_tensor(t) for t in (self.z0, self.dz, self.a, self.y))
        self.provenance = {"family": self.name, "seed": self.seed, "n": self.n, "d": self.d, "h": self.h,
                           "data": "lora_data(target W0 + 2.5 u w^T, noise=0.05)"}

    def loss_p(self, p: torch.Tensor) -> torch.Tensor:  # (...) -> (...)
        z = self._z0 + p[..., None, None] * self._dz     # (..., n, h)
        f = torch.tanh(z) @ self._a                      # (..., n)
        return 0.5 * ((f - self._y) ** 2).mean(-1)

    def loss(self, theta):
        theta = _as_tensor(theta)
        return self.loss_p(theta[..., 0] * theta[..., 1])

    def loss_p_mp(self, p):
        tot = []
        for z0i, dzi, yi in zip(self.z0.tolist(), self.dz.tolist(), self.y.tolist()):
            f = mpmath.fsum(ak * mpmath.tanh(zk + p * dk) for ak, zk, dk in zip(self.a.tolist(), z0i, dzi))
            tot.append((f - yi) ** 2)
        return mpmath.fsum(tot) / (2 * self.n)

    def loss_mp(self, theta):
        return self.loss_p_mp(theta[0] * theta[1])

    def loss_range(self):
        """|f| <= ||a||_1 since |tanh| < 1: L in [1/2n sum dist(y_i, [-A, A])^2, 1/2n sum (|y_i| + A)^2]."""
        with mpmath.workdps(_DPS):
            A = mpmath.fsum(abs(mpmath.mpf(ak)) for ak in self.a.tolist())
            ys = [mpmath.mpf(yi) for yi in self.y.tolist()]
            lo = mpmath.fsum(max(abs(yi) - A, 0) ** 2 for yi in ys) / (2 * self.n)
            hi = mpmath.fsum((abs(yi) + A) ** 2 for yi in ys) / (2 * self.n)
            return (float(lo * (1 - mpmath.mpf(10) ** -15)), float(hi * (1 + mpmath.mpf(10) ** -15)))


@dataclass
class AttentionFull(LossFamily):
    """Higher-dimensional attention for the SDE: theta = (W in R^{d x d}, w_v in R^d), dim d^2 + d."""

    n: int = 6
    T: int = 4
    d: int = 3

    def __post_init__(self):
        self.name = f"attnfull{self.d}"
        self.dim = self.d * self.d + self.d
        _, _, self.y, X = attention_data(self.n, self.T, self.d, self.seed)
        self._X, self._y = torch.as_tensor(X), torch.as_tensor(self.y)
        self.provenance = {"family": self.name, "seed": self.seed, "n": self.n, "T": self.T, "d": self.d}

    def loss(self, theta):
        theta = _as_tensor(theta)
        d = self.d
        W = theta[..., : d * d].reshape(*theta.shape[:-1], d, d)           # (..., d, d)
        wv = theta[..., d * d:]                                            # (..., d)
        q = self._X[:, -1]                                                 # (n, d)
        qW = torch.matmul(q, W)                                            # (..., n, d)
        scores = (qW[..., :, None, :] * self._X).sum(-1) / math.sqrt(d)    # (..., n, T)
        a = torch.softmax(scores, dim=-1)                                  # (..., n, T)
        vals = torch.matmul(self._X, wv[..., None, :, None])[..., 0]       # (..., n, T)
        return 0.5 * (((a * vals).sum(-1) - self._y) ** 2).mean(-1)


@dataclass
class LoRAFull(LossFamily):
    """Rank-1 LoRA trained on B (h) and A (d): theta = (b, c), W = W0 + b c^T, dim h + d."""

    n: int = 8
    d: int = 3
    h: int = 4

    def __post_init__(self):
        self.name = f"lorafull{self.h}x{self.d}"
        self.dim = self.h + self.d
        X, W0, a, _, _, y = lora_data(self.n, self.d, self.h, self.seed)
        self._X, self._W0, self._a, self._y = (torch.as_tensor(t) for t in (X, W0, a, y))
        self.provenance = {"family": self.name, "seed": self.seed, "n": self.n, "d": self.d, "h": self.h}

    def loss(self, theta):
        theta = _as_tensor(theta)
        b, c = theta[..., : self.h], theta[..., self.h:]                   # (..., h), (..., d)
        W = self._W0 + b[..., :, None] * c[..., None, :]                   # (..., h, d)
        f = torch.tanh(torch.einsum("...hd,nd->...nh", W, self._X)) @ self._a  # (..., n)
        return 0.5 * ((f - self._y) ** 2).mean(-1)

    def loss_range(self):
        A = float(np.abs(self._a.numpy()).sum())
        y = np.abs(self._y.numpy())
        return (0.0, float(((y + A) ** 2).mean() / 2 * (1 + 1e-14)))


def family(name: str, seed: int = 0) -> LossFamily:
    """Family by name: gauss1, gauss2, attn1, attn2, lora2, attnfull, lorafull."""
    table = {"gauss1": lambda: GaussianFamily(dim=1), "gauss2": lambda: GaussianFamily(dim=2),
             "attn1": lambda: AttentionScalar(dim=1, seed=seed), "attn2": lambda: AttentionScalar(dim=2, seed=seed),
             "lora2": lambda: LoRADirectional(seed=seed), "attnfull": lambda: AttentionFull(seed=seed),
             "lorafull": lambda: LoRAFull(seed=seed)}
    if name not in table:
        raise InvalidInput(f"unknown loss family {name!r}; known: {sorted(table)}")
    return table[name]()
