"""How often Theorem D2 is tight on random causal pairs: the prediction of the exact causal-D2
condition (docs/theory.md §1, corollary "causal D2"; registered as ``dobrushin.product.causal``).

For lower-triangular row-stochastic P, Q with positive entries on and below the diagonal, D2 is
tight iff Q_10 = ... = Q_{l*,0} = q for l* the *first* row l >= 1 minimising P_l0, with
q = min_{l>=1} Q_l0. For continuous entries (a tie has probability 0) this is: l* = 1 and row 1 is
the minimiser of Q_l0 too. For P and Q drawn independently from one law the share of tight pairs is
therefore pi_n^2, with pi_n = P(argmin_{l>=1} A_l0 = 1) (pi_2 = 1: every 2 x 2 pair is tight).

:func:`first_minimiser_is_row_one` is the event for a batch of matrices, :func:`predicted_tight` the
predicted verdict of a batch of pairs, :func:`minimiser_count` counts the event on fresh draws of a
random family (the estimate of pi_n), and :func:`predicted_share` turns a count into pi_n^2 with an
interval (Wilson's for pi_n, squared: the square is monotone on [0, 1]).

>>> import numpy as np
>>> P = np.array([[1.0, 0, 0], [0.2, 0.8, 0], [0.5, 0.25, 0.25]])     # row 1 minimises P_l0
>>> Q = np.array([[1.0, 0, 0], [0.1, 0.9, 0], [0.3, 0.3, 0.4]])       # and Q_l0
>>> R = np.array([[1.0, 0, 0], [0.6, 0.4, 0], [0.5, 0.25, 0.25]])     # row 2 minimises R_l0
>>> bool(predicted_tight(P, Q)), bool(predicted_tight(R, Q))
(True, False)
>>> predicted_share(25, 100)[0]
0.0625
"""
from __future__ import annotations

from typing import Any

import numpy as np

from theory.errors import InvalidInput

__all__ = ["first_minimiser_is_row_one", "predicted_tight", "minimiser_count", "predicted_share"]

BATCH_ELEMENTS = 2 ** 22        # matrix entries drawn at once (32 MiB of float64)


def first_minimiser_is_row_one(A: Any) -> np.ndarray:
    """``(..., n, n)`` lower-triangular row-stochastic -> ``(...,)`` bool: row 1 is the first
    minimiser of A_l0 over l >= 1 (``np.argmin`` returns the first of tied minima)."""
    A = np.asarray(A, dtype=float)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-1] < 2:
        raise InvalidInput(f"first_minimiser_is_row_one: want (..., n, n) with n >= 2, got shape {A.shape}")
    return np.argmin(A[..., 1:, 0], axis=-1) == 0


def predicted_tight(P: Any, Q: Any) -> np.ndarray:
    """The verdict the causal-D2 condition predicts for pairs with continuous entries (no ties):
    tight iff row 1 is the first minimiser of P_l0 and of Q_l0."""
    return first_minimiser_is_row_one(P) & first_minimiser_is_row_one(Q)


def minimiser_count(family: str, n: int, count: int, seed: int, offset: int) -> tuple[int, int]:
    """(k, count): on ``count`` fresh draws of ``family`` at size n, how often row 1 is the first
    minimiser of A_l0. Drawn in batches, batch b from :func:`numerics.sources.random.generator`
    ``(seed, family, n, offset + b)``: streams no campaign that uses chunk indices below ``offset`` draws."""
    from numerics.sources.random import generator, sample

    if count < 1:
        raise InvalidInput(f"minimiser_count: count must be >= 1, got {count}")
    batch = max(1, BATCH_ELEMENTS // (n * n))
    k, done, b = 0, 0, 0
    while done < count:
        size = min(batch, count - done)
        A = sample(family, n, size, generator(seed, family, n, offset + b))
        k += int(first_minimiser_is_row_one(A).sum())
        done, b = done + size, b + 1
    return k, count


def predicted_share(k: int, m: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """pi_n^2 from the count k of m draws, and its interval: Wilson's for pi_n (scipy.stats), squared."""
    from scipy.stats import binomtest

    if not (0 <= k <= m and m >= 1):
        raise InvalidInput(f"predicted_share: want 0 <= k <= m, m >= 1, got k={k}, m={m}")
    ci = binomtest(k, m).proportion_ci(confidence_level=confidence, method="wilson")
    return (k / m) ** 2, float(ci.low) ** 2, float(ci.high) ** 2
