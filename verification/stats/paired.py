"""Paired comparisons over seed pairs and units: t intervals with df = pairs - 1, the exact sign
test, Holm's adjustment, TOST equivalence, minimum detectable effects and the pairs a test needs, the
pairwise comparison of methods over independent units, agreement with a prediction."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from theory.errors import InvalidInput
from theory.verdicts import ALPHA
from verification.stats.shares import wilson

# -- paired comparisons over seed pairs: t intervals, Holm, TOST, minimum detectable effects ---------
#
# Every quantile and tail probability below comes from scipy.stats (Student's t, the noncentral t);
# a statistic of n paired differences has n - 1 degrees of freedom, and n < 2 decides nothing.

POWER = 0.8


def _finite(values: Any) -> list[float]:
    vals = [float(v) for v in values]
    if not all(math.isfinite(v) for v in vals):
        raise InvalidInput(f"paired statistics: values must be finite, got {vals}")
    return vals


SD_FLOOR = 1e-9
"""Relative spread floor: differences whose sd (computed exactly, on the rationals of the stored
floats) is at most ``SD_FLOOR`` times their scale (max(1, max |d|)) show *no variation*: identical
per-seed values, or values equal up to rounding. A t test on them is not applicable (its p-value would
be a rounding artefact: sd ~ 1e-18 gives p ~ 1e-32); :func:`paired_t` says so (``no_variation``)
and decides nothing."""


def exact_sd(values: Sequence[float]) -> float:
    """The sample sd (ddof 1) of ``values``; near a tie (a float sd below 1e-6 of their scale)
    computed on their exact rationals (``fractions.Fraction`` of each float), rounded once at the
    end: identical values give exactly 0, never a rounding residue.

    >>> exact_sd([0.1 + 0.2] * 3), exact_sd([3.21, 3.21, 3.21])
    (0.0, 0.0)
    """
    from fractions import Fraction

    v = [float(x) for x in values]
    n = len(v)
    if n < 2:
        return math.nan
    m = sum(v) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    if sd > 1e-6 * max([1.0] + [abs(x) for x in v]):     # far above rounding: the float sd is exact enough
        return sd
    q = [Fraction(x) for x in v]                          # near a tie: decide it on the rationals
    mean = sum(q) / n
    return math.sqrt(sum((x - mean) ** 2 for x in q) / (n - 1))


def no_variation(values: Sequence[float]) -> bool:
    """True when ``values`` (two or more) vary by no more than :data:`SD_FLOOR` of their scale."""
    d = _finite(values)
    return len(d) >= 2 and exact_sd(d) <= SD_FLOOR * max([1.0] + [abs(v) for v in d])


def paired_t(diffs: Sequence[float], alpha: float = ALPHA, threshold: float = 0.0) -> dict:
    """Student's t on paired differences d_1..d_n against ``threshold``: mean, sd (exact,
    :func:`exact_sd`), df = n - 1, the two-sided 1 - alpha interval of the mean, and the one-sided
    p-values of mean > threshold (``p_greater``) and mean < threshold (``p_less``). With n < 2 (no
    degrees of freedom) the interval is unbounded and every p-value is 1. Differences with *no
    variation* (:func:`no_variation`: identical, or equal up to rounding) are no evidence either way:
    ``no_variation`` is True, ``applicable`` False and every p-value 1 (the test is not applicable).

    >>> r = paired_t([0.1, 0.2, 0.15])
    >>> r["df"], round(r["interval"][0], 4), round(r["interval"][1], 4)
    (2, 0.0258, 0.2742)
    >>> r = paired_t([0.005, 0.005, 0.005])
    >>> r["applicable"], r["p_two"], r["p_greater"]
    (False, 1.0, 1.0)
    """
    from scipy import stats

    d = _finite(diffs)
    n = len(d)
    mean = sum(d) / n if n else math.nan
    base = dict(n=n, df=max(n - 1, 0), mean=mean, alpha=alpha, threshold=threshold, no_variation=False,
                applicable=n >= 2)
    if n < 2:
        return dict(base, sd=math.nan, se=math.nan, q=math.inf, interval=(-math.inf, math.inf), p_greater=1.0,
                    p_less=1.0, p_two=1.0)
    sd = exact_sd(d)
    se = sd / math.sqrt(n)
    q = float(stats.t.ppf(1 - alpha / 2, n - 1))
    if sd <= SD_FLOOR * max([1.0] + [abs(v) for v in d]):    # no variation (:func:`no_variation`): nothing decided
        return dict(base, no_variation=True, applicable=False, sd=sd, se=se, q=q, interval=(mean - q * se, mean + q * se),
                    p_greater=1.0, p_less=1.0, p_two=1.0)
    t = (mean - threshold) / se
    p_greater, p_less = float(stats.t.sf(t, n - 1)), float(stats.t.cdf(t, n - 1))
    return dict(base, sd=sd, se=se, q=q, t=t, interval=(mean - q * se, mean + q * se), p_greater=p_greater,
                p_less=p_less, p_two=min(1.0, 2 * min(p_greater, p_less)))


def sign_test(diffs: Sequence[float]) -> dict:
    """Exact two-sided sign test of paired differences: the number of positive against negative
    differences under Binomial(positive + negative, 1/2) (``scipy.stats.binomtest``), ties dropped.
    For one binary outcome per unit (hit / miss of two methods on the same draw) it is McNemar's
    exact test on the discordant pairs. It needs no spread: identical differences are just many
    signs, so rounding-level or zero spreads cannot make a p-value vanish (nor can ties decide).

    >>> r = sign_test([1, 1, 1, 1, 1, 1, 0, -1])
    >>> r["positive"], r["negative"], r["ties"], round(r["p_two"], 4)
    (6, 1, 1, 0.125)
    """
    from scipy import stats

    d = _finite(diffs)
    pos, neg = sum(v > 0 for v in d), sum(v < 0 for v in d)
    n = pos + neg
    p = float(stats.binomtest(pos, n, 0.5).pvalue) if n else 1.0
    return dict(n=len(d), positive=pos, negative=neg, ties=len(d) - n, p_two=min(1.0, p),
                mean=sum(d) / len(d) if d else math.nan)


def pairwise(units: dict, names: Sequence[str], test: str = "sign", alpha: float = ALPHA) -> dict:
    """Every pair of methods compared over independent units, Holm across every pair.

    ``units``: {unit: {method: [hit (bool) or None per measurement of that unit]}}: the measurements
    of one unit are repeated measures (settings of one teacher, noise levels of one data draw), so
    each unit contributes one number per method, its share of hits (Nones left out), and a pair is
    tested on the units' differences of shares: ``test`` "sign" (:func:`sign_test`, exact) or "t"
    (:func:`paired_t`, df = units - 1). Returns {method: (worse than, better than, {other: Holm p})},
    a method "better" than another when the adjusted p < alpha and its mean difference is positive."""
    if test not in ("sign", "t"):
        raise InvalidInput(f"pairwise: test must be 'sign' or 't', got {test!r}")
    rate = {u: {e: [bool(h) for h in hs.get(e, []) if h is not None] for e in names} for u, hs in units.items()}
    pairs, pvals, signs = [], [], []
    for i, e in enumerate(names):
        for o in names[i + 1:]:
            diffs = [sum(r[e]) / len(r[e]) - sum(r[o]) / len(r[o]) for r in rate.values() if r[e] and r[o]]
            res = (sign_test(diffs) if test == "sign" else paired_t(diffs, alpha)) if diffs else \
                {"p_two": 1.0, "mean": 0.0}
            pairs.append((e, o))
            pvals.append(res["p_two"])
            signs.append(res["mean"])
    out: dict = {e: ([], [], {}) for e in names}
    for (e, o), p, m in zip(pairs, holm(pvals), signs):
        out[e][2][o] = out[o][2][e] = p
        if p < alpha and m != 0:
            better, worse = (e, o) if m > 0 else (o, e)
            out[better][1].append(worse)
            out[worse][0].append(better)
    return out


def best_outcome(worse: Sequence[str], better: Sequence[str], methods: int) -> str:
    """The outcome of "this method is the best one" from :func:`pairwise`: refuted when some other
    method is significantly better, supported when it is significantly better than every other,
    inconclusive otherwise."""
    return "refuted" if worse else "supported" if len(better) == methods - 1 else "inconclusive"


def unit_share(shares: Sequence[float]) -> dict:
    """A share pooled over repeated measures: the mean of one share per independent unit, with the
    Wilson interval of that mean at n = units (the effective sample size when the measurements of a
    unit are perfectly correlated; conservative when they are less so). Never of zero width: units
    that all agree are not evidence of an exact share.

    >>> r = unit_share([1.0] * 30)
    >>> r["mean"], r["units"], round(r["interval"][0], 3)
    (1.0, 30, 0.886)
    """
    d = _finite(shares)
    if any(not (0 <= v <= 1) for v in d):
        raise InvalidInput(f"unit_share: shares must lie in [0, 1], got {d}")
    n = len(d)
    mean = sum(d) / n if n else math.nan
    return {"mean": mean, "interval": wilson(sum(d), n) if n else (math.nan, math.nan), "units": n}


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error rate), in the input order:
    p_(i) sorted ascending, adjusted max_{j <= i} min(1, (m - j + 1) p_(j)).

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    p = [float(v) for v in pvalues]
    if any(not (0 <= v <= 1) for v in p):
        raise InvalidInput(f"holm: p-values must lie in [0, 1], got {p}")
    m = len(p)
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: p[k])):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = round(running, 15)
    return out


def tost(diffs: Sequence[float], margin: float, alpha: float = ALPHA) -> dict:
    """Two one-sided t tests of equivalence, |mean| < ``margin``: H0 mean <= -margin against
    mean > -margin and H0 mean >= margin against mean < margin, each with df = n - 1; ``p`` is the
    larger of the two (equivalence at level alpha when p < alpha), ``interval`` the 1 - 2 alpha t
    interval (inside (-margin, margin) exactly when p < alpha). ``p_outside`` tests the opposite
    (|mean| > margin: the smaller one-sided p times two).

    >>> r = tost([0.001, -0.002, 0.0015, 0.0], margin=0.02)
    >>> r["p"] < 0.05
    True
    """
    if not (margin > 0):
        raise InvalidInput(f"tost: the equivalence margin must be positive, got {margin!r}")
    lower, upper = paired_t(diffs, 2 * alpha, -margin), paired_t(diffs, 2 * alpha, margin)
    p = max(lower["p_greater"], upper["p_less"])
    p_out = min(1.0, 2 * min(upper["p_greater"], lower["p_less"]))
    return dict(n=lower["n"], df=lower["df"], mean=lower["mean"], sd=lower["sd"], se=lower["se"], margin=margin,
                p=p, p_lower=lower["p_greater"], p_upper=upper["p_less"], p_outside=p_out,
                interval=lower["interval"], alpha=alpha, no_variation=lower["no_variation"],
                applicable=lower["applicable"])


def mde(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """Minimum detectable effect of the two-sided one-sample (paired) t test: the smallest |mean|
    that reaches significance at level ``alpha`` with probability ``power``, for n pairs whose
    differences have standard deviation ``sd`` (noncentral t, df = n - 1). inf for n < 2, nan for an
    unknown sd.

    >>> round(mde(1.0, 10), 3)
    0.996
    """
    from scipy import optimize, stats

    if n < 2:
        return math.inf
    if not math.isfinite(sd):
        return math.nan
    if sd == 0:
        return 0.0
    df, q = n - 1, float(stats.t.ppf(1 - alpha / 2, n - 1))

    def short(delta: float) -> float:
        nc = delta * math.sqrt(n) / sd
        lower = float(stats.nct.cdf(-q, df, nc))     # negligible for nc > 0; scipy gives nan far out
        return float(stats.nct.sf(q, df, nc)) + (lower if math.isfinite(lower) else 0.0) - power

    hi = sd
    while short(hi) < 0:
        hi *= 2
    return float(optimize.brentq(short, 0.0, hi, xtol=1e-12 * hi))


def pairs_needed(effect: float, sd: float, alpha: float = ALPHA, power: float = POWER,
                 equivalence: bool = False, limit: int = 100_000) -> Optional[int]:
    """The smallest number of pairs n >= 2 whose test detects ``effect`` with probability ``power``:
    the two-sided paired t test at level ``alpha`` (:func:`mde` at n is at most |effect|), or, with
    ``equivalence``, TOST with margin ``effect`` when the true difference is 0 (:func:`tost_mde`).
    None where no n up to ``limit`` does (an effect of 0, or an unknown spread).

    >>> pairs_needed(1.0, 1.0), pairs_needed(0.0, 1.0), pairs_needed(0.5, 1.0, equivalence=True)
    (10, None, 36)
    """
    if not (math.isfinite(effect) and math.isfinite(sd)) or effect == 0:
        return None
    if sd == 0:
        return 2
    need = (lambda n: tost_mde(sd, n, alpha, power)) if equivalence else (lambda n: mde(sd, n, alpha, power))
    if need(limit) > abs(effect):
        return None
    lo, hi = 2, limit                   # the detectable effect falls as n grows: bisect for the first n
    while lo < hi:
        mid = (lo + hi) // 2
        if need(mid) <= abs(effect):
            hi = mid
        else:
            lo = mid + 1
    return lo


def tost_mde(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest equivalence margin that TOST passes with probability about ``power`` when the true
    difference is 0: se (t_{1-alpha} + t_{(1+power)/2}), t quantiles with df = n - 1 (the standard
    approximation that treats the standard error as known). inf for n < 2.

    >>> round(tost_mde(1.0, 10), 3)
    1.017
    """
    from scipy import stats

    if n < 2:
        return math.inf
    if not math.isfinite(sd):
        return math.nan
    df = n - 1
    return sd / math.sqrt(n) * float(stats.t.ppf(1 - alpha, df) + stats.t.ppf((1 + power) / 2, df))


