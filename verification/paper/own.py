"""``attnbounds paper --from COMMAND`` on a store that holds only your own run: a short document of
that run alone, beside no main job.

When the store lacks the main job's campaigns of the other families (:func:`main_job_missing`),
the paper command writes, instead of the paper, the document of the plans ``--from`` gave: for
each, its family's report (``report(store, plan, out/tables ...)``: the tables as Markdown and CSV,
the figures, read from the store only) and ``own.md``, which names the command line, the plan's
provenance (:meth:`~verification.plan.Plan.provenance`), the campaigns, and holds every table the
report wrote. It is built from complete campaigns only: every campaign the plan itself fills must
hold every chunk its plan defines, each matching its mark (:func:`check_own`); the campaigns the
paper's section would read beside it (another run's) are not asked for.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Optional

from numerics.atomic import write_text
from theory.errors import InvalidInput
from verification.plan import provenance_line

OWN = "own.md"


def main_job_missing(store: Any, plans: dict[str, Any], seed: int, full: bool) -> Optional[str]:
    """None when ``store`` holds every campaign the main job's other families (those not in
    ``plans``) read, complete; else the completeness check's one-line refusal."""
    from verification.commands import FAMILIES, module_of
    from verification.paper.parts import check_complete

    others = [module_of(f, "paper") for f in FAMILIES if f not in plans]
    try:
        check_complete(store, None, others, seed, full)
    except InvalidInput as exc:
        return str(exc)
    return None


def own_needs(store: Any, family: str, plan: Any) -> list:
    """The needs of ``family``'s part for ``plan`` that are campaigns the plan itself fills."""
    from verification.family import role

    mine = set(plan.campaigns())
    return [n for n in role(family, "paper").needs(store, plan) if n.campaign in mine]


def own_theorem(plans: dict[str, Any]) -> bool:
    """Whether a plan sweeps a user's theorem (its family's paper module's ``own_theorem``): its
    document is written on its own, whatever else the store holds."""
    from verification.family import role

    return any(getattr(role(family, "paper"), "own_theorem", lambda plan: False)(plan) for family, plan in plans.items())


def check_own(store: Any, plans: dict[str, Any]) -> None:
    """Refuse (one line, :class:`~verification.report.part.IncompleteCampaigns`) a store where a
    campaign the ``plans`` fill lacks a chunk of its plan or one does not match its mark."""
    from verification.report.part import check_needs

    needs = [n for family, plan in plans.items() for n in own_needs(store, family, plan)]
    if not needs:
        names = ", ".join(c for plan in plans.values() for c in plan.campaigns())
        raise InvalidInput(f"--from: the store holds none of the campaigns of that command line ({names}): "
                           "run that command first, with the same --db")
    try:
        check_needs(store, needs)
    except InvalidInput as exc:
        mine = InvalidInput(str(exc).replace("the paper reads only complete campaigns of the main job",
                                             "--from: the document of your run reads only its complete campaigns"))
        if getattr(exc, "headline", None):
            mine.headline = exc.headline.replace("the paper needs", "--from: the document of your run needs", 1)
            mine.details = exc.details
        raise mine from None


def build_own(store: Any, out: str | Path, plans: dict[str, Any], note: str = "") -> Path:
    """Write the document of ``plans`` alone under ``out`` (see the module docstring); its path.
    ``note``: why the main paper was not built (the other families' campaigns are absent)."""
    from rich.console import Console

    from verification.family import role

    out = Path(out)
    check_own(store, plans)
    lines = ["# Your run", ""]
    if note and own_theorem(plans):
        lines += ["The document of your theorem's run alone (a theorem over theory.expr is not a part of the paper).",
                  ""]
    elif note:
        lines += ["Not the paper: the store holds no complete main job (`attnbounds verify`), so this is the "
                  "document of the run below alone.", ""]
    def stamps(folder: Path, pattern: str) -> dict:
        return {f: f.stat().st_mtime_ns for f in folder.glob(pattern)} if folder.is_dir() else {}

    for family, plan in plans.items():
        tables, figs = out / "tables", out / "figures"
        before, figs_before = stamps(tables, "*.md"), stamps(figs, "*.png")
        quiet = Console(file=io.StringIO(), width=120)
        role(family, "report").report(store, plan, out, quiet)
        written = sorted(f for f, t in stamps(tables, "*.md").items() if before.get(f) != t)
        figures = sorted(f for f, t in stamps(figs, "*.png").items() if figs_before.get(f) != t)
        lines += [f"## {family}", "", "```", plan.command(), "```", "",
                  f"Provenance: {provenance_line(plan.provenance())}.", "",
                  "Campaigns: " + ", ".join(f"`{c}`" for c in plan.campaigns()) + ".", ""]
        lines += getattr(role(family, "report"), "own_lines", lambda store, plan: [])(store, plan)
        for table in written:
            lines += [f"### {table.stem}", "", table.read_text().strip(), "",
                      f"(data: `tables/{table.stem}.csv`)", ""]
        lines += [f"![{f.stem}](figures/{f.name})" for f in figures] + ([""] if figures else [])
    path = out / OWN
    write_text(path, "\n".join(lines).rstrip() + "\n")
    return path
