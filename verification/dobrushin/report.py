"""Tables of the Dobrushin campaign, from stored records only (never recomputes)."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Iterable

from numerics.sources.random import DISTRIBUTIONS
from verification.dobrushin.checks import CAUSAL_MARGIN, CHUNK, Plan
from verification.stats import binomial_p, holm, share_text
from verification.report.tables import Table, print_table, write_table

COLUMNS = ("family", "n", "instances", "D1 equality [95% CI]", "D1 only via token 0", "D1 via exact path",
           "D2 pairs", "D2 equality [95% CI]", "min strict D1 slack", "violated", "undecided")


UNRESOLVED_SLACK = "> 0 (unresolved)"   # a strict record stored with slack <= 0 (before slacks were exact)


def tally(records: Iterable[dict]) -> dict:
    """Counts per (family, n), sorted by family order then n: D1 instances / tight / only via
    token 0 / exact path, D2 pairs / tight, smallest strict D1 slack, violated, undecided."""
    acc: dict = defaultdict(lambda: {"d1": 0, "d1_eq": 0, "d1_first": 0, "d1_exact": 0, "d2": 0, "d2_eq": 0,
                                     "slack": float("inf"), "unresolved": False, "viol": 0, "und": 0})
    for r in records:
        p = r["provenance"]
        a = acc[(p["family"], p["n"])]
        a["viol"] += r["verdict"] == "violated"
        a["und"] += r["verdict"] == "undecided"
        if r["theorem"] == "dobrushin.factor":
            a["d1"] += 1
            a["d1_eq"] += r["verdict"] == "tight"
            a["d1_exact"] += bool(r["extra"].get("exact_path"))
            a["d1_first"] += bool(r["extra"].get("through_first")) and not r["extra"].get("through_other")
            if r["slack"] is not None and r["verdict"] == "holds":
                if r["slack"] > 0:           # strict slacks are positive (numerics.dobrushin.FactorCheck)
                    a["slack"] = min(a["slack"], r["slack"])
                else:                        # never shown as 0: 0 would read as "tight"
                    a["unresolved"] = True
        else:
            a["d2"] += 1
            a["d2_eq"] += r["verdict"] == "tight"
    order = {f: i for i, f in enumerate(DISTRIBUTIONS)}
    return dict(sorted(acc.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])))


def summarise(records: Iterable[dict]) -> list[tuple]:
    """Aggregate stored records (never recomputes) into the main table's rows."""
    rows = []
    for (f, n), a in tally(records).items():
        rows.append((f, n, a["d1"], share_text(a["d1_eq"], a["d1"]), share_text(a["d1_first"], a["d1"]),
                     a["d1_exact"], a["d2"],
                     share_text(a["d2_eq"], a["d2"]), min_slack(a),
                     a["viol"], a["und"]))
    return rows


def min_slack(a: dict):
    """Smallest strict D1 slack of a group: a positive float, "> 0 (unresolved)" when a strict record
    carries no positive slack, None when the group has no strict record."""
    if a["unresolved"]:
        return UNRESOLVED_SLACK
    return None if a["slack"] == float("inf") else a["slack"]


CAUSAL_COLUMNS = ["n", "pairs (campaign)", "tight (campaign) [95%]", "predicted pi_n^2 [95%]",
                  "binomial p vs prediction (Holm)", "pairs (check)", "tight (check) [95%]",
                  "predicted verdict = exact verdict", "agreement (TOST, margin)"]


def causal_table(store, plan: Plan, acc: dict) -> Table:
    """Causal D2: the campaign's measured share of tight pairs per n (``acc``: :func:`tally`) beside
    the share the exact condition predicts, pi_n^2 (``dobrushin.product.causal.share``, stored by the
    causal-share check), with the exact binomial test of the campaign's count against the prediction
    (its own uncertainty ignored: thousands of draws; Holm across the sizes), and the check's own
    large sample: its share, how many of its exact verdicts the condition predicts, and the outcome of
    the agreement of the two shares (TOST)."""
    check = {r["extra"]["n"]: r for r in store.records(plan.causal_campaign)
             if r["chunk"] in {c.key for c in plan.causal_chunks()}}
    sizes = [n for n in plan.causal_sizes() if n in check]
    p = [binomial_p(acc[("causal", n)]["d2_eq"], acc[("causal", n)]["d2"], check[n]["extra"]["predicted"])
         if acc.get(("causal", n), {}).get("d2") else 1.0 for n in sizes]
    adj = holm(p)
    rows = []
    for n, padj in zip(sizes, adj):
        e, a = check[n]["extra"], acc.get(("causal", n), {"d2": 0, "d2_eq": 0})
        lo, hi = e["predicted_interval"]
        rows.append([n, a["d2"], share_text(a["d2_eq"], a["d2"]), f"{e['predicted']:.3f} [{lo:.3f}, {hi:.3f}]",
                     f"{padj:.3g}" if a["d2"] else "-", e["pairs"], share_text(e["tight"], e["pairs"]),
                     f"{e['verdict_agrees']}/{e['pairs']}", f"{check[n]['verdict']} (margin {CAUSAL_MARGIN:g})"])
    prov = (f"campaigns {plan.campaign}, {plan.causal_campaign}; pi_n on fresh draws of the causal family "
            f"(numerics.dobrushin.causal_share), D2 decided exactly on independent pairs")
    return Table.from_rows("dobrushin-causal-share", rows, CAUSAL_COLUMNS,
                           "Causal D2: the share of tight pairs against the share the exact condition predicts, "
                           "pi_n^2 with pi_n = P(row 1 minimises A_l0, l >= 1)", prov,
                           campaigns=(plan.campaign, plan.causal_campaign))


def report(store, plan: Plan, out_dir, console) -> list[tuple]:
    """The D1/D2 table of ``plan`` (``dobrushin_random``, under ``out_dir/tables``), printed too, and
    the causal-D2 prediction table (``dobrushin-causal-share``) when the plan has its check."""
    rows = summarise(r for r in store.records(plan.campaign)
                     if r["provenance"]["family"] in plan.families and r["provenance"]["n"] in plan.sizes)
    caption = ("Theorem D1 (delta((I+A)/2) <= (1+delta(A))/2) and D2 (delta(PQ) <= delta(P)delta(Q)) "
               "on random row-stochastic matrices: share of instances with exact equality")
    prov = (f"campaign {plan.campaign}; numpy default_rng seeded by SeedSequence([{plan.seed}, family, n, chunk]); "
            f"chunks of {CHUNK}; verdicts exact (Fraction), never by tolerance")
    write_table(rows, COLUMNS, "dobrushin_random", caption, prov, Path(out_dir) / "tables")
    print_table(console, rows, COLUMNS, "Dobrushin rollout factor (D1) and submultiplicativity (D2)")
    if plan.causal_sizes():
        acc = tally(r for r in store.records(plan.campaign)
                    if r["provenance"]["family"] == "causal" and r["provenance"]["n"] in plan.sizes)
        table = causal_table(store, plan, acc)
        table.write(Path(out_dir) / "tables")
        print_table(console, table.rows(), table.columns(), table.caption)
    return rows


