"""Tables and figures of the trained-model campaign (verification.trained.checks), from stored records only.

Per model, each table under the name the paper gives it: ``trained-d1-<model>`` (share of inputs
where D1's equality holds, per layer, all vs content tokens [vs first position dropped], 95% Wilson
intervals, and the share through the first token), ``trained-heads-<model>`` and
``trained-heads-content-<model>`` (layer x head shares), ``trained-rollout-<model>`` (medians of
delta(R_l), prod delta(Ahat), prod (1+delta(A))/2 and their ratios, D2 chain verdicts),
``trained-compare-<model>`` (Birkhoff and softmax-logit comparison bounds), ``trained-sources-<model>``
(per source and pooled: D1 shares beside random matrices of the same token counts; its column "D1
tight, layer with the lowest share" names that layer), ``trained-float-<model>`` (what a float test
of D1 at tolerance 0 gets wrong against the exact verdicts, the paper's ``trained-float`` for this
model alone: :func:`float_rows`); medians of
ratios and slacks with 95% percentile-bootstrap intervals (fixed seed); figures
``trained_heatmap_<model>``, ``trained_slack_<model>``, ``trained_rollout_<model>`` (PNG + PDF).

A token set needs two tokens (D1 needs n >= 2): an input that keeps fewer (a text the tokenizer
turns into special tokens only, such as English through a residue vocabulary, where every letter is
``[UNK]``) has no records of it. When no input keeps one, the token set has no column, no
``trained-heads-content-<model>`` table and no figure panel, and a one-line note says so on the
console and in the D1 table's caption (:func:`variant_notes`); so does a note counting the inputs
left out when only some are.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

import numpy as np

from theory.errors import InvalidInput
from verification.measure.attention import float_key
from verification.stats import median_interval
from verification.measure.baselines import FAMILIES, baseline_share, baseline_slots, read_baselines
from verification.report.aggregate import median
from verification.report.figures import save_figure
from verification.stats import BOOTSTRAP_RESAMPLES, cluster_bootstrap, share_text, wilson
from verification.report.tables import print_table, write_table

VARIANT_TITLES = {"all": "all tokens", "content": "content tokens", "nofirst": "first position dropped"}


def interval_text(lo: float, hi: float) -> str:
    """``[lo, hi]`` with two decimals, or, where the upper end is below 0.005 (two decimals would print
    [0.00, 0.00], an interval that hides its width), one significant digit.

    >>> interval_text(0.4312, 0.4571), interval_text(1.9e-05, 0.0006)
    ('[0.43, 0.46]', '[2e-05, 0.0006]')
    """
    if hi < 0.005:
        return f"[{lo:.1g}, {hi:.1g}]"
    return f"[{lo:.2f}, {hi:.2f}]"


def share_cell(k: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n:.2f} {interval_text(lo, hi)}"


def wilson_cell(k: int, n: int) -> str:
    """``[lo, hi]``: the 95% Wilson interval of k of n, "-" for n = 0."""
    lo, hi = wilson(k, n)
    return interval_text(lo, hi) if n else "-"


BOOTSTRAP_SEED = 0      # the cluster bootstrap's generator (numpy default_rng(BOOTSTRAP_SEED))
CLUSTER_NOTE = (f"cluster bootstrap over inputs, the input being the unit: {BOOTSTRAP_RESAMPLES} resamples of the "
                f"inputs, percentile interval, seed {BOOTSTRAP_SEED}, widened to the Wilson interval of the verdicts "
                "where that is wider (few inputs: the bootstrap understates the spread); where every input is all hits "
                "or all misses, the Wilson interval of the inputs")


def input_clusters(records: Any, hit: Any) -> tuple[list[int], list[int]]:
    """Per input (provenance input id and text hash, sorted): (hits, verdicts) of ``records``, a
    record counting as a hit when ``hit(record)``.

    >>> rs = [{"provenance": {"input": a, "text_sha": "s"}, "verdict": v} for a, v in (("x", "tight"), ("x", "holds"), ("y", "tight"))]
    >>> input_clusters(rs, lambda r: r["verdict"] == "tight")
    ([1, 1], [2, 1])
    """
    by: dict = {}
    for r in records:
        p = r["provenance"]
        key = (str(p["input"]), str(p.get("text_sha")))
        k, n = by.get(key, (0, 0))
        by[key] = (k + bool(hit(r)), n + 1)
    keys = sorted(by)
    return [by[k][0] for k in keys], [by[k][1] for k in keys]


def pooled_interval(k: Any, n: Any, bootstrap_seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """The 95% interval of a share pooled over clusters (``k[c]`` of ``n[c]`` hits in cluster c): the
    cluster bootstrap (:func:`verification.stats.cluster_bootstrap`), widened to the Wilson
    interval of all the verdicts where that is wider: with few clusters the bootstrap's resamples
    understate the spread, and independent verdicts are the most favourable case clustering allows.

    >>> (lo, hi), (wlo, whi) = pooled_interval([1, 0, 1, 0], [1, 1, 1, 1]), wilson(2, 4)
    >>> lo <= wlo and hi >= whi                          # never narrower than the Wilson interval of the verdicts
    True
    """
    lo, hi = cluster_bootstrap(k, n, bootstrap_seed)
    wlo, whi = wilson(int(sum(k)), int(sum(n)))
    return (min(lo, wlo), max(hi, whi))


def cluster_cell(records: Any, hit: Any, bootstrap_seed: int = BOOTSTRAP_SEED) -> str:
    """``[lo, hi]``: the 95% interval over inputs of the pooled share of hits (:func:`pooled_interval`),
    "-" without records."""
    k, n = input_clusters(records, hit)
    if not n:
        return "-"
    lo, hi = pooled_interval(k, n, bootstrap_seed)
    return interval_text(lo, hi)


def tight(r: dict) -> bool:
    return r["verdict"] == "tight"


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
    seen, source = set(), {}
    for r in records:
        p = r["provenance"]
        if inputs is not None and (p["input"], p["text_sha"]) not in inputs:
            continue
        seen.add((p["input"], p.get("text_sha")))
        source[(p["input"], p.get("text_sha"))] = Path(p.get("source") or "").name   # a file's name, never its path
        v, l = p["variant"], p["layer"]
        if r["theorem"] == "dobrushin.product":
            roll[v][l].append(r)
        elif p.get("head") is None:
            layer[v][l].append(r)
        else:
            head[v][(l, p["head"])].append(r)
    return dict(layer=layer, head=head, roll=roll, inputs=seen, source=source)


def interval_cell(values: Any, bootstrap_seed: int = 0) -> str:
    """``median [lo, hi]`` (:func:`median_interval`), "-" without values."""
    m, (lo, hi) = median_interval(values, bootstrap_seed)
    if m is None:
        return "-"
    return f"{m:.3g}" if math.isnan(lo) else f"{m:.3g} [{lo:.3g}, {hi:.3g}]"


def sizes_of(data: dict) -> dict:
    """``{variant: {(input, text hash): kept tokens n}}``, from the layer-0 head-mean records."""
    return {v: {(r["provenance"]["input"], r["provenance"]["text_sha"]): int(r["provenance"]["n"])
                for r in cells.get(0, [])} for v, cells in data["layer"].items()}


def source_order(data: dict) -> list[str]:
    from numerics.sources.corpus import SOURCES

    found = set(data["source"].values())
    return [s for s in SOURCES if s in found] + sorted(found - set(SOURCES))


LOWEST_SHARE = "D1 tight, layer with the lowest share"      # source_table's column: "layer l: k/n = ..."


def source_table(data: dict, base: dict, families: tuple) -> tuple[list, list]:
    """Per source and pooled, per token set: inputs, median tokens, the D1 share (95% Wilson) in the
    layer where it is lowest, in the last layer, its range over the other layers, and beside them
    the share for random matrices of the same sizes (:func:`verification.measure.baselines.baseline_share`)."""
    slots = baseline_slots(sizes_of(data))
    variants = [v for v in ("all", "content", "nofirst") if v in data["layer"]]
    L = len(data["layer"]["all"])
    cols = ["source", "token set", "inputs", "median tokens", LOWEST_SHARE, "D1 tight, last layer",
            "D1 tight, layers before last (range)"] + [f"random {f}, matched n" for f in families]
    rows = []
    for src in source_order(data) + ["pooled"]:
        keys = {k for k, s in data["source"].items() if src in ("pooled", s)}
        for v in variants:
            by_layer = {}
            for l in range(L):
                rs = [r for r in data["layer"][v].get(l, [])
                      if (r["provenance"]["input"], r["provenance"]["text_sha"]) in keys]
                by_layer[l] = (sum(r["verdict"] == "tight" for r in rs), len(rs))
            if not by_layer[0][1]:
                continue
            low = min(by_layer, key=lambda l: (by_layer[l][0] / by_layer[l][1] if by_layer[l][1] else 2, l))
            inner = [k / n for l, (k, n) in by_layer.items() if l < L - 1 and n]
            vkeys = sorted(k for k in keys if k in slots[v])
            rows.append([src, VARIANT_TITLES[v], len(vkeys), f"{median(slots[v][k][0] for k in vkeys):g}",
                         f"layer {low}: {share_cell(*by_layer[low])}", share_cell(*by_layer[L - 1]),
                         f"{min(inner):.2f}-{max(inner):.2f}" if inner else "-"]
                        + [share_cell(*baseline_share(base, slots[v], vkeys, f)) for f in families])
    return rows, cols


def _provenance(model: Any, campaign: str, n_inputs: int, seed: int) -> str:
    q = "".join(f"; {note}" for note in getattr(model, "notes", ()))
    return (f"model {model.name} (files sha256 {model.fingerprint}){q}; campaign {campaign}; {n_inputs} inputs; "
            f"max {model.max_tokens} tokens; rollout residual 0.5, mean head fusion; seed {seed} "
            "(no random draws); D1 verdicts exact (rational), shares with 95% Wilson intervals")


def d1_table(data: dict, model: Any) -> tuple[list, list]:
    variants = [v for v in ("all", "content", "nofirst") if v in data["layer"]]
    cols = ["layer"] + [f"D1 tight, {VARIANT_TITLES[v]}" for v in variants]
    cols += [f"tight only via token 0 ({v})" for v in variants]
    cols += [f"median slack [95% bootstrap] ({v})" for v in variants]
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
            row.append(interval_cell((r["slack"] for r in data["layer"][v].get(l, [])), bootstrap_seed=l))
        rows.append(row)
    return rows, cols


def variant_notes(data: dict, model: Any) -> list[str]:
    """One line per token set the model's inputs measure (all, content; nofirst if causal) that
    some or all inputs could not keep: fewer than two of its tokens (see the module docstring)."""
    expected = ["all", "content"] + (["nofirst"] if model.causal else [])
    n = len(data["inputs"])
    kept = sizes_of(data)
    notes = []
    for v in expected:
        k = len(kept.get(v, {}))
        if k == 0:
            notes.append(f"{VARIANT_TITLES[v]}: none of the {n} inputs keeps two or more (the tokenizer made "
                         "every token of them special, e.g. [UNK]): nothing measured on this token set")
        elif k < n:
            notes.append(f"{VARIANT_TITLES[v]}: {n - k} of the {n} inputs keep fewer than two and are left out "
                         "of this token set")
    return notes


def heads_shares(data: dict, variant: str) -> np.ndarray:
    """(L, H) share of inputs with D1 equality per head (shape (0, 0): the token set has no records)."""
    cells = data["head"].get(variant)
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
            "median prod (1+delta(A))/2", "median ratio R/prod [95% bootstrap]", "ratio undecided",
            "median ratio prod/factor", "chain tight", "D2 step tight", "D2 undecided"]
    rows = []
    for l in sorted(data["roll"][variant]):
        rs, ls = data["roll"][variant][l], data["layer"][variant].get(l, [])
        ratios = [r["extra"].get("ratio_R") for r in rs]
        rows.append([l, median(r["extra"].get("delta") for r in ls), median(r["value"] for r in rs),
                     median(r["bound"] for r in rs), median(r["extra"].get("prod_factor_bound") for r in rs),
                     interval_cell(ratios, bootstrap_seed=l), f"{sum(x is None for x in ratios)}/{len(rs)}",
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




FLOAT_TESTS = ("as-stored", "renormalised", "condition")    # numerics.dobrushin.float_tests.IMPLEMENTATIONS
ALWAYS_TIGHT = "always tight"                                  # the constant baseline: every verdict called tight
FLOAT_COLUMNS = ["model", "float test", "D1 verdicts", "float32 wrong [95% CI]", "float32: violated",
                 "float32: tight missed", "float64 wrong [95% CI]", "float64: violated", "float64: tight missed"]


FLOAT_CAPTION = (
    "What a float test of D1 at tolerance 0 gets wrong depends on how the test is implemented. Every D1 "
    "verdict {of} on all tokens (each head and the head mean, every layer) decided "
    "exactly, against three float implementations of it, each in float32 and in float64 on the stored "
    "attention: as-stored (both sides computed from the stored floats; equal: tight, left smaller: holds, "
    "larger: violated), renormalised (the same after the rows are divided by their sum in that precision) "
    "and condition (the equality condition in floats: a pair maximising the float distance between two "
    "rows, tight if both self-dominance margins are nonnegative, else holds); and the constant answer "
    "'always tight' (its errors: the exact strict verdicts). 'violated': the float test shows the bound broken "
    "where exact arithmetic proves it holds; 'tight missed': an exact equality the float test calls strict or "
    "violated (95% intervals: {cluster}).")
"""The caption of the float-versus-exact table (``of``: whose verdicts; ``cluster``: :data:`CLUSTER_NOTE`)."""


def float_counts(d1: list, key: Optional[str]) -> Optional[tuple[int, int, int]]:
    """(wrong, violated, tight missed) of the float verdicts stored under ``extra[key]`` against the
    exact verdicts of the D1 records ``d1``; ``key`` None: the constant answer "tight"; None when a
    record lacks the key (a campaign stored before that implementation).

    >>> d1 = [{"verdict": "tight", "extra": {"f": "holds"}}, {"verdict": "holds", "extra": {"f": "violated"}}]
    >>> float_counts(d1, "f"), float_counts(d1, None), float_counts(d1, "g")
    ((2, 1, 1), (1, 0, 0), None)
    """
    got = ["tight"] * len(d1) if key is None else [r["extra"].get(key) for r in d1]
    if any(g is None for g in got):
        return None
    return (sum(g != r["verdict"] for g, r in zip(got, d1)), sum(g == "violated" for g in got),
            sum(r["verdict"] == "tight" and g != "tight" for g, r in zip(got, d1)))


def float_rows(records_by_model: dict) -> list[list]:
    """Per model (``{label: its stored records}``) four rows, one per float test of D1 at tolerance 0
    (:data:`FLOAT_TESTS`, :mod:`numerics.dobrushin.float_tests`) and the constant answer "always
    tight" (:data:`ALWAYS_TIGHT`): every D1 verdict on all tokens (each head and the head mean, every
    layer) decided exactly, against that test's float32 and float64 verdicts on the same stored
    attention: how many it gets wrong (95% cluster-bootstrap interval over inputs: :func:`cluster_cell`),
    how many it calls violated (a bound exact arithmetic proves) and how many exact equalities it
    misses ("-" where the records lack a test)."""
    rows = []
    for label, records in records_by_model.items():
        d1 = [r for r in records if r["theorem"] == "dobrushin.factor" and "float32" in r["extra"]]
        for test in FLOAT_TESTS + (ALWAYS_TIGHT,):
            row = [label, test, len(d1)]
            for dt in ("float32", "float64"):
                c = float_counts(d1, None if test == ALWAYS_TIGHT else float_key(dt, test))
                key = None if test == ALWAYS_TIGHT else float_key(dt, test)
                ci = "" if c is None else cluster_cell(d1, lambda r: ("tight" if key is None else r["extra"][key])
                                                       != r["verdict"])
                row += ["-"] * 3 if c is None else [f"{c[0]}/{len(d1)} {ci}", c[1], c[2]]
            rows.append(row)
    return rows


def figures(data: dict, model: Any, fig_dir: Path, s: str, prov: str) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    q = " (4-bit quantised weights)" if model.quantised else ""
    paths: list[Path] = []
    variants = [v for v in ("all", "content", "nofirst") if data["head"].get(v)]   # never an empty panel
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
                 inputs: Optional[set] = None, plan: Any = None) -> dict:
    """Write every table and figure of one model's campaign; return {name: paths}. ``plan``: the
    :class:`verification.trained.checks.Plan` the model was measured in: its seed in the provenance
    and its matched-n random baselines (:func:`verification.trained.checks.baseline_campaign`), which
    add the table ``trained-sources-<model>`` (None: seed 0, no baselines)."""
    from verification.trained.checks import baseline_campaign

    seed = 0 if plan is None else plan.seed
    baselines = None if plan is None else baseline_campaign(plan.seed)
    out_dir = Path(out_dir)
    data = collect(store, campaign, inputs)
    if not data["layer"]:
        raise InvalidInput(f"no stored records for campaign {campaign!r}")
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
    notes = variant_notes(data, model)
    for note in notes:
        console.print(f"{model.name}: {note}", markup=False, highlight=False, soft_wrap=True)
    cap += "".join(f" Note: {note}." for note in notes)
    written["d1"] = write_table(rows, cols, f"trained-d1-{s}", cap, prov, tables)
    print_table(console, rows, cols, cap)
    for v in ("all", "content"):
        if not data["head"].get(v):
            continue                     # no input kept two tokens of it: said in the notes, no empty table
        sh = heads_shares(data, v)
        hrows = [[l] + [None if math.isnan(x) else round(float(x), 4) for x in sh[l]] for l in range(sh.shape[0])]
        written[f"heads_{v}"] = write_table(
            hrows, ["layer"] + [f"h{h}" for h in range(sh.shape[1])],
            f"trained-heads-{s}" if v == "all" else f"trained-heads-{v}-{s}",
            f"{model.name}: per-head share of {n} inputs with D1 equality ({VARIANT_TITLES[v]}).{q}", prov, tables)
    rows, cols = rollout_table(data)
    cap = f"{model.name}: rollout bounds per layer, all tokens, medians over {n} inputs.{q}"
    written["rollout"] = write_table(rows, cols, f"trained-rollout-{s}", cap, prov, tables)
    print_table(console, rows, cols, cap)
    rows, cols = compare_table(data)
    cap = (f"{model.name}: comparison bounds on delta(A) of head-averaged attention (Birkhoff = "
           f"softmax-logit bound per head; trivial (1) wherever A has zeros, e.g. causal masks).{q}")
    written["compare"] = write_table(rows, cols, f"trained-compare-{s}", cap, prov, tables)
    if baselines is not None:
        rows, cols = source_table(data, read_baselines(store.records(campaign=baselines)), FAMILIES)
        cap = (f"{model.name}: share of inputs where D1 holds with equality, per source and pooled (95% Wilson), "
               f"beside random matrices of the same token counts (campaign {baselines}).{q}")
        written["sources"] = write_table(rows, cols, f"trained-sources-{s}", cap, prov, tables)
        print_table(console, rows, cols, cap)
    rows = float_rows({model.name: allrec})
    if rows and rows[0][2]:      # records that carry the float tests' verdicts (every rollout since v3)
        cap = f"{model.name}: " + FLOAT_CAPTION.format(of=f"on {n} inputs", cluster=CLUSTER_NOTE) + q
        written["float"] = write_table(rows, FLOAT_COLUMNS, f"trained-float-{s}", cap, prov, tables)
        print_table(console, rows, FLOAT_COLUMNS, cap)
    written["figures"] = figures(data, model, out_dir / "figures", s, prov)
    return written


def report(store: Any, plan: Any, out_dir: Any, console: Any) -> dict:
    """Every model of ``plan`` (:class:`verification.trained.checks.Plan`): :func:`report_model`
    on its campaign and inputs, with the plan's random baselines; {model name: {table: paths}}."""
    from verification.trained.checks import measured

    out = {}
    for m in plan.models:
        name, model, keys = measured(m)
        out[model.name] = report_model(store, name, model, out_dir, console, keys, plan)
        for theorem_id in getattr(plan, "checks", ()):
            corpus_name = m.load()[1].name
            out[model.name][f"check:{theorem_id}"] = check_table(store, model, corpus_name, keys, theorem_id,
                                                                 out_dir, console)
    return out


