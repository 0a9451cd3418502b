"""A mean over independent values with its t interval (:class:`Spread`), and a median with its
order-statistic interval (distribution-free: no percentile bootstrap, which over a few inputs
understates the spread)."""
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


def median_rank(n: int, level: float = 1 - ALPHA) -> int:
    """The rank j of the distribution-free interval [x_(j), x_(n+1-j)] of a median of n independent
    values (the order statistics, sorted ascending): the largest j whose coverage
    1 - 2 P(Binomial(n, 1/2) <= j - 1) is at least ``level``, computed exactly; 0 where even the
    range [x_(1), x_(n)] covers less (n <= 5 at 95%: 1 - 2^(1-n) < 0.95), i.e. no interval.

    >>> [median_rank(n) for n in (4, 5, 6, 9, 20, 120)]
    [0, 0, 1, 2, 6, 49]
    """
    from fractions import Fraction
    from math import comb

    if int(n) != n or n < 0 or not 0 < level < 1:
        raise ValueError(f"median rank: need an integer n >= 0 and 0 < level < 1, got {n}, {level}")
    target, tail, best = Fraction(level), Fraction(0), 0
    for j in range(1, (int(n) + 1) // 2 + 1):
        tail += Fraction(comb(int(n), j - 1), 2 ** int(n))          # P(Binomial(n, 1/2) <= j - 1)
        if 1 - 2 * tail < target:
            break
        best = j
    return best


def median_interval(values: Any, level: float = 1 - ALPHA) -> tuple:
    """(median, (lo, hi)) of the finite ``values`` (None skipped): the order-statistic interval
    [x_(j), x_(n+1-j)] of :func:`median_rank`, distribution-free and exact in its coverage, no
    resampling; (median, (nan, nan)) where n values hold no interval at ``level`` (n <= 5 at 95%:
    then the values themselves are what there is), (None, (nan, nan)) without values.

    >>> median_interval([5.0, 1.0, 4.0, 2.0, 3.0, 6.0])
    (3.5, (1.0, 6.0))
    >>> median_interval([1.0, 2.0, 3.0])[1]
    (nan, nan)
    """
    x = sorted(float(v) for v in values if v is not None and math.isfinite(float(v)))
    if not x:
        return None, (math.nan, math.nan)
    n = len(x)
    m = x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2
    j = median_rank(n, level)
    return m, ((x[j - 1], x[n - j]) if j else (math.nan, math.nan))
