"""attnbounds from Python: one import for a statement about attention, its verdicts, random instances
for your own tests, and the results store.

    the vocabulary          everything of :mod:`theory.expr` (A, B, C, I, stochastic, logits, tokens,
                            parameter, softmax, delta, spread, ptp, slem, exp, log, Eq, ...)
    Theorem, register       a theorem of your own (:mod:`theory.registry`; docs/your-theorem.md)
    decide                  a statement's verdict on one instance or a batch, exact or certified
                            (:mod:`attnbounds.decision`)
    strategies              Hypothesis strategies of every random family (:mod:`attnbounds.strategies`):
                            instances, stochastic_matrices, logit_matrices, token_matrices,
                            parameter_values, sizes
    campaigns, campaign_frame   the results store as pandas DataFrames (:mod:`verification.results`)
    pin_numerics            the published numerics for this process (:mod:`numerics.pins`)

Importing it loads nothing heavy (each name is imported when first used) and changes nothing in the
process: no environment variable, no thread count. The command line pins the numerics (instruction
sets, BLAS branch, one thread: the published bits, at a cost in speed); a script that wants the same
bits calls :func:`pin_numerics` first, before anything imports torch, numpy or numba.

>>> from attnbounds import A, I, delta, decide
>>> decide(delta((I + A) / 2) <= (1 + delta(A)) / 2, A=[[1, 0], [0, 1]]).verdict
'tight'
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

# public name -> the module that defines it (the vocabulary: every name of theory.expr.__all__)
_EXPORTS = {"Theorem": "theory.registry", "register": "theory.registry",
            "decide": "attnbounds.decision", "Result": "attnbounds.decision", "Results": "attnbounds.decision",
            "campaigns": "verification.results", "campaign_frame": "verification.results"}
_EXPORTS.update({name: "attnbounds.strategies" for name in (
    "instances", "stochastic_matrices", "logit_matrices", "token_matrices", "parameter_values", "sizes")})
_VOCABULARY = "theory.expr"


def pin_numerics() -> str:
    """Pin this process's numerics as the command line does (:func:`numerics.pins.pin`: no AVX
    dispatch, MKL's reproducible branch, one thread; docs/reproducibility.md), so that a seed gives the
    published bits; call it before anything imports torch, numpy or numba. Returns what the
    provenance of a stored record will say (``pinned``, or ``pinned, applied late: ...`` naming the
    pins whose library was loaded already, or ``native`` under ``ATTNBOUNDS_NATIVE_KERNELS=1``)."""
    from numerics import pins

    pins.pin()
    return pins.summary()


def _names() -> list[str]:
    return sorted(set(_EXPORTS) | set(import_module(_VOCABULARY).__all__) | {"pin_numerics", "strategies"})


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return _names()
    if name == "strategies":
        return import_module("attnbounds.strategies")
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    if not name.startswith("_"):
        vocabulary = import_module(_VOCABULARY)
        if name in vocabulary.__all__:
            return getattr(vocabulary, name)
    raise AttributeError(f"module 'attnbounds' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_names()))
