"""SAN report: stored records -> tables and figures (never recomputed).

The table builders (runs, probes with their chance levels, claims, machine robustness, spectra,
trainability, rollout, bottleneck) and the figures (``draw(ax)`` callables over stored summaries,
deterministic, no timestamps: loss gaps with their paired t intervals, probe accuracies per role, loss by context position, threshold ranks over
training, trainability by depth, learning curves) are used by :func:`verification.san.report.part.paper_part`;
:func:`write_part` writes a part's tables (Markdown, CSV with provenance) and figures (PNG, PDF).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from verification.report.part import Figure, Part
from verification.san.checks.gates import GateKind, kinds
from verification.san.checks.measures import loss
from verification.san.findings import BottleneckRun, ClaimFinding, Findings, RolloutCell, mean as _mean

ROLE_ORDER = ("std", "san-depth", "san-flops", "san-params")
# a figure's legend names the roles; the tables (data) keep the keys
# (short: the legend sits beside the plot within the text width; the captions say "matched")
ROLE_LEGEND = {"std": "standard", "san-depth": "SAN, depth", "san-flops": "SAN, FLOPs", "san-params": "SAN, params"}
MATRICES = ("W_Q", "W_K", "QK", "W_V", "W_O", "OV")
PATH_NAMES = {"sdpa": "fused", "explicit": "explicit"}     # the numerical paths as the report names them


def runs_table(runs: list[dict]) -> pd.DataFrame:
    rows = [dict(run=r["key"], role=r["role"], seed=r["seed"], layers=r["n_layer"], qk_norm=r["qk_norm"],
                 params=r["params"], flops_per_token=r["flops"], val_loss=r["val_loss"],
                 val_loss_2se=2 * r["val_loss_se"], retrieval_acc=r["retrieval_acc"],
                 retrieval_above_chance=r.get("retrieval_above_chance"), recall_acc=r["recall_acc"],
                 recall_above_chance=r.get("recall_above_chance"), diverged=r["diverged"], trained=r["verdict"])
            for r in runs]
    return pd.DataFrame(rows)


def gate_table(f: Findings) -> pd.DataFrame:
    """The training gate per role (:func:`verification.san.checks.gates.learned`): runs that passed
    of all, mean and worst validation loss (nats per byte) against the gate (the bigram model's loss on
    the validation windows) and, beside it, the unigram and bigram (conditional) entropies of the
    training bytes; and the reference's positive control per probe
    (:func:`verification.san.checks.gates.probe_control`), and per probe and matched pair whether both
    roles are at ceiling (:func:`verification.san.checks.gates.probe_ceiling`: then its claim is not
    testable)."""
    rows = [dict(role=g.role, runs=g.runs, passed=g.passed, mean_val_loss=g.mean_loss, worst_val_loss=g.worst_loss,
                 unigram=g.unigram, gate=g.gate, bigram=g.bigram, control="") for g in f.role_gates]
    for c in f.controls:
        rows.append(dict(role="std", runs=c.seeds, passed=None, mean_val_loss=None, worst_val_loss=None,
                         unigram=None, gate=None, bigram=None,
                         control=f"{c.probe}: " + ("above chance" if c.failed is None else "not above chance")))
    for c in f.ceilings:
        if c.trained:
            rows.append(dict(role=" vs ".join(c.roles), runs=c.seeds * len(c.roles), passed=None, mean_val_loss=None,
                             worst_val_loss=None, unigram=None, gate=None, bigram=None,
                             control=f"{c.probe}: " + ("at ceiling for both roles (not testable)" if c.at_ceiling
                                                       else "not at ceiling")))
    return pd.DataFrame(rows)


def curves_table(runs: list[dict]) -> pd.DataFrame:
    """Losses at matched steps: per role and checkpoint (step 0 = initialisation), the validation
    loss (nats per byte; mean, min and max over seeds) and the probe accuracies (mean over seeds),
    read from each run's stored learning curve (``curve``, :func:`verification.san.checks.runs._curve`)."""
    acc: dict = {}
    for r in _pairs(runs):
        for step, c in (r.get("curve") or {}).items():
            acc.setdefault((r["role"], int(step)), []).append(c)
    rows = []
    for (role, step), cs in acc.items():
        ls = [c["val_loss"] for c in cs]
        rows.append(dict(role=role, step=step, seeds=len(cs), val_loss=_mean(ls), val_loss_min=min(ls),
                         val_loss_max=max(ls), retrieval_acc=_mean([c["retrieval_acc"] for c in cs]),
                         recall_acc=_mean([c["recall_acc"] for c in cs])))
    df = pd.DataFrame(rows)
    if len(df):
        df["order"] = df["role"].map({r: i for i, r in enumerate(ROLE_ORDER)})
        df = df.sort_values(["order", "step"]).drop(columns="order").reset_index(drop=True)
    return df


