"""Save a report figure as PNG and PDF with its provenance in the file metadata (the one saver for
all reports), each written atomically (:mod:`numerics.atomic`), and check that no text of a figure
overprints another (:func:`overlaps`).

The provenance line (campaign, seeds, model, versions) is stored in the PNG's ``Description`` and
the PDF's ``Subject``, never drawn in the plot area (the paper lists it in its appendix, linked from
each caption); timestamps are left out so that the same seed gives the same files. Figures are drawn
at the size they are printed (:data:`COLUMN`, inches) with fonts of :data:`FONT_PT` points, no
smaller than a ``\\small`` caption.

matplotlib reports through its own logger (``matplotlib`` and its children): with no handler
configured, Python's last-resort handler printed its warnings on the terminal in the middle of a
report (an unusable ``MPLCONFIGDIR``: "mkdir -p failed ...", "Matplotlib created a temporary cache
directory ..."; "Matplotlib is building the font cache"). Importing this module, which every
figure-drawing module does before it imports pyplot, gives that logger alone a ``NullHandler``
(:func:`quiet_matplotlib_log`): its messages no longer reach the terminal by default, a user who
configures logging still receives them (they propagate to the root logger's handlers), and the
suite's own warnings and messages are untouched.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from numerics.atomic import atomic_path
from verification.provenance import versions_line

COLUMN = (4.5, 2.9)        # inches: the printed size (0.7 of the text width, or the natural width)
HALF = (2.8, 2.6)          # inches: two figures side by side in one float, each at its natural width
HALF_LOW = (2.7, 2.2)      # the same, lower and a little narrower: a main-text pair whose legend sits below
COLUMN_LOW = (4.5, 2.1)    # a main-text figure of one panel with its legend beside it
FONT_PT = 10.0             # every text of a figure, ticks and legends included: a \small caption's size


def quiet_matplotlib_log() -> None:
    """Give matplotlib's logger a ``NullHandler`` (once), so that Python's last-resort handler
    never prints its messages on stderr; handlers a user configured still receive them."""
    log = logging.getLogger("matplotlib")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())


quiet_matplotlib_log()     # before any figure module imports pyplot (font cache, config folder)


def style() -> dict[str, Any]:
    """matplotlib rcParams for paper figures: one font size for every text."""
    return {"font.size": FONT_PT, "axes.labelsize": FONT_PT, "axes.titlesize": FONT_PT,
            "xtick.labelsize": FONT_PT, "ytick.labelsize": FONT_PT, "legend.fontsize": FONT_PT,
            "legend.title_fontsize": FONT_PT, "figure.titlesize": FONT_PT}


def _texts(fig: Any) -> list[tuple[str, str, Any, Any]]:
    """(kind, what, owner, window extent) of every visible, non-empty text of ``fig`` and every
    legend frame; kind is axis, tick, title, text or legend; ``owner`` is the axis of a tick label."""
    renderer = fig.canvas.get_renderer()
    out = []

    def add(kind: str, what: str, owner: Any, artist: Any) -> None:
        if artist is None or not artist.get_visible():
            return
        if hasattr(artist, "get_text") and not artist.get_text().strip():
            return
        box = artist.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            out.append((kind, what, owner, box))

    for ax in fig.axes:
        for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            add("axis", f"the {name}-axis label {axis.label.get_text()!r}", axis.label, axis.label)
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if lo - 1e-9 * (hi - lo) <= tick.get_loc() <= hi + 1e-9 * (hi - lo):   # drawn: inside the view
                    for label in (tick.label1, tick.label2):
                        add("tick", f"the {name} tick label {label.get_text()!r}", axis, label)
            add("axis", f"the {name}-axis offset text", axis.offsetText, axis.offsetText)
        add("title", f"the title {ax.title.get_text()!r}", ax.title, ax.title)
        for text in ax.texts:
            add("text", f"the text {text.get_text()!r}", text, text)
        if ax.get_legend() is not None:
            add("legend", "the legend", ax.get_legend(), ax.get_legend())
    for text in fig.texts:
        add("text", f"the figure text {text.get_text()!r}", text, text)
    for legend in fig.legends:
        add("legend", "the figure legend", legend, legend)
    return out


def overlaps(fig: Any) -> list[str]:
    """Pairs of texts of ``fig`` whose bounding boxes overlap (``get_window_extent`` after a draw):
    anything over an axis label or a tick label (a footer, an annotation, a legend, another axis'
    labels), or two texts over each other. Tick labels of one axis against each other and a legend
    against a title or an annotation are not compared. An empty list: nothing overprints.

    >>> from verification.report.aggregate import pyplot
    >>> fig, ax = pyplot().subplots(figsize=COLUMN)
    >>> _ = ax.set_xlabel("n (tokens)")
    >>> overlaps(fig)
    []
    >>> _ = fig.text(0.5, 0.02, "seed 0; numpy 2.0", ha="center")   # a footer on the x-axis label
    >>> overlaps(fig)[0]
    "the x-axis label 'n (tokens)' overlaps the figure text 'seed 0; numpy 2.0'"
    >>> pyplot().close(fig)
    """
    fig.canvas.draw()
    items = _texts(fig)
    found = []
    for a in range(len(items)):
        for b in range(a + 1, len(items)):
            (ka, wa, oa, ba), (kb, wb, ob, bb) = items[a], items[b]
            if ka == kb == "tick" and oa is ob:
                continue    # neighbouring tick labels of one axis: matplotlib spaces them itself
            if {ka, kb} in ({"legend", "title"}, {"legend", "text"}):
                continue    # a legend over an annotation is a design choice, not an overprint
            if ba.overlaps(bb):
                found.append(f"{wa} overlaps {wb}")
    return found


def save_figure(fig: Any, figures: str | Path, name: str, provenance: str) -> list[Path]:
    figures = Path(figures)
    figures.mkdir(parents=True, exist_ok=True)
    prov = f"{provenance}; {versions_line()}"
    out = [figures / f"{name}.png", figures / f"{name}.pdf"]
    # each to a temporary file renamed into place (never a half-written figure): the format is
    # given, since the temporary name has no .png / .pdf suffix
    with atomic_path(out[0]) as tmp:
        fig.savefig(tmp, format="png", dpi=130, bbox_inches="tight",
                    metadata={"Software": None, "Description": prov})
    with atomic_path(out[1]) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches="tight",
                    metadata={"CreationDate": None, "Producer": None, "Creator": None, "Subject": prov})
    return out
