"""The seed-level tests of the modalities family and the words they allow: each model's trained
share (a :class:`verification.modalities.findings.seeds.Summary`, the seed its unit) against the
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
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from verification.findings import Decision
from verification.stats import ALPHA, SD_FLOOR, mde, paired_t, pairs_needed, t_spread


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
        ends = [(sh.lo, sh.hi) for sh in s.random.values() if sh.n]
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
    ends = [(sh.value, (sh.lo, sh.hi)) for sh in s.random.values() if sh.n]
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


@dataclass(frozen=True)
class Comparison:
    """One comparison of a summary at the run's simultaneous level: its :class:`Decision` (the
    outcome of the claim "the trained share differs from the reference": supported where the
    interval of the difference excludes 0, refuted where "inside the random range" is shown by TOST,
    inconclusive where neither, not-testable where nothing was measured or the seeds do not vary;
    ``statistic`` the difference, ``interval`` its interval at ``level``, ``p`` the raw p-value),
    the Bonferroni ``adjusted`` p, the seed-level ``df`` (nan: no variation across seeds), the
    reference's interval (TOST: the equivalence region), the minimum detectable effect and the seeds
    an :data:`EFFECT` would need (None: beyond 200 or no variation)."""

    name: str
    decision: Decision
    adjusted: float = 1.0
    df: float = 0.0
    reference: Optional[tuple[float, float]] = None
    mde: float = math.nan
    needed: Optional[int] = None

    @property
    def difference(self) -> float:
        d = self.decision.statistic
        return math.nan if d is None else d

    @property
    def interval(self) -> Optional[tuple[float, float]]:
        return self.decision.interval

    @property
    def word(self) -> str:
        """What the decision allows the prose to say: a difference word (:func:`_word`), "inside",
        "not separable from" / "shows no detectable trend", or why nothing was tested."""
        d, depth = self.decision, self.name == "depth"
        if d.reason == NOT_MEASURED:
            return NOT_MEASURED
        if d.reason == NO_VARIATION:
            return "shows no variation to test" if depth else "not testable (no variation across seeds) against"
        if d.outcome == "supported":
            return _word(self.name, *d.interval)
        if d.outcome == "refuted":
            return "inside"
        return "shows no detectable trend" if depth else "not separable from"


NOT_MEASURED = "not measured"
NO_VARIATION = "no variation across seeds"
METHODS = {"random": "one-sided t over seeds against the reference's 95% interval, doubled (Bonferroni)",
           "text": "one-sided t over seeds against the reference's 95% interval, doubled (Bonferroni)",
           "asis": "one-sided t over seeds against the reference's 95% interval, doubled (Bonferroni)",
           "random-equivalence": "TOST over seeds at the margin (Bonferroni)",
           "init": "paired t over seeds (Bonferroni)", "depth": "paired t over seeds (Bonferroni)"}


def decide(summaries: Sequence[Any], spread: Any = None) -> list:
    """The summaries with every comparison tested at the seed level (df = seeds - 1) on one footing:
    the family is every comparison of the run (:data:`COMPARISONS` per summary, fixed by the plan, m
    of them), and each decision and its interval are the same t interval over seeds, simultaneous at
    1 - alpha/m (Bonferroni, :func:`level`). The seed-level spreads (trained, init, change, depth) are
    re-made at that level by ``spread`` (default :func:`verification.stats.t_spread`). Each
    :class:`Comparison` holds the difference with its interval: against a fixed reference the signed
    distance (:func:`distance`) of the trained interval from the reference's 95% interval, against
    initialisation and with depth the paired mean's interval; supported (a difference word) exactly
    where that interval excludes 0; "inside" the random range only where no difference is shown and
    the same interval lies within the range widened by :data:`MARGIN` (TOST, each one-sided test at
    alpha/(2m)); otherwise inconclusive, with the minimum detectable effect (power :data:`POWER`,
    two-sided at alpha/m). The Bonferroni p (m p, capped at 1; TOST: 2 m p) is below alpha exactly
    when the interval decides."""
    if spread is None:
        spread = t_spread
    m = len(COMPARISONS) * len(summaries)
    a = ALPHA / max(m, 1)
    lv = level(m)
    out = []
    for s in summaries:
        tr, it, ch = (spread(x.values, a) for x in (s.trained, s.init, s.change))
        dp = spread(s.depth.values, a) if s.depth is not None else None
        s = replace(s, trained=tr, init=it, change=ch, depth=dp, level=lv, comparisons=m)
        raw: dict = {}          # name -> (p, df, difference, interval, adjusted, reference)
        for name in ("random", "text", "asis"):
            ref = reference_interval(s, name)
            if ref is not None:
                r = against_reference(tr.values, ref)
                raw[name] = (r["p"], r["df"], distance(tr.mean, ref), (distance(tr.lo, ref), distance(tr.hi, ref)),
                             min(1.0, m * r["p"]), ref)
        if s.random_range:
            r = equivalence_to_range(tr.values, s)
            raw["random-equivalence"] = (r["p"], r["df"], r["d"], (tr.lo, tr.hi), min(1.0, 2 * m * r["p"]),
                                         r["bounds"])
        for name, sp in (("init", s.change), ("depth", s.depth)):
            if sp is not None and sp.values:
                r = paired_t(sp.values, a)
                raw[name] = (r["p_two"], r["df"] if r["applicable"] else math.nan, r["mean"], (sp.lo, sp.hi),
                             min(1.0, m * r["p_two"]), None)
        k = len(tr.values)
        compared = {}
        for name in COMPARISONS:         # the family is the plan's: a comparison without data counts, p = 1
            p, df, d, iv, adj, ref = raw.get(name, (1.0, 0.0, math.nan, None, 1.0, None))
            power: dict = {}
            if name != "random-equivalence":
                sd = (s.change.sd if name == "init" else s.depth.sd if name == "depth" and s.depth else tr.sd)
                ok = k >= 2 and math.isfinite(sd) and sd > SD_FLOOR     # no variation: no power to speak of
                power = dict(mde=mde(sd, k, a, POWER) if ok else math.nan,
                             needed=seeds_needed(sd, EFFECT, a, POWER) if ok else None)
            said, reason = outcome(name, d, df, iv, raw, tr)
            compared[name] = Comparison(name, Decision(said, d, iv, lv, METHODS[name], reason, p), adj, df, ref, **power)
        out.append(replace(s, compared=compared))
    return out


def outcome(name: str, d: float, df: float, iv: Optional[tuple[float, float]], raw: dict, tr: Any) -> tuple:
    """(outcome, reason) of comparison ``name`` (see :class:`Comparison`); ``raw`` holds the
    random-equivalence region, ``tr`` the trained spread at the run's level."""
    if not math.isfinite(d):
        return "not-testable", NOT_MEASURED
    if isinstance(df, float) and math.isnan(df):     # no variation across seeds: never decided
        return "not-testable", NO_VARIATION
    if name == "random-equivalence":
        low, high = raw[name][5]
        return ("supported", "") if low < tr.lo and tr.hi < high else ("inconclusive", "not shown")
    lo, hi = iv
    if lo > 0 or hi < 0:
        return "supported", ""
    if name == "random":
        low, high = raw["random-equivalence"][5]
        if low < tr.lo and tr.hi < high:
            return "refuted", ""
    return "inconclusive", "no detectable trend" if name == "depth" else "not separable"