def steps_to(curve: dict, level: float) -> float:
    """The first step at which a run's validation loss reaches ``level`` (linear between the stored
    checkpoints of its learning curve); nan when it never does."""
    pts = sorted((int(s), c["val_loss"]) for s, c in curve.items())
    for (s0, a), (s1, b) in zip(pts, pts[1:]):
        if a <= level:
            return float(s0)
        if b <= level:
            return s0 + (s1 - s0) * (a - level) / (a - b)
    return float(pts[-1][0]) if pts and pts[-1][1] <= level else math.nan


def matched_loss_table(runs: list[dict], gate: float) -> pd.DataFrame:
    """Steps at matched loss: per role, the steps its runs need to reach each of two validation-loss
    levels, the training gate (``gate``, nats per byte) and the highest final mean loss of the four
    roles (a level every role reaches on average), mean over the seeds that reach it and how many do."""
    pairs = [r for r in _pairs(runs) if r.get("curve")]
    finals = [_mean([loss(r) for r in pairs if r["role"] == role]) for role in ROLE_ORDER]
    common = max((f for f in finals if math.isfinite(f)), default=math.nan)
    rows = []
    for name, level in (("training gate", gate), ("worst role's final loss", common)):
        for role in ROLE_ORDER:
            rs = [r for r in pairs if r["role"] == role]
            if not rs:
                continue
            st = [steps_to(r["curve"], level) for r in rs]
            hit = [v for v in st if math.isfinite(v)]
            rows.append(dict(level=name, loss=level, role=role, reached=f"{len(hit)}/{len(st)}",
                             steps_mean=_mean(hit), steps_min=min(hit) if hit else math.nan,
                             steps_max=max(hit) if hit else math.nan, steps_total=int(rs[0]["steps_done"])))
    return pd.DataFrame(rows)


def probes_table(runs: list[dict]) -> pd.DataFrame:
    """Per role and probe: mean accuracy over seeds, the probe's chance levels (from its own rows:
    copying a random context digit; always the most frequent answer) and the accuracy above the larger."""
    rows = []
    for role in ROLE_ORDER:
        rs = [r for r in _pairs(runs) if r["role"] == role]
        for kind in ("retrieval", "recall"):
            if rs:
                copy, major = _mean([r.get(f"{kind}_chance_copy") for r in rs]), _mean([r.get(f"{kind}_chance_majority") for r in rs])
                acc = _mean([r[f"{kind}_acc"] for r in rs])
                rows.append(dict(role=role, probe=kind, accuracy=acc, chance_copy=copy, chance_majority=major,
                                 above_chance=acc - max(copy, major), answers=int(rs[0][f"{kind}_n"]), seeds=len(rs)))
    return pd.DataFrame(rows)


