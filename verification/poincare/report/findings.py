"""The Poincare campaign's findings tables, rendered from the family's findings
(:mod:`verification.poincare.findings`) with captions that state their conclusions.

* poincare-villani-boundary: per family, data seed and beta, Villani's threshold lambda_V(beta)
  (estimate, and a certified bracket for lora2) against the seed's hypothesis (every lambda > 0).
* poincare-metastable: every instance ordered by its best test-function lower bound over C_P; those
  below COLLAPSE (Var/C_P small: the polynomial test functions miss the slow, metastable mode) are
  listed and counted, not omitted.
* poincare-villani-orders: per lora2 data seed, the analytic bracket of lambda_V(beta) and what it
  implies for each quantifier order of the seed's condition.
* poincare-sde-minimises: per beta, whether the SDE minimises F, with the rule that aggregates the
  per-beta outcomes into the claim's.
* poincare_expected_loss: per instance, E_mu[L] against L(argmin F) and min L (quadrature under the
  discretised mu on the bounds grid: every quick family), and the SDE's Monte Carlo E[L] for the
  higher-dimensional families.

Each is built once as a :class:`verification.report.tables.Table` (``*_table``): the report writes it
(:func:`write_findings`), the paper (:mod:`verification.poincare.paper`) renders the same object.
"""
from __future__ import annotations

from typing import Any

from verification.poincare.findings import COLLAPSE, SEED_HYPOTHESIS, Boundary, Findings
from verification.poincare.findings.claims import ORDERS, SDE_RULE, aggregate
from verification.poincare.report.tables import provenance
from verification.report.aggregate import group, median
from verification.report.tables import Table, fmt, print_table

# -- Villani boundary ----------------------------------------------------------------------------------

STATUS = {"proved": "0 (proved)", "certified": "certified", "estimate": "estimate"}


def boundary_cells(b: Boundary) -> list:
    """One row of poincare-villani-boundary."""
    fails = ("yes (certified)" if b.status == "certified" else "yes (estimate)") if b.fails else "no"
    return [b.family, b.data_seed, b.beta, b.estimate, b.lo, b.hi, b.certified_lo, b.certified_hi, STATUS[b.status],
            SEED_HYPOTHESIS, fails, f"{b.refuted}/{b.points}", b.refuted_enclosed, b.estimate_within_bracket]


VILLANI_BOUNDARY_COLUMNS = ["family", "data seed", "beta", "lambda_V estimate", "estimate lo", "estimate hi",
                            "certified lo", "certified hi", "lambda_V is", "seed's hypothesis",
                            "route fails for some lambda > 0", "grid lambdas refuted", "refuted (enclosed)",
                            "estimate <= certified hi"]


def villani_boundary_caption(f: Findings) -> str:
    parts = []
    for fam in dict.fromkeys(sorted(b.family for b in f.boundaries)):
        rr = [b for b in f.boundaries if b.family == fam]
        cert = [b for b in rr if b.status == "certified"]
        if rr[0].status == "proved":
            parts.append(f"{fam}: lambda_V = 0 by proof at all {len(rr)} (seed, beta)")
        elif cert:
            pos = [b for b in cert if b.certified_lo > 0]
            ok = sum(b.estimate_within_bracket is True for b in cert)
            parts.append(f"{fam}: certified lambda_V(beta) > 0 at {len(pos)}/{len(rr)} (seed, beta), grid estimate "
                         f"below the certified upper end at {ok}/{len(cert)}, brackets from "
                         f"[{fmt(min(b.certified_lo for b in cert))}, {fmt(min(b.certified_hi for b in cert))}] "
                         f"(largest beta) to "
                         f"[{fmt(max(b.certified_lo for b in cert))}, {fmt(max(b.certified_hi for b in cert))}], "
                         f"widest {fmt(max(b.certified_hi - b.certified_lo for b in cert))}")
        else:
            pos = [b for b in rr if b.lo > 0]
            parts.append(f"{fam}: estimated lambda_V(beta) > 0 at {len(pos)}/{len(rr)} (seed, beta), from "
                         f"{fmt(min(b.estimate for b in rr))} to {fmt(max(b.estimate for b in rr))} "
                         "(grid estimate, not certified)")
    return ("Villani's boundary lambda_V(beta) against the seed's hypothesis (" + SEED_HYPOTHESIS + "): the route "
            "fails for every lambda below lambda_V(beta). " + "; ".join(parts) + ".")


