"""The Poincare campaign's own tables, each built once as a :class:`verification.report.tables.Table`
from stored records only (no recomputation): the report writes it to Markdown / CSV
(:func:`verification.poincare.report.report`) and the paper (:mod:`verification.poincare.paper`)
picks its columns by name for LaTeX.

* poincare-bounds: the estimated C_P, each bound, ratios bound / C_P (:func:`bounds_table`).
* poincare_villani: lambda_V(beta) and where the seed's Villani route fails: outcomes (:func:`villani_table`).
* poincare-thresholds: the smallest lambda each derivation needs (:func:`thresholds_table`).
* poincare-muckenhoupt: certified 1-D brackets of C_P with every estimate inside (:func:`muckenhoupt_table`).
* poincare-sde-loss: E_beta[L] - inf L against d/(2 beta), distances to the minimisers (:func:`sde_loss_table`).
* poincare-sde: rates, E[L], the regularisation gap: outcomes with their intervals (:func:`sde_table`).

The findings (Villani map, collapsed lower bounds, expected loss) are in
:mod:`verification.poincare.report.findings`. Every caption states its conclusion from the stored
records (counts, shares), never a typed number. The mathematics: docs/theory.md section 4.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from verification.report.tables import Table, fmt


def provenance(plan) -> str:
    """The provenance line of every Poincare table of ``plan``."""
    return f"campaign {plan.campaign}, seed {plan.seed}, {'full' if plan.full else 'quick'} grid"


def by_instance(store, campaign: str) -> dict:
    rows: dict = defaultdict(dict)
    for r in store.records(campaign=campaign):
        e = r["extra"]
        key = (e["family"], e["beta"], e["lam"])
        name = r["theorem"].rsplit(".", 1)[-1]
        if name == "test_function_lower":
            name = f"lower_{e['kind']}"
        rows[key][name] = r
    return rows


def _ratio(bound, value):
    return None if bound is None or not value else bound / value


def bounds_rows(store, campaign: str) -> list[list]:
    out = []
    for (fam, beta, lam), recs in sorted(by_instance(store, campaign).items()):
        any_r = next(iter(recs.values()))
        e = any_r["extra"]
        C = e["C_P"]
        be, hs = recs.get("bakry_emery"), recs.get("holley_stroock")
        lo = {k: recs[k]["bound"] for k in ("lower_linear", "lower_quadratic", "lower_eigenfunction_mp") if k in recs}
        out.append([fam, beta, lam, C, e["err"], e["gaussian_C"],
                    be and be["bound"], _ratio(be and be["bound"], C), be and be["verdict"],
                    hs and hs["bound"], _ratio(hs and hs["bound"], C), hs and hs["verdict"],
                    _ratio(lo.get("lower_linear"), C), _ratio(lo.get("lower_quadratic"), C),
                    _ratio(lo.get("lower_eigenfunction_mp"), C)])
    return out


BOUNDS_COLUMNS = ["family", "beta", "lambda", "C_P", "error", "1/(beta lambda)", "BE", "BE/C_P", "BE verdict",
                  "HS", "HS/C_P", "HS verdict", "Var/C_P", "quad/C_P", "eig_mp/C_P"]


def villani_rows(store, campaign: str) -> list[list]:
    out = []
    for (fam, beta, lam), recs in sorted(by_instance(store, campaign).items()):
        v = recs.get("villani")
        if v is None:
            continue
        e = v["extra"]
        hs = recs.get("holley_stroock")
        still = "HS bound" if hs and hs["bound"] is not None else "lower bounds only"
        iv = e.get("interval") or [None, None]
        out.append([fam, beta, lam, v["bound"], iv[0], iv[1], v["verdict"], e["certified"], e["witness"],
                    "-" if e["numerically_holds"] else still])
    return out


VILLANI_COLUMNS = ["family", "beta", "lambda", "lambda_V(beta)", "lambda_V lo", "lambda_V hi", "outcome", "certified",
                   "witness", "what still holds"]


def outcome_summary(rows: list[list], fam_col: int, out_col: int) -> str:
    """'fam: outcome k, ...' per family, from table rows (for generated captions)."""
    per: dict = defaultdict(Counter)
    for r in rows:
        per[r[fam_col]][r[out_col]] += 1
    return "; ".join(f"{f}: " + ", ".join(f"{k} {c[k]}" for k in sorted(c)) for f, c in sorted(per.items()))


def threshold_rows(store, campaign: str) -> list[list]:
    """Per (family, beta): the smallest lambda each derivation needs (from the stored records)."""
    seen = {}
    for (fam, beta, lam), recs in sorted(by_instance(store, campaign).items()):
        be, v = recs.get("bakry_emery"), recs.get("villani")
        if be is None or v is None or (fam, beta) in seen or "hessian_bounded" not in be["extra"]:
            continue
        e = be["extra"]
        be_need = f"lambda > {e['m']:.4g}" if e["hessian_bounded"] else "never (Hess L unbounded below)"
        hs_need = "lambda > 0" if e["osc_certified"] is not None else "never (L unbounded)"
        seen[(fam, beta)] = [fam, beta, be_need, e["osc_certified"], hs_need, f"lambda > {v['bound']:.4g}"]
    return list(seen.values())


THRESHOLD_COLUMNS = ["family", "beta", "Bakry-Emery needs", "osc L (certified)", "Holley-Stroock needs",
                     "Villani needs"]


def sde_rows(store, campaign: str) -> list[list]:
    out = []
    for r in store.records(campaign=campaign):
        e = r["extra"]
        iv = e.get("interval") or [None, None]
        if e["kind"] in ("rate", "mean_loss"):
            out.append([e["family"], e["kind"], e.get("beta"), e.get("lam"), r["value"], e["se"], iv[0], iv[1],
                        r["bound"], r["verdict"]])
        elif e["kind"] == "expected_loss":
            out.append([e["family"], "E[L] - inf L vs d/(2 beta)", e["beta"], e["lam"], r["value"], e["E_L_se"],
                        iv[0], iv[1], r["bound"], r["verdict"]])
    return out


def muckenhoupt_rows(store, campaign: str) -> list[list]:
    """1-D instances: the discretised C_P (an estimate) against its certified Muckenhoupt bracket."""
    out = []
    for (fam, beta, lam), recs in sorted(by_instance(store, campaign).items()):
        r = recs.get("lower_muckenhoupt")
        if r is None:
            continue
        e = r["extra"]
        lo, hi = e["bracket"]
        out.append([fam, beta, lam, e["C_P"], e["err"], lo, hi, hi / lo, e["inside"], r["verdict"], e["trunc_err"]])
    return out


MUCKENHOUPT_COLUMNS = ["family", "beta", "lambda", "C_P estimate", "error", "certified lo", "certified hi",
                       "hi/lo", "estimate inside", "verdict", "window enlargement change"]


def muckenhoupt_caption(rows: list[list]) -> str:
    inside = sum(bool(r[8]) for r in rows)
    ratio = [r[7] for r in rows]
    return (f"Rigorous brackets of the 1-D Poincare constant on the window (Muckenhoupt: max(mu((a,m]) B+, "
            f"mu([m,b)) B-) <= C_P <= 4 max(B+, B-), arb ball integrals by python-flint): {inside}/{len(rows)} "
            f"discretised estimates lie inside their bracket (with their error); hi/lo from "
            f"{fmt(min(ratio, default=None))} "
            f"to {fmt(max(ratio, default=None))}. The window enlargement change is |C_P(1.25 R) - C_P(R)|")


def muckenhoupt_table(store, plan) -> Table:
    """The certified 1-D brackets of ``plan``'s campaign, every discretised estimate checked against its own."""
    rows = muckenhoupt_rows(store, plan.campaign)
    return Table.from_rows("poincare-muckenhoupt", rows, MUCKENHOUPT_COLUMNS, muckenhoupt_caption(rows),
                           provenance(plan), campaigns=(plan.campaign,), command=plan.command())


