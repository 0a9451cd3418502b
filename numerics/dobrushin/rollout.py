"""Attention rollout (Abnar & Zuidema 2020) and the tightness of its Dobrushin bounds.

    A_l    head-fused attention of layer l (mean, or max/min followed by row renormalisation)
    Ahat_l = r I + (1 - r) A_l          (r = residual, 0.5 in the paper: (I + A)/2)
    R_l    = Ahat_l R_{l-1},  R_0 = I   (later layers multiply on the left)

Bounds checked per layer (docs/theory.md §1): delta(R_l) <= prod delta(Ahat) <= prod (1 + delta(A))/2.

Discarding (``discard_ratio > 0``; off by default), two named variants, rows renormalised
afterwards with keepdims (vit-explain's issue #16 divided columns by row sums):

    "offdiag"      (this project's, the default) the smallest ``int(ratio * (n^2 - n))`` off-diagonal
                   entries of each fused A_l are zeroed; the diagonal is never discarded;
    "vit-explain"  (jacobgil/vit-explain, vit_rollout.py) the smallest ``int(ratio * n^2)`` of ALL
                   entries are selected and then entry (0, 0) (CLS to CLS) is spared, i.e. one fewer
                   is zeroed when it is among them. vit-explain does not renormalise after max/min
                   head fusion; here fusion always renormalises (:func:`fuse_heads`), so with max/min
                   fusion the selected entries can differ from vit-explain's.

Ties among equal values are broken by position (row-major; the earlier entry is discarded first).

Exactness convention: the rational objects are the float64 fused matrices A_l (rows renormalised
exactly) with the residual applied exactly, and their exact products. Float32/float16/bfloat16
input is validated once with its own dtype's row tolerance and widened exactly. With
``discard_ratio > 0`` the float Ahat_l (after discarding and renormalising) is taken as the
rational matrix instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from theory.errors import InvalidInput
from theory.verdicts import Verdict
from numerics import kernels as K
from numerics.device import chunk_size
from numerics.dobrushin.core import d2_decide, factor_check, float_error
from numerics.stochastic import stack_layers, UNIT_ROUNDOFF, ExactMatrix, as_stochastic, tolerance_of

FUSIONS = ("mean", "max", "min")
DISCARDS = ("offdiag", "vit-explain")
EXACT_BUDGET = 400_000  # Fraction multiply-adds allowed for an exact rollout prefix (per chain)


def _renormalise(x: np.ndarray, what: str) -> np.ndarray:
    s = x.sum(axis=-1, keepdims=True)  # keepdims: the popular implementation broadcast the wrong way
    if np.any(s <= 0):
        idx = tuple(int(v) for v in np.argwhere(s[..., 0] <= 0)[0])
        raise InvalidInput(f"{what}: row {idx[-1]} is all zero after fusion/discarding (index {idx}); "
                         "it cannot be renormalised")
    return x / s


def fuse_heads(A: np.ndarray, head_fusion: str) -> np.ndarray:
    """(..., H, n, n) -> (..., n, n)."""
    if head_fusion == "mean":
        return A.mean(axis=-3)
    if head_fusion == "max":
        return _renormalise(A.max(axis=-3), "max head fusion")
    if head_fusion == "min":
        return _renormalise(A.min(axis=-3), "min head fusion")
    raise InvalidInput(f"head_fusion must be one of {FUSIONS}, got {head_fusion!r}")


def _discarded(A: np.ndarray, discard_ratio: float, discard: str) -> np.ndarray:
    """Copy of the fused stack (..., n, n) with the ``discard`` variant's entries zeroed (module doc)."""
    n = A.shape[-1]
    A = A.copy()
    flat = A.reshape(-1, n * n)
    pos = np.arange(n * n)
    eligible = pos // n != pos % n if discard == "offdiag" else np.ones(n * n, dtype=bool)
    k = int(discard_ratio * int(eligible.sum()))
    if k:
        vals = np.where(eligible, flat, np.inf)
        idx = np.argsort(vals, axis=-1, kind="stable")[:, :k]      # k smallest, earlier position first
        if discard == "vit-explain":
            idx = np.where(idx == 0, -1, idx)                      # (0, 0) is spared, not replaced
        for b, row in enumerate(idx):
            flat[b, row[row >= 0]] = 0.0
    return flat.reshape(A.shape)