# -- agreement with a prediction: an equivalence question -------------------------------------------


def agreement(values: Sequence[float], predicted: float, margin: float, alpha: float = ALPHA) -> dict:
    """Do independent estimates ``values`` (one per unit: chain group, chain, seed) agree with
    ``predicted`` within ``margin``? Agreement is an equivalence claim, decided by TOST on the
    differences values - predicted (:func:`tost`, t quantiles with df = units - 1): ``outcome``
    "supported" when equivalence is shown at ``alpha`` (the 1 - 2 alpha interval of the mean lies
    inside predicted +- margin), "refuted" when |mean - predicted| > margin is shown (``p_outside``
    < alpha), else "inconclusive" (a failure to reject is never support). ``estimate``: the mean;
    ``interval``: its 1 - 2 alpha t interval; ``mde``: the smallest margin this design shows with
    probability :data:`POWER` when the true difference is 0 (:func:`tost_mde`).

    >>> agreement([1.00, 1.01, 0.99, 1.00, 1.02, 0.98], 1.0, margin=0.05)["outcome"]
    'supported'
    >>> agreement([1.20, 1.21, 1.19, 1.20], 1.0, margin=0.05)["outcome"]
    'refuted'
    >>> agreement([0.9, 1.1, 1.0], 1.0, margin=0.05)["outcome"]         # a failure to reject
    'inconclusive'
    """
    if not math.isfinite(predicted):
        raise InvalidInput(f"agreement: the prediction must be finite, got {predicted!r}")
    e = tost([v - predicted for v in values], margin, alpha)
    outcome = "supported" if e["p"] < alpha else "refuted" if e["p_outside"] < alpha else "inconclusive"
    lo, hi = e["interval"]
    return dict(e, outcome=outcome, predicted=predicted, estimate=predicted + e["mean"],
                interval=(predicted + lo, predicted + hi), mde=tost_mde(e["sd"], e["n"], alpha))


