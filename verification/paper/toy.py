"""A one-section toy paper the tests build: its hand-written TeX sources (``TOY_MAIN``, a main.tex that
inputs the generated macros and theorems and one section ``sections/toy.tex``; ``TOY_PAPER``, the same
at the real paper's page geometry), which :mod:`verification.testing.fakes` hands the tests."""
from verification.paper.typeset import NAMED_RESULT

# main.tex of a toy paper: the generated macros and theorems, one section `sections/toy.tex`
TOY_MAIN = r"""\documentclass{article}
\usepackage{amsmath,amssymb,amsthm,booktabs,graphicx,adjustbox}
\newtheorem{theorem}{Theorem}\newtheorem{proposition}{Proposition}\newtheorem{conjecture}{Conjecture}\newtheorem{corollary}{Corollary}
NAMED
\input{generated/macros}
\begin{document}
\input{generated/theorems}
\input{sections/toy}
\label{attn:main-end}
\appendix\label{attn:appendix-start}
\input{generated/appendix}
\label{attn:end}
\end{document}
"""


TOY_PAPER = r"""\documentclass[11pt]{article}
\usepackage[margin=2.5cm]{geometry}
\usepackage{amsmath,amssymb,amsthm,booktabs,graphicx}
\usepackage[hidelinks]{hyperref}
\newtheorem{theorem}{Theorem}\newtheorem{proposition}{Proposition}\newtheorem{conjecture}{Conjecture}\newtheorem{corollary}{Corollary}
NAMED
\input{generated/macros}
\begin{document}
A \BuildKind{} build. \input{generated/theorems}
\input{sections/toy}
\label{attn:main-end}
BIBLIOGRAPHY
\appendix\label{attn:appendix-start}
\input{generated/appendix}
\label{attn:end}
\end{document}
"""
TOY_MAIN, TOY_PAPER = (t.replace("NAMED", NAMED_RESULT) for t in (TOY_MAIN, TOY_PAPER))   # named results

"""A toy paper at the real one's page geometry, with hyperref and the labels the page checks read
(``BIBLIOGRAPHY``: where a test puts its citations and bibliography, or nothing)."""
