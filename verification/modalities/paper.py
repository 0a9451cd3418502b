"""The modalities report as tables, figures and macros (paper interface), and its files.

:func:`paper_part` reads the store only. :func:`write_report` writes the same tables (Markdown,
CSV, LaTeX) and figures (PNG, PDF) under ``--out`` for the command line and the main job.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable, Optional

from verification.modalities.report import (Stage, detail, final, initial, modality_stages, provenance,
                                            side_by_side, text_stages, training)
from verification.report.paper import Figure, MissingCampaign, Part, Table
from verification.modalities.checks import campaign_prefix

COLOURS = {"vit": "C0", "vit-reg": "C1", "ft-cancer": "C2", "ft-wine": "C3", "minilm": "0.35", "smollm2": "0.65"}
CAPTIONS = {
    "modalities_share": "Share of test inputs where Theorem D1 holds with equality (exact), per layer, "
                        "head-averaged attention, all tokens / content tokens (CLS and registers dropped, rows "
                        "renormalised exactly); each model at initialisation and after training (test accuracy "
                        "in the header), text models beside them.",
    "modalities_detail": "Per model, checkpoint and layer: D1 equality shares with 95% Wilson intervals, per-head "
                         "shares, median slack, rollout chain (D2) tightness, and which tokens carry the pair "
                         "attaining delta where equality fails.",
    "modalities_training": "How the share moves during training: layer-averaged D1 equality shares and test "
                           "accuracy at each kept checkpoint (epoch 0: initialisation).",
}


def relative(s: Stage) -> list[float]:
    """Layer l (0-based) of L layers at relative depth (l + 1) / L: models of any depth side by side."""
    return [(l + 1) / len(s.layers) for l in s.layers]


def depth_figure(stages: list[Stage], texts: list[Stage], variant: str) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            for s, style in ((initial(stages, m), ":"), (final(stages, m), "-")):
                if s is None:
                    continue
                acc = "" if s.accuracy is None else f" (acc {s.accuracy:.2f})"
                ax.plot(relative(s), [s.share(variant, l) for l in s.layers], style, marker="o",
                        color=COLOURS.get(m), label=f"{s.label}{acc}")
        for s in texts:
            ax.plot(relative(s), [s.share(variant, l) for l in s.layers], "--", marker=".",
                    color=COLOURS.get(s.model), label=s.family)
        ax.set_xlabel("relative depth (layer / number of layers)")
        ax.set_ylabel(f"share with D1 equality ({variant} tokens)")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return draw


def training_figure(stages: list[Stage]) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            ss = [s for s in stages if s.model == m]
            steps = [s.step for s in ss]
            ax.plot(steps, [s.mean_share("content") for s in ss], "-", marker="o", color=COLOURS.get(m),
                    label=f"{m}: D1 share (content, layer mean)")
            ax.plot(steps, [s.mean_share("all") for s in ss], ":", marker=".", color=COLOURS.get(m),
                    label=f"{m}: D1 share (all tokens)")
            ax.plot(steps, [s.accuracy for s in ss], "--", marker="x", color=COLOURS.get(m), alpha=0.6,
                    label=f"{m}: test accuracy")
        ax.set_xlabel("training step")
        ax.set_ylabel("share / accuracy")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return draw


def parts(stages: list[Stage], texts: list[Stage], note: str, preset: str, seed: int) -> tuple[list, list, str]:
    """(tables as (name, rows, cols, caption), figures as (name, draw, caption), provenance)."""
    prov = provenance(preset, seed, stages, note)
    sbs = CAPTIONS["modalities_share"] + ("" if len(texts) == 2 else f" Text rows: {note}.")
    tables = [("modalities_share", *side_by_side(stages, texts), sbs),
              ("modalities_detail", *detail(stages), CAPTIONS["modalities_detail"]),
              ("modalities_training", *training(stages), CAPTIONS["modalities_training"])]
    figures = [(f"modalities_share_vs_depth_{v}", depth_figure(stages, texts, v),
                f"D1 equality share vs relative depth ({v} tokens): dotted = initialisation, solid = trained, dashed = "
                "text models (when stored).") for v in ("content", "all")]
    figures.append(("modalities_share_vs_step", training_figure(stages),
                    "D1 equality share (layer mean) and test accuracy vs training step."))
    return tables, figures, prov


def load(store: Any, preset: str, seed: int, campaigns: Optional[list[str]] = None) -> tuple[list, list, str]:
    stages = modality_stages(store, preset, seed, campaigns)
    if not stages:
        raise MissingCampaign(f"{campaign_prefix(preset, seed)}*", f"attnbounds modalities --preset {preset} --seed {seed}")
    texts, note = text_stages(store, preset == "paper", seed)
    return stages, texts, note


def paper_part(store: Any, seed: int = 0, full: bool = False) -> Part:
    """Tables, figures and macros of the modalities family (quick preset; ``full``: paper preset)."""
    return preset_part(store, "paper" if full else "quick", seed)


def preset_part(store: Any, preset: str, seed: int = 0, require_text: bool = True) -> Part:
    """The paper part of any preset (``tiny`` in tests). The prose compares with the text models:
    ``require_text`` makes their missing campaigns a :class:`MissingCampaign` too."""
    import pandas as pd

    from verification.modalities.report import TEXT_MODELS
    from verification.trained.paper import campaign_prefix as text_prefix
    from verification.trained.paper import rollout_command

    full = preset == "paper"                # the text rows: the trained main job at the same settings
    stages = modality_stages(store, preset, seed)
    texts, note = text_stages(store, full, seed)
    errors = [] if stages else [MissingCampaign(f"{campaign_prefix(preset, seed)}*",
                                                f"attnbounds modalities --preset {preset} --seed {seed}")]
    if require_text:                       # every missing campaign named, each with its command
        errors += [MissingCampaign(f"{text_prefix(m, full)}<fingerprint>", rollout_command(m, full))
                   for m in TEXT_MODELS if m not in {s.model for s in texts}]
    if errors:
        raise MissingCampaign.combine(errors)
    tables, figures, prov = parts(stages, texts, note, preset, seed)
    part = Part(family="modalities", commands=[f"attnbounds modalities --preset {preset} --seed {seed}"])
    for name, rows, cols, cap in tables:
        part.tables.append(Table(name, pd.DataFrame(rows, columns=cols), cap, prov))
    for name, draw, cap in figures:
        part.figures.append(Figure(name, draw, cap, prov))
    r2 = lambda x: None if x is None else round(float(x), 2)  # noqa: E731
    for m in dict.fromkeys(s.model for s in stages):
        for tag, s in (("Init", initial(stages, m)), ("Trained", final(stages, m))):
            if s is None:
                continue
            part.macro(round(s.accuracy, 3), "Mod", m, tag, "acc")
            for v in ("all", "content"):
                part.macro(r2(s.mean_share(v)), "Mod", m, tag, v, "mean share")
                for l in s.layers:
                    part.macro(r2(s.share(v, l)), "Mod", m, tag, v, "layer", l)
                part.macro(r2(s.share(v, s.layers[0])), "Mod", m, tag, v, "first layer")
                part.macro(r2(s.share(v, s.layers[-1])), "Mod", m, tag, v, "last layer")
        last = final(stages, m)
        shares = [(last.share("content", l), l) for l in last.layers]
        top = max(shares, key=lambda x: (x[0], -x[1]))
        part.macro(r2(top[0]), "Mod", m, "Trained content max layer share")
        part.macro(top[1] + 1, "Mod", m, "Trained content max layer depth")
        fails = Counter()
        for c in last.fail_pairs.values():
            fails.update(c)
        if fails:
            kind, k = max(fails.items(), key=lambda kv: (kv[1], kv[0]))
            part.macro(kind, "Mod", m, "Trained fail pair")
            part.macro(r2(k / sum(fails.values())), "Mod", m, "Trained fail pair share")
        part.macro(len(last.inputs), "Mod", m, "inputs")
        part.macro(last.epoch, "Mod", m, "epochs")
        part.macro(last.step, "Mod", m, "steps")
        part.macro(len(last.layers), "Mod", m, "layers")
    for s in texts:
        part.macro(len(s.inputs), "Mod", s.model, "inputs")
        for v in ("all", "content"):
            part.macro(r2(s.mean_share(v)), "Mod", s.model, v, "mean share")
            part.macro(r2(s.share(v, s.layers[0])), "Mod", s.model, v, "first layer")
            part.macro(r2(s.share(v, s.layers[-1])), "Mod", s.model, v, "last layer")
    later = [s.chain.get((v, l), [0, 0]) for s in stages for v in ("all", "content") for l in s.layers if l > 0]
    part.macro(sum(k for k, _ in later), "Mod", "chain tight after first layer")
    part.macro(sum(n for _, n in later), "Mod", "chain checks after first layer")
    part.macro(preset, "Mod", "preset")
    return part


def write_report(store: Any, preset: str, seed: int, out_dir: Path, console: Any,
                 campaigns: Optional[list[str]] = None) -> dict:
    """Write the tables and figures under ``out_dir`` and print the side-by-side table."""
    from verification.report.aggregate import pyplot
    from verification.report.figures import save_figure
    from verification.report.tables import print_table, write_table

    stages, texts, note = load(store, preset, seed, campaigns)
    tables, figures, prov = parts(stages, texts, note, preset, seed)
    written: dict = {}
    for name, rows, cols, cap in tables:
        written[name] = write_table(rows, cols, name, cap, prov, Path(out_dir) / "tables")
        if name != "modalities_detail":
            print_table(console, rows, cols, cap)
    plt = pyplot()
    for name, draw, cap in figures:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        draw(ax)
        ax.set_title(cap, fontsize=7, wrap=True)
        fig.tight_layout()
        written[name] = save_figure(fig, Path(out_dir) / "figures", name, prov)
        plt.close(fig)
    if len(texts) < 2:
        console.print(f"[dim]text rows: {note}[/dim]")
    return written