def villani_boundary_table(f: Findings, plan: Any) -> Table:
    """lambda_V(beta) per family, data seed and beta, from the Villani map of ``plan``."""
    return Table.from_rows("poincare-villani-boundary", [boundary_cells(b) for b in f.boundaries],
                           VILLANI_BOUNDARY_COLUMNS, villani_boundary_caption(f),
                           provenance(plan) + f", {f.map_campaign}", campaigns=(f.map_campaign,),
                           command=plan.command())


# -- quantifier orders of Villani's condition (lora2) -------------------------------------------------

ORDERS_COLUMNS = ["family", "data seed", "p* cell lo", "p* cell hi", "L''(p*) >= a", "sup L'' <= A",
                  "every beta: lambda_V(beta) >= sqrt(2a/beta)", "beta large: holds when beta lambda^2 >", "betas",
                  "brackets meet"]


def orders_cells(x) -> list:
    """One row of poincare-villani-orders (``x``: a :class:`verification.poincare.findings.Analytic`)."""
    return [x.family, x.data_seed, x.p_star and x.p_star[0], x.p_star and x.p_star[1], x.a, x.A,
            "refuted (certified)" if x.every_beta_refuted else "not shown", x.beta0_times_lambda2,
            len(x.per_beta), f"{sum(b[-1] is True for b in x.per_beta)}/{len(x.per_beta)}"]


def orders_caption(f: Findings) -> str:
    xs = f.analytic
    ref = sum(x.every_beta_refuted for x in xs)
    meet = sum(b[-1] is True for x in xs for b in x.per_beta)
    total = sum(len(x.per_beta) for x in xs)
    return ("Villani's condition read in each quantifier order (the seed's abstract states neither; "
            f"{ORDERS['every beta']} / {ORDERS['beta large']}), from the analytic bracket "
            "sqrt(2 L''(p*)/beta) <= lambda_V(beta) <= sqrt(2 sup L''/beta), p* a critical point of L, both "
            f"constants enclosed in arb: the every-beta reading is refuted, certified, at {ref}/{len(xs)} data sets "
            "(lambda_V(beta) > 0 at every beta > 0); the beta-large reading holds at all of them (beta lambda^2 > "
            f"2 sup L'' suffices); the analytic and the certified brackets of lambda_V(beta) meet at {meet}/{total} "
            "(data set, beta) (a check: both enclose the same number)")


def orders_table(f: Findings, plan: Any) -> Table:
    """The analytic bracket of lambda_V(beta) per lora2 data seed of ``plan``'s Villani map."""
    return Table.from_rows("poincare-villani-orders", [orders_cells(x) for x in f.analytic], ORDERS_COLUMNS,
                           orders_caption(f), provenance(plan) + f", {f.map_campaign}", campaigns=(f.map_campaign,),
                           command=plan.command())


# -- does the SDE minimise F? -------------------------------------------------------------------------

MINIMISES_COLUMNS = ["family", "beta", "lambda", "E[F] - F_min", "lo", "hi", "d/(2 beta)", "E dist^2 to argmin F",
                     "dist^2 lo", "dist^2 hi", "tr(H^-1)/beta", "dist to argmin F, end", "outcome"]


def minimises_cells(m) -> list:
    """One row of poincare-sde-minimises (``m``: a :class:`verification.poincare.findings.Minimisation`)."""
    return [m.family, m.beta, m.lam, m.f_excess, m.f_lo, m.f_hi, m.laplace_f, m.dist2, m.d2_lo, m.d2_hi, m.laplace_d2,
            f"{m.dist_end.mean:.4g} +- {3 * m.dist_end.se:.2g}", m.outcome]


def minimises_caption(f: Findings) -> str:
    ms = f.minimisation
    return ("Does the SDE minimise what it minimises, the regularised loss F? Per beta, on the Langevin chains "
            "(MALA, started from the Laplace approximation of mu_beta, one unit per chain, 90% t intervals): "
            "E_beta[F] - F_min against d/(2 beta) and the mean squared distance to argmin F (L-BFGS on F) against "
            f"tr(H^-1)/beta. Per-beta outcomes: {', '.join(m.outcome for m in ms) or '-'}; aggregated by the rule "
            f"({SDE_RULE}): {aggregate(m.outcome for m in ms)}")


def minimises_table(f: Findings, plan: Any) -> Table:
    """Per (family, beta) of ``plan``'s Langevin runs: the SDE's minimisation of F."""
    return Table.from_rows("poincare-sde-minimises", [minimises_cells(m) for m in f.minimisation], MINIMISES_COLUMNS,
                           minimises_caption(f), provenance(plan) + f", {f.sde_campaign}",
                           campaigns=(f.sde_campaign,), command=plan.command())


