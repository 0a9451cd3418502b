"""The SMT family's part of the paper: how far each Dobrushin statement is proved for all matrices
by z3, read from the stored campaign only (never recomputed).

Tables: ``prove-reach`` (per statement: proved for all sizes up to, its time, the first undecided
size), ``prove-variants`` (the deliberately wrong variants and their certified counterexamples).
Macros: per statement the largest proved size and its time (``\\ProveDOneIffLargest``,
``\\ProveDOneIffSeconds``), the number of wrong variants refuted, the budget per query.
"""
from __future__ import annotations

from typing import Any

from verification.prove.checks import Plan
from verification.prove.command import FULL, QUICK
from verification.prove.report import reach, recheck_text
from verification.report.paper import MissingCampaign, Part, Table


def command(plan: Plan) -> str:
    return f"attnbounds prove --max-n {plan.max_n} --timeout {plan.timeout:g}"


def paper_part(store: Any, seed: int = 0, full: bool = False) -> Part:
    """Tables and macros of the SMT campaign (``seed`` is unused: nothing here is random)."""
    import pandas as pd

    plan = FULL if full else QUICK
    cmd = command(plan)
    records = [r for r in store.records(plan.campaign) if max(r["extra"]["dims"]) <= plan.max_n]
    if not records:
        raise MissingCampaign(plan.campaign, cmd)
    part = Part("prove", commands=[cmd])
    prov = f"campaign {plan.campaign}; solver {records[0]['extra']['solver']}; budget {plan.timeout:g} s per size"
    part.macro(f"{plan.timeout:g}", "prove budget seconds")
    part.macro(str(plan.max_n), "prove max n")
    rows = []
    for key, v in reach(records).items():
        part.macro(v["largest"] or "none", "prove", key, "largest")
        part.macro("-" if v["seconds"] is None else f"{v['seconds']:.1f}", "prove", key, "seconds")
        rows.append([v["theorem"], key, v["encoding"], v["largest"] or "-",
                     "-" if v["seconds"] is None else f"{v['seconds']:.1f}", v["undecided"] or "-",
                     v["counterexamples"]])
    part.tables.append(Table("prove-reach", pd.DataFrame(rows, columns=[
        "theorem", "statement", "encoding", "proved for all sizes up to", "seconds", "first undecided",
        "counterexamples"]), "Dobrushin statements proved by z3 for all row-stochastic matrices of every size "
        "up to the one shown (D2: n x n x n), within the stated budget per size.", prov))
    wrong = [r for r in records if r["extra"]["wrong"]]
    refuted = [r for r in wrong if r["extra"]["smt"] == "counterexample" and r["extra"]["confirmed"]]
    part.macro(str(len(refuted)), "prove variants refuted")
    part.macro(str(len(wrong)), "prove variants")
    vrows = [[r["extra"]["statement"], r["extra"]["text"], r["extra"]["shape"], r["extra"]["smt"],
              recheck_text(r["extra"]), f"{r['extra']['seconds']:.2f}"] for r in wrong]
    part.tables.append(Table("prove-variants", pd.DataFrame(vrows, columns=[
        "variant", "statement", "size", "z3", "exact re-check", "seconds"]),
        "Deliberately wrong variants: each must come back with a counterexample, re-checked exactly.", prov))
    return part
