"""Softmax kernel recovery as stated, aggregated from the stored recovery records
(:mod:`verification.rank.checks.attention`) only: which value-map case each number is about, and
each rank estimator's outcome on the claim that the energy effective rank is the robust one.

    recovery_summary_rows   per value map (W_V known / unknown): the linearised regression's share of
                            recovered kernels, the nonlinear fit's (W alone / W and W_V jointly), its
                            converged starts, identifiability failures and optimisation failures
    estimator_rows          per kernel source (regression / fit x W_V known / unknown) and per
                            estimator: share of recovered kernels whose rank equals r* (Wilson 95%),
                            then the estimator's outcome over all sources, paired draw by draw

The estimator outcome (claim "estimator e is the robust one": it gives r* at least as often as every
other on the same kernels). The independent units are the teachers: every setting (beta, T, noise,
value map) and both kernel sources (the regression and the fit started from it) of one teacher are
repeated measures of it, never independent draws. Per teacher, each estimator's share of its kernels
whose rank is r*; for each pair of estimators an exact sign test over the teachers on the difference of
their shares (discrete data: no spread is needed, so identical differences across teachers are many
signs, never a zero-sd t), Holm across every pair of the table at 0.05 (:func:`compare`).
supported: e is significantly better than every other; refuted: some other is significantly better;
inconclusive otherwise. Statistic: e's share over all kernels (descriptive); interval: its 95%
Wilson interval. The threshold estimator needs the noise level of the kernel's entries, which no
softmax route provides: not applicable here.
"""
from __future__ import annotations

from typing import Any, Optional

from verification.rank.checks.attention import KERNEL_TOL, fit_outcome, identifiability_failure, kernel_outcome
from verification.rank.report.linear import outcome_share
from verification.report.aggregate import median_keep_nan as _med
from verification.stats import ALPHA, best_outcome, pairwise, wilson

ESTIMATORS = ("energy_0.9", "energy_0.99", "entropy", "entropy_sigma")
NAMES = {"energy_0.9": "energy_0.9", "energy_0.99": "energy_0.99", "entropy": "entropy (p~sigma^2), rounded",
         "entropy_sigma": "entropy (p~sigma), rounded"}
SOURCES = (("regression", "known"), ("regression", "unknown"), ("fit", "known"), ("fit", "unknown"))

SUMMARY_COLUMNS = ["value map", "draws", "regression recovers W [95% CI]", "fit", "fit recovers W [95% CI]",
                   "fit: median kernel error", "fit: converged starts", "fit: best start converged",
                   "identifiability failures", "fit outcomes"]
ESTIMATOR_COLUMNS = ["kernel source", "value map", "kernels"] + [f"{NAMES[e]} = r* [95% CI]" for e in ESTIMATORS]
OUTCOME_COLUMNS = ["estimator", "share = r* [95% CI]", "kernels", "teachers (units)", "worse than (Holm)",
                   "better than (Holm)", "outcome on 'the robust estimator'"]


def softmax_draws(recs: list[dict]) -> list[dict]:
    """The float softmax draws (not the exact checks)."""
    return [x for x in recs if x["provenance"].get("kind") == "softmax" and not x["instance"].startswith("exact")]


def _value_map(x: dict) -> str:
    return x["provenance"].get("value_map", "known")


def _fit_label(vm: str) -> str:
    return "W (W_V known)" if vm == "known" else "W and W_V jointly"


