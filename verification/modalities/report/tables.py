"""The modalities family's tables (:func:`parts`: each defined once as a
:class:`verification.report.tables.Table`, for the files and the paper alike) and figures, rendered
from the family's findings (:func:`verification.modalities.findings.findings`), and the files of the
command line and the main job (:func:`write_report`: Markdown, CSV, PNG, PDF).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from verification.modalities.checks import campaign_prefix
from verification.measure.baselines import FAMILIES
from verification.paper.notation.modalities import DELTA_A_L
from verification.modalities.findings import Findings
from verification.modalities.findings.stages import VARIANTS, Stage, final, initial
from verification.modalities.report.seeds import (matched_table, power_table, seeds_table, share_cell,
                                                  summary_table)
from verification.report.aggregate import median
from verification.report.tables import Table, print_table


# -- figures: D1 equality share against relative depth and against the training step (each a
# draw(ax) closure: write_report saves them, the paper part embeds them) ------------------------------

LABELS = {"vit": "ViT (digits)", "vit-reg": "ViT with registers (digits)", "ft-cancer": "FT-Transformer (breast cancer)",
          "ft-wine": "FT-Transformer (wine)"}
# the summary table's rows (FT: FT-Transformer, as its caption says): short enough that the model column
# is set at its natural width in both of the table's column blocks, beside the intervals of the words
SHORT = {"vit": "ViT (digits)", "vit-reg": "ViT + registers", "ft-cancer": "FT (breast cancer)", "ft-wine": "FT (wine)"}
# legend entries: names, not the plan's keys (short enough to sit beside the plot)
LEGEND = {"vit": "ViT", "vit-reg": "ViT with registers", "ft-cancer": "FT-Transformer (cancer)",
          "ft-wine": "FT-Transformer (wine)", "minilm": "MiniLM", "smollm2": "SmolLM2"}
COLOURS = {"vit": "C0", "vit-reg": "C1", "ft-cancer": "C2", "ft-wine": "C3", "minilm": "0.35", "smollm2": "0.65"}


def relative(s: Stage) -> list[float]:
    """Layer l (0-based) of L layers at relative depth l / (L - 1), the first layer at 0 and the last at
    1, as the pretrained models' depth figure: models of any depth side by side (one layer: 0)."""
    return [l / max(len(s.layers) - 1, 1) for l in s.layers]


def depth_figure(stages: list[Stage], texts: list[Stage], variant: str) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            for s, style in ((initial(stages, m), ":"), (final(stages, m), "-")):
                if s is None:
                    continue                # one legend entry per model: the line styles are in the caption
                ax.plot(relative(s), [s.share(variant, l) for l in s.layers], style, marker="o",
                        color=COLOURS.get(m), label=LEGEND.get(m, m) if style == "-" else None)
        for s in texts:
            ax.plot(relative(s), [s.share(variant, l) for l in s.layers], "--", marker=".",
                    color=COLOURS.get(s.model), label=f"{LEGEND.get(s.model, s.model)} (text)")
        ax.set_xlabel("relative depth $l / (L - 1)$")
        ax.set_ylabel(f"share with D1 equality\n({variant} tokens)")
        ax.set_ylim(-0.03, 1.03)
        beside(ax)
    return draw


def training_figure(stages: list[Stage]) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            ss = [s for s in stages if s.model == m]
            steps = [s.step for s in ss]
            ax.plot(steps, [s.mean_share("content") for s in ss], "-", marker="o", color=COLOURS.get(m), label=LEGEND.get(m, m))
            ax.plot(steps, [s.mean_share("all") for s in ss], ":", marker=".", color=COLOURS.get(m))
            ax.plot(steps, [s.accuracy for s in ss], "--", marker="x", color=COLOURS.get(m), alpha=0.6)
        ax.set_xlabel("training step")
        ax.set_ylabel("share / accuracy")
        ax.set_ylim(-0.03, 1.03)
        beside(ax)
    return draw


def beside(ax: Any) -> None:
    """The legend (one entry per model, at the caption's font size) below the plot, never over the
    data, the figure sized so that plot and legend fit the text width."""
    ax.figure.set_size_inches(5.6, 2.9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=3, frameon=False)


def label(s: Stage) -> str:
    """A stage's column header: the text model's family, or the model at "init" / "epoch E"."""
    if s.epoch is None:
        return s.family
    return f"{s.model} {'init' if s.epoch == 0 else f'epoch {s.epoch}'}"


def side_by_side(stages: list[Stage], texts: list[Stage]) -> tuple[list, list]:
    """Rows = layers; one column per (model, init / trained) and per text model; each cell the
    share of inputs with D1 equality, all tokens / content tokens."""
    cols_st: list[Stage] = []
    for m in dict.fromkeys(s.model for s in stages):
        cols_st += [s for s in (initial(stages, m), final(stages, m)) if s is not None]
    cols_st += texts
    cols = ["layer"]
    for s in cols_st:
        acc = "" if s.accuracy is None else f", acc {s.accuracy:.3f}"
        cols.append(f"{label(s)} (n={len(s.inputs)}{acc})")
    depth = max((len(s.layers) for s in cols_st), default=0)
    rows = []
    for l in range(depth):
        row: list = [l]
        for s in cols_st:
            a, c = s.share("all", l), s.share("content", l)
            row.append("-" if a is None else f"{a:.2f} / {'-' if c is None else f'{c:.2f}'}")
        rows.append(row)
    return rows, cols


