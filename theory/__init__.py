"""What attnbounds claims: theorem objects, their statements, hypotheses and derivations.

theory/ imports nothing from numerics/ or verification/. The registry (:mod:`theory.registry`)
lists the theorem families and imports them, registering their theorems, the first time it is
asked for one (:func:`load_all`). Importing this package loads nothing: its names come from
:mod:`theory.registry` (sympy) and :mod:`theory.verdicts` when first used, so a light module of
the package (:mod:`theory.verdicts`, :mod:`theory.tolerances`) is imported without sympy.
"""
from importlib import import_module
from typing import Any

# public name -> the module that defines it
_EXPORTS = {name: "theory.registry" for name in (
    "REGISTRY", "THEORY_MODULES", "Hypotheses", "Theorem", "check", "get", "hyp_all", "load_all", "register",
    "theorems")}
_EXPORTS["Verdict"] = "theory.verdicts"
_EXPORTS["InvalidInput"] = "theory.errors"
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'theory' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