def claims_table(claims: tuple[ClaimFinding, ...]) -> pd.DataFrame:
    """One row per claim: outcome (Holm-adjusted, robust across numerical paths), the test, the mean of
    the paired differences with its unadjusted t interval (``low``, ``high``) and the Bonferroni-adjusted
    one (``low_adjusted``, ``high_adjusted``, level 1 - alpha / m), df, raw and Holm p, minimum
    detectable effect, units, whether the test applies (no variation: not applicable), and for a
    decided claim how many leave-one-seed-pair-out drops keep its outcome (``fragile``: half or fewer;
    empty where leave-one-out was not run: three seed pairs or fewer)."""
    rows = []
    for c in claims:
        iv = c.decision.interval or (math.nan, math.nan)
        adj = c.interval_adjusted or (math.nan, math.nan)
        rows.append(dict(claim=c.claim.kind, instance=c.claim.instance, outcome=c.outcome, statistic=c.statistic,
                         low=iv[0], high=iv[1], low_adjusted=adj[0], high_adjusted=adj[1], unit=c.unit, n=c.n,
                         df=c.df, p=c.p, p_holm=c.decision.p, mde=c.mde, direction=c.direction, margin=c.margin,
                         noise_floor=c.noise, applicable=c.applicable, no_spread=c.no_spread,
                         drops_kept=f"{c.drops_kept}/{c.drops}" if c.drops else "", fragile=c.fragile,
                         robust=c.robust, gate=c.gate, paper=c.paper, sd=c.sd, family=c.family, alpha=c.alpha,
                         outcomes_by_path=dict(c.outcomes_by_path)))
    return pd.DataFrame(rows)


def paths_found(paths: dict) -> str:
    """What each numerical path found (``paths``: outcome by path), the fused one first; "" where they agree.

    >>> paths_found({"sdpa": "supported", "explicit": "inconclusive"})
    'supported on the fused path, inconclusive on the explicit path'
    """
    if len(set((paths or {}).values())) < 2:
        return ""
    return ", ".join(f"{o} on the {PATH_NAMES.get(k, k)} path" for k, o in sorted(paths.items(), reverse=True))


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def needs(c: ClaimFinding) -> str:
    """What a test of claim ``c`` needs: the seed pairs a test would need to detect its observed mean
    (:attr:`~verification.san.findings.ClaimFinding.pairs_needed`), or why it cannot be sized."""
    if c.gates:
        found = kinds(c.gates)
        return ("the roles it compares (the paper preset trains them)" if GateKind.UNTRAINED in found
                else "a harder probe: both roles answer every probe correctly, so more seed pairs cannot separate "
                     "them" if found == [GateKind.CEILING]
                else "models that pass the training gate and the probe's positive control")
    if not _finite(c.n) or c.n < 2:
        return "seed pairs (one seed: no spread to size a test)"
    if c.no_spread:
        return ("a harder probe or another measure: every seed pair gives the same value (no spread), "
                "so more seed pairs cannot separate the models")
    return (f"{c.pairs_needed} seed pairs" if c.pairs_needed is not None else
            "more than 100000 seed pairs: the observed mean is indistinguishable from 0")


def robustness_table(claims: tuple[ClaimFinding, ...]) -> pd.DataFrame:
    """Machine robustness: per claim and numerical path, the mean paired difference, the raw and the
    Holm-adjusted p, the Bonferroni-adjusted interval and the outcome that path alone gives; the
    paths that decide it, the difference between the paths' means (largest minus smallest), whether
    the outcomes agree, and the outcome reported (inconclusive where they differ)."""
    rows = []
    for c in claims:
        row = dict(claim=c.claim.kind, instance=c.claim.instance)
        for s in c.by_path:
            adj = s.interval_adjusted or (math.nan, math.nan)
            row.update({f"statistic_{s.path}": s.statistic, f"p_{s.path}": s.p, f"p_holm_{s.path}": s.p_holm,
                        f"low_adjusted_{s.path}": adj[0], f"high_adjusted_{s.path}": adj[1],
                        f"outcome_{s.path}": s.outcome})
        row.update(decided_by=",".join(c.decided_by), path_difference=c.path_difference, same=bool(c.robust),
                   reported=c.outcome)
        rows.append(row)
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


def rollout_table(cells: tuple[RolloutCell, ...]) -> pd.DataFrame:
    """Median delta(R_l) and median chain ratio delta(R_l) / prod delta(Ahat) per role and layer."""
    return pd.DataFrame([dict(role=c.role, variant=c.variant, layer=c.layer, delta_R=c.delta_R,
                              chain_ratio=c.chain_ratio, chain_tight=c.chain_tight, n=c.n) for c in cells])


