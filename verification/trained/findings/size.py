"""How large the slack of the two rollout bounds is, and how D1's equality comes about, on one model's
stored records (issue 62, items 3 and 4), as typed values (:mod:`verification.findings`):

- the relative slack (slack / bound) of the *strict* D1 verdicts on the head-averaged attention, per
  layer and pooled, and over every head: median with its order-statistic interval, quartiles, maximum;
- D2's looseness at the last layer, delta(R_L) / prod_l delta(Ahat_l) (the stored chain ratio), beside
  the same ratio of random stacks of the same sizes (n, L) (:func:`verification.measure.baselines.chain_ratio_null`:
  Dirichlet(1) rows for a bidirectional model, the causal family for a causal one; drawn here, seeded by
  the plan's seed, not stored), and the median per-input difference with its order-statistic interval;
- per layer, the tight verdicts, those tight only through token 0 (the maximising pair that is mutually
  self-dominant always contains token 0), and the two controls (off-diagonal shuffled, columns permuted);
  and the same pooled over layers within strata of the inputs: by source and by kept token count.

Nothing is re-measured: every number but the null's is read from the records.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from verification.findings import Decision, Estimate, Share
from verification.trained.findings.model import median_estimate
from verification.trained.findings.records import cluster_share, count, tight

TOKEN_BINS = (2, 8, 16, 32, 64, 128, 256, 512)      # strata of kept tokens: 2-8, 9-16, 17-32, ...
NULL_FAMILY = {False: "dirichlet", True: "causal"}   # the null's random rows, by the model's causality
COLUMNS_HIT, OFFDIAGONAL_HIT = "control_columns", "control_offdiagonal"


def only_first(r: dict) -> bool:
    """A tight verdict whose every mutually self-dominant maximising pair contains token 0."""
    return bool(r["extra"].get("through_first")) and not r["extra"].get("through_other")


def relative_slack(r: dict) -> float:
    """slack / bound of one stored D1 verdict."""
    return float(r["slack"]) / float(r["bound"])


@dataclass(frozen=True)
class Slack:
    """The relative slack of the strict D1 verdicts among ``strict.n`` verdicts (``layer`` None: pooled):
    their median with its 95% order-statistic interval, quartiles and maximum (None without strict verdicts)."""

    layer: Optional[int]
    strict: Share
    median: Optional[Estimate]
    q25: Optional[float]
    q75: Optional[float]
    max: Optional[float]


def slack_of(records: list, layer: Optional[int], seed: int) -> Slack:
    """The :class:`Slack` of the D1 records ``records`` (strict: verdict "holds"; ``seed`` unused by the order-statistic interval)."""
    rel = np.array([relative_slack(r) for r in records if r["verdict"] == "holds" and r["bound"]], dtype=float)
    strict = count(int(np.sum([r["verdict"] == "holds" for r in records])), len(records))
    if not rel.size:
        return Slack(layer, strict, None, None, None, None)
    q25, q75 = np.quantile(rel, [0.25, 0.75])
    return Slack(layer, strict, median_estimate(rel), float(q25), float(q75), float(rel.max()))


@dataclass(frozen=True)
class ChainNull:
    """D2's looseness at depth ``depth`` (the last layer) on ``inputs`` inputs: the model's ratio
    delta(R_L) / prod delta(Ahat_l) (median, band, quartiles), random stacks of ``family`` at each input's
    (n, L) (``draws`` per size; the median over inputs of each input's null median with its band over
    inputs, the quartiles of every draw), and the median over inputs of the model's ratio
    minus the null's median at its size, decided by its order-statistic interval (supported: it excludes 0)."""

    depth: int
    inputs: int
    family: str
    draws: int
    model: Optional[Estimate]
    model_q: tuple
    null: Optional[Estimate]
    null_q: tuple
    difference: Optional[Decision]


