"""The trained-transformer part of the paper: per model (all-MiniLM-L6-v2, SmolLM2-135M, Gemma 3 270M,
AntiBERTy), per layer
and head, how often Theorem D1's equality holds (all tokens, content tokens, first position
dropped), how tight rollout is and the D2 chain, read from the stored campaigns only (the rows are
those of :mod:`verification.trained.report`; nothing is recomputed, no model is loaded).

The campaign of a model is found in the store by its settings (``trained-v4:<model>:<corpus>:
max<T>:r0.5:mean:w<fingerprint>``, T = 128 quick, 512 full), and only the chunks of the main job's
inputs are read (quick: the first 120 / 6 / 6 inputs of the default corpus, AntiBERTy 48 antibody V genes; 300 full:
:func:`verification.measure.text.main_inputs`), so the inputs a user's ``attnbounds rollout --limit ...`` adds to the same
campaign never reach the paper; when several fingerprints were measured, the one with the most of
those inputs is reported (ties: the first name in sorted order), its fingerprint in the provenance.
The random baselines at matched token counts are read from the seed's baseline campaign
(:func:`verification.trained.checks.baseline_campaign`), the samples of those inputs only. The part
is built from the trained plan (``paper_part(store, plan)``, ``needs(store, plan)``): the main job's
at its seed, quick or full (:func:`check_plan`); every command it names is ``plan.command()``. Tables
``trained-d1-<model>``, ``trained-sources-<model>``, ``trained-rollout-<model>``,
``trained-heads-<model>``, ``trained-compare-<model>``, and across the models ``trained-models`` (one
row per model) and ``trained-float`` (what a float test at tolerance 0 gets wrong against the exact
verdicts); figures ``trained-heads-<model>``, ``trained-rollout-<model>`` and ``trained-depth`` (share
against relative depth, every model).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from theory.errors import InvalidInput

from numerics.sources.corpus import SOURCES
from verification.report.aggregate import median
from verification.report.figures import HALF
from verification.report.part import Figure, MissingCampaign, Need, Part, Table, complete, frame
from verification.report.tables import fmt, fmt_ci
from verification.measure.attention import FUSION, RESIDUAL
from verification.measure.baselines import FAMILIES, baseline_share, baseline_slots, read_baselines
from verification.measure.text import corpus_of, find_campaign, model_need
from verification.stats import wilson
from verification.trained.checks import Plan, baseline_campaign, baseline_chunks
from verification.stats import ALPHA, cluster_bootstrap_difference, median_interval
from verification.trained.report import (ALWAYS_TIGHT, BOOTSTRAP_SEED, CLUSTER_NOTE, FLOAT_CAPTION, FLOAT_COLUMNS,
                                          FLOAT_TESTS, VARIANT_TITLES, cluster_cell, collect_records, compare_table,
                                          d1_table, float_rows, heads_shares, pooled_interval,
                                          rollout_table, sizes_of, slug, source_order, source_table, tight, wilson_cell)

MODELS = {"minilm": "MiniLM", "smollm2": "SmolLM2", "gemma3": "Gemma", "antiberty": "AntiBERTy", "dinov2": "DINOvTwo"}  # -> macro word
TITLES = {"minilm": "all-MiniLM-L6-v2", "smollm2": "SmolLM2-135M-Instruct (4-bit GGUF)",
          "gemma3": "Gemma 3 270M (4-bit GGUF)", "antiberty": "AntiBERTy",
          "dinov2": "DINOv2-S (ONNX, saliency fine-tune)"}
# what the cross-model table says of each embedded model (numerics.sources.models holds the files)
ARCHITECTURES = {"minilm": ("BERT encoder", "bidirectional"), "smollm2": ("Llama decoder", "causal, grouped-query"),
                 "gemma3": ("Gemma 3 decoder", "causal, grouped-query, sliding window 512 + global every 6th layer"),
                 "antiberty": ("BERT encoder (antibody sequences)", "bidirectional"),
                 "dinov2": ("ViT encoder (images, patch 14)", "bidirectional")}
LEGEND = {"minilm": "MiniLM", "smollm2": "SmolLM2", "gemma3": "Gemma 3", "antiberty": "AntiBERTy", "dinov2": "DINOv2-S"}
SHORT = {"minilm": "all-MiniLM-L6-v2", "smollm2": "SmolLM2-135M (4-bit)", "gemma3": "Gemma 3 270M (4-bit)",
         "antiberty": "AntiBERTy", "dinov2": "DINOv2-S"}
QUANTISATION = {"minilm": "float32", "smollm2": "GGUF Q4_1", "gemma3": "GGUF Q4_K_M", "antiberty": "float32",
                "dinov2": "float32 (ONNX)"}


# the per-model tables the paper typesets (the prose reads them); every other per-model table is data only
# (Part.data_tables): the causal models' D1 shares are forced, a check reported in one line
TYPESET = {"minilm": {"d1", "sources", "heads", "rollout", "compare"}, "smollm2": {"rollout", "compare"}}


def notes_of(name: str) -> tuple[str, ...]:
    """What every table of ``name``'s attention must say (:attr:`numerics.sources.models.ModelSource.notes`)."""
    from numerics.sources.models import EMBEDDED

    return EMBEDDED[name].notes if name in EMBEDDED else ()


def check_plan(plan: Plan) -> None:
    """The paper's trained section shows the main job's plan (every embedded model on its main-job
    inputs, at any seed, quick or ``--full``: :meth:`Plan.is_main`); another plan (``attnbounds paper
    --from "rollout ..."``: one model) is refused in one line, its tables being the command's own."""
    if not plan.is_main():
        raise InvalidInput(f"the paper's trained section shows the models {', '.join(MODELS)} on the main job's "
                           f"inputs (attnbounds verify --only trained); `{plan.command()}` writes its own tables "
                           "under its --out")


def model_needs(plan: Plan) -> list[Need]:
    """Each model's campaign of ``plan`` (up to the weights' fingerprint) and its input chunks."""
    return [model_need(m.model, plan.full, plan.command()) for m in plan.models]