def at_most(values: Sequence[float], limit: float, alpha: float = ALPHA) -> dict:
    """Is the mean of independent estimates ``values`` at most ``limit``? One-sided t tests with
    df = units - 1: ``outcome`` "supported" when mean < limit is shown at ``alpha``, "refuted" when
    mean > limit is shown, else "inconclusive" (never support from a failure to reject);
    ``interval``: the 1 - 2 alpha t interval of the mean (its upper end lies below ``limit`` exactly
    when support is shown); ``mde``: the distance from ``limit`` the one-sided test detects with
    probability :data:`POWER` (:func:`mde` at level 2 alpha).

    >>> at_most([0.1, 0.12, 0.09, 0.11], 0.2)["outcome"], at_most([0.3, 0.32, 0.29, 0.31], 0.2)["outcome"]
    ('supported', 'refuted')
    >>> at_most([0.1, 0.3, 0.2], 0.2)["outcome"]
    'inconclusive'
    """
    if not math.isfinite(limit):
        raise InvalidInput(f"at_most: the limit must be finite, got {limit!r}")
    t = paired_t(values, 2 * alpha, limit)
    outcome = "supported" if t["p_less"] < alpha else "refuted" if t["p_greater"] < alpha else "inconclusive"
    return dict(t, outcome=outcome, limit=limit, estimate=t["mean"], mde=mde(t["sd"], t["n"], 2 * alpha))


