"""Across seeds and beside baselines: each model's D1 equality share as a mean over training seeds,
next to random matrices and the text encoder at the same token count n, and the tables of them.

The unit of a model's share is the *seed*: per seed, the share of its test inputs with D1 equality,
averaged over layers (one number per seed, at the last checkpoint and at initialisation); the mean
over k seeds has a t interval with k - 1 degrees of freedom (``scipy.stats.t``), at the run's
simultaneous level 1 - alpha/m (Bonferroni over the m comparisons of the run, the level of every
decision: :mod:`verification.modalities.report.comparisons`). Beside it, at the same n (all tokens;
content tokens):

- ``random``: the share of tight matrices of each random family (Wilson 95% per family; independent
  draws; :mod:`verification.measure.baselines`) and the range of the family shares (the
  "random-matrix range");
- ``init``: the same architecture with its initial weights on the same inputs (paired per seed:
  trained - init, df = k - 1);
- ``text``: MiniLM with its inputs cut to n tokens (the unit is the input: per input the share of
  layers with equality; t interval with df = inputs - 1).

:func:`summarise` gives one :class:`Summary` per (model, token set) and has its comparisons tested
and worded at the seed level (:mod:`verification.modalities.report.comparisons`: one simultaneous
interval per comparison, TOST, the minimum detectable effects); the tables show them: :func:`seeds_table` (per seed, against
initialisation and with depth), :func:`matched_table` (beside the baselines at n),
:func:`summary_table` (what the paper typesets) and :func:`power_table` (the power calculation
behind the preset's number of seeds).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from verification.modalities.report.comparisons import EFFECT, MARGIN, POWER, decide
from verification.stats import Spread, t_spread  # noqa: F401  (re-exported)
from verification.modalities.report.stages import VARIANTS, Stage
from verification.stats import ALPHA, SD_FLOOR, exact_sd, wilson


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
    tests: dict = field(default_factory=dict)     # comparison -> (p, df, -, difference, Bonferroni p)
    words: dict = field(default_factory=dict)     # comparison -> word (from the interval in intervals)
    refs: dict = field(default_factory=dict)      # comparison -> the reference's 95% interval (TOST: bounds)
    intervals: dict = field(default_factory=dict)  # comparison -> the difference's interval at level (TOST: trained's)
    mdes: dict = field(default_factory=dict)      # comparison -> minimum detectable effect (alpha / m, power 0.8)
    needed: dict = field(default_factory=dict)    # comparison -> seeds for power 0.8 at EFFECT (None: > 200)
    level: float = 1 - ALPHA                      # of the seed-level intervals: 1 - alpha / comparisons
    comparisons: int = 1                          # m: every comparison of the run (the decide() family)

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
    """One :class:`Summary` per (model, token set), then the words
    (:func:`verification.modalities.report.comparisons.decide`). ``baselines``: ``{(family, n):
    (tight, matrices)}`` (:func:`verification.measure.baselines.pool_by_size`); ``texts``: MiniLM at
    matched n (:func:`text_shares`); ``asis``: ``{variant: per-input shares}`` of MiniLM as the
    trained main job measured it."""
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


def interval(s: Optional[Spread]) -> str:
    if s is None or not s.values:
        return "-"
    if not math.isfinite(s.lo):
        return f"{s.mean:.2f} (1 seed)"
    return f"{s.mean:.2f} [{s.lo:.2f}, {s.hi:.2f}] (df {s.df})"


def level_label(summaries: Sequence[Summary]) -> str:
    """The run's simultaneous level in percent (one decimal), as the tables' headers print it.

    >>> level_label([]), level_label([Summary("m", "all", 4, [], *(None,) * 5, {}, level=1 - 0.05 / 48)])
    ('95.0%', '99.9%')
    """
    return f"{100 * (summaries[0].level if summaries else 1 - ALPHA):.1f}%"


def difference(s: Summary, name: str) -> str:
    """``"+0.01 [-0.20, +0.31]"``: comparison ``name``'s difference with the interval that decides its
    word (:func:`verification.modalities.report.comparisons.decide`); ``""`` where there is none."""
    t, iv = s.tests.get(name), s.intervals.get(name)
    if t is None or iv is None or not math.isfinite(t[3]):
        return ""
    return f"{signed(t[3])} [{signed(iv[0])}, {signed(iv[1])}]"


def signed(x: float) -> str:
    """``x`` with its sign and two decimals, more (up to four) where two would show a nonzero end of
    an interval as 0.00 (so that which side of 0 it lies on can be read).

    >>> signed(0.1234), signed(-0.0031), signed(0.0), signed(float("-inf"))
    ('+0.12', '-0.003', '+0.00', '-inf')
    """
    for d in (2, 3, 4):
        out = f"{x:+.{d}f}"
        if x == 0 or not math.isfinite(x) or float(out) != 0:
            return out
    return out


def seeds_table(summaries: Sequence[Summary]) -> tuple[list, list]:
    """Per model and token set: the seeds, each seed's share, mean and spread, the t interval at the
    run's simultaneous level, the model at initialisation, the paired change and the test accuracy."""
    lv = level_label(summaries)
    cols = ["model", "token set", "n", "seeds", "share per seed (trained)", "trained mean (sd)",
            f"trained {lv} t interval", f"init {lv} t interval", "trained - init (paired)", "trained vs init",
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


def _test_cell(s: Summary, name: str) -> str:
    """One comparison as a cell: the difference from the reference's interval (or the paired mean)
    with its interval at the run's level (the one that decides), the seed-level df, the Bonferroni p
    and, where nothing is separable, the MDE."""
    t = s.tests.get(name)
    if t is None or not math.isfinite(t[3]):
        return "-"
    p, df, _, d, adj = t
    if isinstance(df, float) and math.isnan(df):
        return "no variation across seeds"
    lo, hi = s.intervals[name]
    cell = f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}] (t df {int(df)}, Bonferroni p {adj:.2g})"
    mde_ = s.mdes.get(name, math.nan)
    return cell + (f"; MDE {mde_:.2f}" if lo <= 0 <= hi and math.isfinite(mde_) else "")


