"""The table of the functional checks and of the checkpoints' origin (the findings of
:mod:`verification.trained.findings.functional`, one stored record per model; nothing recomputed),
``trained-functional``: per model, the metric, the model's and the baseline's means, the mean
improvement with its 95% paired t interval over the inputs and the outcome; then the package and
version, the upstream repository and the revision where the package states one, the model the files
were made from and which variant they are, format and quantisation, what the library filled in, the
tokenizer, the weights' sha256. The report writes it with the main job's tables; the paper
(:mod:`verification.trained.paper.functional`) lists it as data beside the PDF and quotes it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from verification.report.part import Table, frame
from verification.report.tables import ci_decimals, fmt_ci, print_table
from verification.trained.findings.functional import Functional

# how the table names each kind of check: its metric and its baseline, in a few words (the caption says more)
METRIC = {"decoder": "loss/token (nats)", "masked": "masked-token acc.", "sentence": "cosine of halves",
          "saliency": "map contrast (sd)"}
BASELINE = {"decoder": "unigram", "masked": "top residue", "sentence": "halves of 2 texts", "saliency": "patches shuffled"}
FUNCTIONAL_CAPTION = (
    "Each checkpoint on its own task against a trivial baseline fitted on other inputs (a decoder: its first 64 "
    "tokens, a unigram model; a saliency map: the photograph's 14-pixel patches shuffled): means over the n inputs "
    "and the gain (for a loss, baseline minus model) with its 95% paired t interval.")
PROVENANCE_CAPTION = (
    "Then where each checkpoint comes from, as its package states it (read from the installed files when its check "
    "ran, never typed): the package and version, the upstream repository and the revision where the package names one, "
    "the model the files were made from and which variant they are, the file's format and quantisation, what the "
    "loading library fills in that the file does not store, the tokenizer, and the first 16 hex digits of the "
    "sha256 of the weights file read.")
FUNCTIONAL_COLUMNS = ("Model", "Metric", "Baseline", "n", "Value", "Baseline value", "Gain [95% CI]", "Outcome")
PROVENANCE_COLUMNS = ("Model", "Package", "Upstream, revision", "Made from; variant", "Format; quantisation",
                      "Filled in by the library", "Tokenizer", "Weights sha256")


def functional_rows(found: dict[str, Functional]) -> list[list[str]]:
    """One row per model of :data:`FUNCTIONAL_COLUMNS`; values with the digits their interval supports."""
    from verification.trained.paper.names import LEGEND

    rows = []
    for name, f in found.items():
        lo, hi = f.decision.interval
        est, ci = fmt_ci(f.decision.statistic, lo, hi)
        d = ci_decimals(lo, hi)          # the means with the digits the improvement's interval supports
        rows.append([LEGEND.get(name, name), METRIC[f.kind], BASELINE[f.kind], str(f.inputs),
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


def table(found: dict[str, Functional], command: str) -> Table:
    """The table ``trained-functional`` of ``found``: per model the check (:data:`FUNCTIONAL_COLUMNS`)
    and the origin (:data:`PROVENANCE_COLUMNS` after the model's name); ``command`` fills its campaigns."""
    rows = [a + b[1:] for a, b in zip(functional_rows(found), provenance_rows(found))]
    return Table("trained-functional", frame(rows, FUNCTIONAL_COLUMNS + PROVENANCE_COLUMNS[1:]),
                 FUNCTIONAL_CAPTION + " " + PROVENANCE_CAPTION, provenance_of(found),
                 campaigns=tuple(f.campaign for f in found.values()), command=command, wrap=8)


def report_functional(store: Any, plan: Any, out_dir: Any, console: Any) -> dict:
    """Write and print the table of the main job's ``plan`` under ``out_dir/tables``; {name: paths}.
    A store without the checks (made before them) writes none and says so."""
    from verification.report.part import MissingCampaign
    from verification.trained.findings.functional import functional_findings

    try:
        found = functional_findings(store, plan)
    except MissingCampaign as exc:
        if console is not None:
            console.print(f"[dim]no functional-check tables: {exc}[/dim]")
        return {}
    t = table(found, plan.command())
    if console is not None:
        print_table(console, t.rows(), t.columns(), t.caption)
    return {t.name: t.write(Path(out_dir) / "tables")}
