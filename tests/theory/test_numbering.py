"""One name per result (issue 62): a result the registry labels ("Theorem D1", "Proposition D1a") is
called so in docs/theory.md, the paper's sections, docs/theorems.md and every string of the code; the
paper numbers it by its name, never by a counter (the ``named`` environment), in the hand-written
sections and in the registry's appendix alike; and the checks that say so can fail."""
import shutil
import subprocess
from pathlib import Path

import pytest

from theory import get, theorems
from verification.paper.numbering import (aux_problems, named_labels, registry_labels, source_problems)
from verification.paper.typeset import NAMED_RESULT, latex_block, theorems_markdown

ROOT = Path(__file__).resolve().parents[2]
SELF = {"verification/paper/numbering.py"}      # the checker's own planted examples


def repository_texts() -> dict[str, str]:
    globs = ("README.md", "docs/*.md", "docs/examples/*.py", "paper/*.tex", "paper/sections/*.tex", "paper/*.j2",
             "theory/*.py", "theory/formal/*.v", "theory/formal/*.md", "verification/**/*.py", "numerics/**/*.py",
             "attnbounds/*.py")
    files = sorted({p for g in globs for p in ROOT.glob(g) if p.is_file()})
    return {str(p.relative_to(ROOT)): p.read_text() for p in files if str(p.relative_to(ROOT)) not in SELF}


def test_every_text_names_each_result_one_way():
    labels, registry = registry_labels()
    assert labels["D1"] == "Theorem" and labels["D1a"] == "Proposition" and labels["D2"] == "Theorem"
    assert source_problems(repository_texts(), labels, registry) == []


def test_the_registry_appendix_and_the_sections_agree():
    """The generated theorem blocks and the hand-written sections, read together: no result numbered
    two ways, and the hand-written D1, D2 and their corollaries carry the registry's names."""
    labels, registry = registry_labels()
    sections = {p.name: p.read_text() for p in (ROOT / "paper" / "sections").glob("*.tex")}
    generated = {"generated/theorems.tex": "\n".join(latex_block(th) for th in theorems())}
    assert source_problems({**sections, **generated}, labels, registry) == []
    named = named_labels({**sections, **generated}, registry)
    assert named["thm:d1"] == named["thm:dobrushin.factor"] == "D1"
    assert named["thm:d2"] == named["thm:dobrushin.product"] == "D2"
    assert named["prop:d1a"] == named["thm:dobrushin.factor.lazy"] == "D1a"
    assert named["cor:causal"] == named["thm:dobrushin.factor.causal"] == "D1c"


def test_docs_theory_and_theorems_use_the_labels():
    theory = (ROOT / "docs" / "theory.md").read_text()
    md = theorems_markdown()
    assert md == (ROOT / "docs" / "theorems.md").read_text()
    for th in theorems():
        if th.label:
            assert th.label in theory, th.label
            assert f"## {th.label}: `{th.id}`" in md


def test_every_preamble_defines_the_named_environment():
    from verification.paper.toy import TOY_MAIN, TOY_PAPER

    for text in ((ROOT / "paper" / "sections" / "preamble.tex").read_text(), TOY_MAIN, TOY_PAPER):
        assert NAMED_RESULT in text
    block = latex_block(get("dobrushin.factor.lazy"))
    assert block.startswith("\\begin{named}{Proposition}{D1a}[") and block.endswith("\\end{named}")


@pytest.mark.parametrize("text, says", [
    (r"\begin{theorem}[Theorem D1, every $n$]\label{x} a \end{theorem}", "is numbered by the counter"),
    (r"\begin{corollary}[D2c]\label{x} a \end{corollary}", "is numbered by the counter"),
    (r"\begin{named}{Theorem}{D1a}\label{x} a \end{named}", "the registry calls it Proposition D1a"),
    (r"\begin{named}{Theorem}{D9}\label{x} a \end{named}", "no registered result has it"),
    ("as Theorem D2c says", "Theorem D2c is Corollary D2c"),
    ("Theorems D1a and D2", "Theorem D1a is Proposition D1a"),
    ("by Theorem D7", "no registered result has that name"),
    ("by Theorem 10 of the registry", "a result numbered by hand"),
    (r"\begin{named}{Proposition}{D1a}\label{p:a} a \end{named} Corollary~\ref{p:a}", "refers to Proposition D1a"),
    (r"\begin{lemma}\label{l} a \end{lemma} Theorem~\ref{l}", "refers to Lemma"),
    ("see Theorem~\\ref{thm:dobrushin.product.causal}", "refers to Corollary D2c"),
])
def test_the_source_check_can_fail(text, says):
    labels, registry = registry_labels()
    problems = source_problems({"planted.tex": text}, labels, registry)
    assert len(problems) == 1 and says in problems[0], problems


def test_the_source_check_passes_what_is_right():
    labels, registry = registry_labels()
    ok = (r"\begin{named}{Proposition}{D1a}[any real matrix]\label{p} a \end{named} Proposition~\ref{p}, "
          r"Theorem~\ref{thm:dobrushin.factor}, Theorems D1 and D2, Corollary D2s, Seneta's Theorem 4.8, "
          r"\begin{lemma}[Normal form of a counterexample to D2's bound]\label{l} a \end{lemma} Lemma~\ref{l}")
    assert source_problems({"ok.tex": ok}, labels, registry) == []


def test_the_aux_check_can_fail():
    aux = "\\newlabel{thm:d1}{{D1}{3}}\n\\newlabel{thm:dobrushin.factor}{{10}{14}}\n"
    assert aux_problems(aux, {"thm:d1": "D1"}) == []
    problems = aux_problems(aux, {"thm:d1": "D1", "thm:dobrushin.factor": "D1"})
    assert problems == ["\\label{thm:dobrushin.factor} of result D1 prints '10', not its name"]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not found (apt-get install texlive-latex-base)")
def test_a_compiled_document_numbers_named_results_by_their_names(tmp_path):
    """The named environment in pdflatex: the registry's D1 and a hand-written D1 both print D1, an
    unnamed lemma keeps the counter; without the environment's \\@currentlabel the check fails."""
    body = "\n".join([r"\begin{lemma}\label{lem:a} a \end{lemma}",
                      r"\begin{named}{Theorem}{D1}[every $n$]\label{thm:d1} b \end{named}",
                      latex_block(get("dobrushin.factor")), latex_block(get("dobrushin.factor.lazy")),
                      r"Theorem~\ref{thm:d1}, Proposition~\ref{thm:dobrushin.factor.lazy}."])

    def compile_(named: str) -> str:
        doc = "\n".join([r"\documentclass{article}\usepackage{amsmath,amssymb,amsthm}\usepackage{hyperref}",
                         r"\newtheorem{theorem}{Theorem}\newtheorem{lemma}[theorem]{Lemma}", named,
                         r"\begin{document}", body, r"\end{document}"])
        (tmp_path / "t.tex").write_text(doc)
        for _ in range(2):
            subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                           capture_output=True, timeout=120, check=True)
        return (tmp_path / "t.aux").read_text()

    expected = {"thm:d1": "D1", "thm:dobrushin.factor": "D1", "thm:dobrushin.factor.lazy": "D1a"}
    aux = compile_(NAMED_RESULT)
    assert aux_problems(aux, expected) == [] and "\\newlabel{lem:a}{{1}" in aux
    broken = NAMED_RESULT.replace(r"\def\@currentlabel{#2}", "")      # the label would print no name
    assert len(aux_problems(compile_(broken), expected)) == 3
