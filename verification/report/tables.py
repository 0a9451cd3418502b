"""Tables: each defined once, as named columns read from the store (:class:`Table`), and rendered
by one renderer to Markdown and CSV (:meth:`Table.write`, under ``paper/tables/``, for the README
and notebooks: ``<name>.md`` carries the caption and the provenance line, ``<name>.csv`` beside it
is plain CSV, a header and the rows, read as it is by ``pandas.read_csv``) and to LaTeX
(:func:`verification.paper.latex.table_tex`, pandas' Styler, for the paper). A view of a table for another output picks columns by name
(:meth:`Table.select`), never by position; every table declares the campaigns and the command that
produce it.

>>> t = Table.from_rows("demo", [["a", 1, 0.5], ["b", 2, None]], ["family", "n", "share"], "A demo.",
...                     "campaign x", campaigns=("x",), command="attnbounds verify")
>>> t.select(["family", "share"]).rows()
[['a', 0.5], ['b', None]]
>>> t.formatted()["share"].tolist()
['0.5000', '-']

The report layer only aggregates stored records; it never recomputes.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional, Sequence

from rich.console import Console
from rich.table import Table as RichTable

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
        if x.is_integer():              # 4, not 4.0000: no digits the value does not have
            return str(int(x))
        return f"{x:.{digits}f}"
    return str(x)


def ci_decimals(lo: float, hi: float) -> int:
    """Decimals an estimate with the interval [lo, hi] may carry: those of the half-width to two
    significant digits (the rule :func:`verification.paper.checks.spurious_precision` checks).

    >>> ci_decimals(0.0124, 0.0435), ci_decimals(0.447, 0.474), ci_decimals(-0.84, 1.67)
    (3, 3, 1)
    """
    half = abs(hi - lo) / 2
    if not (half > 0 and math.isfinite(half)):
        return 2
    return max(0, 1 - math.floor(math.log10(half)))


def fmt_ci(x: float, lo: float, hi: float) -> tuple[str, str]:
    """``(estimate, "[lo, hi]")`` with the digits the interval supports, no more (:func:`ci_decimals`).

    >>> fmt_ci(0.0151, 0.0124, 0.0435)
    ('0.015', '[0.012, 0.043]')
    """
    d = ci_decimals(lo, hi)
    return f"{x:.{d}f}", f"[{lo:.{d}f}, {hi:.{d}f}]"


@dataclass
class Table:
    """One table: a pandas DataFrame of named columns (index hidden unless ``index``), a caption,
    its provenance, and the campaigns and command that produce it. Built once per table; every
    output (Markdown, CSV, LaTeX) renders this object."""

    name: str                 # file stem: <out>/tables/<name>.{md,csv,tex} (letters, digits, '-', '_')
    frame: Any                # pandas.DataFrame
    caption: str
    provenance: str = ""      # campaign(s), seed, model, commit-independent
    index: bool = False
    campaigns: tuple = ()     # the campaigns its rows are read from
    command: str = ""         # the command that fills them
    wrap: int = 3             # lines a typeset cell may wrap onto (prose tables, such as a claims table: more)
    keys: int = 1             # leading columns that name a row: a typeset table split into column blocks repeats them

    @classmethod
    def from_rows(cls, name: str, rows: Sequence[Sequence[Any]], columns: Sequence[str], caption: str,
                  provenance: str = "", **kw: Any) -> "Table":
        """A table of report rows; cells are kept as they are (object dtype: no coercion)."""
        import pandas as pd

        frame = pd.DataFrame([list(r) for r in rows], columns=list(columns), dtype=object)
        return cls(name, frame, caption, provenance, **kw)

    def rows(self) -> list[list[Any]]:
        """The cells, row by row, as stored (None stays None)."""
        return [list(row) for row in self.frame.itertuples(index=False)]

    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    def select(self, columns: Sequence[str], name: Optional[str] = None, **kw: Any) -> "Table":
        """A view with the named ``columns`` only (an unknown name is a KeyError naming it)."""
        unknown = [c for c in columns if c not in self.frame.columns]
        if unknown:
            raise KeyError(f"table {self.name!r} has no column {unknown[0]!r}; it has {self.columns()}")
        return replace(self, frame=self.frame[list(columns)], name=name or self.name, **kw)

    def formatted(self) -> Any:
        """The frame with every number formatted by :func:`fmt` (deterministic strings)."""
        import pandas as pd

        return pd.DataFrame([[c if isinstance(c, str) else fmt(c) for c in row] for row in self.rows()],
                            columns=self.columns())

    def write(self, out_dir: str | Path = "paper/tables") -> dict[str, Path]:
        """``<name>.md`` and ``<name>.csv`` (see :func:`write_table`)."""
        return write_table(self.rows(), self.columns(), self.name, self.caption, self.provenance, out_dir)


def write_table(rows: Sequence[Sequence[Any]], columns: Sequence[str], name: str, caption: str,
                provenance: str, out_dir: str | Path = "paper/tables") -> dict[str, Path]:
    """Write ``name.md`` (the caption, the table, the provenance line with package versions) and
    ``name.csv`` beside it: plain CSV, one header line and one line per row, the cells as stored
    (None is an empty field), with no comment lines, so any CSV reader (``pandas.read_csv(path)``)
    reads it as it is; its caption and provenance are the Markdown file's."""
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
    w = csv.writer(buf)
    w.writerow(columns)
    w.writerows([[("" if v is None else v) for v in row] for row in rows])
    write_text(paths["csv"], buf.getvalue(), newline="")

    return paths


def print_table(console: Console, rows: Sequence[Sequence[Any]], columns: Sequence[str], title: str) -> None:
    t = RichTable(title=title, show_lines=False)
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
