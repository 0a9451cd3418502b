"""SAN report: stored records -> tables, figures and the macros of the paper (never recomputed).

:func:`paper_part` builds the family's :class:`verification.report.paper.Part` from the store;
:func:`write_part` writes its tables (Markdown, CSV, LaTeX with provenance) and figures (PNG, PDF).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from verification.report.paper import MissingCampaign, Part, Table
from verification.san.checks import PRESETS, campaign_name
from verification.san.claims import claims_chunk, loss, summaries

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


def paper_part(store: Any, seed: int = 0, full: bool = False, preset: str | None = None) -> Part:
    """The SAN family's tables, figures and macros (preset ``paper`` with ``full``, else ``quick``)."""
    from verification.san.figures import figures

    name = preset or ("paper" if full else "quick")
    camp = campaign_name(PRESETS[name], seed)
    command = f"attnbounds san --preset {name} --seed {seed}"
    runs = summaries(store, camp)
    if not runs:
        raise MissingCampaign(camp, command)
    claims_camp = camp.replace("san-", "san-claims-", 1)
    chunk = claims_chunk(runs)           # the claims decided from exactly these runs, this claims version
    claims = [r for r in store.records(claims_camp) if r["chunk"] == chunk]
    if not claims:
        raise MissingCampaign(claims_camp, command)
    prov = (f"campaigns {camp}, {claims_camp}; preset {name}; seeds {sorted({r['seed'] for r in runs})}; "
            f"byte-level pydoc_data.topics prose + retrieval/recall probes")
    part = Part(family="san", commands=[command])
    runs_df, claims_df = runs_table(runs), claims_table(claims)
    scale = f"tiny scale: {runs_df['params'].min():,}-{runs_df['params'].max():,} non-embedding parameters"
    part.tables += [
        Table("san-runs", runs_df, f"SAN runs ({scale}): validation loss (nats per byte), probe accuracies", prov),
        Table("san-claims", claims_df, "The paper's claims at tiny scale: outcome, statistic, interval from "
              "the seed-to-seed noise floor (mean +- 2 max(noise, sd)/sqrt(n))", prov),
        Table("san-spectra", spectra_table(runs), "Effective ranks over training (mean over seeds and layers)", prov),
        Table("san-trainability", trainability_table(runs), "Trainability by depth, with and without QK-norm "
              "(a diverged run counts at the unigram entropy)", prov),
        Table("san-rollout", rollout_table(store, camp), "Rollout on the trained decoders: delta(R_l) and the "
              "D2 chain ratio delta(R_l)/prod delta(Ahat) (D1 is structurally tight for causal attention)", prov),
        Table("san-bottleneck", bottleneck_table(store, camp), "Scalar-bottleneck lemma on the trained "
              "attention-only weights at sequence length 1", prov)]
    part.figures += figures(runs, claims_df, spectra_table(runs), prov)
    for _, c in claims_df.iterrows():
        part.macro(c["statistic"], "San", c["claim"], c["instance"])
        part.macro(c["outcome"], "San", c["claim"], c["instance"], "outcome")
    _summary_macros(part, runs, runs_df, claims_df, rollout_table(store, camp), bottleneck_table(store, camp))
    return part


def _summary_macros(part: Part, runs: list, runs_df: Any, claims_df: Any, roll: Any, bott: Any) -> None:
    """Preset-independent numbers the prose quotes (the per-claim macros are set by the caller)."""
    gaps = claims_df[claims_df["claim"] == "gap"]
    if len(gaps):
        part.macro(float(gaps["noise_floor"].iloc[0]), "San", "noise floor")
    pairs = runs_df[runs_df["role"] != "sweep"]
    part.macro(int(runs_df["params"].min()), "San", "min params")
    part.macro(int(runs_df["params"].max()), "San", "max params")
    part.macro(int(pairs["seed"].nunique()), "San", "seed pairs")
    part.macro(int(runs[0]["steps_done"]) if runs else 0, "San", "steps")
    for role in ROLE_ORDER:
        sub = pairs[pairs["role"] == role]
        part.macro(float(sub["val_loss"].mean()), "San", "loss", role)
        for kind in ("retrieval", "recall"):
            part.macro(float(sub[f"{kind}_acc"].mean()), "San", kind, "acc", role)
    qk = claims_df[claims_df["claim"] == "qk_norm"]
    if len(qk):
        deepest = max(qk["instance"], key=lambda s: int(s[1:]))
        row = qk[qk["instance"] == deepest].iloc[0]
        part.macro(int(deepest[1:]), "San", "qk norm deepest layers")
        part.macro(float(row["statistic"]), "San", "qk norm deepest")
        part.macro(str(row["outcome"]), "San", "qk norm deepest outcome")
    part.macro(int((bott["verdict"] == "tight").sum()) if len(bott) else 0, "San", "bottleneck tight")
    part.macro(int(len(bott)), "San", "bottleneck runs")
    if len(roll):
        last = roll[(roll["variant"] == "all")]
        for role in ("std", "san-params"):
            sub = last[last["role"] == role]
            if len(sub):
                top = sub[sub["layer"] == sub["layer"].max()].iloc[0]
                part.macro(float(top["chain_ratio"]), "San", "chain ratio last", role)
                part.macro(float(top["delta_R"]), "San", "delta R last", role)


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