def check_table(store: Any, model: Any, corpus_name: str, keys: set, theorem_id: str, out_dir: Any,
                console: Any) -> dict:
    """The table ``trained-check-<theorem>-<model>`` of a user's statement checked on every head
    (``rollout --check``, :func:`verification.trained.checks.run_check`): per layer (a chain's first layer)
    and in all, heads checked, holds, tight, the tight share of the heads it applies to and that are
    decided (95% Wilson), violated, not-applicable, undecided; the caption says what each symbol is
    bound to (:func:`bound_words`); read from the chunks' summaries of the inputs ``keys`` ({(input id, text hash)}). Printed too."""
    from theory import get
    from theory.verdicts import Outcome, vocabulary
    from verification.trained.checks import campaign_of

    th = get(theorem_id)
    name = campaign_of(model, corpus_name, theorem_id)
    per, n = stored_counts(store, name, theorem_id, {f"{i}#{sha}" for i, sha in keys})
    if not per:
        raise InvalidInput(f"no stored checks of {theorem_id} for campaign {name!r}")
    rows, cols = table_rows(per)
    s = slug(model.name)
    violated, undecided = rows[-1][5], rows[-1][7]
    kind = ("a refuted record (a counterexample to a conjecture: a finding)" if vocabulary(th.category) is Outcome
            else "a violated record")
    found = ("No head violates it." if not violated else
             f"{violated} head{'s violate' if violated > 1 else ' violates'} it, each stored as {kind}.")
    if undecided:
        found += (f" {undecided} head{'s are' if undecided > 1 else ' is'} undecided (no exact or certified method "
                  "decided within its budget): neither holds nor tight.")
    bound = bound_words(th, bool(getattr(model, "causal", False)))
    cap = (f"{model.name}: {theorem_id} ({th.category}), {th.statement}, decided on every head ({bound}), {n} inputs; "
           f"certified verdicts; tight share of the heads where the statement applies and is decided. {found}")
    prov = (f"model {model.name} (files sha256 {model.fingerprint}); corpus {corpus_name}; {n} inputs; "
            f"max {model.max_tokens} tokens; theorem {theorem_id} from {source_name(theorem_id)}: "
            f"{th.statement}; campaign {name}")
    paths = write_table(rows, cols, f"trained-check-{slug(theorem_id)}-{s}", cap, prov, Path(out_dir) / "tables")
    print_table(console, rows, cols, cap)
    return paths


