"""Tables and the figure of the attention rank campaigns (:mod:`verification.rank.checks.attention`),
rendered from their findings (:mod:`verification.rank.findings.attention`); each table built once
(:func:`attention_tables`) for Markdown/CSV here and LaTeX in :mod:`verification.rank.paper`.

Kernel recovery is judged by the recovered kernel (relative error of W_Q W_K^T up to scale and
sign, at most KERNEL_TOL), never by a rank estimate alone; every estimator's rank of the recovered
kernel is shown side by side. Claims are shares of supported draws with 95% Wilson intervals.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verification.rank.checks.attention import (CONVERGED, KERNEL_TOL, LEARNED_REL, NATIVE_INIT, NATIVE_SEEDS,
                                               campaigns)
from verification.rank.findings.attention import AttentionFindings, attention_findings
from verification.rank.report import cells as C
from verification.rank.report import softmax as SM
from verification.report.aggregate import group as _group
from verification.report.aggregate import median_keep_nan as _med
from verification.report.aggregate import pyplot as _plt
from verification.report.figures import save_figure
from verification.report.tables import Table, print_table

RECOVERED = f"kernel error <= {KERNEL_TOL} [95% CI]"
RECOVERY_COLUMNS = ["kind", "value map", "B", "beta", "T", "noise", RECOVERED,
                    "median kernel error", "energy_0.9", "energy_0.99", "entropy (p~sigma^2)", "entropy (p~sigma)",
                    "threshold", "fit: median kernel error", "fit: converged starts", "fit: spread", "outcomes"]


def _ranks(vals: tuple) -> str:
    if all(v is None for v in vals):
        return "-"
    return " ".join("-" if v is None else (f"{v:.2f}" if isinstance(v, float) and v != int(v) else str(int(v)))
                    for v in vals)


def recovery_rows(f: AttentionFindings) -> list[list]:
    """One row per setting: the share of draws whose kernel is recovered (Wilson 95%), the median
    kernel error, each estimator's ranks, the nonlinear fit (where run) and the outcomes as judged."""
    return [list(c.setting) + [C.outcomes(c.recovered), c.median_error] + [_ranks(v) for v in c.ranks.values()]
            + ([c.fit.median_error, f"{c.fit.converged}/{c.fit.starts}", c.fit.spread] if c.fit else ["-"] * 3)
            + [C.tally(c.verdicts)] for c in f.recovery]


EXACT_KINDS = {"exact/d3": ("linear, exact rational regression", "known"),
               "exact/d3/value-map-unknown": ("linear, exact rational regression (rank of the unfolding)", "unknown"),
               "exact/inversion": ("softmax, 50-digit inversion", "known")}


def exact_rows(f: AttentionFindings) -> list[list]:
    """The certified checks of the recovery campaign as rows of the same table, with their verdicts:
    the float draws of the linear rows are estimates (stored undecided, or not-applicable outside the
    claim's hypotheses); what certifies linear recovery is the exact rational regression's row."""
    return [[label, vm, *x.setting, "-", x.error] + ["-"] * 5 + ["-"] * 3 + [f"{x.verdict} 1"]
            for inst, (label, vm) in EXACT_KINDS.items() if (x := f.exact.get(inst)) is not None]


NATIVE_COLUMNS = ["claim", "kind", "runs supported / decided", "inconclusive", "teachers",
                  "mean over teachers [95% CI]", "interval"]


def native_rows(f: AttentionFindings) -> list[list]:
    """One row per (role, kind) of the native campaign, teacher-clustered."""
    return [[role, kind, f"{c.k}/{c.n}", c.inconclusive, c.clusters, f"{c.mean:.2f} [{c.lo:.2f}, {c.hi:.2f}]",
             c.method] for role, by in (f.native or {}).items() for kind, c in by.items() if c.clusters]


STUDENTS_COLUMNS = ["kind", "r", "median train risk", "median test risk", "certified lower bound (rounded down)",
                    "min exact risk - bound", "max rel. change last 10%", "median grad norm", "learned ranks",
                    "verdicts / outcomes"]
LADDER_COLUMNS = ["kind", "lambda", "static energy_0.99 ranks", "median static entropy rank", "median unexplained",
                  "static rank = r* [95% CI]"]


def students_rows(f: AttentionFindings) -> list[list]:
    """One row per (kind, r) of the GD students: risks, the certified bound, verdicts / outcomes."""
    return [[c.kind, c.r, c.median_train, c.median_test, c.bound, c.min_slack, c.max_rel_change,
             c.median_grad_norm, " ".join(str(x) for x in c.learned), C.tally(c.verdicts)] for c in f.students]


