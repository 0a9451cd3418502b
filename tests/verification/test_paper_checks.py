"""The build checks of the documents (verification/paper/checks.py), each shown to fail the build on
a planted defect: code in a typeset table's header or caption and in a figure's axis label or legend, a
bibliography entry uncited or without year and venue (no TeX needed); and, where TeX is installed, an
overfull line, a table longer than a page, a figure printed far from its first mention, a number
quoted with more digits than its interval supports, and a document over its page limit (one compile
carries every planted defect; a clean toy document passes every check: test_paper_guards.py)."""
import sys
import types

import pandas as pd
import pytest

from theory.verdicts import Verdict
from verification.paper import build as B
from verification.paper.build import build, tex_engine
from verification.report.part import Figure, Part, Table
from verification.store import Record, ResultStore

from verification.testing.fakes import TOY_PAPER as MAIN  # noqa: E402
SECTION = r"""\section{Toy}
Of \ToyCount{} instances, as Table~\ref{tab:toy-table} and Figure~\ref{fig:toy-figure} show.
\input{tables/toy-table}
\begin{figure}[ht]\centering\includegraphics{figures/toy-figure.pdf}
\caption{Slack per instance.\ProvTag{fig:toy-figure}}\label{fig:toy-figure}\end{figure}
"""
HEADER, XLABEL, LEGEND = {"value": "value"}, {"label": "instance"}, {"label": "slack"}


def toy_part(store, plan=None):
    rows = list(store.records("toy-campaign"))
    part = Part("toy", commands=["attnbounds toy --seed 0"])
    part.macro(len(rows), "toy", "count")
    frame = pd.DataFrame([[f"i{k}", f"{0.25 * k:.2f}"] for k in range(4)], columns=["instance", HEADER["value"]])
    part.tables.append(Table("toy-table", frame, "Verdicts per instance", "seed 0", campaigns=("toy-campaign",)))

    def draw(ax):
        ax.plot([0, 1, 2], label=LEGEND["label"])
        ax.set_xlabel(XLABEL["label"])
        ax.legend()
    part.figures.append(Figure("toy-figure", draw, "slack", "seed 0"))
    return part


@pytest.fixture
def toy(monkeypatch, tmp_path):
    mod = types.ModuleType("toy_checked")
    mod.paper_part = toy_part
    monkeypatch.setitem(sys.modules, "toy_checked", mod)
    monkeypatch.setitem(HEADER, "value", "value")
    monkeypatch.setitem(XLABEL, "label", "instance")
    monkeypatch.setitem(LEGEND, "label", "slack")
    src = tmp_path / "src"
    (src / "sections").mkdir(parents=True)
    (src / "main.tex").write_text(MAIN.replace("BIBLIOGRAPHY", ""))
    (src / "sections" / "toy.tex").write_text(SECTION)
    store = ResultStore(str(tmp_path / "r.db"))
    store.write_chunk("toy-campaign", "c0", [Record(theorem="dobrushin.factor", instance=f"i{k}",
                                                    verdict=Verdict.TIGHT, slack=0.0) for k in range(4)])
    yield store, src
    store.close()


def test_a_clean_toy_passes_and_code_in_a_header_or_an_axis_label_fails_the_build(toy, tmp_path):
    store, src = toy
    build(store, tmp_path / "ok", families=["toy_checked"], source=src)
    HEADER["value"] = "val_loss"
    with pytest.raises(B.BuildCheckFailed, match=r"table toy-table, header: 'val_loss' \(a snake_case name\)"):
        build(store, tmp_path / "header", families=["toy_checked"], source=src)
    HEADER["value"] = "p~sigma"
    with pytest.raises(B.BuildCheckFailed, match=r"'p~' \(a '~' standing in"):
        build(store, tmp_path / "tilde", families=["toy_checked"], source=src)
    HEADER["value"] = "value"
    XLABEL["label"] = "beta"
    with pytest.raises(B.BuildCheckFailed, match=r"figure toy-figure, axis label 'beta': 'beta' \(a Greek letter"):
        build(store, tmp_path / "axis", families=["toy_checked"], source=src)
    XLABEL["label"] = "instance"
    LEGEND["label"] = "SAN, params ($W_Q$)"                   # words and mathematics pass
    build(store, tmp_path / "legend-ok", families=["toy_checked"], source=src)
    LEGEND["label"] = "std slack"
    with pytest.raises(B.BuildCheckFailed, match=r"figure toy-figure, legend entry 'std slack': 'std' \(an abbrev"):
        build(store, tmp_path / "legend", families=["toy_checked"], source=src)


