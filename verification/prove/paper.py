"""The SMT family's part of the paper: how far each Dobrushin statement is proved for all matrices
by z3 and cvc5 (both on the same query texts), read from the stored campaign only (never recomputed).

Tables: ``prove-reach`` (per statement: proved for all sizes up to, its time, the first undecided
size), ``prove-variants`` (the deliberately wrong variants and their certified counterexamples) and
``prove-symmetry`` (the bounds' exhaustive encodings against their splits, per size and solver).
Macros: per statement the largest proved size and its time (``\\ProveDOneIffLargest``,
``\\ProveDOneIffSeconds``), the number of wrong variants refuted, the budget per query, how far the
symmetry reduction is machine-checked (``\\ProveSymmetryDOneBoundLargest``) and whether the
encodings agree (``\\ProveSymmetryVerdict``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from verification.prove.checks import Plan, plan_chunks
from verification.prove.report import latest, reach_table, recheck_text, symmetry_checked, symmetry_table
from verification.report.part import MissingCampaign, Need, Part, Table


def needs(store: Any, plan: Plan) -> list[Need]:
    """``plan``'s SMT campaign and the chunks the plan runs on the stored answers
    (:func:`verification.prove.checks.plan_chunks`): a smaller run into the same campaign
    (``prove --max-n 2``) lacks the main job's larger sizes."""
    return [Need("prove", plan.campaign, frozenset(plan_chunks(store, plan)), plan.command())]


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables and macros of ``plan``'s SMT campaign (nothing here is random)."""
    import pandas as pd

    cmd = plan.command()
    records = latest(r for r in store.records(plan.campaign)
                     if max(r["extra"]["dims"]) <= plan.largest(r["extra"]["statement"]))
    if not records:
        raise MissingCampaign(plan.campaign, cmd)
    part = Part("prove", commands=[cmd])
    e0 = records[0]["extra"]
    prov = (f"campaign {plan.campaign}; solvers {e0['solver']} and {e0.get('solver2', 'none')}; budget "
            f"{plan.timeout:g} s per size and solver")
    part.macro(f"{plan.timeout:g}", "prove budget seconds")
    part.macro(str(plan.max_n), "prove attempted n")      # the size tried, not the size proved (the reach)
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
        r"up to the one shown (D2: $n \times n \times n$), within the stated budget per size and solver.", prov,
        campaigns=(plan.campaign,), command=cmd))
    symmetry = replace(symmetry_table(records, plan.campaign, cmd), caption=("The symmetry reduction of the split encodings checked: each bound without any symmetry "
                        "(every pair of rows, set of columns and sign pattern) against its split, per solver; "
                        "agree: both solvers' answers coincide wherever they decided both."))
    part.tables.append(symmetry)
    checked = symmetry_checked(records)
    agree = list(symmetry.frame["agree"])
    part.macro("agree with" if agree and "NO" not in agree else "DISAGREE with" if "NO" in agree else
               "could not be compared with", "prove symmetry verdict")
    for key in ("d1.bound", "d2.bound"):
        part.macro(checked.get(key) or "none", "prove symmetry", key, "largest")
    wrong = [r for r in records if r["extra"]["wrong"]]
    answers = [{r["extra"]["smt"], r["extra"].get("cvc5") or ""} for r in records]
    clash = sum({"proved", "counterexample"} <= a for a in answers)
    part.guard(clash == 0, "prove solvers never disagree", detail=f"{clash} queries proved by one solver, refuted by the other")
    true_refuted = [r["extra"]["statement"] for r in records if not r["extra"]["wrong"] and r["extra"]["smt"] == "counterexample"]
    part.guard(not true_refuted, "prove no counterexample to a true statement",
               detail="counterexamples to " + ", ".join(sorted(set(true_refuted))) if true_refuted else "")
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
    part.tables.append(formal_table(cmd, reached_sizes(reach)))
    return part


ROLES = (("iff", "condition"), ("causal.d2.lemma", "lemma"), ("causal.d2", "condition"), ("chain", "chain"),
         ("causal", "equality"))
"""Which part of a statement an SMT encoding decides, by its key (the first match; otherwise the bound)."""


def _role(key: str) -> str:
    return next((role for part, role in ROLES if part in key.split(".") or key == part), "bound")


def _size_key(size: str) -> tuple:
    import re

    return tuple(int(v) for v in re.findall(r"\d+", size))


def reached_sizes(reach: Any) -> dict[str, str]:
    """Per theorem, the sizes the stored SMT campaign proved it for (the reach table's column
    ``proved for all sizes up to``), one phrase: the largest size per part of the statement (bound,
    condition, chain, lemma) over its encodings, e.g. ``bound 3x3; condition 3x3``. Nothing here
    is read from the registry's declared ``smt_checked`` sizes.

    >>> import pandas as pd
    >>> reach = pd.DataFrame({"theorem": ["t", "t", "t"], "statement": ["d1.bound", "d1.bound.split", "d1.iff"],
    ...                       "proved for all sizes up to": ["3x3", "4x4", None]})
    >>> reached_sizes(reach)
    {'t': 'bound 4x4; condition none'}
    """
    best: dict[str, dict[str, str]] = {}
    for th, key, size in zip(reach["theorem"], reach["statement"], reach["proved for all sizes up to"]):
        roles = best.setdefault(th, {})
        role, size = _role(key), size if isinstance(size, str) and size else None
        if size and (roles.get(role) in (None, "none") or _size_key(size) > _size_key(roles[role])):
            roles[role] = size
        roles.setdefault(role, "none")
    order = ("bound", "equality", "condition", "chain", "lemma")
    return {th: "; ".join(f"{r} {roles[r]}" for r in order if r in roles) for th, roles in best.items()}


def formal_table(command: str, reached: dict[str, str]) -> Table:
    """What is machine-checked for every size and what is proved on paper only, per registered
    Dobrushin statement, generated from the registry (``Theorem.formal``: Coq lemmas checked by
    ``make proofs``; ``Theorem.not_formal``: the parts of its paper proof that are not formalised),
    beside the sizes the stored SMT campaign proved (``reached``, from :func:`reached_sizes`: what
    the store holds, never the registry's declared ``Theorem.smt_checked``)."""
    import pandas as pd

    from theory import theorems

    rows = []
    for th in theorems():
        if not th.id.startswith("dobrushin.") or th.category != "proved":
            continue
        lemmas = "; ".join(f"{f.split(':')[1]} ({f.split(':')[0]})" for f in th.formal) or "none"
        rows.append([th.title, lemmas, "; ".join(th.not_formal) or "nothing", reached.get(th.id, "not run")])
    return Table("prove-formal", pd.DataFrame(rows, columns=["statement", "Coq lemmas (every size)",
                                                          "proved on paper only", "SMT, this run (sizes)"]),
                 "What is machine-checked: per registered statement, the Coq lemmas that prove it for every size "
                 "(compiled by make proofs; coqchk reports no axiom) and the parts of its proof that are on paper "
                 "only, both read from the theorem registry, and the largest size up to which both SMT solvers "
                 "proved it in this run (a cross-check), read from the store.",
                 "theory registry (Theorem.formal, Theorem.not_formal); the SMT campaign's reach",
                 campaigns=(), command=command, wrap=8)
