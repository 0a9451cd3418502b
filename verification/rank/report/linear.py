"""Tables and figures of the linear rank campaigns, rendered from their findings
(:mod:`verification.rank.findings.linear`): each table built once (:func:`linear_tables`, one
:class:`~verification.report.tables.Table` each) and rendered to Markdown/CSV here and to LaTeX by
:mod:`verification.rank.paper`. The estimator captions state the measured conclusion, generated
from the findings (never typed).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from verification.rank.checks.linear import ESTIMATORS, Plan
from verification.rank.findings.linear import Bias, LinearFindings, linear_campaigns, linear_findings
from verification.rank.report import cells as C
from verification.report.aggregate import group as _group
from verification.report.aggregate import median_keep_nan as _med
from verification.report.aggregate import pyplot as _plt
from verification.report.figures import save_figure
from verification.report.tables import Table, print_table

ESTIMATOR_NAMES = {"energy_0.9": "energy_0.9", "energy_0.99": "energy_0.99",
                   "entropy_round": "entropy rank (p ~ sigma^2), rounded",
                   "entropy_sigma_round": "entropy rank (p ~ sigma), rounded",
                   "threshold_median": "threshold (noise from the median)",
                   "threshold": "threshold (residual noise)"}
SHORT = {"energy_0.9": "E0.9", "energy_0.99": "E0.99", "entropy_round": "H2", "entropy_sigma_round": "H1",
         "threshold_median": "GDm", "threshold": "GDr"}


def estimator_bias_sentence(b: Bias) -> str:
    """Energy and entropy ranks are biased without any noise: ``b`` evaluated on the geometric spectrum."""
    return (f"Energy and entropy ranks are biased even without noise: on the spectrum ({', '.join(f'{x:g}' for x in b.spectrum)}) with "
            f"r* = {len(b.spectrum)}, energy_0.9 = {b.energy_90}, energy_0.99 = {b.energy_99}, entropy "
            f"rank {b.entropy:.2f} (p ~ sigma^2) and {b.entropy_sigma:.2f} (p ~ sigma).")


def estimator_conclusion(f: LinearFindings) -> str:
    """The measured conclusion: each estimator's mean share of draws that recover r* over the
    independent units, and its decision in the paired comparison among the estimators given the
    same information."""
    rows = f.comparison
    if not rows or not rows[0].share.n:
        return "No draws stored."
    parts = [f"{ESTIMATOR_NAMES[o.estimator]} {C.estimate(o.share)} ({o.decision.outcome})" for o in rows]
    resid = f.estimator_outcomes["threshold"]
    extra = (f"; with the residual noise as well (more information, not compared): {C.outcomes(resid)}"
             if resid.total else "")
    return (f"Measured: mean share of draws recovering r* = {f.plan.r_star} over {rows[0].share.n} independent data draws "
            f"[Wilson 95% at n = draws], and the outcome on 'this estimator recovers r* most often' (exact sign tests over the draws, "
            f"Holm across every pair): " + "; ".join(parts) + extra + ".")


RISK_COLUMNS = ["shape", "covariance", "r", "R(r) seed 0", "sigma_r*^2", "max certified width",
                "max |float - certified|", "EYM agrees to width", "deficiency", "achievability"]
GD_POPULATION_COLUMNS = ["shape", "r", "init", "learned = min(r, r*) [95% CI]", "learned counts", "median risk",
                         "optimum R(r)", "max gap", "max rel. change last 10%", "median grad norm",
                         "median first step"]
GD_DATA_COLUMNS = ["shape", "N", "noise", "init", "passes r* [95% CI]", "first step at r* (median)",
                   "last step at r* (median)", "decades at r* (median)", "ends at r* [95% CI]", "final ranks",
                   "final rank, 10x-init threshold (median)", "median final grad norm", "median final risk"]
ESTIMATOR_COLUMNS = ["shape", "N", "noise", "sigma_r*", "noise edge (true noise)", "sigma_r* vs edge"] + \
    [f"{ESTIMATOR_NAMES[e]} = r* [95% CI]" for e in ESTIMATORS] + ["better, paired (Holm over the table)"]
COMPARISON_COLUMNS = ["estimator", "mean share = r* [95% CI]", "units", "worse than (Holm)", "better than (Holm)",
                      "outcome on 'recovers r* most often'"]


def risk_rows(f: LinearFindings) -> list[list]:
    """One row per (shape, covariance, r) of the optimum campaign: R(r), sigma_r*^2, verdicts."""
    return [[c.shape, c.covariance, c.r, c.risk, c.sigma2, c.width, c.fast_error, C.count(c.eym_agrees),
             C.tally(c.deficiency), C.tally(c.achievability)] for c in f.risk]


def gd_population_rows(f: LinearFindings) -> list[list]:
    """One row per (shape, r, init) of GD on the population loss."""
    return [[c.shape, f"r*{c.r - c.r_star:+d}" if c.r != c.r_star else "r*", c.init, C.outcomes(c.learned),
             C.counted(c.learned_counts), c.median_risk, c.optimum, c.max_gap, c.max_rel_change,
             c.median_grad_norm, c.median_first_step] for c in f.population]


def gd_data_rows(f: LinearFindings) -> list[list]:
    """One row per (shape, N, noise, init) of GD on finite noisy data: where the noise-level rank
    passes r* and for how long, and where it ends."""
    return [[c.shape, c.N, c.noise, c.init, C.outcomes(c.passes), c.first_step, c.last_step, c.span_decades,
             C.outcomes(c.ends), C.counted(c.final_ranks), c.escape_rank, c.grad_norm_end, c.risk_end]
            for c in f.data]


def estimator_rows(f: LinearFindings) -> list[list]:
    """One row per (shape, N, noise): the design (sigma_r* against the noise edge at the true noise,
    which no estimator is given), each estimator's share, and the pairs that differ."""
    return [[c.shape, c.N, c.noise, c.sigma_r_star, c.edge, "BELOW" if c.below else "above"]
            + [C.outcomes(c.shares[e]) for e in ESTIMATORS]
            + [", ".join(f"{SHORT[a]} > {SHORT[b]}" for a, b in c.better) or "-"] for c in f.estimators]