# -- metastable cases ----------------------------------------------------------------------------------

METASTABLE_COLUMNS = ["family", "beta", "lambda", "C_P", "1/(beta lambda)", "Var/C_P", "quad/C_P", "eig_mp/C_P",
                      "collapsed"]


def metastable_caption(f: Findings) -> str:
    rows = f.metastable
    if not rows:
        return "Test-function lower bounds: no instances stored"
    bad = [i for i in rows if i.collapsed]
    worst = rows[0]
    head = (f"Test-function lower bounds over C_P, worst first: {len(bad)} of {len(rows)} instances have their best "
            f"polynomial (degree <= 2) bound below {COLLAPSE:g} C_P (collapsed: a metastable slow mode those "
            f"functions miss)")
    tail = (f"; the worst is {worst.family} at beta {fmt(worst.beta)}, lambda {fmt(worst.lam)}: Var/C_P "
            f"{fmt(worst.var_ratio)}, quadratic {fmt(worst.quad_ratio)}")
    return head + tail + ". The discretised-eigenfunction quotient (eig_mp, a quadrature estimate) stays near 1."


def metastable_table(f: Findings, plan: Any) -> Table:
    """Every instance of ``plan``'s campaign, worst test-function lower bound first."""
    rows = [[i.family, i.beta, i.lam, i.C_P, i.gaussian_C, i.var_ratio, i.quad_ratio, i.eig_ratio, i.collapsed]
            for i in f.metastable]
    return Table.from_rows("poincare-metastable", rows, METASTABLE_COLUMNS, metastable_caption(f),
                           provenance(plan), campaigns=(plan.campaign,), command=plan.command())


# -- expected loss -------------------------------------------------------------------------------------

EXPECTED_LOSS_COLUMNS = ["family", "method", "beta", "lambda", "E_mu[L]", "se", "L(argmin F)", "min L",
                         "E_mu[L] - L(argmin F)", "L(argmin F) - min L"]


def expected_loss_caption(f: Findings) -> str:
    parts = []
    for (fam,), rs in group([dict(fam=x.family, row=x) for x in f.expected_loss], lambda d: (d["fam"],)).items():
        rr = [d["row"] for d in rs]
        above = sum(x.excess > 0 for x in rr)
        parts.append(f"{fam}: E_mu[L] > L(argmin F) at {above}/{len(rr)} (median excess "
                     f"{fmt(median(x.excess for x in rr))}), regularisation gap L(argmin F) - min L median "
                     f"{fmt(median(x.gap for x in rr))}")
    return ("Expected loss under mu_beta against the loss at the minimiser of F and the smallest loss found "
            "(quadrature on the discretised mu; min L on the grid or by L-BFGS: upper estimates of inf L). "
            + "; ".join(parts) + ".")


def expected_loss_table(f: Findings, plan: Any) -> Table:
    """E_mu[L] by quadrature (``plan``'s campaign) and by the SDE."""
    rows = [[x.family, x.method, x.beta, x.lam, x.E_L, x.se, x.L_argmin_F, x.min_L, x.excess, x.gap]
            for x in f.expected_loss]
    return Table.from_rows("poincare_expected_loss", rows, EXPECTED_LOSS_COLUMNS, expected_loss_caption(f),
                           provenance(plan) + f", {f.sde_campaign}", campaigns=(plan.campaign, f.sde_campaign),
                           command=plan.command())


def write_findings(f: Findings, plan: Any, tables_dir: Any, console: Any) -> None:
    """Write and print the findings tables (see the module docstring; those without rows are skipped)."""
    if f.map_points:
        t = villani_boundary_table(f, plan)
        t.write(tables_dir)
        print_table(console, t.rows(), t.columns(), "Poincare: Villani's boundary lambda_V(beta)")
    for t, title in ((orders_table(f, plan), "Poincare: Villani's condition in each quantifier order"),
                     (minimises_table(f, plan), "Poincare: does the SDE minimise F?")):
        if len(t.frame):
            t.write(tables_dir)
            print_table(console, t.rows(), t.columns(), title)
    t = metastable_table(f, plan)
    t.write(tables_dir)
    print_table(console, t.rows()[:10], t.columns(), "Poincare: weakest test-function lower bounds")
    t = expected_loss_table(f, plan)
    t.write(tables_dir)
    print_table(console, t.rows(), t.columns(), "Poincare: expected loss vs L(argmin F) and min L")