def agreement_normal(diff: float, se: float, margin: float, alpha: float = ALPHA) -> dict:
    """Agreement of two large-sample estimates (shares of thousands of draws): is |diff| < margin,
    ``diff`` their difference with standard error ``se``? TOST with normal quantiles (the large-sample
    limit of :func:`agreement`): "supported" when equivalence is shown at ``alpha`` (the 1 - 2 alpha
    interval inside (-margin, margin)), "refuted" when |diff| > margin is shown, else "inconclusive";
    ``mde``: the smallest margin shown with probability :data:`POWER` at a true difference of 0.

    >>> agreement_normal(0.001, 0.004, 0.02)["outcome"], agreement_normal(0.05, 0.004, 0.02)["outcome"]
    ('supported', 'refuted')
    >>> agreement_normal(0.01, 0.02, 0.02)["outcome"]
    'inconclusive'
    """
    from scipy import stats

    if not (margin > 0) or not (se >= 0) or not math.isfinite(diff):
        raise InvalidInput(f"agreement_normal: want a finite difference, se >= 0 and margin > 0, got "
                           f"{diff!r}, {se!r}, {margin!r}")
    if se == 0:
        p, p_out = (0.0 if abs(diff) < margin else 1.0), (0.0 if abs(diff) > margin else 1.0)
    else:
        p = max(float(stats.norm.sf((diff + margin) / se)), float(stats.norm.cdf((diff - margin) / se)))
        p_out = min(1.0, 2 * min(float(stats.norm.sf((diff - margin) / se)), float(stats.norm.cdf((diff + margin) / se))))
    q = float(stats.norm.ppf(1 - alpha))
    outcome = "supported" if p < alpha else "refuted" if p_out < alpha else "inconclusive"
    return dict(diff=diff, se=se, margin=margin, alpha=alpha, p=p, p_outside=p_out, outcome=outcome,
                interval=(diff - q * se, diff + q * se), mde=se * (q + float(stats.norm.ppf((1 + POWER) / 2))))