def ladder_rows(f: AttentionFindings) -> list[list]:
    """One row per (kind, lambda) of the interpolation ladder."""
    return [[c.kind, c.lam, " ".join(str(x) for x in c.ranks), c.median_entropy, c.median_unexplained,
             C.outcomes(c.equals)] for c in f.ladder]


def attention_provenance(plan: Any) -> str:
    """The provenance line of the attention tables of ``plan`` (a :class:`verification.rank.checks.Plan`)."""
    p = plan.attention
    rec_c, stu_c, lad_c, nat_c = campaigns(p, plan.seed)
    return f"campaigns {rec_c}, {stu_c}, {lad_c}; d={p.d}, r*={p.r_star}, T={p.T}"


def attention_tables(f: AttentionFindings, plan: Any) -> list[Table]:
    """The tables of the findings ``f`` of the attention part of ``plan`` (a :class:`verification.rank.checks.Plan`: its
    attention plan and seed), in order: ``rank-attention-recovery``, ``rank-attention-students``,
    ``rank-ladder``, ``rank-softmax-recovery``, ``rank-softmax-estimators``,
    ``rank-softmax-estimator-outcomes`` (Markdown captions)."""
    p = plan.attention
    rec_c, stu_c, lad_c, nat_c = campaigns(p, plan.seed)
    prov, cmd = attention_provenance(plan), plan.part_command("attention")
    exact = f.exact
    specs = [
        ("rank-attention-recovery", recovery_rows(f) + exact_rows(f), RECOVERY_COLUMNS, rec_c,
         f"Data-only recovery of the query-key kernel W (r*={p.r_star}, d={p.d}). A draw recovers W when the "
         f"relative error of the recovered kernel, up to scale and sign, is <= {KERNEL_TOL}; the ranks of the "
         f"recovered kernel by every estimator are listed per draw (energy_tau; entropy rank exp H(p) with "
         f"p ~ sigma^2 and p ~ sigma; Gavish-Donoho threshold where the noise is known). Softmax, measured: "
         f"the regression recovers W in {C.outcomes(f.softmax_recovered)} "
         f"draws; the nonlinear least-squares fit ({p.fit_starts} starts: the regression's estimate + random) "
         f"in {C.count(f.fit_recovered)} (both value maps; per value map: rank-softmax-recovery). "
         f"'spread' = largest kernel error between converged starts of equal cost (large = not identified); "
         f"the W_V-unknown rows' fit is the joint fit of W and W_V. "
         f"The proved linear claim applies to noiseless data with an identifiable design (W_V known: full-rank "
         f"design; W_V unknown: B T >= d^3); elsewhere not-applicable. Its float draws are estimates, stored "
         f"undecided (the kernel error and ranks are shown); it is certified by the exact rational regression (linear, "
         f"d=3, its own row): {exact['exact/d3'].verdict}; 50-digit softmax inversion, noiseless, beta 16/64: rel. error "
         f"{exact['exact/inversion'].value:.1e} ({exact['exact/inversion'].verdict}; float64 failures "
         f"there are precision, not identifiability)."),
        ("rank-attention-students", students_rows(f), STUDENTS_COLUMNS, stu_c,
         f"Kernel-rank-r students trained by plain GD ({p.steps} steps, W_V fixed to the teacher's, beta=1), "
         f"r*={p.r_star}. Linear r<r* (proved): certified lower bound mu_lo tail_lo (H - mu_lo I positive "
         f"definite in exact rationals, tail_lo the lower end of a 60-digit interval enclosure, product exact, "
         f"shown rounded down), compared with the exact rational risk of the exact rank-r product U V^T. "
         f"Softmax r<r*: a GD risk bounds the minimum from above only: inconclusive. r>=r* (claim): supported "
         f"when train/initial risk < 1e-6 with learned rank r*. Learned rank: sigma_i > 1e-3 sigma_1 of U V^T."),
        ("rank-ladder", ladder_rows(f), LADDER_COLUMNS, lad_c,
         f"Interpolation ladder: Y = ((1-lambda) M_static + lambda A(X)) X W_V, rank(M_static) = kernel rank "
         f"= r* = {p.r_star}, T={p.T}; the best static token mixer's rank against r* (claim: equal).")]
    if f.native:
        specs.append(("rank-attention-native", native_rows(f), NATIVE_COLUMNS, nat_c,
                      f"The attention-native claims as stated, on the recovery campaign's teachers (the clusters): "
                      f"achievability, students of kernel rank r* = {p.r_star} reach zero risk (train/initial < "
                      f"{CONVERGED:g}); recovery, over-parameterised students of kernel rank d = {p.d} from "
                      f"initialisation {NATIVE_INIT:g} on noiseless data end at learned kernel rank r* (sigma_i > "
                      f"{LEARNED_REL:g} sigma_1; inconclusive when not converged). {NATIVE_SEEDS} seeds per teacher "
                      f"and rank, {p.steps} steps, W_V fixed, beta = 1. Intervals over the teachers: the mean of the "
                      f"teachers' shares, t with df = teachers - 1, or Wilson over the teachers where their shares "
                      f"do not vary."))
    caps = SM.softmax_captions(p.r_star, p.fit_starts, p.fit_nfev)
    specs += [(name, rows, cols, rec_c, caps[name]) for name, rows, cols in (
        ("rank-softmax-recovery", SM.recovery_summary_rows(f.softmax), SM.SUMMARY_COLUMNS),
        ("rank-softmax-estimators", SM.estimator_rows(f.softmax), SM.ESTIMATOR_COLUMNS),
        ("rank-softmax-estimator-outcomes", SM.outcome_rows(f.softmax), SM.OUTCOME_COLUMNS))]
    return [Table.from_rows(name, rows, cols, caption, prov, campaigns=(c,), command=cmd)
            for name, rows, cols, c, caption in specs]


