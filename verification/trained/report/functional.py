"""The tables of the functional checks and of the checkpoints' origin (the findings of
:mod:`verification.trained.findings.functional`, one stored record per model; nothing recomputed):
``trained-functional`` (per model, the metric, the model's and the baseline's means, the mean
improvement with its 95% paired t interval over the inputs, the outcome) and ``trained-provenance``
(per model, the package and version, the upstream repository and the revision where the package
states one, the model the files were made from and which variant they are, format and quantisation,
what the library filled in, the tokenizer, the weights' sha256). The report writes them with the
main job's tables; the paper (:mod:`verification.trained.paper.functional`) typesets the same tables.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from verification.report.part import Table, frame
from verification.report.tables import ci_decimals, fmt_ci, print_table
from verification.trained.findings.functional import Functional

# how a table names each kind of check (the metric and its baseline, in a few words)
METRIC = {"decoder": "loss per token (nats) of the first 64 tokens, lower is better", "masked": "masked-token accuracy",
          "sentence": "cosine of the halves of one text", "saliency": "saliency-map contrast (pixel sd)"}
BASELINE = {"decoder": "unigram fitted on disjoint inputs", "masked": "most frequent residue",
            "sentence": "halves of two texts", "saliency": "same photograph, patches shuffled"}
FUNCTIONAL_CAPTION = (
    "Each checkpoint on its own task beside a trivial baseline, on inputs the baseline was not fitted on: the mean "
    "over the inputs of the model's metric and the baseline's, the mean improvement (the baseline's loss minus the "
    "model's, or the model's value minus the baseline's) with its 95% paired t interval over the inputs, and the "
    "outcome of the claim that the model is better (supported: the interval lies above 0). all-MiniLM-L6-v2 ships "
    "no masked-language-model head, so it is checked as the sentence encoder it is published as; DINOv2-S is a "
    "saliency fine-tune, checked on its saliency map.")
PROVENANCE_CAPTION = (
    "Where each checkpoint comes from, as its package states it (read from the installed files when its check ran, "
    "never typed): the package and version, the upstream repository and the revision where the package names one, "
    "the model the files were made from and which variant they are, the file's format and quantisation, what the "
    "loading library fills in that the file does not store, the tokenizer, and the first 16 hex digits of the "
    "sha256 of the weights file read.")
FUNCTIONAL_COLUMNS = ("Model", "Metric", "Baseline", "Inputs", "Model value", "Baseline value",
                      "Improvement [95% CI]", "Outcome")
PROVENANCE_COLUMNS = ("Model", "Package", "Upstream, revision", "Made from; variant", "Format; quantisation",
                      "Filled in by the library", "Tokenizer", "Weights sha256")


def functional_rows(found: dict[str, Functional]) -> list[list[str]]:
    """One row per model of :data:`FUNCTIONAL_COLUMNS`; values with the digits their interval supports."""
    from verification.trained.paper.names import SHORT

    rows = []
    for name, f in found.items():
        lo, hi = f.decision.interval
        est, ci = fmt_ci(f.decision.statistic, lo, hi)
        d = ci_decimals(lo, hi)          # the means with the digits the improvement's interval supports
        rows.append([SHORT.get(name, name), METRIC[f.kind], BASELINE[f.kind], str(f.inputs),
                     f"{f.model_value.value:.{d}f}", f"{f.baseline_value.value:.{d}f}", f"{est} {ci}",
                     f.decision.outcome])
    return rows


def provenance_rows(found: dict[str, Functional]) -> list[list[str]]:
    """One row per model of :data:`PROVENANCE_COLUMNS`, from the origin its check recorded."""
    from verification.trained.paper.names import SHORT

    rows = []
    for name, f in found.items():
        o = f.origin
        rows.append([SHORT.get(name, name), o["distribution"], f"{o['upstream']}; revision {o['revision']}",
                     f"{o['base']}; {o['variant']}", f"{o['file']}, {o['format']}; {o['quantisation']}",
                     o["defaults"], o["tokenizer"], o["sha256"][:16]])
    return rows


def provenance_of(found: dict[str, Functional]) -> str:
    return ("campaigns " + ", ".join(f.campaign for f in found.values()) + "; one outcome record per model "
            "(the paired t interval over its inputs decided when the check ran)")


def tables(found: dict[str, Functional], command: str) -> list[Table]:
    """The two tables (module docstring) of ``found``; ``command`` fills their campaigns."""
    camps = tuple(f.campaign for f in found.values())
    prov = provenance_of(found)
    return [Table("trained-functional", frame(functional_rows(found), FUNCTIONAL_COLUMNS), FUNCTIONAL_CAPTION, prov,
                  campaigns=camps, command=command, wrap=4),
            Table("trained-provenance", frame(provenance_rows(found), PROVENANCE_COLUMNS), PROVENANCE_CAPTION, prov,
                  campaigns=camps, command=command, wrap=8)]


def report_functional(store: Any, plan: Any, out_dir: Any, console: Any) -> dict:
    """Write and print the two tables of the main job's ``plan`` under ``out_dir/tables``; {name: paths}.
    A store without the checks (made before them) writes none and says so."""
    from verification.report.part import MissingCampaign
    from verification.trained.findings.functional import functional_findings

    try:
        found = functional_findings(store, plan)
    except MissingCampaign as exc:
        if console is not None:
            console.print(f"[dim]no functional-check tables: {exc}[/dim]")
        return {}
    out = {}
    for t in tables(found, plan.command()):
        out[t.name] = t.write(Path(out_dir) / "tables")
        if console is not None:
            print_table(console, t.rows(), t.columns(), t.caption)
    return out