def estimator_summary_rows(f: LinearFindings) -> list[list]:
    """Per spectrum shape (and "all"): each estimator's mean share over the independent data draws."""
    return [[u.shape] + [C.estimate(u.means[e]) if u.means[e] else "-" for e in ESTIMATORS] + [u.units]
            for u in f.summary]


def comparison_rows(f: LinearFindings) -> list[list]:
    return [[ESTIMATOR_NAMES[o.estimator], C.estimate(o.share), o.share.n,
             ", ".join(ESTIMATOR_NAMES[x] for x in o.worse) or "-",
             ", ".join(ESTIMATOR_NAMES[x] for x in o.better) or "-", o.decision.outcome] for o in f.comparison]


def linear_provenance(plan: Plan) -> str:
    return (f"campaigns rank.*-{plan.tag}; seed {plan.seed}; n={plan.n}, r*={plan.r_star}; "
            f"GD steps {plan.gd_steps}")


def linear_tables(f: LinearFindings, family_plan: Any) -> list[Table]:
    """The tables of the findings ``f`` of the linear part of ``family_plan`` (a :class:`verification.rank.checks.Plan`),
    in order: ``rank-linear-risk``, ``rank-gd-population``, ``rank-gd-data``, ``rank-estimators``,
    ``rank-estimators-summary``, ``rank-estimator-comparison`` (Markdown captions), each naming the
    command that fills it (``attnbounds rank --part linear ...``)."""
    plan = family_plan.linear
    r_star, prov = plan.r_star, linear_provenance(plan)
    camp = linear_campaigns(plan)
    cmd = family_plan.part_command("linear")
    definitions = (
        f"Estimators on sigma_i of M_hat K_hat^(1/2) (least squares, n={plan.n}, N inputs x 4 columns, "
        f"{plan.est_seeds} draws per cell, the same draws for every estimator): energy_tau = min k with "
        f"sum_(i<=k) sigma_i^2 >= tau sum sigma_i^2; entropy rank = exp(-sum p_i log p_i), rounded, in two "
        f"normalisations, p_i = sigma_i^2 / sum sigma^2 (docs/theory.md §3) and p_i = sigma_i / sum sigma; "
        f"threshold (noise from the median) = #sigma_i above Gavish-Donoho's unknown-noise rule omega(beta) "
        f"median(sigma) (2.858 median(sigma) for a square matrix): like the energy and entropy ranks it sees the "
        f"spectrum alone. threshold (residual noise) = #sigma_i above the known-noise threshold lambda(beta) "
        f"sqrt(n) s with s = noise_hat / sqrt(4 N), noise_hat the least-squares residual std: it reads the "
        f"residuals as well (more information), so it is shown beside the others, not compared with them. "
        f"The noise edge is that threshold at the TRUE noise, a description of the design given to no "
        f"estimator; BELOW marks cells whose smallest signal singular value sigma_r* lies at or under it. "
        f"Paired comparison per cell (draws independent): McNemar's exact test on the discordant draws for "
        f"every pair of the five estimators given the same information, Holm across every pair of every "
        f"cell ({', '.join(f'{v} = {ESTIMATOR_NAMES[k]}' for k, v in SHORT.items())}).")
    specs = [
        ("rank-linear-risk", risk_rows(f), RISK_COLUMNS, ("optimum",),
         f"Optimal rank-r excess risk R(r) (per unit d), n={plan.n}, r*={r_star}: tail sum certified in "
         f"60-digit intervals; the risk of P_r M* agrees with it within the interval width (Eckart-Young-Mirsky, "
         f"recorded undecided: overlapping enclosures do not certify equality of irrational values); "
         f"deficiency/achievability verdicts decided exactly from r* = rank(M*). "
         f"Excess-risk identity exact on {C.tally_share(f.identity, 'holds', 'tight')} instances, "
         f"Monte Carlo |z| max {f.identity_max_z:.2f}."),
        ("rank-gd-population", gd_population_rows(f), GD_POPULATION_COLUMNS, ("gd-pop",),
         f"GD on U V^T, population loss, {plan.gd_seeds} seeds per row, {plan.gd_steps} steps: "
         f"learned rank = #sigma_i(U V^T K^(1/2)) > 10 x its initial top value; risk per unit d; "
         f"'rel. change' over the last tenth of the steps says how converged the risk is."),
        ("rank-gd-data", gd_data_rows(f), GD_DATA_COLUMNS, ("gd-data",),
         f"GD on U V^T (full width r = n) on N inputs x 4 columns of noisy data from small initialisation "
         f"({', '.join(f'{x:g}' for x in plan.data_inits)}), {plan.gd_seeds} seeds per row, {plan.gd_steps} steps. "
         f"Rank along the trajectory = #sigma_i(U V^T K^(1/2)) above the noise level (Gavish-Donoho threshold of "
         f"the least-squares fit's entry noise, noise_hat / sqrt(4 N)), at 120 log-spaced steps: whether it passes "
         f"r*, the first and last recorded step at r*, the span at r* in decades of steps (log10 of the step after "
         f"the last one at r* over the first), and the rank at the last step (the outcome). For comparison, the "
         f"final rank counted above 10 x the initial top singular value: unregularised GD tends to the full-rank "
         f"least-squares fit, so that count grows toward n with the steps and does not test the claim."),
        ("rank-estimators", estimator_rows(f), ESTIMATOR_COLUMNS, ("estimators",),
         f"Pre-training recovery of r*={r_star}. {estimator_conclusion(f)} "
         f"{estimator_bias_sentence(f.bias)} {definitions}"),
        ("rank-estimators-summary", estimator_summary_rows(f), ["shape"] + list(ESTIMATORS) + ["units"],
         ("estimators",),
         "Mean share of draws recovering r* per estimator and spectrum shape, over all sample sizes and noise "
         "levels: one unit per independent data draw (shape, N, draw index; its noise levels reuse its random "
         "numbers and are averaged first), Wilson 95% interval at n = units (entropy_round: p ~ sigma^2; "
         f"entropy_sigma_round: p ~ sigma). {estimator_bias_sentence(f.bias)}"),
        ("rank-estimator-comparison", comparison_rows(f), COMPARISON_COLUMNS, ("estimators",),
         "The five estimators given the same information (the fit's singular values alone), compared paired: "
         "one unit per independent data draw, per unit each estimator's share of its noise levels recovering r*, "
         "for every pair the exact sign test on the units' differences, Holm across every pair at 0.05; "
         "supported = significantly better than every other, refuted = some other significantly better, "
         "inconclusive otherwise. Conditional on the plan's teachers (one per spectrum shape).")]
    return [Table.from_rows(name, rows, cols, caption, prov, campaigns=tuple(camp[c] for c in cs), command=cmd)
            for name, rows, cols, cs, caption in specs]


