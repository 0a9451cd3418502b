"""Every theorem's LaTeX is well-formed: named symbols print as in the papers, text is escaped, and
the whole list compiles (a TeX engine where installed; matplotlib's mathtext for the math always)."""
from verification.paper.typeset import latex_block, hypotheses_latex, statement_latex
import shutil
import subprocess

import pytest
from matplotlib.mathtext import MathTextParser

from theory import theorems
from verification.paper.typeset import latex_text

PARSER = MathTextParser("path")


def balanced(s: str) -> bool:
    depth = 0
    for ch in s.replace(r"\{", "").replace(r"\}", ""):
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("th", theorems(), ids=lambda t: t.id)
def test_statement_is_valid_math(th):
    s = statement_latex(th)
    assert balanced(s), s
    PARSER.parse(f"${s}$")                                   # raises on malformed math
    for mangled in ("Var_{", "E_{\\beta F}", "^{T)}", "_{hat}", "E||", "gradf2"):
        assert mangled not in s, (th.id, s)


def test_named_symbols_print_as_in_the_papers():
    by_id = {t.id: statement_latex(t) for t in theorems()}
    assert by_id["rank.weights.head_rank"] == r"\operatorname{rank}(A B^{\top}) \leq d_{\mathrm{head}}"
    assert r"\operatorname{Var}_{\mu}(f)" in by_id["poincare.gibbs.test_function_lower"]
    assert by_id["rank.linear.data_recovery"] == r"\hat{r} = r^{*}"


def test_blocks_are_labelled_balanced_and_escape_text():
    for t in theorems():
        b = latex_block(t)
        assert b.startswith("\\begin{") and f"\\label{{thm:{t.id}}}" in b
        assert "A_ii" not in b and balanced(b)
    assert latex_text("a_b <= c") == r"a\_b \textless{}= c"


needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                    reason="pdflatex is not installed: the blocks' math was checked by mathtext only "
                                           "(apt-get install texlive-latex-recommended texlive-fonts-recommended)")


def compile_blocks(blocks: list[str], folder) -> subprocess.CompletedProcess:
    """pdflatex on an article holding ``blocks`` (the theorem environments the registry uses, and the
    ``named`` one of a result with a label: verification.paper.typeset.NAMED_RESULT)."""
    from verification.paper.typeset import NAMED_RESULT

    doc = ("\\documentclass{article}\\usepackage{amsmath,amssymb,amsthm}\\newtheorem{theorem}{Theorem}"
           "\\newtheorem{proposition}{Proposition}\\newtheorem{conjecture}{Conjecture}\\newtheorem{corollary}{Corollary}"
           + NAMED_RESULT + "\\begin{document}\n"
           + "\n".join(blocks) + "\n\\end{document}\n")
    (folder / "t.tex").write_text(doc)
    return subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=folder,
                          capture_output=True, text=True, errors="replace", timeout=120)


@needs_pdflatex
def test_blocks_compile_with_pdflatex(tmp_path):
    run = compile_blocks([latex_block(t) for t in theorems()], tmp_path)
    assert run.returncode == 0, run.stdout[-2000:]


@needs_pdflatex
def test_a_planted_latex_error_fails_the_compile(tmp_path):
    """Planted: a block whose math has a subscript with nothing under it; pdflatex stops on it."""
    planted = latex_block(theorems()[0]).replace("\\end{", "$A_$ \\end{", 1)
    run = compile_blocks([latex_block(t) for t in theorems()[1:]] + [planted], tmp_path)
    assert run.returncode != 0 and "! Missing { inserted." in run.stdout, run.stdout[-2000:]


# -- issue 26 item 3: titles in words, equality conditions as LaTeX math ------------------------------
import re  # noqa: E402

from theory.registry import Theorem
from verification.paper.typeset import math_text

ASCII_MATH = re.compile(r"<=|>=|!=|\\textless\{\}=|\\textgreater\{\}=|(?<!\\)\bdelta\(|\^T\b|\|\|")
OWN = ("dobrushin.", "rank.", "poincare.")       # theory.san's theorems are filled by their owners


def words_outside_math(tex: str) -> str:
    return "".join(p for k, p in enumerate(tex.split("$")) if k % 2 == 0)


