"""Outcomes of the paper's claims from small-scale measurements, against a seed-to-seed noise floor.

A claim is a direction: a statistic (a loss gap, an accuracy difference, a rank drift) should be
above (``">"``) or below (``"<"``) a threshold (0 unless said). From per-seed-pair values x_1..x_n
and a noise floor sigma (the seed-to-seed standard deviation of the same quantity for two runs of
one architecture):

    statistic = mean(x),   half-width = z * max(sigma, sd(x)) / sqrt(n)   (sd(x) = 0 for n = 1)
    supported     the interval lies on the claimed side of the threshold
    refuted       it lies on the other side
    inconclusive  it contains the threshold

:func:`decide` is the float path; :func:`decide_exact` computes the same from the floats taken as
exact rationals (mean and variance as Fractions, the square root enclosed by mpmath interval
arithmetic), so an outcome next to a boundary is decided without rounding.

>>> decide([0.3, 0.35, 0.32], noise=0.01)["outcome"]
'supported'
>>> decide([0.01, -0.02], noise=0.05)["outcome"]
'inconclusive'
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

Z = 2.0
DIRECTIONS = (">", "<")


def _check(values: Sequence[float], noise: float, direction: str) -> list[float]:
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("decide: no values (a claim needs at least one seed pair)")
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"decide: values must be finite, got {vals}")
    if not (noise >= 0 and math.isfinite(noise)):
        raise ValueError(f"decide: noise floor must be finite and >= 0, got {noise!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"decide: direction {direction!r} is not one of {DIRECTIONS}")
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


def decide(values: Sequence[float], noise: float, direction: str = ">", threshold: float = 0.0,
           z: float = Z) -> dict:
    """Float path (see the module docstring)."""
    vals = _check(values, noise, direction)
    n = len(vals)
    mean = sum(vals) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 else 0.0
    half = z * max(noise, sd) / math.sqrt(n)
    lo, hi = mean - half, mean + half
    return dict(outcome=_outcome(lo > threshold, hi < threshold, direction), statistic=mean,
                interval=(lo, hi), n=n, noise=noise, sd=sd,
                method=f"mean of {n} seed pair(s) +- {z:g} max(noise floor, sd)/sqrt(n)")


def decide_exact(values: Sequence[float], noise: float, direction: str = ">", threshold: float = 0.0,
                 z: float = Z) -> dict:
    """Exact path: the same outcome, decided on the rationals the floats represent."""
    import mpmath

    vals = [Fraction(v) for v in _check(values, noise, direction)]
    n = len(vals)
    mean = sum(vals) / n
    var = sum((v - mean) ** 2 for v in vals) / (n - 1) if n > 1 else Fraction(0)
    spread2 = max(Fraction(noise) ** 2, var) * Fraction(z) ** 2 / n     # half-width squared
    t = Fraction(threshold)
    # mean - half > t  <=>  mean - t > 0 and (mean - t)^2 > half^2 ; symmetric for the upper end
    above = mean - t > 0 and (mean - t) ** 2 > spread2
    below = t - mean > 0 and (t - mean) ** 2 > spread2
    with mpmath.workprec(80):
        iv = mpmath.iv.sqrt(mpmath.iv.mpf([spread2.numerator, spread2.numerator]) / spread2.denominator)
        half = float(iv.b)
    return dict(outcome=_outcome(above, below, direction), statistic=float(mean),
                interval=(float(mean) - half, float(mean) + half), n=n, exact=True,
                method=f"exact: Fraction mean, half-width^2 compared exactly (z = {z:g})")
