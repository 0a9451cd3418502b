"""Tables and figures of the trained-model campaign (verification.trained.checks), from stored records only.

Per model: ``trained_d1_<model>`` (share of inputs where D1's equality holds, per layer, all vs
content tokens [vs first position dropped], 95% Wilson intervals, and the share through the first
token), ``trained_heads_<model>`` (layer x head shares), ``trained_rollout_<model>`` (medians of
delta(R_l), prod delta(Ahat), prod (1+delta(A))/2 and their ratios, D2 chain verdicts),
``trained_compare_<model>`` (Birkhoff and softmax-logit comparison bounds); figures
``trained_heatmap_<model>``, ``trained_slack_<model>``, ``trained_rollout_<model>`` (PNG + PDF).
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

import numpy as np

from verification.report.aggregate import median
from verification.report.figures import save_figure
from verification.report.stats import wilson
from verification.report.tables import print_table, write_table

VARIANT_TITLES = {"all": "all tokens", "content": "content tokens", "nofirst": "first position dropped"}


def share_cell(k: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n:.2f} [{lo:.2f}, {hi:.2f}]"


def slug(name: str) -> str:
    """File-name form of a model id (ids carry no path: numerics.sources.models.load_model)."""
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


def collect(store: Any, campaign: str, inputs: Optional[set]) -> dict:
    """Keep the rows of the inputs ``{(input id, text hash)}`` (None: all) and group them:
    layer rows [variant][layer] -> list, head rows [variant][(l, h)] -> list."""
    return collect_records(store.records(campaign=campaign), inputs)


def collect_records(records: Any, inputs: Optional[set]) -> dict:
    """:func:`collect` on records already read from the store."""
    layer, head, roll = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list)), \
        defaultdict(lambda: defaultdict(list))
    seen = set()
    for r in records:
        p = r["provenance"]
        if inputs is not None and (p["input"], p["text_sha"]) not in inputs:
            continue
        seen.add((p["input"], p.get("text_sha")))
        v, l = p["variant"], p["layer"]
        if r["theorem"] == "dobrushin.product":
            roll[v][l].append(r)
        elif p.get("head") is None:
            layer[v][l].append(r)
        else:
            head[v][(l, p["head"])].append(r)
    return dict(layer=layer, head=head, roll=roll, inputs=seen)


def _provenance(model: Any, campaign: str, n_inputs: int, seed: int) -> str:
    from numerics.sources.models import QUANTISED_NOTE

    q = f"; {QUANTISED_NOTE}" if model.quantised else ""
    return (f"model {model.name} (files sha256 {model.fingerprint}){q}; campaign {campaign}; {n_inputs} inputs; "
            f"max {model.max_tokens} tokens; rollout residual 0.5, mean head fusion; seed {seed} "
            "(no random draws); D1 verdicts exact (rational), shares with 95% Wilson intervals")


def d1_table(data: dict, model: Any) -> tuple[list, list]:
    variants = [v for v in ("all", "content", "nofirst") if v in data["layer"]]
    cols = ["layer"] + [f"D1 tight, {VARIANT_TITLES[v]}" for v in variants]
    cols += [f"tight only via token 0 ({v})" for v in variants] + [f"median slack ({v})" for v in variants]
    rows = []
    for l in sorted(data["layer"]["all"]):
        row: list = [l]
        for v in variants:
            rs = data["layer"][v].get(l, [])
            row.append(share_cell(sum(r["verdict"] == "tight" for r in rs), len(rs)))
        for v in variants:
            rs = [r for r in data["layer"][v].get(l, []) if r["verdict"] == "tight"]
            k = sum(bool(r["extra"].get("through_first")) and not r["extra"].get("through_other") for r in rs)
            row.append(f"{k}/{len(rs)}" if rs else "-")
        for v in variants:
            row.append(median(r["slack"] for r in data["layer"][v].get(l, [])))
        rows.append(row)
    return rows, cols


def heads_shares(data: dict, variant: str) -> np.ndarray:
    """(L, H) share of inputs with D1 equality per head."""
    cells = data["head"][variant]
    if not cells:
        return np.zeros((0, 0))
    L = 1 + max(l for l, _ in cells)
    H = 1 + max(h for _, h in cells)
    out = np.full((L, H), np.nan)
    for (l, h), rs in cells.items():
        out[l, h] = sum(r["verdict"] == "tight" for r in rs) / len(rs)
    return out


def rollout_table(data: dict, variant: str = "all") -> tuple[list, list]:
    cols = ["layer", "median delta(A)", "median delta(R_l)", "median prod delta(Ahat)",
            "median prod (1+delta(A))/2", "median ratio R/prod", "ratio undecided",
            "median ratio prod/factor", "chain tight", "D2 step tight", "D2 undecided"]
    rows = []
    for l in sorted(data["roll"][variant]):
        rs, ls = data["roll"][variant][l], data["layer"][variant].get(l, [])
        ratios = [r["extra"].get("ratio_R") for r in rs]
        rows.append([l, median(r["extra"].get("delta") for r in ls), median(r["value"] for r in rs),
                     median(r["bound"] for r in rs), median(r["extra"].get("prod_factor_bound") for r in rs),
                     median(ratios), f"{sum(x is None for x in ratios)}/{len(rs)}",
                     median(r["extra"].get("ratio_factor") for r in rs),
                     share_cell(sum(r["verdict"] == "tight" for r in rs), len(rs)),
                     share_cell(sum(r["extra"].get("d2_step") == "tight" for r in rs), len(rs)),
                     f"{sum(r['extra'].get('d2_step') == 'undecided' for r in rs)}/{len(rs)}"])
    return rows, cols


def compare_table(data: dict) -> tuple[list, list]:
    cols = ["layer", "median delta(A)", "median (1+delta(A))/2", "median Birkhoff tau_B(A)",
            "tau_B finite (< 1)", "median mean-head softmax bound", "inputs with softmax bound"]
    rows = []
    for l in sorted(data["layer"]["all"]):
        rs = data["layer"]["all"][l]
        tb = [r["extra"].get("birkhoff") for r in rs]
        sb = [r["extra"].get("softmax_bound") for r in rs if r["extra"].get("softmax_bound") is not None]
        rows.append([l, median(r["extra"].get("delta") for r in rs), median(r["bound"] for r in rs),
                     median(tb), f"{sum(x is not None and x < 1 for x in tb)}/{len(rs)}",
                     median(sb), f"{len(sb)}/{len(rs)}"])
    return rows, cols




def figures(data: dict, model: Any, fig_dir: Path, s: str, prov: str) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    q = " (4-bit quantised weights)" if model.quantised else ""
    paths: list[Path] = []
    variants = [v for v in ("all", "content", "nofirst") if v in data["head"]]
    fig, axes = plt.subplots(1, len(variants), figsize=(3.2 * len(variants) + 1, 4.5), squeeze=False)
    for ax, v in zip(axes[0], variants):
        im = ax.imshow(heads_shares(data, v), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_title(VARIANT_TITLES[v], fontsize=9)
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.colorbar(im, ax=axes[0].tolist(), label="share of inputs with D1 equality")
    fig.suptitle(f"{model.name}{q}: D1 equality per head", fontsize=10)
    paths += save_figure(fig, fig_dir, f"trained_heatmap_{s}", prov)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for v in variants:
        sl = np.array([r["slack"] for rs in data["layer"][v].values() for r in rs], dtype=float)
        pos = sl[sl > 0]
        label = f"{VARIANT_TITLES[v]}: {np.sum(sl == 0)}/{sl.size} exactly 0"
        ax.hist(np.log10(pos) if pos.size else [], bins=30, histtype="step", label=label)
    ax.set_xlabel("log10 slack of D1 on head-averaged A (slack > 0 only)")
    ax.set_ylabel("layer x input count")
    ax.legend(fontsize=7)
    ax.set_title(f"{model.name}{q}: D1 slack", fontsize=10)
    fig.tight_layout()
    paths += save_figure(fig, fig_dir, f"trained_slack_{s}", prov)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.8))
    layers = sorted(data["roll"]["all"])
    for key, label, style in (("value", "delta(R_l)", "-"), ("bound", "prod delta(Ahat)", "-"),
                              ("prod_factor_bound", "prod (1+delta(A))/2", "--")):
        vals = [[(r[key] if key in r else r["extra"].get(key)) for r in data["roll"]["all"][l]] for l in layers]
        vals = [np.array([x for x in v if x is not None and x > 0], dtype=float) for v in vals]
        med = [np.median(v) if v.size else np.nan for v in vals]
        lo = [np.quantile(v, 0.25) if v.size else np.nan for v in vals]
        hi = [np.quantile(v, 0.75) if v.size else np.nan for v in vals]
        xs = [l + 1 for l in layers]
        ax.plot(xs, med, style, marker=".", label=label)
        ax.fill_between(xs, lo, hi, alpha=0.2)
    ax.set_yscale("log")
    ax.set_xlabel("depth l")
    ax.set_ylabel("median over inputs (IQR band)")
    ax.legend(fontsize=8)
    ax.set_title(f"{model.name}{q}: rollout bounds, all tokens", fontsize=10)
    fig.tight_layout()
    paths += save_figure(fig, fig_dir, f"trained_rollout_{s}", prov)
    plt.close(fig)
    return paths


def report_model(store: Any, campaign: str, model: Any, out_dir: Any, console: Any,
                 inputs: Optional[set] = None, seed: int = 0) -> dict:
    """Write every table and figure of one model's campaign; return {name: paths}."""
    out_dir = Path(out_dir)
    data = collect(store, campaign, inputs)
    if not data["layer"]:
        raise ValueError(f"no stored records for campaign {campaign!r}")
    s, n = slug(model.name), len(data["inputs"])
    prov = _provenance(model, campaign, n, seed)
    q = " 4-bit QUANTISED weights (GGUF): the quantised model's attention." if model.quantised else ""
    tables = out_dir / "tables"
    written: dict = {}
    rows, cols = d1_table(data, model)
    allrec = [r for part in ("layer", "head") for cells in data[part].values() for rs in cells.values() for r in rs]
    n_exact = sum(bool(r["extra"].get("exact")) for r in allrec)
    cap = (f"{model.name}: share of {n} inputs where Theorem D1 holds with equality (exact), per layer, "
           f"head-averaged attention. The float filter decided {len(allrec) - n_exact} of {len(allrec)} "
           f"verdicts (layer and head); {n_exact} needed the exact rational path.{q}")
    if model.causal:
        cap += (" Causal attention forces equality: row 0 is one-hot, so delta(A) = max_j (1 - A_j0) is "
                "always attained by a mutually self-dominant pair (0, j) (d_ij <= max(d_0i, d_0j)); "
                "the same holds after dropping any prefix, hence 'tight' is structural here.")
    written["d1"] = write_table(rows, cols, f"trained_d1_{s}", cap, prov, tables)
    print_table(console, rows, cols, cap)
    for v in ("all", "content"):
        sh = heads_shares(data, v)
        hrows = [[l] + [None if math.isnan(x) else round(float(x), 4) for x in sh[l]] for l in range(sh.shape[0])]
        written[f"heads_{v}"] = write_table(
            hrows, ["layer"] + [f"h{h}" for h in range(sh.shape[1])], f"trained_heads_{v}_{s}",
            f"{model.name}: per-head share of {n} inputs with D1 equality ({VARIANT_TITLES[v]}).{q}", prov, tables)
    rows, cols = rollout_table(data)
    cap = f"{model.name}: rollout bounds per layer, all tokens, medians over {n} inputs.{q}"
    written["rollout"] = write_table(rows, cols, f"trained_rollout_{s}", cap, prov, tables)
    print_table(console, rows, cols, cap)
    rows, cols = compare_table(data)
    cap = (f"{model.name}: comparison bounds on delta(A) of head-averaged attention (Birkhoff = "
           f"softmax-logit bound per head; trivial (1) wherever A has zeros, e.g. causal masks).{q}")
    written["compare"] = write_table(rows, cols, f"trained_compare_{s}", cap, prov, tables)
    written["figures"] = figures(data, model, out_dir / "figures", s, prov)
    return written
