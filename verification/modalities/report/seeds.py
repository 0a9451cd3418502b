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

Every comparison is made at the seed level (the seed is the unit; df = seeds - 1), never by mixing
seed-level and input-level variance: against a fixed reference measured with error (the random
range, MiniLM at n or as-is) a one-sided t over seeds against the nearer end of the reference's 95%
interval, doubled; against initialisation and with depth a paired t. "Inside the random range" is an
equivalence claim, tested by TOST with the margin :data:`MARGIN`. The p-values are Holm-adjusted over
the run's family (:data:`COMPARISONS` per summary, fixed by the plan) and the words of the prose
(``above`` / ``below`` / ``inside`` / ``not separable from``) follow from them (:func:`decide`); each
"not separable" carries its minimum detectable effect, and :func:`power_table` the seeds a 0.10 effect
would need (the power calculation behind the preset's number of seeds).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from verification.modalities.report.stages import VARIANTS, Stage
from verification.report.stats import SD_FLOOR, exact_sd, holm, mde, paired_t, wilson

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
    tests: dict = field(default_factory=dict)     # comparison -> (p, df, -, difference, Holm p)
    words: dict = field(default_factory=dict)     # comparison -> word (after Holm)
    refs: dict = field(default_factory=dict)      # comparison -> the reference's 95% interval (TOST: bounds)
    mdes: dict = field(default_factory=dict)      # comparison -> minimum detectable effect (alpha / m, power 0.8)
    needed: dict = field(default_factory=dict)    # comparison -> seeds for power 0.8 at EFFECT (None: > 200)

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


def reference_interval(s: "Summary", name: str) -> Optional[tuple[float, float]]:
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


def equivalence_to_range(values: Sequence[float], s: "Summary") -> dict:
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


def decide(summaries: Sequence[Summary]) -> None:
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


def _test_cell(s: Summary, name: str) -> str:
    """One comparison as a cell: the difference from the reference's nearer end (or the paired mean),
    the seed-level df, the Holm-adjusted p and, where nothing is separable, the MDE."""
    t = s.tests.get(name)
    if t is None or not math.isfinite(t[3]):
        return "-"
    p, df, _, d, adj = t
    if isinstance(df, float) and math.isnan(df):
        return "no variation across seeds"
    cell = f"{d:+.2f} (t df {int(df)}, Holm p {adj:.2g})"
    mde_ = s.mdes.get(name, math.nan)
    return cell + (f"; MDE {mde_:.2f}" if adj >= ALPHA and math.isfinite(mde_) else "")


def matched_table(summaries: Sequence[Summary], families: Sequence[str]) -> tuple[list, list]:
    """Per model and token set at its n: the trained share (mean over seeds, t interval), each random
    family's share (Wilson 95%), the random range and where the model lies (seed-level tests against
    the reference's interval, Holm-adjusted; "inside" by TOST), MiniLM cut to n tokens and as-is."""
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
            eq_cell = (f"region [{lo:.2f}, {hi:.2f}] (margin {MARGIN:.2f}), Holm p {eq[4]:.2g}: "
                       + ("equivalent" if eq[4] < ALPHA else "not shown"))
        rows.append([s.model, s.variant, s.n, interval(s.trained), *cells,
                     f"{rng[0]:.2f}-{rng[1]:.2f}" if rng else "-", _test_cell(s, "random"),
                     s.words.get("random", "-"), eq_cell,
                     f"{interval(s.text)} ({s.text_inputs})" if s.text else "-", _test_cell(s, "text"),
                     s.words.get("text", "-"),
                     f"{interval(s.asis)} ({len(s.asis.values)})" if s.asis else "-", s.words.get("asis", "-")])
    return rows, cols


def summary_table(summaries: Sequence[Summary], labels: Optional[dict] = None) -> tuple[list, list]:
    """One row per model (content tokens): seeds, the trained share over seeds (t interval), its words
    against the random range at its n, MiniLM cut to n and its own initialisation, each with the
    MDE where nothing was separable; what the paper typesets (the full tables are data)."""
    cols = ["model", "n", "seeds", "trained share (95% t)", "random range", "against the random range",
            "MiniLM at n", "against MiniLM at n", "against initialisation"]
    rows = []
    for s in summaries:
        if s.variant != "content":
            continue
        rng = s.random_range

        def said(name: str) -> str:
            w, m = s.words.get(name, "-"), s.mdes.get(name, math.nan)
            return f"{w}; MDE {m:.2f}" if w in ("not separable from",) and math.isfinite(m) else w

        rows.append([(labels or {}).get(s.model, s.model), s.n, len(s.seeds),
                     f"{s.trained.mean:.2f} [{s.trained.lo:.2f}, {s.trained.hi:.2f}]" if s.trained.df else
                     f"{s.trained.mean:.2f}", f"{rng[0]:.2f}-{rng[1]:.2f}" if rng else "-",
                     said("random") + (" (TOST)" if s.words.get("random") == "inside" else ""),
                     f"{s.text.mean:.2f}" if s.text is not None else "-", said("text"), said("init")])
    return rows, cols


POWER_NAMES = {"random": "trained vs random range", "init": "trained vs initialisation",
               "text": "trained vs MiniLM at n", "asis": "trained vs MiniLM as-is", "depth": "last vs first layer"}


def power_table(summaries: Sequence[Summary]) -> tuple[list, list]:
    """The power calculation behind the number of seeds: per model, token set and comparison, the
    seed-level sd, the minimum detectable effect with these seeds (power :data:`POWER`, two-sided at
    the Bonferroni level alpha / m of the run's Holm family) and the seeds a difference of
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
