"""Tables and figures of the linear rank campaigns (:mod:`verification.rank.checks.linear`),
aggregated from stored records only. Each table is built once (:func:`linear_tables`, one
:class:`~verification.report.tables.Table` each) and rendered to Markdown/CSV here and to LaTeX by
:mod:`verification.rank.paper`.

Claims (GD recovery, data recovery) are stored per draw as outcomes; here they become shares with
95% Wilson intervals (:func:`outcome_share`), and the estimator captions state the measured
conclusion, generated from the records (never typed).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from numerics.rank import linear as R
from verification.rank.checks.linear import ESTIMATORS, Plan
from verification.report.aggregate import group as _group
from verification.report.aggregate import median_keep_nan as _med
from verification.report.aggregate import pyplot as _plt
from verification.report.aggregate import share as _share
from verification.report.aggregate import verdict_counts as _verdicts
from verification.report.figures import save_figure
from verification.report.stats import wilson
from verification.report.tables import Table, print_table

ESTIMATOR_NAMES = {"energy_0.9": "energy_0.9", "energy_0.99": "energy_0.99",
                   "entropy_round": "entropy rank (p ~ sigma^2), rounded",
                   "entropy_sigma_round": "entropy rank (p ~ sigma), rounded", "threshold": "threshold"}


def fill_command(part: str, seed: int = 0, full: bool = False) -> str:
    """The command that fills the campaigns of one part (linear, attention, weights)."""
    return f"attnbounds rank --part {part} --seed {seed}" + (" --full" if full else "")


def supported(recs: list[dict]) -> tuple[int, int]:
    """(how many of ``recs`` are supported, how many are decided: supported or refuted)."""
    k = sum(x["verdict"] == "supported" for x in recs)
    return k, k + sum(x["verdict"] == "refuted" for x in recs)


def outcome_share(recs: list[dict]) -> str:
    """``k/n [lo, hi]``: supported draws among the decided ones with the 95% Wilson interval of
    the share (inconclusive draws are counted apart: ``, m inconclusive``)."""
    k, n = supported(recs)
    if n == 0:
        return f"0/0 ({len(recs)} inconclusive)" if recs else "-"
    lo, hi = wilson(k, n)
    rest = len(recs) - n
    return f"{k}/{n} [{lo:.2f}, {hi:.2f}]" + (f", {rest} inconclusive" if rest else "")


def estimator_bias_sentence() -> str:
    """Energy and entropy ranks are biased without any noise: computed on the geometric spectrum."""
    s = R.spectrum(3, "geometric")
    return (f"Energy and entropy ranks are biased even without noise: on the spectrum ({', '.join(f'{x:g}' for x in s)}) with "
            f"r* = {len(s)}, energy_0.9 = {R.energy_rank(s, 0.9)}, energy_0.99 = {R.energy_rank(s, 0.99)}, entropy "
            f"rank {R.entropy_rank(s):.2f} (p ~ sigma^2) and {R.entropy_rank(s, 1):.2f} (p ~ sigma).")


def estimator_conclusion(est: list[dict], r_star: int) -> str:
    """The measured conclusion, from the stored records: each estimator's share of draws that
    recover r* (Wilson 95%), over all draws and over the draws above the detection limit."""
    parts, rates = [], {}
    above = [x for x in est if x["extra"]["sigma_r_star"] > x["extra"]["detection_limit"]]
    for e in ESTIMATORS:
        mine = [x for x in est if x["provenance"]["estimator"] == e]
        k, n = supported(mine)
        ka, na = supported([x for x in above if x["provenance"]["estimator"] == e])
        if n:
            parts.append(f"{ESTIMATOR_NAMES[e]} {outcome_share(mine)} (above the detection limit {ka}/{na})")
            rates[e] = k / n
    if not parts:
        return "No draws stored."
    top = max(rates.values())
    best = ", ".join(ESTIMATOR_NAMES[e] for e in ESTIMATORS if rates.get(e) == top)
    return (f"Measured: share of draws recovering r* = {r_star} [95% Wilson]: " + "; ".join(parts)
            + f". Highest share ({top:.2f}): {best}.")


RISK_COLUMNS = ["shape", "covariance", "r", "R(r) seed 0", "sigma_r*^2", "max certified width",
                "max |float - certified|", "EYM agrees to width", "deficiency", "achievability"]
GD_POPULATION_COLUMNS = ["shape", "r", "init", "learned = min(r, r*) [95% CI]", "learned counts", "median risk",
                         "optimum R(r)", "max gap", "max rel. change last 10%", "median grad norm",
                         "median first step"]
GD_DATA_COLUMNS = ["shape", "N", "noise", "init", "passes r* [95% CI]", "first step at r* (median)",
                   "last step at r* (median)", "decades at r* (median)", "ends at r* [95% CI]", "final ranks",
                   "final rank, 10x-init threshold (median)", "median final grad norm", "median final risk"]
ESTIMATOR_COLUMNS = ["shape", "N", "noise", "sigma_r*", "detection limit", "sigma_r* vs limit"] + \
    [f"{ESTIMATOR_NAMES[e]} = r* [95% CI]" for e in ESTIMATORS]


def risk_rows(opt: list[dict]) -> list[list]:
    """One row per (shape, covariance, r) of the optimum campaign: R(r), sigma_r*^2, verdicts."""
    rows = []
    for (shape, cov, r), recs in _group([x for x in opt if "r" in x["provenance"]],
                                        lambda x: (x["provenance"]["shape"], x["provenance"]["covariance"],
                                                   x["provenance"]["r"])).items():
        eym = [x for x in recs if x["theorem"] == "rank.linear.eckart_young"]
        dfc = [x for x in recs if x["theorem"] == "rank.linear.deficiency"]
        ach = [x for x in recs if x["theorem"] == "rank.linear.achievability"]
        rows.append([shape, cov, r, eym[0]["bound"], dfc[0]["bound"],
                     max(x["extra"]["certified_width"] for x in eym), max(x["extra"]["fast_error"] for x in eym),
                     f"{sum(x['extra'].get('enclosures_overlap', False) for x in eym)}/{len(eym)}",
                     _verdicts(dfc), _verdicts(ach)])
    return rows


def gd_population_rows(pop: list[dict], r_star: int) -> list[list]:
    """One row per (shape, r, init) of GD on the population loss."""
    rows = []
    for (shape, r, init), recs in _group(pop, lambda x: (x["provenance"]["shape"], x["provenance"]["r"],
                                                          x["provenance"]["init_scale"])).items():
        ex = [x["extra"] for x in recs]
        counts = Counter(None if x["value"] is None else int(x["value"]) for x in recs)
        rows.append([shape, f"r*{r - r_star:+d}" if r != r_star else "r*", init, outcome_share(recs),
                     " ".join(f"{k}:{v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0]))),
                     _med([e["risk"] for e in ex]), ex[0]["optimum"], max(e["gap"] for e in ex),
                     max(e["rel_change_last_tenth"] for e in ex), _med([e["grad_norm"] for e in ex]),
                     _med([e["first_step_at_r_star"] for e in ex])])
    return rows


def gd_data_rows(data: list[dict]) -> list[list]:
    """One row per (shape, N, noise, init) of GD on finite noisy data: where the noise-level rank
    passes r* and for how long, and where it ends."""
    rows = []
    for (shape, N, noise, init), recs in _group(data, lambda x: (x["provenance"]["shape"], x["provenance"]["N"],
                                                                  x["provenance"]["noise"],
                                                                  x["provenance"]["init_scale"])).items():
        ex = [x["extra"] for x in recs]
        passes = [{"verdict": "supported" if e["passes_r_star"] else "refuted"} for e in ex]
        counts = Counter(int(x["value"]) for x in recs)
        rows.append([shape, N, noise, init, outcome_share(passes), _med([e["first_step_at_r_star"] for e in ex]),
                     _med([e["last_step_at_r_star"] for e in ex]), _med([e["span_decades"] for e in ex]),
                     outcome_share(recs), " ".join(f"{k}:{v}" for k, v in sorted(counts.items())),
                     _med([e["escape_final_rank"] for e in ex]), _med([e["grad_norm_end"] for e in ex]),
                     _med([e["risk_end"] for e in ex])])
    return rows


def estimator_rows(est: list[dict]) -> list[list]:
    """One row per (shape, N, noise): sigma_r* against the detection limit, each estimator's share."""
    rows = []
    cells = _group(est, lambda x: (x["provenance"]["shape"], x["provenance"]["N"], x["provenance"]["noise"]))
    for (shape, N, noise), recs in cells.items():
        ex = recs[0]["extra"]
        below = ex["sigma_r_star"] <= ex["detection_limit"]
        rows.append([shape, N, noise, ex["sigma_r_star"], ex["detection_limit"], "BELOW" if below else "above"]
                    + [outcome_share([x for x in recs if x["provenance"]["estimator"] == e]) for e in ESTIMATORS])
    return rows