def residual_factors(A: np.ndarray, residual: float, discard_ratio: float, discard: str = "offdiag") -> np.ndarray:
    """Ahat_l = r I + (1-r) A_l. With ``discard_ratio > 0``: first zero the smallest weights of each
    fused A_l by the ``discard`` variant ("offdiag" or "vit-explain", see the module doc), then form
    Ahat_l and renormalise its rows (keepdims)."""
    if not 0.0 <= residual <= 1.0:
        raise InvalidInput(f"residual must lie in [0, 1], got {residual}")
    if not 0.0 <= discard_ratio < 1.0:
        raise InvalidInput(f"discard_ratio must lie in [0, 1), got {discard_ratio}")
    if discard not in DISCARDS:
        raise InvalidInput(f"discard must be one of {DISCARDS}, got {discard!r}")
    eye = np.eye(A.shape[-1])
    if discard_ratio > 0:
        Ahat = residual * eye + (1 - residual) * _discarded(A, discard_ratio, discard)
        return _renormalise(Ahat, "rollout factor")
    return residual * eye + (1 - residual) * A


def _prepare(A: Any, head_fusion: Optional[str], fused: Optional[bool],
             row_tol: Optional[float] = None) -> tuple[np.ndarray, tuple, Any, float]:
    """Validate first (complex, boolean, masked, non-stochastic input is refused, naming the row)
    with the row tolerance of the input's own dtype (or ``row_tol``), then widen to float64 (exact)
    and fuse heads. -> (fused float64 stack (..., L, n, n), lead shape, like, tolerance used)."""
    if head_fusion is not None and head_fusion not in FUSIONS:
        raise InvalidInput(f"head_fusion must be one of {FUSIONS}, got {head_fusion!r}")
    if isinstance(A, (tuple, list)):  # transformers' outputs.attentions: per layer (batch, heads, T, T)
        A = stack_layers(A, "attention", axis=-4 if A and getattr(A[0], "ndim", 0) >= 4 else 0)
    batch = as_stochastic(A, "attention", square=True, row_tol=row_tol)
    tol = tolerance_of(getattr(A, "dtype", np.float64)) if row_tol is None else float(row_tol)
    A = batch.data.reshape(batch.lead + batch.data.shape[-2:]).astype(np.float64, copy=False)  # never written to
    if fused is None:
        fused = A.ndim == 3
    need = 3 if fused else 4
    if A.ndim < need:
        raise InvalidInput(f"attention stack must be (..., layers, {'' if fused else 'heads, '}n, n); "
                         f"got shape {A.shape}")
    if fused and head_fusion is not None:
        raise InvalidInput(f"head_fusion={head_fusion!r} cannot apply: the input {A.shape} is taken as already "
                         "fused (..., layers, n, n); pass (..., layers, heads, n, n) with fused=False")
    if not fused:
        A = fuse_heads(A, head_fusion or "mean")
    return A, A.shape[:-3], batch.like, tol


def rollout(A: Any, residual: float = 0.5, head_fusion: Optional[str] = None, discard_ratio: float = 0.0,
            fused: Optional[bool] = None, discard: str = "offdiag", row_tol: Optional[float] = None) -> Any:
    """All partial rollout products R_1..R_L, float64.

    ``A``: (..., layers, heads, n, n), or (..., layers, n, n) already fused (``fused=True``; a 3-D
    input is taken as fused); float64, float32, float16/bfloat16 (torch) or integers. ``head_fusion``:
    "mean" (the default), "max" or "min" for unfused input; giving it for fused input is an error.
    ``discard``: the discarding variant used when ``discard_ratio > 0`` (module doc).
    Returns (..., layers, n, n), same kind as the input."""
    Af, lead, like, _ = _prepare(A, head_fusion, fused, row_tol)
    Ahat = residual_factors(Af, residual, discard_ratio, discard)
    R = np.empty_like(Ahat)
    cur = np.broadcast_to(np.eye(Af.shape[-1]), lead + Af.shape[-2:])
    for l in range(Af.shape[-3]):
        cur = Ahat[..., l, :, :] @ cur
        R[..., l, :, :] = cur
    if like is not None:
        import torch
        return torch.from_numpy(R).to(like.device)
    return R


