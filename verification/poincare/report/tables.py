"""The Poincare campaign's own tables, each built once as a :class:`verification.report.tables.Table`
from the family's findings (:func:`verification.poincare.findings.findings`): the report writes it to
Markdown / CSV (:func:`verification.poincare.report.report`) and the paper
(:mod:`verification.poincare.paper`) picks its columns by name for LaTeX.

* poincare-bounds: the estimated C_P, each bound, ratios bound / C_P (:func:`bounds_table`).
* poincare_villani: lambda_V(beta) and where the seed's Villani route fails: outcomes (:func:`villani_table`).
* poincare-thresholds: the smallest lambda each derivation needs (:func:`thresholds_table`).
* poincare-muckenhoupt: certified 1-D brackets of C_P with every estimate inside (:func:`muckenhoupt_table`).
* poincare-sde-loss: E_beta[L] - inf L against d/(2 beta), distances to the minimisers (:func:`sde_loss_table`).
* poincare-sde: rates, E[L], the regularisation gap: outcomes with their intervals (:func:`sde_table`).

The findings tables (Villani map, collapsed lower bounds, expected loss) are in
:mod:`verification.poincare.report.findings`. Every caption states its conclusion from the findings
(counts, shares), never a typed number. The mathematics: docs/theory.md section 4.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from verification.poincare.findings import Findings, LossExcess, Threshold
from verification.report.tables import Table, fmt


def provenance(plan) -> str:
    """The provenance line of every Poincare table of ``plan``."""
    return f"campaign {plan.campaign}, seed {plan.seed}, {'full' if plan.full else 'quick'} grid"


BOUNDS_COLUMNS = ["family", "beta", "lambda", "C_P", "error", "1/(beta lambda)", "BE", "BE/C_P", "BE verdict",
                  "HS", "HS/C_P", "HS verdict", "Var/C_P", "quad/C_P", "eig_mp/C_P"]


def bounds_caption(f: Findings) -> str:
    def summary(verdicts):
        c = Counter(v for v in verdicts if v is not None)
        return ", ".join(f"{k} {c[k]}" for k in sorted(c))

    lin = [i.var_ratio for i in f.instances if i.var_ratio is not None]
    return ("Poincare constant of exp(-beta F) (discretised estimate) vs Bakry-Emery (BE) and Holley-Stroock (HS) "
            "upper bounds and "
            f"test-function lower bounds (ratios to C_P), {len(f.instances)} instances. "
            f"BE: {summary(i.be and i.be.verdict for i in f.instances)}; "
            f"HS: {summary(i.hs and i.hs.verdict for i in f.instances)}; "
            f"Var/C_P from {fmt(min(lin, default=None))} to {fmt(max(lin, default=None))}. Tight is the theorem's "
            "equality (Gaussian, exact arithmetic), never a tolerance")


def bounds_table(f: Findings, plan) -> Table:
    """The estimated C_P against every bound, one row per (family, beta, lambda) of ``plan``'s campaign."""
    rows = [[i.family, i.beta, i.lam, i.C_P, i.err, i.gaussian_C, i.be and i.be.bound, i.be_ratio,
             i.be and i.be.verdict, i.hs and i.hs.bound, i.hs_ratio, i.hs and i.hs.verdict, i.var_ratio,
             i.quad_ratio, i.eig_ratio] for i in f.instances]
    return Table.from_rows("poincare-bounds", rows, BOUNDS_COLUMNS, bounds_caption(f), provenance(plan),
                           campaigns=(plan.campaign,), command=plan.command())


def outcome_summary(pairs) -> str:
    """'fam: outcome k, ...' per family, from (family, outcome) pairs (for generated captions)."""
    per: dict = defaultdict(Counter)
    for fam, outcome in pairs:
        per[fam][outcome] += 1
    return "; ".join(f"{f}: " + ", ".join(f"{k} {c[k]}" for k in sorted(c)) for f, c in sorted(per.items()))


VILLANI_COLUMNS = ["family", "beta", "lambda", "lambda_V(beta)", "lambda_V lo", "lambda_V hi", "outcome", "certified",
                   "witness", "what still holds"]


def villani_table(f: Findings, plan) -> Table:
    """Villani's condition per instance of ``plan``'s campaign: outcomes."""
    rows = [[v.family, v.beta, v.lam, v.lambda_V, v.lo, v.hi, v.outcome, v.certified, v.witness,
             "-" if v.holds else "HS bound" if v.hs_applies else "lower bounds only"] for v in f.villani]
    return Table.from_rows("poincare_villani", rows, VILLANI_COLUMNS,
                           "Villani's condition (the seed's route, a conjecture here) per instance: refuted for "
                           "lambda below lambda_V(beta). Outcomes: "
                           + outcome_summary((v.family, v.outcome) for v in f.villani), provenance(plan),
                           campaigns=(plan.campaign,), command=plan.command())


THRESHOLD_COLUMNS = ["family", "beta", "Bakry-Emery needs", "osc L (certified)", "Holley-Stroock needs",
                     "Villani needs"]


def threshold_cells(t: Threshold) -> list:
    """One row of poincare-thresholds: what each derivation needs, in words."""
    return [t.family, t.beta, f"lambda > {t.m:.4g}" if t.hessian_bounded else "never (Hess L unbounded below)",
            t.osc_certified, "lambda > 0" if t.osc_certified is not None else "never (L unbounded)",
            f"lambda > {t.lambda_V:.4g}"]