def test_an_uncited_entry_or_one_without_year_or_venue_fails_the_build(toy, tmp_path):
    store, src = toy
    good = "@article{a1, author={A. B}, title={T}, journal={J}, year={2020}}\n"
    (src / "sections" / "toy.tex").write_text(SECTION + "As in \\cite{a1}.\n")
    (src / "refs.bib").write_text(good)
    build(store, tmp_path / "ok", families=["toy_checked"], source=src)
    for bib, why in ((good + "@misc{b2, author={C}, title={U}, howpublished={x}, year={2021}}\n",
                      "entry b2 is cited by no document"),
                     ("@article{a1, author={A. B}, title={T}, journal={J}, year={n.d.}}\n", "entry a1 has no year"),
                     ("@misc{a1, author={A. B}, title={T}, year={2020}}\n", "entry a1 has no venue")):
        (src / "refs.bib").write_text(bib)
        with pytest.raises(B.BuildCheckFailed, match=why):
            build(store, tmp_path / "bad", families=["toy_checked"], source=src)


PLANTED = r"""
A share of 0.005208 [0.001, 0.01] is quoted with digits its interval does not support.
\begin{tabular}{""" + "l" * 30 + "}\n" + " & ".join(f"0.{k:04d}" for k in range(1, 31)) + r"""\\
\end{tabular}

\begin{table}[ht]\centering\begin{tabular}{l}""" + "".join(f"row {k}\\\\\n" for k in range(90)) + r"""\end{tabular}
\caption{A table longer than a page.}\end{table}
See Figure~\ref{fig:late}.
\clearpage\mbox{}\clearpage\mbox{}\clearpage
\begin{figure}[ht]\centering\rule{2cm}{1cm}\caption{Late.}\label{fig:late}\end{figure}
"""


@pytest.mark.skipif(tex_engine() is None, reason="no TeX engine (latexmk or pdflatex): "
                    "apt-get install latexmk texlive-latex-recommended texlive-latex-extra poppler-utils")
def test_every_check_of_the_compiled_document_fails_on_its_planted_defect(toy, tmp_path, monkeypatch):
    import shutil

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext not found: apt-get install poppler-utils (CI has it)")
    store, src = toy
    (src / "sections" / "toy.tex").write_text(SECTION + PLANTED)
    monkeypatch.setattr(B, "DOCUMENTS", (B.Document("main", None, 3, 15),))      # a page limit the toy exceeds
    with pytest.raises(B.BuildCheckFailed) as err:
        build(store, tmp_path / "p", families=["toy_checked"], source=src, pdf=True)
    text = str(err.value)
    problems = B.compiled_problems(tmp_path / "p", B.DOCUMENTS[0])
    for what in ("overfull hbox by", "longer than a page", "Figure 2 (fig:late) is printed on page",
                 "'0.005208 [0.001, 0.01]' quotes 6 decimals", "pages of main text, at most 3"):
        assert any(what in p for p in problems), (what, problems)
    assert "main.tex: overfull hbox" in text