def detail(stages: list[Stage]) -> tuple[list, list]:
    """Long table: model, checkpoint, accuracy, layer, shares with Wilson intervals, per-head
    share, median slack, D2 chain share, which tokens carry the pair attaining the Dobrushin
    coefficient where equality fails."""
    cols = ["model", "epoch", "step", "test acc", "layer", "D1 tight, all tokens", "D1 tight, content tokens",
            "head share (all)", "head share (content)", "median slack (content)", "D2 chain tight (all)",
            "pair attaining the Dobrushin coefficient where D1 fails (all)"]
    rows = []
    for s in stages:
        for l in s.layers:
            hk = [s.heads.get((v, l)) for v in VARIANTS]
            ch = s.chain.get(("all", l))
            fails = ", ".join(f"{k} {n}" for k, n in sorted(s.fail_pairs.get(l, {}).items(),
                                                             key=lambda kv: (-kv[1], kv[0]))) or "-"
            cell = lambda v: share_cell(s.tight[(v, l)]) if (v, l) in s.tight and s.tight[(v, l)].n else "-"  # noqa: E731
            rows.append([s.model, s.epoch, s.step, s.accuracy, l, cell("all"), cell("content"),
                         *(round(h.value, 4) if h is not None and h.n else None for h in hk),
                         median(s.slack.get(("content", l), ())),
                         f"{ch.k}/{ch.n}" if ch is not None and ch.n else "-", fails])
    return rows, cols


def training(stages: list[Stage]) -> tuple[list, list]:
    """Per model and checkpoint: accuracy and the layer-averaged shares."""
    cols = ["model", "epoch", "step", "fraction", "test acc", "inputs", "mean share all", "mean share content",
            "first layer all / content", "last layer all / content"]
    rows = []
    for s in stages:
        ls = s.layers
        f = lambda l: " / ".join("-" if x is None else f"{x:.2f}" for x in (s.share("all", l), s.share("content", l)))  # noqa: E731
        rows.append([s.model, s.epoch, s.step, s.fraction, s.accuracy, len(s.inputs), s.mean_share("all"),
                     s.mean_share("content"), f(ls[0]) if ls else "-", f(ls[-1]) if ls else "-"])
    return rows, cols


def text_note(f: Findings) -> str:
    """What the text rows as-is are: per text model its campaign and inputs, or what is missing."""
    return "; ".join(f"{t.family}: campaign {t.campaign}, {t.inputs} inputs" if t.campaign is not None else
                     f"{t.family}: no stored campaign {t.missing} (run `{t.command}`), omitted"
                     for t in f.text_sources)


def matched_note(f: Findings) -> str:
    """What the text at matched n is (or which campaigns were looked for)."""
    m = f.matched
    if not m.campaigns:
        return f"{m.model} at matched n: no stored campaign {m.prefix}T<n>:k{m.limit}:*"
    return (f"{m.model} cut to T tokens ({', '.join(f'T{T}' for T in m.lengths)}), first {m.limit} inputs "
            "of the trained main job's corpus with at least T tokens")


def provenance(f: Findings, note: str = "") -> str:
    """The provenance line of the tables: campaigns, preset, seed, data, weights, text rows."""
    preset, seed, stages = f.preset, f.seed, f.stages
    fps = ", ".join(f"{s.model}@e{s.epoch}={s.weights}" for s in stages if s.epoch is not None)
    return (f"campaigns {campaign_prefix(preset, seed)}*; preset {preset}; seed {seed}; data: scikit-learn "
            f"bundled sets, stratified 75/25 split (seed {seed}); weights sha256 {fps}; D1 verdicts exact "
            f"(rational), head mean, content = CLS and registers dropped with exact row renormalisation"
            + (f"; text rows: {note}" if note else ""))