def bottleneck_table(runs: tuple[BottleneckRun, ...]) -> pd.DataFrame:
    return pd.DataFrame([dict(run=b.run, verdict=b.verdict, float_residual=b.float_residual, exact=b.exact,
                              monomials=b.monomials, c_min=b.c_min, c_max=b.c_max) for b in runs])


def _pairs(runs: list[dict]) -> list[dict]:
    return [r for r in runs if r["role"] != "sweep"]


def _beside(ax: Any) -> None:
    """The legend beside the plot (at the caption's font size it would cover the data), the figure
    widened to the text width for it."""
    ax.figure.set_size_inches(4.9, 2.9)          # with the legend beside it: the text width
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)


def figures(runs: list[dict], claims: Any, spectra: Any, prov: str) -> list[Figure]:
    pair_runs = _pairs(runs)

    def gaps(ax: Any) -> None:
        g = claims[(claims["claim"] == "gap") & claims["instance"].isin(["depth", "flops", "params"])]
        g = g[np.isfinite(g["statistic"].astype(float))]       # a pair this preset does not train: no bar, no tick
        x = np.arange(len(g))
        ax.bar(x, g["statistic"], color="0.6")
        ax.errorbar(x, g["statistic"], yerr=[g["statistic"] - g["low"], g["high"] - g["statistic"]], fmt="none",
                    ecolor="k", capsize=4)
        if len(g):
            nf = float(g["noise_floor"].iloc[0])
            ax.axhspan(-nf, nf, color="tab:blue", alpha=0.15, label="seed-to-seed noise floor")
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(x, [{"flops": "FLOPs", "params": "parameters"}.get(k, k) for k in g["instance"]])
        ax.set_xlabel("matched for")
        ax.set_ylabel("loss gap SAN - standard\n(nats per byte)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)   # below: never over a bar

    def probes(ax: Any) -> None:
        w = 0.38
        for i, kind in enumerate(("retrieval", "recall")):
            vals = [np.mean([r[f"{kind}_acc"] for r in pair_runs if r["role"] == role] or [math.nan])
                    for role in ROLE_ORDER]
            ax.bar(np.arange(len(ROLE_ORDER)) + (i - 0.5) * w, vals, w, label=f"{kind} (context)" if kind == "retrieval"
                   else "recall (weights)")
        for kind, color in (("retrieval", "tab:blue"), ("recall", "tab:orange")):
            levels = [max(r.get(f"{kind}_chance_copy", 0.0), r.get(f"{kind}_chance_majority", 0.0)) for r in pair_runs]
            if levels:
                ax.axhline(float(np.mean(levels)), color=color, ls="--", lw=0.8, label=f"{kind} chance (larger)")
        ax.set_xticks(np.arange(len(ROLE_ORDER)), [ROLE_LEGEND[r].replace(", ", "\n") for r in ROLE_ORDER])
        ax.set_ylabel("accuracy at the answer byte")
        _beside(ax)

    def by_position(ax: Any) -> None:
        for role in ROLE_ORDER:
            curves = [r["loss_by_pos"] for r in pair_runs if r["role"] == role]
            if curves:
                ax.plot(np.mean(curves, axis=0), label=ROLE_LEGEND.get(role, role))
        ax.set_xlabel("position in the context (bytes)")
        ax.set_ylabel("validation loss\n(nats per byte)")
        _beside(ax)

    def spectra_over_training(ax: Any) -> None:
        for role, style in (("std", "-"), ("san-depth", "--")):
            for m, color in (("W_Q", "tab:blue"), ("W_K", "tab:cyan"), ("W_V", "tab:orange"), ("W_O", "tab:red")):
                s = spectra[(spectra["role"] == role) & (spectra["matrix"] == m)] if len(spectra) else spectra
                if len(s):
                    ax.plot(s["fraction"], s["threshold_rank"], style, color=color, marker="o", ms=3,
                            label=f"{ROLE_LEGEND.get(role, role)} ${m}$")
        ax.set_xlabel("fraction of training")
        ax.set_ylabel("threshold rank")
        _beside(ax)

    def learning_curves(ax: Any) -> None:
        finals = []
        for role, color in zip(ROLE_ORDER, ("k", "tab:blue", "tab:orange", "tab:red")):
            rs = [r for r in pair_runs if r["role"] == role and r.get("curve")]
            if not rs:
                continue
            steps = sorted({int(s) for r in rs for s in r["curve"]})
            vals = np.array([[r["curve"][str(s)]["val_loss"] if str(s) in r["curve"] else np.nan for s in steps]
                             for r in rs])
            ax.plot(steps, np.nanmean(vals, axis=0), color=color, marker="o", ms=3, label=ROLE_LEGEND.get(role, role))
            finals.append(float(np.nanmax(vals[:, -1])))
            ax.fill_between(steps, np.nanmin(vals, axis=0), np.nanmax(vals, axis=0), color=color, alpha=0.12)
        if pair_runs:
            ax.axhline(pair_runs[0]["unigram"], color="0.4", ls="--", lw=0.8, label="unigram entropy")
            if pair_runs[0].get("bigram") is not None:
                ax.axhline(pair_runs[0]["bigram"], color="0.4", ls=":", lw=0.8, label="bigram entropy")
        if finals:              # the initial loss (ln 256) would flatten the curves: show from the worst final + 1
            ax.set_ylim(top=min(ax.get_ylim()[1], max(finals) + 1.0))
        ax.set_xlabel("training step")
        ax.set_ylabel("validation loss\n(nats per byte)")
        _beside(ax)

    def trainability(ax: Any) -> None:
        sweep = [r for r in runs if r["role"] == "sweep"]
        for qk, marker in ((False, "x"), (True, "o")):
            rs = sorted((r for r in sweep if r["qk_norm"] == qk), key=lambda r: r["n_layer"])
            ax.plot([r["n_layer"] for r in rs], [r["unigram"] if r["diverged"] else r["val_loss"] for r in rs],
                    marker=marker, label=f"QK-norm {'on' if qk else 'off'}")
            for r in rs:
                if r["diverged"]:
                    ax.annotate("diverged", (r["n_layer"], r["unigram"]))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("attention-only layers")
        ax.set_ylabel("validation loss\n(nats per byte)")
        ax.legend(loc="best", frameon=False)

    return [Figure("san-learning-curves", learning_curves, "Learning curves: validation loss against training "
                   "step per role (mean over seeds, band: range over seeds), with the unigram and bigram entropies", prov),
            Figure("san-gaps", gaps, "Loss gaps of matched pairs with paired t intervals", prov),
            Figure("san-probes", probes, "Probe accuracies: context-grounded retrieval and parametric recall", prov),
            Figure("san-loss-by-position", by_position, "Validation loss by context position", prov),
            Figure("san-spectra", spectra_over_training, "Threshold ranks over training", prov),
            Figure("san-trainability", trainability, "Trainability by depth with and without QK-norm", prov)]


def write_part(part: Part, out_dir: Path, console: Any = None) -> list[Path]:
    """Tables (write_table: md and csv) and figures (save_figure: png and pdf), each with provenance."""
    from verification.report.figures import save_figure    # first: it quiets matplotlib's log
    from verification.report.aggregate import pyplot
    from verification.report.tables import print_table, write_table

    plt = pyplot()

    paths = []
    for t in part.tables:
        rows = t.frame.astype(object).where(t.frame.notna(), None).values.tolist()
        paths += list(write_table(rows, list(t.frame.columns), t.name, t.caption, t.provenance,
                                  Path(out_dir) / "tables").values())
        if console is not None and t.name in ("san-claims", "san-report-paths", "san-probes", "san-trainability"):
            print_table(console, rows, list(t.frame.columns), t.caption)
    for f in part.figures:
        fig, ax = plt.subplots(figsize=(5.5, 3.4))
        f.draw(ax)
        paths += save_figure(fig, Path(out_dir) / "figures", f.name, f.provenance)
        plt.close(fig)
    return paths