def test_code_in_the_prose_fails_the_build(toy, tmp_path):
    """A function name in typewriter type, a phrase that points at the code, or a snake_case name in
    the hand-written main text fails the build; a reference's target does not."""
    store, src = toy
    clean = SECTION + "The values of Table~\\ref{tab:toy-table} are shares.\n"
    (src / "sections" / "toy.tex").write_text(clean)
    build(store, tmp_path / "ok", families=["toy_checked"], source=src)
    for planted, why in (("The slack is computed by \\texttt{factor\\_slack}.", r"'\\texttt\{factor\\_slack\}' \(code in the prose\)"),
                         ("Rows are indexed from $0$, as in the code.", r"'as in the code' \(the prose points at the code\)"),
                         ("The val\\_loss falls.", r"'val_loss' \(a snake_case name\)")):
        (src / "sections" / "toy.tex").write_text(clean + planted + "\n")
        with pytest.raises(B.BuildCheckFailed, match=r"main\.tex: " + why):
            build(store, tmp_path / "bad", families=["toy_checked"], source=src)


def test_a_number_in_the_abstract_without_its_interval_fails_the_build(toy, tmp_path, monkeypatch):
    """The abstract quotes a share whose interval the build defines: with the interval it passes,
    without it the build fails naming both macros."""
    store, src = toy

    def with_interval(store, plan=None):
        part = toy_part(store, plan)
        part.macro("0.50", "toy", "share")
        part.macro("[0.30, 0.70]", "toy", "share", "interval")
        return part
    monkeypatch.setattr(sys.modules["toy_checked"], "paper_part", with_interval)
    main = MAIN.replace("BIBLIOGRAPHY", "")
    (src / "main.tex").write_text(main.replace("\\begin{document}\n", "\\begin{document}\n\\begin{abstract}Tight on "
                                                "\\ToyShare{} \\ToyShareInterval{} of the inputs.\\end{abstract}\n"))
    build(store, tmp_path / "ok", families=["toy_checked"], source=src)
    (src / "main.tex").write_text(main.replace("\\begin{document}\n", "\\begin{document}\n\\begin{abstract}Tight on "
                                                "\\ToyShare{} of the inputs.\\end{abstract}\n"))
    with pytest.raises(B.BuildCheckFailed, match=r"the abstract quotes \\ToyShare without its interval \\ToyShareInterval"):
        build(store, tmp_path / "bad", families=["toy_checked"], source=src)


def test_a_registry_declared_smt_size_printed_as_reached_fails_the_build(toy, tmp_path, monkeypatch):
    """The machine-checked table prints the sizes the stored SMT campaign reached; a table that prints
    the registry's declared sizes (``Theorem.smt_checked``: 4, 5, 6 for D1) where the store reached
    3x3 fails the build, and so does any size the store does not hold."""
    from theory import get
    from verification.prove.paper import formal_table

    store, src = toy
    d1 = get("dobrushin.factor")
    reach = pd.DataFrame({"theorem": ["dobrushin.factor"] * 2, "statement": ["d1.bound", "d1.iff"],
                          "proved for all sizes up to": ["3x3", "3x3"], "encoding": ["direct"] * 2})

    def planted(printed):
        def part_with(store, plan=None):
            part = toy_part(store, plan)
            formal = formal_table("attnbounds prove", {d1.id: printed})
            part.tables += [formal, Table("prove-reach", reach, "Reach.", "seed 0")]
            return part
        return part_with
    monkeypatch.setattr(sys.modules["toy_checked"], "paper_part", planted("bound 3x3; condition 3x3"))
    build(store, tmp_path / "ok", families=["toy_checked"], source=src)
    declared = ", ".join(sorted({"x".join(map(str, dims)) for _, dims, _ in d1.smt_checked}))
    monkeypatch.setattr(sys.modules["toy_checked"], "paper_part", planted(declared))
    with pytest.raises(B.BuildCheckFailed, match=r"table prove-formal: dobrushin\.factor: size 6 is printed as reached but "
                                                 r"is the registry's declared size; the store reached 3x3"):
        build(store, tmp_path / "declared", families=["toy_checked"], source=src)
    monkeypatch.setattr(sys.modules["toy_checked"], "paper_part", planted("bound 9x9"))
    with pytest.raises(B.BuildCheckFailed, match=r"size 9x9 is printed as reached but is not among the sizes stored"):
        build(store, tmp_path / "unknown", families=["toy_checked"], source=src)