CAPTIONS = {
    "modalities_share": "Share of test inputs where Theorem D1 holds with equality (exact), per layer, "
                        "head-averaged attention, all tokens / content tokens (CLS and registers dropped, rows "
                        "renormalised exactly); each model at initialisation and after training (test accuracy "
                        "in the header), text models beside them.",
    "modalities_detail": "Per model, checkpoint and layer: D1 equality shares with 95% Wilson intervals, per-head "
                         "shares, median slack, rollout chain (D2) tightness, and which tokens carry the pair "
                         f"attaining {DELTA_A_L} where equality fails.",
    "modalities_training": "How the share moves during training: layer-averaged D1 equality shares and test "
                           "accuracy at each kept checkpoint (epoch 0: initialisation).",
    "modalities_seeds": "Across training seeds (each seed its own split, initial weights and batch order): per "
                        "seed the share of test inputs with D1 equality averaged over layers, after training; "
                        "mean, sd and the t interval over seeds (seeds minus one degrees of freedom), simultaneous at "
                        "1 - alpha/m over the m comparisons of the run (Bonferroni; the level in the header); the same "
                        "architecture at initialisation on the same inputs, and the paired change from initialisation "
                        "to the trained model (seeds minus one degrees of freedom), each word decided by that interval.",
    "modalities_matched": r"Each model beside baselines at its own token count $n$: random matrices of each family "
                          r"(Dirichlet rows; softmax of Gaussian logits divided by $T$), D1 decided by the stress sweep's check "
                          "(Wilson 95%), their range; the trained seed mean against each reference at the seed level "
                          "(the distance of the trained t interval over seeds, simultaneous at 1 - alpha/m over the m "
                          "comparisons of the run (Bonferroni), from the reference's 95% interval: a word other than not "
                          "separable exactly where that interval excludes 0; its p-value the one-sided t against the "
                          "nearer end, doubled, times m; MDE at power 0.8 at the same level where nothing is separable); "
                          "inside the random range only by TOST (the same interval within the range widened by the "
                          "margin); MiniLM with its inputs cut to $n$ tokens (per input the share of layers with "
                          "equality; 95% t interval over inputs) and as-is.",
    "modalities_summary": "Each model trained here (FT: FT-Transformer) on content tokens (CLS and registers dropped): the share of test "
                          "inputs with D1 equality, mean over training seeds with its t interval, against the random "
                          "range at the model's own token count n, MiniLM cut to n tokens and the model at "
                          "initialisation, each word beside the difference and interval that decide it (the distance "
                          "from the reference's 95% interval; the paired change): seed-level t intervals simultaneous "
                          "over every comparison of the run (Bonferroni; the level in the header), a difference written "
                          "exactly where the interval excludes 0, inside only by TOST at that level (margin 0.05), each "
                          "not separable with its minimum detectable effect (power 0.8).",
    "modalities_power": "The power calculation behind the number of seeds: per comparison the seed-level sd, the "
                        "minimum detectable effect (MDE) of these seeds at power 0.8 (two-sided t at the Bonferroni "
                        "level of every decision), and the seeds a difference of 0.10 in share would need.",
}




def parts(data: Findings) -> tuple[list, list, str]:
    """(tables, each defined once as a :class:`verification.report.tables.Table` for every output,
    figures as (name, draw, caption), provenance) of the findings ``data``."""
    stages, texts, note, seed = list(data.stages), list(data.texts), text_note(data), data.seed
    seeds, mnote = data.seeds, matched_note(data)
    prov = provenance(data, note) + f"; seeds {seeds}; text at matched n: {mnote}"
    one = f" Seed {seed} (of the seeds {', '.join(map(str, seeds))}; every seed: the seeds table)."
    sbs = CAPTIONS["modalities_share"] + one + ("" if len(texts) == 2 else f" Text rows: {note}.")
    made = dict(campaigns=data.campaigns, command=data.command)
    tables = [Table.from_rows(name, *rows_cols, cap, prov, **made)
              for name, rows_cols, cap in (
                  ("modalities_share", side_by_side(stages, texts), sbs),
                  ("modalities_detail", detail(stages), CAPTIONS["modalities_detail"] + one),
                  ("modalities_training", training(stages), CAPTIONS["modalities_training"] + one),
                  ("modalities_seeds", seeds_table(data.summaries), CAPTIONS["modalities_seeds"]),
                  ("modalities_matched", matched_table(data.summaries, FAMILIES),
                   CAPTIONS["modalities_matched"] + f" Text: {mnote}."),
                  ("modalities_power", power_table(data.summaries), CAPTIONS["modalities_power"]),
                  ("modalities_summary", summary_table(data.summaries, SHORT), CAPTIONS["modalities_summary"]))]
    figures = [(f"modalities_share_vs_depth_{v}", depth_figure(stages, texts, v),
                f"D1 equality share vs relative depth ({v} tokens, seed {seed}): dotted = initialisation, solid = "
                "trained, dashed = text models (when stored).") for v in ("content", "all")]
    figures.append(("modalities_share_vs_step", training_figure(stages),
                    f"D1 equality share (layer mean) and test accuracy vs training step (seed {seed})."))
    return tables, figures, prov


def write_report(data: Findings, out_dir: Path, console: Any) -> dict:
    """Write the tables and figures of the findings ``data`` under ``out_dir`` and print the
    side-by-side table."""
    from verification.report.aggregate import pyplot
    from verification.report.figures import save_figure

    tables, figures, prov = parts(data)
    written: dict = {}
    for t in tables:
        written[t.name] = t.write(Path(out_dir) / "tables")
        if t.name != "modalities_detail":
            print_table(console, t.rows(), t.columns(), t.caption)
    plt = pyplot()
    for name, draw, cap in figures:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        draw(ax)
        ax.set_title(cap, fontsize=7, wrap=True)
        fig.tight_layout()
        written[name] = save_figure(fig, Path(out_dir) / "figures", name, prov)
        plt.close(fig)
    if len(data.texts) < 2:
        console.print(f"[dim]text rows: {text_note(data)}[/dim]")
    return written
