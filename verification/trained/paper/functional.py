"""The paper's tables of the functional checks and the checkpoints' origin
(:mod:`verification.trained.report.functional`'s ``trained-functional``, typeset in the main text, and
``trained-provenance``, in the appendix) and their macros, from the findings of
:mod:`verification.trained.findings.functional` (nothing recomputed, no model loaded).

Macros per model word W (``MiniLM``, ``SmolLMTwo``, ...): ``\\WFunctionalModel``,
``\\WFunctionalBaseline``, ``\\WFunctionalImprovement`` (with its interval), ``\\WFunctionalOutcome``,
``\\WFunctionalInputs``, ``\\WUpstream``, ``\\WRevision`` (its first 12 characters), ``\\WBase``;
across models ``\\FunctionalSupported`` (how many beat their baseline) and ``\\FunctionalModels``; the
guards ``FunctionalAllSupported`` and ``FunctionalVariants`` (SmolLM2's files are instruction-tuned,
Gemma's pretrained, as the prose says).
"""
from __future__ import annotations

from verification.report.part import Part
from verification.trained.findings.functional import Functional
from verification.trained.paper.names import MODELS
from verification.trained.report.functional import functional_rows, tables


def functional_part(part: Part, found: dict[str, Functional]) -> None:
    """The tables ``trained-functional`` and ``trained-provenance`` and their macros (module docstring)."""
    if not found:
        return
    for row, (name, f) in zip(functional_rows(found), found.items()):
        word = MODELS.get(name, name)
        part.macro(row[4], word, "functional", "model")
        part.macro(row[5], word, "functional", "baseline")
        part.macro(row[6], word, "functional", "improvement")
        part.macro(f.decision.outcome, word, "functional", "outcome")
        part.macro(str(f.inputs), word, "functional", "inputs")
        part.macro(f.origin["upstream"], word, "upstream")
        part.macro(f.origin["revision"][:12], word, "revision")
        part.macro(f.origin["base"], word, "base")
    works = sum(f.works for f in found.values())
    part.macro(str(works), "functional", "supported")
    part.macro(str(len(found)), "functional", "models")
    part.guard(works == len(found), "functional", "all supported", detail=f"{works} of {len(found)}")
    variant = {name: f.origin["variant"] for name, f in found.items()}
    part.guard(variant.get("smollm2", "").startswith("instruction-tuned") and variant.get("gemma3", "").startswith(
        "pretrained"), "functional", "variants", detail=f"SmolLM2: {variant.get('smollm2')}; Gemma: {variant.get('gemma3')}")
    part.tables.extend(tables(found, part.commands[0]))