@dataclass
class RolloutTightness:
    """Per layer l = 1..L (arrays (..., L)); ratios are NaN where undecidable in float64."""

    delta_A: np.ndarray            # delta(A_l)
    delta_Ahat: np.ndarray         # delta(Ahat_l)
    delta_R: np.ndarray            # delta(R_l)
    prod_delta_Ahat: np.ndarray    # prod_{k<=l} delta(Ahat_k)
    prod_factor_bound: np.ndarray  # prod_{k<=l} (1 + delta(A_k))/2
    ratio_R: np.ndarray            # delta(R_l) / prod delta(Ahat)       (submultiplicativity)
    ratio_factor: np.ndarray       # prod delta(Ahat) / prod (1+delta(A))/2 (factor bound)
    d1: np.ndarray                 # Verdict of Theorem D1 on A_l (object array)
    d2: np.ndarray                 # Verdict of Theorem D2 for (Ahat_l, R_{l-1}) (object array)
    chain: np.ndarray              # Verdict: delta(R_l) = prod delta(Ahat) through layer l
    error_R: np.ndarray            # rigorous bound on |float delta(R_l) - exact delta(R_l)|


def _exact_factors(A: np.ndarray, Ahat: np.ndarray, residual: float, discard_ratio: float) -> list:
    """Exact Ahat_l per layer: r I + (1 - r) A_l (A_l rows renormalised exactly, r the float residual
    as a rational), or the float Ahat_l renormalised exactly when entries were discarded."""
    out = []
    r = Fraction(residual)
    for l in range(A.shape[0]):
        if discard_ratio > 0:
            out.append(ExactMatrix.from_floats(Ahat[l]))
            continue
        E = ExactMatrix.from_floats(A[l])
        p, q = r.numerator, r.denominator
        num = [[(q - p) * a + (p * s if i == k else 0) for k, a in enumerate(row)]
               for i, (row, s) in enumerate(zip(E.num, E.rowsum))]
        out.append(ExactMatrix(num, [q * s for s in E.rowsum]))
    return out


def _exact_product(F: ExactMatrix, R: ExactMatrix) -> ExactMatrix:
    Rr = R.rows()
    rows = []
    for i in range(F.n):
        fi = [Fraction(v, F.rowsum[i]) for v in F.num[i]]
        rows.append([sum((fi[j] * Rr[j][k] for j in range(F.m) if fi[j]), Fraction(0)) for k in range(R.m)])
    return ExactMatrix.from_rationals(rows)


def _float_pass(flat: np.ndarray, residual: float, discard_ratio: float, discard: str) -> tuple:
    """The float work of :func:`rollout_tightness` for all stacks at once, flat (B, L, n, n) fused:
    -> (Ahat (B, L, n, n), R (L, B, n, n) with R[l, b] = R_{l+1} of stack b, pair_scan statistics
    of Ahat (B, L, NSTAT) and of R (B, L, NSTAT)).

    Every value is bitwise the one a per-stack, per-matrix computation gives: the residual factors
    are elementwise, ``np.matmul`` over a stack of matrices makes the same BLAS call per matrix as
    the single product ``Ahat_l @ R_{l-1}``, and :func:`numerics.kernels.pair_scan`'s statistics of
    a matrix do not depend on the batch it is scanned in (parallel over matrices or over row blocks,
    merged to the same row-major first maximiser)."""
    B, L, n, _ = flat.shape
    try:
        Ahat = residual_factors(flat, residual, discard_ratio, discard)
    except ValueError:                 # the error as the per-stack computation words it (its index)
        for a in flat:
            residual_factors(a, residual, discard_ratio, discard)
        raise
    Rs = np.empty((L, B, n, n))        # layer-major: each layer's products land contiguous
    cur = np.broadcast_to(np.eye(n), (B, n, n))
    for l in range(L):
        np.matmul(Ahat[:, l], cur, out=Rs[l])
        cur = Rs[l]
    stH = np.zeros((B, L, K.NSTAT))
    stR = np.zeros((B, L, K.NSTAT))
    if n > 1:
        stH = K.pair_scan(np.ascontiguousarray(Ahat.reshape(B * L, n, n)), False).reshape(B, L, K.NSTAT)
        stR = K.pair_scan(Rs.reshape(L * B, n, n), False).reshape(L, B, K.NSTAT).transpose(1, 0, 2)
    return Ahat, Rs, stH, stR


