"""Build the paper folder from the results store: every family's :class:`~verification.report.part.Part`
(tables, figures, macros) plus the theorem statements from the registry and an appendix of the
commands that filled the store. Nothing is recomputed; the same store gives byte-identical files.

Layout written under ``out`` (default ``paper/``)::

    main.tex, sections/*.tex   the hand-written document (copied from the repository when ``out``
                               is elsewhere)
    generated/macros.tex       \\newcommand for every number the prose quotes, each a link to its
                               family's entry in the appendix; \\BuildKind (quick or full)
    generated/theorems.tex     the registry's theorem blocks (theorems-<family>.tex: one family's)
    generated/coq-statements.tex  the Coq statements of the equality theorems, read from theory/formal/*.v
    generated/appendix.tex     the commands that filled the store, seeds, versions, machine, wall time
                               (:mod:`verification.paper.environment`), commit, and one
                               numbered entry per family, table and figure (campaign keys, data
                               file) that captions and numbers link to
    supplement.md              the same entries with their campaign identifiers, commands and
                               provenance (weight hashes); supplement-<report>.md for each report
    tables/<name>.tex          booktabs tables (:func:`verification.paper.latex.table_tex`); the
                               commands write their full tables there as <name>.md|csv
    data/<name>.csv|md         each table as typeset, as data (one writer per file: the paper)
    figures/<name>.pdf|png     figures (fixed metadata holding the provenance; nothing drawn over
                               the plot, checked by :func:`verification.report.figures.overlaps`)

A qualitative sentence of the prose written ``\\Guard{Key}{...}`` is checked against the
condition its family computed (:meth:`verification.report.part.Part.guard`): a store that
contradicts it fails the build, naming the sentence.

Every file is written atomically (:mod:`numerics.atomic`: a temporary file renamed into place),
so a build killed at any moment leaves each file old or new, never empty or truncated. What
can be refused without the store (``--readme`` without a findings block, ``--pdf`` without TeX)
is refused before anything is written (:func:`precheck`); every campaign the parts lack is named
in one :class:`~verification.report.part.MissingCampaign`, with the command that fills it, and
before any part is built every campaign they read must hold every chunk of the main job's plan,
each as its mark says it was stored (:func:`check_complete`).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from numerics.atomic import copy_file, copy_tree, write_text
from theory.errors import InvalidInput
from verification.paper.appendix import appendix_tex, supplement_md, supplement_name
from verification.paper.environment import environment, environment_md, environment_tex
from verification.paper.findings import BEGIN, END, FINDINGS, check_readme, findings_md, update_readme  # noqa: F401
from verification.paper import numbering
from verification.paper.latex import check_tree, coq_statements_tex, guard_problems, macros_tex, tex_tree, theorems_tex
from verification.paper.parts import check_complete, collect, paper_modules  # noqa: F401  (the builder's steps)
from verification.paper.tables import check_name, table_tex
from verification.report.part import Part

SOURCE = Path(__file__).resolve().parents[2] / "paper"     # the hand-written documents in the repository
HAND_WRITTEN = ("main.tex", "sections", "refs.bib")     # copied when present (refs.bib: the bibliography), with
                                                        # every report's <name>.tex (:data:`DOCUMENTS`)


@dataclass(frozen=True)
class Document:
    """One document built from the store: ``<name>.tex`` in the paper folder, the families whose
    tables, figures and numbers its appendix lists (None: every family no report claims), and its
    page limits (main text: title to the end of the conclusion; appendices), checked on the PDF."""

    name: str
    families: Optional[tuple]
    main_pages: int
    appendix_pages: int
    title: str = ""

    @property
    def tex(self) -> str:
        return f"{self.name}.tex"

    @property
    def appendix(self) -> str:
        """Its generated appendix (``generated/<file>``): how its numbers were made."""
        return "appendix.tex" if self.name == "main" else f"appendix-{self.name}.tex"


DOCUMENTS = (
    # the paper's appendix: 16 pages since it holds the proofs of Proposition D1a (the residual weight) and
    # of the column-permuted control's chance level (issue 62, items 1 and 4); the main text stays at 15
    Document("main", None, 15, 16, "the paper"),
    Document("report-rank", ("rank",), 10, 6, "reproduction report: the Entropic Bound"),
    Document("report-poincare", ("poincare",), 10, 6, "reproduction report: Poincare constants and LoRA"),
    Document("report-san", ("san",), 10, 6, "reproduction report: attention-only transformers"),
)
"""The paper (every family no report claims: the Dobrushin results) and the three reproduction
reports, one per checked paper, all built from the same store by the same machinery."""


def documents(folder: Path) -> list[Document]:
    """The documents of :data:`DOCUMENTS` whose ``.tex`` is in ``folder`` (``main.tex`` always)."""
    return [d for d in DOCUMENTS if d.name == "main" or (Path(folder) / d.tex).exists()]


def members(doc: Document, parts: Sequence[Part], docs: Sequence[Document]) -> list[Part]:
    """The parts whose provenance ``doc``'s appendix lists: its families, or (main) those no other
    document claims."""
    if doc.families is not None:
        return [p for p in parts if p.family in doc.families]
    claimed = {f for d in docs if d.families for f in d.families}
    return [p for p in parts if p.family not in claimed]


@dataclass
class BuildResult:
    out: Path
    parts: list[Part]
    tables: list[Path] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    macros: dict[str, Any] = field(default_factory=dict)
    pdf: Optional[Path] = None          # main.pdf
    pdfs: dict[str, Path] = field(default_factory=dict)   # every document's PDF, by name
    guards: dict[str, Any] = field(default_factory=dict)   # \\Guard key -> Guard, every family's


def build_macros(full: bool, plans: Optional[dict[str, Any]] = None) -> dict[str, str]:
    """What the title page and abstract may say about the build: ``\\BuildKind`` (``quick`` or
    ``full``), ``\\BuildNote``, a sentence naming the settings, and ``\\BuildAbstract``, the
    abstract's sentence saying which settings the document was built from; ``plans`` (``--from``:
    {family: plan}) are named in the note, each family with the command line its sections are read
    from (every document prints the note; the abstract stays the document's own).

    >>> build_macros(False)["BuildKind"], build_macros(True)["BuildKind"]
    ('quick', 'full')
    >>> from verification.san.checks import Plan
    >>> build_macros(False, {"san": Plan("paper", 0)})["BuildNote"].endswith("san: attnbounds san --preset paper --seed 0.")
    True
    """
    if full:
        from verification.plan_cost import plan_cost

        lanes = plan_cost()["lanes"]
        cost = f", about {max(lanes):.0f} minutes on 2 cores, measured per section: see Reproducing every number" if lanes else ""
        note = f"Built from the full settings of the main job (attnbounds verify --full{cost})."
    else:
        note = ("Built from the quick settings of the main job (attnbounds verify); the full settings "
                "(attnbounds verify --full) measure more instances, sizes and inputs.")
    abstract = ("Built from the main job's full settings." if full else
                "Built from the main job's quick settings (fewer instances, sizes, inputs and seeds than its full ones).")
    if plans:
        own = "; ".join(f"{family}: {plan.command()}" for family, plan in sorted(plans.items()))
        note += f" Read instead from the runs of another command line (paper --from), the sections of {own}."
    return {"BuildKind": "full" if full else "quick", "BuildNote": note, "BuildAbstract": abstract}


def _write(path: Path, text: str) -> Path:
    if not path.exists() or path.read_text() != text:   # leave identical files untouched
        write_text(path, text)
    return path


def _figure(fig_spec: Any, figures: Path) -> tuple[list[Path], list[str]]:
    """Draw one figure at its printed size; its files and its words (axis labels, titles, legend
    entries, each with its kind: for the build checks)."""
    from verification.report.aggregate import pyplot
    from verification.report.figures import COLUMN, overlaps, save_figure, style

    check_name(fig_spec.name, "figure")
    plt = pyplot()
    with plt.rc_context(style()):
        fig, ax = plt.subplots(figsize=fig_spec.size or COLUMN)
        try:
            fig_spec.draw(ax)
            clash = overlaps(fig)
            if clash:
                raise ValueError(f"figure {fig_spec.name}: {clash[0]}"
                                 + (f" (and {len(clash) - 1} more overlaps)" if len(clash) > 1 else ""))
            labels = [(kind, t) for a in fig.axes
                      for kind, t in (("axis label", a.get_xlabel()), ("axis label", a.get_ylabel()),
                                      ("title", a.get_title()))
                      + tuple(("legend entry", x.get_text()) for x in (a.get_legend().get_texts()
                                                                       if a.get_legend() else ())) if t]
            return save_figure(fig, figures, fig_spec.name, fig_spec.provenance or fig_spec.caption), labels
        finally:
            plt.close(fig)


def build(store: Any, out: str | os.PathLike = "paper", seed: int = 0, full: bool = False,
          families: Optional[Sequence[str]] = None, pdf: bool = False,
          source: Path = SOURCE, plans: Optional[dict[str, Any]] = None) -> BuildResult:
    """Write the paper folder ``out`` from ``store`` (see the module docstring); ``source`` holds
    the hand-written documents (``main.tex``, the reports of :data:`DOCUMENTS`) and ``sections/``;
    ``plans``: as :func:`collect` (``--from``). A table that no document inputs is data only
    (CSV and Markdown under ``data/``, listed in its document's appendix). Every build check of
    :mod:`verification.paper.checks` that needs no TeX runs here; with ``pdf`` every document is
    compiled and the checks of its log, its ``.aux`` file and its text run too."""
    from theory import theorems
    from verification.paper import checks

    out, source = Path(out), Path(source)
    if pdf:
        tex_command()                      # no TeX: refused before anything is read or written
        text_command()
    parts = collect(store, plans, families, seed, full)
    result = BuildResult(out=out, parts=parts)
    if out.resolve() != source.resolve():
        for item in HAND_WRITTEN + tuple(d.tex for d in DOCUMENTS if d.name != "main"):
            src = source / item
            if not src.exists() and (item.endswith(".bib") or item != "main.tex" and item.endswith(".tex")):
                continue
            if src.is_dir():
                copy_tree(src, out / item)
            else:
                copy_file(src, out / item)
    docs = documents(out)
    texts = {d.name: tex_tree(out, d.tex)[0] for d in docs}
    hand = "".join(t for by in texts.values() for t in by.values())
    typeset = set(re.findall(r"\\input\{tables/([^}]+?)(?:\.tex)?\}", hand))
    owner: dict[str, str] = {}
    links: dict[str, str] = {}
    guards: dict[str, Any] = {}
    problems: list[str] = []
    result.macros.update(build_macros(full, plans))
    for part in parts:
        for key, kind in ([(t.name, "table") for t in part.tables + part.data_tables]
                          + [(f.name, "figure") for f in part.figures]):
            if (kind, key) in owner:
                raise ValueError(f"{kind} name {key!r} is used by both {owner[(kind, key)]} and {part.family}")
            owner[(kind, key)] = part.family
        for name, value in part.macros.items():
            if name in result.macros:
                raise ValueError(f"macro \\{name} is defined by two families (one is {part.family})")
            result.macros[name] = value
            links[name] = f"prov:{part.family}"
        for key, guard in part.guards.items():
            if key in guards or key in result.macros:
                raise ValueError(f"guard {key} is registered twice (one is {part.family}'s)")
            guards[key] = guard
        for table in part.tables:
            if table.name in typeset:
                tex = table_tex(table)
                problems += checks.table_problems(table.name, tex)
                result.tables.append(_write(out / "tables" / f"{table.name}.tex", tex))
            table.write(out / "data")          # the table as typeset (or not), as data: CSV and Markdown
        for table in part.data_tables:         # data only: listed in the appendix, never typeset
            table.write(out / "data")
        for fig in part.figures:
            files, axis = _figure(fig, out / "figures")
            result.figures += files
            problems += checks.figure_problems(fig.name, axis)
    result.guards = guards
    _write(out / "generated" / "macros.tex", macros_tex(result.macros, links))
    _write(out / "generated" / "theorems.tex", theorems_tex(theorems()))
    _write(out / "generated" / "coq-statements.tex", coq_statements_tex())
    for family in sorted({th.id.split(".")[0] for th in theorems()}):   # each document its own statements
        _write(out / "generated" / f"theorems-{family}.tex",
               theorems_tex(th for th in theorems() if th.id.split(".")[0] == family))
    for doc in docs:
        labels = set(re.findall(r"\\label\{([^}]+)\}", "".join(texts[doc.name].values())))
        mine = members(doc, parts, docs)
        env = environment(store, mine)
        _write(out / "generated" / doc.appendix,
               appendix_tex(mine, seed, full, labels, typeset, supplement_name(doc.name), environment_tex(env)))
        _write(out / supplement_name(doc.name), supplement_md(doc.name, mine, seed, full, labels, typeset, environment_md(env)))
    if (source / FINDINGS).exists():
        _write(out / "generated" / "findings.md", findings_md(result.macros, source / FINDINGS, guards))
    guarded = [p for d in docs for p in guard_problems(out, guards, d.tex)]
    if guarded:
        raise InvalidInput("the results store contradicts the prose: " + "; ".join(dict.fromkeys(guarded)))
    problems = [p for d in docs for p in check_tree(out, d.tex)] + problems
    problems += prose_problems(out, docs, result.macros, parts)
    problems += [f"{d.tex}: {p}" for d in docs for p in numbering.document_problems(out, d.tex)]  # one name each
    if (out / "refs.bib").exists():
        problems += checks.bibliography_problems((out / "refs.bib").read_text(), [hand])
    _fail(problems, "the paper does not hold together")
    if pdf:
        for doc in docs:
            result.pdfs[doc.name] = compile_pdf(out, doc.tex)
            problems += compiled_problems(out, doc)
            problems += [f"{doc.tex}: {p}" for p in numbering.compiled_problems(
                out, doc.tex, (out / f"{doc.name}.aux").read_text(errors="replace"))]
        result.pdf = result.pdfs["main"]
        _fail(problems, "the documents fail their build checks")
    return result


PROSE_CHECKED = ("main", "report-rank", "report-poincare", "report-san")
"""The documents whose hand-written main text the prose checks read (code in the prose, the abstract's
intervals): every document the paper builds."""


def main_text(out: Path, main: str) -> str:
    """The hand-written main text of the document ``main`` in ``out``: from ``\\begin{document}`` to
    ``\\label{attn:main-end}``, every ``\\input{sections/...}`` expanded (generated files, tables and
    figures left out)."""
    def expand(text: str, depth: int = 0) -> str:
        def sub(m: re.Match) -> str:
            name = m.group(1)
            path = out / (name if name.endswith(".tex") else f"{name}.tex")
            if not name.startswith("sections/") or depth > 8 or not path.exists():
                return " "
            return expand(path.read_text(), depth + 1)
        return re.sub(r"\\input\{([^}]+)\}", sub, text)

    text = (out / main).read_text()
    start = text.find("\\begin{document}")
    text = expand(text[start if start >= 0 else 0:])
    end = text.find("\\label{attn:main-end}")
    return text if end < 0 else text[:end]


def prose_problems(out: Path, docs: Sequence[Document], macros: dict, parts: Sequence[Part]) -> list[str]:
    """The checks of the hand-written prose (:mod:`verification.paper.checks`): code in the main text
    of the documents of :data:`PROSE_CHECKED`, a number in an abstract without the interval the build
    defines for it, the paper's abstract at its word limit or over or saying what no test supports (or what
    belongs to the reports) in it or the introduction, a word typed twice, the related work without one of
    its groups (:data:`verification.paper.words.RELATED_GROUPS`), and a size in the machine-checked table
    (``prove-formal``) that the stored SMT campaign did not reach (a registry-declared size printed as reached)."""
    from verification.paper import checks, words

    problems = []
    for doc in docs:
        if doc.name not in PROSE_CHECKED or not (out / doc.tex).exists():
            continue
        text = main_text(out, doc.tex)
        problems += [f"{doc.tex}: {p}" for p in checks.prose_identifiers(text)]
        abstract = re.search(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", text, re.S)
        if abstract:
            problems += [f"{doc.tex}: {p}" for p in checks.abstract_intervals(abstract.group(1), macros)]
        if abstract and doc.name == "main":
            intro = re.search(r"\\section\{Introduction\}(.*?)(?=\\section\{)", text, re.S)
            problems += [f"{doc.tex}: {p}" for p in words.abstract_problems(abstract.group(1),
                                                                             intro.group(1) if intro else "", macros)]
        if doc.name == "main":      # the related work: its groups, each citing its works, and keys with entries
            problems += [f"{doc.tex}: {p}" for p in words.related_section_problems(text, out / "refs.bib")]
        prose = re.sub(r"\\[A-Za-z]+\*?", " ", words.expand_macros(text, macros))
        problems += [f"{doc.tex}: a word typed twice: {p}" for p in words.repeated_words(prose)]
    tables = {t.name: t.frame for part in parts for t in part.tables}
    if "prove-formal" in tables and "prove-reach" in tables:
        from theory import theorems

        ids = {th.named_title: th.id for th in theorems()}
        formal, reach = tables["prove-formal"], tables["prove-reach"]
        column = next(c for c in formal.columns if c.startswith("SMT"))
        printed = {ids.get(t, t): cell for t, cell in zip(formal["statement"], formal[column])}
        reached: dict[str, list] = {}
        for th, size in zip(reach["theorem"], reach["proved for all sizes up to"]):
            reached.setdefault(th, []).append(size if isinstance(size, str) else "")
        declared = {th.id: ["x".join(map(str, dims)) for _, dims, _ in th.smt_checked] for th in theorems()}
        problems += [f"table prove-formal: {p}" for p in checks.reached_size_problems(printed, reached, declared)]
    return problems


class BuildCheckFailed(InvalidInput):
    """The documents fail a build check (:mod:`verification.paper.checks`): one line naming every
    problem (the first eight, and how many more), exit status 2 from the command line."""


def _fail(problems: list[str], head: str) -> None:
    problems = list(dict.fromkeys(problems))
    if problems:
        raise BuildCheckFailed(f"{head}: " + "; ".join(problems[:8])
                               + (f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""))


def text_command() -> list[str]:
    """pdftotext (poppler-utils), which the checks of the compiled documents read them with; else an
    InvalidInput saying how to install it."""
    if not shutil.which("pdftotext"):
        raise InvalidInput("--pdf: pdftotext not found (the build checks read the compiled documents with it); "
                           "install poppler-utils, e.g. `sudo apt-get install poppler-utils`")
    return ["pdftotext", "-layout"]


def compiled_problems(out: Path, doc: Document) -> list[str]:
    """The checks of a compiled document (:mod:`verification.paper.checks`): its log (overfull boxes,
    floats taller than a page), its ``.aux`` file with its text (figures printed far from their first
    mention, page limits) and its text (numbers quoted with more digits than their interval supports)."""
    from verification.paper import checks

    stem = doc.name
    log = (out / f"{stem}.log").read_text(errors="replace")
    aux = (out / f"{stem}.aux").read_text(errors="replace")
    run = subprocess.run(text_command() + [str(out / f"{stem}.pdf"), "-"], capture_output=True, text=True,
                         errors="replace", timeout=300)
    text = run.stdout
    where = lambda items: [f"{doc.tex}: {p}" for p in items]      # noqa: E731
    return (where(checks.overfull_boxes(log)) + where(checks.floats_too_large(log))
            + where(checks.late_figures(aux, text.split("\f"))) + where(checks.spurious_precision(text))
            + checks.page_problems(doc.tex, aux, doc.main_pages, doc.appendix_pages))


def tex_engine(main: str = "main.tex") -> Optional[list[str]]:
    if shutil.which("latexmk"):
        return ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", main]
    if shutil.which("pdflatex"):
        return ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", main]
    return None


def tex_command(main: str = "main.tex") -> list[str]:
    """:func:`tex_engine`, or an InvalidInput (a ValueError) saying how to install one."""
    cmd = tex_engine(main)
    if cmd is None:
        raise InvalidInput("--pdf: no TeX engine found (latexmk or pdflatex); install one from the "
                         "distribution's packages, e.g. `sudo apt-get install latexmk "
                         "texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended`")
    return cmd


def uses_bibtex(out: Path, main: str = "main.tex") -> bool:
    """Whether the document in ``out`` cites a BibTeX database (``\\bibliography{...}``, natbib)."""
    texts, _ = tex_tree(out, main)
    return any(re.search(r"\\bibliography\{", t) for t in texts.values())


def compile_pdf(out: Path, main: str = "main.tex") -> Path:
    """The PDF of ``main`` with latexmk (which runs bibtex itself), else pdflatex twice, or, when the
    document has a ``\\bibliography``, pdflatex, bibtex, pdflatex, pdflatex; the TeX dates pinned
    so that the PDF does not change between identical builds."""
    cmd = tex_command(main)
    stem = main[:-len(".tex")]
    env = dict(os.environ, SOURCE_DATE_EPOCH="0", FORCE_SOURCE_DATE="1")
    if cmd[0] == "latexmk":
        steps = [cmd]
    elif uses_bibtex(out, main):
        if not shutil.which("bibtex"):
            raise InvalidInput("--pdf: main.tex has a \\bibliography but bibtex is not installed (it comes "
                             "with TeX Live: `sudo apt-get install texlive-binaries`, or install latexmk)")
        steps = [cmd, ["bibtex", stem], cmd, cmd]
    else:
        steps = [cmd, cmd]
    for step in steps:
        run = subprocess.run(step, cwd=out, capture_output=True, text=True, errors="replace", env=env, timeout=600)
        if run.returncode != 0:
            tail = " ".join(run.stdout.splitlines()[-6:])
            raise InvalidInput(f"--pdf: {step[0]} failed on {out / main}: {tail}")
    return out / f"{stem}.pdf"


def precheck(readme: Optional[str | os.PathLike] = None, pdf: bool = False, source: Path = SOURCE) -> None:
    """What ``attnbounds paper`` can refuse before reading the store or writing anything: a
    ``--readme`` without a findings block (or no findings template in ``source``), ``--pdf``
    without a TeX engine."""
    if readme is not None:
        check_readme(readme)
        if not (Path(source) / FINDINGS).is_file():
            raise InvalidInput(f"--readme: no findings template {str(Path(source) / FINDINGS)!r} to render")
    if pdf:
        tex_command()
        text_command()


