"""A mean over seeds with its t interval: the unit the modalities comparisons decide on (one module, so
that the comparisons and the seed summaries both use it without importing each other)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from verification.report.stats import ALPHA, exact_sd


@dataclass(frozen=True)
class Spread:
    """Mean of independent values with its t interval (df = len - 1)."""

    values: tuple
    mean: float
    sd: float
    df: int
    lo: float
    hi: float

    @property
    def se(self) -> float:
        return self.sd / math.sqrt(len(self.values)) if self.values else math.nan


def t_spread(values: Sequence[float], alpha: float = ALPHA) -> Spread:
    """Mean, sd (ddof 1) and the two-sided 1 - alpha t interval (df = n - 1; unbounded for n < 2).

    >>> s = t_spread([0.2, 0.3, 0.25])
    >>> s.df, round(s.lo, 4), round(s.hi, 4)
    (2, 0.1258, 0.3742)
    """
    from scipy import stats

    v = tuple(float(x) for x in values)
    n = len(v)
    if n == 0:
        return Spread(v, math.nan, math.nan, 0, math.nan, math.nan)
    mean = sum(v) / n
    if n < 2:
        return Spread(v, mean, math.nan, 0, -math.inf, math.inf)
    sd = exact_sd(v)                        # exact: identical shares give sd 0, never a rounding residue
    half = float(stats.t.ppf(1 - alpha / 2, n - 1)) * sd / math.sqrt(n)
    return Spread(v, mean, sd, n - 1, mean - half, mean + half)
