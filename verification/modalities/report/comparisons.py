"""The seed-level tests of the modalities family and the words they allow: each model's trained
share (a :class:`verification.modalities.report.seeds.Summary`, the seed its unit) against the
fixed references measured with error (the random range, MiniLM at n or as-is), its initialisation
and its own depth.

Every comparison is made at the seed level (the seed is the unit; df = seeds - 1), never by mixing
seed-level and input-level variance: against a fixed reference a one-sided t over seeds against the
nearer end of the reference's 95% interval, doubled; against initialisation and with depth a paired
t. "Inside the random range" is an equivalence claim, tested by TOST with the margin :data:`MARGIN`.
The p-values are Holm-adjusted over the run's family (:data:`COMPARISONS` per summary, fixed by the
plan) and the words of the prose (``above`` / ``below`` / ``inside`` / ``not separable from``)
follow from them (:func:`decide`); each "not separable" carries its minimum detectable effect, and
:func:`seeds_needed` the seeds a 0.10 effect would need (the power calculation behind the preset's
number of seeds).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from verification.report.stats import ALPHA, SD_FLOOR, holm, mde, paired_t, wilson


COMPARISONS = ("random", "random-equivalence", "init", "text", "asis", "depth")
"""Every comparison of one summary, by plan: the Holm family of a run is six per (model, token set),
whatever else the store holds (a comparison whose data are absent is in it with p = 1, "not measured")."""

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
    interval); no variation across seeds decides nothing (:func:`verification.report.stats.paired_t`)."""
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
    probability ``power`` given the seed-level ``sd`` (noncentral t: :func:`verification.report.stats.mde`);
    None beyond ``cap`` or for an unknown sd; 2 for sd 0.

    >>> seeds_needed(0.1, effect=0.1, alpha=0.05)     # an effect of one sd: ten pairs
    10
    """
    if not math.isfinite(sd):
        return None
    for k in range(2, cap + 1):
        if mde(sd, k, alpha, power) <= effect:
            return k
    return None


def decide(summaries: Sequence[Any]) -> None:
    """Test every comparison at the seed level (df = seeds - 1), adjust the p-values by Holm over all
    of them (the family fixed by the plan, :data:`COMPARISONS`), and write the words: a difference
    from a reference or from initialisation where its Holm-adjusted p < alpha; "inside" the random range
    only where its TOST (:func:`equivalence_to_range`) passes after Holm; otherwise "not separable
    from", with the minimum detectable effect (power :data:`POWER` at the family's Bonferroni level
    alpha / m, the Holm step a lone effect meets) beside it (``mdes``)."""
    tests = []
    for s in summaries:
        tr = s.trained.values
        for name in ("random", "text", "asis"):
            ref = reference_interval(s, name)
            if ref is not None:
                r = against_reference(tr, ref)
                s.tests[name] = (r["p"], r["df"], math.nan, r["d"])
                s.refs[name] = ref
        if s.random_range:
            r = equivalence_to_range(tr, s)
            s.tests["random-equivalence"] = (r["p"], r["df"], math.nan, r["d"])
            s.refs["random-equivalence"] = r["bounds"]
        for name, sp in (("init", s.change), ("depth", s.depth)):
            if sp is not None and sp.values:
                r = paired_t(sp.values, ALPHA)
                s.tests[name] = (r["p_two"], r["df"] if r["applicable"] else math.nan, math.nan, r["mean"])
        for name in COMPARISONS:         # the family is the plan's: a comparison without data counts, p = 1
            s.tests.setdefault(name, (1.0, 0.0, math.inf, math.nan))
        tests += [(s, name) for name in COMPARISONS]
    m = len(tests)
    adjusted = holm([s.tests[name][0] for s, name in tests]) if tests else []
    for (s, name), p in zip(tests, adjusted):
        s.tests[name] = s.tests[name] + (p,)
    for s in summaries:
        k = len(s.trained.values)
        for name in ("random", "text", "asis", "init", "depth"):
            sd = (s.change.sd if name == "init" else s.depth.sd if name == "depth" and s.depth else s.trained.sd)
            ok = k >= 2 and math.isfinite(sd) and sd > SD_FLOOR     # no variation: no power to speak of
            s.mdes[name] = mde(sd, k, ALPHA / max(m, 1), POWER) if ok else math.nan
            s.needed[name] = seeds_needed(sd, EFFECT, ALPHA / max(m, 1), POWER) if ok else None
        for name in COMPARISONS:
            if name == "random-equivalence":
                continue
            p, df, _, d, adj = s.tests[name]
            sig = adj < ALPHA
            if not math.isfinite(d):
                s.words[name] = "not measured"
            elif isinstance(df, float) and math.isnan(df):     # no variation across seeds: never decided
                s.words[name] = "shows no variation to test" if name == "depth" else \
                    "not testable (no variation across seeds) against"
            elif name == "random":
                eq = s.tests["random-equivalence"][4] < ALPHA
                s.words[name] = ("above" if d > 0 else "below") if sig else "inside" if eq else "not separable from"
            elif name == "depth":
                s.words[name] = ("rises" if d > 0 else "falls") if sig else "shows no detectable trend"
            else:
                s.words[name] = ("higher than" if d > 0 else "lower than") if sig else "not separable from"
