"""Tables of the Dobrushin campaign, from stored records only (never recomputes)."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Iterable

from numerics.sources.random import DISTRIBUTIONS
from verification.dobrushin.checks import CHUNK, Plan
from verification.report.stats import share_text
from verification.report.tables import print_table, write_table

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


def report(store, plan: Plan, out_dir, console) -> list[tuple]:
    """The D1/D2 table of ``plan`` (``dobrushin_random``, under ``out_dir/tables``), printed too."""
    rows = summarise(r for r in store.records(plan.campaign)
                     if r["provenance"]["family"] in plan.families and r["provenance"]["n"] in plan.sizes)
    caption = ("Theorem D1 (delta((I+A)/2) <= (1+delta(A))/2) and D2 (delta(PQ) <= delta(P)delta(Q)) "
               "on random row-stochastic matrices: share of instances with exact equality")
    prov = (f"campaign {plan.campaign}; numpy default_rng seeded by SeedSequence([{plan.seed}, family, n, chunk]); "
            f"chunks of {CHUNK}; verdicts exact (Fraction), never by tolerance")
    write_table(rows, COLUMNS, "dobrushin_random", caption, prov, Path(out_dir) / "tables")
    print_table(console, rows, COLUMNS, "Dobrushin rollout factor (D1) and submultiplicativity (D2)")
    return rows


