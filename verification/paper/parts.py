"""Which parts a document is built from: one plan per family, made once and handed to the family's
``paper_part(store, plan)`` and ``needs(store, plan)``.

The plans are the main job's (``checks.Plan.for_verify(seed, full)`` of every family,
:func:`main_plans`) unless ``attnbounds paper --from COMMAND`` gave a family the plan of that command
line (:func:`verification.paper.from_plans.plans_from`). A module that is not a family's paper role
(a test's toy family) is called with the plan ``plans`` holds under its own dotted name, else None.
:func:`check_complete` refuses, before any part is built, a store where a campaign a part reads is
absent or lacks a chunk of its plan (each chunk as its mark says it was stored);
:func:`collect` then builds every part, naming every campaign all of them lack in one error.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any, Optional, Sequence

from verification.report.part import MissingCampaign, Part


def paper_modules() -> tuple[str, ...]:
    """Each family's ``paper`` role (``verification.<family>.paper``), in main-job order, from the
    one table of families (:data:`verification.commands.FAMILIES`)."""
    from verification.commands import FAMILIES, module_of

    return tuple(module_of(section, "paper") for section in FAMILIES)


def main_plans(seed: int = 0, full: bool = False, families: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """``{family: checks.Plan.for_verify(seed, full)}``: the main job's plan of each family (of
    ``families``, default every family), each made once."""
    from verification.commands import FAMILIES
    from verification.family import role

    return {f: role(f, "checks").Plan.for_verify(seed, full) for f in (families or FAMILIES)}


def plan_of(name: str, plans: Optional[dict[str, Any]], seed: int, full: bool) -> Any:
    """The plan the paper module ``name`` reads: its family's in ``plans``, else its family's main-job
    plan; a module that is no family's (a test's toy family): ``plans[name]``, else None."""
    from verification.family import role
    from verification.paper.from_plans import family_of

    plans = plans or {}
    family = family_of(name)
    if family is None:
        return plans.get(name)
    if family in plans:
        return plans[family]
    return role(family, "checks").Plan.for_verify(seed, full)


def check_complete(store: Any, plans: Optional[dict[str, Any]] = None, families: Optional[Sequence[str]] = None,
                   seed: int = 0, full: bool = False) -> list:
    """Before any part is built or anything written: every module's ``needs(store, plan)`` (the
    campaigns its part reads and the chunk keys its plan defines) checked at once by
    :func:`verification.report.part.check_needs`: a chunk counts as stored when its content matches
    its mark (:meth:`~verification.store.ResultStore.chunk_check`, one pass per campaign), so a
    record or summary deleted or edited by hand is refused; one short line names the first
    incomplete campaigns (family, ``k of N chunks stored (M missing, e.g. key; J not matching their
    marks, e.g. key and what differs)``, command), how many more, and the command that fills them
    all (the main job's, ``attnbounds verify --seed S [--full]``, when neither ``plans`` nor
    ``families`` narrow it) or else the first few remaining commands. ``families``: dotted module
    names (default :func:`paper_modules`); ``seed``/``full``: the main job whose plans the families
    absent from ``plans`` read."""
    from verification.report.part import check_needs

    names = list(families or paper_modules())
    needs = []
    for name in names:
        module = import_module(name)
        if hasattr(module, "needs"):
            needs += module.needs(store, plan_of(name, plans, seed, full))
    main_job = f"attnbounds verify --seed {seed}" + (" --full" if full else "") if not plans and not families else None
    check_needs(store, needs, fills_all=main_job)
    return needs


def collect(store: Any, plans: Optional[dict[str, Any]] = None, families: Optional[Sequence[str]] = None,
            seed: int = 0, full: bool = False) -> list[Part]:
    """Each family's part, in main-job order: ``paper_part(store, plan)`` of each module of
    ``families`` (dotted names; default :func:`paper_modules`) with its plan (:func:`plan_of`); a
    module without it is an error. First :func:`check_complete`; then every family is asked: the
    campaigns all of them lack are named together in one :class:`MissingCampaign` (each with the
    command that fills it)."""
    check_complete(store, plans, families, seed, full)
    parts, missing = [], []
    for name in families or paper_modules():
        module = import_module(name)
        if not hasattr(module, "paper_part"):
            raise ValueError(f"{name} has no paper_part(store, plan)")
        try:
            parts.append(module.paper_part(store, plan_of(name, plans, seed, full)))
        except MissingCampaign as exc:
            missing.append(exc)
    if missing:
        raise MissingCampaign.combine(missing)
    return parts
