"""Binomial shares: the Wilson interval of k of n (the one interval of a share, for every count,
independent or, through a design effect, clustered), the paired cluster bootstrap of the difference
of two pooled shares, the exact binomial test, and the outcome of a claim about a share or an interval."""
from __future__ import annotations

import math
from typing import Sequence

from theory.errors import InvalidInput

Z95 = 1.959963984540054


def wilson(k: float, n: float, z: float = Z95, deff: float = 1.0) -> tuple[float, float]:
    """The Wilson score interval of a binomial share k/n (95% by default): the one interval of a share
    in every table, for every count from 0 to n (at k = 0 it is [0, z^2 / (n + z^2)], at k = n its
    mirror; no other rule for the ends); (nan, nan) for n = 0. Both bounds increase with k at fixed n
    (tested). ``deff`` >= 1 is a design effect (:func:`design_effect`): the interval of the same share
    on n / deff effective trials, for verdicts that come in correlated clusters; 1 for independent ones.
    A count outside 0 <= k <= n, or a design effect below 1, is an InvalidInput.

    >>> [round(x, 4) for x in wilson(0, 9360)], [round(x, 4) for x in wilson(1, 9360)]
    ([0.0, 0.0004], [0.0, 0.0006])
    """
    if not (0 <= k <= n) or not deff >= 1 or not z > 0:
        raise InvalidInput(f"Wilson interval: need 0 <= k <= n, deff >= 1 and z > 0, got k={k}, n={n}, "
                           f"deff={deff}, z={z}")
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    m = n / deff
    den = 1 + z * z / m
    mid = (p + z * z / (2 * m)) / den
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / den
    return (0.0 if k == 0 else max(0.0, mid - half), 1.0 if k == n else min(1.0, mid + half))


def design_effect(k: Sequence[int], n: Sequence[int]) -> float:
    """The design effect of a share pooled over clusters (``k[c]`` of ``n[c]`` hits in cluster c, e.g.
    one input's verdicts over layers and heads, which are not independent): the cluster-robust
    variance of the pooled share sum(k) / sum(n) (the ratio estimator's, C / (C - 1) sum_c
    (k_c - p n_c)^2 / N^2 over C clusters) divided by the binomial variance p (1 - p) / N, at least 1
    (clustering never counts as more information than independent verdicts). Where the pooled share
    is 0 or 1 both variances are 0 and the sample holds no estimate of the clustering: 1, the
    convention of Korn and Graubard (1998), so a count of 0 gets the interval its neighbours get; with
    one cluster, N (one effective trial). A bad argument is an InvalidInput naming it.

    >>> design_effect([3, 0, 3, 0], [3, 3, 3, 3]), design_effect([1, 2, 1, 2], [3, 3, 3, 3])
    (4.0, 1.0)
    """
    kk, nn = [int(x) for x in k], [int(x) for x in n]
    if len(kk) != len(nn):
        raise InvalidInput(f"design effect: k and n must be equal-length sequences, got {len(kk)} and {len(nn)}")
    if any(x < 0 for x in nn) or any(not 0 <= a <= b for a, b in zip(kk, nn)):
        raise InvalidInput("design effect: need 0 <= k <= n in every cluster")
    used = [(a, b) for a, b in zip(kk, nn) if b > 0]
    K, N = sum(a for a, _ in used), sum(b for _, b in used)
    if N == 0 or K == 0 or K == N:
        return 1.0
    if len(used) < 2:
        return float(N)
    from fractions import Fraction

    p = Fraction(K, N)
    cluster = Fraction(len(used), len(used) - 1) * sum((a - p * b) ** 2 for a, b in used) / N ** 2
    return max(1.0, float(cluster / (p * (1 - p) / N)))


def clustered_wilson(k: Sequence[int], n: Sequence[int]) -> tuple[float, float]:
    """The Wilson interval (:func:`wilson`) of a share pooled over clusters, sum(k) of sum(n), on its
    effective number of trials (its :func:`design_effect`); (nan, nan) without verdicts.

    >>> [round(x, 3) for x in clustered_wilson([3, 0, 3, 0], [3, 3, 3, 3])]     # 4 inputs' worth, not 12 verdicts'
    [0.125, 0.875]
    """
    kk, nn = [int(x) for x in k], [int(x) for x in n]
    deff = design_effect(kk, nn)
    return wilson(sum(kk), sum(nn), deff=deff)


