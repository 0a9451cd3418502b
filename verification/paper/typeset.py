"""How a registered theorem is typeset: its statement, hypotheses and equality condition in LaTeX
(a ``theorem`` block for the paper, ``attnbounds theorems --latex``) and every theorem as Markdown
(``docs/theorems.md``, ``attnbounds theorems --markdown``). The registry (:mod:`theory.registry`)
holds the theorems as data; this module prints them.

>>> from theory.registry import get
>>> print(statement_latex(get("dobrushin.factor")))
\\delta(\\frac{1}{2}(I + A)) \\leq \\frac{\\delta(A)}{2} + \\frac{1}{2}
"""
from __future__ import annotations

import re

import sympy as sp

from theory.registry import Theorem, get, theorems

_LATEX_TEXT = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
               "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}", "<": r"\textless{}",
               ">": r"\textgreater{}"}


def latex_text(text: str) -> str:
    r"""Plain words for LaTeX text mode, its special characters escaped (in one pass), and a double
    hyphen kept as two (an option such as ``--full``, never an en dash).

    >>> print(latex_text("A_ii >= 50% {x} --full"))
    A\_ii \textgreater{}= 50\% \{x\} -{}-full
    """
    return re.sub(r"--|[\\&%$#_{}~^<>]", lambda m: "-{}-" if m.group(0) == "--" else _LATEX_TEXT[m.group(0)], text)


def math_text(text: str) -> str:
    r"""Words with inline math for LaTeX: the words escaped (:func:`latex_text`), each ``$...$``
    kept as it is (an odd number of dollars is an error).

    >>> print(math_text(r"if $A_{ii} \ge A_{ji}$ for 50% of rows_x"))
    if $A_{ii} \ge A_{ji}$ for 50\% of rows\_x
    """
    pieces = text.split("$")
    if len(pieces) % 2 == 0:
        raise ValueError(f"unbalanced $ in {text!r}")
    return "".join(latex_text(p) if k % 2 == 0 else f"${p}$" for k, p in enumerate(pieces))


# How named symbols print in LaTeX: sympy's default mangles names such as "rank(A B^T)" or "Var_mu_f".
LATEX_SYMBOLS: dict[str, str] = {
    "rank(A B^T)": r"\operatorname{rank}(A B^{\top})",
    "d_head": r"d_{\mathrm{head}}",
    "Var_mu_f": r"\operatorname{Var}_{\mu}(f)",
    "E_mu_gradf2": r"\mathbb{E}_{\mu}\|\nabla f\|^{2}",
    "E_beta_F": r"\mathbb{E}_{\mu_{\beta}}[F]",
    "E_beta_L": r"\mathbb{E}_{\mu_{\beta}}[L]",
    "F_star": r"F(\theta^{*}_{\lambda})",
    "L_theta_star": r"L(\theta^{*}_{\lambda})",
    "r_SDE": r"r_{\mathrm{SDE}}",
    "r_GD": r"r_{\mathrm{GD}}",
    "r_hat": r"\hat{r}",
    "rank W_hat": r"\operatorname{rank}\hat{W}",
    "rank M_static": r"\operatorname{rank} M_{\mathrm{static}}",
    "E||Delta X||_F^2": r"\mathbb{E}\|\Delta X\|_{F}^{2}",
    "r^*": r"r^{*}",
    "F_min": r"F_{\min}",
    "E_beta_dist2": r"\mathbb{E}_{\mu_{\beta}}|\theta - \theta^{*}_{\lambda}|^{2}",
    "tr_H_inv": r"\operatorname{tr}(H^{-1})",
}

# sympy's printing of the Dobrushin statements, rewritten as the papers write them (applied in order)
LATEX_REWRITES: tuple[tuple[str, str], ...] = (
    (r"\\left\(\\frac\{1\}\{2\}\\right\) \\left\(\\mathbb\{I\} \+ A\\right\)", r"\\frac{1}{2}(I + A)"),
    (r"\\delta\{\\left\(((?:(?!\\right\)).)*?) ?\\right\)\}", r"\\delta(\1)"),
)


