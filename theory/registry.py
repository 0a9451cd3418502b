"""Theorem objects and the registry (the sympy.stats pattern: one frozen object per claim).

A theorem carries a dotted id, a category, its statement as sympy relations, the equality
condition, a hypothesis check answering True / False / None (undecided), a witness family on
which equality is known to hold, references, and evaluators per backend given as dotted paths
(``"numerics.dobrushin:factor_slack"``) so that theory/ never imports numerics/.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import sympy as sp

CATEGORIES = ("proved", "conjecture", "sanity")


@dataclass(frozen=True)
class Theorem:
    id: str
    title: str
    category: str
    statement: sp.Basic                     # a sympy relation (or And of relations)
    equality: str                           # the equality condition, in words
    hypotheses: Callable[[Any], Optional[bool]]
    witness: Callable[[], Any]              # an instance on which equality holds
    evaluators: Mapping[str, str] = field(default_factory=dict)  # backend -> "module:function"
    references: tuple[str, ...] = ()
    symbols: Mapping[str, str] = field(default_factory=dict)     # symbol -> meaning

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"theorem {self.id}: category {self.category!r} not in {CATEGORIES}")
        if "." not in self.id:
            raise ValueError(f"theorem id {self.id!r} must be dotted, e.g. 'dobrushin.factor'")

    def latex(self) -> str:
        """LaTeX of the statement."""
        return sp.latex(self.statement)

    def evaluator(self, backend: str) -> Callable:
        """Resolve the evaluator registered for ``backend`` (imports numerics lazily)."""
        from importlib import import_module

        try:
            path = self.evaluators[backend]
        except KeyError:
            raise KeyError(f"theorem {self.id} has no {backend!r} evaluator; "
                           f"it has {sorted(self.evaluators)}") from None
        module, _, name = path.partition(":")
        return getattr(import_module(module), name)


REGISTRY: dict[str, Theorem] = {}


def register(theorem: Theorem) -> Theorem:
    """Add a theorem; re-registering the same id with a different object is an error."""
    old = REGISTRY.get(theorem.id)
    if old is not None and old is not theorem:
        raise ValueError(f"theorem id {theorem.id!r} registered twice")
    REGISTRY[theorem.id] = theorem
    return theorem


def get(theorem_id: str) -> Theorem:
    from theory import load_all

    load_all()
    try:
        return REGISTRY[theorem_id]
    except KeyError:
        raise KeyError(f"no theorem {theorem_id!r}; known: {sorted(REGISTRY)}") from None


def theorems() -> list[Theorem]:
    from theory import load_all

    load_all()
    return [REGISTRY[k] for k in sorted(REGISTRY)]