def recovery_summary_rows(recs: list[dict]) -> list[list]:
    """One row per value map: regression and nonlinear fit side by side (module docstring)."""
    rows = []
    for vm in ("known", "unknown"):
        mine = [x for x in softmax_draws(recs) if _value_map(x) == vm]
        if not mine:
            continue
        reg = [{"verdict": kernel_outcome(x["extra"]["rel_error"], x["extra"].get("tol", KERNEL_TOL)).value}
               for x in mine]
        fits = [x["extra"]["fit"] for x in mine if x["extra"].get("fit")]
        judged = [fit_outcome(f, KERNEL_TOL).value for f in fits]
        counts = {o: judged.count(o) for o in ("supported", "refuted", "inconclusive") if judged.count(o)}
        rows.append([vm, len(mine), outcome_share(reg), _fit_label(vm) if fits else "-",
                     outcome_share([{"verdict": o} for o in judged]) if fits else "-",
                     _med([f["rel_error"] for f in fits]) if fits else None,
                     f"{sum(f['converged'] for f in fits)}/{sum(f['starts'] for f in fits)}" if fits else "-",
                     f"{sum(bool(f.get('best_converged')) for f in fits)}/{len(fits)}" if fits else "-",
                     f"{sum(identifiability_failure(f) for f in fits)}/{len(fits)}" if fits else "-",
                     ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"])
    return rows


def _hit(value: Any, r_star: int, estimator: str) -> Optional[bool]:
    if value is None:
        return None
    return (round(float(value)) if estimator.startswith("entropy") else int(value)) == r_star


def kernels(recs: list[dict]) -> list[tuple[str, str, dict]]:
    """Every recovered softmax kernel's ranks: (source, value map, ranks by estimator)."""
    out = []
    for x in softmax_draws(recs):
        vm = _value_map(x)
        out.append(("regression", vm, x["extra"]))
        if x["extra"].get("fit"):
            out.append(("fit", vm, x["extra"]["fit"]))
    return out


def estimator_rows(recs: list[dict], r_star: int) -> list[list]:
    """Per kernel source and value map: each estimator's share of kernels whose rank is r*."""
    ks = kernels(recs)
    rows = []
    for src, vm in SOURCES:
        mine = [k for s, v, k in ks if (s, v) == (src, vm)]
        if mine:
            rows.append([src, vm, len(mine)] + [_share([_hit(k.get(e), r_star, e) for k in mine]) for e in ESTIMATORS])
    return rows


def _share(hits: list[Optional[bool]]) -> str:
    return outcome_share([{"verdict": "inconclusive" if h is None else ("supported" if h else "refuted")}
                          for h in hits])


def teacher_hits(recs: list[dict], r_star: int) -> dict:
    """{teacher seed: {estimator: [hit or None per kernel]}}: every kernel of a teacher (each setting,
    both sources) under its one independent unit."""
    out: dict = {}
    for x in softmax_draws(recs):
        t = out.setdefault(x["provenance"]["seed"], {e: [] for e in ESTIMATORS})
        for k in [x["extra"]] + ([x["extra"]["fit"]] if x["extra"].get("fit") else []):
            for e in ESTIMATORS:
                t[e].append(_hit(k.get(e), r_star, e))
    return out


def compare(units: dict, estimators: tuple = ESTIMATORS, alpha: float = ALPHA) -> dict:
    """Pairwise comparison of estimators over independent units (``units``: {unit: {estimator: [hit
    or None]}}): per unit each estimator's share of hits; per pair an exact sign test on the units'
    differences, Holm across every pair (:func:`verification.stats.pairwise`).
    {estimator: (worse than, better than, {other: adjusted p})}."""
    return pairwise(units, estimators, "sign", alpha)


def estimator_outcomes(recs: list[dict], r_star: int) -> list[dict]:
    """Each estimator's outcome on "e is the robust estimator", the teachers as the units (:func:`compare`)."""
    ks = [k for _, _, k in kernels(recs)]
    hits = {e: [_hit(k.get(e), r_star, e) for k in ks] for e in ESTIMATORS}
    units = teacher_hits(recs, r_star)
    cmp = compare(units)
    out = []
    for e in ESTIMATORS:
        worse, better, p = cmp[e]
        k = sum(h is True for h in hits[e])
        n = sum(h is not None for h in hits[e])
        outcome = best_outcome(worse, better, len(ESTIMATORS))
        out.append({"estimator": e, "k": k, "n": n, "units": len(units), "interval": wilson(k, n), "worse": worse,
                    "better": better, "outcome": outcome, "p_values": p})
    return out


def outcome_rows(recs: list[dict], r_star: int) -> list[list]:
    rows = []
    for o in estimator_outcomes(recs, r_star):
        lo, hi = o["interval"]
        rows.append([NAMES[o["estimator"]], f"{o['k']}/{o['n']} [{lo:.2f}, {hi:.2f}]" if o["n"] else "-", o["n"],
                     o["units"], ", ".join(NAMES[x] for x in o["worse"]) or "-",
                     ", ".join(NAMES[x] for x in o["better"]) or "-", o["outcome"]])
    return rows


def softmax_captions(r_star: int, fit_starts: int, fit_nfev: int) -> dict[str, str]:
    return {
        "rank-softmax-recovery": (
            f"Softmax kernel recovery from data, by value map. Regression: the linearised (or, T <= d, inverted) "
            f"regression; fit: nonlinear least squares of W with W_V known, of W and W_V jointly with W_V unknown, "
            f"{fit_starts} starts each (the regression's estimate + random; {fit_nfev} evaluations per start), converged "
            f"iff ||J^T r|| <= 1e-6 ||J|| max(||r||, 1e-8 ||Y||) at its end (first-order optimality, not the stopping "
            f"reason). A draw recovers W when the kernel error (scale, sign) is <= {KERNEL_TOL}. Fit "
            f"outcome: supported if it recovers W, refuted if its best start converged elsewhere, inconclusive if no "
            f"converged start reached W. Identifiability failure: converged starts of equal cost whose kernels differ "
            f"by more than {KERNEL_TOL}."),
        "rank-softmax-estimators": (
            f"Rank of each recovered softmax kernel (r* = {r_star}) by estimator, per kernel source: share of kernels "
            f"whose rank equals r* (95% Wilson). Entropy ranks rounded. The Gavish-Donoho threshold needs the noise "
            f"of the kernel's entries, which no softmax route gives: not applicable."),
        "rank-softmax-estimator-outcomes": (
            "The claim that the energy effective rank is the robust estimator under softmax distortion, tested for "
            "every estimator: the teachers are the independent units (each setting and kernel source of a teacher "
            "a repeated measure), per teacher each estimator's share of kernels with rank r*, exact sign tests over "
            f"the teachers, Holm across every pair at {ALPHA}; supported = significantly better "
            "than every other, refuted = some other significantly better, inconclusive otherwise.")}
