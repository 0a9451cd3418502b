"""The one table of theorem families and command-line commands (pip's ``commands/__init__.py``
pattern): names and dotted module paths only, so that reading it imports nothing.

:data:`FAMILIES` lists the family packages ``verification.<family>`` in main-job order, keyed by
their main-job section. Each package has the same five roles (``checks``, ``findings``, ``report``, ``paper``,
``command``); ``attnbounds verify`` imports ``verification.<family>.command`` for each section it
runs (its ``verify_section(ctx)``), and the paper builder imports ``verification.<family>.paper``
(its ``paper_part(store, seed, full)``).

:data:`COMMANDS` maps each subcommand to the module whose registering function adds it to the
parser, and its one-line help; :mod:`verification.cli` lists them all from this table and imports
only the module of the command that runs, so ``attnbounds --help`` imports no family.

>>> list(FAMILIES)[:3]
['dobrushin', 'trained', 'rank']
>>> section_of("rollout"), COMMANDS["rollout"].module
('trained', 'verification.trained.command')
"""
from __future__ import annotations

from typing import NamedTuple

# main-job section -> family package, in main-job order. Add a new family here.
FAMILIES: dict[str, str] = {
    "dobrushin": "verification.dobrushin",
    "trained": "verification.trained",
    "rank": "verification.rank",
    "poincare": "verification.poincare",
    "modalities": "verification.modalities",
    "san": "verification.san",
    "prove": "verification.prove",
    "stress": "verification.stress",
}
# the sections `attnbounds verify` runs in a second process beside the others (on two or more cores;
# `--serial` runs all in order in one): none reads another's campaigns, while modalities reads the
# trained section's, so those two stay in one lane, in order. Balanced by measured time on 2 cores with
# the pinned kernels (numerics.pins), a fresh clone's `make run`: trained + modalities + stress here
# (7m00), dobrushin + rank + poincare + san + prove there (6m55)
SECOND_LANE: tuple[str, ...] = ("dobrushin", "rank", "poincare", "san", "prove")
# with --full (the paper's plan), balanced by each section's measured full cost (verification.plan_cost):
# poincare moves to the first lane beside trained, modalities and stress
SECOND_LANE_FULL: tuple[str, ...] = ("dobrushin", "rank", "san", "prove")
# a family whose subcommand is not named as its section: subcommand -> section (either selects it)
SECTION_ALIASES: dict[str, str] = {"rollout": "trained"}
# the roles every family package has at its top level (a module or a subpackage each)
ROLES: tuple[str, ...] = ("checks", "findings", "report", "paper", "command")


class Command(NamedTuple):
    """Where a subcommand lives: ``module`` defines ``register`` (``register(subparsers)`` adds the
    subcommand with all its options); ``help`` is its line in ``attnbounds --help``."""

    module: str
    help: str
    register: str = "register"


def _family(section: str, help: str) -> Command:
    return Command(f"{FAMILIES[section]}.command", help)


# subcommand -> Command, in the order of `attnbounds --help`
COMMANDS: dict[str, Command] = {
    "verify": Command("verification.cli", "the main job: quick checks of every theorem family", "register_verify"),
    "theorems": Command("verification.cli", "list the registered theorems with their statements",
                        "register_theorems"),
    "dobrushin": _family("dobrushin", "Theorems D1/D2 on random stochastic families (resumable)"),
    "rollout": _family("trained", "D1 equality shares and rollout tightness on a trained model"),
    "rank": _family("rank", "rank lower bounds (Entropic Bound): deficiency, achievability, recovery"),
    "poincare": _family("poincare", "estimated Poincare constants (rigorous 1-D brackets) vs Bakry-Emery / Holley-Stroock / test functions"),
    "modalities": _family("modalities", "D1 equality shares in small vision and tabular transformers "
                                        "trained here (scikit-learn's bundled data; resumable)"),
    "san": _family("san", "attention-only vs standard decoders at tiny scale (resumable)"),
    "prove": _family("prove", "prove the Dobrushin theorems for all matrices of small size with z3 and "
                              "cvc5 (counterexamples re-checked exactly; resumable)"),
    "stress": _family("stress", "stress-test a theorem on many random instances (sweep or guided search; "
                                "serial or Dask)"),
    "store": Command("verification.store_command", "list the campaigns a results store holds, with their completeness (read-only)"),
    "paper": Command("verification.paper.command",
                     "regenerate the paper (tables, figures, macros) from the store; --pdf compiles it"),
}


def section_of(name: str) -> str:
    """The main-job section called ``name`` (a section or its subcommand's name), else KeyError."""
    section = SECTION_ALIASES.get(name, name)
    if section not in FAMILIES:
        raise KeyError(f"no section {name!r}; known: {', '.join(FAMILIES)}")
    return section


def module_of(section: str, role: str) -> str:
    """The dotted module of a family's role (``checks``, ``report``, ``paper`` or ``command``)."""
    if role not in ROLES:
        raise ValueError(f"no role {role!r}; a family has {', '.join(ROLES)}")
    return f"{FAMILIES[section_of(section)]}.{role}"

