"""``attnbounds paper --from COMMAND`` (issue 34): a paper of your own runs. :func:`plans_from`
reads a command line of a family that supports it (:data:`FROM_FAMILIES`: stress) with that
command's own parser, giving ``{family: plan}``; the paper builder
(:func:`verification.paper.build.collect`, :func:`~verification.paper.build.check_complete`) asks
that family's ``paper_part`` and ``needs`` with ``plan=`` (:func:`call_with_plan`), so its part reads
that plan's campaign and the completeness check asks for its chunks. Without ``--from`` (None)
every family reads the main job's plans."""
from __future__ import annotations

from importlib import import_module
from typing import Any, Optional

from theory.errors import InvalidInput

FROM_FAMILIES = ("stress",)      # the families whose command line ``attnbounds paper --from`` reads


def family_of(module: str) -> Optional[str]:
    """The family (main-job section) of a dotted ``verification.<family>.paper`` module, else None
    (a test's toy family)."""
    from verification.commands import FAMILIES

    return next((section for section, package in FAMILIES.items() if module == f"{package}.paper"), None)


def plans_from(command: str) -> dict[str, Any]:
    """``attnbounds paper --from COMMAND``: ``{family: plan}`` for the command line ``COMMAND``
    (``"stress dobrushin.factor --sizes 5 --instances 20000"``, ``attnbounds`` optional), parsed by
    that command's own parser and planned as it plans (its module's ``paper_plan(argv)``). Only
    the families of :data:`FROM_FAMILIES` have one; any other command is an InvalidInput."""
    import shlex

    from verification.commands import COMMANDS, section_of

    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise InvalidInput(f"--from {command!r}: {exc}") from None
    if words[:1] == ["attnbounds"]:
        words = words[1:]
    supported = ", ".join(FROM_FAMILIES)
    head = words[0] if words else ""
    try:
        family = section_of(head)
    except KeyError:
        family = None
    if family not in FROM_FAMILIES or head not in COMMANDS:
        what = f"the {head} command" if head in COMMANDS else (f"{head!r}, no command" if head else "no command")
        raise InvalidInput(f"--from {command!r}: names {what}; --from reads the command line of a sweep of "
                           f"these families only: {supported} (e.g. --from \"stress dobrushin.factor "
                           "--sizes 5 --instances 20000\")")
    module = import_module(COMMANDS[head].module)
    try:
        plan = module.paper_plan(words)
    except InvalidInput as exc:
        raise InvalidInput(f"--from {command!r}: {exc}") from None
    return {family: plan}


def call_with_plan(module: Any, name: str, fn: str, store: Any, seed: int, full: bool, plans: Optional[dict]) -> Any:
    """``module.<fn>(store, seed=, full=)``, with ``plan=`` when ``plans`` holds its family."""
    family = family_of(name)
    kw = {"plan": plans[family]} if plans and family in plans else {}
    return getattr(module, fn)(store, seed=seed, full=full, **kw)
