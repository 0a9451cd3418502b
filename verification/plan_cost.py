"""What the paper's plan costs: ``attnbounds verify --full`` measured on a 2-core machine, per section.

The paper is built from the full settings (``make paper-full``: ``attnbounds verify --full``, then
``attnbounds paper --full --pdf``; resumable: a rerun after an interruption computes only what is not
stored). Each section's cost is kept here, outside the campaigns (a measurement does not name a
campaign), bound to the digest of that section's full plan (:func:`plan_digest`, over its
``provenance()`` and fields): a section whose full plan changed since reads as not measured (:func:`measured`),
and the paper says so instead of quoting a stale number.

A section measured as ``attnbounds verify --full --only SECTION --serial`` runs on one core, as it
does in the main job's two lanes (:data:`verification.commands.SECOND_LANE_FULL`); the plan's wall time on
two cores is the longer lane's sum (:func:`lanes`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Optional


@dataclass(frozen=True)
class SectionCost:
    """``minutes`` of wall time and ``cpu_minutes`` (user + system) of one section's full plan, run as
    ``command`` on ``machine`` at ``commit`` on ``date``; ``plan``: the digest of the full plan it was
    measured at (:func:`plan_digest`)."""

    plan: str
    minutes: float
    cpu_minutes: float
    command: str
    machine: str
    commit: str
    date: str


PRESET_TABLES = {"san": "verification.san.checks.presets", "modalities": "numerics.modalities.presets"}
"""The sections whose plan names a preset, and the module whose ``PRESETS`` holds its settings."""


def plan_digest(section: str, seed: int = 0) -> str:
    """The digest of ``section``'s full plan at ``seed`` (its ``provenance()`` and its fields, which name every
    size, preset, model and input count it runs, and where it names a preset that preset's settings
    (:data:`PRESET_TABLES`); nothing loaded: the trained plan's campaign names would load every model to read
    its fingerprint)."""
    from verification.family import role

    plan = role(section, "checks").Plan.for_verify(seed, True)
    fields = dict(provenance=plan.provenance(), plan=repr(plan))
    if section in PRESET_TABLES:        # a plan that names a preset: the preset's settings too
        fields["preset"] = repr(import_module(PRESET_TABLES[section]).PRESETS[plan.preset])
    body = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(f"{section}\n{body}".encode()).hexdigest()[:8]


def measured(section: str, seed: int = 0) -> Optional[SectionCost]:
    """The measured cost of ``section``'s full plan where it was measured at the plan's present
    settings, else None."""
    cost = MEASURED.get(section)
    return cost if cost is not None and cost.plan == plan_digest(section, seed) else None


def lanes(costs: dict[str, Optional[SectionCost]]) -> Optional[tuple[float, float]]:
    """(first lane, second lane) minutes of the main job's two processes on two cores: the sections of
    :data:`verification.commands.SECOND_LANE_FULL` in one, the others in the other; None if a section is
    not measured."""
    from verification.commands import SECOND_LANE_FULL

    if any(c is None for c in costs.values()):
        return None
    first = sum(c.minutes for s, c in costs.items() if s not in SECOND_LANE_FULL)
    second = sum(c.minutes for s, c in costs.items() if s in SECOND_LANE_FULL)
    return first, second


def plan_cost(seed: int = 0) -> dict[str, Any]:
    """Every section's measured cost (None where not measured at the present plan) and the two lanes."""
    from verification.commands import FAMILIES

    costs = {s: measured(s, seed) for s in FAMILIES}
    return dict(sections=costs, lanes=lanes(costs))


MACHINE = "2 cores (docs/experiments.md), other work beside it, the section's process at scheduler priority -10"
# section -> its full plan's measured cost (filled from `/usr/bin/time` of `attnbounds verify --full --only S --serial`)
# (wall minutes with other sessions' work beside it, so the wall time is an upper figure; CPU minutes user + system)
MEASURED: dict[str, SectionCost] = {
    "dobrushin": SectionCost("950114de", 1.7, 1.4, "verify --full --only dobrushin --serial, one run", MACHINE, "3719d9a", "2026-12-07"),
    "stress": SectionCost("5587a896", 0.8, 0.7, "verify --full --only stress --serial, one run", MACHINE, "3719d9a", "2026-12-07"),
    "poincare": SectionCost("b6a2f434", 14.5, 10.5, "verify --full --only poincare --serial, one run", MACHINE, "3719d9a", "2026-12-07"),
    "prove": SectionCost("acf29f83", 33.4, 22.3, "verify --full --only prove --serial, two runs (resumed)", MACHINE, "3719d9a", "2026-12-07"),
    "rank": SectionCost("65ce7c44", 33.9, 27.3, "verify --full --only rank --serial, two runs (resumed)", MACHINE, "3719d9a", "2026-12-07"),
    "modalities": SectionCost("d1dc5a53", 66.1, 40.6, "verify --full --only modalities --serial, two runs (resumed; six seeds)", MACHINE,
                              "c31504e", "2026-12-07"),
    "trained": SectionCost("b08306f2", 56.1, 48.7, "verify --full --only trained --serial, two runs (resumed; the first at "
                           "the earlier 300-input plan, stopped after 89 MiniLM inputs), 54.4 and 47.0 minutes, and the "
                           "larger decoders' functional checks added later, 1.7 and 1.7 minutes as each check records",
                           MACHINE, "cbf8abc", "2026-12-07"),
    "san": SectionCost("223f61a0", 40.6, 62.2, "san --preset paper --workers 2 (the campaigns of verify --full's san section)",
                       MACHINE, "045048a", "2026-12-07"),
}
