"""Findings across the embedded models of the main job's plan (what the paper's trained section
shows): each model's campaign as the store holds it and its :class:`ModelFindings`, its head
means beside their two controls and random matrices of the same token counts (with the paired
comparisons over inputs that decide "above" / "below" / "not separable"), its pooled shares, and
the size of its bounds' slack and the mechanism of its equalities (:mod:`verification.trained.findings.size`).
Built once by :func:`findings` from the plan; the paper part renders them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from theory.verdicts import ALPHA, Outcome
from verification.findings import Decision, Share
from verification.measure.baselines import FAMILIES, baseline_slots, read_baselines
from verification.stats import cluster_bootstrap_difference
from verification.trained.findings.model import ModelFindings, model_findings
from verification.trained.findings.records import (BOOTSTRAP_SEED, cluster_share, collect_records, count, random_share,
                                                  sizes_of, source_order, tight)
from verification.trained.findings.size import Size, size_findings

REFERENCES = ("columns", "offdiagonal", "random")
MIN_INPUTS = 10     # fewer inputs decide nothing: a paired test over inputs (a sign test) could not reach the
                    # simultaneous level with fewer than about 9, and a bootstrap over a few inputs understates the spread
CONTROL_HITS = {"real": tight,
                "columns": lambda r: r["extra"].get("control_columns") == "tight",
                "offdiagonal": lambda r: r["extra"].get("control_offdiagonal") == "tight"}
PAIR_KINDS = ("special", "adjacent", "other")     # numerics.dobrushin.controls.PAIR_KINDS


@dataclass(frozen=True)
class Comparison:
    """The pooled head-mean share minus a reference's (:data:`REFERENCES`), with the paired
    cluster-bootstrap interval over inputs at the simultaneous level that decided it."""

    reference: str
    difference: float
    decision: Decision

    @property
    def side(self) -> int:
        """+1 where the interval lies above 0, -1 below, 0 where it holds 0."""
        lo, hi = self.decision.interval
        return 1 if lo > 0 else -1 if hi < 0 else 0


@dataclass(frozen=True)
class Controls:
    """One model's head means on all tokens, pooled over layers and inputs: the shares of the real
    verdicts and of the two controls (Wilson, design effect of the inputs), the real one's Wilson interval, the random
    Dirichlet share at matched n, the head means (and inputs: in every layer, in some) on which every
    pair is self-dominant, the kind of the maximising pair (all head means, the tight ones), and the
    comparisons (None: not compared, too few inputs; empty: causal, forced)."""

    means: int
    shares: dict[str, Share]
    real_wilson: Share
    random: Share
    every_pair: Share
    inputs_all: Share
    inputs_some: Share
    pairs: dict[str, Share]
    tight_pairs: dict[str, Share]
    comparisons: Optional[tuple[Comparison, ...]] = None


@dataclass(frozen=True)
class Model:
    """One embedded model: its campaign, findings, controls and its pooled shares (Wilson, design effect;
    None without records): the head mean, every head, every head on content tokens; the size of the
    slack and the mechanism (None where not built)."""

    name: str
    campaign: str
    findings: ModelFindings
    controls: Controls
    pooled: dict[str, Optional[Share]]
    size: Optional[Size] = None


@dataclass(frozen=True)
class Findings:
    """The trained section's findings: every model (in the plan's order), the baseline campaign, the
    comparisons made and their simultaneous level."""

    models: dict[str, Model]
    baselines: str
    comparisons: int
    level: float


def _means(data: dict) -> list:
    return [r for rs in data["layer"]["all"].values() for r in rs]


def comparisons(data: dict, base: dict, level: float) -> tuple[Comparison, ...]:
    """The head mean's pooled share against each reference: the difference with its paired cluster-
    bootstrap interval over inputs at ``level`` (:func:`verification.stats.cluster_bootstrap_difference`)."""
    mean = _means(data)
    real = per_input(mean, tight)
    keys = sorted(real)
    slots = baseline_slots(sizes_of(data))["all"]
    out = []
    for ref in REFERENCES:
        other = ({key: base[("dirichlet",) + tuple(slots[key])] for key in keys} if ref == "random"
                 else per_input(mean, CONTROL_HITS[ref]))
        k1, n1 = [real[k][0] for k in keys], [real[k][1] for k in keys]
        k2, n2 = [other[k][0] for k in keys], [other[k][1] for k in keys]
        d = sum(k1) / sum(n1) - sum(k2) / sum(n2)
        lo, hi = cluster_bootstrap_difference(k1, n1, k2, n2, BOOTSTRAP_SEED, level=level)
        outcome = Outcome.SUPPORTED.value if lo > 0 or hi < 0 else Outcome.INCONCLUSIVE.value
        out.append(Comparison(ref, d, Decision(outcome, d, (lo, hi), level, "paired cluster bootstrap over inputs")))
    return tuple(out)


def per_input(records: list, hit: Any) -> dict:
    """``{(input, text hash): (hits, verdicts)}`` of ``records``."""
    out: dict = {}
    for r in records:
        p = r["provenance"]
        k, n = out.get((p["input"], p.get("text_sha")), (0, 0))
        out[(p["input"], p.get("text_sha"))] = (k + bool(hit(r)), n + 1)
    return out


def controls(data: dict, base: dict, compared: Optional[tuple] = None) -> Controls:
    """The :class:`Controls` of one model's grouped records (``compared``: its comparisons)."""
    mean = _means(data)
    slots = baseline_slots(sizes_of(data))["all"]
    by_input: dict = {}
    for r in mean:
        p = r["provenance"]
        by_input.setdefault((p["input"], p.get("text_sha")), []).append(bool(r["extra"].get("every_pair_self_dominant")))
    ts = [r for r in mean if tight(r)]

    def kinds(rs: list) -> dict:
        return {k: count(sum(r["extra"].get("pair_kind") == k for r in rs), len(rs)) for k in PAIR_KINDS}
    return Controls(len(mean), {key: cluster_share(mean, hit) for key, hit in CONTROL_HITS.items()},
                    Share.wilson(len(ts), len(mean)), random_share(base, slots, "dirichlet"),
                    count(sum(bool(r["extra"].get("every_pair_self_dominant")) for r in mean), len(mean)),
                    count(sum(all(v) for v in by_input.values()), len(by_input)),
                    count(sum(any(v) for v in by_input.values()), len(by_input)), kinds(mean), kinds(ts), compared)


