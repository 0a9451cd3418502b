"""The SAN family's part of the paper: :func:`verification.san.report.part.paper_part` (one
preset's tables, figures and macros, built by the report) and what it reads (:func:`needs`)."""
from __future__ import annotations

from typing import Any

from verification.report.part import Need
from verification.san.checks.decide import claims_campaign, claims_chunk, path_runs
from verification.san.checks.presets import PRESETS
from verification.san.report.part import paper_part, prose_guards  # noqa: F401  (the paper's part)


def needs(store: Any, plan: Any) -> list[Need]:
    """The runs campaign of every numerical path of ``plan`` (a :class:`verification.san.checks.Plan`;
    one chunk per trained model, :func:`verification.san.checks.runs.plan`) and, once they are
    complete, the claims decided from exactly those runs
    (:func:`verification.san.checks.decide.claims_chunk`), each filled by ``plan.command()``."""
    from verification.san.checks.runs import plan as runs_of

    preset, cmd = PRESETS[plan.preset], plan.command()
    camps = plan.runs_campaigns()
    out = [Need("san", c, frozenset(r.key for r in runs_of(preset, plan.seed, k, plan.device)), cmd)
           for k, c in camps.items()]
    if all(n.chunks <= store.done_chunks(n.campaign) for n in out):
        paths = path_runs(store, camps)
        first = next(iter(camps))
        if first in paths:
            out.append(Need("san", claims_campaign(camps[first]), frozenset({claims_chunk(paths)}), cmd))
    return out
