"""Tables of the Dobrushin campaign, rendered from its findings (:mod:`verification.dobrushin.findings`:
stored records only, never recomputed): ``dobrushin_random`` (per family and n) and, when the plan
has the causal-share check, ``dobrushin-causal-share``."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from verification.dobrushin.checks import CHUNK, Plan
from verification.dobrushin.findings import Cell, Findings, findings
from verification.findings import Share
from verification.report.tables import Table, print_table, write_table

COLUMNS = ("family", "n", "instances", "D1 equality [95% CI]", "D1 only via token 0", "D1 via exact path",
           "D2 pairs", "D2 equality [95% CI]", "min strict D1 slack", "violated", "undecided")


UNRESOLVED_SLACK = "> 0 (unresolved)"   # a strict record stored with slack <= 0 (before slacks were exact)


def share_cell(s: Share) -> str:
    """A share with its 95% interval, "0.250 [0.102, 0.495]" ("-" without instances; "1 (forced)", no
    interval, where a theorem forces it)."""
    if s.forced:
        return "1 (forced)"
    return f"{s.value:.3f} [{s.lo:.3f}, {s.hi:.3f}]" if s.n else "-"


def min_slack(c: Cell) -> Any:
    """Smallest strict D1 slack of a cell: a positive float, "> 0 (unresolved)" when a strict record
    carries no positive slack, None when the cell has no strict record."""
    return UNRESOLVED_SLACK if c.unresolved else c.min_slack


def summarise(cells: tuple[Cell, ...]) -> list[tuple]:
    """The main table's rows, one per cell."""
    return [(c.family, c.n, c.d1.n, share_cell(c.d1), share_cell(c.d1_first), c.d1_exact, c.d2.n, share_cell(c.d2),
             min_slack(c), c.violated, c.undecided) for c in cells]


CAUSAL_COLUMNS = ["n", "pairs (campaign)", "tight (campaign) [95%]", "predicted pi_n^2 [95%]",
                  "binomial p vs prediction (Holm)", "pairs (check)", "tight (check) [95%]",
                  "predicted verdict = exact verdict", "agreement (TOST, margin)"]


def causal_table(found: Findings, plan: Plan) -> Table:
    """Causal D2: the campaign's measured share of tight pairs per n beside the share the exact
    condition predicts, pi_n^2, with the exact binomial test of the campaign's count against the
    prediction (Holm across the sizes), and the check's own large sample: its share, how many of its
    exact verdicts the condition predicts, and the outcome of the agreement of the two shares (TOST)."""
    rows = [[s.n, s.campaign.n, share_cell(s.campaign),
             f"{s.predicted.value:.3f} [{s.predicted.lo:.3f}, {s.predicted.hi:.3f}]",
             f"{s.binomial.p:.3g}" if s.binomial else "-", s.check.n, share_cell(s.check),
             f"{s.verdicts_predicted.k}/{s.verdicts_predicted.n}", f"{s.agreement.outcome} (margin {found.margin:g})"]
            for s in found.causal]
    return Table.from_rows("dobrushin-causal-share", rows, CAUSAL_COLUMNS,
                           "Causal D2: the share of tight pairs against the share the exact condition predicts, "
                           "pi_n^2 with pi_n = P(row 1 minimises A_l0, l >= 1)", causal_provenance(plan),
                           campaigns=(plan.campaign, plan.causal_campaign))


def causal_provenance(plan: Plan) -> str:
    return (f"campaigns {plan.campaign}, {plan.causal_campaign}; pi_n on fresh draws of the causal family "
            f"(numerics.dobrushin.causal_share), D2 decided exactly on independent pairs")


def provenance(plan: Plan) -> str:
    return (f"campaign {plan.campaign}; numpy default_rng seeded by SeedSequence([{plan.seed}, family, n, chunk]); "
            f"chunks of {CHUNK}; verdicts exact (Fraction), never by tolerance")


def report(store, plan: Plan, out_dir, console) -> list[tuple]:
    """The D1/D2 table of ``plan`` (``dobrushin_random``, under ``out_dir/tables``), printed too, and
    the causal-D2 prediction table (``dobrushin-causal-share``) when the plan has its check."""
    found = findings(store, plan)
    rows = summarise(found.cells)
    caption = ("Theorem D1 (delta((I+A)/2) <= (1+delta(A))/2) and D2 (delta(PQ) <= delta(P)delta(Q)) "
               "on random row-stochastic matrices: share of instances with exact equality")
    write_table(rows, COLUMNS, "dobrushin_random", caption, provenance(plan), Path(out_dir) / "tables")
    print_table(console, rows, COLUMNS, "Dobrushin rollout factor (D1) and submultiplicativity (D2)")
    if plan.causal_sizes():
        table = causal_table(found, plan)
        table.write(Path(out_dir) / "tables")
        print_table(console, table.rows(), table.columns(), table.caption)
    return rows