TITLES = {"rank-linear-risk": "rank: R(r) vs r", "rank-gd-population": "rank: GD (population)",
          "rank-gd-data": "rank: GD (finite data)", "rank-estimators": "rank: estimators",
          "rank-estimators-summary": "rank: estimator summary",
          "rank-estimator-comparison": "rank: estimators compared, paired"}


def report_linear(store: Any, family_plan: Any, tables: Path, figures: Path, console: Console,
                  f: LinearFindings = None) -> dict:
    """Tables and the figure of the linear campaigns of ``family_plan`` (a
    :class:`verification.rank.checks.Plan`) from their findings ``f`` (default: read from the
    store); the summary numbers."""
    plan = family_plan.linear
    f = linear_findings(store, plan) if f is None else f
    for table in linear_tables(f, family_plan):
        table.write(tables)
        print_table(console, table.rows(), table.columns(), TITLES[table.name])
    summary: dict[str, Any] = {"identity_exact": C.tally_share(f.identity, "holds", "tight"),
                               "gd_population": C.outcomes(f.gd_population)}
    summary["estimators"] = {row[0]: dict(zip(ESTIMATORS, row[1:])) for row in estimator_summary_rows(f)}
    summary["estimator_outcomes"] = {o.estimator: o.decision.outcome for o in f.comparison}
    _figures(f, plan, figures, linear_provenance(plan))
    return summary


