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
from typing import Any, Iterable, Optional

from verification.paper.notation import prove as notation
from verification.prove.checks import Plan, plan_chunks
from verification.prove.findings import Reach, findings
from verification.prove.report import SUMMARY_COLUMNS, recheck_text, symmetry_table
from verification.report.part import MissingCampaign, Need, Part, Table


def needs(store: Any, plan: Plan) -> list[Need]:
    """``plan``'s SMT campaign and the chunks the plan runs on the stored answers
    (:func:`verification.prove.checks.plan_chunks`): a smaller run into the same campaign
    (``prove --max-n 2``) lacks the main job's larger sizes."""
    return [Need("prove", plan.campaign, frozenset(plan_chunks(store, plan)), plan.command())]


def seconds(s: Optional[float]) -> str:
    return "-" if s is None else f"{s:.1f}"


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables and macros of ``plan``'s SMT campaign (nothing here is random), rendered from its
    findings (:func:`verification.prove.findings.findings`)."""
    import pandas as pd

    cmd = plan.command()
    found = findings(store, plan)
    if not found.answers:
        raise MissingCampaign(plan.campaign, cmd)
    part = Part("prove", commands=[cmd])
    a0 = found.answers[0]
    prov = (f"campaign {plan.campaign}; solvers {a0.solver} and {a0.solver2}; budget "
            f"{plan.timeout:g} s per size and solver")
    part.macro(f"{plan.timeout:g}", "prove budget seconds")
    part.macro(str(plan.max_n), "prove attempted n")      # the size tried, not the size proved (the reach)
    for r in found.reach:
        part.macro(r.largest or "none", "prove", r.statement, "largest")
        part.macro(seconds(r.seconds), "prove", r.statement, "seconds")
    shown = pd.DataFrame([(r.theorem, r.statement, r.encoding, r.largest or "-", seconds(r.seconds),
                           seconds(r.cvc5_seconds), r.undecided or "-", r.counterexamples) for r in found.reach],
                         columns=list(SUMMARY_COLUMNS), dtype=object)
    shown = shown.rename(columns={"seconds there": "z3 seconds", "cvc5 seconds there": "cvc5 seconds"})
    part.tables.append(Table("prove-reach", shown.infer_objects(), notation.REACH_CAPTION, prov,
                             campaigns=(plan.campaign,), command=cmd))
    symmetry = replace(symmetry_table(found, plan.campaign, cmd), caption=(
        "The symmetry reduction of the split encodings checked: each bound without any symmetry "
        "(every pair of rows, set of columns and sign pattern) against its split, per solver; "
        "agree: both solvers' answers coincide wherever they decided both."))
    part.tables.append(symmetry)
    agree = [s.agree for s in found.symmetry]
    part.macro("DISAGREE with" if False in agree else "agree with" if agree else "could not be compared with",
               "prove symmetry verdict")
    for key in ("d1.bound", "d2.bound"):
        part.macro(found.checked(key) or "none", "prove symmetry", key, "largest")
    part.guard(found.clashes == 0, "prove solvers never disagree",
               detail=f"{found.clashes} queries proved by one solver, refuted by the other")
    part.guard(not found.true_refuted, "prove no counterexample to a true statement",
               detail="counterexamples to " + ", ".join(sorted(set(found.true_refuted))) if found.true_refuted else "")
    part.macro(str(found.variants.k), "prove variants refuted")
    part.macro(str(found.variants.n), "prove variants")
    vrows = [[a.statement, a.text, a.shape, a.smt, recheck_text(a), f"{a.seconds:.2f}", a.cvc5 or "-",
              f"{a.cvc5_seconds or 0:.2f}"] for a in found.wrong]
    part.tables.append(Table("prove-variants", pd.DataFrame(vrows, columns=[
        "variant", "statement", "size", "z3", "exact re-check", "z3 seconds", "cvc5", "cvc5 seconds"]),
        "Deliberately wrong variants: each must come back with a counterexample, re-checked exactly.", prov,
        campaigns=(plan.campaign,), command=cmd))
    part.tables.append(formal_table(cmd, reached_sizes(found.reach)))
    return part


ROLES = (("iff", "condition"), ("causal.d2.lemma", "lemma"), ("causal.d2", "condition"), ("chain", "chain"),
         ("causal", "equality"))
"""Which part of a statement an SMT encoding decides, by its key (the first match; otherwise the bound)."""


def _role(key: str) -> str:
    return next((role for part, role in ROLES if part in key.split(".") or key == part), "bound")


def _order(dims: tuple) -> tuple:
    """The order of two sizes of one part of a statement: the matrix dims (n x n for one n)."""
    return tuple(dims * 2 if len(dims) == 1 else dims)


def reached_sizes(reach: Iterable[Reach]) -> dict[str, str]:
    """Per theorem, the sizes the stored SMT campaign proved it for (each statement's reach), one
    phrase: the largest size per part of the statement (bound, condition, chain, lemma) over its
    encodings, e.g. ``bound 3x3; condition 3x3``. Nothing here is read from the registry's declared
    ``smt_checked`` sizes.

    >>> reach = [Reach("t", "d1.bound", "direct", "3x3", (3,), 1.0, 1.0, None, 0),
    ...          Reach("t", "d1.bound.split", "split", "4x4", (4,), 1.0, 1.0, None, 0),
    ...          Reach("t", "d1.iff", "direct", None, None, None, None, "2x2", 0)]
    >>> reached_sizes(reach)
    {'t': 'bound 4x4; condition none'}
    """
    best: dict[str, dict[str, tuple]] = {}
    for r in reach:
        roles = best.setdefault(r.theorem, {})
        role = _role(r.statement)
        if r.largest and (roles.get(role) is None or _order(r.largest_dims) > _order(roles[role][1])):
            roles[role] = (r.largest, r.largest_dims)
        roles.setdefault(role, None)
    order = ("bound", "equality", "condition", "chain", "lemma")
    return {th: "; ".join(f"{r} {roles[r][0] if roles[r] else 'none'}" for r in order if r in roles)
            for th, roles in best.items()}


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
        rows.append([th.named_title, lemmas, "; ".join(th.not_formal) or "nothing", reached.get(th.id, "not run")])
    return Table("prove-formal", pd.DataFrame(rows, columns=["statement", "Coq lemmas (every size)",
                                                          "proved on paper only", "SMT, this run (sizes)"]),
                 "What is machine-checked: per registered statement, the Coq lemmas that prove it for every size "
                 "(compiled by make proofs; coqchk reports no axiom) and the parts of its proof that are on paper "
                 "only, both read from the theorem registry, and the largest size up to which both SMT solvers "
                 "proved it in this run (a cross-check), read from the store.",
                 "theory registry (Theorem.formal, Theorem.not_formal); the SMT campaign's reach",
                 campaigns=(), command=command, wrap=8)
