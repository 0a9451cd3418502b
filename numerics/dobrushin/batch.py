"""The one batched check of Theorems D1 and D2 (docs/theory.md §1): a float filter, then exact
certification of what it cannot decide. Every family that checks D1 or D2 on a batch of matrices
calls it here: the stress sweeps (:mod:`verification.stress.checks.sweep`), the Dobrushin family's
campaign (:mod:`verification.dobrushin.checks`) and the trained vision/tabular models
(:mod:`verification.modalities.checks`).

The float filter runs batched (the compiled kernel on the CPU, :func:`numerics.dobrushin.dobrushin_torch`
on a torch device, no Python loop over matrices); only what it cannot decide goes to the exact
certification on the CPU (:func:`numerics.dobrushin.factor_check`,
:func:`numerics.dobrushin.product_equality`: Fraction arithmetic, never a tolerance).

Theorem D1, ``dobrushin.factor``: both sides are computed directly, value = delta((I+A)/2) and
bound = (1+delta(A))/2; with ``err`` a rigorous bound on the float error of bound - value, an
instance with slack > 64 err is certified strict (``holds``, the float slack within 3%); slack <
-err certifies a violation; everything else (the tight ones among them) goes to ``factor_check``
(exact verdict, exact slack for strict near-ties), whose closed-form slack must agree with the
direct one within 2 err (else the closed form or the kernel is wrong: ``violated``, a loud stop).
``dobrushin.factor.causal``: the same, and a strict verdict is a violation (the theorem says equality).
Theorem D2, ``dobrushin.product``: pairs (A[2i], A[2i+1]); value delta(PQ), bound delta(P) delta(Q);
slack > 64 err is strict, the rest goes to :func:`product_equality` (exact); a certified equality
whose float slack is beyond err, or a slack < -err, is ``violated``.

Verdicts come back as integer codes (:data:`HOLDS`, :data:`TIGHT`, :data:`VIOLATED`,
:data:`UNDECIDED`; :data:`NAMES` gives their registry names).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from numerics.dobrushin.core import dobrushin, factor_check, float_error, product_equality
from numerics.stochastic import UNIT_ROUNDOFF, ExactMatrix
from theory.errors import InvalidInput
from theory.verdicts import VERDICT_OF, Code

HOLDS, TIGHT, VIOLATED, UNDECIDED = int(Code.HOLDS), int(Code.TIGHT), int(Code.VIOLATED), int(Code.UNDECIDED)
NAMES = tuple(v.value for v in VERDICT_OF)      # verdict code -> theory.verdicts.Verdict value (theory.verdicts.Code)
# theorem id -> which check: D1 on each matrix (causal: equality is the theorem), D2 on pairs
CHECKS = {"dobrushin.factor": "factor", "dobrushin.factor.causal": "factor.causal",
          "dobrushin.product": "product", "dobrushin.product.causal": "product"}

MARGIN = 64    # a strict verdict from the float filter needs slack > MARGIN * err (as factor_check)


def row_dev(A: np.ndarray) -> np.ndarray:
    """Rigorous bound on max_i |exact row sum - 1| per matrix (float64 sum of m nonnegative terms)."""
    m = A.shape[-1]
    return np.abs(A.sum(-1) - 1.0).max(-1) + (m + 2) * UNIT_ROUNDOFF * 1.01


def residual(A: np.ndarray) -> np.ndarray:
    """(I + A)/2 of (B, n, n) without forming I: halving is exact (a subnormal entry loses at most
    2^-1075, far inside the error bound), only the diagonal's + 1/2 rounds."""
    H = A * 0.5
    d = np.arange(A.shape[-1])
    H[..., d, d] += 0.5
    return H


def torch_device(device: str) -> Any:
    """``cuda``, ``cuda:1`` or ``torch:cpu`` (the torch path on CPU tensors) as a torch device."""
    import torch

    return torch.device(device.split(":", 1)[1] if device.startswith("torch:") else device)