def _figures(f: LinearFindings, plan: Plan, figures: Path, prov: str) -> None:
    opt, pop, data = (f.records[k] for k in ("optimum", "gd-pop", "gd-data"))
    plt = _plt()
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
    for shape in sorted({x["provenance"]["shape"] for x in opt if "r" in x["provenance"]}):
        pts = sorted((x["provenance"]["r"], x["bound"]) for x in opt if x["theorem"] == "rank.linear.eckart_young"
                     and x["provenance"]["shape"] == shape and x["provenance"]["covariance"] == "identity"
                     and x["instance"].endswith(f"/0/r{x['provenance']['r']}"))
        axes[0].semilogy([p[0] for p in pts], [max(p[1], 1e-34) for p in pts], "o-", label=f"{shape}: R(r)")
        gd = _group([x for x in pop if x["provenance"]["shape"] == shape], lambda x: (x["provenance"]["r"],))
        axes[0].semilogy([k[0] for k in gd], [max(_med([x["extra"]["risk"] for x in v]), 1e-34) for v in gd.values()],
                         "x", ms=9)
    axes[0].axvline(plan.r_star, color="grey", lw=0.8)
    axes[0].set(xlabel="student rank r", ylabel="excess risk / d", title="R(r) (o) and GD (x)")
    axes[0].legend(fontsize=7)
    for (shape, r, init), recs in _group(pop, lambda x: (x["provenance"]["shape"], x["provenance"]["r"],
                                                         x["provenance"]["init_scale"])).items():
        if shape == "flat" and r == plan.r_star + 2:
            steps = recs[0]["extra"]["steps"]
            axes[1].plot(np.maximum(steps, 1), np.median([x["extra"]["path"] for x in recs], axis=0),
                         label=f"population, init {init:g}")
    for (shape, N, noise), recs in _group(data, lambda x: (x["provenance"]["shape"], x["provenance"]["N"],
                                                           x["provenance"]["noise"])).items():
        recs = [x for x in recs if x["provenance"]["init_scale"] == min(plan.data_inits)]
        if recs and shape == "flat":
            steps = recs[0]["extra"]["steps"]
            axes[1].plot(np.maximum(steps, 1), np.median([x["extra"]["path"] for x in recs], axis=0), "--",
                         label=f"data N={N}, noise {noise:g}")
    axes[1].set_xscale("log")
    axes[1].axhline(plan.r_star, color="grey", lw=0.8)
    axes[1].set(xlabel="GD step", ylabel="learned rank (median)",
                title="flat, r = r*+2 (population, 10x init) / n (data, noise level)")
    axes[1].legend(fontsize=6)
    for e, Ns, rates in f.curves:
        axes[2].plot(list(Ns), list(rates), "o-", label=e)
    axes[2].set_xscale("log")
    axes[2].set(xlabel="N inputs", ylabel="recovery rate (all shapes, noises)", title="estimators", ylim=(-0.05, 1.05))
    axes[2].legend(fontsize=7)
    for rec in pop:                                  # one run's singular values over time
        p = rec["provenance"]
        if p["shape"] == "geometric" and p["r"] == plan.r_star + 2 and p["init_scale"] == min(plan.init_scales) \
                and rec["extra"].get("spectra_path"):
            sp = np.asarray(rec["extra"]["spectra_path"])                # (T, n)
            steps = np.maximum(rec["extra"]["steps"], 1)
            for j in range(min(sp.shape[1], plan.r_star + 2)):
                axes[3].loglog(steps, np.maximum(sp[:, j], 1e-30), label=f"sigma_{j + 1}")
            axes[3].axhline(rec["extra"]["threshold"], color="grey", ls=":", lw=0.8, label="escape threshold")
            axes[3].set(xlabel="GD step", ylabel="sigma_i(U V^T K^(1/2))", ylim=(1e-12, 2),
                        title=f"geometric teacher, r = r*+2, init {p['init_scale']:g}")
            axes[3].legend(fontsize=6)
            break
    fig.tight_layout()
    save_figure(fig, figures, "rank_linear", prov)
    plt.close(fig)