def chain_null(roll: list, depth: int, causal: bool, seed: int) -> ChainNull:
    """The :class:`ChainNull` of the stored chain records ``roll`` at ``depth`` (layer index L - 1)."""
    from verification.measure.baselines import CHAIN_NULL_DRAWS, chain_ratio_null
    from verification.stats import median_interval

    family = NULL_FAMILY[bool(causal)]
    pairs = [(int(r["provenance"]["n"]), float(r["extra"]["ratio_R"])) for r in roll     # the records' order: the
             if r["extra"].get("ratio_R") is not None]                                    # rollout table's bootstrap
    if not pairs:
        return ChainNull(depth, 0, family, CHAIN_NULL_DRAWS, None, (), None, (), None)
    nulls = {n: chain_ratio_null(family, n, depth + 1, seed) for n in sorted({n for n, _ in pairs})}
    ratios = np.array([x for _, x in pairs])
    pooled = np.concatenate([nulls[n] for n, _ in pairs])
    medians = [float(np.median(nulls[n])) for n, _ in pairs]           # the null at each input's size
    diffs = [x - m for (_, x), m in zip(pairs, medians)]
    d, (lo, hi) = median_interval(diffs)
    decided = not (np.isnan(lo) or lo <= 0 <= hi)
    difference = Decision("supported" if decided else "inconclusive", d, (lo, hi),
                          method="median of per-input differences, order-statistic interval over inputs")
    return ChainNull(depth, len(pairs), family, CHAIN_NULL_DRAWS, median_estimate(ratios),
                     tuple(float(q) for q in np.quantile(ratios, [0.25, 0.75])), median_estimate(medians),
                     tuple(float(q) for q in np.quantile(pooled, [0.25, 0.75])), difference)


@dataclass(frozen=True)
class Mechanism:
    """D1 on the head means of one layer (``layer``) or one stratum of the inputs (``stratum``: its kind,
    "source" or "tokens", and name), all tokens: the tight verdicts, those tight only through token 0
    (a count of the tight ones), and the two controls' tight verdicts; one verdict per input in a layer
    (Wilson), pooled over layers in a stratum (Wilson with a design effect over inputs)."""

    layer: Optional[int]
    stratum: tuple
    inputs: int
    tight: Share
    only_first: Share
    offdiagonal: Share
    columns: Share


def mechanism_of(records: list, layer: Optional[int], stratum: tuple = ()) -> Mechanism:
    """The :class:`Mechanism` of head-mean records ``records`` (one layer's, or a stratum's over layers)."""
    ts = [r for r in records if tight(r)]
    inputs = len({(r["provenance"]["input"], r["provenance"].get("text_sha")) for r in records})
    hits = (tight, lambda r: r["extra"].get(OFFDIAGONAL_HIT) == "tight", lambda r: r["extra"].get(COLUMNS_HIT) == "tight")
    if layer is not None:
        shares = [Share.wilson(sum(bool(h(r)) for r in records), len(records)) for h in hits]
    else:
        shares = [cluster_share(records, h) or count(0, 0) for h in hits]
    return Mechanism(layer, stratum, inputs, shares[0], count(sum(only_first(r) for r in ts), len(ts)), *shares[1:])


def token_bin(n: int) -> str:
    """The stratum of ``n`` kept tokens on :data:`TOKEN_BINS`: "2-8 tokens", "9-16 tokens", ...,
    "more than 512 tokens"."""
    for lo, hi in zip(TOKEN_BINS, TOKEN_BINS[1:]):
        if n <= hi:
            return f"{lo if lo == TOKEN_BINS[0] else lo + 1}-{hi} tokens"
    return f"more than {TOKEN_BINS[-1]} tokens"


@dataclass(frozen=True)
class Size:
    """One model's slack sizes (head means per layer, pooled; every head pooled), D2's looseness
    beside its null, and the mechanism per layer and per stratum (sources in the corpus's order,
    then token bins ascending)."""

    layers: tuple
    means: Slack
    heads: Slack
    chain: ChainNull
    mechanism: tuple
    strata: tuple


def size_findings(data: dict, causal: bool, seed: int, sources: Any = ()) -> Size:
    """The :class:`Size` of one model's grouped records ``data``
    (:func:`verification.trained.findings.records.collect_records`); ``sources``: the sources in order."""
    cells = data["layer"].get("all", {})
    L = len(cells)
    means = [r for l in sorted(cells) for r in cells[l]]
    heads = [r for rs in data["head"].get("all", {}).values() for r in rs]
    strata = []
    for src in sources:
        rs = [r for r in means if data["source"].get((r["provenance"]["input"], r["provenance"].get("text_sha"))) == src]
        if rs:
            strata.append(mechanism_of(rs, None, ("source", src)))
    bins = sorted({token_bin(int(r["provenance"]["n"])) for r in means},
                  key=lambda b: min(int(r["provenance"]["n"]) for r in means if token_bin(int(r["provenance"]["n"])) == b))
    for b in bins:
        strata.append(mechanism_of([r for r in means if token_bin(int(r["provenance"]["n"])) == b], None, ("tokens", b)))
    roll = data["roll"].get("all", {}).get(L - 1, [])
    return Size(tuple(slack_of(cells[l], l, l) for l in sorted(cells)), slack_of(means, None, L),
                slack_of(heads, None, L), chain_null(roll, L - 1, causal, seed),
                tuple(mechanism_of(cells[l], l) for l in sorted(cells)), tuple(strata))
