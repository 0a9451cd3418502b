"""Softmax kernel recovery as stated, rendered from its findings
(:mod:`verification.rank.findings.softmax`): which value-map case each number is about, and each
rank estimator's decision on the claim that the energy effective rank is the robust one (how it is
decided: :mod:`verification.rank.findings.softmax`).

    recovery_summary_rows   per value map (W_V known / unknown): the linearised regression's share of
                            recovered kernels, the nonlinear fit's (W alone / W and W_V jointly), its
                            converged starts, identifiability failures and optimisation failures
    estimator_rows          per kernel source (regression / fit x W_V known / unknown) and per
                            estimator: share of recovered kernels whose rank equals r* (Wilson 95%)
    outcome_rows            per estimator: its share over all kernels and its decision, paired over
                            the teachers
"""
from __future__ import annotations

from verification.rank.checks.attention import KERNEL_TOL
from verification.rank.findings.softmax import ESTIMATORS, SoftmaxFindings
from verification.rank.report import cells as C
from theory.verdicts import ALPHA

NAMES = {"energy_0.9": "energy_0.9", "energy_0.99": "energy_0.99", "entropy": "entropy (p~sigma^2), rounded",
         "entropy_sigma": "entropy (p~sigma), rounded"}

SUMMARY_COLUMNS = ["value map", "draws", "regression recovers W [95% CI]", "fit", "fit recovers W [95% CI]",
                   "fit: median kernel error", "fit: converged starts", "fit: best start converged",
                   "identifiability failures", "fit outcomes"]
ESTIMATOR_COLUMNS = ["kernel source", "value map", "kernels"] + [f"{NAMES[e]} = r* [95% CI]" for e in ESTIMATORS]
OUTCOME_COLUMNS = ["estimator", "share = r* [95% CI]", "kernels", "teachers (units)",
                   "mean over teachers [95% CI, method]", "worse than (Holm)", "better than (Holm)",
                   "outcome on 'the robust estimator'"]
SUMMARY_COLUMNS += ["regression recovers W, over teachers [95% CI, method]"]


def _teachers(c) -> str:
    """A teacher-clustered share: the mean of the teachers' shares, its interval and how it was made."""
    return "-" if c is None or not c.clusters else f"{c.mean:.2f} [{c.lo:.2f}, {c.hi:.2f}], {c.method}"


def _fit_label(vm: str) -> str:
    return "W (W_V known)" if vm == "known" else "W and W_V jointly"


def recovery_summary_rows(f: SoftmaxFindings) -> list[list]:
    """One row per value map with draws: regression and nonlinear fit side by side."""
    rows = []
    for vm, v in f.value_maps.items():
        if not v.draws:
            continue
        fits = v.fits > 0
        rows.append([vm, v.draws, C.outcomes(v.regression), _fit_label(vm) if fits else "-",
                     C.outcomes(v.fit) if fits else "-", v.median_fit_error,
                     C.count(v.converged) if fits else "-", C.count(v.best_converged) if fits else "-",
                     C.count(v.identifiability_failures) if fits else "-",
                     ", ".join(f"{k} {n}" for k, n in v.fit_counts.items()) or "-", _teachers(v.regression_by_teacher)])
    return rows


def estimator_rows(f: SoftmaxFindings) -> list[list]:
    """Per kernel source and value map: each estimator's share of kernels whose rank is r*."""
    return [[c.source, c.value_map, c.kernels] + [C.outcomes(c.shares[e]) for e in ESTIMATORS] for c in f.kernels]


def outcome_rows(f: SoftmaxFindings) -> list[list]:
    """Per estimator: its share of kernels with rank r*, the teachers, whom it is worse / better than."""
    return [[NAMES[o.estimator], C.share_with_interval(o.share), o.share.n, o.units, _teachers(o.by_teacher),
             ", ".join(NAMES[x] for x in o.worse) or "-", ", ".join(NAMES[x] for x in o.better) or "-",
             o.decision.outcome] for o in f.decisions]


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
            "than every other, refuted = some other significantly better, inconclusive otherwise. The pooled share "
            "over kernels is descriptive; its interval over the teachers is the mean of the teachers' shares with a "
            "t interval, df = teachers - 1 (Wilson over the teachers where their shares do not vary).")}