def statement_latex(th: Theorem) -> str:
    """LaTeX of the statement, named symbols printed as in the papers (:data:`LATEX_SYMBOLS`)."""
    names = {sym: LATEX_SYMBOLS[sym.name] for sym in th.statement.atoms(sp.Symbol)
             if sym.name in LATEX_SYMBOLS}
    text = sp.latex(th.statement, symbol_names=names)
    for pattern, repl in LATEX_REWRITES:
        text = re.sub(pattern, repl, text)
    return text


def equality_latex(th: Theorem) -> str:
    """The equality condition for LaTeX: :attr:`equality_tex` (its words escaped, its ``$...$``
    math kept), else the plain words escaped."""
    return math_text(th.equality_tex) if th.equality_tex else latex_text(th.equality)


def hypotheses_latex(th: Theorem) -> str:
    """The hypotheses for LaTeX (:meth:`~theory.registry.Theorem.hypotheses_words`: its words escaped, its ``$...$`` math kept)."""
    return math_text(th.hypotheses_words())


# The environment of a result with a name (Theorem.label, "Theorem D1"): headed and referenced by its name,
# never by a counter, so that the paper, the registry's appendix and docs/theory.md number it one way. Every
# document's preamble holds this text (paper/sections/preamble.tex, the toy papers; tests check it).
NAMED_RESULT = r"""\makeatletter
\newtheorem*{named@result}{\named@head}
\newenvironment{named}[2]{\def\named@head{#1~#2}\csname phantomsection\endcsname\def\@currentlabel{#2}\named@result}{\endnamed@result}
\makeatother"""


def latex_block(th: Theorem) -> str:
    """A ``theorem`` environment (amsthm) with a label, its hypotheses in words and inline math,
    the statement in display math and the equality condition, one paragraph set loosely
    (``\\sloppy``: a long formula moves to the next line rather than into the margin). A theorem
    with a :attr:`~theory.registry.Theorem.label` is a ``named`` environment (:data:`NAMED_RESULT`):
    "Theorem D1 (its title)", and ``\\ref{thm:<id>}`` prints D1."""
    kind = {"proved": "theorem", "sanity": "proposition"}.get(th.category, "conjecture")
    source = ""
    if th.follows_from:
        kind, source = "corollary", f" It follows from {ref_latex(th.follows_from)} (a proof on paper)."
    hyp = hypotheses_latex(th)
    hyp = f"Hypotheses: {hyp}.\n" if hyp else ""
    begin, end = f"\\begin{{{kind}}}", f"\\end{{{kind}}}"
    if th.label:
        begin, end = f"\\begin{{named}}{{{th.label_kind}}}{{{th.label_name}}}", "\\end{named}"
    return (f"{begin}[{latex_text(th.title)}]\\label{{thm:{th.id}}}\n{{\\sloppy {hyp}"
            f"\\[ {statement_latex(th)} \\]\nEquality: {equality_latex(th)}.{source}\\par}}\n{end}")


def ref_latex(theorem_id: str) -> str:
    """How the documents refer to a registered theorem: its label's kind and a reference
    ("Theorem~\\ref{thm:dobrushin.factor}", which prints Theorem D1), else "Theorem~\\ref{...}"."""
    return f"{get(theorem_id).label_kind or 'Theorem'}~\\ref{{thm:{theorem_id}}}"


def theorems_markdown() -> str:
    """Every registered theorem as Markdown (``docs/theorems.md`` is this text; a test keeps it so)."""
    out = ["# Registered theorems", "",
           "Generated from the registry: `attnbounds theorems --markdown > docs/theorems.md`.", ""]
    for th in theorems():
        hyp = th.hypotheses_words()
        out += [f"## {th.label + ': ' if th.label else ''}`{th.id}` ({th.category})", "", th.title, ""] + ([f"Hypotheses: {hyp}.", ""] if hyp else [])
        out += [f"$$ {statement_latex(th)} $$", "",
                f"- equality: {th.equality_tex or th.equality}", f"- backends: {', '.join(sorted(th.evaluators))}"]
        out += [f"- formal proof (Coq): `theory/formal/{f.replace(':', '` lemma `')}`" for f in th.formal]
        out += [f"- proved on paper only (not formalised): {x}" for x in th.not_formal]
        out += [f"- a corollary of `{th.follows_from}` (proved on paper; the campaigns test it on draws)"] \
            if th.follows_from else []
        out += [f"- reference: {r}" for r in th.references] + [""]
    return "\n".join(out)
