"""``attnbounds paper --from COMMAND``: a document of your own runs. :func:`plans_from` reads the
command line of a family's subcommand (:func:`from_families`) with that command's own parser and
plans it as the command does (its ``checks.Plan.from_args``, :mod:`verification.family`), giving
``{family: plan}``; the family's paper module may refuse a plan its tables cannot show (its
``check_plan``). The paper builder (:mod:`verification.paper.parts`) hands that plan to the
family's ``paper_part(store, plan)`` and ``needs(store, plan)``, so its part reads that plan's
campaigns and the completeness check asks for its chunks; every other family reads the main job's
plan. On a store that holds only the user's campaigns, :mod:`verification.paper.own` writes a
short document of those parts alone."""
from __future__ import annotations

import argparse
from importlib import import_module
from typing import Any, Optional

from theory.errors import InvalidInput


def family_of(module: str) -> Optional[str]:
    """The family (main-job section) of a dotted ``verification.<family>.paper`` module, else None
    (a test's toy family)."""
    from verification.commands import FAMILIES

    return next((section for section, package in FAMILIES.items() if module == f"{package}.paper"), None)


def from_families() -> tuple[str, ...]:
    """The families ``--from`` can read: every family with a subcommand of its own whose line its
    ``checks.Plan.from_args`` plans (its paper module's ``check_plan``, where it has one, refuses a
    plan its tables cannot show)."""
    from verification.commands import COMMANDS, FAMILIES, section_of

    heads = set()
    for command in COMMANDS:
        try:
            heads.add(section_of(command))
        except KeyError:            # verify, theorems, paper: no family's plan
            pass
    return tuple(s for s in FAMILIES if s in heads)


class _Refusing(argparse.ArgumentParser):
    """A parser whose errors are an InvalidInput (one line), not a usage message and an exit."""

    def error(self, message: str) -> None:   # type: ignore[override]
        raise InvalidInput(message)


def plans_from(command: str) -> dict[str, Any]:
    """``attnbounds paper --from COMMAND``: ``{family: plan}`` for the command line ``COMMAND``
    (``"stress dobrushin.factor --sizes 5 --instances 20000"``, ``attnbounds`` optional), parsed by
    that command's own parser (its ``register``) and planned by ``Plan.from_args``. A command of a
    family not in :func:`from_families`, or a line its parser or its paper refuses, is an InvalidInput."""
    import shlex

    from verification.commands import COMMANDS, section_of
    from verification.family import role

    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise InvalidInput(f"--from {command!r}: {exc}") from None
    if words[:1] == ["attnbounds"]:
        words = words[1:]
    from theory.plugins import load_file, theory_files

    for f in theory_files(words):          # its theorems are known before its line is parsed
        try:
            load_file(f)
        except InvalidInput as exc:
            raise InvalidInput(f"--from {command!r}: {exc}") from None
    supported = from_families()
    head = words[0] if words else ""
    try:
        family = section_of(head)
    except KeyError:
        family = None
    if family not in supported or head not in COMMANDS:
        what = f"the {head} command" if head in COMMANDS else (f"{head!r}, no command" if head else "no command")
        raise InvalidInput(f"--from {command!r}: names {what}; --from reads the command line of a run of "
                           f"these families only: {', '.join(supported)} (e.g. --from \"stress dobrushin.factor "
                           "--sizes 5 --instances 20000\")")
    try:
        if {"-h", "--help"} & set(words):
            raise InvalidInput("a command line to read, not --help")
        parser = _Refusing(prog="attnbounds", add_help=False)
        getattr(import_module(COMMANDS[head].module), COMMANDS[head].register)(parser.add_subparsers(dest="command"))
        plan = role(family, "checks").Plan.from_args(parser.parse_args(list(words)))
        check = getattr(role(family, "paper"), "check_plan", None)
        if check is not None:
            check(plan)
    except InvalidInput as exc:
        raise InvalidInput(f"--from {command!r}: {exc}") from None
    return {family: plan}