def thresholds_table(f: Findings, plan) -> Table:
    """The smallest lambda each derivation needs, per (family, beta)."""
    return Table.from_rows("poincare-thresholds", [threshold_cells(t) for t in f.thresholds], THRESHOLD_COLUMNS,
                           "Smallest lambda each derivation needs (certified m with L'' >= -m; osc L certified; "
                           "lambda_V(beta) estimated from the Villani identities of theory.poincare)",
                           provenance(plan), campaigns=(plan.campaign,), command=plan.command())


MUCKENHOUPT_COLUMNS = ["family", "beta", "lambda", "C_P estimate", "error", "certified lo", "certified hi",
                       "hi/lo", "estimate inside", "verdict", "window enlargement change"]


def muckenhoupt_caption(f: Findings) -> str:
    inside = sum(bool(b.inside) for b in f.brackets)
    ratio = [b.ratio for b in f.brackets]
    return (f"Rigorous brackets of the 1-D Poincare constant on the window (Muckenhoupt: max(mu((a,m]) B+, "
            f"mu([m,b)) B-) <= C_P <= 4 max(B+, B-), arb ball integrals by python-flint): {inside}/{len(f.brackets)} "
            f"discretised estimates lie inside their bracket (with their error); hi/lo from "
            f"{fmt(min(ratio, default=None))} "
            f"to {fmt(max(ratio, default=None))}. The window enlargement change is |C_P(1.25 R) - C_P(R)|")


def muckenhoupt_table(f: Findings, plan) -> Table:
    """The certified 1-D brackets of ``plan``'s campaign, every discretised estimate checked against its own."""
    rows = [[b.family, b.beta, b.lam, b.C_P, b.err, b.lo, b.hi, b.ratio, b.inside, b.verdict, b.trunc_err]
            for b in f.brackets]
    return Table.from_rows("poincare-muckenhoupt", rows, MUCKENHOUPT_COLUMNS, muckenhoupt_caption(f),
                           provenance(plan), campaigns=(plan.campaign,), command=plan.command())


SDE_QUANTITY = {"rate": "rate", "mean_loss": "mean_loss", "expected_loss": "E[L] - inf L vs d/(2 beta)"}
SDE_COLUMNS = ["family", "quantity", "beta", "lambda", "measured", "se", "interval lo", "interval hi", "reference",
               "outcome"]


def sde_caption(f: Findings) -> str:
    return ("Langevin SDE (MALA): decay rate vs 1/(beta C_P), E[L] vs quadrature, E_beta[L] - inf L vs the Laplace "
            "value d/(2 beta); agreement is equivalence: TOST at a margin of 10% of the prediction, 90% t intervals "
            "with df = units - 1, inconclusive unless equivalence or a difference beyond the margin is shown. "
            "Outcomes: "
            + outcome_summary((SDE_QUANTITY[s.kind], s.outcome) for s in f.sde if s.outcome != "-"))


def sde_table(f: Findings, plan) -> Table:
    """The Langevin SDE's outcomes (no rows when its campaign is not stored)."""
    rows = [[s.family, SDE_QUANTITY[s.kind], s.beta, s.lam, s.measured, s.se, s.lo, s.hi, s.reference, s.outcome]
            for s in f.sde]
    return Table.from_rows("poincare-sde", rows, SDE_COLUMNS, sde_caption(f),
                           provenance(plan) + f", {f.sde_campaign}", campaigns=(f.sde_campaign,),
                           command=plan.command())


def excess_outcome_text(x: LossExcess) -> str:
    """The outcome of one loss-excess test, a refutation the regularisation gap predicts marked so."""
    return x.outcome + (" (predicted: the regularisation gap)" if x.predicted else "")


SDE_LOSS_COLUMNS = ["family", "beta", "lambda", "E[L] - inf L", "lo", "hi", "Laplace d/(2 beta)", "outcome",
                    "L(theta*_lambda) - inf L", "dist to argmin L, start", "dist to argmin L, middle",
                    "dist to argmin L, end", "dist to theta*_lambda, end"]


def sde_loss_caption(f: Findings) -> str:
    xs = f.loss_excess
    ref = sum(x.outcome == "refuted" for x in xs)
    forced = sum(x.predicted for x in xs)
    gaps = sorted({f"{x.gap:.4g}" for x in xs})
    return (f"Does the SDE minimise the loss? E_beta[L] - inf L (inf L: best L-BFGS value, an upper estimate, so the "
            f"excess is underestimated) against the Laplace value d/(2 beta) of a measure that minimises L, TOST at a "
            f"margin of 10% of d/(2 beta) with one unit per chain: refuted at {ref}/{len(xs)} temperatures, {forced} "
            f"of them predicted (the regularisation gap L(theta*_lambda) - inf L = {', '.join(gaps) or '-'} alone "
            f"exceeds d/(2 beta) plus the margin: lambda > 0); distances to the minimisers of L found, mean +- 3 se "
            "over chains")


def sde_loss_table(f: Findings, plan) -> Table:
    """Per (family, beta): E_beta[L] - inf L with its interval against d/(2 beta), the regularisation
    gap L(theta*_lambda) - inf L, and the chains' distance to the minimisers of L found at the first,
    middle and last record time (mean +- 3 se)."""
    rows = [[x.family, x.beta, x.lam, x.excess, x.lo, x.hi, x.laplace, excess_outcome_text(x), x.gap]
            + [f"{d.mean:.4g} +- {3 * d.se:.2g} (t={d.t:.3g})" for d in x.to_argmin]
            + [f"{x.to_theta_star.mean:.4g} +- {3 * x.to_theta_star.se:.2g}"] for x in f.loss_excess]
    return Table.from_rows("poincare-sde-loss", rows, SDE_LOSS_COLUMNS, sde_loss_caption(f),
                           provenance(plan) + f", {f.sde_campaign}", campaigns=(f.sde_campaign,),
                           command=plan.command())
