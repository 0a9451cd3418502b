"""A mean over independent values with its t interval (:class:`Spread`), and a median with its
percentile-bootstrap band."""
from __future__ import annotations

import math
from typing import Any, Sequence

from theory.verdicts import ALPHA
from dataclasses import dataclass

from verification.stats.paired import exact_sd

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


def median_interval(values: Any, bootstrap_seed: int = 0, statistic: Any = None) -> tuple:
    """(median, 95% percentile-bootstrap interval of ``statistic``, the median) of the finite
    ``values`` (None skipped): ``scipy.stats.bootstrap`` with 999 resamples and the fixed seed
    ``bootstrap_seed`` (the tables use the layer's index);
    (median, (nan, nan)) for fewer than two values, (m, (m, m)) when all are equal."""
    import numpy as np

    if statistic is None:
        statistic = np.median
    x = np.array([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None, (math.nan, math.nan)
    m = float(np.median(x))
    if x.size < 2:
        return m, (math.nan, math.nan)
    if np.all(x == x[0]):
        return m, (m, m)
    from scipy.stats import bootstrap

    res = bootstrap((x,), statistic, n_resamples=999, method="percentile", rng=np.random.default_rng(bootstrap_seed))
    return m, (float(res.confidence_interval.low), float(res.confidence_interval.high))
