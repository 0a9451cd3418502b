"""The Poincare campaign's findings as tables whose captions are generated from the stored records.

* poincare-villani-boundary: per family, data seed and beta, Villani's threshold lambda_V(beta)
  (estimate, and a certified bracket for lora2) against the seed's hypothesis (every lambda > 0).
* poincare-metastable: every instance ordered by its best test-function lower bound over C_P; those
  below COLLAPSE (Var/C_P small: the polynomial test functions miss the slow, metastable mode) are
  listed and counted, not omitted.
* poincare_expected_loss: per instance, E_mu[L] against L(argmin F) and min L (quadrature under the
  discretised mu on the bounds grid: every quick family), and the SDE's Monte Carlo E[L] for the
  higher-dimensional families.

Each is built once as a :class:`verification.report.tables.Table` (``*_table``): the report writes it
(:func:`write_findings`), the paper (:mod:`verification.poincare.paper`) renders the same object. The
report layer reads the store only; it never recomputes.
"""
from __future__ import annotations

from typing import Any

from verification.report.aggregate import group, median
from verification.poincare.report.tables import provenance
from verification.report.tables import Table, fmt, print_table

COLLAPSE = 0.5   # best test-function lower bound below this fraction of C_P: reported as collapsed


# -- Villani boundary ----------------------------------------------------------------------------------

SEED_HYPOTHESIS = "every lambda > 0 (any beta, any data)"


def villani_boundary_rows(records: list[dict]) -> list[list]:
    """One row per (family, data seed, beta): lambda_V(beta) estimated and, where one exists, its
    certified bracket, against the seed's hypothesis; the lambda grid's outcomes on either side."""
    out = []
    for (fam, seed, beta), recs in sorted(group(records, lambda r: (r["extra"]["family"], r["extra"]["data_seed"],
                                                                     r["extra"]["beta"])).items()):
        e = recs[0]["extra"]
        est, (lo, hi) = e["statistic"], e["interval"]
        cb = e.get("certified_bracket")
        ref = [r for r in recs if r["verdict"] == "refuted"]
        if e["certified"] and e["numerically_holds"]:
            status, contradicts = "0 (proved)", "no"
        elif cb is not None:
            status, contradicts = "certified", "yes (certified)" if cb[0] > 0 else "no"
        else:
            status, contradicts = "estimate", "yes (estimate)" if lo > 0 else "no"
        out.append([fam, seed, beta, est, lo, hi, None if cb is None else cb[0], None if cb is None else cb[1],
                    status, SEED_HYPOTHESIS, contradicts, f"{len(ref)}/{len(recs)}",
                    sum(bool(r["extra"]["certified"]) for r in ref), e.get("estimate_within_bracket")])
    return out


VILLANI_BOUNDARY_COLUMNS = ["family", "data seed", "beta", "lambda_V estimate", "estimate lo", "estimate hi",
                            "certified lo", "certified hi", "lambda_V is", "seed's hypothesis",
                            "route fails for some lambda > 0", "grid lambdas refuted", "refuted (enclosed)",
                            "estimate <= certified hi"]


def villani_boundary_caption(rows: list[list]) -> str:
    parts = []
    for (fam,), rs in group([dict(fam=r[0], row=r) for r in rows], lambda d: (d["fam"],)).items():
        rr = [d["row"] for d in rs]
        cert = [r for r in rr if r[8] == "certified"]
        if rr[0][8] == "0 (proved)":
            parts.append(f"{fam}: lambda_V = 0 by proof at all {len(rr)} (seed, beta)")
        elif cert:
            pos = [r for r in cert if r[6] > 0]
            ok = sum(r[13] is True for r in cert)
            parts.append(f"{fam}: certified lambda_V(beta) > 0 at {len(pos)}/{len(rr)} (seed, beta), grid estimate "
                         f"below the certified upper end at {ok}/{len(cert)}, brackets from "
                         f"[{fmt(min(r[6] for r in cert))}, {fmt(min(r[7] for r in cert))}] (largest beta) to "
                         f"[{fmt(max(r[6] for r in cert))}, {fmt(max(r[7] for r in cert))}], widest "
                         f"{fmt(max(r[7] - r[6] for r in cert))}")
        else:
            pos = [r for r in rr if r[4] > 0]
            parts.append(f"{fam}: estimated lambda_V(beta) > 0 at {len(pos)}/{len(rr)} (seed, beta), from "
                         f"{fmt(min(r[3] for r in rr))} to {fmt(max(r[3] for r in rr))} (grid estimate, not certified)")
    return ("Villani's boundary lambda_V(beta) against the seed's hypothesis (" + SEED_HYPOTHESIS + "): the route "
            "fails for every lambda below lambda_V(beta). " + "; ".join(parts) + ".")


# -- metastable cases ----------------------------------------------------------------------------------

def metastable_rows(by_instance: dict) -> list[list]:
    out = []
    for (fam, beta, lam), recs in by_instance.items():
        e = next(iter(recs.values()))["extra"]
        C = e["C_P"]
        ratio = {k: recs[k]["bound"] / C for k in ("lower_linear", "lower_quadratic", "lower_eigenfunction_mp")
                 if k in recs and recs[k]["bound"] is not None and C}
        best = max((v for k, v in ratio.items() if k != "lower_eigenfunction_mp"), default=None)
        out.append([fam, beta, lam, C, e["gaussian_C"], ratio.get("lower_linear"), ratio.get("lower_quadratic"),
                    ratio.get("lower_eigenfunction_mp"), best is not None and best < COLLAPSE])
    return sorted(out, key=lambda r: (min(x for x in (r[5], r[6]) if x is not None), r[0], r[1], r[2]))


