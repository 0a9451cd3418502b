"""The seed-level tables of the modalities family, rendered from the findings' summaries
(:class:`verification.modalities.findings.seeds.Summary`): :func:`seeds_table` (per seed, against
initialisation and with depth), :func:`matched_table` (beside the baselines at n),
:func:`summary_table` (what the paper typesets) and :func:`power_table` (the power calculation
behind the preset's number of seeds), and the cells they share (:func:`interval`,
:func:`difference`, :func:`signed`): each word printed beside the interval that decides it.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from verification.modalities.findings.comparisons import EFFECT, MARGIN, POWER
from verification.modalities.findings.seeds import Summary
from verification.stats import ALPHA, SD_FLOOR, Spread


def share_cell(sh: Any) -> str:
    """``"3/10 = 0.30 [0.11, 0.60]"``: a :class:`verification.findings.Share` with its Wilson interval."""
    return f"{sh.k}/{sh.n} = {sh.value:.2f} [{sh.lo:.2f}, {sh.hi:.2f}]"


def interval(s: Optional[Spread]) -> str:
    if s is None or not s.values:
        return "-"
    if not math.isfinite(s.lo):
        return f"{s.mean:.2f} (1 seed)"
    return f"{s.mean:.2f} [{s.lo:.2f}, {s.hi:.2f}] (df {s.df})"


def level_label(summaries: Sequence[Summary]) -> str:
    """The run's simultaneous level in percent (one decimal), as the tables' headers print it.

    >>> level_label([]), level_label([Summary("m", "all", 4, (), *(None,) * 4, {}, level=1 - 0.05 / 48)])
    ('95.0%', '99.9%')
    """
    return f"{100 * (summaries[0].level if summaries else 1 - ALPHA):.1f}%"


def difference(s: Summary, name: str) -> str:
    """``"+0.01 [-0.20, +0.31]"``: comparison ``name``'s difference with the interval that decides its
    word (:func:`verification.modalities.findings.comparisons.decide`); ``""`` where there is none."""
    c = s.compared.get(name)
    if c is None or c.interval is None or not math.isfinite(c.difference):
        return ""
    return f"{signed(c.difference)} [{signed(c.interval[0])}, {signed(c.interval[1])}]"


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
    c = s.compared.get(name)
    if c is None or not math.isfinite(c.difference):
        return "-"
    if isinstance(c.df, float) and math.isnan(c.df):
        return "no variation across seeds"
    lo, hi = c.interval
    cell = f"{c.difference:+.2f} [{lo:+.2f}, {hi:+.2f}] (t df {int(c.df)}, Bonferroni p {c.adjusted:.2g})"
    return cell + (f"; MDE {c.mde:.2f}" if lo <= 0 <= hi and math.isfinite(c.mde) else "")


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
            sh = s.random.get(f)
            cells.append(share_cell(sh) if sh is not None and sh.n else "-")
        rng = s.random_range
        eq = s.compared.get("random-equivalence")
        eq_cell = "-"
        if eq and math.isfinite(eq.difference) and eq.reference is not None:
            lo, hi = eq.reference
            eq_cell = (f"region [{lo:.2f}, {hi:.2f}] (margin {MARGIN:.2f}), Bonferroni p {eq.adjusted:.2g}: "
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
            mde_, need = s.compared[name].mde, s.compared[name].needed
            rows.append([s.model, s.variant, label, k, f"{sd:.3f}" if math.isfinite(sd) else "-",
                         f"{mde_:.2f}" if math.isfinite(mde_) else "-",
                         str(need) if need else ("over 200" if math.isfinite(sd) and sd > SD_FLOOR else "-"),
                         s.words.get(name, "-")])
    return rows, cols
