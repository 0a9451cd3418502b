"""What one model's trained-transformer campaign found, as typed values (:mod:`verification.findings`):
per token set and layer D1's equality share on the head mean (95% Wilson) and its median slack,
per head the share of inputs, per layer the rollout chain and the comparison bounds, per source
the shares beside random matrices of the same token counts, and what a float test of D1 gets wrong
against the exact verdicts. Built once from the stored records (:func:`model_findings`); the report
and the paper part render these values, never recompute or parse them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from verification.findings import Estimate, Share
from verification.measure.attention import float_key
from verification.measure.baselines import FAMILIES, baseline_share, baseline_slots
from verification.report.aggregate import median
from verification.stats import median_interval
from verification.trained.findings.records import (VARIANTS, cluster_share, count, sizes_of, source_order, tight,
                                                  tight_share)
from verification.trained.findings.sweep import FloatSweep, float_sweep

FLOAT_TESTS = ("as-stored", "renormalised", "condition")    # numerics.dobrushin.float_tests.IMPLEMENTATIONS
ALWAYS_TIGHT = "always tight"                                  # the constant baseline: every verdict called tight
PRECISIONS = ("float32", "float64")
CURVES = ("value", "bound", "prod_factor_bound")     # the rollout figure's lines: delta(R_l), prod delta(Ahat), factors


def median_estimate(values: Any) -> Optional[Estimate]:
    """The median of ``values`` (one per input) with its 95% order-statistic interval (none for fewer
    than six inputs), None without values (:func:`verification.stats.median_interval`)."""
    values = [float(v) for v in values if v is not None]
    m, (lo, hi) = median_interval(values)
    n = sum(np.isfinite(v) for v in values)
    return None if m is None else Estimate(m, lo, hi, "order statistics", n=int(n))


@dataclass(frozen=True)
class D1Layer:
    """D1 on the head-averaged attention of one layer and token set: the inputs where it is tight
    (Wilson), of those the ones tight only through token 0, and the median slack."""

    layer: int
    tight: Share
    via_first: Share
    slack: Optional[Estimate]


@dataclass(frozen=True)
class TokenSet:
    """One token set (all, content, nofirst): its layers, the tight verdicts only through token 0
    over every layer, the per-head shares ((L, H), nan where a head has no records) and the slacks."""

    name: str
    layers: dict[int, D1Layer]
    via_first: Share
    heads: Any = field(compare=False)
    slacks: tuple = ()


@dataclass(frozen=True)
class RolloutLayer:
    """The rollout chain at one depth on all tokens: medians over inputs of delta(A) (head mean),
    delta(R_l), prod delta(Ahat), prod (1+delta(A))/2, the ratio R/prod (with its order-statistic interval)
    and prod/factor; ratios left undecided; the chain's and D2's step verdicts."""

    layer: int
    delta: Optional[float]
    rollout: Optional[float]
    product: Optional[float]
    factor_product: Optional[float]
    ratio: Optional[Estimate]
    ratio_undecided: Share
    factor_ratio: Optional[float]
    chain_tight: Share
    step_tight: Share
    step_undecided: Share


@dataclass(frozen=True)
class CompareLayer:
    """Comparison bounds on delta(A) of the head mean at one layer, medians over inputs."""

    layer: int
    delta: Optional[float]
    factor: Optional[float]
    birkhoff: Optional[float]
    birkhoff_finite: Share
    softmax: Optional[float]
    softmax_inputs: Share


@dataclass(frozen=True)
class Curve:
    """A rollout quantity by depth (``key``: :data:`CURVES`): median and quartiles of its positive values."""

    key: str
    layers: tuple
    median: tuple
    q25: tuple
    q75: tuple


@dataclass(frozen=True)
class SourceSet:
    """One source (or the pool) on one token set: its inputs with random matrices drawn, their median
    kept tokens, D1 tight per layer (Wilson), the layer with the lowest share, and per random family
    the share of matrices of the same token counts (Wilson)."""

    variant: str
    inputs: int
    tokens: Optional[float]
    layers: dict[int, Share]
    lowest: int
    random: dict[str, Share]

    @property
    def inner(self) -> list[float]:
        """The shares of the layers before the last (those with inputs)."""
        last = max(self.layers)
        return [s.value for l, s in self.layers.items() if l < last and s.n]


@dataclass(frozen=True)
class Source:
    """A source of the inputs (a file of the corpus, or "pooled"): how many inputs, whether the model
    read any (``present``), and each token set."""

    name: str
    inputs: int
    present: bool
    sets: dict[str, SourceSet]


@dataclass(frozen=True)
class FloatCount:
    """One float test in one precision against the exact D1 verdicts: the verdicts it gets wrong
    (Wilson, design effect over inputs), those it calls violated, the exact equalities it misses."""

    wrong: Share
    violated: int
    missed: int


@dataclass(frozen=True)
class FloatTest:
    """A float test of D1 at tolerance 0 (:data:`FLOAT_TESTS`, or :data:`ALWAYS_TIGHT`) over ``verdicts``
    exact verdicts; per precision its counts (None where the records lack the test)."""

    test: str
    verdicts: int
    precisions: dict[str, Optional[FloatCount]]


@dataclass(frozen=True)
class ModelFindings:
    """Everything one model's campaign found (see the module docstring)."""

    inputs: int
    layers: int
    heads: int
    causal: bool
    quantised: bool
    sets: dict[str, TokenSet]
    rollout: dict[int, RolloutLayer]
    compare: dict[int, CompareLayer]
    curves: tuple[Curve, ...]
    floats: tuple[FloatTest, ...]
    verdicts: int                 # D1 verdicts, head mean and heads, every token set
    exact: int                    # of those, decided on the exact rational path
    tight_all: Share              # tight, every D1 verdict
    tight_all_tokens: Share       # tight, all tokens (head mean and heads)
    factor_ratio_last: float      # median of prod/factor at the last layer (nan: none)
    factor_ratio_band: Optional[Estimate]   # the same with its order-statistic interval
    kept: dict[str, int] = field(default_factory=dict)   # inputs that keep two tokens or more, per token set
    sources: tuple[Source, ...] = ()
    tokens: Optional[float] = None          # median kept tokens, all tokens (with baselines)
    sweep: Optional[FloatSweep] = None      # the float tests at every tolerance (records from v6 on)

    @property
    def variants(self) -> list[str]:
        return [v for v in VARIANTS if v in self.sets]