METASTABLE_COLUMNS = ["family", "beta", "lambda", "C_P", "1/(beta lambda)", "Var/C_P", "quad/C_P", "eig_mp/C_P",
                      "collapsed"]


def metastable_caption(rows: list[list]) -> str:
    if not rows:
        return "Test-function lower bounds: no instances stored"
    bad = [r for r in rows if r[8]]
    worst = rows[0]
    head = (f"Test-function lower bounds over C_P, worst first: {len(bad)} of {len(rows)} instances have their best "
            f"polynomial (degree <= 2) bound below {COLLAPSE:g} C_P (collapsed: a metastable slow mode those "
            f"functions miss)")
    tail = (f"; the worst is {worst[0]} at beta {fmt(worst[1])}, lambda {fmt(worst[2])}: Var/C_P {fmt(worst[5])}, "
            f"quadratic {fmt(worst[6])}")
    return head + tail + ". The discretised-eigenfunction quotient (eig_mp, a quadrature estimate) stays near 1."


# -- expected loss -------------------------------------------------------------------------------------

def expected_loss_rows(by_instance: dict, sde_records: list[dict]) -> list[list]:
    out = []
    for (fam, beta, lam), recs in by_instance.items():
        e = next(iter(recs.values()))["extra"]
        if "E_L" not in e:
            continue
        out.append([fam, "quadrature", beta, lam, e["E_L"], None, e["L_argmin_F"], e["min_L"],
                    e["E_L"] - e["L_argmin_F"], e["L_argmin_F"] - e["min_L"]])
    for r in sde_records:
        e = r["extra"]
        if e.get("kind") == "expected_loss":
            out.append([e["family"], "SDE (MALA)", e["beta"], e["lam"], e["E_L"], e["E_L_se"], e["L_star"], e["min_L"],
                        e["E_L"] - e["L_star"], e["L_star"] - e["min_L"]])
    return out


EXPECTED_LOSS_COLUMNS = ["family", "method", "beta", "lambda", "E_mu[L]", "se", "L(argmin F)", "min L",
                         "E_mu[L] - L(argmin F)", "L(argmin F) - min L"]


def expected_loss_caption(rows: list[list]) -> str:
    parts = []
    for (fam,), rs in group([dict(fam=r[0], row=r) for r in rows], lambda d: (d["fam"],)).items():
        rr = [d["row"] for d in rs]
        above = sum(r[8] > 0 for r in rr)
        parts.append(f"{fam}: E_mu[L] > L(argmin F) at {above}/{len(rr)} (median excess {fmt(median(r[8] for r in rr))}), "
                     f"regularisation gap L(argmin F) - min L median {fmt(median(r[9] for r in rr))}")
    return ("Expected loss under mu_beta against the loss at the minimiser of F and the smallest loss found "
            "(quadrature on the discretised mu; min L on the grid or by L-BFGS: upper estimates of inf L). "
            + "; ".join(parts) + ".")


def villani_boundary_table(records: list[dict], campaign: str, plan: Any) -> Table:
    """lambda_V(beta) per family, data seed and beta, from the stored ``records`` of ``campaign``."""
    rows = villani_boundary_rows(records)
    return Table.from_rows("poincare-villani-boundary", rows, VILLANI_BOUNDARY_COLUMNS,
                           villani_boundary_caption(rows), provenance(plan) + f", {campaign}", campaigns=(campaign,),
                           command=plan.command())


def metastable_table(by_instance: dict, plan: Any) -> Table:
    """Every instance of ``plan``'s campaign, worst test-function lower bound first."""
    rows = metastable_rows(by_instance)
    return Table.from_rows("poincare-metastable", rows, METASTABLE_COLUMNS, metastable_caption(rows),
                           provenance(plan), campaigns=(plan.campaign,), command=plan.command())


def expected_loss_table(by_instance: dict, sde_records: list[dict], sde_campaign: str, plan: Any) -> Table:
    """E_mu[L] by quadrature (``plan``'s campaign) and by the SDE (``sde_campaign``)."""
    rows = expected_loss_rows(by_instance, sde_records)
    return Table.from_rows("poincare_expected_loss", rows, EXPECTED_LOSS_COLUMNS, expected_loss_caption(rows),
                           provenance(plan) + f", {sde_campaign}", campaigns=(plan.campaign, sde_campaign),
                           command=plan.command())


def write_findings(store: Any, plan: Any, by_instance: dict, sde_campaign: str, map_campaign: str,
                   tables_dir: Any, console: Any) -> None:
    """Write and print the three findings tables (see the module docstring)."""
    maps = list(store.records(campaign=map_campaign))
    if maps:
        t = villani_boundary_table(maps, map_campaign, plan)
        t.write(tables_dir)
        print_table(console, t.rows(), t.columns(), "Poincare: Villani's boundary lambda_V(beta)")
    t = metastable_table(by_instance, plan)
    t.write(tables_dir)
    print_table(console, t.rows()[:10], t.columns(), "Poincare: weakest test-function lower bounds")
    t = expected_loss_table(by_instance, list(store.records(campaign=sde_campaign)), sde_campaign, plan)
    t.write(tables_dir)
    print_table(console, t.rows(), t.columns(), "Poincare: expected loss vs L(argmin F) and min L")