# -- --check: a user's statement on every head (verification.trained.checks) ----------------------------

def bound_words(th: Any, causal: bool) -> str:
    """What the statement's symbols are bound to on a model (``causal``: a decoder), for the caption
    (:class:`verification.trained.checks.Binding`)."""
    from verification.trained.checks import binding_of, compiled_of

    b = binding_of(compiled_of(th))
    if b.symbols == (("A", "stochastic", 0),):
        return "A = the head's attention probabilities on all tokens, rows renormalised exactly"
    text = b.words().replace("at layer l", "of layer l")
    if "logits" in b.kinds:
        text += ("; the scores as the model passes them to its softmax, its causal mask made explicit: the entries "
                 'above the diagonal 0, the attention softmax(L, mask="causal")' if causal else
                 "; the scores as the model passes them to its softmax (nothing masked), the attention softmax(L)")
    if b.chain > 1:
        text += f"; a row per first layer l of a chain of {b.chain} layers, the same head index in each"
    return text + "; attention rows renormalised exactly"

def stored_counts(store: Any, name: str, theorem_id: str, keys: set) -> tuple[dict, int]:
    """``({layer: {verdict: count}}, inputs)`` summed over the stored chunks of ``name`` whose keys are
    in ``keys`` (the chunk keys of the plan's inputs), verified ones only."""
    from verification.trained.checks import VERDICT_NAMES

    done = store.done_chunks(name)
    per: dict = {}
    inputs = 0
    for s in store.summaries(name, theorem_id):
        if s["chunk"] not in keys or s["chunk"] not in done:
            continue
        inputs += 1
        for l, c in enumerate(s["body"]["layers"]):
            cell = per.setdefault(l, dict.fromkeys(VERDICT_NAMES, 0))
            for v in VERDICT_NAMES:
                cell[v] += int(c.get(v, 0))         # a chunk stored before "undecided" was counted: none
    return per, inputs