def _extra(r: dict, key: str) -> Any:
    return r[key] if key in r else r["extra"].get(key)


def token_set(name: str, cells: dict, heads: dict) -> TokenSet:
    """The :class:`TokenSet` of the head-mean records ``cells`` ({layer: records}) and the head
    records ``heads`` ({(l, h): records})."""
    layers = {}
    for l in sorted(cells):
        rs = cells[l]
        ts = [r for r in rs if tight(r)]
        only = sum(bool(r["extra"].get("through_first")) and not r["extra"].get("through_other") for r in ts)
        layers[l] = D1Layer(l, tight_share(rs), count(only, len(ts)), median_estimate(r["slack"] for r in rs))
    every = [r for rs in cells.values() for r in rs if tight(r)]
    only = sum(bool(r["extra"].get("through_first")) and not r["extra"].get("through_other") for r in every)
    if heads:
        shares = np.full((1 + max(l for l, _ in heads), 1 + max(h for _, h in heads)), np.nan)
        for (l, h), rs in heads.items():
            shares[l, h] = sum(r["verdict"] == "tight" for r in rs) / len(rs)
    else:
        shares = np.zeros((0, 0))
    return TokenSet(name, layers, count(only, len(every)), shares,
                    tuple(r["slack"] for rs in cells.values() for r in rs))


def rollout_layer(l: int, rs: list, ls: list) -> RolloutLayer:
    """The :class:`RolloutLayer` of the chain records ``rs`` and the head-mean records ``ls`` at depth ``l``."""
    ratios = [r["extra"].get("ratio_R") for r in rs]
    return RolloutLayer(l, median(r["extra"].get("delta") for r in ls), median(r["value"] for r in rs),
                        median(r["bound"] for r in rs), median(r["extra"].get("prod_factor_bound") for r in rs),
                        median_estimate(ratios), count(sum(x is None for x in ratios), len(rs)),
                        median(r["extra"].get("ratio_factor") for r in rs), tight_share(rs),
                        Share.wilson(sum(r["extra"].get("d2_step") == "tight" for r in rs), len(rs)),
                        count(sum(r["extra"].get("d2_step") == "undecided" for r in rs), len(rs)))


def compare_layer(l: int, rs: list) -> CompareLayer:
    tb = [r["extra"].get("birkhoff") for r in rs]
    sb = [r["extra"].get("softmax_bound") for r in rs if r["extra"].get("softmax_bound") is not None]
    return CompareLayer(l, median(r["extra"].get("delta") for r in rs), median(r["bound"] for r in rs), median(tb),
                        count(sum(x is not None and x < 1 for x in tb), len(rs)), median(sb), count(len(sb), len(rs)))


def curves(roll: dict) -> tuple[Curve, ...]:
    layers = sorted(roll)
    out = []
    for key in CURVES:
        vals = [np.array([x for x in (_extra(r, key) for r in roll[l]) if x is not None and x > 0], dtype=float)
                for l in layers]
        out.append(Curve(key, tuple(layers), tuple(float(np.median(v)) if v.size else np.nan for v in vals),
                         tuple(float(np.quantile(v, 0.25)) if v.size else np.nan for v in vals),
                         tuple(float(np.quantile(v, 0.75)) if v.size else np.nan for v in vals)))
    return tuple(out)