@pytest.mark.parametrize("th", [t for t in theorems() if t.id.startswith(OWN)], ids=lambda t: t.id)
def test_titles_are_words_and_equality_conditions_are_math(th):
    assert not re.search(r"[<>=^_\\|]|\bdelta\b|\bsqrt\b", th.title), th.title
    assert len(th.title) <= 70, th.title
    assert th.equality_tex, f"{th.id}: no equality_tex (the paper would print ASCII)"
    words = words_outside_math(th.equality_tex)
    assert "\\" not in words and not ASCII_MATH.search(words), (th.id, words)
    block = latex_block(th)
    assert not ASCII_MATH.search(block), (th.id, block)
    for k, piece in enumerate(th.equality_tex.split("$")):
        if k % 2:
            assert balanced(piece), (th.id, piece)


def test_the_ascii_check_catches_a_planted_condition():
    planted = Theorem(id="x.planted", title="Planted", category="proved", statement=theorems()[0].statement,
                      equality="A_ii >= A_ji", hypotheses=lambda x: None, witness=lambda: None)
    assert ASCII_MATH.search(latex_block(planted))            # no equality_tex: the words leak
    fixed = Theorem(**{**planted.__dict__, "equality_tex": r"$A_{ii} \ge A_{ji}$"})
    assert not ASCII_MATH.search(latex_block(fixed))
    with pytest.raises(ValueError, match="unbalanced"):
        math_text("an $x odd dollar")


def test_theorems_md_renders_the_same_conditions():
    from verification.paper.typeset import theorems_markdown

    md = theorems_markdown()
    for th in theorems():
        if th.id.startswith(OWN):
            assert f"- equality: {th.equality_tex}" in md and th.title in md


# -- every typeset form states the hypotheses (a causal theorem is false as printed without them) -------
def causal_user_theorem():
    from theory.expr import A, I, delta

    return Theorem(id="t59.causal", title="Causal D1 is an equality", category="proved", assume=("causal",),
                   statement=delta((I + A) / 2) >= (1 + delta(A)) / 2)


@pytest.mark.parametrize("th", theorems(), ids=lambda t: t.id)
def test_every_theorem_states_its_hypotheses_in_math(th):
    words = th.hypotheses_tex
    assert words, f"{th.id}: no hypotheses_tex (its typeset statement would claim more than it proves)"
    assert "\\" not in words_outside_math(words) and not ASCII_MATH.search(words_outside_math(words)), words
    for k, piece in enumerate(words.split("$")):
        if k % 2:
            assert balanced(piece), (th.id, piece)
    assert f"Hypotheses: {hypotheses_latex(th)}." in latex_block(th)
    assert not ASCII_MATH.search(latex_block(th)), latex_block(th)


def test_the_typeset_forms_of_a_causal_theorem_say_it_is_causal():
    from verification.paper.typeset import theorems_markdown

    built_in = {t.id: t for t in theorems()}["dobrushin.factor.causal"]
    assert "lower-triangular (causal)" in latex_block(built_in)
    assert "Hypotheses: $A$ is a lower-triangular (causal) row-stochastic" in theorems_markdown()
    mine = causal_user_theorem()          # derived from assume=
    assert mine.hypotheses_tex == "$A$ is a lower-triangular (causal) row-stochastic $n \\times n$ matrix"
    assert "Hypotheses: $A$ is a lower-triangular (causal)" in latex_block(mine)


def test_the_cli_prints_the_hypotheses_in_every_form(tmp_path, capsys):
    from theory.plugins import unload_files
    from verification.cli import main

    path = tmp_path / "causal59.py"
    path.write_text("from theory import Theorem, register\nfrom theory.expr import A, B, I, delta\n"
                    "register(Theorem(id='t59.cli', title='causal', category='proved', assume=('causal',),\n"
                    "                 statement=delta((I + A) / 2) >= (1 + delta(A)) / 2))\n")
    try:
        assert main(["theorems", "--theory", str(path), "--latex"]) == 0
        out = capsys.readouterr().out
        entry = out[out.index("t59.cli"):]
        assert "hypotheses: $A$ is a lower-triangular (causal) row-stochastic $n \\times n$ matrix" in entry
        assert "{\\sloppy Hypotheses: $A$ is a lower-triangular (causal)" in entry          # the LaTeX block
        assert main(["theorems", "--theory", str(path), "--markdown"]) == 0
        md = capsys.readouterr().out
        section = md[md.index("## `t59.cli`"):]
        assert section.index("Hypotheses: $A$ is a lower-triangular (causal)") < section.index("$$")
    finally:
        unload_files()


@needs_pdflatex
def test_a_user_theorems_block_with_its_hypotheses_compiles(tmp_path):
    run = compile_blocks([latex_block(causal_user_theorem())], tmp_path)
    assert run.returncode == 0, run.stdout[-2000:]
