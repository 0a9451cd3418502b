"""The modalities family's figures: D1 equality share against relative depth and against the
training step (each a ``draw(ax)`` closure; the tables module saves them, the paper part embeds them).
"""
from __future__ import annotations

from typing import Any, Callable

from verification.modalities.report.stages import Stage, final, initial

COLOURS = {"vit": "C0", "vit-reg": "C1", "ft-cancer": "C2", "ft-wine": "C3", "minilm": "0.35", "smollm2": "0.65"}


def relative(s: Stage) -> list[float]:
    """Layer l (0-based) of L layers at relative depth (l + 1) / L: models of any depth side by side."""
    return [(l + 1) / len(s.layers) for l in s.layers]


def depth_figure(stages: list[Stage], texts: list[Stage], variant: str) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            for s, style in ((initial(stages, m), ":"), (final(stages, m), "-")):
                if s is None:
                    continue                # one legend entry per model: the line styles are in the caption
                ax.plot(relative(s), [s.share(variant, l) for l in s.layers], style, marker="o",
                        color=COLOURS.get(m), label=m if style == "-" else None)
        for s in texts:
            ax.plot(relative(s), [s.share(variant, l) for l in s.layers], "--", marker=".",
                    color=COLOURS.get(s.model), label=f"{s.model} (text)")
        ax.set_xlabel("relative depth (layer / number of layers)")
        ax.set_ylabel(f"share with D1 equality\n({variant} tokens)")
        ax.set_ylim(-0.03, 1.03)
        beside(ax)
    return draw


def training_figure(stages: list[Stage]) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            ss = [s for s in stages if s.model == m]
            steps = [s.step for s in ss]
            ax.plot(steps, [s.mean_share("content") for s in ss], "-", marker="o", color=COLOURS.get(m), label=m)
            ax.plot(steps, [s.mean_share("all") for s in ss], ":", marker=".", color=COLOURS.get(m))
            ax.plot(steps, [s.accuracy for s in ss], "--", marker="x", color=COLOURS.get(m), alpha=0.6)
        ax.set_xlabel("training step")
        ax.set_ylabel("share / accuracy")
        ax.set_ylim(-0.03, 1.03)
        beside(ax)
    return draw


def beside(ax: Any) -> None:
    """The legend (one entry per model, at the caption's font size) beside the plot, the figure sized
    so that plot and legend fit the text width."""
    ax.figure.set_size_inches(5.0, 2.9)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