def float_counts(d1: list, key: Optional[str]) -> Optional[tuple[int, int, int]]:
    """(wrong, violated, tight missed) of the float verdicts stored under ``extra[key]`` against the
    exact verdicts of the D1 records ``d1``; ``key`` None: the constant answer "tight"; None when a
    record lacks the key (a campaign stored before that implementation).

    >>> d1 = [{"verdict": "tight", "extra": {"f": "holds"}}, {"verdict": "holds", "extra": {"f": "violated"}}]
    >>> float_counts(d1, "f"), float_counts(d1, None), float_counts(d1, "g")
    ((2, 1, 1), (1, 0, 0), None)
    """
    got = ["tight"] * len(d1) if key is None else [r["extra"].get(key) for r in d1]
    if any(g is None for g in got):
        return None
    return (sum(g != r["verdict"] for g, r in zip(got, d1)), sum(g == "violated" for g in got),
            sum(r["verdict"] == "tight" and g != "tight" for g, r in zip(got, d1)))


def float_tests(records: list) -> tuple[FloatTest, ...]:
    """Every D1 verdict on all tokens (each head and the head mean, every layer) decided exactly, against
    each float test's float32 and float64 verdicts on the same stored attention (:class:`FloatTest`)."""
    d1 = [r for r in records if r["theorem"] == "dobrushin.factor" and "float32" in r["extra"]]
    out = []
    for test in FLOAT_TESTS + (ALWAYS_TIGHT,):
        by = {}
        for dt in PRECISIONS:
            key = None if test == ALWAYS_TIGHT else float_key(dt, test)
            c = float_counts(d1, key)
            wrong = cluster_share(d1, lambda r: ("tight" if key is None else r["extra"][key]) != r["verdict"])
            by[dt] = None if c is None else FloatCount(wrong or count(0, 0), c[1], c[2])
        out.append(FloatTest(test, len(d1), by))
    return tuple(out)


def sources(data: dict, base: dict, families: tuple) -> tuple[Source, ...]:
    """Per source (the default corpus's, those without an input of the model too, then the model's
    others) and pooled, per token set: :class:`SourceSet`, the random shares of the ``families``
    drawn for its inputs."""
    from numerics.sources.corpus import SOURCES

    slots = baseline_slots(sizes_of(data))
    L = len(data["layer"]["all"])
    found = source_order(data)
    names = list(dict.fromkeys(list(SOURCES) + found)) + ["pooled"]
    out = []
    for src in names:
        keys = {k for k, s in data["source"].items() if src in ("pooled", s)}
        sets = {}
        for v, cells in data["layer"].items():
            by_layer = {}
            for l in range(L):
                rs = [r for r in cells.get(l, []) if (r["provenance"]["input"], r["provenance"]["text_sha"]) in keys]
                by_layer[l] = tight_share(rs)
            low = min(by_layer, key=lambda l: (by_layer[l].k / by_layer[l].n if by_layer[l].n else 2, l))
            vkeys = sorted(k for k in keys if k in slots[v])
            random = {f: Share.wilson(*baseline_share(base, slots[v], vkeys, f)) for f in families}
            sets[v] = SourceSet(v, len(vkeys), median(slots[v][k][0] for k in vkeys), by_layer, low, random)
        out.append(Source(src, len(keys), src in found or src == "pooled", sets))
    return tuple(out)


def model_findings(data: dict, base: Optional[dict] = None, causal: bool = False,
                   quantised: bool = False) -> ModelFindings:
    """The :class:`ModelFindings` of one model's grouped records ``data``
    (:func:`verification.trained.findings.records.collect_records`); ``base`` the random baselines (:func:`verification.measure.baselines.read_baselines`; None: no
    sources compared)."""
    sets = {v: token_set(v, cells, data["head"].get(v, {})) for v, cells in data["layer"].items()}
    L = len(data["layer"]["all"])
    heads = data["head"].get("all", {})
    roll = data["roll"].get("all", {})
    rollout = {l: rollout_layer(l, roll[l], data["layer"]["all"].get(l, [])) for l in sorted(roll)}
    compare = {l: compare_layer(l, data["layer"]["all"][l]) for l in sorted(data["layer"]["all"])}
    d1 = [r for part in ("layer", "head") for cells in data[part].values() for rs in cells.values() for r in rs]
    all_tokens = [r for d in (data["layer"], data["head"]) for rs in d.get("all", {}).values() for r in rs]
    ratios = [x for x in (r["extra"].get("ratio_factor") for r in roll.get(L - 1, [])) if x is not None]
    tokens = None
    if base is not None:
        slots = baseline_slots(sizes_of(data))["all"]
        tokens = median(slots[key][0] for key in slots)
    return ModelFindings(
        len(data["inputs"]), L, 1 + max((h for _, h in heads), default=-1), causal, quantised, sets, rollout, compare,
        curves(roll), float_tests(d1), len(d1), sum(bool(r["extra"].get("exact")) for r in d1),
        tight_share(d1), tight_share(all_tokens), float(np.median(ratios)) if ratios else float("nan"),
        median_estimate(r["extra"].get("ratio_factor") for r in roll.get(L - 1, [])),
        {v: len(by) for v, by in sizes_of(data).items()}, sources(data, base, FAMILIES) if base is not None else (), tokens,
        float_sweep(d1))
