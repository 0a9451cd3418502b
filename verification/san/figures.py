"""SAN figures: ``draw(ax)`` callables over stored summaries (deterministic, no timestamps).

Loss gaps with their noise-floor intervals, probe accuracies per role, loss by context position,
threshold ranks over training, trainability by depth.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from verification.report.paper import Figure

ROLES = ("std", "san-depth", "san-flops", "san-params")


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
            vals = [np.mean([r[f"{kind}_acc"] for r in pair_runs if r["role"] == role] or [math.nan]) for role in ROLES]
            ax.bar(np.arange(len(ROLES)) + (i - 0.5) * w, vals, w, label=f"{kind} (context)" if kind == "retrieval"
                   else "recall (weights)")
        ax.set_xticks(np.arange(len(ROLES)), ROLES)
        ax.set_ylabel("accuracy at the answer byte")
        ax.legend(fontsize=7)

    def by_position(ax: Any) -> None:
        for role in ROLES:
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
