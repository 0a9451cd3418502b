"""The appendix of every document: how the store was filled (commands, seed, software, commit) and
one numbered entry per family, table and figure, which the captions' tags and the quoted numbers link
to (:func:`appendix_tex`, written by :func:`verification.paper.build.build` to
``generated/<document>-appendix.tex``)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Optional

from verification.paper.latex import latex_text
from verification.report.part import Part

SOURCE = Path(__file__).resolve().parents[2] / "paper"     # the repository's paper folder (its commit)


def _commit() -> str:
    try:
        run = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=SOURCE.parent,
                             capture_output=True, text=True, timeout=10)
        return run.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _entry(label: str, title: str, fields: list[tuple[str, str]]) -> list[str]:
    """One numbered entry of the appendix: its label, title and fields on one run-on line."""
    body = "; ".join(f"{latex_text(k)}: {v}" for k, v in fields if v)
    return [f"\\refstepcounter{{provenance}}\\label{{{label}}}\\noindent\\textbf{{\\theprovenance{{}}}} {title}"
            + (f": {body}." if body else "."), ""]


def _tt(text: str) -> str:
    """Typewriter text that may break after ``: - . + , / ; =`` and spaces (long campaign names)."""
    return "\\texttt{" + re.sub(r"([-:.+,/;=])", r"\1\\allowbreak{}", latex_text(text)) + "}"


def key_runs(numbers: list[int]) -> str:
    """Campaign keys as runs: ``[1, 2, 3, 5, 7, 8]`` -> ``C1-C3, C5, C7, C8`` (a run of three or more
    keys is written by its ends with an en dash: the appendix lists up to 74 keys a table).

    >>> key_runs([1, 2, 3, 5, 7, 8])
    'C1--C3, C5, C7, C8'
    """
    out, start = [], 0
    ns = sorted(set(numbers))
    for i in range(1, len(ns) + 1):
        if i == len(ns) or ns[i] != ns[i - 1] + 1:
            run = ns[start:i]
            out += [f"C{run[0]}--C{run[-1]}"] if len(run) >= 3 else [f"C{k}" for k in run]
            start = i
    return ", ".join(out)


def _entries(parts: list[Part], seed: int, labels: Optional[set], typeset: Optional[set]) -> list[dict]:
    """Every numbered entry of a document, in the order the appendix numbers them (S1, S2, ...): per
    family its own entry, then its typeset tables, its figures and its data tables. Each entry holds
    its label, its title (LaTeX) and plain title, the short fields the PDF prints and the full fields
    (campaign identifiers, commands, provenance with the weight hashes) the supplement holds."""
    out = []
    for part in parts:
        commands = "; ".join(part.commands)
        shown = [t for t in part.tables if typeset is None or t.name in typeset]
        data = part.data_tables + [t for t in part.tables if t not in shown]
        keys: dict[str, str] = {}
        number: dict[str, int] = {}
        for item in shown + data + part.figures:
            for c in item.campaigns:
                number.setdefault(c, len(number) + 1)
                keys.setdefault(c, f"C{number[c]}")
        named = lambda item: key_runs([number[c] for c in item.campaigns])      # noqa: E731  (the PDF: runs)
        listed = lambda item: ", ".join(keys[c] for c in item.campaigns)      # noqa: E731  (the supplement: each)
        out.append(dict(family=part.family, label=f"prov:{part.family}",
                        title=f"numbers quoted from the {latex_text(part.family)} family",
                        plain=f"numbers quoted from the {part.family} family",
                        short=[("seed", str(seed))] + ([("campaigns", key_runs(list(number.values())))] if keys else []),
                        full=[("commands", commands), ("seed", str(seed))]
                        + [(k, c) for c, k in keys.items()]))
        for t in shown:
            out.append(dict(family=part.family, label=f"prov:tab:{t.name}", title=f"Table~\\ref{{tab:{t.name}}} ({_tt(t.name)})",
                            plain=f"table {t.name}", short=[("campaigns", named(t)), ("data", _tt(f"data/{t.name}.csv"))],
                            full=[("campaigns", listed(t)), ("command", t.command or ""), ("provenance", t.provenance),
                                  ("data", f"data/{t.name}.csv")]))
        for f in part.figures:
            ref = f"Figure~\\ref{{fig:{f.name}}} " if labels is None or f"fig:{f.name}" in labels else "Figure "
            out.append(dict(family=part.family, label=f"prov:fig:{f.name}", title=f"{ref}({_tt(f.name)})",
                            plain=f"figure {f.name}", short=[("campaigns", named(f)), ("files", _tt(f"figures/{f.name}.pdf"))],
                            full=[("campaigns", listed(f)), ("command", f.command or ""), ("provenance", f.provenance),
                                  ("files", f"figures/{f.name}.pdf and .png, the provenance and versions in their metadata")]))
        for t in data:
            out.append(dict(family=part.family, label=f"prov:data:{t.name}", title=f"data table {_tt(t.name)}, not typeset",
                            plain=f"data table {t.name}", short=[("campaigns", named(t)), ("file", _tt(f"data/{t.name}.csv"))],
                            full=[("campaigns", listed(t)), ("command", t.command if t.command and t.command not in
                                                            part.commands else ""), ("file", f"data/{t.name}.csv")]))
    return out


def plan_cost_sentence(full: bool, seed: int) -> str:
    """What the full settings cost (:mod:`verification.plan_cost`): each section's measured minutes on
    2 cores and the two lanes of ``attnbounds verify --full``, "not measured" for a section whose full plan
    changed since it was measured; empty for the quick settings (``make run``: under ten minutes)."""
    if not full:
        return ""
    from verification.plan_cost import MACHINE, plan_cost

    cost = plan_cost(seed)
    each = ", ".join(f"{s} {c.minutes:.1f}" if c is not None else f"{s} not measured at its present plan"
                     for s, c in cost["sections"].items())
    lanes = cost["lanes"]
    total = (f"; the main job runs them in two processes, {lanes[0]:.0f} and {lanes[1]:.0f} minutes, so about "
             f"{max(lanes):.0f} minutes of wall time" if lanes else "; the plan's total is not known until every "
             "section is measured")
    return latex_text(f"Measured cost of the full settings (wall minutes per section, each run alone as "
                      f"attnbounds verify --full --only SECTION --serial, on {MACHINE}): {each}{total}.")


def supplement_name(document: str) -> str:
    """The supplementary file of a document (``main`` -> ``supplement.md``), written beside its PDF."""
    return "supplement.md" if document == "main" else f"supplement-{document}.md"


def appendix_tex(parts: list[Part], seed: int, full: bool, labels: Optional[set] = None,
                 typeset: Optional[set] = None, supplement: str = "supplement.md",
                 environment: Optional[list[str]] = None) -> str:
    """The appendix: how the store was filled (commands, software, commit) and one numbered entry
    per family, table and figure, labelled ``prov:<family>``, ``prov:tab:<name>``,
    ``prov:data:<name>``, ``prov:fig:<name>``; the captions' tags and the quoted numbers link here.
    Each entry is short (its campaigns by key, C1, C2, ..., and its data file); the campaign
    identifiers, commands and provenance (weight hashes) of every entry are in the supplementary
    file ``supplement`` (:func:`supplement_md`), under the same numbers. A figure whose caption has
    no ``fig:<name>`` label among ``labels`` (default: every figure has one) is named without a
    reference; a table not in ``typeset`` (default: every table of ``part.tables``) is data only.
    ``environment``: the paragraphs on software, machine and wall time
    (:func:`verification.paper.environment.environment_tex`) in place of the one line of versions."""
    from verification.provenance import versions

    lines = ["% generated by `attnbounds paper`: do not edit",
             "\\section{Reproducing every number}\\label{sec:reproducing}",
             "Every table, figure and quoted number of this document was read from one results store "
             f"(seed {seed}, {'full' if full else 'quick'} settings), filled by these commands:",
             "\\begin{verbatim}"]
    seen = []
    for part in parts:
        seen += [c for c in part.commands if c not in seen]
    lines += seen or ["attnbounds verify"]
    lines += ["attnbounds paper --pdf" + (" --full" if full else ""), "\\end{verbatim}",
              *(environment or ["Software: " + latex_text(", ".join(f"{k} {v}" for k, v in sorted(versions().items())))
                                + "."]),
              "Source commit: \\texttt{" + latex_text(_commit()) + "}.", plan_cost_sentence(full, seed), "",
              "Each entry below is what a caption's tag (S1, S2, ...) or a quoted number links to. The "
              "supplementary file \\ifdefined\\href\\href{" + supplement + "}{" + _tt(supplement) + "}\\else "
              + _tt(supplement) + "\\fi, written beside this PDF, gives for every entry, "
              "under the same number, the campaign identifiers (C1, C2, ... per family), the commands and the "
              "provenance recorded with the records (model weight hashes included). Every table, typeset or "
              "not, is written as data beside the PDF, in CSV and Markdown with its caption and provenance.", ""]
    lines += ["\\begingroup\\small\\raggedright\\setlength{\\parskip}{2pt}"]
    family = None
    for e in _entries(parts, seed, labels, typeset):
        if e["family"] != family:
            family = e["family"]
            lines += [f"\\subsection*{{Family {latex_text(family)}}}"]
        lines += _entry(e["label"], e["title"], e["short"])
    lines += ["\\endgroup"]
    return "\n".join(lines)


def supplement_md(document: str, parts: list[Part], seed: int, full: bool, labels: Optional[set] = None,
                  typeset: Optional[set] = None, environment: Optional[list[str]] = None) -> str:
    """The supplementary file of ``document``: every appendix entry under its number (S1, S2, ...)
    with its full fields: campaign identifiers, commands, provenance (model weight hashes); first
    ``environment``'s lines (:func:`verification.paper.environment.environment_md`) where given."""
    lines = [f"# Supplement to {document}.pdf: campaigns and provenance", "",
             f"Generated by `attnbounds paper` from the results store (seed {seed}, {'full' if full else 'quick'} "
             "settings): do not edit. Each entry has the number the document's appendix gives it.", ""]
    lines += environment or []
    family = None
    for k, e in enumerate(_entries(parts, seed, labels, typeset), start=1):
        if e["family"] != family:
            lines += ([""] if family is not None else []) + [f"## Family {e['family']}", ""]
            family = e["family"]
        lines += [f"- **S{k}** {e['plain']}"] + [f"  - {name}: {value}" for name, value in e["full"] if value]
    return "\n".join(lines) + "\n"
