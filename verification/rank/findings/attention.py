"""Findings of the attention rank campaigns (:mod:`verification.rank.checks.attention`): data-only
kernel recovery per setting, the exact checks, the GD students and the interpolation ladder, as
typed values; softmax recovery by value map and its estimators are :mod:`.softmax`.

A draw's recovery is judged from its stored kernel error (:func:`rejudged`: the findings never trust a
stored label), never by a rank estimate alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from verification.findings import Share, Tally
from verification.rank.checks.attention import KERNEL_TOL, campaigns, kernel_outcome
from verification.rank.findings.outcomes import Clustered, Outcomes
from verification.report.aggregate import group
from verification.report.aggregate import median_keep_nan as _med

RANK_KEYS = ("energy_0.9", "energy_0.99", "entropy", "entropy_sigma", "threshold")


@dataclass(frozen=True)
class FitSummary:
    """The nonlinear fits of one setting: median kernel error, converged of all starts, largest spread."""

    median_error: Optional[float]
    converged: int
    starts: int
    spread: float


@dataclass(frozen=True)
class RecoveryCell:
    """One setting of the recovery campaign (kind, value map, B, beta, T, noise; "-" where the kind has
    none): the draws that recover W, the median kernel error, each estimator's rank per draw (None
    where not given), the fits where run, and the verdicts as judged."""

    setting: tuple
    recovered: Outcomes
    median_error: Optional[float]
    ranks: dict
    fit: Optional[FitSummary]
    verdicts: Tally


@dataclass(frozen=True)
class ExactCheck:
    """A certified check of the recovery campaign (``exact/d3``, ``exact/inversion``): its verdict, its
    stored value and kernel error (0 for the exact rational regression), and its setting."""

    instance: str
    theorem: str
    verdict: str
    value: Any
    error: Any
    setting: tuple


@dataclass(frozen=True)
class StudentCell:
    """One (kind, r) of the GD students: risks, the certified bound (linear deficiency), verdicts."""

    kind: str
    r: int
    median_train: Optional[float]
    median_test: Optional[float]
    bound: Any
    min_slack: Any
    max_rel_change: float
    median_grad_norm: Optional[float]
    learned: tuple
    verdicts: Tally


@dataclass(frozen=True)
class LadderCell:
    """One (kind, lambda) of the interpolation ladder: the static ranks, medians, static rank = r*."""

    kind: str
    lam: Any
    ranks: tuple
    median_entropy: Optional[float]
    median_unexplained: Optional[float]
    equals: Outcomes


@dataclass(frozen=True)
class AttentionFindings:
    """Everything the attention part reports: the cells of its tables and the numbers of its claims."""

    plan: Any
    campaigns: tuple
    recovery: tuple
    exact: dict
    softmax_recovered: Outcomes
    fit_recovered: Share
    linear_float_matches: Share
    students: tuple
    student_verdicts: Tally
    students_deficiency: Tally
    reach_zero: dict
    ladder: tuple
    ladder_equals: Outcomes
    ladder_misses: Share
    ladder_static: Outcomes
    ladder_mixed: Outcomes
    softmax: Any
    records: dict
    ladder_misses_by_teacher: Optional[Clustered] = None   # the mixed rungs' misses, the ladder's teachers as clusters
    native: Optional[dict] = None      # {role: {"linear" | "softmax" | "both": Clustered}}, teachers as clusters


def rejudged(rec: dict) -> dict:
    """A recovery record judged from its stored kernel error: a draw is recovered iff rel_error <= its
    tolerance (``recovered``; ``verdict`` too where the stored one is an outcome)."""
    ex = rec["extra"]
    out = kernel_outcome(ex["rel_error"], ex.get("tol", KERNEL_TOL)).value
    return {**rec, "verdict": out if rec["verdict"] in ("supported", "refuted", "inconclusive") else rec["verdict"],
            "recovered": out}


def split_exact(allrec: list[dict]) -> tuple[list[dict], dict[str, dict]]:
    """The recovery campaign's float draws, and its exact checks by instance (``exact/...``)."""
    return ([x for x in allrec if not x["instance"].startswith("exact")],
            {x["instance"]: x for x in allrec if x["instance"].startswith("exact")})


def _recovery(recs: list[dict]) -> tuple:
    cells = []
    keyf = lambda x: (x["provenance"]["kind"],) + tuple(  # noqa: E731
        x["provenance"].get(k, "-") for k in ("value_map", "B", "beta", "T", "noise"))
    for key, rs in group(recs, keyf).items():
        judged = [rejudged(x) for x in rs]
        fits = [x["extra"]["fit"] for x in rs if x["extra"].get("fit")]
        cells.append(RecoveryCell(
            key, Outcomes.of(x["recovered"] for x in judged), _med([x["extra"]["rel_error"] for x in rs]),
            {k: tuple(x["extra"].get(k) for x in rs) for k in RANK_KEYS},
            FitSummary(_med([f["rel_error"] for f in fits]), sum(f["converged"] for f in fits),
                       sum(f["starts"] for f in fits), max(f["spread"] for f in fits)) if fits else None,
            Tally.of(x["verdict"] for x in judged)))
    return tuple(cells)


