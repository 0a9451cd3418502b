"""The paper's tables in LaTeX: one renderer for every family's :class:`~verification.report.tables.Table`.

A table is set in booktabs at ``\\small`` or, when that is too wide, ``\\footnotesize`` (never
smaller, never shrunk by a box); at \\footnotesize its long cells wrap, a table still wider than the
text is split into column blocks that repeat its key columns (the first; ``Table.keys``), and one taller than a page into row
blocks (each a float; the full table is also written as CSV beside the PDF). Long headers wrap onto
lines; the ASCII mathematics of the reports' headers is set as mathematics (:data:`MATH_LABELS`). Every caption ends with
a link to the table's entry in the appendix (``\\ProvTag``).

>>> import pandas as pd
>>> from verification.report.part import Table
>>> print(table_tex(Table("t", pd.DataFrame({"model": ["a_b"], "share": ["3/4"]}), "D1 & $x \\\\le 1$", "seed 0")))
... # doctest: +NORMALIZE_WHITESPACE
\\begin{table}[!htbp]
\\centering
\\caption{D1 \\& $x \\le 1$\\ProvTag{tab:t}}
\\label{tab:t}
\\small
\\setlength{\\tabcolsep}{4pt}
\\begin{tabular}{lr}
\\toprule
model & share \\\\
\\midrule
a\\_b & 3/4 \\\\
\\bottomrule
\\end{tabular}
\\end{table}
<BLANKLINE>
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Optional

from verification.paper.typeset import math_text
from verification.report.part import Table

TEXT_WIDTH_PT = 460.0      # main.tex: 11pt article, 2.5 cm margins on letter paper (472 pt), a margin kept
SIZES = (("\\small", 10.0), ("\\footnotesize", 9.0))   # the sizes a table may take, largest first
ROWS_PER_PAGE = 44         # rows of a \footnotesize block on one page
HEADER_LINE = 14           # a header longer than this wraps onto lines of about this many characters
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_NUMERIC = re.compile(r"^[-+0-9.,/%eE\s\[\]()×x-]*$")


def check_name(name: str, what: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"{what} name {name!r}: only letters, digits, '-' and '_' make a file name")
    return name


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):       # no digits the value does not have (326, not 326.0000)
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.4g}"
    return str(value)


# Headers and cells the reports write in ASCII for the terminal, as the paper sets them (exact
# matches; a table's Markdown and CSV keep the ASCII). A header not listed is set as written.
MATH_LABELS: dict[str, str] = {
    "median delta(A)": r"median $\delta(A)$",
    "median (1+delta(A))/2": r"median $(1+\delta(A))/2$",
    "median Birkhoff tau_B(A)": r"median Birkhoff $\tau_B(A)$",
    "tau_B finite (< 1)": r"$\tau_B$ finite ($< 1$)",
    "median delta(R_l)": r"median $\delta(R_l)$",
    "median prod delta(Ahat)": r"median $\prod \delta(\hat A)$",
    "median prod (1+delta(A))/2": r"median $\prod (1+\delta(A))/2$",
    "median ratio R/prod [95% CI]": r"median ratio $\delta(R_l)/\prod\delta(\hat A)$ [95\% CI]",
    "median ratio prod/factor": r"median ratio of the products",
    "kernel error <= 0.1 [95% CI]": r"kernel error $\le 0.1$ [95\% CI]",
    "sigma_r*": r"$\sigma_{r^*}$",
    "sigma_r* vs limit": r"$\sigma_{r^*}$ vs limit",
    "sigma_r*^2": r"$\sigma_{r^*}^2$",
    "energy_0.9 = r* [95% CI]": r"$r_{0.9}^{\mathrm{energy}} = r^*$ [95\% CI]",
    "energy_0.99 = r* [95% CI]": r"$r_{0.99}^{\mathrm{energy}} = r^*$ [95\% CI]",
    "entropy rank (p ~ sigma^2), rounded = r* [95% CI]": r"entropy rank ($p \propto \sigma^2$), rounded $= r^*$ [95\% CI]",
    "entropy rank (p ~ sigma), rounded = r* [95% CI]": r"entropy rank ($p \propto \sigma$), rounded $= r^*$ [95\% CI]",
    "entropy (p~sigma^2), rounded = r* [95% CI]": r"entropy ($p \propto \sigma^2$), rounded $= r^*$ [95\% CI]",
    "entropy (p~sigma), rounded = r* [95% CI]": r"entropy ($p \propto \sigma$), rounded $= r^*$ [95\% CI]",
    "threshold = r* [95% CI]": r"threshold $= r^*$ [95\% CI]",
    "share = r* [95% CI]": r"share $= r^*$ [95\% CI]",
    "static rank = r* [95% CI]": r"static rank $= r^*$ [95\% CI]",
    "passes r* [95% CI]": r"passes $r^*$ [95\% CI]",
    "first step at r* (median)": r"first step at $r^*$ (median)",
    "decades at r* (median)": r"decades at $r^*$ (median)",
    "ends at r* [95% CI]": r"ends at $r^*$ [95\% CI]",
    "learned = min(r, r*) [95% CI]": r"learned $= \min(r, r^*)$ [95\% CI]",
    "max |float - certified|": r"max $\lvert$float $-$ certified$\rvert$",
    "R(r) seed 0": r"$R(r)$, seed 0",
    "optimum R(r)": r"optimum $R(r)$",
    "C_P": r"$C_P$",
    "C_P estimate": r"$C_P$ estimate",
    "BE/C_P": r"BE$/C_P$",
    "HS/C_P": r"HS$/C_P$",
    "Var/C_P": r"Var$/C_P$",
    "quad/C_P": r"quad$/C_P$",
    "eig_mp/C_P": r"eig$_{\mathrm{mp}}/C_P$",
    "1/(beta lambda)": r"$1/(\beta\lambda)$",
    "beta": r"$\beta$",
    "lambda": r"$\lambda$",
    "E[L] - inf L": r"$\mathbb{E}[L] - \inf L$",
    "Laplace d/(2 beta)": r"Laplace $d/(2\beta)$",
    "L(theta*_lambda) - inf L": r"$L(\theta^*_\lambda) - \inf L$",
    "lambda_V estimate": r"$\lambda_V$ estimate",
    "lambda_V is": r"$\lambda_V$ is",
    "route fails for some lambda > 0": r"route fails for some $\lambda > 0$",
    "lambda > 0": r"$\lambda > 0$",
    "L''(p*) >= a": r"$L''(p^*) \ge a$",
    "sup L'' <= A": r"$\sup L'' \le A$",
    "every beta: lambda_V(beta) >= sqrt(2a/beta)": r"every $\beta$: $\lambda_V(\beta) \ge \sqrt{2a/\beta}$",
    "beta large: holds when beta lambda^2 >": r"$\beta$ large: holds when $\beta\lambda^2 >$",
    "E[F] - F_min": r"$\mathbb{E}[F] - F_{\min}$",
    "d/(2 beta)": r"$d/(2\beta)$",
    "E dist^2 to argmin F": r"$\mathbb{E}\lvert\theta - \theta^*_\lambda\rvert^2$",
    "dist^2 hi": r"$\lvert\theta - \theta^*_\lambda\rvert^2$ hi",
    "tr(H^-1)/beta": r"$\operatorname{tr}(H^{-1})/\beta$",
    "energy_0.99 / dh": r"energy$_{0.99}/d_h$",
    "rank = dh certified": r"rank $= d_h$ certified",
    # the SMT campaign's deliberately wrong variants (numerics.smt.statements)
    "WRONG: delta(PQ) < delta(P) delta(Q) (strict)": r"WRONG: $\delta(PQ) < \delta(P)\,\delta(Q)$ (strict)",
    "WRONG: delta((I+A)/2) < (1+delta(A))/2 (strict)": r"WRONG: $\delta((I+A)/2) < (1+\delta(A))/2$ (strict)",
    "WRONG: 'mutually' dropped (only A_ii >= A_ji)": r"WRONG: `mutually' dropped (only $A_{ii} \ge A_{ji}$)",
    "WRONG: 'attaining delta(A)' dropped": r"WRONG: `attaining $\delta(A)$' dropped",
    "WRONG: equality whenever delta(P) delta(Q) > 0": r"WRONG: equality whenever $\delta(P)\,\delta(Q) > 0$",
    "WRONG: D2's condition without 'attaining delta(P)'": r"WRONG: D2's condition without `attaining $\delta(P)$'",
    "WRONG (as first conjectured): positive lower triangle, equality iff row 1 is the unique minimiser of P_l0 and "
    "Q_10 is minimal": r"WRONG (as first conjectured): positive lower triangle, equality iff row $1$ is the unique "
    r"minimiser of $P_{l0}$ and $Q_{10}$ is minimal",
}


def cell_tex(text: str) -> str:
    """A cell's text for LaTeX (:data:`MATH_LABELS` or escaped words with ``$...$`` math); one that
    starts with '[' is guarded with {} (after ``\\\\`` a '[' would be read as the line break's
    optional argument)."""
    tex = MATH_LABELS.get(text)
    head, _, tail = text.rpartition(" (")
    if tex is None and text.endswith(")") and head in MATH_LABELS:    # a label with a remark: "... (exhaustive split)"
        tex = f"{MATH_LABELS[head]} {math_text('(' + tail)}"
    tex = tex or math_text(text)
    return "{}" + tex if tex.startswith("[") else tex


def _visible(tex: str) -> int:
    """About how many characters ``tex`` prints (commands and math markup dropped)."""
    return len(re.sub(r"\\[A-Za-z]+|[${}^_]", "", tex))


def _header_lines(header: str) -> list[str]:
    """A header's LaTeX on lines of about :data:`HEADER_LINE` printed characters, its mathematics set
    as such (:data:`MATH_LABELS`; a ``$...$`` group is never broken)."""
    tex = MATH_LABELS.get(header) or math_text(header)
    lines: list[list[str]] = []
    for tok in re.findall(r"(?:\$[^$]*\$|[^\s$])+", tex):
        if lines and sum(_visible(t) + 1 for t in lines[-1]) + _visible(tok) <= HEADER_LINE:
            lines[-1].append(tok)
        else:
            lines.append([tok])
    return [" ".join(line) for line in lines] or [""]


def _header_tex(header: str) -> str:
    texts = ["{}" + t if t.startswith("[") else t for t in _header_lines(header)]
    if len(texts) == 1:
        return texts[0]
    return "\\begin{tabular}[b]{@{}c@{}}" + " \\\\ ".join(texts) + "\\end{tabular}"


SEP_PT = 4.0               # \tabcolsep inside generated tables (LaTeX's default is 6 pt)
CHAR_EM = 0.56             # the width of a character of a table, in em (digits are 0.5 em, capitals wider)


def _need(chars: list[int], size_pt: float) -> float:
    return sum(c * CHAR_EM * size_pt + 2 * SEP_PT for c in chars)


@dataclass
class Layout:
    """How a table is set: its size command, the width (pt) of each wrapped column (None: its
    natural width), the column blocks (each starting with column 0) and the row blocks (each block
    fits a page; blocks of rows are separate floats)."""

    size: str
    widths: list
    col_blocks: list
    row_blocks: list


def _fit(natural: list[int], minimal: list[int], budget: float) -> Optional[list[int]]:
    """Column widths in characters, each between its longest word and its natural width, summing
    to at most ``budget``: the widest wrappable columns narrowed first; None if impossible."""
    if sum(minimal) > budget:
        return None
    widths = list(natural)
    while sum(widths) > budget:
        k = max((j for j in range(len(widths)) if widths[j] > minimal[j]), key=lambda j: widths[j])
        widths[k] -= 1
    return widths


def layout(table: Table, text_width: float = TEXT_WIDTH_PT) -> Layout:
    """The largest size at which the table fits the text width; else at the smallest size, its long
    cells wrapped (onto at most two lines, never below their longest word); else its columns split into blocks that repeat
    its key columns (``table.keys``: column 0 by default). Rows go into blocks of at most :data:`ROWS_PER_PAGE` lines.

    >>> import pandas as pd
    >>> wide = Table("w", pd.DataFrame([["layer"] + ["0.1234"] * 30], columns=["x"] + [f"L{k}" for k in range(30)]), "c")
    >>> lay = layout(wide)
    >>> lay.size, [len(b) for b in lay.col_blocks], lay.row_blocks
    ('\\\\footnotesize', [12, 12, 9], [[0]])
    >>> [b[:2] for b in layout(Table("w", wide.frame, "c", keys=2)).col_blocks]     # two key columns in every block
    [[0, 1], [0, 1], [0, 1]]
    >>> words = Table("t", pd.DataFrame([["a", "188/700 = 0.27 [0.24, 0.30]"] ] * 2, columns=["x", "y"]), "c")
    >>> layout(words, text_width=100).widths     # two lines of at most 17 characters
    [None, 75.6]
    """
    frame = table.frame
    headers = [[_visible(line) for line in _header_lines(str(c))] for c in frame.columns]
    cells = [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    natural = [max(h + [len(r[k]) for r in cells]) for k, h in enumerate(headers)]
    # a column wraps onto at most ``table.wrap`` lines (two by default), never below its longest word
    # nor its header's widest line
    minimal = [max(h + [len(w) for r in cells for w in r[k].split()] + [1, -(-natural[k] // max(1, table.wrap))])
               for k, h in enumerate(headers)]
    every = list(range(len(natural)))
    size, pt = SIZES[-1]
    chars_of = lambda cols: (text_width - 2 * SEP_PT * len(cols)) / (CHAR_EM * pt)   # noqa: E731
    for size_k, pt_k in SIZES:
        if _need(natural, pt_k) <= text_width:
            size, pt, blocks, fitted = size_k, pt_k, [every], {k: natural[k] for k in every}
            break
    else:
        keys = list(range(max(1, min(table.keys, len(every) - 1))))      # the columns that name a row
        blocks, current = [], list(keys)
        for k in every[len(keys):]:
            if len(current) > len(keys) and _fit([natural[j] for j in current + [k]], [minimal[j] for j in current + [k]],
                                                 chars_of(current + [k])) is None:
                blocks.append(current)
                current = list(keys)
            current.append(k)
        blocks.append(current)
        fitted = {}
        for block in blocks:
            got = _fit([natural[j] for j in block], [minimal[j] for j in block], chars_of(block))
            fitted.update(zip(block, got or [natural[j] for j in block]))
    widths = [None if fitted[k] >= natural[k] else round(fitted[k] * CHAR_EM * pt, 1) for k in every]
    lines = [max([1] + [-(-len(r[k]) // max(fitted[k], 1)) for k in every]) for r in cells]
    row_blocks, current, used = [], [], 0
    for i, n in enumerate(lines):
        if current and used + n > max(8, (ROWS_PER_PAGE - 5 * len(blocks)) // len(blocks)):   # 5: a block's rules, header
            row_blocks.append(current)
            current, used = [], 0
        current.append(i)
        used += n
    row_blocks.append(current)
    return Layout(size, widths, blocks, row_blocks)


def table_tex(table: Table) -> str:
    """A booktabs table: cells and headers escaped (``$...$`` kept as math), set by :func:`layout`
    (``\\small`` or ``\\footnotesize``, long cells wrapped, wide tables split into column blocks
    rather than shrunk); the caption says what the table shows and ends with a link to the table's
    entry in the appendix (``\\ProvTag``), which holds its provenance."""
    check_name(table.name, "table")
    frame = table.frame
    if frame is None or len(frame.columns) == 0:
        raise ValueError(f"table {table.name!r} has no columns")
    if table.index:
        frame = frame.reset_index()
    headers = [_header_tex(str(c)) for c in frame.columns]
    cells = [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    align = ["r" if k and cells and all(_NUMERIC.match(r[k]) for r in cells) else "l" for k in range(len(headers))]
    lay = layout(Table(table.name, frame, table.caption, wrap=table.wrap, keys=table.keys))

    def cell(text: str, k: int) -> str:
        tex = cell_tex(text)
        w = lay.widths[k]
        return tex if w is None else f"\\parbox[t]{{{w}pt}}{{\\raggedright {tex}}}"

    out = []
    for b, rows in enumerate(lay.row_blocks):
        out += ["\\begin{table}[!htbp]", "\\centering"]    # '!': near its first mention when it fits
        if b == 0:
            out += [f"\\caption{{{math_text(table.caption)}\\ProvTag{{tab:{table.name}}}}}", f"\\label{{tab:{table.name}}}"]
        else:
            out += [f"{{\\small\\itshape Table~\\ref{{tab:{table.name}}}, continued.}}\\par\\smallskip"]
        out += [lay.size, f"\\setlength{{\\tabcolsep}}{{{SEP_PT:g}pt}}"]
        for c, cols in enumerate(lay.col_blocks):
            if c:
                out += ["\\par\\medskip"]
            out += ["\\begin{tabular}{" + "".join(align[k] for k in cols) + "}", "\\toprule",
                    " & ".join(headers[k] for k in cols) + " \\\\", "\\midrule"]
            out += [" & ".join(cell(cells[i][k], k) for k in cols) + " \\\\" for i in rows]
            out += ["\\bottomrule", "\\end{tabular}"]
        out += ["\\end{table}"]
    return "\n".join(out) + "\n"