def estimator_summary_rows(est: list[dict]) -> list[list]:
    """Per spectrum shape (and "all"): each estimator's share of draws recovering r*."""
    overall = []
    for shape in sorted({x["provenance"]["shape"] for x in est}) + ["all"]:
        sub = [x for x in est if shape == "all" or x["provenance"]["shape"] == shape]
        overall.append([shape] + [outcome_share([x for x in sub if x["provenance"]["estimator"] == e])
                                  for e in ESTIMATORS])
    return overall


def linear_campaigns(plan: Plan) -> dict[str, str]:
    """The four campaigns of the linear part: optimum, gd-pop, gd-data, estimators."""
    return {k: f"rank.{k}-{plan.tag}" for k in ("optimum", "gd-pop", "gd-data", "estimators")}


def linear_provenance(plan: Plan) -> str:
    return (f"campaigns rank.*-{plan.tag}; seed {plan.seed}; n={plan.n}, r*={plan.r_star}; "
            f"GD steps {plan.gd_steps}")


def linear_tables(opt: list[dict], pop: list[dict], data: list[dict], est: list[dict], plan: Plan) -> list[Table]:
    """The five tables of the linear part, in order: ``rank-linear-risk``, ``rank-gd-population``,
    ``rank-gd-data``, ``rank-estimators``, ``rank-estimators-summary`` (Markdown captions)."""
    r_star, prov = plan.r_star, linear_provenance(plan)
    camp = linear_campaigns(plan)
    cmd = fill_command("linear", plan.seed, plan.full)
    ident = [x for x in opt if x["theorem"] == "rank.linear.excess_risk_identity"]
    definitions = (
        f"Estimators on sigma_i of M_hat K_hat^(1/2) (least squares, n={plan.n}, N inputs x 4 columns, "
        f"{plan.est_seeds} draws per cell): energy_tau = min k with sum_(i<=k) sigma_i^2 >= tau sum sigma_i^2; "
        f"entropy rank = exp(-sum p_i log p_i), rounded, in two normalisations, p_i = sigma_i^2 / sum sigma^2 "
        f"(docs/theory.md §3) and p_i = sigma_i / sum sigma; threshold = #sigma_i above the Gavish-Donoho known-noise "
        f"hard threshold lambda(beta) sqrt(n) s (lambda = 4/sqrt(3) for a square matrix), with the entry noise "
        f"s = noise_hat / sqrt(4 N), noise_hat the least-squares residual std. Detection limit = that same "
        f"threshold at the TRUE noise; a cell is flagged BELOW when the teacher's smallest signal singular "
        f"value sigma_r* lies at or below it (then no estimator is expected to see r*).")
    specs = [
        ("rank-linear-risk", risk_rows(opt), RISK_COLUMNS, ("optimum",),
         f"Optimal rank-r excess risk R(r) (per unit d), n={plan.n}, r*={r_star}: tail sum certified in "
         f"60-digit intervals; the risk of P_r M* agrees with it within the interval width (Eckart-Young-Mirsky, "
         f"recorded undecided: overlapping enclosures do not certify equality of irrational values); "
         f"deficiency/achievability verdicts decided exactly from r* = rank(M*). "
         f"Excess-risk identity exact on {_share(ident)} instances, Monte Carlo |z| max "
         f"{max(abs(x['extra']['mc_z']) for x in ident):.2f}."),
        ("rank-gd-population", gd_population_rows(pop, r_star), GD_POPULATION_COLUMNS, ("gd-pop",),
         f"GD on U V^T, population loss, {plan.gd_seeds} seeds per row, {plan.gd_steps} steps: "
         f"learned rank = #sigma_i(U V^T K^(1/2)) > 10 x its initial top value; risk per unit d; "
         f"'rel. change' over the last tenth of the steps says how converged the risk is."),
        ("rank-gd-data", gd_data_rows(data), GD_DATA_COLUMNS, ("gd-data",),
         f"GD on U V^T (full width r = n) on N inputs x 4 columns of noisy data from small initialisation "
         f"({', '.join(f'{x:g}' for x in plan.data_inits)}), {plan.gd_seeds} seeds per row, {plan.gd_steps} steps. "
         f"Rank along the trajectory = #sigma_i(U V^T K^(1/2)) above the noise level (Gavish-Donoho threshold of "
         f"the least-squares fit's entry noise, noise_hat / sqrt(4 N)), at 120 log-spaced steps: whether it passes "
         f"r*, the first and last recorded step at r*, the span at r* in decades of steps (log10 of the step after "
         f"the last one at r* over the first), and the rank at the last step (the outcome). For comparison, the "
         f"final rank counted above 10 x the initial top singular value: unregularised GD tends to the full-rank "
         f"least-squares fit, so that count grows toward n with the steps and does not test the claim."),
        ("rank-estimators", estimator_rows(est), ESTIMATOR_COLUMNS, ("estimators",),
         f"Pre-training recovery of r*={r_star}. {estimator_conclusion(est, r_star)} "
         f"{estimator_bias_sentence()} {definitions}"),
        ("rank-estimators-summary", estimator_summary_rows(est), ["shape"] + list(ESTIMATORS), ("estimators",),
         "Share of draws recovering r* per estimator and spectrum shape, over all sample sizes and noise "
         "levels, with 95% Wilson intervals (entropy_round: p ~ sigma^2; entropy_sigma_round: p ~ sigma). "
         f"{estimator_bias_sentence()}")]
    return [Table.from_rows(name, rows, cols, caption, prov, campaigns=tuple(camp[c] for c in cs), command=cmd)
            for name, rows, cols, cs, caption in specs]