def _exact(exact: dict[str, dict]) -> dict:
    out = {}
    for inst, x in exact.items():
        p = x["provenance"]
        out[inst] = ExactCheck(inst, x["theorem"], x["verdict"], x["value"],
                               0.0 if x["theorem"] == "rank.attention.linear.recovery" else x["value"],
                               (p.get("B", "-"), p.get("beta", "-"), p.get("T", "-"), p.get("noise", 0.0)))
    return out


def _students(stu: list[dict]) -> tuple:
    cells = []
    for (kind, r), rs in group(stu, lambda x: (x["provenance"]["kind"], x["provenance"]["r"])).items():
        ex = [x["extra"] for x in rs]
        cells.append(StudentCell(
            kind, r, _med([x["value"] for x in rs]), _med([e["test_risk"] for e in ex]),
            rs[0]["bound"] if rs[0]["theorem"] == "rank.attention.linear.deficiency" else None,
            min((e["exact_slack"] for e in ex if "exact_slack" in e), default=None),
            max(e["rel_change_last_tenth"] for e in ex), _med([e["grad_norm"] for e in ex]),
            tuple(e["learned"] for e in ex), Tally.of(x["verdict"] for x in rs)))
    return tuple(cells)


def _ladder(lad: list[dict]) -> tuple:
    return tuple(LadderCell(kind, lam, tuple(int(x["value"]) for x in rs), _med([x["extra"]["entropy"] for x in rs]),
                            _med([x["extra"]["unexplained"] for x in rs]), Outcomes.of_records(rs))
                 for (kind, lam), rs in group(lad, lambda x: (x["provenance"]["kind"], x["provenance"]["lam"])).items())


def native(nat: list[dict]) -> dict:
    """The native campaign's runs per role (achievability, recovery) and kind (and "both"), each
    :class:`Clustered` over the teachers (both kinds of a teacher in one cluster)."""
    runs = [x for x in nat if "role" in x["provenance"]]
    return {role: {kind: Clustered.of((x["provenance"]["teacher_seed"], x["verdict"]) for x in runs
                                      if x["provenance"]["role"] == role and kind in ("both", x["provenance"]["kind"]))
                   for kind in ("linear", "softmax", "both")}
            for role in ("achievability", "recovery")}


def findings_of(allrec: list[dict], stu: list[dict], lad: list[dict], plan: Any, seed: int,
                nat: Optional[list] = None) -> AttentionFindings:
    """The :class:`AttentionFindings` of the records of the campaigns of the attention plan ``plan``
    (a :class:`verification.rank.checks.attention.AttPlan`) at ``seed``: recovery, students, ladder
    and (``nat``, where given) the native campaign, whose exact check joins the recovery's."""
    from verification.rank.findings.softmax import softmax_findings

    recs, exact = split_exact(allrec)
    exact.update(split_exact(list(nat or []))[1])          # the native campaign's exact check (value map unknown)
    soft = [rejudged(x) for x in recs if x["provenance"]["kind"] == "softmax"]
    fits = [x["extra"]["fit"] for x in soft if x["extra"].get("fit")]
    lin = [x for x in recs if x["provenance"]["kind"] == "linear" and x["verdict"] == "undecided"]
    mixed = [x for x in lad if float(x["provenance"]["lam"]) > 0]       # attention contributes: lambda > 0
    return AttentionFindings(
        plan=plan, campaigns=campaigns(plan, seed), recovery=_recovery(recs), exact=_exact(exact),
        softmax_recovered=Outcomes.of(x["recovered"] for x in soft),
        fit_recovered=Share.wilson(sum(f["rel_error"] <= KERNEL_TOL for f in fits), len(fits)),
        linear_float_matches=Share.wilson(sum(bool(x["extra"].get("float_rank_matches")) for x in lin), len(lin)),
        students=_students(stu), student_verdicts=Tally.of(x["verdict"] for x in stu),
        students_deficiency=Tally.of(x["verdict"] for x in stu if x["theorem"] == "rank.attention.linear.deficiency"),
        reach_zero={kind: Outcomes.of_records(x for x in stu if x["theorem"] == "rank.attention.native"
                                              and x["provenance"]["kind"] == kind and x["provenance"]["r"] >= plan.r_star)
                    for kind in ("linear", "softmax")},
        ladder=_ladder(lad), ladder_equals=Outcomes.of_records(lad),
        ladder_misses=Share.wilson(sum(x["verdict"] == "refuted" for x in mixed), len(mixed)),
        ladder_static=Outcomes.of_records(x for x in lad if float(x["provenance"]["lam"]) == 0),
        ladder_mixed=Outcomes.of_records(mixed), softmax=softmax_findings(recs, plan.r_star),
        records={"recovery": recs, "ladder": lad},
        ladder_misses_by_teacher=Clustered.of_hits((x["provenance"]["seed"], x["verdict"] == "refuted") for x in mixed),
        native=native(nat) if nat is not None else None)


def attention_findings(store: Any, plan: Any, seed: int) -> AttentionFindings:
    """The :class:`AttentionFindings` of the attention plan ``plan`` at ``seed`` from ``store``."""
    rec, stu, lad, nat = (list(store.records(campaign=c)) for c in campaigns(plan, seed))
    return findings_of(rec, stu, lad, plan, seed, nat)
