"""Outcomes of one of the paper's claims from small-scale measurements: a paired t interval over seed
pairs.

A claim is a direction: a statistic (a loss gap, an accuracy difference, a rank drift) should be
above (``">"``) or below (``"<"``) a threshold (0 unless said). From per-seed-pair values x_1..x_n:

    statistic = mean(x),   half-width = t_{1 - alpha/2, n - 1} sd(x) / sqrt(n)   (Student's t, scipy)
    supported     the interval lies on the claimed side of the threshold
    refuted       it lies on the other side
    inconclusive  it contains the threshold, or n < 2 (no degrees of freedom: no interval)

The noise floor (:func:`noise_floor`, the seed-to-seed spread of single runs) is reported beside it,
not mixed into the interval. One claim alone: the family of claims of a run, Holm's adjustment and
equivalence tests are :mod:`verification.san.checks.claims`' (the statistics live in the report
layer). :func:`decide_exact` makes the same comparison of the interval's ends with the threshold on
the rationals the floats represent; the statistic itself stays a noisy estimate.

>>> decide([0.3, 0.35, 0.32], noise=0.01)["outcome"]
'supported'
>>> decide([0.01, -0.02], noise=0.05)["outcome"]
'inconclusive'
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

from theory.errors import InvalidInput
from theory.verdicts import ALPHA

DIRECTIONS = (">", "<")


def _check(values: Sequence[float], noise: float, direction: str) -> list[float]:
    vals = [float(v) for v in values]
    if not vals:
        raise InvalidInput("decide: no values (a claim needs at least one seed pair)")
    if not all(math.isfinite(v) for v in vals):
        raise InvalidInput(f"decide: values must be finite, got {vals}")
    if not (noise >= 0 and math.isfinite(noise)):
        raise InvalidInput(f"decide: noise floor must be finite and >= 0, got {noise!r}")
    if direction not in DIRECTIONS:
        raise InvalidInput(f"decide: direction {direction!r} is not one of {DIRECTIONS}")
    return vals


def noise_floor(groups: Sequence[Sequence[float]]) -> float:
    """Pooled seed-to-seed standard deviation of single runs (each group: one architecture over
    seeds), times sqrt(2): the standard deviation of a difference of two independent runs."""
    num, den = 0.0, 0
    for g in groups:
        g = [float(v) for v in g if v is not None and math.isfinite(float(v))]
        if len(g) >= 2:
            m = sum(g) / len(g)
            num += sum((v - m) ** 2 for v in g)
            den += len(g) - 1
    return math.sqrt(2 * num / den) if den else math.nan


def _outcome(lo: bool, hi: bool, direction: str) -> str:
    """lo: interval above threshold; hi: interval below threshold."""
    if direction == ">":
        return "supported" if lo else "refuted" if hi else "inconclusive"
    return "supported" if hi else "refuted" if lo else "inconclusive"


def t_quantile(n: int, alpha: float = ALPHA) -> float:
    """t_{1 - alpha/2} with n - 1 degrees of freedom (inf for n < 2)."""
    from scipy import stats

    return float(stats.t.ppf(1 - alpha / 2, n - 1)) if n >= 2 else math.inf


def decide(values: Sequence[float], noise: float, direction: str = ">", threshold: float = 0.0,
           alpha: float = ALPHA) -> dict:
    """Float path (see the module docstring)."""
    vals = _check(values, noise, direction)
    n = len(vals)
    mean = sum(vals) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 else math.nan
    q = t_quantile(n, alpha)
    half = q * sd / math.sqrt(n) if n > 1 else math.inf
    lo, hi = mean - half, mean + half
    return dict(outcome=_outcome(lo > threshold, hi < threshold, direction), statistic=mean,
                interval=(lo, hi), n=n, df=n - 1, noise=noise, sd=sd,
                method=f"mean of {n} seed pair(s) +- t(df = {n - 1}) sd/sqrt(n), {1 - alpha:.0%}")


def decide_exact(values: Sequence[float], noise: float, direction: str = ">", threshold: float = 0.0,
                 alpha: float = ALPHA) -> dict:
    """The same outcome, the interval's ends compared with the threshold on rationals."""
    vals = [Fraction(v) for v in _check(values, noise, direction)]
    n = len(vals)
    fast = decide([float(v) for v in vals], noise, direction, threshold, alpha)
    if n < 2:
        return dict(fast, outcome="inconclusive")
    mean = sum(vals) / n
    var = sum((v - mean) ** 2 for v in vals) / (n - 1)
    spread2 = var * Fraction(t_quantile(n, alpha)) ** 2 / n            # half-width squared
    t = Fraction(threshold)
    above = mean - t > 0 and (mean - t) ** 2 > spread2
    below = t - mean > 0 and (t - mean) ** 2 > spread2
    return dict(fast, outcome=_outcome(above, below, direction),
                method=fast["method"] + "; ends compared with the threshold in rational arithmetic")
