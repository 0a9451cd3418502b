"""The SAN family's part of the paper: :func:`verification.san.report.part.paper_part` (one
preset's tables, figures and macros, built by the report) and what it reads (:func:`needs`)."""
from __future__ import annotations

from typing import Any

from verification.report.part import Need
from verification.san.checks.claims import claims_campaign, claims_chunk, path_runs
from verification.san.checks.presets import KERNELS, PRESETS, campaign_name
from verification.san.report.part import paper_part, prose_guards, san_command  # noqa: F401  (the paper's part)


def needs(store: Any, seed: int = 0, full: bool = False) -> list[Need]:
    """The runs campaign of every numerical path of the main job's preset (one chunk per trained
    model, :func:`verification.san.checks.runs.plan`) and, once they are complete, the claims
    decided from exactly those runs (:func:`verification.san.checks.claims.claims_chunk`)."""
    from verification.san.checks.runs import plan

    name = "paper" if full else "quick"
    camps = {k: campaign_name(PRESETS[name], seed, k) for k in KERNELS}
    out = [Need("san", c, frozenset(r.key for r in plan(PRESETS[name], seed, k)), san_command(name, seed))
           for k, c in camps.items()]
    if all(n.chunks <= store.done_chunks(n.campaign) for n in out):
        paths = path_runs(store, camps)
        if KERNELS[0] in paths:
            out.append(Need("san", claims_campaign(camps[KERNELS[0]]), frozenset({claims_chunk(paths)}),
                            san_command(name, seed)))
    return out
