"""Tables and figures of the Poincare campaign, aggregated from stored records only (no recomputation).

Tables (paper/tables): poincare_bounds (true C_P, each bound, ratios bound / C_P), poincare_villani
(lambda_V(beta) and where the seed's Villani route fails: outcomes), poincare_sde (rates, E[L], the
regularisation gap: outcomes with their intervals), and the findings of verification.poincare.findings
(Villani map with Wilson shares, collapsed lower bounds, expected loss). Every caption states its
conclusion from the stored records (counts, shares), never a typed number. Figures (paper/figures, PNG + PDF): C_P against lambda and against beta with
the bounds, one file per family.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from verification.poincare.findings import write_findings
from verification.report.figures import save_figure
from verification.report.tables import fmt, print_table, write_table


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
            out.append([e["family"], "E[F] vs F*", e["beta"], e["lam"], r["value"], e["E_F_se"], iv[0], iv[1],
                        r["bound"], r["verdict"]])
            out.append([e["family"], "E[L] vs L(theta*)", e["beta"], e["lam"], e["E_L"], e["E_L_se"], None, None,
                        e["L_star"], "-"])
        else:
            out.append([e["family"], "gap L(theta*)-min L", None, e["lam"], r["slack"], None, None, None, r["bound"],
                        r["verdict"]])
    return out


SDE_COLUMNS = ["family", "quantity", "beta", "lambda", "measured", "se", "interval lo", "interval hi", "reference",
               "outcome"]


def _plot(rows: list[list], fig_dir: Path, prov: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    written = []
    fams = sorted({r[0] for r in rows})
    for fam in fams:
        mine = [r for r in rows if r[0] == fam]
        betas, lams = sorted({r[1] for r in mine}), sorted({r[2] for r in mine})
        if len(betas) * len(lams) < 2:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, (xs_name, fixed_name, xi, fi, fixed) in zip(
                axes, (("lambda", "beta", 2, 1, betas[len(betas) // 2]), ("beta", "lambda", 1, 2, lams[len(lams) // 2]))):
            sel = sorted((r for r in mine if r[fi] == fixed), key=lambda r: r[xi])
            x = [r[xi] for r in sel]
            C = [r[3] for r in sel]
            ax.plot(x, C, "ko-", label="true C_P")
            ax.plot(x, [r[5] for r in sel], "k:", label="1/(beta lambda)")
            for col, lab, sty in ((6, "Bakry-Emery", "b^--"), (9, "Holley-Stroock", "rs--")):
                pts = [(xx, r[col]) for xx, r in zip(x, sel) if r[col] is not None and r[col] < 1e6 * max(C)]
                if pts:
                    ax.plot(*zip(*pts), sty, label=lab)
            for col, lab, sty in ((12, "Var theta (lower)", "gv-."), (13, "quadratic (lower)", "c.-.")):
                pts = [(xx, r[col] * r[3]) for xx, r in zip(x, sel) if r[col] is not None]
                if pts:
                    ax.plot(*zip(*pts), sty, label=lab)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xs_name)
            ax.set_title(f"{fam}: {fixed_name} = {fixed:g}")
            ax.legend(fontsize=7)
        fig.suptitle(f"Poincare constant and bounds ({fam}); HS omitted where > 1e6 C_P", fontsize=9)
        fig.subplots_adjust(bottom=0.2)
        written += save_figure(fig, fig_dir, f"poincare_{fam}", prov)
        plt.close(fig)
    return written


def bounds_caption(rows: list[list]) -> str:
    def summary(col):
        c = Counter(r[col] for r in rows if r[col] is not None)
        return ", ".join(f"{k} {c[k]}" for k in sorted(c))

    lin = [r[12] for r in rows if r[12] is not None]
    return ("True Poincare constant of exp(-beta F) vs Bakry-Emery (BE) and Holley-Stroock (HS) upper bounds and "
            f"test-function lower bounds (ratios to C_P), {len(rows)} instances. BE: {summary(8)}; HS: {summary(11)}; "
            f"Var/C_P from {fmt(min(lin, default=None))} to {fmt(max(lin, default=None))}. Tight is the theorem's "
            "equality (Gaussian, exact arithmetic), never a tolerance")


def sde_caption(rows: list[list]) -> str:
    return ("Langevin SDE (MALA): decay rate vs 1/(beta C_P), E[L] vs quadrature, E[F] >= F(theta*) "
            "(intervals: estimate +- 3 se), regularisation gap vs lambda. Outcomes: "
            + outcome_summary([r for r in rows if r[9] != "-"], 1, 9))


def report(store, plan, tables_dir, figures_dir, console) -> None:
    from verification.poincare.sde import sde_campaign
    from verification.poincare.villani_map import map_campaign

    prov = f"campaign {plan.campaign}, seed {plan.seed}, {'full' if plan.full else 'quick'} grid"
    rows = bounds_rows(store, plan.campaign)
    write_table(rows, BOUNDS_COLUMNS, "poincare_bounds", bounds_caption(rows), prov, tables_dir)
    print_table(console, rows, BOUNDS_COLUMNS, "Poincare: true constant and bounds")
    vrows = villani_rows(store, plan.campaign)
    write_table(vrows, VILLANI_COLUMNS, "poincare_villani",
                "Villani's condition (the seed's route, a conjecture here) per instance: refuted for lambda below "
                "lambda_V(beta). Outcomes: " + outcome_summary(vrows, 0, 6), prov, tables_dir)
    print_table(console, vrows, VILLANI_COLUMNS, "Poincare: Villani condition")
    trows = threshold_rows(store, plan.campaign)
    write_table(trows, THRESHOLD_COLUMNS, "poincare_thresholds",
                "Smallest lambda each derivation needs (certified m with L'' >= -m; osc L certified; "
                "lambda_V(beta) estimated from the Villani identities of theory.poincare)", prov, tables_dir)
    print_table(console, trows, THRESHOLD_COLUMNS, "Poincare: where each derivation goes through")
    sde = sde_campaign(plan.seed, plan.full)
    srows = sde_rows(store, sde)
    if srows:
        write_table(srows, SDE_COLUMNS, "poincare_sde", sde_caption(srows), prov + f", {sde}", tables_dir)
        print_table(console, srows, SDE_COLUMNS, "Poincare: Langevin SDE")
    write_findings(store, plan, dict(sorted(by_instance(store, plan.campaign).items())), sde,
                   map_campaign(plan.seed, plan.full), tables_dir, prov, console)
    _plot(rows, Path(figures_dir), prov)
