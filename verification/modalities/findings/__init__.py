"""The modalities family's findings: :func:`findings` reads the plan's stored chunks once and
returns a frozen :class:`Findings` of typed values (no text made from numbers), which the report
(:mod:`verification.modalities.report`) and the paper part (:mod:`verification.modalities.paper`)
both render.

    stages       records -> one frozen Stage per (model, seed, checkpoint): per-layer Wilson shares;
                 the text models as-is
    seeds        across seeds: one Summary per (model, token set): t spreads over seeds, random
                 baselines and text at matched n
    comparisons  the seed-level tests (against the references, initialisation, depth) on one footing:
                 one Comparison per test with its Decision, simultaneous over the run (Bonferroni);
                 TOST, minimum detectable effects
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verification.modalities.findings.seeds import Summary, summarise, text_shares
from verification.modalities.findings.stages import (VARIANTS, Stage, TextSource, modality_stages, text_stages,
                                                     verified_records)
from verification.report.part import MissingCampaign


@dataclass(frozen=True)
class Matched:
    """MiniLM cut to T tokens (the text at the models' token counts): the stored campaigns read, one
    per T of ``lengths``, each of the first ``limit`` inputs with at least T tokens; none stored:
    ``campaigns`` empty, ``prefix`` the campaigns looked for."""

    model: str
    campaigns: tuple[str, ...]
    lengths: tuple[int, ...]
    limit: int
    prefix: str


@dataclass(frozen=True)
class Findings:
    """What the modalities tables, figures and macros of one plan show: the base seed's stages
    (``stages``), those of every seed (``every``), the text models as-is and where they came from,
    MiniLM at matched n, one :class:`Summary` per (model, token set) with its comparisons, and every
    campaign read."""

    preset: str
    seed: int
    command: str
    stages: tuple[Stage, ...]
    every: tuple[Stage, ...]
    texts: tuple[Stage, ...]
    text_sources: tuple[TextSource, ...]
    matched: Matched
    summaries: tuple[Summary, ...]
    campaigns: tuple[str, ...]

    @property
    def seeds(self) -> list[int]:
        return sorted({s.seed for s in self.every})


def text_matched(store: Any, limit: int) -> tuple[dict, Matched]:
    """MiniLM at matched n: ``({(variant, n): per-input shares}, Matched)``; per T the stored
    campaign of ``limit`` inputs with the most verified records (ties: the first name)."""
    from verification.modalities.checks import TEXT_MODEL, text_campaign_of, text_prefix

    prefix = text_prefix(TEXT_MODEL)
    by: dict = {}
    for c in sorted(store.campaigns(prefix)):
        T, k = text_campaign_of(c)
        if k == limit:
            by[c] = (T, list(verified_records(store, c)))
    best: dict = {}
    for c, (T, recs) in by.items():
        if T not in best or len(recs) > len(by[best[T]][1]):
            best[T] = c
    lengths = tuple(sorted(best))
    chosen = tuple(best[T] for T in lengths)
    shares = text_shares(r for c in chosen for r in by[c][1])
    return shares, Matched(TEXT_MODEL, chosen, lengths, limit, prefix)


def findings(store: Any, plan: Any) -> Findings:
    """The findings of ``plan`` (:class:`verification.modalities.checks.Plan`) from the store: its
    stages at every seed of the preset, the text rows, the random baselines and MiniLM at matched n;
    a :class:`MissingCampaign` without the base seed's stages."""
    from numerics.modalities.presets import PRESETS
    from verification.measure.baselines import pool_by_size, read_baselines
    from verification.modalities.checks import TEXT_MODEL, baseline_campaign, campaign_prefix

    p = PRESETS[plan.preset]
    every = modality_stages(store, plan, every_seed=True)
    stages = [s for s in every if s.seed == plan.seed]
    if not stages:
        raise MissingCampaign(f"{campaign_prefix(plan.preset, plan.seed)}*", plan.command())
    texts, sources = text_stages(store, plan)
    base = baseline_campaign(plan.seed, p.baseline_count)
    shares, matched = text_matched(store, p.text_inputs)
    asis = {v: t.input_shares.get(v, ()) for t in texts if t.model == TEXT_MODEL for v in VARIANTS}
    summaries = summarise(every, pool_by_size(read_baselines(verified_records(store, base))), shares, asis)
    return Findings(plan.preset, plan.seed, plan.command(), tuple(stages), tuple(every), tuple(texts),
                    tuple(sources), matched, tuple(summaries),
                    tuple(dict.fromkeys(s.campaign for s in every + texts)) + (base,) + matched.campaigns)
