"""What a stress campaign runs.

plan (the campaign: theorem, cells, chunks, regeneration of any instance), sweep (one chunk of
single matrices or pairs: float filter, exact certification, summary; the one vectorised check of
Theorems D1 and D2, :func:`~numerics.dobrushin.batch.check_batch`), rollout (one chunk of
stacks of L layers: Theorem D2 at every rollout step), summaries (per-chunk summary, kept
instances, merge), search (hypothesis ``target()`` and a local optimiser on the simplex rows),
section (what the main job's stress section runs). :func:`chunks` gives the chunks of any plan.
"""
from __future__ import annotations

from typing import Any


def chunks(plan: Any) -> list:
    """The chunks of a :class:`~verification.stress.checks.plan.StressPlan`: stacks of layers for
    the rollout target (:func:`verification.stress.checks.rollout.chunks`), single matrices or
    pairs for every other theorem (:func:`verification.stress.checks.sweep.chunks`)."""
    if plan.spec.kind == "rollout":
        from verification.stress.checks.rollout import chunks as rollout_chunks

        return rollout_chunks(plan)
    from verification.stress.checks.sweep import chunks as sweep_chunks

    return sweep_chunks(plan)