def deltas(mats: list, device: str) -> list[np.ndarray]:
    """delta of each batch in ``mats`` (numpy (B, n, m) float64), float64 on the host. ``cpu``: the
    compiled kernel; ``cuda`` / ``torch:cpu``: :func:`dobrushin_torch` on that device, batched."""
    if device == "cpu":
        return [np.asarray(dobrushin(M), dtype=np.float64) for M in mats]
    import torch

    from numerics.dobrushin.torch_path import dobrushin_torch

    dev = torch_device(device)
    return [dobrushin_torch(torch.from_numpy(np.ascontiguousarray(M)).to(dev)).cpu().numpy() for M in mats]


def factor_filter(A: np.ndarray, device: str = "cpu") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(value, bound, err, delta) of Theorem D1 per matrix: delta((I+A)/2), (1+delta(A))/2, a
    rigorous bound on the float error of bound - value (each delta within float_error; forming
    (I+A)/2 rounds only the diagonal), and delta(A)."""
    if device == "cpu":
        dA, dH = deltas([A, residual(A)], device)
    else:
        import torch

        from numerics.dobrushin.torch_path import dobrushin_torch

        T = torch.from_numpy(np.ascontiguousarray(A)).to(torch_device(device))   # (B, n, n), one transfer
        H = T * 0.5
        H.diagonal(0, -2, -1).add_(0.5)
        dA, dH = dobrushin_torch(T).cpu().numpy(), dobrushin_torch(H).cpu().numpy()
    err = 2 * float_error(row_dev(A), A.shape[-1]) + 2 * UNIT_ROUNDOFF
    return dH, (1 + dA) / 2, err, dA


def check_factor(A: np.ndarray, device: str = "cpu", causal: bool = False,
                 certify_all: bool = False) -> dict[str, Any]:
    """Verdict codes, slack, value, bound, delta (of A), ``sent`` (the float filter could not
    decide: certified on the CPU) and ``exact`` (the certification needed Fraction arithmetic) of
    Theorem D1 on (B, n, n). ``cpu``: one pass over the pairs
    (:func:`numerics.dobrushin.factor_check` with ``direct_half``) gives both sides, delta(A) and
    delta((I+A)/2) from (I+A)/2's own entries, and the statistics that certify every instance;
    a torch device computes both deltas with :func:`dobrushin_torch` and certifies the instances
    with slack <= 64 err with :func:`factor_check` on the CPU (``certify_all``: every instance,
    its :class:`~numerics.dobrushin.FactorCheck` returned as ``certificate``: exact slack,
    maximising pair, equality through token 0). Verdicts do not depend on the device or on
    ``certify_all``; a strict slack decided by the filter is the device's float value (within err
    of the exact one)."""
    fc = None
    if device == "cpu":
        fc = factor_check(A, direct_half=True)
        dA = np.asarray(fc.delta, dtype=np.float64)
        value, bound = np.asarray(fc.delta_half, dtype=np.float64), (1 + dA) / 2
        err = 2 * float_error(np.asarray(fc.row_dev, dtype=np.float64), A.shape[-1]) + 2 * UNIT_ROUNDOFF
    else:
        value, bound, err, dA = factor_filter(A, device)
    direct = bound - value
    slack = direct.copy()
    verdict = np.full(len(A), HOLDS, dtype=np.int64)
    exact = np.zeros(len(A), dtype=bool)
    sent = np.ones(len(A), dtype=bool) if certify_all else ~(direct > MARGIN * err)
    idx = np.flatnonzero(sent)
    if len(idx):
        if fc is None:
            fc = factor_check(A[idx])
            eq, ex, sl = fc.equality, fc.exact, fc.slack
        else:                                     # every instance is certified already: take the sent ones
            eq, ex, sl = (np.asarray(v)[idx] for v in (fc.equality, fc.exact, fc.slack))
        eq = np.asarray(eq, dtype=bool)
        exact[idx] = np.asarray(ex, dtype=bool)
        verdict[idx[eq]] = TIGHT
        slack[idx] = np.asarray(sl, dtype=np.float64)           # exact verdict; exact slack near ties
    bad = (direct < -err) | (np.abs(direct - slack) > 2 * err)
    verdict[bad] = VIOLATED                       # the bound fails, or its closed form disagrees
    slack[bad] = direct[bad]
    if causal:
        verdict[verdict == HOLDS] = VIOLATED      # the causal theorem is an equality
    return {"verdict": verdict, "slack": slack, "value": value, "bound": bound, "delta": dA, "exact": exact,
            "sent": sent, "certificate": fc if certify_all else None}


def exact_delta(E: Any) -> Fraction:
    """delta of an :class:`ExactMatrix`, exactly: 1 - the smallest overlap over all pairs of rows."""
    pairs = [(i, j) for i in range(E.n) for j in range(i + 1, E.n)]
    return 1 - min(E.overlaps(pairs)) if pairs else Fraction(0)


def exact_product_slack(P: np.ndarray, Q: np.ndarray) -> float:
    """delta(P) delta(Q) - delta(PQ) for the rationals the floats represent (rows renormalised
    exactly), rounded to a float; for the rare strict pairs whose float slack is within err of 0."""
    EP, EQ = ExactMatrix.from_floats(P), ExactMatrix.from_floats(Q)
    Qr = EQ.rows()
    PQ = [[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in zip(*Qr)] for row in EP.rows()]
    return float(exact_delta(EP) * exact_delta(EQ) - exact_delta(ExactMatrix.from_rationals(PQ)))


def check_product(A: np.ndarray, device: str = "cpu") -> dict[str, np.ndarray]:
    """Theorem D2 on the pairs (A[2i], A[2i+1]) of (2B, n, n)."""
    P, Q = A[0::2], A[1::2]
    PQ = np.matmul(P, Q)
    dA, dPQ = deltas([A, PQ], device)
    dP, dQ = dA[0::2], dA[1::2]
    bound, value = dP * dQ, dPQ
    # each row of the float product is off by <= gamma_n in l1; three deltas with float_error each
    rd = row_dev(A)
    err = 4 * float_error(np.maximum(rd[0::2], rd[1::2]), A.shape[-1])
    slack = bound - value
    verdict = np.full(len(P), HOLDS, dtype=np.int64)
    sent = ~(slack > MARGIN * err)
    idx = np.flatnonzero(sent)
    if len(idx):
        eq = np.asarray(product_equality(P[idx], Q[idx]), dtype=bool)
        verdict[idx[eq]] = TIGHT
        for b in idx[~eq & (slack[idx] <= err[idx])]:     # strict, float slack unreliable: exact
            slack[b] = exact_product_slack(P[b], Q[b])
    tight = verdict == TIGHT
    bad = (slack < -err) | (tight & (np.abs(slack) > err))   # the bound fails, or an exact equality
    slack[tight & ~bad] = 0.0                                 # whose float slack is beyond its error
    verdict[bad] = VIOLATED
    return {"verdict": verdict, "slack": slack, "value": value, "bound": bound, "exact": sent, "sent": sent}


def check_batch(theorem: str, A: np.ndarray, device: str = "cpu") -> dict[str, Any]:
    """Per-instance arrays (verdict codes, slack, value, bound, exact) for ``theorem`` (a key of
    :data:`CHECKS`) on a batch of matrices: D1 on each matrix, D2 on the pairs (A[2i], A[2i+1])."""
    kind = CHECKS.get(theorem)
    if kind is None:
        raise InvalidInput(f"check_batch: no batched check of {theorem!r}; known: {', '.join(CHECKS)}")
    if kind == "product":
        return check_product(A, device)
    return check_factor(A, device, causal=kind == "factor.causal")
