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
from verification.rank.checks.linear import ESTIMATORS, SAME_INFORMATION, Plan
from verification.report.aggregate import group as _group
from verification.report.aggregate import median_keep_nan as _med
from verification.report.aggregate import pyplot as _plt
from verification.report.aggregate import share as _share
from verification.report.aggregate import verdict_counts as _verdicts
from verification.report.figures import save_figure
from verification.stats import ALPHA, best_outcome, holm, pairwise, sign_test, unit_share, wilson
from verification.report.tables import Table, print_table

ESTIMATOR_NAMES = {"energy_0.9": "energy_0.9", "energy_0.99": "energy_0.99",
                   "entropy_round": "entropy rank (p ~ sigma^2), rounded",
                   "entropy_sigma_round": "entropy rank (p ~ sigma), rounded",
                   "threshold_median": "threshold (noise from the median)",
                   "threshold": "threshold (residual noise)"}


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


def estimator_units(est: list[dict], names: tuple = SAME_INFORMATION) -> dict:
    """{(shape, N, draw): {estimator: [hit per noise level]}}: one unit per independent data draw.
    The noise levels of one draw reuse its random numbers (:func:`verification.rank.checks.linear.
    estimator_chunk`), so they are repeated measures of the unit, never independent draws."""
    out: dict = {}
    for x in est:
        p = x["provenance"]
        if p["estimator"] in names:
            unit = out.setdefault((p["shape"], p["N"], p.get("draw", p["seed"])), {e: [] for e in names})
            unit[p["estimator"]].append(None if x["verdict"] == "inconclusive" else x["verdict"] == "supported")
    return out


def _unit_shares(units: dict, e: str) -> list[float]:
    """Each unit's share of its decided measurements on which ``e`` recovers r* (units with none left out)."""
    out = []
    for u in units.values():
        hits = [h for h in u[e] if h is not None]
        if hits:
            out.append(sum(hits) / len(hits))
    return out


def estimator_comparison(est: list[dict], names: tuple = SAME_INFORMATION, alpha: float = ALPHA) -> list[dict]:
    """Each estimator's outcome on "e recovers r* most often" among the estimators given the same
    information: the data draws are the units (:func:`estimator_units`), every pair compared by the
    exact sign test on the units' differences of shares, Holm across every pair
    (:func:`verification.stats.pairwise`). The share is the mean of the units' shares with its
    t interval (df = units - 1). Conditional on the plan's teachers (one per spectrum shape)."""
    units = estimator_units(est, names)
    cmp = pairwise(units, names, "sign", alpha)
    out = []
    for e in names:
        worse, better, p = cmp[e]
        m = unit_share(_unit_shares(units, e))
        out.append({"estimator": e, "mean": m["mean"], "interval": m["interval"], "units": m["units"],
                    "worse": worse, "better": better, "p_values": p,
                    "outcome": best_outcome(worse, better, len(names))})
    return out


def cell_comparisons(est: list[dict], names: tuple = SAME_INFORMATION, alpha: float = ALPHA) -> dict:
    """Within each cell (shape, N, noise) the draws are independent and every estimator sees the
    same ones: per pair of estimators McNemar's exact test on the discordant draws
    (:func:`verification.stats.sign_test` on hit differences), Holm across every pair of
    every cell of the table. {cell: ["a > b", ...]} for the pairs whose adjusted p < alpha."""
    cells = _group([x for x in est if x["provenance"]["estimator"] in names],
                   lambda x: (x["provenance"]["shape"], x["provenance"]["N"], x["provenance"]["noise"]))
    tests = []
    for cell, recs in cells.items():
        hits: dict = {}
        for x in recs:
            if x["verdict"] != "inconclusive":
                hits.setdefault(x["provenance"].get("draw", x["provenance"]["seed"]), {})[x["provenance"]["estimator"]] = \
                    x["verdict"] == "supported"
        for i, e in enumerate(names):
            for o in names[i + 1:]:
                diffs = [int(h[e]) - int(h[o]) for h in hits.values() if e in h and o in h]
                r = sign_test(diffs) if diffs else {"p_two": 1.0, "positive": 0, "negative": 0}
                tests.append((cell, e, o, r["p_two"], r["positive"] - r["negative"]))
    adj = holm([t[3] for t in tests]) if tests else []
    out: dict = {cell: [] for cell in cells}
    for (cell, e, o, _, sign), p in zip(tests, adj):
        if p < alpha and sign != 0:
            a, b = (e, o) if sign > 0 else (o, e)
            out[cell].append(f"{SHORT[a]} > {SHORT[b]}")
    return out


SHORT = {"energy_0.9": "E0.9", "energy_0.99": "E0.99", "entropy_round": "H2", "entropy_sigma_round": "H1",
         "threshold_median": "GDm", "threshold": "GDr"}


