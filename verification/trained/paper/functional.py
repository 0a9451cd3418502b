"""The paper's table of the functional checks and the checkpoints' origin
(:mod:`verification.trained.report.functional`'s ``trained-functional``) and its macros, from the findings of
:mod:`verification.trained.findings.functional` (nothing recomputed, no model loaded).

Macros per model word W (``MiniLM``, ``SmolLMTwo``, ...): ``\\WFunctionalModel``,
``\\WFunctionalBaseline``, ``\\WFunctionalImprovement`` (with its interval), ``\\WFunctionalOutcome``,
``\\WFunctionalInputs``, ``\\WUpstream``, ``\\WRevision`` (its first 12 characters), ``\\WBase``;
across models ``\\FunctionalSupported`` (how many beat their baseline) and ``\\FunctionalModels``; the
guards ``FunctionalAllSupported``, ``FunctionalVariants`` (SmolLM2's files are instruction-tuned,
Gemma's pretrained, as the prose says) ``FunctionalOrigins`` (MiniLM's weights hold no head, DINOv2-S's graph
has a decoder after its backbone) and ``FunctionalDefaults`` (Gemma's configuration is partly transformers'
defaults, AntiBERTy's tokenizer is built here). The table is data beside the PDF (the main text and the appendix
are at their page limits): the prose quotes the checks and the origins through the macros.
"""
from __future__ import annotations

from verification.report.part import Part
from verification.trained.findings.functional import Functional
from verification.trained.paper.names import MODELS
from verification.trained.report.functional import functional_rows, table


def functional_part(part: Part, found: dict[str, Functional]) -> None:
    """The table ``trained-functional`` and its macros (module docstring)."""
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
    origin = {name: f.origin for name, f in found.items()}
    for key, said in (("origins", {"minilm": ("variant", "no head"), "dinov2": ("variant", "parts backbone, decoder")}),
                      ("defaults", {"gemma3": ("defaults", "from transformers"), "antiberty": ("tokenizer", "built here")})):
        part.guard(all(origin.get(m, {}).get(k, "").startswith(w) for m, (k, w) in said.items()), "functional", key,
                   detail="; ".join(f"{m}: {origin.get(m, {}).get(k)}" for m, (k, _) in said.items()))
    part.data_tables.append(table(found, part.commands[0]))     # main text and appendix at their page limits
