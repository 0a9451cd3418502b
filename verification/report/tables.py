"""Write a report table as Markdown and CSV under ``paper/tables/`` with its provenance (for the
README and notebooks; the paper's LaTeX tables come from :mod:`verification.paper`, through
pandas' Styler).

The report layer only aggregates stored records; it never recomputes.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

from numerics.atomic import write_text
from verification.provenance import versions_line


def fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e5):
            return f"{x:.{digits - 1}e}"
        return f"{x:.{digits}f}"
    return str(x)


def write_table(rows: Sequence[Sequence[Any]], columns: Sequence[str], name: str, caption: str,
                provenance: str, out_dir: str | Path = "paper/tables") -> dict[str, Path]:
    """Write ``name.md`` and ``name.csv``; each carries caption + provenance."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prov = f"{provenance}; {versions_line()}"
    cells = [[fmt(v) for v in row] for row in rows]
    paths = {"md": out / f"{name}.md", "csv": out / f"{name}.csv"}

    md = [f"**{caption}**", "", "| " + " | ".join(columns) + " |",
          "|" + "|".join("---" for _ in columns) + "|"]
    md += ["| " + " | ".join(r) + " |" for r in cells]
    md += ["", f"_Provenance: {prov}_", ""]
    write_text(paths["md"], "\n".join(md))

    buf = io.StringIO(newline="")
    buf.write(f"# {caption}\n# provenance: {prov}\n")
    w = csv.writer(buf)
    w.writerow(columns)
    w.writerows([[("" if v is None else v) for v in row] for row in rows])
    write_text(paths["csv"], buf.getvalue(), newline="")

    return paths


def print_table(console: Console, rows: Sequence[Sequence[Any]], columns: Sequence[str], title: str) -> None:
    t = Table(title=title, show_lines=False)
    for c in columns:
        t.add_column(c, justify="right" if c not in ("family", "model", "claim") else "left",
                     overflow="fold")  # never cut a cell with an ellipsis
    for r in rows:
        t.add_row(*[fmt(v) for v in r])
    if console.is_terminal:
        console.print(t)
    else:  # a log or a pipe: print at the table's natural width, never cut or folded
        from rich.measure import Measurement

        need = Measurement.get(console, console.options.update(width=100_000), t).maximum
        width = console.width
        console.width = max(need, width)   # print() caps its width at the console's
        try:
            console.print(t)
        finally:
            console.width = width