BOOTSTRAP_RESAMPLES = 2000


def cluster_bootstrap_difference(k1: Sequence[int], n1: Sequence[int], k2: Sequence[int], n2: Sequence[int],
                                 seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES,
                                 level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the difference of two pooled shares measured on the same clusters
    (paired: cluster c has k1[c] of n1[c] hits in the first, k2[c] of n2[c] in the second), the
    clusters resampled together with replacement (``numpy.random.default_rng(seed)``). A simultaneous
    interval over m comparisons: ``level = 1 - alpha / m`` (Bonferroni).

    >>> cluster_bootstrap_difference([2, 2], [2, 2], [0, 0], [2, 2])
    (1.0, 1.0)
    """
    import numpy as np

    a = [np.asarray(x, dtype=np.int64) for x in (k1, n1, k2, n2)]
    if len({x.shape for x in a}) != 1 or a[0].ndim != 1:
        raise InvalidInput("cluster bootstrap difference: k1, n1, k2, n2 must be equal-length sequences")
    if any(np.any(x < 0) for x in a) or np.any(a[0] > a[1]) or np.any(a[2] > a[3]):
        raise InvalidInput("cluster bootstrap difference: need 0 <= k <= n in every cluster")
    if int(resamples) < 1 or not 0 < level < 1:
        raise InvalidInput(f"cluster bootstrap difference: resamples >= 1 and 0 < level < 1, got {resamples}, {level}")
    if a[0].size == 0 or a[1].sum() == 0 or a[3].sum() == 0:
        return (math.nan, math.nan)
    idx = np.random.default_rng(seed).integers(0, a[0].size, size=(int(resamples), a[0].size))
    t1, t2 = a[1][idx].sum(axis=1), a[3][idx].sum(axis=1)
    ok = (t1 > 0) & (t2 > 0)
    d = a[0][idx].sum(axis=1)[ok] / t1[ok] - a[2][idx].sum(axis=1)[ok] / t2[ok]
    q = (1 - level) / 2
    return (float(np.quantile(d, q)), float(np.quantile(d, 1 - q)))


def share_outcome(k: int, n: int, level: float = 0.5) -> str:
    """The outcome of a claim that something happens in most draws ("gradient descent recovers r*"):
    supported when the 95% Wilson interval of k/n lies above ``level``, refuted when it lies
    below, inconclusive when it contains it (or nothing was decided).

    >>> share_outcome(111, 128), share_outcome(12, 40), share_outcome(5, 9)
    ('supported', 'refuted', 'inconclusive')
    """
    if n <= 0:
        return "inconclusive"
    return interval_outcome(*wilson(k, n), level)


def interval_outcome(lo: float, hi: float, level: float = 0.5) -> str:
    """A 95% interval [lo, hi] against ``level``: supported above it, refuted below it, inconclusive
    when it contains it (the rule of :func:`share_outcome`).

    >>> interval_outcome(0.78, 0.88), interval_outcome(0.36, 0.48), interval_outcome(0.4, 0.6)
    ('supported', 'refuted', 'inconclusive')
    """
    return "supported" if lo > level else "refuted" if hi < level else "inconclusive"


def binomial_p(k: int, n: int, p: float, alternative: str = "two-sided") -> float:
    """The exact binomial test's p-value of k hits in n trials against the hit probability p
    (``scipy.stats.binomtest``; ``alternative`` "two-sided", "greater" or "less").

    >>> round(binomial_p(9, 10, 0.5, "greater"), 4)
    0.0107
    """
    from scipy.stats import binomtest

    return float(binomtest(int(k), int(n), float(p), alternative=alternative).pvalue)


def z_of(level: float) -> float:
    """The standard normal quantile of a two-sided ``level`` interval (1.96 for 0.95;
    ``scipy.stats.norm``): a Bonferroni interval over m comparisons uses ``level = 1 - alpha / m``.

    >>> round(z_of(0.95), 4), round(z_of(1 - 0.05 / 5), 4)
    (1.96, 2.5758)
    """
    from scipy.stats import norm

    if not 0 < level < 1:
        raise InvalidInput(f"z_of: level must lie in (0, 1), got {level}")
    return float(norm.ppf(1 - (1 - level) / 2))


def score_p(value: float, n: float, null: float = 0.5) -> float:
    """The two-sided p-value of the score test of a share ``value`` over ``n`` trials (or units)
    against ``null``: z = (value - null) / sqrt(null (1 - null) / n). The Wilson interval is this
    test inverted, so its 1 - alpha interval excludes ``null`` exactly when this p < alpha.

    >>> round(score_p(0.8, 40), 5), score_p(0.5, 10)
    (0.00015, 1.0)
    """
    from scipy.stats import norm

    if not (0 < null < 1) or n <= 0 or not (0 <= value <= 1):
        raise InvalidInput(f"score_p: need 0 <= value <= 1, n > 0, 0 < null < 1, got {value}, {n}, {null}")
    z = (value - null) / math.sqrt(null * (1 - null) / n)
    return float(min(1.0, 2 * norm.sf(abs(z))))


def cluster_share(k: Sequence[int], n: Sequence[int], alpha: float = 0.05) -> dict:
    """A share whose trials come in clusters (the draws of one teacher are repeated measures of it):
    one share per cluster, k[c] / n[c] (clusters with n[c] = 0 left out), their unweighted mean, and
    the two-sided 1 - ``alpha`` Student t interval of that mean with df = clusters - 1, clipped to
    [0, 1] (``method`` "cluster t, df = C - 1"). Where the cluster shares do not vary (decided
    exactly, as fractions) or there is one cluster, a t interval is a point and says nothing; the
    interval is then the Wilson interval of the clusters each counted as one trial (mean x C of C:
    the information C independent units hold; ``method`` "Wilson over C clusters"). A cluster
    bootstrap is not used: with a handful of clusters its percentile interval is far too narrow.

    Returns {"mean", "lo", "hi", "clusters", "df", "method", "pooled"} (pooled: sum k / sum n).

    >>> r = cluster_share([48, 48, 47, 45, 46], [48] * 5)
    >>> round(r["mean"], 4), r["df"], [round(x, 3) for x in (r["lo"], r["hi"])], r["method"]
    (0.975, 4, [0.941, 1.0], 'cluster t, df = 4')
    >>> r = cluster_share([8, 8, 8], [8, 8, 8])
    >>> r["method"], round(r["lo"], 3)
    ('Wilson over 3 clusters', 0.439)
    """
    from fractions import Fraction

    from scipy import stats

    kk, nn = [int(x) for x in k], [int(x) for x in n]
    if len(kk) != len(nn):
        raise InvalidInput(f"cluster_share: k and n must have equal lengths, got {len(kk)} and {len(nn)}")
    if any(x < 0 for x in kk + nn) or any(a > b for a, b in zip(kk, nn)):
        raise InvalidInput("cluster_share: need 0 <= k <= n in every cluster")
    if not 0 < alpha < 1:
        raise InvalidInput(f"cluster_share: alpha must lie in (0, 1), got {alpha}")
    shares = [Fraction(a, b) for a, b in zip(kk, nn) if b > 0]
    C = len(shares)
    pooled = sum(kk) / sum(nn) if sum(nn) else math.nan
    if C == 0:
        return {"mean": math.nan, "lo": math.nan, "hi": math.nan, "clusters": 0, "df": 0,
                "method": "no clusters", "pooled": pooled}
    mean = sum(shares) / C
    if C < 2 or len(set(shares)) == 1:                   # no spread: one trial per cluster
        lo, hi = wilson(float(mean) * C, C, z_of(1 - alpha))
        return {"mean": float(mean), "lo": lo, "hi": hi, "clusters": C, "df": C - 1,
                "method": f"Wilson over {C} clusters", "pooled": pooled}
    sd = math.sqrt(float(sum((s - mean) ** 2 for s in shares) / (C - 1)))
    half = float(stats.t.ppf(1 - alpha / 2, C - 1)) * sd / math.sqrt(C)
    return {"mean": float(mean), "lo": max(0.0, float(mean) - half), "hi": min(1.0, float(mean) + half),
            "clusters": C, "df": C - 1, "method": f"cluster t, df = {C - 1}", "pooled": pooled}