def needs(store: Any, plan: Plan) -> list[Need]:
    """Every model's campaign of ``plan`` and, once they are complete, the random baselines at their
    stored token counts (the samples :func:`verification.trained.checks.measure_baselines` draws for them)."""
    check_plan(plan)
    models = model_needs(plan)
    found = [complete(store, need) for need in models]
    if not all(found):
        return models                      # the baselines follow the token counts still to be measured
    keys = set()
    for need, camp in zip(models, found):
        records = [r for r in store.records(camp) if r["chunk"] in need.chunks]
        keys |= {c.key for c in baseline_chunks(baseline_slots(sizes_of(collect_records(records, None))), plan.seed)}
    return models + [Need("trained", baseline_campaign(plan.seed), frozenset(keys), plan.command())]


def _tight(rs: list[dict]) -> tuple[int, int]:
    return sum(r["verdict"] == "tight" for r in rs), len(rs)


def _s(k: int, n: int) -> str:
    return f"{k / n:.2f}" if n else "-"


def _heatmap(shares: np.ndarray, title: str):
    def draw(ax: Any) -> None:
        from matplotlib.ticker import MaxNLocator

        im = ax.imshow(shares, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_title(title.split(" (")[0].split(":")[0])   # the model; the caption says the rest
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.figure.colorbar(im, ax=ax, label="D1 equality share")
    return draw


def _rollout_curves(data: dict, title: str):
    layers = sorted(data["roll"]["all"])
    curves = []
    for key, label, style in (("value", r"$\delta(R_l)$", "-"), ("bound", r"$\prod_k \delta(\hat A_k)$", "-"),
                              ("prod_factor_bound", r"$\prod_k (1+\delta(A_k))/2$", "--")):
        vals = [np.array([x for x in ((r[key] if key in r else r["extra"].get(key)) for r in data["roll"]["all"][l])
                          if x is not None and x > 0], dtype=float) for l in layers]
        curves.append((label, style, [float(np.median(v)) if v.size else np.nan for v in vals]))

    def draw(ax: Any) -> None:
        for label, style, med in curves:
            ax.plot([l + 1 for l in layers], med, style, marker=".", label=label)
        ax.set_yscale("log")
        ax.set_xlabel("depth $l$")
        ax.set_ylabel("median over inputs")
        ax.set_title(title.split(" (")[0].split(":")[0])   # the model; the caption says the rest
        ax.legend()
    return draw


def _interval(values, bootstrap_seed: int) -> tuple[str, str]:
    m, (lo, hi) = median_interval(values, bootstrap_seed)
    if m is None:
        return "-", "-"
    if np.isnan(lo):
        return f"{m:.3g}", "-"
    return fmt_ci(m, lo, hi) if hi > lo else (f"{m:.3g}", f"[{lo:.3g}, {hi:.3g}]")


def _source_macros(part: Part, word: str, data: dict, base: dict) -> None:
    """Per source and pooled: inputs, the D1 share in the last and in the lowest layer (95% Wilson),
    and the matched-n random shares (pooled over the sources' inputs)."""
    slots = baseline_slots(sizes_of(data))
    L = len(data["layer"]["all"])
    srcs = source_order(data)
    part.macro(str(len(srcs)), word, "sources")
    for src in list(dict.fromkeys(list(SOURCES) + srcs)) + ["pooled"]:   # an absent source: 0 inputs, "-"
        keys = {k for k, s in data["source"].items() if src in ("pooled", s)}
        part.macro(str(len(keys)), word, src, "inputs")
        for v, cells in data["layer"].items():
            tag = "" if v == "all" else v
            shares = {}
            for l, rs in cells.items():
                sel = [r for r in rs if (r["provenance"]["input"], r["provenance"]["text_sha"]) in keys]
                shares[l] = _tight(sel)
            k, n = shares[L - 1]
            part.macro(_s(k, n), "D1 share", word, src, "last layer", tag)
            part.macro(wilson_cell(k, n), "D1 share", word, src, "last layer", tag, "interval")
            low = min(shares, key=lambda l: (shares[l][0] / shares[l][1] if shares[l][1] else 2, l))
            part.macro(_s(*shares[low]), "D1 share", word, src, "lowest layer", tag)
            part.macro(wilson_cell(*shares[low]), "D1 share", word, src, "lowest layer", tag, "interval")
            part.macro(str(low), word, src, "lowest layer", tag)
            vkeys = sorted(k for k in keys if k in slots[v])
            soft = []
            for f in FAMILIES:
                k, n = baseline_share(base, slots[v], vkeys, f)
                if f == "dirichlet":
                    part.macro(_s(k, n), word, src, "random Dirichlet share", tag)
                    part.macro(wilson_cell(k, n), word, src, "random Dirichlet share", tag, "interval")
                elif n:
                    soft.append(k / n)
            part.macro(f"{min(soft):.2f}" if soft else "-", word, src, "random softmax share min", tag)
            part.macro(f"{max(soft):.2f}" if soft else "-", word, src, "random softmax share max", tag)
            if src == "pooled" and v == "content":
                # "dropping the special tokens does not remove the effect": on content tokens the lowest
                # layer's Wilson interval lies above every random family's share at the same token counts
                k_lo, n_lo = shares[low]
                rnd = [baseline_share(base, slots[v], vkeys, f) for f in FAMILIES]
                top = max((k / n for k, n in rnd if n), default=1.0)
                part.guard(bool(n_lo) and wilson(k_lo, n_lo)[0] > top, word, "content tokens keep the effect",
                           detail=f"lowest content-token layer {k_lo}/{n_lo} against random up to {top:.2f}")


def _model_part(part: Part, name: str, campaign: str, records: list[dict], plan: Plan, base: dict,
                baselines: str, data_by_model: dict) -> None:
    data = collect_records(records, None)
    p0 = records[0]["provenance"]
    word, title, s = MODELS[name], TITLES[name], slug(name)
    n_in, causal, quantised = len(data["inputs"]), bool(p0.get("causal")), bool(p0.get("quantised"))
    prov = (f"model {name}" + "".join(f"; {note}" for note in notes_of(name)) + f"; campaign {campaign}; {n_in} inputs "
            f"({corpus_of(name)} corpus); rollout residual {RESIDUAL}, {FUSION} head fusion; seed {plan.seed} (no random draws); "
            "D1 verdicts exact (rational), shares of inputs with 95% Wilson intervals, pooled shares with a " + CLUSTER_NOTE)
    L = len(data["layer"]["all"])
    H = 1 + max(h for _, h in data["head"]["all"])
    part.macro(str(n_in), word, "inputs")
    part.macro(str(L), word, "layers")
    part.macro(str(H), word, "heads")
    layered = [r for v in data["layer"].values() for rs in v.values() for r in rs]
    headed = [r for v in data["head"].values() for rs in v.values() for r in rs]
    part.macro(str(len(layered) + len(headed)), word, "D1 verdicts")
    part.macro(str(sum(bool(r["extra"].get("exact")) for r in layered + headed)), word, "D1 exact path")
    part.macro("%d/%d" % _tight(layered + headed), word, "D1 tight all records")
    # the verdicts the float table counts: all tokens, each head and the head mean, every layer and input
    all_tokens = [r for v in ("all",) for d in (data["layer"], data["head"]) for rs in d.get(v, {}).values() for r in rs]
    part.macro("%d/%d" % _tight(all_tokens), word, "D1 tight all tokens")
    k, n = _tight(layered + headed)
    part.guard(k == n > 0, word, "D1 always tight", detail=f"{k} of {n} verdicts tight")
    part.macro(f"layers 0-{L - 2}" if L > 2 else "layer 0", word, "early layers")   # the layers before the last
    for v, cells in data["layer"].items():
        shares = {l: _tight(rs) for l, rs in cells.items()}
        for l, (k, n) in shares.items():
            part.macro(_s(k, n), "D1 share", word, "layer", l, v)
        k, n = shares[L - 1]
        part.macro(_s(k, n), "D1 share", word, "last layer", "" if v == "all" else v)
        part.macro(wilson_cell(k, n), "D1 share", word, "last layer", "" if v == "all" else v, "interval")
        inner = [k / n for l, (k, n) in shares.items() if l < L - 1 and n]
        every = [k / n for k, n in shares.values() if n]
        part.macro(f"{min(inner or every):.2f}", "D1 share", word, v, "early layers min")
        part.macro(f"{max(inner or every):.2f}", "D1 share", word, v, "early layers max")
        part.macro(f"{min(every):.2f}", "D1 share", word, v, "min")
        part.macro(f"{max(every):.2f}", "D1 share", word, v, "max")
        tight = [r for rs in cells.values() for r in rs if r["verdict"] == "tight"]
        only = sum(bool(r["extra"].get("through_first")) and not r["extra"].get("through_other") for r in tight)
        part.macro(f"{only}/{len(tight)}", word, v, "tight only via token zero")
    hs = heads_shares(data, "all")
    # "the heads differ widely": some head is tight on at most a quarter of the inputs, another on three quarters
    part.guard(bool(np.nanmin(hs) <= 0.25 and np.nanmax(hs) >= 0.75), word, "heads differ widely",
               detail=f"head shares from {np.nanmin(hs):.2f} to {np.nanmax(hs):.2f}")
    part.macro(f"{np.nanmin(hs):.2f}", word, "head share min")
    part.macro(f"{np.nanmax(hs):.2f}", word, "head share max")
    part.macro(f"{int(np.sum(hs == 1))}/{int(np.sum(~np.isnan(hs)))}", word, "heads always tight")
    roll = data["roll"]["all"]
    last = roll[L - 1]
    for key, label in (("ratio_R", "rollout ratio"), ("ratio_factor", "factor ratio")):
        m, ci = _interval((r["extra"].get(key) for r in last), L - 1)
        part.macro(m, word, label, "last layer")
        part.macro(ci, word, label, "last layer", "interval")
    m, ci = _interval((r["extra"].get("ratio_R") for r in roll[1]), 1) if 1 in roll else ("-", "-")
    part.macro(m, word, "rollout ratio", "layer", 1)
    part.macro(ci, word, "rollout ratio", "layer", 1, "interval")
    _source_macros(part, word, data, base)
    part.macro(fmt(median(r["value"] for r in last)), word, "delta R last layer")
    for l, rs in roll.items():
        part.macro(_s(*_tight(rs)), word, "chain tight", "layer", l)
    later = [l for l in roll if l >= 1 and _tight(roll[l])[0] == 0]
    part.macro(f"{len(later)}/{len([l for l in roll if l >= 1])}", word, "chain never tight after step one")
    undecided = sum(r["extra"].get("ratio_R") is None for rs in roll.values() for r in rs)
    part.macro(str(undecided), word, "rollout ratios undecided")
    part.guard(undecided == 0, word, "every ratio decided", detail=f"{undecided} ratios undecided")
    part.guard(len(later) == len([l for l in roll if l >= 1]), word, "chain tight on no later input",
               detail=f"the chain is tight on some input in {len([l for l in roll if l >= 1]) - len(later)} later layers")
    ratios = [x for x in (r["extra"].get("ratio_factor") for r in last) if x is not None]
    med = float(np.median(ratios)) if ratios else float("nan")
    part.guard(0.9 <= med <= 1.1, word, "factor product close", detail=f"median ratio at the last layer {med:.4g} "
               "(the sentence says close to 1: between 0.9 and 1.1)")

    q = " 4-bit quantised weights: the quantised model's attention." if quantised else ""
    data_by_model[name] = (data, L, H, causal, base)
    c = (" Causal attention: row 0 is one-hot, so equality is structural (docs/theory.md §1, corollary)." if causal else "")
    made = dict(campaigns=(campaign,), command=part.commands[0])     # every table: its campaign, its command

    def add(kind: str, table: Table) -> None:
        (part.tables if kind in TYPESET.get(name, ()) else part.data_tables).append(table)
    rows, cols = d1_table(data, None)
    add("d1", Table(f"trained-d1-{s}", frame(rows, cols),
                             f"{title}: share of {n_in} inputs where Theorem D1 holds with equality (exact), per layer, "
                             f"head-averaged attention, with 95% Wilson intervals; median slack.{q}{c}", prov, **made))
    rows, cols = source_table(data, base, FAMILIES)
    add("sources", Table(f"trained-sources-{s}", frame(rows, cols),
                             f"{title}: share of inputs where D1 holds with equality (exact), per source and pooled, "
                             f"95% Wilson intervals, beside the share for random matrices of the same token counts "
                             f"(Dirichlet(1) rows; softmax of Gaussian logits at $T = 0.25, 1, 4$, not fitted to the "
                             f"model), drawn for each input of the row.{q}{c}",
                             prov + f"; random baselines: campaign {baselines}",
                             campaigns=(campaign, baselines), command=part.commands[0]))
    rows, cols = rollout_table(data)
    add("rollout", Table(f"trained-rollout-{s}", frame(rows, cols),
                             f"{title}: rollout per layer, all tokens, medians over {n_in} inputs: $\\delta(R_l)$ against "
                             f"$\\prod \\delta(\\hat A)$ (D2 chain) and $\\prod (1+\\delta(A))/2$ (D1 factors); the ratio "
                             f"$\\delta(R_l)/\\prod \\delta(\\hat A)$ with a 95% percentile-bootstrap interval of its median. "
                             f"By Theorem D2 that ratio cannot increase with $l$ (a check); whether the chain is tight "
                             f"is decided on each input by D2's exact condition at every step (a measurement).{q}",
                             prov, **made))
    hrows = [[l] + [None if np.isnan(x) else f"{x:.2f}" for x in hs[l]] for l in range(hs.shape[0])]
    add("heads", Table(f"trained-heads-{s}", frame(hrows, ["layer"] + [f"h{h}" for h in range(hs.shape[1])]),
                             f"{title}: per-head share of {n_in} inputs with D1 equality, {VARIANT_TITLES['all']}.{q}",
                             prov, **made))
    rows, cols = compare_table(data)
    classical = [float(row[cols.index(c)]) for row in rows for c in ("median Birkhoff tau_B(A)",
                                                                      "median mean-head softmax bound")
                 if isinstance(row[cols.index(c)], (int, float))]
    deltas = [float(row[cols.index("median delta(A)")]) for row in rows
              if isinstance(row[cols.index("median delta(A)")], (int, float))]
    part.macro(f"{min(classical):.2f}" if classical else "-", word, "classical bound min")   # "close to 1" as a number
    part.macro(f"{min(deltas):.2f}" if deltas else "-", word, "median delta min")
    add("compare", Table(f"trained-compare-{s}", frame(rows, cols),
                             f"{title}: comparison bounds on $\\delta(A)$ of head-averaged attention (Birkhoff's "
                             f"$\\tau_B$ and the mean-head softmax-logit bound; trivial wherever $A$ has zeros).{q}", prov,
                             **made))
    part.figures.append(Figure(f"trained-heads-{s}", _heatmap(hs, f"{title}: D1 equality per head, all tokens"),
                               f"{title}: share of inputs with D1 equality per layer and head (all tokens).{q}", prov,
                               size=HALF))
    part.figures.append(Figure(f"trained-rollout-{s}", _rollout_curves(data, f"{title}: rollout, all tokens"),
                               f"{title}: medians of $\\delta(R_l)$, $\\prod \\delta(\\hat A)$ and $\\prod (1+\\delta(A))/2$ by depth.{q}",
                               prov))


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables, figures and macros of every embedded model of ``plan`` (the main job's: :func:`check_plan`;
    see the module docstring)."""
    check_plan(plan)
    part = Part("trained", commands=[plan.command()])
    found, missing = {}, []
    for m, need in zip(plan.models, model_needs(plan)):   # every model's campaign looked up: all missing ones named
        try:
            found[m.model] = find_campaign(store, need)
        except MissingCampaign as exc:
            missing.append(exc)
    baselines = baseline_campaign(plan.seed)
    base = read_baselines(store.records(campaign=baselines))
    for name, (campaign, records) in found.items():    # every random sample of the main inputs stored
        slots = baseline_slots(sizes_of(collect_records(records, None)))
        wanted = {(f, n, c) for by in slots.values() for n, c in by.values() for f in FAMILIES}
        if not wanted <= set(base):
            missing.append(MissingCampaign(baselines, plan.command()))
            break
    if missing:
        raise MissingCampaign.combine(missing)
    data_by_model: dict = {}
    for name, (campaign, records) in found.items():
        _model_part(part, name, campaign, records, plan, base, baselines, data_by_model)
    _float_part(part, found)
    _models_part(part, found, data_by_model, baselines)
    _controls_part(part, found, data_by_model, baselines)
    _chain_part(part, found, data_by_model)
    return part


MODELS_COLUMNS = ["model", "architecture", "attention", "layers", "heads", "inputs", "tokens (median)",
                  "weights", "D1 tight, head mean [95% CI]", "D1 tight, per head [95% CI]",
                  "D1 tight, content, per head [95% CI]", "random Dirichlet, matched n [95% CI]", "forced"]


def models_rows(data_by_model: dict) -> list[list]:
    """One row per model: what it is, and its D1 equality shares pooled over layers and inputs (head
    mean; every head; content tokens, every head), beside random Dirichlet matrices of its token
    counts; "forced" when the causal corollary makes every verdict tight (a check, not a measurement)."""
    rows = []
    for name, (data, L, H, causal, base) in data_by_model.items():
        mean = [r for rs in data["layer"]["all"].values() for r in rs]
        heads = [r for rs in data["head"]["all"].values() for r in rs]
        content = [r for rs in data["head"].get("content", {}).values() for r in rs]
        slots = baseline_slots(sizes_of(data))
        k, n = baseline_share(base, slots["all"], set(slots["all"]), "dirichlet")
        tokens = median(slots["all"][key][0] for key in slots["all"])
        arch, kind = ARCHITECTURES.get(name, ("-", "causal" if causal else "bidirectional"))
        rows.append([TITLES.get(name, name), arch, kind, L, H, len(data["inputs"]), f"{tokens:g}",
                     QUANTISATION.get(name, "-")]
                    + [f"{_s(*_tight(rs))} {cluster_cell(rs, tight)}" if rs else "-" for rs in (mean, heads, content)]
                    + [f"{_s(k, n)} {random_cell(base, slots['all'], 'dirichlet')}", "yes (causal)" if causal else "no"])
    return rows


def random_cell(base: dict, slots: dict, family: str) -> str:
    """``[lo, hi]``: the cluster-bootstrap interval of the random share drawn for the inputs of
    ``slots`` (each input's matrices one cluster, as the model's verdicts are)."""
    ks, ns = [], []
    for key in sorted(slots):
        n, c = slots[key]
        k, m = base[(family, n, c)]
        ks.append(k)
        ns.append(m)
    if not ns:
        return "-"
    lo, hi = pooled_interval(ks, ns, BOOTSTRAP_SEED)
    return f"[{lo:.2f}, {hi:.2f}]"


def _depth_curves(data_by_model: dict):
    """The figure ``trained-depth``: the share of inputs with D1 equality (head mean, all tokens)
    against relative depth l / (L - 1), one line per model (causal models dashed: forced)."""
    lines = []
    for name, (data, L, _, causal, _) in data_by_model.items():
        cells = data["layer"]["all"]
        xs = [l / max(L - 1, 1) for l in sorted(cells)]
        ys = [_tight(cells[l])[0] / max(_tight(cells[l])[1], 1) for l in sorted(cells)]
        lines.append((LEGEND.get(name, name), causal, xs, ys))

    def draw(ax: Any) -> None:
        for label, causal, xs, ys in lines:
            ax.plot(xs, ys, "--" if causal else "-", marker="o", ms=3,
                    label=label + (" (forced)" if causal else ""))
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("relative depth $l / (L - 1)$")
        ax.set_ylabel("share of inputs with D1 equality")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False,   # below: never over data
                  fontsize="small")
    return draw


def _models_part(part: Part, found: dict, data_by_model: dict, baselines: str) -> None:
    """The cross-model table ``trained-models`` and figure ``trained-depth``."""
    rows = models_rows(data_by_model)
    camps = tuple(c for c, _ in found.values())
    prov = ("campaigns " + ", ".join(camps) + f"; random baselines: campaign {baselines}; D1 verdicts exact; "
            + "; ".join(f"{TITLES.get(n, n)}: {note}" for n in found for note in notes_of(n)))
    for name, row in zip(data_by_model, rows):
        cells = dict(zip(MODELS_COLUMNS, row))
        word = MODELS.get(name, name)
        for col, key in (("D1 tight, head mean [95% CI]", "mean"), ("D1 tight, per head [95% CI]", "heads"),
                         ("D1 tight, content, per head [95% CI]", "content"),
                         ("random Dirichlet, matched n [95% CI]", "random"), ("forced", "forced"),
                         ("tokens (median)", "tokens"), ("attention", "attention")):
            part.macro(str(cells[col]), word, "models", key)
    part.macro(str(len(rows)), "trained models count")
    # the heading "D1 is tight far more often than for random matrices of the same size": every
    # bidirectional model's pooled share (head mean) lies above its random baseline, intervals disjoint
    import re as _re

    def _ci(cell: str) -> Any:
        m = _re.search(r"\[\s*([-0-9.]+),\s*([-0-9.]+)\]", str(cell))
        return (float(m.group(1)), float(m.group(2))) if m else None
    above = []
    for name, row in zip(data_by_model, rows):
        cells = dict(zip(MODELS_COLUMNS, row))
        if cells["forced"] != "no":
            continue
        own, rnd = _ci(cells["D1 tight, head mean [95% CI]"]), _ci(cells["random Dirichlet, matched n [95% CI]"])
        above.append((name, bool(own and rnd and own[0] > rnd[1])))
    part.guard(bool(above) and all(ok for _, ok in above), "trained D1 above random",
               detail=", ".join(f"{n}: {'above' if ok else 'not above'}" for n, ok in above))
    part.macro(str(sum(r[-1] == "no" for r in rows)), "trained models bidirectional")
    part.tables.append(Table("trained-models", frame(rows, MODELS_COLUMNS),
                             "Every pretrained model measured: what it is, and the share of D1 verdicts that are "
                             "exact equalities, pooled over layers and inputs (head-averaged attention; every head; "
                             "every head on content tokens), 95% intervals by a " + CLUSTER_NOTE + ", beside random "
                             "Dirichlet(1) matrices of the same token counts. 'forced': causal attention makes every verdict "
                             "tight (the causal corollary): a check, not a measurement.", prov,
                             campaigns=camps + (baselines,), command=part.commands[0]))
    short = [[SHORT.get(name, name), "causal" if r[-1] != "no" else "bidirectional", f"{r[3]} x {r[4]}", r[5],
              r[8], r[9], r[11], "yes" if r[-1] != "no" else "no"] for name, r in zip(data_by_model, rows)]
    part.tables.append(Table("trained-models-summary", frame(short, [
        "model", "attention", "layers x heads", "inputs", "D1 tight, head mean [95% CI]",
        "D1 tight, per head [95% CI]", "random, matched n [95% CI]", "forced"]),
        "The pretrained models side by side: the share of D1 verdicts that are exact equalities, pooled over "
        "layers and inputs (head-averaged attention; every head), beside random Dirichlet(1) matrices of the "
        "same token counts (95% intervals: " + CLUSTER_NOTE + "); forced: causal attention makes every verdict tight, a check "
        "of the causal corollary, not a measurement (every column: the data table trained-models).", prov,
        campaigns=camps + (baselines,), command=part.commands[0]))
    part.figures.append(Figure("trained-depth", _depth_curves(data_by_model),
                               "Share of inputs with D1 equality against relative depth, per model (head mean, "
                               "all tokens; causal models dashed: forced).", prov, size=HALF))


def _float_part(part: Part, found: dict) -> None:
    """The table ``trained-float`` and its macros: what a float test of D1 at tolerance 0 gets wrong,
    for each of its three implementations (:mod:`numerics.dobrushin.float_tests`) and the constant
    answer "always tight". Macros per model word W (MiniLM, ...), precision P (float32, float64) and
    test X (AsStored, Renormalised, Condition): ``\\WFloatPXWrong`` ("k/n [lo, hi]"), ``...Violated``,
    ``...TightMissed``; ``\\WAlwaysTightWrong``; the renormalised test also under the names without X
    (``\\MiniLMFloatThreeTwoWrong``: the suite's original test); totals over the models
    ``\\FloatFloatPXViolatedTotal`` (and ``\\FloatFloatPViolatedTotal``, renormalised), ``\\FloatVerdictsTotal``."""
    rows = float_rows({TITLES.get(name, name): records for name, (_, records) in found.items()})
    per_model = len(FLOAT_TESTS) + 1
    totals: dict = {}
    for k, name in enumerate(found):
        word = MODELS.get(name, name)
        block = rows[k * per_model:(k + 1) * per_model]
        constant = [dict(zip(FLOAT_COLUMNS, r)) for r in block if r[1] == ALWAYS_TIGHT][0]["float32 wrong [95% CI]"]
        versus: dict = {}
        for row in block:
            cells = dict(zip(FLOAT_COLUMNS, row))
            if cells["float test"] != ALWAYS_TIGHT and cells["float32 wrong [95% CI]"] != "-":
                for dt in ("float32", "float64"):
                    a, b = int(cells[f"{dt} wrong [95% CI]"].split("/")[0]), int(constant.split("/")[0])
                    versus[(dt, cells["float test"])] = "more" if a > b else "fewer" if a < b else "as many"
        for dt in ("float32", "float64"):      # the two == tests against the constant answer, as one phrase
            w1, w2 = versus.get((dt, "as-stored")), versus.get((dt, "renormalised"))
            if w1 is None or w2 is None:
                phrase = "-"
            elif w1 == w2:
                phrase = f"both {w1} errors than the constant answer" if w1 != "as many" else \
                    "both as many errors as the constant answer"
            else:
                phrase = (f"as stored {w1}, renormalised {w2} errors than the constant answer"
                          .replace("as many,", "as many as,").replace("as many errors than", "as many errors as"))
            part.macro(phrase, word, dt, "versus constant")
        for row in block:
            cells = dict(zip(FLOAT_COLUMNS, row))
            test = cells["float test"]
            if test == ALWAYS_TIGHT:
                part.macro(cells["float32 wrong [95% CI]"], word, "always tight wrong")
                continue
            for dt in ("float32", "float64"):
                names = [(word, dt, test)] + ([(word, dt)] if test == "renormalised" else [])
                for base in names:
                    part.macro(cells[f"{dt} wrong [95% CI]"], *base, "wrong")
                    part.macro(str(cells[f"{dt}: violated"]), *base, "violated")
                    part.macro(str(cells[f"{dt}: tight missed"]), *base, "tight missed")
                v = cells[f"{dt}: violated"]
                totals[(dt, test)] = totals.get((dt, test), 0) + (v if isinstance(v, int) else 0)
    for (dt, test), v in totals.items():
        part.macro(str(v), "float", dt, test, "violated total")
        if test == "renormalised":
            part.macro(str(v), "float", dt, "violated total")
    part.macro(str(sum(r[2] for r in rows[::per_model])), "float verdicts total")
    part.tables.append(Table(
        "trained-float", frame(rows, FLOAT_COLUMNS),
        FLOAT_CAPTION.format(of="of the measured models", cluster=CLUSTER_NOTE),
        "campaigns " + ", ".join(c for c, _ in found.values()) + "; float verdicts by "
        "numerics.dobrushin.float_tests in each precision",
        campaigns=tuple(c for c, _ in found.values()), command=part.commands[0]))


CONTROLS = (("real", "D1 tight, trained [95% CI]", tight),
            ("columns", "columns permuted [95% CI]", lambda r: r["extra"].get("control_columns") == "tight"),
            ("offdiagonal", "off-diagonal shuffled [95% CI]",
             lambda r: r["extra"].get("control_offdiagonal") == "tight"))
CONTROLS_COLUMNS = (["model", "attention", "head means"] + [c[1] for c in CONTROLS]
                    + ["random Dirichlet, matched n [95% CI]", "every pair self-dominant"])
PAIRS_COLUMNS = ["model", "head means", "maximiser: special token", "maximiser: adjacent", "maximiser: other",
                 "tight: special token", "tight: adjacent", "tight: other",
                 "every pair self-dominant (input, layer)", "inputs: in every layer", "inputs: in some layer"]


REFERENCES = ("columns", "offdiagonal", "random")
REFERENCE_WORDS = {"columns": "the share with the columns permuted",
                   "offdiagonal": "the share with the off-diagonal entries shuffled", "random": "the random share"}
MIN_INPUTS = 10     # fewer inputs decide nothing: a paired test over inputs (a sign test) could not reach the
                    # simultaneous level with fewer than about 9, and a bootstrap over a few inputs understates the spread


def _per_input(records: list, hit: Any) -> dict:
    """``{(input, text hash): (hits, verdicts)}`` of ``records``."""
    out: dict = {}
    for r in records:
        p = r["provenance"]
        k, n = out.get((p["input"], p.get("text_sha")), (0, 0))
        out[(p["input"], p.get("text_sha"))] = (k + bool(hit(r)), n + 1)
    return out


def _control_tests(part: Part, data_by_model: dict) -> None:
    """The trained head mean's pooled D1 share against each reference of :data:`REFERENCES` (its two
    controls, random Dirichlet matrices of the same token counts), per bidirectional model with at
    least :data:`MIN_INPUTS` inputs (a causal model's share is forced; fewer inputs decide nothing): the
    difference with a paired cluster-bootstrap interval over inputs at the simultaneous level
    1 - alpha/m (Bonferroni over the m comparisons made), and the word it allows: "above", "below", or
    "not separable from" where the interval holds 0; so a decision and its interval never disagree.
    Macros ``\\WControlXDiff``, ``...DiffInterval``, ``...Word`` (X: Columns, Offdiagonal, Random; "-"
    where not compared), ``\\WControlSentence`` (the comparisons of W as one clause, or why none) and
    ``\\ControlComparisons``, ``\\ControlLevel``, ``\\ControlMinInputs``."""
    bidirectional = [(name, v) for name, v in data_by_model.items() if not v[3]]
    tested = [(name, v) for name, v in bidirectional if len(v[0]["inputs"]) >= MIN_INPUTS]
    m = len(tested) * len(REFERENCES)
    level = 1 - ALPHA / max(m, 1)
    part.macro(str(m), "control comparisons")
    part.macro(f"{100 * level:.1f}", "control level")
    part.macro(str(MIN_INPUTS), "control min inputs")
    from verification.stats import BOOTSTRAP_RESAMPLES

    part.macro(str(BOOTSTRAP_RESAMPLES), "trained bootstrap resamples")
    hits = dict(columns=lambda r: r["extra"].get("control_columns") == "tight",
                offdiagonal=lambda r: r["extra"].get("control_offdiagonal") == "tight")
    for name, (data, L, H, causal, base) in bidirectional:
        word = MODELS.get(name, name)
        if (name, (data, L, H, causal, base)) not in tested:
            for ref in REFERENCES:
                for key in ("diff", "diff interval", "word"):
                    part.macro("-", word, "control", ref, key)
            part.macro(f"{SHORT.get(name, name)}: {len(data['inputs'])} inputs, too few to compare (at least "
                       f"{MIN_INPUTS})", word, "control sentence")
            continue
        mean = [r for rs in data["layer"]["all"].values() for r in rs]
        real = _per_input(mean, tight)
        keys = sorted(real)
        slots = baseline_slots(sizes_of(data))["all"]
        clauses = []
        for ref in REFERENCES:
            if ref == "random":
                other = {key: base[("dirichlet",) + tuple(slots[key])] for key in keys}
            else:
                other = _per_input(mean, hits[ref])
            k1, n1 = [real[k][0] for k in keys], [real[k][1] for k in keys]
            k2, n2 = [other[k][0] for k in keys], [other[k][1] for k in keys]
            d = sum(k1) / sum(n1) - sum(k2) / sum(n2)
            lo, hi = cluster_bootstrap_difference(k1, n1, k2, n2, BOOTSTRAP_SEED, level=level)
            said = "above" if lo > 0 else "below" if hi < 0 else "not separable from"
            part.macro(f"{d:+.2f}", word, "control", ref, "diff")
            part.macro(f"[{lo:+.2f}, {hi:+.2f}]", word, "control", ref, "diff interval")
            part.macro(said, word, "control", ref, "word")
            clauses.append(f"{said} {REFERENCE_WORDS[ref]} ({d:+.2f} [{lo:+.2f}, {hi:+.2f}])")
        part.macro(f"{SHORT.get(name, name)}: " + ", ".join(clauses), word, "control sentence")
    shares = {}
    for name, (data, *_rest) in bidirectional:
        mean = [r for rs in data["layer"]["all"].values() for r in rs]
        slots = baseline_slots(sizes_of(data))["all"]
        rk, rn = baseline_share(_rest[-1], slots, set(slots), "dirichlet")
        shares[name] = (sum(hits["columns"](r) for r in mean) / len(mean),
                        sum(hits["offdiagonal"](r) for r in mean) / len(mean), rk / max(rn, 1))
    ok = bool(shares) and all(c < o and c <= r + 0.05 for c, o, r in shares.values())
    part.guard(ok, "controls diagonal mass", detail="; ".join(f"{n}: columns {c:.2f}, off-diagonal {o:.2f}, random {r:.2f}"
                                                              for n, (c, o, r) in shares.items()))


def _kinds(rs: list) -> list[str]:
    from numerics.dobrushin.controls import PAIR_KINDS

    return [f"{sum(r['extra'].get('pair_kind') == k for r in rs)}/{len(rs)}" for k in PAIR_KINDS]


def _controls_part(part: Part, found: dict, data_by_model: dict, baselines: str) -> None:
    """The table ``trained-controls`` (D1's pooled equality share on the head mean beside its two
    controls and matched random matrices, cluster-bootstrap intervals over inputs) and the data table
    ``trained-pairs`` (the kind of the maximising pair; every pair mutually self-dominant), with
    their macros per model word W: ``\\WControlReal`` / ``Columns`` / ``Offdiagonal`` (share) and
    ``...Interval``, ``\\WControlRandom(Interval)``, ``\\WEveryPairCells`` (k/N of the (input, layer)
    head means), ``\\WEveryPairInputsAll`` / ``...Some`` (inputs where it holds in every / some layer),
    ``\\WPairSpecial`` / ``Adjacent`` / ``Other`` (k/N of the head means) and ``\\WTightPairSpecial`` ...
    (of the tight ones); ``\\WModelsMeanWilson``: the Wilson interval the pooled head-mean share had
    before the cluster bootstrap (verdicts counted as independent), for comparison."""
    from numerics.dobrushin.controls import GENERATOR, PAIR_KINDS

    rows, prows = [], []
    _control_tests(part, data_by_model)
    for name, (data, L, H, causal, base) in data_by_model.items():
        word = MODELS.get(name, name)
        mean = [r for rs in data["layer"]["all"].values() for r in rs]
        if not mean or "control_columns" not in mean[0]["extra"]:
            raise MissingCampaign(found[name][0], part.commands[0])
        row = [SHORT.get(name, name), "causal" if causal else "bidirectional", len(mean)]
        for key, _, hit in CONTROLS:
            k = sum(bool(hit(r)) for r in mean)
            cell = cluster_cell(mean, hit)
            row.append(f"{_s(k, len(mean))} {cell}")
            part.macro(_s(k, len(mean)), word, "control", key)
            part.macro(cell, word, "control", key, "interval")
        k, n = _tight(mean)
        part.macro(wilson_cell(k, n), word, "models mean Wilson")
        slots = baseline_slots(sizes_of(data))["all"]
        rk, rn = baseline_share(base, slots, set(slots), "dirichlet")
        rcell = random_cell(base, slots, "dirichlet")
        part.macro(_s(rk, rn), word, "control random")
        part.macro(rcell, word, "control random", "interval")
        every = [r for r in mean if r["extra"].get("every_pair_self_dominant")]
        by_input: dict = {}
        for r in mean:
            p = r["provenance"]
            by_input.setdefault((p["input"], p.get("text_sha")), []).append(bool(r["extra"].get("every_pair_self_dominant")))
        all_layers = sum(all(v) for v in by_input.values())
        some_layer = sum(any(v) for v in by_input.values())
        part.macro(f"{len(every)}/{len(mean)}", word, "every pair cells")
        part.macro(f"{all_layers}/{len(by_input)}", word, "every pair inputs all")
        part.macro(f"{some_layer}/{len(by_input)}", word, "every pair inputs some")
        row += [f"{_s(rk, rn)} {rcell}", f"{len(every)}/{len(mean)}"]
        rows.append(row)
        tights = [r for r in mean if tight(r)]
        kinds, tkinds = _kinds(mean), _kinds(tights)
        for kind, cell, tcell in zip(PAIR_KINDS, kinds, tkinds):
            part.macro(cell, word, "pair", kind)
            part.macro(tcell, word, "tight pair", kind)
        prows.append([SHORT.get(name, name), len(mean)] + kinds + tkinds
                     + [f"{len(every)}/{len(mean)}", f"{all_layers}/{len(by_input)}", f"{some_layer}/{len(by_input)}"])
    camps = tuple(c for c, _ in found.values())
    prov = ("campaigns " + ", ".join(camps) + f"; random baselines: campaign {baselines}; controls drawn by "
            f"{GENERATOR}, control seed 0 (numerics.dobrushin.controls); D1 verdicts exact; {CLUSTER_NOTE}")
    part.tables.append(Table("trained-controls", frame(rows, CONTROLS_COLUMNS),
        "Controls for D1's equality share: the head-averaged attention on all tokens, pooled over layers and "
        "inputs, beside the same matrices with their columns permuted (one uniform permutation per input: every "
        "row keeps its distribution, the alignment of rows with columns is removed), with each row's off-diagonal "
        "entries shuffled (per row and layer: diagonal mass and row entropy kept exactly), and random Dirichlet(1) "
        "matrices of the same token counts; every verdict decided exactly. Last column: head means on which every "
        "pair is mutually self-dominant (each column's largest entry on the diagonal), which forces equality. "
        "95% intervals: " + CLUSTER_NOTE + "; for causal models every real verdict is tight by the causal corollary.",
        prov, campaigns=camps + (baselines,), command=part.commands[0]))
    part.data_tables.append(Table("trained-pairs", frame(prows, PAIRS_COLUMNS),
        "Which pair attains $\\delta(A)$ (the maximising pair the exact check reports) on the head-averaged attention, all "
        "tokens: a pair with a special token (CLS, SEP, BOS, ...), two adjacent tokens, or another pair; over every "
        "head mean and over the tight ones; and the head means on which every pair is mutually self-dominant, with "
        "the inputs on which that holds in every layer and in some layer.", prov, campaigns=camps,
        command=part.commands[0]))


def _chain_curves(series: list):
    """The figure ``trained-chain-ratio``: per model, the median over inputs of the D2 chain ratio
    delta(R_l) / prod_k delta(Ahat_k) against depth l, with its 95% percentile-bootstrap band."""
    def draw(ax: Any) -> None:
        for label, causal, xs, med, lo, hi in series:
            line, = ax.plot(xs, med, "--" if causal else "-", marker="o", ms=3, label=label)
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_yscale("log")
        ax.set_xlabel("depth $l$ (layers multiplied)")
        ax.set_ylabel(r"median $\delta(R_l) / \prod_{k \leq l} \delta(\hat A_k)$")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False,   # below: never over data
                  fontsize="small")
    return draw


def _chain_part(part: Part, found: dict, data_by_model: dict) -> None:
    """The figure ``trained-chain-ratio`` (how loose rollout's product bound is, by depth, every model)
    and its macros ``\\WChainRatioLastLayer`` (median [95% CI]) per model word W."""
    series = []
    for name, (data, L, H, causal, _) in data_by_model.items():
        roll = data["roll"]["all"]
        xs, med, lo, hi = [], [], [], []
        for l in sorted(roll):
            m, (a, b) = median_interval((r["extra"].get("ratio_R") for r in roll[l]), l)
            if m is None:
                continue
            xs.append(l + 1)
            med.append(m)
            lo.append(m if np.isnan(a) else a)
            hi.append(m if np.isnan(b) else b)
        series.append((LEGEND.get(name, name), causal, xs, med, lo, hi))
        m, ci = _interval((r["extra"].get("ratio_R") for r in roll[L - 1]), L - 1)
        part.macro(f"{m} {ci}" if ci != "-" else m, MODELS.get(name, name), "chain ratio last layer")
    camps = tuple(c for c, _ in found.values())
    prov = ("campaigns " + ", ".join(camps) + "; inputs " + ", ".join(f"{LEGEND.get(n, n)} {len(v[0]['inputs'])}"
                                                         for n, v in data_by_model.items())
            + "; all tokens, head-averaged attention, rollout residual "
            f"{RESIDUAL}, {FUSION} head fusion; medians over inputs with 95% percentile-bootstrap bands (scipy.stats."
            "bootstrap, 999 resamples, seed = layer index); ratios whose numerator is within rounding of 0 left out")
    part.figures.append(Figure("trained-chain-ratio", _chain_curves(series),
                               "How loose rollout's product bound is: the median over inputs of "
                               "$\\delta(R_l)/\\prod_{k \\le l}\\delta(\\hat A_k)$ by depth, per model (1 at $l = 1$; "
                               "below 1 wherever D2's chain is strict; causal models dashed), with 95% bootstrap "
                               "bands.", prov, size=HALF))