def findings(store: Any, plan: Any) -> Findings:
    """Every model of the main job's ``plan``: its campaign found in the store (the main job's inputs
    only), the random baselines of the plan's seed; a
    :class:`~verification.report.part.MissingCampaign` naming every campaign absent or incomplete
    (a model, the baselines, a campaign stored before the controls were measured)."""
    from verification.measure.text import find_campaign, model_need
    from verification.report.part import MissingCampaign
    from verification.trained.checks import baseline_campaign

    found, missing = {}, []
    for m in plan.models:       # every model's campaign looked up: all missing ones named
        try:
            found[m.model] = find_campaign(store, model_need(m.model, plan.full, plan.command()))
        except MissingCampaign as exc:
            missing.append(exc)
    baselines = baseline_campaign(plan.seed)
    base = read_baselines(store.records(campaign=baselines))
    grouped = {name: collect_records(records, None) for name, (_, records) in found.items()}
    for data in grouped.values():    # every random sample of the main inputs stored
        slots = baseline_slots(sizes_of(data))
        if not {(f, n, c) for by in slots.values() for n, c in by.values() for f in FAMILIES} <= set(base):
            missing.append(MissingCampaign(baselines, plan.command()))
            break
    if missing:
        raise MissingCampaign.combine(missing)
    for name, data in grouped.items():
        mean = _means(data)
        if not mean or "control_columns" not in mean[0]["extra"]:
            raise MissingCampaign(found[name][0], plan.command())
    causal = {name: bool(records[0]["provenance"].get("causal")) for name, (_, records) in found.items()}
    tested = [n for n, data in grouped.items() if not causal[n] and len(data["inputs"]) >= MIN_INPUTS]
    m = len(tested) * len(REFERENCES)
    level = 1 - ALPHA / max(m, 1)
    models = {}
    for name, (campaign, records) in found.items():
        data = grouped[name]
        compared = comparisons(data, base, level) if name in tested else None if not causal[name] else ()
        pooled = {"mean": _means(data), "heads": [r for rs in data["head"]["all"].values() for r in rs],
                  "content": [r for rs in data["head"].get("content", {}).values() for r in rs]}
        models[name] = Model(name, campaign,
                             model_findings(data, base, causal[name], bool(records[0]["provenance"].get("quantised"))),
                             controls(data, base, compared),
                             {k: cluster_share(rs, tight) if rs else None for k, rs in pooled.items()},
                             size_findings(data, causal[name], plan.seed, source_order(data)))
    return Findings(models, baselines, m, level)