TITLES = {"rank-linear-risk": "rank: R(r) vs r", "rank-gd-population": "rank: GD (population)",
          "rank-gd-data": "rank: GD (finite data)", "rank-estimators": "rank: estimators",
          "rank-estimators-summary": "rank: estimator summary"}


def report_linear(store: Any, plan: Plan, tables: Path, figures: Path, console: Console) -> dict:
    camp = linear_campaigns(plan)
    opt, pop, data, est = (list(store.records(campaign=camp[k]))
                           for k in ("optimum", "gd-pop", "gd-data", "estimators"))
    for table in linear_tables(opt, pop, data, est, plan):
        table.write(tables)
        print_table(console, table.rows(), table.columns(), TITLES[table.name])
    ident = [x for x in opt if x["theorem"] == "rank.linear.excess_risk_identity"]
    summary: dict[str, Any] = {"identity_exact": _share(ident), "gd_population": outcome_share(pop)}
    summary["estimators"] = {row[0]: dict(zip(ESTIMATORS, row[1:])) for row in estimator_summary_rows(est)}
    _figures(opt, pop, data, est, plan, figures, linear_provenance(plan))
    return summary


def _figures(opt: list, pop: list, data: list, est: list, plan: Plan, figures: Path, prov: str) -> None:
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
    for e in ESTIMATORS:
        cell = _group([x for x in est if x["provenance"]["estimator"] == e], lambda x: (x["provenance"]["N"],))
        axes[2].plot([k[0] for k in cell], [np.mean([x["verdict"] == "supported" for x in v]) for v in cell.values()],
                     "o-", label=e)
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
