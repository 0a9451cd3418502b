"""What attnbounds claims: theorem objects, their statements, hypotheses and derivations.

theory/ imports nothing from numerics/ or verification/. Importing this package registers
every theorem family listed in :data:`FAMILIES`.
"""
from importlib import import_module

from theory.registry import REGISTRY, Hypotheses, Theorem, check, get, hyp_all, register, theorems  # noqa: F401
from theory.verdicts import Verdict  # noqa: F401

# Each module registers its theorems on import. Add a new family here.
FAMILIES: tuple[str, ...] = ("theory.dobrushin", "theory.rank", "theory.poincare",)
FAMILIES += ("theory.san",)


def load_all() -> None:
    """Import every theorem family so that the registry is complete."""
    for name in FAMILIES:
        import_module(name)