SDE_COLUMNS = ["family", "quantity", "beta", "lambda", "measured", "se", "interval lo", "interval hi", "reference",
               "outcome"]


def sde_loss_rows(store, campaign: str) -> list[list]:
    """Per (family, beta): E_beta[L] - inf L with its interval against d/(2 beta), the regularisation gap
    L(theta*_lambda) - inf L, and the chains' distance to the minimisers of L found at the first, middle
    and last record time (mean +- 3 se)."""
    out = []
    for r in store.records(campaign=campaign):
        e = r["extra"]
        if e.get("kind") != "expected_loss" or "laplace" not in e:
            continue
        iv = e["interval"]
        d = e["dist_argmin_L"]
        first, mid, last = d[0], d[len(d) // 2], d[-1]
        verdict = r["verdict"] + (" (predicted: the regularisation gap)" if e.get("predicted_refuted") and r["verdict"] == "refuted" else "")
        out.append([e["family"], e["beta"], e["lam"], r["value"], iv[0], iv[1], e["laplace"], verdict,
                    e["L_star"] - e["min_L"]] + [f"{x[1]:.4g} +- {3 * x[2]:.2g} (t={x[0]:.3g})" for x in (first, mid, last)]
                   + [f"{e['dist_theta_star'][-1][1]:.4g} +- {3 * e['dist_theta_star'][-1][2]:.2g}"])
    return sorted(out, key=lambda r: (r[0], r[1]))


SDE_LOSS_COLUMNS = ["family", "beta", "lambda", "E[L] - inf L", "lo", "hi", "Laplace d/(2 beta)", "outcome",
                    "L(theta*_lambda) - inf L", "dist to argmin L, start", "dist to argmin L, middle",
                    "dist to argmin L, end", "dist to theta*_lambda, end"]


def sde_loss_caption(rows: list[list]) -> str:
    ref = sum(r[7].startswith("refuted") for r in rows)
    forced = sum(r[7].startswith("refuted") and "predicted" in r[7] for r in rows)
    gaps = sorted({f"{r[8]:.4g}" for r in rows})
    return (f"Does the SDE minimise the loss? E_beta[L] - inf L (inf L: best L-BFGS value, an upper estimate, so the "
            f"excess is underestimated) against the Laplace value d/(2 beta) of a measure that minimises L, TOST at a "
            f"margin of 10% of d/(2 beta) with one unit per chain: refuted at {ref}/{len(rows)} temperatures, {forced} "
            f"of them predicted (the regularisation gap L(theta*_lambda) - inf L = {', '.join(gaps) or '-'} alone "
            f"exceeds d/(2 beta) plus the margin: lambda > 0); distances to the minimisers of L found, mean +- 3 se "
            "over chains")


def sde_loss_table(store, campaign: str, plan) -> Table:
    """E_beta[L] - inf L against beta with the Laplace curve, and the distance to the minimisers over time."""
    rows = sde_loss_rows(store, campaign)
    return Table.from_rows("poincare-sde-loss", rows, SDE_LOSS_COLUMNS, sde_loss_caption(rows),
                           provenance(plan) + f", {campaign}", campaigns=(campaign,),
                           command=plan.command())


def bounds_caption(rows: list[list]) -> str:
    def summary(col):
        c = Counter(r[col] for r in rows if r[col] is not None)
        return ", ".join(f"{k} {c[k]}" for k in sorted(c))

    lin = [r[12] for r in rows if r[12] is not None]
    return ("Poincare constant of exp(-beta F) (discretised estimate) vs Bakry-Emery (BE) and Holley-Stroock (HS) "
            "upper bounds and "
            f"test-function lower bounds (ratios to C_P), {len(rows)} instances. BE: {summary(8)}; HS: {summary(11)}; "
            f"Var/C_P from {fmt(min(lin, default=None))} to {fmt(max(lin, default=None))}. Tight is the theorem's "
            "equality (Gaussian, exact arithmetic), never a tolerance")


def sde_caption(rows: list[list]) -> str:
    return ("Langevin SDE (MALA): decay rate vs 1/(beta C_P), E[L] vs quadrature, E_beta[L] - inf L vs the Laplace "
            "value d/(2 beta); agreement is equivalence: TOST at a margin of 10% of the prediction, 90% t intervals "
            "with df = units - 1, inconclusive unless equivalence or a difference beyond the margin is shown. "
            "Outcomes: "
            + outcome_summary([r for r in rows if r[9] != "-"], 1, 9))


def bounds_table(store, plan) -> Table:
    """The estimated C_P against every bound, one row per (family, beta, lambda) of ``plan``'s campaign."""
    rows = bounds_rows(store, plan.campaign)
    return Table.from_rows("poincare-bounds", rows, BOUNDS_COLUMNS, bounds_caption(rows), provenance(plan),
                           campaigns=(plan.campaign,), command=plan.command())


def villani_table(store, plan) -> Table:
    """Villani's condition per instance of ``plan``'s campaign: outcomes."""
    rows = villani_rows(store, plan.campaign)
    return Table.from_rows("poincare_villani", rows, VILLANI_COLUMNS,
                           "Villani's condition (the seed's route, a conjecture here) per instance: refuted for "
                           "lambda below lambda_V(beta). Outcomes: " + outcome_summary(rows, 0, 6), provenance(plan),
                           campaigns=(plan.campaign,), command=plan.command())


def thresholds_table(store, plan) -> Table:
    """The smallest lambda each derivation needs, per (family, beta)."""
    return Table.from_rows("poincare-thresholds", threshold_rows(store, plan.campaign), THRESHOLD_COLUMNS,
                           "Smallest lambda each derivation needs (certified m with L'' >= -m; osc L certified; "
                           "lambda_V(beta) estimated from the Villani identities of theory.poincare)",
                           provenance(plan), campaigns=(plan.campaign,), command=plan.command())


def sde_table(store, campaign: str, plan) -> Table:
    """The Langevin SDE's outcomes of ``campaign`` (no rows when it is not stored)."""
    rows = sde_rows(store, campaign)
    return Table.from_rows("poincare-sde", rows, SDE_COLUMNS, sde_caption(rows),
                           provenance(plan) + f", {campaign}", campaigns=(campaign,),
                           command=plan.command())