def _chain_one(A: np.ndarray, Ahat: np.ndarray, Rs: np.ndarray, stH: np.ndarray, stR: np.ndarray,
               residual: float, discard_ratio: float, exact_budget: int, d1: np.ndarray) -> dict:
    """All per-layer verdicts and bounds for one stack A (L, n, n) of fused attention, already
    validated, from the float pass (:func:`_float_pass`): its factors Ahat (L, n, n), products
    Rs (L, n, n) (Rs[l] = R_{l+1}) and their pair_scan rows stH, stR (L, NSTAT); ``d1``: its Theorem
    D1 verdicts per layer. Theorem D2 (docs/theory.md §1) is decided per step by
    :func:`numerics.dobrushin.core.d2_decide` from these statistics; exact rollout prefixes are
    built only where its float filter cannot decide. Every float error bound below uses the stack's
    actual row deviation, whatever tolerance it was validated with."""
    L, n, _ = A.shape
    dH = np.maximum(stH[:, K.BEST], 0.0) if n > 1 else np.zeros(L)
    dev = max(np.abs(A.sum(-1) - 1).max(), np.abs(Ahat.sum(-1) - 1).max()) + (n + 2) * UNIT_ROUNDOFF
    ent_err = dev + 4 * UNIT_ROUNDOFF            # entry error of float Ahat vs the exact factor
    eps_p = float(float_error(np.array([ent_err]), n)[0])   # error of float d-values of Ahat
    gamma = (n + 2) * UNIT_ROUNDOFF * 1.01        # one float product of stochastic matrices
    dR = np.empty(L)
    errR = np.empty(L)
    d2 = np.full(L, Verdict.NOT_APPLICABLE, dtype=object)
    chain = np.full(L, Verdict.NOT_APPLICABLE, dtype=object)
    exact_cache: dict = {"factors": None, "R": [], "spent": 0}

    def exact_factors() -> list:
        if exact_cache["factors"] is None:
            exact_cache["factors"] = _exact_factors(A, Ahat, residual, discard_ratio)
        return exact_cache["factors"]

    def exact_prefix(l: int) -> Optional[ExactMatrix]:
        """Exact R_l (l >= 1), within the budget."""
        F, Rx = exact_factors(), exact_cache["R"]
        while len(Rx) < l:
            k = len(Rx)
            if k == 0:
                Rx.append(F[0])
                continue
            exact_cache["spent"] += n ** 3
            if exact_cache["spent"] > exact_budget:
                return None
            Rx.append(_exact_product(F[k], Rx[k - 1]))
        return Rx[l - 1]

    chain_ok = True
    undecided = False        # some D2 step up to l is undecided
    zero_factor = False      # some exact delta(Ahat_k) = 0, k <= l: then delta(R_l) = 0 = the product
    for l in range(L):
        dR[l] = max(stR[l, K.BEST], 0.0) if n > 1 else 0.0
        err_entry = (l + 1) * (ent_err + gamma)
        errR[l] = n * err_entry + 4 * (n + 4) * UNIT_ROUNDOFF
        if n < 2:
            continue
        if l == 0:
            d2[l] = Verdict.TIGHT  # R_1 = Ahat_1 R_0 with R_0 = I, delta(I) = 1
        else:
            eps_q = float(errR[l - 1])

            def exact_pq(l: int = l) -> Optional[tuple]:
                Rq = exact_prefix(l)
                if Rq is None:
                    return None
                return exact_factors()[l], Rq
            res = d2_decide(Ahat[l], Rs[l - 1], eps_p, eps_q, exact_pq,
                            best_p=dH[l], best_q=dR[l - 1],   # deltas from the float pass
                            stats_p=stH[l], stats_q=stR[l - 1])
            d2[l] = Verdict.UNDECIDED if res is None else (Verdict.TIGHT if res else Verdict.HOLDS)
        if dH[l] <= eps_p and exact_factors()[l].rows_equal():   # float filter, then exact equality
            zero_factor = True
        if d2[l] == Verdict.HOLDS:
            chain_ok = False
        undecided = undecided or d2[l] == Verdict.UNDECIDED
        chain[l] = (Verdict.TIGHT if zero_factor else Verdict.HOLDS if not chain_ok else
                    Verdict.UNDECIDED if undecided else Verdict.TIGHT)
    return dict(dH=dH, dR=dR, errR=errR, d1=d1, d2=d2, chain=chain)


