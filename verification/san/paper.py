"""The SAN family's part of the paper: the tables, figures and macros of one preset's campaign and
its claims, read from the store only (the builders are :mod:`verification.san.report`)."""
from __future__ import annotations

from typing import Any

from verification.report.part import MissingCampaign, Part, Table
from verification.san.checks.claims import claims_chunk, summaries
from verification.san.checks.presets import PRESETS, campaign_name
from verification.san.report import (ROLE_ORDER, bottleneck_table, claims_table, figures, rollout_table, runs_table,
                                     spectra_table, trainability_table)


def paper_part(store: Any, seed: int = 0, full: bool = False, preset: str | None = None) -> Part:
    """The SAN family's tables, figures and macros (preset ``paper`` with ``full``, else ``quick``)."""
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
    made = dict(campaigns=(camp, claims_camp), command=command)      # every table: its campaigns, its command
    part.tables += [
        Table("san-runs", runs_df, f"SAN runs ({scale}): validation loss (nats per byte), probe accuracies", prov,
              **made),
        Table("san-claims", claims_df, "The paper's claims at tiny scale: outcome, statistic, interval from "
              "the seed-to-seed noise floor (mean +- 2 max(noise, sd)/sqrt(n))", prov, **made),
        Table("san-spectra", spectra_table(runs), "Effective ranks over training (mean over seeds and layers)", prov,
              **made),
        Table("san-trainability", trainability_table(runs), "Trainability by depth, with and without QK-norm "
              "(a diverged run counts at the unigram entropy)", prov, **made),
        Table("san-rollout", rollout_table(store, camp), "Rollout on the trained decoders: delta(R_l) and the "
              "D2 chain ratio delta(R_l)/prod delta(Ahat) (D1 is structurally tight for causal attention)", prov,
              **made),
        Table("san-bottleneck", bottleneck_table(store, camp), "Scalar-bottleneck lemma on the trained "
              "attention-only weights at sequence length 1", prov, **made)]
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
