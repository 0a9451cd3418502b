"""Across seeds and beside baselines: each model's D1 equality share as a mean over training seeds,
next to random matrices and the text encoder at the same token count n.

The unit of a model's share is the *seed*: per seed, the share of its test inputs with D1 equality,
averaged over layers (one number per seed, at the last checkpoint and at initialisation); the mean
over k seeds has a t interval with k - 1 degrees of freedom (``scipy.stats.t``). Beside it, at the
same n (all tokens; content tokens):

- ``random``: the share of tight matrices of each random family (Wilson 95% per family; independent
  draws) and the range of the family shares (the "random-matrix range");
- ``init``: the same architecture with its initial weights on the same inputs (paired per seed:
  trained - init, df = k - 1);
- ``text``: MiniLM with its inputs cut to n tokens (the unit is the input: per input the share of
  layers with equality; t interval with df = inputs - 1).

Each comparison is a two-sided test (trained vs the random range: against the nearer end, the random
share's binomial variance added, Welch-Satterthwaite degrees of freedom; vs init: paired t; vs text:
Welch), and the words of the prose (``above`` / ``below`` / ``inside`` / ``not separable from``) come
from Holm-adjusted p-values over every comparison of the run (:func:`decide`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from verification.modalities.report.stages import VARIANTS, Stage
from verification.report.stats import SD_FLOOR, exact_sd, holm, wilson

ALPHA = 0.05


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


def welch(d: float, parts: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    """Two-sided p-value of a difference ``d`` of shares whose variance is the sum of ``parts``
    (variance, df) each, with Welch-Satterthwaite degrees of freedom: (p, df, half-width of the 95%
    interval). No variation on a side (its sd at or below :data:`verification.report.stats.SD_FLOOR`,
    the shares' scale being 1: identical per-seed shares, whose seed-level variance is then unknown)
    is no evidence: p = 1 and df nan (the test is not applicable; :func:`decide` says so), never p = 0
    nor a test that uses the other side's variance alone.

    >>> welch(0.3, [(0.0, 2)])
    (1.0, nan, nan)
    """
    from scipy import stats

    var = sum(v for v, _ in parts)
    if not math.isfinite(var) or any(df < 1 for v, df in parts if v > 0):
        return 1.0, 0.0, math.inf
    if any(math.sqrt(v) <= SD_FLOOR for v, _ in parts):     # a side with no variation: its variance unknown
        return 1.0, math.nan, math.nan
    df = var ** 2 / sum(v ** 2 / df for v, df in parts if v > 0)
    p = float(2 * stats.t.sf(abs(d) / math.sqrt(var), df))
    return p, df, float(stats.t.ppf(1 - ALPHA / 2, df)) * math.sqrt(var)


@dataclass
class Summary:
    """One model and token set across seeds, with its baselines at the same n."""

    model: str
    variant: str
    n: int
    seeds: list
    trained: Spread
    init: Spread
    change: Spread                      # paired per seed: trained - init
    accuracy: Spread
    random: dict                        # family -> (k tight, matrices)
    text: Optional[Spread] = None       # MiniLM at n: per input, the share of layers with equality
    text_inputs: int = 0
    depth: Optional[Spread] = None      # per seed: last layer's share - first layer's (trained)
    asis: Optional[Spread] = None       # MiniLM as measured by the trained main job (its own n)
    init_accuracy: Optional[Spread] = None
    tests: dict = field(default_factory=dict)     # comparison -> (p, df, half-width, difference)
    words: dict = field(default_factory=dict)     # comparison -> word (after Holm)

    @property
    def random_range(self) -> Optional[tuple[float, float]]:
        s = [k / m for k, m in self.random.values() if m]
        return (min(s), max(s)) if s else None


def per_seed(stages: Sequence[Stage]) -> dict:
    """``{model: {seed: (trained stage, init stage)}}`` (last checkpoint; epoch 0)."""
    out: dict = {}
    for s in stages:
        if s.epoch is None or s.seed is None:
            continue
        by = out.setdefault(s.model, {}).setdefault(s.seed, [None, None])
        if s.epoch == 0:
            by[1] = s
        if by[0] is None or s.epoch > by[0].epoch:
            by[0] = s
    return out


def read_baselines(records: Any) -> dict:
    """Stored baseline records -> ``{(family, n): (k tight, matrices)}``."""
    out: dict = {}
    for r in records:
        p = r["provenance"]
        key = (p["family"], int(p["n"]))
        k, m = out.get(key, (0, 0))
        out[key] = (k + (r["verdict"] == "tight"), m + 1)
    return out


def text_shares(records: Any) -> dict:
    """MiniLM records at matched n -> ``{(variant, n): [per input: share of layers with equality]}``
    (head-averaged attention; the D1 records only)."""
    by: dict = {}
    for r in records:
        p = r["provenance"]
        if r["theorem"] != "dobrushin.factor" or p.get("head") is not None:
            continue
        key = (p["variant"], int(p["n"]), p["input"], p.get("text_sha"))
        by.setdefault(key, []).append(r["verdict"] == "tight")
    out: dict = {}
    for (v, n, _, _), tight in sorted(by.items()):
        out.setdefault((v, n), []).append(sum(tight) / len(tight))
    return out


def summarise(stages: Sequence[Stage], baselines: dict, texts: dict, asis: Optional[dict] = None) -> list[Summary]:
    """One :class:`Summary` per (model, token set), then the words (:func:`decide`). ``texts``:
    MiniLM at matched n (:func:`text_shares`); ``asis``: ``{variant: per-input shares}`` of MiniLM
    as the trained main job measured it."""
    out = []
    for variant in VARIANTS:
        for model, by_seed in per_seed(stages).items():
            seeds = sorted(s for s, (t, i) in by_seed.items() if t is not None and i is not None)
            if not seeds:
                continue
            tr = [by_seed[s][0].mean_share(variant) for s in seeds]
            it = [by_seed[s][1].mean_share(variant) for s in seeds]
            if any(x is None for x in tr + it):
                continue
            n = by_seed[seeds[0]][0].sizes.get(variant)
            if n is None or any(by_seed[s][0].sizes.get(variant) != n for s in seeds):
                raise ValueError(f"{model}: the seeds' {variant} token counts differ; one n per model expected")
            rnd = {f: baselines[(f, n)] for f, nn in sorted({k for k in baselines}) if nn == n}
            tx = texts.get((variant, n))
            out.append(Summary(model, variant, n, seeds, t_spread(tr), t_spread(it),
                               t_spread([a - b for a, b in zip(tr, it)]),
                               t_spread([by_seed[s][0].accuracy for s in seeds]), rnd,
                               t_spread(tx) if tx else None, len(tx or []),
                               t_spread([depth_change(by_seed[s][0], variant) for s in seeds]),
                               t_spread((asis or {})[variant]) if (asis or {}).get(variant) else None,
                               t_spread([by_seed[s][1].accuracy for s in seeds])))
    decide(out)
    return out


def depth_change(s: Stage, variant: str) -> float:
    """The last layer's share minus the first layer's."""
    return s.share(variant, s.layers[-1]) - s.share(variant, s.layers[0])


COMPARISONS = ("random", "init", "text", "asis", "depth")
"""Every comparison of one summary, by plan: the Holm family of a run is five per (model, token set),
whatever else the store holds (a comparison whose data are absent is in it with p = 1, "not measured")."""


def decide(summaries: Sequence[Summary]) -> None:
    """Test every comparison, adjust the p-values by Holm over all of them (the family fixed by the
    plan, :data:`COMPARISONS`), and write the words."""
    tests = []
    for s in summaries:
        t = s.trained
        var_t = t.se ** 2 if t.df else math.inf
        rng = s.random_range
        if rng is not None:
            lo, hi = rng
            end = hi if t.mean > hi else lo if t.mean < lo else None
            if end is None:
                s.tests["random"] = (1.0, t.df, math.nan, 0.0)
            else:
                k, m = next((k, m) for k, m in s.random.values() if k / m == end)
                ac = (k + 2) / (m + 4)        # Agresti-Coull: a random share of 0 or 1 still has a variance
                p, df, half = welch(t.mean - end, [(var_t, t.df), (ac * (1 - ac) / (m + 4), m - 1)])
                s.tests["random"] = (p, df, half, t.mean - end)
        c = s.change
        p, df, half = welch(c.mean, [(c.se ** 2 if c.df else math.inf, c.df)])
        s.tests["init"] = (p, df, half, c.mean)
        if s.text is not None:
            x = s.text
            p, df, half = welch(t.mean - x.mean, [(var_t, t.df), (x.se ** 2 if x.df else math.inf, x.df)])
            s.tests["text"] = (p, df, half, t.mean - x.mean)
        if s.asis is not None:
            x = s.asis
            p, df, half = welch(t.mean - x.mean, [(var_t, t.df), (x.se ** 2 if x.df else math.inf, x.df)])
            s.tests["asis"] = (p, df, half, t.mean - x.mean)
        if s.depth is not None:
            c = s.depth
            p, df, half = welch(c.mean, [(c.se ** 2 if c.df else math.inf, c.df)])
            s.tests["depth"] = (p, df, half, c.mean)
        for name in COMPARISONS:         # the family is the plan's: a comparison without data counts, p = 1
            s.tests.setdefault(name, (1.0, 0.0, math.inf, math.nan))
        tests += [(s, name) for name in COMPARISONS]
    adjusted = holm([s.tests[name][0] for s, name in tests]) if tests else []
    for (s, name), p in zip(tests, adjusted):
        d = s.tests[name][3]
        sig = p < ALPHA
        if not math.isfinite(d):
            s.words[name] = "not measured"
        elif math.isnan(s.tests[name][1]):     # no variation across seeds: not applicable, never decided
            s.words[name] = "shows no variation to test" if name == "depth" else \
                "not testable (no variation across seeds) against"
        elif name == "random":
            lo, hi = s.random_range
            s.words[name] = ("above" if d > 0 else "below") if sig else \
                ("inside" if lo <= s.trained.mean <= hi else "not separable from")
        elif name == "depth":
            s.words[name] = ("rises" if d > 0 else "falls") if sig else "shows no detectable trend"
        else:
            s.words[name] = ("higher than" if d > 0 else "lower than") if sig else "not separable from"
        s.tests[name] = s.tests[name] + (p,)


def interval(s: Optional[Spread]) -> str:
    if s is None or not s.values:
        return "-"
    if not math.isfinite(s.lo):
        return f"{s.mean:.2f} (1 seed)"
    return f"{s.mean:.2f} [{s.lo:.2f}, {s.hi:.2f}] (df {s.df})"


def seeds_table(summaries: Sequence[Summary]) -> tuple[list, list]:
    """Per model and token set: the seeds, each seed's share, mean and spread, the t interval, the
    model at initialisation, the paired change and the test accuracy."""
    cols = ["model", "token set", "n", "seeds", "share per seed (trained)", "trained mean (sd)",
            "trained 95% t interval", "init 95% t interval", "trained - init (paired)", "trained vs init",
            "last - first layer (paired)", "with depth", "test acc mean (sd)"]
    rows = []
    for s in summaries:
        rows.append([s.model, s.variant, s.n, ", ".join(map(str, s.seeds)),
                     ", ".join(f"{x:.2f}" for x in s.trained.values),
                     f"{s.trained.mean:.3f} (sd {s.trained.sd:.3f})" if s.trained.df else f"{s.trained.mean:.3f}",
                     interval(s.trained), interval(s.init), interval(s.change), s.words.get("init", "-"),
                     interval(s.depth), s.words.get("depth", "-"),
                     f"{s.accuracy.mean:.3f} (sd {s.accuracy.sd:.3f})" if s.accuracy.df else f"{s.accuracy.mean:.3f}"])
    return rows, cols


def matched_table(summaries: Sequence[Summary], families: Sequence[str]) -> tuple[list, list]:
    """Per model and token set at its n: the trained share (mean over seeds, t interval), each random
    family's share (Wilson 95%), the random range and where the model lies (Holm-adjusted), MiniLM
    cut to n tokens and the difference (Welch)."""
    cols = (["model", "token set", "n", "trained (seed mean)"] + [f"random {f}" for f in families]
            + ["random range", "trained vs random range", "MiniLM at n (inputs)", "trained - MiniLM at n",
               "trained vs MiniLM at n", "MiniLM as-is (inputs)", "trained vs MiniLM as-is"])
    rows = []
    for s in summaries:
        cells = []
        for f in families:
            k, m = s.random.get(f, (0, 0))
            lo, hi = wilson(k, m)
            cells.append(f"{k}/{m} = {k / m:.2f} [{lo:.2f}, {hi:.2f}]" if m else "-")
        rng = s.random_range
        tt = s.tests.get("text")
        tt = tt if tt and math.isfinite(tt[3]) and math.isfinite(tt[2]) else None
        rows.append([s.model, s.variant, s.n, interval(s.trained), *cells,
                     f"{rng[0]:.2f}-{rng[1]:.2f}" if rng else "-", s.words.get("random", "-"),
                     f"{interval(s.text)} ({s.text_inputs})" if s.text else "-",
                     f"{tt[3]:+.2f} [{tt[3] - tt[2]:.2f}, {tt[3] + tt[2]:.2f}] (Welch df {tt[1]:.1f}, Holm p {tt[4]:.3g})" if tt else "-",
                     s.words.get("text", "-"),
                     f"{interval(s.asis)} ({len(s.asis.values)})" if s.asis else "-", s.words.get("asis", "-")])
    return rows, cols
