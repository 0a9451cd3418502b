"""Findings of the functional checks (:mod:`verification.trained.checks.functional`): per model of
the main job's plan, the checkpoint's origin and whether it works as published, read from its one
stored outcome record (the decision was made when the check ran, through :mod:`verification.stats`;
nothing is recomputed here).

A model's functional campaign is the one of the same weights as its attention campaign: the
fingerprint that ends the attention campaign's name (found by
:func:`verification.measure.text.model_need`) ends the functional campaign's too, so the paper never
pairs the attention of one checkpoint with the check of another.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from verification.findings import Decision, Estimate
from verification.report.part import MissingCampaign, Need, resolve


@dataclass(frozen=True)
class Functional:
    """One model's functional check: its metric (``better``: lower or higher), the model's and the
    baseline's means over the ``inputs`` scored, the decision on the mean improvement (its paired t
    interval, p-value of "above 0", outcome), the corpus, the seconds it took, and the checkpoint's
    origin (:func:`numerics.sources.upstream.origin`'s fields)."""

    model: str
    campaign: str
    kind: str            # decoder, masked, sentence, saliency (verification.trained.checks.functional.KIND)
    metric: str
    better: str
    baseline: str
    model_value: Estimate
    baseline_value: Estimate
    decision: Decision
    inputs: int
    corpus: str
    seconds: float
    origin: dict

    @property
    def works(self) -> bool:
        """The checkpoint beats its baseline (the outcome is supported)."""
        return self.decision.outcome == "supported"


def functional_campaign(store: Any, name: str, plan: Any) -> Optional[str]:
    """The functional campaign of the main job's model ``name`` in ``plan``: the functional prefix
    and the fingerprint of its stored attention campaign (None: that campaign is not stored)."""
    from verification.measure.text import campaign_prefix, model_need, settings
    from verification.trained.checks.functional import campaign_prefix as functional_prefix

    camp, _ = resolve(store, model_need(name, plan.full, plan.command()))
    if camp is None:
        return None
    fingerprint = camp[len(campaign_prefix(name, plan.full)):]
    return functional_prefix(name, settings(name, plan.full)["max_tokens"]) + fingerprint


def needs(plan: Any) -> list[Need]:
    """One chunk per model of ``plan`` with a functional check, under its name up to the fingerprint (the
    newest stored): which fingerprint is read, the attention campaign's, :func:`functional_findings` decides."""
    from verification.measure.text import settings
    from verification.trained.checks.functional import CHUNK, applies, campaign_prefix

    return [Need("trained", campaign_prefix(m.model, settings(m.model, plan.full)["max_tokens"]), frozenset({CHUNK}),
                 plan.command(), prefix=True, pick="newest") for m in plan.models if applies(m.model)]


def functional_findings(store: Any, plan: Any) -> dict[str, Functional]:
    """``{model: Functional}`` for every model of ``plan`` with a functional check, in plan order; a
    :class:`~verification.report.part.MissingCampaign` naming every one not stored."""
    from verification.trained.checks.functional import THEOREM, applies

    out, missing = {}, []
    for m in plan.models:
        if not applies(m.model):
            continue
        camp = functional_campaign(store, m.model, plan)
        records = [] if camp is None else [r for r in store.records(camp) if r["theorem"] == THEOREM]
        if not records:
            missing.append(MissingCampaign(camp or f"trained-functional (model {m.model})", plan.command()))
            continue
        out[m.model] = functional_of(records[0], camp)
    if missing:
        raise MissingCampaign.combine(missing)
    return out


def functional_of(record: dict, campaign: str) -> Functional:
    """The :class:`Functional` of one stored outcome record."""
    p, x = record["provenance"], record["extra"]
    n = len(p["inputs"])
    lo, hi = x["interval"]
    decision = Decision(record["verdict"], x["statistic"], (lo, hi), method=x["method"], p=x.get("p"))
    return Functional(p["model"], campaign, p["kind"], x["metric"], x["better"], x["baseline"],
                      Estimate(record["value"], method="mean over inputs", n=n),
                      Estimate(record["bound"], method="mean over inputs", n=n), decision, n, p["corpus"],
                      float(x["seconds"]), dict(p["origin"]))
