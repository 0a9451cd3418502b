"""The SMT family's part of the paper: how far each Dobrushin statement is proved for all matrices
by z3 and cvc5 (both on the same query texts), read from the stored campaign only (never recomputed).

Tables: ``prove-reach`` (per statement: proved for all sizes up to, its time, the first undecided
size), ``prove-variants`` (the deliberately wrong variants and their certified counterexamples).
Macros: per statement the largest proved size and its time (``\\ProveDOneIffLargest``,
``\\ProveDOneIffSeconds``), the number of wrong variants refuted, the budget per query.
"""
from __future__ import annotations

from typing import Any

from verification.prove.checks import FULL, QUICK, Plan
from verification.prove.report import latest, reach_table, recheck_text
from verification.report.part import MissingCampaign, Part, Table


def command(plan: Plan) -> str:
    return f"attnbounds prove --max-n {plan.max_n} --timeout {plan.timeout:g}"


def paper_part(store: Any, seed: int = 0, full: bool = False) -> Part:
    """Tables and macros of the SMT campaign (``seed`` is unused: nothing here is random)."""
    import pandas as pd

    plan = FULL if full else QUICK
    cmd = command(plan)
    records = latest(r for r in store.records(plan.campaign) if max(r["extra"]["dims"]) <= plan.max_n)
    if not records:
        raise MissingCampaign(plan.campaign, cmd)
    part = Part("prove", commands=[cmd])
    e0 = records[0]["extra"]
    prov = (f"campaign {plan.campaign}; solvers {e0['solver']} and {e0.get('solver2', 'none')}; budget "
            f"{plan.timeout:g} s per size and solver")
    part.macro(f"{plan.timeout:g}", "prove budget seconds")
    part.macro(str(plan.max_n), "prove max n")
    seconds = lambda s: "-" if s is None else f"{s:.1f}"  # noqa: E731
    reach = reach_table(records, plan.campaign, cmd).frame     # the report's table; columns read by name
    for key, largest, s in zip(reach["statement"], reach["proved for all sizes up to"], reach["seconds there"]):
        part.macro(largest or "none", "prove", key, "largest")
        part.macro(seconds(s), "prove", key, "seconds")
    shown = reach.assign(**{"proved for all sizes up to": [v or "-" for v in reach["proved for all sizes up to"]],
                            "seconds there": [seconds(s) for s in reach["seconds there"]],
                            "cvc5 seconds there": [seconds(s) for s in reach["cvc5 seconds there"]],
                            "first undecided": [v or "-" for v in reach["first undecided"]]})
    shown = shown.rename(columns={"seconds there": "z3 seconds", "cvc5 seconds there": "cvc5 seconds"})
    part.tables.append(Table("prove-reach", shown.infer_objects(),
        "Dobrushin statements proved by both z3 and cvc5 for all row-stochastic matrices of every size "
        "up to the one shown (D2: n x n x n), within the stated budget per size and solver.", prov,
        campaigns=(plan.campaign,), command=cmd))
    wrong = [r for r in records if r["extra"]["wrong"]]
    refuted = [r for r in wrong if r["extra"]["smt"] == "counterexample" and r["extra"]["confirmed"]]
    part.macro(str(len(refuted)), "prove variants refuted")
    part.macro(str(len(wrong)), "prove variants")
    vrows = [[r["extra"]["statement"], r["extra"]["text"], r["extra"]["shape"], r["extra"]["smt"],
              recheck_text(r["extra"]), f"{r['extra']['seconds']:.2f}", r["extra"].get("cvc5") or "-",
              f"{r['extra'].get('cvc5_seconds') or 0:.2f}"] for r in wrong]
    part.tables.append(Table("prove-variants", pd.DataFrame(vrows, columns=[
        "variant", "statement", "size", "z3", "exact re-check", "z3 seconds", "cvc5", "cvc5 seconds"]),
        "Deliberately wrong variants: each must come back with a counterexample, re-checked exactly.", prov,
        campaigns=(plan.campaign,), command=cmd))
    return part
