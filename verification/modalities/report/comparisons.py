"""The seed-level tests of the modalities family and the words they allow: each model's trained
share (a :class:`verification.modalities.report.seeds.Summary`, the seed its unit) against the
fixed references measured with error (the random range, MiniLM at n or as-is), its initialisation
and its own depth.

Every comparison is made at the seed level (the seed is the unit; df = seeds - 1), never by mixing
seed-level and input-level variance, and every decision and the interval printed beside it are one
and the same t interval over seeds, simultaneous at 1 - alpha/m over the m comparisons of the run
(Bonferroni; :data:`COMPARISONS` per summary, fixed by the plan): against a fixed reference the
distance of the trained interval from the reference's 95% interval (the one-sided t against the
reference's nearer end, doubled, is its p-value), against initialisation and with depth the paired
mean's interval. A difference word (``above`` / ``below``, ``higher than`` / ``lower than``,
``rises`` / ``falls``) is written exactly where that interval excludes 0 (:func:`decide`).
"Inside the random range" is an equivalence claim, written only where the same interval lies within
the range widened by the margin :data:`MARGIN` (TOST, each one-sided test at alpha/(2m)). Each "not
separable" carries its minimum detectable effect at the same level, and :func:`seeds_needed` the
seeds a 0.10 effect would need (the power calculation behind the preset's number of seeds).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from verification.stats import t_spread
from verification.stats import ALPHA, SD_FLOOR, mde, paired_t, pairs_needed, wilson


COMPARISONS = ("random", "random-equivalence", "init", "text", "asis", "depth")
"""Every comparison of one summary, by plan: the family of a run (the m of its Bonferroni level) is six
per (model, token set), whatever else the store holds (a comparison whose data are absent is in it with
p = 1, "not measured")."""

MARGIN = 0.05
"""Equivalence margin (share units) of "inside the random range": the trained seed mean lies within
the range widened by MARGIN on each side, by two one-sided t tests over seeds (TOST)."""

EFFECT = 0.10
"""The effect of interest of the power calculation (share units): a trained model's share 0.10 above
or below a reference (the random range, MiniLM at the same n) or its own initialisation."""

POWER = 0.8


def reference_interval(s: Any, name: str) -> Optional[tuple[float, float]]:
    """A fixed reference's 95% interval: the random range with each end widened by its family's
    Wilson interval (binomial: independent draws); MiniLM (at n, as-is) its t interval over inputs.
    None when the reference was not measured."""
    if name == "random":
        if not s.random_range:
            return None
        ends = [wilson(k, m) for k, m in s.random.values() if m]
        return min(lo for lo, _ in ends), max(hi for _, hi in ends)
    x = s.text if name == "text" else s.asis
    if x is None or not x.values:
        return None
    return (x.lo, x.hi) if x.df else (-math.inf, math.inf)


def against_reference(values: Sequence[float], ref: tuple[float, float]) -> dict:
    """Seed-level test of a model against a fixed reference measured with error: one-sided t over
    the seeds (df = seeds - 1) against the nearer end of the reference's 95% interval, doubled (two
    sided); a seed mean inside the interval is not separable from it (p = 1). No mixing of the
    reference's input-level variance into the seeds' (the reference is one model, its uncertainty its
    interval); no variation across seeds decides nothing (:func:`verification.stats.paired_t`)."""
    lo, hi = ref
    up, down = paired_t(values, ALPHA, hi), paired_t(values, ALPHA, lo)
    mean = up["mean"]
    end = hi if mean > hi else lo if mean < lo else None
    p = 1.0 if end is None or not up["applicable"] else \
        min(1.0, 2 * (up["p_greater"] if end == hi else down["p_less"]))
    return dict(p=p, df=up["df"] if up["applicable"] else math.nan, sd=up["sd"],
                d=(mean - end) if end is not None else 0.0, applicable=up["applicable"])


def equivalence_to_range(values: Sequence[float], s: Any) -> dict:
    """TOST of "inside the random range": H0 mean <= L or mean >= U, with L the lowest family's upper
    Wilson bound minus :data:`MARGIN` and U the highest family's lower Wilson bound plus MARGIN (the
    range the reference surely spans, widened by the margin); p = the larger one-sided p (df = seeds
    - 1). An empty region (L >= U) or no variation across seeds: p = 1."""
    ends = [(k / m, wilson(k, m)) for k, m in s.random.values() if m]
    low = min(ends)[1][1] - MARGIN
    high = max(ends)[1][0] + MARGIN
    a, b = paired_t(values, 2 * ALPHA, low), paired_t(values, 2 * ALPHA, high)
    p = 1.0 if low >= high or not a["applicable"] else max(a["p_greater"], b["p_less"])
    return dict(p=p, df=a["df"] if a["applicable"] else math.nan, sd=a["sd"], bounds=(low, high),
                d=a["mean"] - (low + high) / 2, applicable=a["applicable"])


def seeds_needed(sd: float, effect: float = EFFECT, alpha: float = ALPHA, power: float = POWER,
                 cap: int = 200) -> Optional[int]:
    """The fewest seeds (at least 2) whose two-sided t test at level ``alpha`` detects ``effect`` with
    probability ``power`` given the seed-level ``sd`` (:func:`verification.stats.pairs_needed`);
    None beyond ``cap`` or for an unknown sd; 2 for sd 0.

    >>> seeds_needed(0.1, effect=0.1, alpha=0.05)     # an effect of one sd: ten pairs
    10
    """
    return pairs_needed(effect, sd, alpha, power, limit=cap)


def level(m: int) -> float:
    """The simultaneous level of every seed-level interval and decision of a run of ``m`` comparisons:
    1 - alpha / m (Bonferroni).

    >>> round(level(48), 6)
    0.998958
    """
    return 1 - ALPHA / max(m, 1)


def distance(x: float, ref: tuple[float, float]) -> float:
    """The signed distance of ``x`` from the interval ``ref``: positive above its upper end, negative
    below its lower end, 0 inside (monotone in ``x``: the image of an interval of ``x`` is an interval).

    >>> distance(0.5, (0.1, 0.3)), distance(0.0, (0.1, 0.3)), distance(0.2, (0.1, 0.3))
    (0.2, -0.1, 0.0)
    """
    lo, hi = ref
    return x - hi if x > hi else x - lo if x < lo else 0.0


def _word(name: str, lo: float, hi: float) -> Optional[str]:
    """The difference word of comparison ``name`` allowed by the interval [lo, hi] of its difference:
    one exactly when the interval excludes 0; None otherwise."""
    up, down = {"random": ("above", "below"), "depth": ("rises", "falls")}.get(name, ("higher than", "lower than"))
    return up if lo > 0 else down if hi < 0 else None


def decide(summaries: Sequence[Any], spread: Any = None) -> None:
    """Test every comparison at the seed level (df = seeds - 1) on one footing: the family is every
    comparison of the run (:data:`COMPARISONS` per summary, fixed by the plan, m of them), and each
    decision and the interval printed beside it are the same t interval over seeds, simultaneous at
    1 - alpha/m (Bonferroni, :func:`level`). The seed-level spreads (trained, init, change, depth) are
    re-made at that level by ``spread`` (default :func:`verification.stats.t_spread`);
    ``intervals`` holds each comparison's difference with its interval: against a fixed reference the
    signed distance (:func:`distance`) of the trained interval from the reference's 95% interval,
    against initialisation and with depth the paired mean's interval. A difference word ("above",
    "higher than", "rises", ...) exactly where that interval excludes 0; "inside" the random range only
    where no difference is shown and the same interval lies within the range widened by :data:`MARGIN`
    (TOST, each one-sided test at alpha/(2m)); otherwise "not separable from" / "shows no detectable
    trend", with the minimum detectable effect (power :data:`POWER`, two-sided at alpha/m) beside it
    (``mdes``). ``tests`` keeps each raw p and its Bonferroni p (m p, capped at 1; TOST: 2 m p), which
    is below alpha exactly when the interval decides."""
    if spread is None:
        spread = t_spread
    m = len(COMPARISONS) * len(summaries)
    a = ALPHA / max(m, 1)
    for s in summaries:
        s.level, s.comparisons = level(m), m
        s.trained, s.init, s.change = (spread(x.values, a) for x in (s.trained, s.init, s.change))
        if s.depth is not None:
            s.depth = spread(s.depth.values, a)
        tr = s.trained
        for name in ("random", "text", "asis"):
            ref = reference_interval(s, name)
            if ref is not None:
                r = against_reference(tr.values, ref)
                d = distance(tr.mean, ref)
                s.tests[name] = (r["p"], r["df"], math.nan, d, min(1.0, m * r["p"]))
                s.refs[name] = ref
                s.intervals[name] = (distance(tr.lo, ref), distance(tr.hi, ref))
        if s.random_range:
            r = equivalence_to_range(tr.values, s)
            s.tests["random-equivalence"] = (r["p"], r["df"], math.nan, r["d"], min(1.0, 2 * m * r["p"]))
            s.refs["random-equivalence"] = r["bounds"]
            s.intervals["random-equivalence"] = (tr.lo, tr.hi)
        for name, sp in (("init", s.change), ("depth", s.depth)):
            if sp is not None and sp.values:
                r = paired_t(sp.values, a)
                s.tests[name] = (r["p_two"], r["df"] if r["applicable"] else math.nan, math.nan, r["mean"],
                                 min(1.0, m * r["p_two"]))
                s.intervals[name] = (sp.lo, sp.hi)
        for name in COMPARISONS:         # the family is the plan's: a comparison without data counts, p = 1
            s.tests.setdefault(name, (1.0, 0.0, math.inf, math.nan, 1.0))
        k = len(s.trained.values)
        for name in ("random", "text", "asis", "init", "depth"):
            sd = (s.change.sd if name == "init" else s.depth.sd if name == "depth" and s.depth else s.trained.sd)
            ok = k >= 2 and math.isfinite(sd) and sd > SD_FLOOR     # no variation: no power to speak of
            s.mdes[name] = mde(sd, k, a, POWER) if ok else math.nan
            s.needed[name] = seeds_needed(sd, EFFECT, a, POWER) if ok else None
        for name in COMPARISONS:
            if name == "random-equivalence":
                continue
            p, df, _, d, adj = s.tests[name]
            if not math.isfinite(d):
                s.words[name] = "not measured"
            elif isinstance(df, float) and math.isnan(df):     # no variation across seeds: never decided
                s.words[name] = "shows no variation to test" if name == "depth" else \
                    "not testable (no variation across seeds) against"
            else:
                said = _word(name, *s.intervals[name])
                if said is None and name == "random":
                    low, high = s.refs["random-equivalence"]
                    said = "inside" if low < tr.lo and tr.hi < high else None
                s.words[name] = said or ("shows no detectable trend" if name == "depth" else "not separable from")