def estimator_conclusion(est: list[dict], r_star: int) -> str:
    """The measured conclusion, from the stored records: each estimator's mean share of draws that
    recover r* over the independent units, and the outcome of the paired comparison
    (:func:`estimator_comparison`) among the estimators given the same information."""
    rows = estimator_comparison(est)
    if not rows or not rows[0]["units"]:
        return "No draws stored."
    parts = [f"{ESTIMATOR_NAMES[o['estimator']]} {o['mean']:.2f} [{o['interval'][0]:.2f}, {o['interval'][1]:.2f}] "
             f"({o['outcome']})" for o in rows]
    resid = [x for x in est if x["provenance"]["estimator"] == "threshold"]
    extra = f"; with the residual noise as well (more information, not compared): {outcome_share(resid)}" if resid else ""
    return (f"Measured: mean share of draws recovering r* = {r_star} over {rows[0]['units']} independent data draws "
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
    """One row per (shape, N, noise): the design (sigma_r* against the noise edge at the true noise,
    which no estimator is given), each estimator's share (Wilson: the draws of a cell are
    independent), and the pairs that differ (:func:`cell_comparisons`)."""
    rows = []
    cells = _group(est, lambda x: (x["provenance"]["shape"], x["provenance"]["N"], x["provenance"]["noise"]))
    better = cell_comparisons(est)
    for (shape, N, noise), recs in cells.items():
        ex = recs[0]["extra"]
        below = ex["sigma_r_star"] <= ex["detection_limit"]
        rows.append([shape, N, noise, ex["sigma_r_star"], ex["detection_limit"], "BELOW" if below else "above"]
                    + [outcome_share([x for x in recs if x["provenance"]["estimator"] == e]) for e in ESTIMATORS]
                    + [", ".join(better.get((shape, N, noise), [])) or "-"])
    return rows


def estimator_summary_rows(est: list[dict]) -> list[list]:
    """Per spectrum shape (and "all"): each estimator's mean share of draws recovering r* over the
    independent data draws (the noise levels of a draw averaged first), Wilson 95% at n = units."""
    overall = []
    for shape in sorted({x["provenance"]["shape"] for x in est}) + ["all"]:
        sub = [x for x in est if shape == "all" or x["provenance"]["shape"] == shape]
        units = estimator_units(sub, ESTIMATORS)
        row = [shape]
        for e in ESTIMATORS:
            shares = _unit_shares(units, e)
            m = unit_share(shares)
            row.append(f"{m['mean']:.2f} [{m['interval'][0]:.2f}, {m['interval'][1]:.2f}]" if shares else "-")
        overall.append(row + [len(units)])
    return overall


def comparison_rows(est: list[dict]) -> list[list]:
    rows = []
    for o in estimator_comparison(est):
        lo, hi = o["interval"]
        rows.append([ESTIMATOR_NAMES[o["estimator"]], f"{o['mean']:.2f} [{lo:.2f}, {hi:.2f}]", o["units"],
                     ", ".join(ESTIMATOR_NAMES[x] for x in o["worse"]) or "-",
                     ", ".join(ESTIMATOR_NAMES[x] for x in o["better"]) or "-", o["outcome"]])
    return rows


def linear_campaigns(plan: Plan) -> dict[str, str]:
    """The four campaigns of the linear part: optimum, gd-pop, gd-data, estimators."""
    return {k: f"rank.{k}-{plan.tag}" for k in ("optimum", "gd-pop", "gd-data", "estimators")}


def linear_provenance(plan: Plan) -> str:
    return (f"campaigns rank.*-{plan.tag}; seed {plan.seed}; n={plan.n}, r*={plan.r_star}; "
            f"GD steps {plan.gd_steps}")


def linear_tables(opt: list[dict], pop: list[dict], data: list[dict], est: list[dict], family_plan: Any) -> list[Table]:
    """The five tables of the linear part of ``family_plan`` (a :class:`verification.rank.checks.Plan`),
    in order: ``rank-linear-risk``, ``rank-gd-population``, ``rank-gd-data``, ``rank-estimators``,
    ``rank-estimators-summary``, ``rank-estimator-comparison`` (Markdown captions), each naming the
    command that fills it (``attnbounds rank --part linear ...``)."""
    plan = family_plan.linear
    r_star, prov = plan.r_star, linear_provenance(plan)
    camp = linear_campaigns(plan)
    cmd = family_plan.part_command("linear")
    ident = [x for x in opt if x["theorem"] == "rank.linear.excess_risk_identity"]
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
        ("rank-estimators-summary", estimator_summary_rows(est), ["shape"] + list(ESTIMATORS) + ["units"],
         ("estimators",),
         "Mean share of draws recovering r* per estimator and spectrum shape, over all sample sizes and noise "
         "levels: one unit per independent data draw (shape, N, draw index; its noise levels reuse its random "
         "numbers and are averaged first), Wilson 95% interval at n = units (entropy_round: p ~ sigma^2; "
         f"entropy_sigma_round: p ~ sigma). {estimator_bias_sentence()}"),
        ("rank-estimator-comparison", comparison_rows(est), COMPARISON_COLUMNS, ("estimators",),
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


def report_linear(store: Any, family_plan: Any, tables: Path, figures: Path, console: Console) -> dict:
    """Tables and the figure of the linear campaigns of ``family_plan`` (a
    :class:`verification.rank.checks.Plan`), from stored records only; the summary numbers."""
    plan = family_plan.linear
    camp = linear_campaigns(plan)
    opt, pop, data, est = (list(store.records(campaign=camp[k]))
                           for k in ("optimum", "gd-pop", "gd-data", "estimators"))
    for table in linear_tables(opt, pop, data, est, family_plan):
        table.write(tables)
        print_table(console, table.rows(), table.columns(), TITLES[table.name])
    ident = [x for x in opt if x["theorem"] == "rank.linear.excess_risk_identity"]
    summary: dict[str, Any] = {"identity_exact": _share(ident), "gd_population": outcome_share(pop)}
    summary["estimators"] = {row[0]: dict(zip(ESTIMATORS, row[1:])) for row in estimator_summary_rows(est)}
    summary["estimator_outcomes"] = {o["estimator"]: o["outcome"] for o in estimator_comparison(est)}
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