def rollout_tightness(A: Any, residual: float = 0.5, head_fusion: Optional[str] = None,
                      discard_ratio: float = 0.0, fused: Optional[bool] = None,
                      exact_budget: int = EXACT_BUDGET, discard: str = "offdiag",
                      row_tol: Optional[float] = None) -> RolloutTightness:
    """Per-layer tightness of delta(R_l) <= prod delta(Ahat) <= prod (1+delta(A))/2, with Theorem
    D1's verdict per layer and Theorem D2's verdict per step (exact; ``undecided`` when the float
    margin is within rounding and the exact rollout prefix would exceed ``exact_budget``).
    ``chain[l]``: delta(R_l) = prod_{k<=l} delta(Ahat_k) exactly; tight whenever some factor up to l
    has delta exactly 0 (both sides are 0), else tight iff D2 is tight at every step up to l.
    Input dtypes as :func:`rollout` (validated once, with the input dtype's row tolerance).

    The float work is batched over all stacks and layers (:func:`_float_pass`: one matmul per layer
    over all stacks, one :func:`numerics.kernels.pair_scan` over all factors and one over all
    products); delta(A_l) comes from :func:`numerics.dobrushin.core.factor_check` when it runs
    (residual 0.5, no discarding), else from one :func:`numerics.kernels.dobrushin_batch` call."""
    Af, lead, _, tol = _prepare(A, head_fusion, fused, row_tol)
    L, n = Af.shape[-3], Af.shape[-1]
    flat = np.ascontiguousarray(Af.reshape((-1,) + Af.shape[-3:]))
    d1 = np.full(flat.shape[:2], Verdict.NOT_APPLICABLE, dtype=object)
    if residual == 0.5 and discard_ratio == 0.0 and n >= 2:
        # the fused stack was validated above; head averaging moves row sums by rounding only, so it
        # is checked at the larger of the input's tolerance and its own deviation (the error bounds
        # of factor_check use the actual deviation either way)
        _, _, _, _, fdev = K.check_stochastic(flat.reshape(-1, n, n), np.inf)
        fc = factor_check(flat, row_tol=max(tol, float(fdev.max())))
        for idx, e in np.ndenumerate(np.asarray(fc.equality)):
            d1[idx] = Verdict.TIGHT if e else Verdict.HOLDS
        dA = np.asarray(fc.delta, dtype=float)    # max(pair_scan BEST, 0): the float delta(A_l)
    else:
        dA = K.dobrushin_batch(flat.reshape(-1, n, n)).reshape(flat.shape[:2]).astype(float)
    # the float pass holds Ahat and every R_l of its stacks at once: stacks go through it in groups
    # within the memory budget (numerics.device.chunk_size; ATTNBOUNDS_MEMORY_BUDGET), not all at once
    parts = []
    step = chunk_size(2 * L * n * n * 8)
    for s0 in range(0, len(flat), step):
        Ahat, Rs, stH, stR = _float_pass(flat[s0:s0 + step], residual, discard_ratio, discard)
        parts += [_chain_one(a, Ahat[b], Rs[:, b], stH[b], stR[b], residual, discard_ratio, exact_budget,
                             d1[s0 + b]) for b, a in enumerate(flat[s0:s0 + step])]

    def stack(key: str) -> np.ndarray:
        return np.stack([p[key] for p in parts]).reshape(lead + (L,))

    dA, dH, dR, errR = dA.reshape(lead + (L,)), stack("dH").astype(float), stack("dR"), stack("errR")
    pH = np.cumprod(dH, axis=-1)
    pF = np.cumprod((1 + dA) / 2, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_R = np.where(dR > errR, dR / pH, np.nan)   # numerator within rounding of 0: undecided
        ratio_F = np.where(pH > 0, pH / pF, np.nan)
    return RolloutTightness(delta_A=dA, delta_Ahat=dH, delta_R=dR, prod_delta_Ahat=pH,
                            prod_factor_bound=pF, ratio_R=ratio_R, ratio_factor=ratio_F,
                            d1=stack("d1"), d2=stack("d2"), chain=stack("chain"), error_R=errR)