TITLES = {"rank-attention-recovery": "rank: attention kernel recovery",
          "rank-attention-students": "rank: attention students", "rank-ladder": "rank: interpolation ladder",
          "rank-softmax-recovery": "rank: softmax recovery by value map",
          "rank-softmax-estimators": "rank: estimators on recovered softmax kernels",
          "rank-softmax-estimator-outcomes": "rank: the robust-estimator claim",
          "rank-attention-native": "rank: attention-native achievability and recovery"}


def report_attention(store: Any, plan: Any, tables: Path, figures: Path, console: Any,
                     f: AttentionFindings = None) -> dict:
    """Tables and the figure of the attention campaigns of ``plan`` (a
    :class:`verification.rank.checks.Plan`) from their findings ``f`` (default: read from the store)."""
    f = attention_findings(store, plan.attention, plan.seed) if f is None else f
    for table in attention_tables(f, plan):
        table.write(tables)
        print_table(console, table.rows(), table.columns(), TITLES[table.name])
    _figure(f.records["recovery"], f.records["ladder"], figures, attention_provenance(plan))
    return {"att_recovery": C.outcomes(f.softmax_recovered), "att_fit_recovery": C.count(f.fit_recovered),
            "att_students": C.tally(f.student_verdicts), "ladder": C.outcomes(f.ladder_equals)}


def _figure(recs: list, lad: list, figures: Path, prov: str) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    soft = [x for x in recs if x["provenance"]["kind"] == "softmax"]
    for (T, noise, vm), rs in _group(soft, lambda x: (x["provenance"]["T"], x["provenance"]["noise"],
                                                      x["provenance"].get("value_map", "known"))).items():
        cell = _group(rs, lambda x: (x["provenance"]["beta"],))
        axes[0].loglog([k[0] for k in cell], [max(_med([x["extra"]["rel_error"] for x in v]), 1e-17)
                                              for v in cell.values()], "o-" if vm == "known" else "s--",
                       label=f"T={T}, noise {noise:g}, W_V {vm}")
    axes[0].set(xlabel="beta (logit scale)", ylabel="median rel. error of W", title="softmax: data-only recovery")
    axes[0].legend(fontsize=7)
    for kind, rs in _group(lad, lambda x: (x["provenance"]["kind"],)).items():
        cell = _group(rs, lambda x: (x["provenance"]["lam"],))
        axes[1].plot([k[0] for k in cell], [np.median([x["value"] for x in v]) for v in cell.values()], "o-",
                     label=f"{kind[0]}: static energy rank")
    axes[1].axhline(lad[0]["bound"] if lad else 0, color="grey", lw=0.8, label="kernel rank r*")
    axes[1].set(xlabel="lambda (0 static, 1 attention)", ylabel="rank", title="interpolation ladder")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, figures, "rank_attention", prov)
    plt.close(fig)
