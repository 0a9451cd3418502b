"""SAN report: stored records -> tables and figures (never recomputed).

The table builders (runs, claims, spectra, trainability, rollout, bottleneck) and the figures
(``draw(ax)`` callables over stored summaries, deterministic, no timestamps: loss gaps with their
noise-floor intervals, probe accuracies per role, loss by context position, threshold ranks over
training, trainability by depth) are used by :func:`verification.san.paper.paper_part`;
:func:`write_part` writes a part's tables (Markdown, CSV with provenance) and figures (PNG, PDF).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from verification.report.part import Figure, Part
from verification.san.checks.claims import loss

ROLE_ORDER = ("std", "san-depth", "san-flops", "san-params")
MATRICES = ("W_Q", "W_K", "QK", "W_V", "W_O", "OV")


def _mean(xs: list) -> float:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return float(np.mean(xs)) if xs else math.nan


def runs_table(runs: list[dict]) -> pd.DataFrame:
    rows = [dict(run=r["key"], role=r["role"], seed=r["seed"], layers=r["n_layer"], qk_norm=r["qk_norm"],
                 params=r["params"], flops_per_token=r["flops"], val_loss=r["val_loss"],
                 val_loss_2se=2 * r["val_loss_se"], retrieval_acc=r["retrieval_acc"], recall_acc=r["recall_acc"],
                 diverged=r["diverged"], trained=r["verdict"]) for r in runs]
    return pd.DataFrame(rows)


def claims_table(claims: list[dict]) -> pd.DataFrame:
    rows = []
    for c in claims:
        iv = c["extra"].get("interval") or [math.nan, math.nan]
        rows.append(dict(claim=c["theorem"].removeprefix("san.claim."), instance=c["instance"], outcome=c["verdict"],
                         statistic=c["extra"]["statistic"], low=iv[0], high=iv[1], noise_floor=c["extra"].get("noise"),
                         n=c["extra"].get("n"), direction=c["extra"].get("direction"),
                         paper=c["extra"].get("paper", "")))
    return pd.DataFrame(rows)


def spectra_table(runs: list[dict]) -> pd.DataFrame:
    """Mean over seeds and layers, per role, checkpoint and matrix: entropy and threshold ranks."""
    acc: dict = {}
    for r in runs:
        if r["role"] == "sweep":
            continue
        total = max(int(s) for s in r["spectra"])
        for step, layers in r["spectra"].items():
            for m in MATRICES:
                key = (r["role"], int(step) / total, m)
                for est in ("entropy", "threshold"):
                    acc.setdefault(key + (est,), []).extend(l[m].get(est, math.nan) for l in layers)
    rows = {}
    for (role, frac, m, est), vals in acc.items():
        rows.setdefault((role, frac, m), {})[est] = _mean(vals)
    out = [dict(role=k[0], fraction=k[1], matrix=k[2], entropy_rank=v.get("entropy"),
                threshold_rank=v.get("threshold")) for k, v in rows.items()]
    df = pd.DataFrame(out)
    if len(df):
        df["role"] = pd.Categorical(df["role"], ROLE_ORDER)
        df = df.sort_values(["role", "matrix", "fraction"]).reset_index(drop=True)
        df["role"] = df["role"].astype(str)
    return df


def trainability_table(runs: list[dict]) -> pd.DataFrame:
    rows = [dict(layers=r["n_layer"], qk_norm=r["qk_norm"], val_loss=r["val_loss"] if not r["diverged"] else math.nan,
                 loss_used=loss(r), diverged=r["diverged"], steps_done=r["steps_done"])
            for r in runs if r["role"] == "sweep"]
    df = pd.DataFrame(rows)
    return df.sort_values(["layers", "qk_norm"]).reset_index(drop=True) if len(df) else df


def rollout_table(store: Any, campaign: str) -> pd.DataFrame:
    """Median delta(R_l) and median chain ratio delta(R_l) / prod delta(Ahat) per role and layer."""
    acc: dict = {}
    for r in store.records(campaign, theorem="dobrushin.product"):
        p = r["provenance"]
        key = (p["role"], p["variant"], p["layer"])
        acc.setdefault(key, []).append((r["value"], r["extra"].get("ratio_R"), r["verdict"] == "tight"))
    rows = [dict(role=k[0], variant=k[1], layer=k[2], delta_R=float(np.median([v[0] for v in vs])),
                 chain_ratio=_mean([v[1] for v in vs]), chain_tight=float(np.mean([v[2] for v in vs])), n=len(vs))
            for k, vs in sorted(acc.items())]
    return pd.DataFrame(rows)


def bottleneck_table(store: Any, campaign: str) -> pd.DataFrame:
    rows = [dict(run=r["provenance"]["run"], verdict=r["verdict"], float_residual=r["extra"]["residual"],
                 exact=r["extra"]["exact"], monomials=r["extra"]["monomials"],
                 c_min=min(r["extra"]["c_min"]), c_max=max(r["extra"]["c_max"]))
            for r in store.records(campaign, theorem="san.bottleneck")]
    return pd.DataFrame(rows)


def _pairs(runs: list[dict]) -> list[dict]:
    return [r for r in runs if r["role"] != "sweep"]


def figures(runs: list[dict], claims: Any, spectra: Any, prov: str) -> list[Figure]:
    pair_runs = _pairs(runs)

    def gaps(ax: Any) -> None:
        g = claims[(claims["claim"] == "gap") & claims["instance"].isin(["depth", "flops", "params"])]
        x = np.arange(len(g))
        ax.bar(x, g["statistic"], color="0.6")
        ax.errorbar(x, g["statistic"], yerr=[g["statistic"] - g["low"], g["high"] - g["statistic"]], fmt="none",
                    ecolor="k", capsize=4)
        if len(g):
            nf = float(g["noise_floor"].iloc[0])
            ax.axhspan(-nf, nf, color="tab:blue", alpha=0.15, label="seed-to-seed noise floor")
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(x, [f"matched {k}" for k in g["instance"]])
        ax.set_ylabel("L(SAN) - L(standard), nats/byte")
        ax.legend(fontsize=7)

    def probes(ax: Any) -> None:
        w = 0.38
        for i, kind in enumerate(("retrieval", "recall")):
            vals = [np.mean([r[f"{kind}_acc"] for r in pair_runs if r["role"] == role] or [math.nan])
                    for role in ROLE_ORDER]
            ax.bar(np.arange(len(ROLE_ORDER)) + (i - 0.5) * w, vals, w, label=f"{kind} (context)" if kind == "retrieval"
                   else "recall (weights)")
        ax.set_xticks(np.arange(len(ROLE_ORDER)), ROLE_ORDER)
        ax.set_ylabel("accuracy at the answer byte")
        ax.legend(fontsize=7)

    def by_position(ax: Any) -> None:
        for role in ROLE_ORDER:
            curves = [r["loss_by_pos"] for r in pair_runs if r["role"] == role]
            if curves:
                ax.plot(np.mean(curves, axis=0), label=role)
        ax.set_xlabel("position in the context (bytes)")
        ax.set_ylabel("validation loss, nats/byte")
        ax.legend(fontsize=7)

    def spectra_over_training(ax: Any) -> None:
        for role, style in (("std", "-"), ("san-depth", "--")):
            for m, color in (("W_Q", "tab:blue"), ("W_K", "tab:cyan"), ("W_V", "tab:orange"), ("W_O", "tab:red")):
                s = spectra[(spectra["role"] == role) & (spectra["matrix"] == m)] if len(spectra) else spectra
                if len(s):
                    ax.plot(s["fraction"], s["threshold_rank"], style, color=color, marker="o", ms=3,
                            label=f"{role} {m}")
        ax.set_xlabel("fraction of training")
        ax.set_ylabel("threshold rank (above the init bulk)")
        ax.legend(fontsize=6, ncol=2)

    def trainability(ax: Any) -> None:
        sweep = [r for r in runs if r["role"] == "sweep"]
        for qk, marker in ((False, "x"), (True, "o")):
            rs = sorted((r for r in sweep if r["qk_norm"] == qk), key=lambda r: r["n_layer"])
            ax.plot([r["n_layer"] for r in rs], [r["unigram"] if r["diverged"] else r["val_loss"] for r in rs],
                    marker=marker, label=f"QK-norm {'on' if qk else 'off'}")
            for r in rs:
                if r["diverged"]:
                    ax.annotate("diverged", (r["n_layer"], r["unigram"]), fontsize=6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("attention-only layers")
        ax.set_ylabel("validation loss, nats/byte")
        ax.legend(fontsize=7)

    return [Figure("san-gaps", gaps, "Loss gaps of matched pairs with noise-floor intervals", prov),
            Figure("san-probes", probes, "Probe accuracies: context-grounded retrieval and parametric recall", prov),
            Figure("san-loss-by-position", by_position, "Validation loss by context position", prov),
            Figure("san-spectra", spectra_over_training, "Threshold ranks over training", prov),
            Figure("san-trainability", trainability, "Trainability by depth with and without QK-norm", prov)]


def write_part(part: Part, out_dir: Path, console: Any = None) -> list[Path]:
    """Tables (write_table: md, csv, tex) and figures (save_figure: png, pdf), each with provenance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from verification.report.figures import save_figure
    from verification.report.tables import print_table, write_table

    paths = []
    for t in part.tables:
        rows = t.frame.astype(object).where(t.frame.notna(), None).values.tolist()
        paths += list(write_table(rows, list(t.frame.columns), t.name, t.caption, t.provenance,
                                  Path(out_dir) / "tables").values())
        if console is not None and t.name in ("san-claims", "san-trainability"):
            print_table(console, rows, list(t.frame.columns), t.caption)
    for f in part.figures:
        fig, ax = plt.subplots(figsize=(5.5, 3.4))
        f.draw(ax)
        paths += save_figure(fig, Path(out_dir) / "figures", f.name, f.provenance)
        plt.close(fig)
    return paths
