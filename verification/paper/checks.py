"""The build checks of the generated documents (the paper and the three reproduction reports): each
is a function of text (a TeX log, an ``.aux`` file, the PDF's text, a table header, the
bibliography) that returns the problems it finds, one line each, and :func:`verification.paper.build.build`
fails on any of them. Those that need no TeX engine run on every build; those that read the
compiled output run with ``--pdf``.

- :func:`overfull_boxes`: a line or page overfull by more than 1 pt (TeX's log).
- :func:`floats_too_large`: a float (a table, a figure) taller than the page (TeX's log): a table
  longer than a page.
- :func:`identifier_tokens`: code standing in for words in a typeset table's header or caption, or a
  figure's axis label, title or legend entry (``val_loss``, ``p~``, a raw ``beta``, ``^2`` outside mathematics).
- :func:`late_figures`: a figure printed more than one page after its first mention (the
  ``.aux`` file's pages against the pages of the PDF's text that name it).
- :func:`spurious_precision`: a number quoted with more digits than its interval supports
  (``0.005208 [0.001, 0.01]``), or an integer written with a tail of zeros (``326.0000``).
- :func:`bibliography_problems`: an entry no document cites, an entry without a year or a venue, a
  citation without an entry.
- :func:`page_problems`: more main-text or appendix pages than the document's limit (its labels
  ``attn:main-end``, ``attn:appendix-start`` and ``attn:end`` in the ``.aux`` file).
- :func:`prose_identifiers`: code in the hand-written main text (a ``\\texttt``, "as in the code", a
  snake_case name).
- :func:`abstract_intervals`: a number in an abstract quoted without the interval the build defines
  for it (``\\X`` without ``\\XInterval``).
- :func:`reached_size_problems`: a size printed as reached by the SMT solvers that the store does not
  hold (a registry-declared size printed as reached).
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable, Optional

# -- the TeX log --------------------------------------------------------------------------------------
_OVERFULL = re.compile(r"Overfull \\([hv])box \(([0-9.]+)pt too (?:wide|high)\)([^\n]*)")


def overfull_boxes(log: str, tolerance_pt: float = 1.0) -> list[str]:
    """Every overfull box of a TeX log beyond ``tolerance_pt``.

    >>> overfull_boxes("Overfull \\\\hbox (12.5pt too wide) in paragraph at lines 3--4")
    ['overfull hbox by 12.5 pt in paragraph at lines 3--4']
    >>> overfull_boxes("Overfull \\\\hbox (0.5pt too wide) in paragraph at lines 3--4")
    []
    """
    return [f"overfull {kind}box by {pt} pt{where.rstrip()}" for kind, pt, where in _OVERFULL.findall(log)
            if float(pt) > tolerance_pt]


def floats_too_large(log: str) -> list[str]:
    """Every float taller than the page (LaTeX's ``Float too large for page`` warning): a table or
    figure that does not fit on one page.

    >>> floats_too_large("LaTeX Warning: Float too large for page by 120.3pt on input line 88.")
    ['a float (table or figure) is longer than a page by 120.3 pt (input line 88)']
    """
    return [f"a float (table or figure) is longer than a page by {pt} pt (input line {line})"
            for pt, line in re.findall(r"Float too large for page by ([0-9.]+)pt on input line (\d+)", log)]


# -- headers, captions and axis labels ----------------------------------------------------------------
_MATH = re.compile(r"\$[^$]*\$|\\\(.*?\\\)")
_IDENTIFIER = (
    (re.compile(r"(?<![\\A-Za-z])[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_.]*[A-Za-z0-9]"), "a snake_case name"),
    (re.compile(r"[A-Za-z]~|~[A-Za-z]"), "a '~' standing in for 'proportional to'"),
    (re.compile(r"(?<![\\A-Za-z])(?:alpha|beta|gamma|delta|lambda|sigma|tau|theta|pi|mu)(?![A-Za-z])"),
     "a Greek letter spelt out"),
    (re.compile(r"[\^ˆ]"), "a '^' outside mathematics"),
    (re.compile(r"(?<![A-Za-z_])(?:mde|val|cfg|idx|std)(?![A-Za-z_])"), "an abbreviation from the code"),
)


def identifier_tokens(text: str) -> list[str]:
    """Places where ``text`` (a header, caption or axis label, LaTeX or plain) writes code instead of
    words: snake_case names, ``p~sigma``, a Greek letter spelt out, ``^`` outside ``$...$``, code
    abbreviations. LaTeX mathematics (``$\\beta$``) and escaped underscores in math are left alone.

    >>> identifier_tokens("val_loss at beta = 4")
    ["'val_loss' (a snake_case name)", "'beta' (a Greek letter spelt out)"]
    >>> identifier_tokens(r"validation loss at $\\beta = 4$, $p \\propto \\sigma^2$")
    []
    """
    plain = _MATH.sub(" ", text).replace("\\_", "_").replace("\\textasciitilde{}", "~") \
        .replace("\\textasciicircum{}", "^").replace("\\textasciitilde", "~")
    plain = re.sub(r"\\[A-Za-z]+", " ", plain)           # LaTeX commands are not words of the header
    out = []
    for pattern, what in _IDENTIFIER:
        for m in pattern.finditer(plain):
            item = f"{m.group(0)!r} ({what})"
            if item not in out:
                out.append(item)
    return out


# -- figure placement ---------------------------------------------------------------------------------
_NEWLABEL = re.compile(r"\\newlabel\{([^}]+)\}\{\{([^}]*)\}\{([^}]*)\}")


def aux_labels(aux: str) -> dict[str, tuple[str, str]]:
    """``\\newlabel`` entries of an ``.aux`` file: label -> (number, page)."""
    return {label: (num, page) for label, num, page in _NEWLABEL.findall(aux)}


def _page(value: str) -> Optional[int]:
    return int(value) if value.strip().isdigit() else None


def late_figures(aux: str, pages: list[str], slack: int = 1) -> list[str]:
    """Figures printed more than ``slack`` pages after the first page whose text names them
    (``Figure N``, ``Figures N and M``, ``Figures N, M``); ``pages``: the PDF's text, one string a
    page (pdftotext's form feeds), ``aux``: the document's ``.aux`` file.

    >>> aux = "\\\\newlabel{fig:a}{{2}{5}{}{figure.2}{}}"
    >>> late_figures(aux, ["", "as Figure 2 shows", "", "", "Figure 2: caption"])
    ['Figure 2 (fig:a) is printed on page 5, 3 pages after its first mention on page 2']
    >>> late_figures(aux, ["", "", "", "Figure 2 shows", "Figure 2: caption"])
    []
    """
    first: dict[str, int] = {}
    for k, text in enumerate(pages, start=1):
        flat = " ".join(text.split())
        for m in re.finditer(r"Figures?\s+(\d+(?:\s*(?:,|and|to|–|-)\s*\d+)*)", flat):
            for num in re.findall(r"\d+", m.group(1)):
                first.setdefault(num, k)
    out = []
    for label, (num, page) in sorted(aux_labels(aux).items()):
        if not label.startswith("fig:") or _page(page) is None or num not in first:
            continue
        gap = _page(page) - first[num]
        if gap > slack:
            out.append(f"Figure {num} ({label}) is printed on page {page}, {gap} pages after its first mention "
                       f"on page {first[num]}")
    return out


# -- quoted precision ---------------------------------------------------------------------------------
_NUM = r"[-−]?\d+(?:\.\d+)?"
_WITH_INTERVAL = re.compile(rf"(?<![\d.])({_NUM})\s*[\[(]\s*({_NUM})\s*,\s*({_NUM})\s*[\])]")
_ZEROS = re.compile(r"(?<![\d.])(?:[2-9]|\d\d+)\.0000+(?![\d])")   # 0.0000 and 1.0000 can be rounded values


def _decimals(s: str) -> int:
    return len(s.split(".", 1)[1]) if "." in s else 0


def _float(s: str) -> float:
    return float(s.replace("−", "-"))


def spurious_precision(text: str) -> list[str]:
    """Numbers quoted with more digits than their interval supports, in ``text`` (the PDF's text, or
    a table cell): an estimate ``x [lo, hi]`` may carry the decimals of the interval's half-width to
    two significant digits, no more; and an integer value written with a tail of zeros
    (``326.0000``) claims digits it does not have.

    >>> spurious_precision("share 0.005208 [0.001, 0.01] and 0.46 [0.447, 0.474]")
    ["'0.005208 [0.001, 0.01]' quotes 6 decimals, its interval supports 4"]
    >>> spurious_precision("after 326.0000 steps")
    ["'326.0000' writes an integer with a tail of zeros"]
    """
    out = []
    for m in _WITH_INTERVAL.finditer(text):
        x, lo, hi = m.groups()
        half = abs(_float(hi) - _float(lo)) / 2
        if half <= 0 or not math.isfinite(half):
            continue
        allowed = max(0, 1 - math.floor(math.log10(half)))
        if _decimals(x) > allowed:
            out.append(f"{' '.join(m.group(0).split())!r} quotes {_decimals(x)} decimals, its interval supports {allowed}")
    bare = _WITH_INTERVAL.sub(" ", text)       # an estimate and its interval carry the digits the interval allows
    out += [f"{m.group(0)!r} writes an integer with a tail of zeros" for m in _ZEROS.finditer(bare)]
    return out


# -- bibliography -------------------------------------------------------------------------------------
CITE = re.compile(r"\\(?:cite|citet|citep|citealp|citealt|citeauthor|citeyear|nocite)\*?(?:\[[^\]]*\]){0,2}\{([^}]*)\}")
_ENTRY = re.compile(r"^@(\w+)\s*\{\s*([^,\s]+)\s*,(.*?)(?=^@|\Z)", re.M | re.S)
VENUE_FIELDS = ("journal", "booktitle", "publisher", "howpublished", "school", "institution", "eprint")


def bib_entries(bib: str) -> dict[str, str]:
    """key -> the entry's body (fields), comments and ``@string``/``@preamble`` left out."""
    bib = re.sub(r"(?m)^%.*$", "", bib)
    return {key: body for kind, key, body in _ENTRY.findall(bib)
            if kind.lower() not in ("comment", "string", "preamble")}


def bib_fields(body: str) -> dict[str, str]:
    """An entry's fields (lower-case name -> value without its outer braces or quotes), braces nested.

    >>> bib_fields(' title = {A {B} c}, year = 2020, note = "x"')
    {'title': 'A {B} c', 'year': '2020', 'note': 'x'}
    """
    out, k = {}, 0
    for m in re.finditer(r"(\w+)\s*=\s*", body):
        if m.start() < k:
            continue
        k = m.end()
        if k < len(body) and body[k] == "{":
            depth, start = 0, k
            for k in range(start, len(body)):
                depth += {"{": 1, "}": -1}.get(body[k], 0)
                if depth == 0:
                    break
            out[m.group(1).lower()] = body[start + 1:k]
        elif k < len(body) and body[k] == '"':
            end = body.index('"', k + 1)
            out[m.group(1).lower()], k = body[k + 1:end], end
        else:
            v = re.match(r"[^,}\s]*", body[k:]).group(0)
            out[m.group(1).lower()], k = v, k + len(v)
    return out


def cited_keys(texts: Iterable[str]) -> set[str]:
    """Every key the texts cite (comments ignored)."""
    keys: set[str] = set()
    for text in texts:
        for m in CITE.finditer(re.sub(r"(?<!\\)%.*", "", text)):
            keys |= {k.strip() for k in m.group(1).split(",") if k.strip()}
    return keys


def bibliography_problems(bib: str, texts: Iterable[str]) -> list[str]:
    """Entries no document cites, entries without a four-digit year or a venue (journal, book
    title, publisher, ``howpublished`` such as an arXiv identifier, ...), and citations without an
    entry.

    >>> bib = "@misc{a,\\n title={T}, year={n.d.},\\n}\\n@article{b,\\n title={U}, journal={J}, year={2020},\\n}\\n"
    >>> bibliography_problems(bib, [r"\\citep{a,c}"])
    ['refs.bib entry b is cited by no document', 'refs.bib entry a has no year', 'refs.bib entry a has no venue (journal, booktitle, publisher, howpublished, school, institution, eprint)', '\\\\cite{c} has no entry in refs.bib']
    """
    entries, cited = bib_entries(bib), cited_keys(texts)
    out = [f"refs.bib entry {k} is cited by no document" for k in entries if k not in cited]
    for key, body in entries.items():
        fields = bib_fields(body)
        if not re.fullmatch(r"\d{4}", fields.get("year", "").strip()):
            out.append(f"refs.bib entry {key} has no year")
        if not any(f in fields for f in VENUE_FIELDS):
            out.append(f"refs.bib entry {key} has no venue ({', '.join(VENUE_FIELDS)})")
    out += [f"\\cite{{{k}}} has no entry in refs.bib" for k in sorted(cited - set(entries))]
    return out


# -- page counts --------------------------------------------------------------------------------------
def page_counts(aux: str) -> dict[str, Optional[int]]:
    """Pages of main text (title to the end of the conclusion, label ``attn:main-end``) and of the
    appendices (``attn:appendix-start`` to ``attn:end``), from a document's ``.aux`` file."""
    labels = aux_labels(aux)
    page = lambda name: _page(labels[name][1]) if name in labels else None   # noqa: E731
    main_end, start, end = page("attn:main-end"), page("attn:appendix-start"), page("attn:end")
    return {"main": main_end, "appendix": (end - start + 1) if start and end else 0}


def page_problems(name: str, aux: str, main_limit: int, appendix_limit: int) -> list[str]:
    """The document ``name`` over its page limits (or without the labels that measure them).

    >>> aux = "\\\\newlabel{attn:main-end}{{}{27}}\\\\newlabel{attn:appendix-start}{{}{29}}\\\\newlabel{attn:end}{{}{31}}"
    >>> page_problems("main", aux, 25, 15)
    ['main: 27 pages of main text, at most 25']
    """
    counts = page_counts(aux)
    if counts["main"] is None:
        return [f"{name}: no \\label{{attn:main-end}} at the end of the main text (its pages cannot be counted)"]
    out = []
    if counts["main"] > main_limit:
        out.append(f"{name}: {counts['main']} pages of main text, at most {main_limit}")
    if counts["appendix"] and counts["appendix"] > appendix_limit:
        out.append(f"{name}: {counts['appendix']} pages of appendices, at most {appendix_limit}")
    return out


def table_problems(name: str, tex: str) -> list[str]:
    """Code in a typeset table's caption or header rows (``tex``: its LaTeX, every block of a split
    table), named with the table.

    >>> tex = "\\\\caption{Loss\\\\ProvTag{tab:t}}\\n\\\\toprule\\nval\\\\_loss & $\\\\beta$ \\\\\\\\\\n\\\\midrule\\n1 & 2 \\\\\\\\"
    >>> table_problems("t", tex)
    ["table t, header: 'val_loss' (a snake_case name)"]
    """
    out = []
    for cap in re.findall(r"\\caption\{(.*?)\\ProvTag", tex, re.S):
        out += [f"table {name}, caption: {p}" for p in identifier_tokens(cap) if f"table {name}, caption: {p}" not in out]
    for head in re.findall(r"\\toprule\s*(.*?)\\midrule", tex, re.S):
        out += [f"table {name}, header: {p}" for p in identifier_tokens(head) if f"table {name}, header: {p}" not in out]
    return out


def figure_problems(name: str, labels: Iterable[Any]) -> list[str]:
    """Code in a figure's words: its axis labels, titles and legend entries (``labels``: strings, or
    ``(kind, text)`` pairs, as matplotlib holds them; a plain string is an axis label).

    >>> figure_problems("f", ["training step", "val_loss", ("legend entry", "san-depth std")])
    ["figure f, axis label 'val_loss': 'val_loss' (a snake_case name)", "figure f, legend entry 'san-depth std': 'std' (an abbreviation from the code)"]
    """
    pairs = [("axis label", x) if isinstance(x, str) else tuple(x) for x in labels]
    return [f"figure {name}, {kind} {label!r}: {p}" for kind, label in pairs for p in identifier_tokens(label)]


# -- the prose: code, the abstract's intervals, sizes the store did not reach ----------------------------
_VERBATIM = re.compile(r"\\begin\{verbatim\*?\}.*?\\end\{verbatim\*?\}", re.S)
_DISPLAY = re.compile(r"\\\[.*?\\\]|\\begin\{(equation|align|gather|multline)\*?\}.*?\\end\{\1\*?\}", re.S)
_REFERENCE_ARGS = re.compile(r"\\(?:ref|eqref|pageref|label|cite[a-z]*|input|include|includegraphics|DataRef|ProvTag|"
                             r"ProvLink|url|begin|end|bibliography|bibliographystyle|newcommand|renewcommand)\*?"
                             r"(?:\[[^\]]*\])*\{[^}]*\}")
_FIRST_ARG = re.compile(r"\\(?:Guard|href)\{[^}]*\}")          # a guard's key, a link's target: not prose
_CODE_PHRASES = re.compile(r"\b(?:as in the code|in the code|the code's|code identifiers?)\b", re.I)


def prose_identifiers(tex: str) -> list[str]:
    """Code standing in for words in hand-written prose (LaTeX source): a ``\\texttt{...}`` (a function,
    file, option or module name), a phrase that points at the code instead of saying what it does
    (``as in the code``), and the tokens :func:`identifier_tokens` finds in captions (snake_case names,
    code abbreviations, a Greek letter spelt out). Comments, verbatim blocks, mathematics and the
    arguments of references, citations, guards' keys and links are left out.

    >>> prose_identifiers(r"Rows are indexed from $0$, as in the code (\\texttt{factor\\_slack}); see~\\ref{sec:a}.")
    ["'\\\\texttt{factor\\\\_slack}' (code in the prose)", "'as in the code' (the prose points at the code)", "'factor_slack' (a snake_case name)"]
    >>> prose_identifiers(r"The slack formula is what the fast path computes (\\DataRef{stress_factor}, $x_{ij}$).")
    []
    """
    text = re.sub(r"(?<!\\)%.*", "", tex)
    text = _VERBATIM.sub(" ", text)
    text = _DISPLAY.sub(" ", text)
    out = [f"'{m.group(0)}' (code in the prose)" for m in re.finditer(r"\\texttt\{[^}]*\}", text)]
    out += [f"'{m.group(0)}' (the prose points at the code)" for m in _CODE_PHRASES.finditer(text)]
    text = _FIRST_ARG.sub(" ", _REFERENCE_ARGS.sub(" ", text)).replace("~", " ")
    for item in identifier_tokens(text):
        if item not in out:
            out.append(item)
    return list(dict.fromkeys(out))


def abstract_intervals(abstract: str, macros: Iterable[str]) -> list[str]:
    """A number the abstract quotes without its interval: a macro ``\\X`` in ``abstract`` (LaTeX
    source) where the build defines ``\\XInterval`` (``macros``: every generated macro name) and the
    abstract does not follow ``\\X`` with it.

    >>> abstract_intervals(r"tight on \\Share{} \\ShareInterval{} of the inputs, against \\Random{}", ["Share", "ShareInterval", "Random", "RandomInterval"])
    ['the abstract quotes \\\\Random without its interval \\\\RandomInterval']
    """
    names, out = set(macros), []
    for m in re.finditer(r"\\([A-Za-z]+)(?![A-Za-z])", re.sub(r"(?<!\\)%.*", "", abstract)):
        name = m.group(1)
        if name.endswith("Interval") or f"{name}Interval" not in names:
            continue
        if not re.match(rf"(?:\{{\}})?\s*\\{name}Interval(?![A-Za-z])", abstract[m.end():]):
            item = f"the abstract quotes \\{name} without its interval \\{name}Interval"
            if item not in out:
                out.append(item)
    return out


_SIZE = re.compile(r"\d+(?:x\d+)*")


def reached_size_problems(printed: dict[str, str], reached: dict[str, Iterable[str]],
                          declared: dict[str, Iterable[str]]) -> list[str]:
    """A size printed as reached (``printed``: statement -> the table's cell) that the store did not
    reach for that statement (``reached``: statement -> the sizes its stored campaign proved, each
    "up to" value); named as the registry's declared size when ``declared`` (statement -> the
    registry's ``smt_checked`` sizes) holds it.

    >>> reached_size_problems({"D1": "bound 3x3; condition 6"}, {"D1": ["3x3", "3x3"]}, {"D1": ["6", "4"]})
    ["D1: size 6 is printed as reached but is the registry's declared size; the store reached 3x3"]
    >>> reached_size_problems({"D1": "bound 3x3"}, {"D1": ["3x3"]}, {"D1": ["6"]})
    []
    """
    out = []
    for statement, cell in printed.items():
        got = {s for v in reached.get(statement, ()) if v for s in _SIZE.findall(str(v))}
        known = {s for v in declared.get(statement, ()) for s in _SIZE.findall(str(v))}
        for size in _SIZE.findall(str(cell)):
            if size in got:
                continue
            why = "is the registry's declared size" if size in known else "is not among the sizes stored"
            out.append(f"{statement}: size {size} is printed as reached but {why}; the store reached "
                       f"{', '.join(sorted(got)) or 'nothing'}")
    return out