def matched_table(summaries: Sequence[Summary], families: Sequence[str]) -> tuple[list, list]:
    """Per model and token set at its n: the trained share (mean over seeds, t interval), each random
    family's share (Wilson 95%), the random range and where the model lies (seed-level tests against
    the reference's interval, at the run's simultaneous level; "inside" by TOST), MiniLM cut to n tokens
    and as-is."""
    cols = (["model", "token set", "n", "trained (seed mean)"] + [f"random {f}" for f in families]
            + ["random range", "vs random range (test)", "trained vs random range", "inside the range (TOST)",
               "MiniLM at n (inputs)", "vs MiniLM at n (test)", "trained vs MiniLM at n", "MiniLM as-is (inputs)",
               "trained vs MiniLM as-is"])
    rows = []
    for s in summaries:
        cells = []
        for f in families:
            k, m = s.random.get(f, (0, 0))
            lo, hi = wilson(k, m)
            cells.append(f"{k}/{m} = {k / m:.2f} [{lo:.2f}, {hi:.2f}]" if m else "-")
        rng = s.random_range
        eq = s.tests.get("random-equivalence")
        eq_cell = "-"
        if eq and math.isfinite(eq[3]) and "random-equivalence" in s.refs:
            lo, hi = s.refs["random-equivalence"]
            eq_cell = (f"region [{lo:.2f}, {hi:.2f}] (margin {MARGIN:.2f}), Bonferroni p {eq[4]:.2g}: "
                       + ("equivalent" if s.words.get("random") == "inside" else "not shown"))
        rows.append([s.model, s.variant, s.n, interval(s.trained), *cells,
                     f"{rng[0]:.2f}-{rng[1]:.2f}" if rng else "-", _test_cell(s, "random"),
                     s.words.get("random", "-"), eq_cell,
                     f"{interval(s.text)} ({s.text_inputs})" if s.text else "-", _test_cell(s, "text"),
                     s.words.get("text", "-"),
                     f"{interval(s.asis)} ({len(s.asis.values)})" if s.asis else "-", s.words.get("asis", "-")])
    return rows, cols


def summary_table(summaries: Sequence[Summary], labels: Optional[dict] = None) -> tuple[list, list]:
    """One row per model (content tokens): seeds, the trained share over seeds (t interval at the run's
    simultaneous level), its words against the random range at its n, MiniLM cut to n and its own
    initialisation, each beside the difference and interval that decide it (:func:`difference`) and
    with the MDE where nothing was separable; what the paper typesets (the full tables are data)."""
    cols = ["model", "n", "seeds", f"trained share ({level_label(summaries)} t)", "random range",
            "against the random range", "MiniLM at n", "against MiniLM at n", "against initialisation"]
    rows = []
    for s in summaries:
        if s.variant != "content":
            continue
        rng = s.random_range

        def said(name: str) -> str:
            w, m, d = s.words.get(name, "-"), s.mdes.get(name, math.nan), difference(s, name)
            w += f" ({d})" if d else ""
            return f"{w}; MDE {m:.2f}" if s.words.get(name) == "not separable from" and math.isfinite(m) else w

        rows.append([(labels or {}).get(s.model, s.model), s.n, len(s.seeds),
                     f"{s.trained.mean:.2f} [{max(0.0, s.trained.lo):.2f}, {min(1.0, s.trained.hi):.2f}]" if s.trained.df else
                     f"{s.trained.mean:.2f}", f"{rng[0]:.2f}-{rng[1]:.2f}" if rng else "-",
                     said("random") + (" (TOST)" if s.words.get("random") == "inside" else ""),
                     f"{s.text.mean:.2f}" if s.text is not None else "-", said("text"), said("init")])
    return rows, cols


POWER_NAMES = {"random": "trained vs random range", "init": "trained vs initialisation",
               "text": "trained vs MiniLM at n", "asis": "trained vs MiniLM as-is", "depth": "last vs first layer"}


def power_table(summaries: Sequence[Summary]) -> tuple[list, list]:
    """The power calculation behind the number of seeds: per model, token set and comparison, the
    seed-level sd, the minimum detectable effect with these seeds (power :data:`POWER`, two-sided at
    the run's level alpha / m, that of every decision) and the seeds a difference of
    :data:`EFFECT` would need at that level."""
    cols = ["model", "token set", "comparison", "seeds", "seed sd", f"MDE (power {POWER:.1f})",
            f"seeds for {EFFECT:.2f}", "outcome"]
    rows = []
    for s in summaries:
        k = len(s.trained.values)
        for name, label in POWER_NAMES.items():
            sd = (s.change.sd if name == "init" else s.depth.sd if name == "depth" and s.depth else s.trained.sd)
            mde_, need = s.mdes.get(name, math.nan), s.needed.get(name)
            rows.append([s.model, s.variant, label, k, f"{sd:.3f}" if math.isfinite(sd) else "-",
                         f"{mde_:.2f}" if math.isfinite(mde_) else "-",
                         str(need) if need else ("over 200" if math.isfinite(sd) and sd > SD_FLOOR else "-"),
                         s.words.get(name, "-")])
    return rows, cols