def test_the_abstracts_words_and_a_doubled_word_fail_the_build(toy, tmp_path, monkeypatch):
    """Issue 62: an abstract of 200 words or more (a generated phrase counted as typeset), a word no test
    supports or a mention of the reproduction reports in the abstract, and a word typed twice (here
    made by a macro: ``(here \\X)`` with ``\\X`` = "here none did") each fail the build; the clean
    abstract passes."""
    store, src = toy

    def phrased(store, plan=None):
        part = toy_part(store, plan)
        part.macro("are indistinguishable from random", "toy", "phrase")
        part.macro("here none did", "toy", "sentence")
        part.macro(" ".join(["word"] * 194), "toy", "long")
        return part
    monkeypatch.setattr(sys.modules["toy_checked"], "paper_part", phrased)
    main = MAIN.replace("BIBLIOGRAPHY", "")

    def with_abstract(text):
        (src / "main.tex").write_text(main.replace("\\begin{document}\n", "\\begin{document}\n\\begin{abstract}"
                                                   + text + "\\end{abstract}\n"))
    with_abstract("We prove a bound for every size.")
    build(store, tmp_path / "ok", families=["toy_checked"], source=src)
    for text, why in (("Models \\ToyPhrase{}.", "the abstract says 'indistinguishable'"),
                      ("Three reproduction reports test three papers.", "the abstract says 'reproduction report'"),
                      ("We prove it \\ToyLong{} and more words.", "the abstract has 200 words, not under 200"),
                      ("Only the rest goes to the exact path (here \\ToySentence{}).", "a word typed twice: 'here here'")):
        with_abstract(text)
        with pytest.raises(B.BuildCheckFailed, match=why):
            build(store, tmp_path / "bad", families=["toy_checked"], source=src)


def test_word_checks_count_as_typeset():
    from verification.paper import words

    assert words.word_count(r"\Guard{k}{tight on \X{}} of $n = 4$ rows", {"X": "3/4"}) == 6
    assert words.repeated_words("the the rest, that that is, 12 12") == ["'the the'"]
    assert words.abstract_problems("fine", "The reproduction reports are elsewhere.", {}) != []


def test_the_related_work_keeps_its_groups_and_its_keys_resolve(toy, tmp_path):
    """Issue 62: the related-work section keeps a paragraph per group of related work, each citing its
    works (verification.paper.words.RELATED_GROUPS), and every key it cites resolves in refs.bib: a
    missing group, a work moved out of its group's paragraph, and a key without an entry each fail the
    build; the complete section passes."""
    from verification.paper.words import RELATED_GROUPS

    store, src = toy
    groups = list(RELATED_GROUPS.values())
    keys = [k for _, ks in groups for k in ks]
    (src / "refs.bib").write_text("".join(f"@misc{{{k}, author={{A. B}}, title={{T}}, howpublished={{x}}, "
                                          f"year={{2020}}}}\n" for k in keys))

    def with_related(paragraphs, extra=""):
        text = "".join(f"\\paragraph{{{title}.}} As in \\citet{{{','.join(ks)}}}.\n\n" for title, ks in paragraphs)
        (src / "sections" / "toy.tex").write_text("\\section{Related work}\n" + text + extra + SECTION)
    with_related(groups)
    build(store, tmp_path / "ok", families=["toy_checked"], source=src)
    (title0, keys0), (title1, keys1) = groups[0], groups[1]
    for paragraphs, extra, why in (
            (groups[1:], f"See \\citet{{{','.join(keys0)}}}.\n", "no paragraph on coefficients of ergodicity"),
            ([(title0, keys0[1:]), (title1, keys1 + keys0[:1])] + groups[2:], "",
             f"paragraph on coefficients of ergodicity does not cite {keys0[0]}"),
            (groups, "\\citep{nosuch2099}\n", "the related work cites nosuch2099, which has no entry")):
        with_related(paragraphs, extra)
        with pytest.raises(B.BuildCheckFailed, match=why):
            build(store, tmp_path / "bad", families=["toy_checked"], source=src)
