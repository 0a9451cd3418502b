"""The trained-transformer part of the paper: per model (all-MiniLM-L6-v2, SmolLM2-135M, Gemma 3 270M,
AntiBERTy, DINOv2-S; with ``--full`` also Qwen2.5-Coder 0.5B and 1.5B), per layer and head, how often Theorem D1's equality holds (all tokens, content
tokens, first position dropped), how tight rollout is and the D2 chain, rendered to macros, tables
and figures from the findings of :mod:`verification.trained.findings` (the same values the
report renders; nothing is recomputed, no model is loaded).

The campaign of a model is found in the store by its settings (:func:`verification.measure.text.model_need`),
and only the chunks of the main job's inputs are read (:func:`verification.measure.text.main_inputs`),
so the inputs a user's ``attnbounds rollout --limit ...`` adds to the same campaign never reach the
paper; when several fingerprints were measured, the one with the most of those inputs is reported.
The random baselines at matched token counts are read from the seed's baseline campaign
(:func:`verification.trained.checks.baseline_campaign`). The part is built from the trained plan
(``paper_part(store, plan)``, ``needs(store, plan)``): the main job's at its seed, quick or full
(:func:`check_plan`); every command it names is ``plan.command()``. Tables ``trained-d1-<model>``,
``trained-sources-<model>``, ``trained-rollout-<model>``, ``trained-heads-<model>``,
``trained-compare-<model>``, and across the models ``trained-models`` (one row per model),
``trained-float`` (what a float test at tolerance 0 gets wrong against the exact verdicts),
``trained-float-sweep`` and ``trained-float-ties`` (the float tests at every tolerance, the verdicts
within rounding of a tie: :mod:`verification.trained.paper.sweep`) and
``trained-controls`` and ``trained-size`` (the size of the slack; with the mechanism of D1's equality:
:mod:`verification.trained.paper.size`), ``trained-functional`` (data: each checkpoint's
functional check and origin: :mod:`verification.trained.paper.functional`); figures ``trained-heads-<model>``, ``trained-rollout-<model>``,
``trained-depth`` and ``trained-chain-ratio``.
"""
from __future__ import annotations

from typing import Any

from theory.errors import InvalidInput

from verification.measure.baselines import baseline_slots
from verification.measure.text import main_models, model_need
from verification.report.part import Need, Part, complete
from verification.trained.checks import Plan, baseline_campaign, baseline_chunks
from verification.trained.paper.across import chain_part, float_part, models_part
from verification.trained.findings.functional import functional_findings
from verification.trained.findings.functional import needs as functional_needs
from verification.trained.paper.controls import controls_part
from verification.trained.paper.functional import functional_part
from verification.trained.paper.model import model_part
from verification.trained.paper.names import MODELS
from verification.trained.paper.size import size_part
from verification.trained.paper.sweep import sweep_part
from verification.trained.findings import findings
from verification.trained.findings.records import collect_records, sizes_of


def check_plan(plan: Plan) -> None:
    """The paper's trained section shows the main job's plan (every embedded model on its main-job
    inputs, at any seed, quick or ``--full``: :meth:`Plan.is_main`); another plan (``attnbounds paper
    --from "rollout ..."``: one model) is refused in one line, its tables being the command's own."""
    if not plan.is_main():
        shown = [n for n in main_models(plan.full) if n in MODELS]
        raise InvalidInput(f"the paper's trained section shows the models {', '.join(shown)} on the main job's "
                           f"inputs (attnbounds verify --only trained); `{plan.command()}` writes its own tables "
                           "under its --out")


def model_needs(plan: Plan) -> list[Need]:
    """Each model's campaign of ``plan`` (up to the weights' fingerprint) and its input chunks."""
    return [model_need(m.model, plan.full, plan.command()) for m in plan.models]


def needs(store: Any, plan: Plan) -> list[Need]:
    """Every model's campaign of ``plan`` and, once they are complete, the random baselines at their
    stored token counts (the samples :func:`verification.trained.checks.measure_baselines` draws for them)."""
    check_plan(plan)
    models = model_needs(plan)
    checks = functional_needs(plan)        # each checkpoint's functional check
    found = [complete(store, need) for need in models]
    if not all(found):
        return models + checks             # the baselines follow the token counts still to be measured
    keys = set()
    for need, camp in zip(models, found):
        records = [r for r in store.records(camp) if r["chunk"] in need.chunks]
        keys |= {c.key for c in baseline_chunks(baseline_slots(sizes_of(collect_records(records, None))), plan.seed)}
    return models + [Need("trained", baseline_campaign(plan.seed), frozenset(keys), plan.command())] + checks


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables, figures and macros of every embedded model of ``plan`` (the main job's: :func:`check_plan`;
    see the module docstring), rendered from its findings (:func:`verification.trained.findings.findings`)."""
    check_plan(plan)
    part = Part("trained", commands=[plan.command()])
    found = findings(store, plan)
    for m in found.models.values():
        model_part(part, m, plan, found.baselines)
    float_part(part, found)
    sweep_part(part, found)
    models_part(part, found)
    controls_part(part, found)
    chain_part(part, found)
    size_part(part, found)
    functional_part(part, functional_findings(store, plan))
    return part
