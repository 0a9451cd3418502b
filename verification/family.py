"""The one shape of a theorem family: the same entry points in every ``verification.<family>``
package (listed in :data:`ENTRY_POINTS`; ``tests/test_architecture.py`` checks every family of
:data:`verification.commands.FAMILIES` against it), and the two bodies every command shares.

A family's ``checks`` (a module, or a package's ``__init__``) exposes

- ``Plan``: what a run covers, of the one protocol :class:`verification.plan.Plan` (seed, full,
  ``campaigns()``, ``command()``, ``provenance()``, ``check()``), made once by ``Plan.for_verify(seed, full)``
  (the plan of ``attnbounds verify [--full]``'s section) or ``Plan.from_args(args)`` (the plan of
  the family's own parsed command line, validated before any work) and then handed on, never
  rebuilt from (seed, full);
- ``run(plan, store, executor=None, console=None) -> RunResult``: every campaign of the plan,
  resumed (:func:`verification.plan.recording`: what was computed, skipped, stored, per campaign);
- optionally ``plan.at(out_dir)``: the plan with the files it keeps (checkpoints) under the job's
  ``--out`` (the main job's plans of the families that train models);
- ``FULL_SCALES``: what ``--full`` scales, in one sentence. Everywhere ``--full`` means the same
  thing: the plan of ``attnbounds verify --full`` (the paper's full tables), and no ``--full`` the
  main job's quick plan; the sentence says which sizes that changes in this family.

Its ``findings`` exposes ``findings(store, plan) -> Findings``: a frozen dataclass of typed values
(:mod:`verification.findings`: shares with their counts, estimates, decisions with their statistic,
interval, level and method, per-cell tallies) built once from the plan's stored chunks, with no
formatting; every statistical decision is made there or in the checks, through
:mod:`verification.stats`. Its ``report`` exposes ``report(store, plan, out_dir, console)``: the
findings rendered as tables (Markdown and CSV under ``out_dir/tables``) and figures (under
``out_dir/figures``). Its ``paper`` exposes ``paper_part(store, plan)`` and ``needs(store, plan)``
(:mod:`verification.report.part`: the same findings rendered as macros and tables): the paper builder hands them the plan it made once
(:mod:`verification.paper.parts`: the main job's, or ``attnbounds paper --from``'s). No public
function of a family's report or paper takes ``seed`` or ``full``. Its ``command`` exposes
``register(subparsers)`` and ``verify_section(ctx)``.

>>> sorted(ENTRY_POINTS)
['checks', 'command', 'findings', 'paper', 'report']
>>> PLAN_METHODS
('for_verify', 'from_args', 'campaigns', 'command', 'provenance', 'check')
"""
from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any, Optional

from verification.plan import PLAN_PROTOCOL as PLAN_METHODS  # the plan protocol's methods
from verification.plan import assert_valid

# role -> the names every family's role module defines
ENTRY_POINTS: dict[str, tuple[str, ...]] = {
    "checks": ("Plan", "run", "FULL_SCALES"),
    "findings": ("findings",),
    "report": ("report",),
    "paper": ("paper_part", "needs"),
    "command": ("register", "verify_section"),
}


def role(section: str, name: str) -> Any:
    """The module of role ``name`` (checks, report, paper, command) of the family ``section``."""
    from verification.commands import FAMILIES

    return import_module(f"{FAMILIES[section]}.{name}")


def main_plans(sections: Any, seed: int, full: bool, families: Optional[dict] = None) -> list:
    """The main job's plan of each of ``sections`` (``Plan.for_verify(seed, full)`` of the family
    package ``families[section]``, default :data:`verification.commands.FAMILIES`), each checked
    (:func:`verification.plan.assert_valid`: an invalid one is a bug, raised before any work)."""
    if families is None:
        from verification.commands import FAMILIES as families
    return [assert_valid(import_module(f"{families[s]}.checks").Plan.for_verify(seed, full)) for s in sections]


def verify(ctx: Any, section: str, title: Optional[str] = None, executor: Any = None) -> Any:
    """The main-job section of a family: its ``Plan.for_verify(seed, full)`` (checked:
    :func:`main_plans`), run (resumed) into the job's store, then its report under the job's
    ``--out``; the plan."""
    checks = role(section, "checks")
    plan, = main_plans((section,), ctx.seed, ctx.full)
    if hasattr(plan, "at"):
        plan = plan.at(ctx.out_dir)
    if title:
        ctx.console.rule(f"[bold]{title}")
    checks.run(plan, ctx.store, executor=executor, console=ctx.console)
    role(section, "report").report(ctx.store, plan, Path(ctx.out_dir), ctx.console)
    return plan


def command(section: str, args: Any, executor: Any = None) -> Any:
    """The body of a family's subcommand: ``Plan.from_args(args)`` (refused before the store is
    opened), run into ``--db``, report under ``--out``; what the report returns."""
    from verification.options import make_console
    from verification.store import ResultStore

    checks = role(section, "checks")
    plan = checks.Plan.from_args(args)
    console = make_console()
    with ResultStore(args.db) as store:
        checks.run(plan, store, executor=executor, console=console)
        return role(section, "report").report(store, plan, Path(args.out), console)
