"""Save a report figure as PNG and PDF, stamped with its provenance (the one saver for all reports),
each written atomically (:mod:`numerics.atomic`).

The provenance line (campaign, seeds, model, versions) is drawn in the figure's footer and stored in
the file metadata; timestamps are left out so that the same seed gives the same files.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from numerics.atomic import atomic_path
from verification.provenance import versions_line


def save_figure(fig: Any, figures: str | Path, name: str, provenance: str) -> list[Path]:
    figures = Path(figures)
    figures.mkdir(parents=True, exist_ok=True)
    prov = f"{provenance}; {versions_line()}"
    # below the figure's own area (never over an axis label); bbox "tight" grows the canvas to hold it
    fig.text(0.005, -0.01, prov, fontsize=5, color="0.35", ha="left", va="top", wrap=True)
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