def table_rows(per: dict) -> tuple[list, list]:
    """Per layer and in all: heads checked, holds, tight, tight share of the heads it applies to and
    that are decided (95% Wilson), violated, not-applicable, undecided (never counted as tight or holds).

    >>> rows, cols = table_rows({0: {"holds": 3, "tight": 1, "violated": 0, "not-applicable": 0, "undecided": 2}})
    >>> rows[0], rows[-1][0]
    ([0, 6, 3, 1, '0.250 [0.046, 0.699]', 0, 0, 2], 'all')
    """
    from verification.trained.checks import VERDICT_NAMES

    cols = ["layer", "heads checked", "holds", "tight", "tight share [95% Wilson]", "violated", "not-applicable",
            "undecided"]
    total = dict.fromkeys(VERDICT_NAMES, 0)
    rows = []
    for l in sorted(per):
        c = per[l]
        for v in VERDICT_NAMES:
            total[v] += c[v]
        rows.append(_row(l, c))
    rows.append(_row("all", total))
    return rows, cols


def _row(label: Any, c: dict) -> list:
    checked = sum(c.values())
    decided = c["holds"] + c["tight"] + c["violated"]
    return [label, checked, c["holds"], c["tight"], share_text(c["tight"], decided), c["violated"],
            c["not-applicable"], c["undecided"]]


def source_name(theorem_id: str) -> str:
    """Where the theorem came from (:func:`theory.plugins.source`), a file by its name only (no path of
    this machine in a table)."""
    from theory.plugins import source

    where = source(theorem_id)
    return where if where == "built-in" or where.startswith("entry point") else Path(where).name
