"""Theorem objects and the registry (the sympy.stats pattern: one frozen object per claim).

A theorem carries a dotted id, a category, its statement as sympy relations, the equality
condition, a hypothesis check returning :class:`Hypotheses` (ok True / False / None = undecided,
with a reason naming the failed condition), a witness family on which equality is known to hold,
references, and evaluators per backend given as dotted paths (``"numerics.dobrushin:factor_slack"``)
so that theory/ never imports numerics/. Hypothesis functions build their answer from
:func:`check` (one condition and its message) and :func:`hyp_all` (their conjunction).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Callable, Mapping, Optional, Union

import sympy as sp

_LATEX_TEXT = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
               "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}", "<": r"\textless{}",
               ">": r"\textgreater{}"}


def latex_text(text: str) -> str:
    r"""Plain words for LaTeX text mode, its special characters escaped (in one pass), and a double
    hyphen kept as two (an option such as ``--full``, never an en dash).

    >>> print(latex_text("A_ii >= 50% {x} --full"))
    A\_ii \textgreater{}= 50\% \{x\} -{}-full
    """
    import re

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
}

# sympy's printing of the Dobrushin statements, rewritten as the papers write them (applied in order)
LATEX_REWRITES: tuple[tuple[str, str], ...] = (
    (r"\\left\(\\frac\{1\}\{2\}\\right\) \\left\(\\mathbb\{I\} \+ A\\right\)", r"\\frac{1}{2}(I + A)"),
    (r"\\delta\{\\left\(((?:(?!\\right\)).)*?) ?\\right\)\}", r"\\delta(\1)"),
)

CATEGORIES = ("proved", "conjecture", "sanity", "statistical")  # records: verdicts, outcomes, verdicts, outcomes


@dataclass(frozen=True)
class Hypotheses:
    """Outcome of a hypothesis check (as sympy.stats' ``_value_check``).

    ``ok`` is True, False, or None (undecided); ``reason`` names the condition that failed or could
    not be decided, and where (row, shape, parameter); it is "" exactly when ``ok`` is True.
    Truthy only when ``ok is True``, so ``if th.hypotheses(x):`` means "known to hold".
    """

    ok: Optional[bool]
    reason: str = ""

    def __post_init__(self) -> None:
        if not (self.ok is True or self.ok is False or self.ok is None):
            raise TypeError(f"Hypotheses.ok must be True, False or None, got {self.ok!r}")
        if not isinstance(self.reason, str):
            raise TypeError(f"Hypotheses.reason must be a str, got {type(self.reason).__name__}")
        if self.ok is True and self.reason:
            raise ValueError(f"Hypotheses: ok=True takes no reason, got {self.reason!r}")
        if self.ok is not True and not self.reason:
            raise ValueError(f"Hypotheses: ok={self.ok} needs a reason naming the condition")

    def __bool__(self) -> bool:
        return self.ok is True


HOLDS = Hypotheses(True)


def _truth(condition: Any) -> Optional[bool]:
    """True / False / None for a bool, numpy bool, sympy Boolean (undecidable relation: None) or None."""
    if condition is None:
        return None
    if isinstance(condition, Hypotheses):
        return condition.ok
    if isinstance(condition, sp.Basic):
        return True if condition is sp.true else False if condition is sp.false else None
    return bool(condition)


def check(condition: Any, reason: str) -> Hypotheses:
    """One condition: ``HOLDS`` if it is true, else ok False / None (undecided) with ``reason``."""
    ok = _truth(condition)
    return HOLDS if ok is True else Hypotheses(ok, reason)


Check = Union[Hypotheses, Callable[[], Hypotheses]]


def hyp_all(*checks: Check) -> Hypotheses:
    """Conjunction in order: the first False (later checks are not evaluated), else the first
    undecided, else ``HOLDS``. A zero-argument callable is evaluated only when reached, for
    conditions that make sense only once the earlier ones hold (a shape after "is a matrix")."""
    undecided = None
    for c in checks:
        h = c() if callable(c) else c
        if not isinstance(h, Hypotheses):
            raise TypeError(f"hyp_all: expected Hypotheses, got {type(h).__name__}; wrap it in check()")
        if h.ok is False:
            return h
        if h.ok is None and undecided is None:
            undecided = h
    return HOLDS if undecided is None else undecided


@dataclass(frozen=True)
class Theorem:
    id: str
    title: str
    category: str
    statement: sp.Basic                     # a sympy relation (or And of relations)
    equality: str                           # the equality condition, in words (plain text: logs, the CLI)
    hypotheses: Callable[[Any], Hypotheses]  # instance -> Hypotheses(ok, reason)
    witness: Callable[[], Any]              # an instance on which equality holds
    evaluators: Mapping[str, str] = field(default_factory=dict)  # backend -> "module:function"
    references: tuple[str, ...] = ()
    symbols: Mapping[str, str] = field(default_factory=dict)     # symbol -> meaning
    # sizes machine-checked by SMT (numerics.smt, `attnbounds prove`): ((statement key, dims, seconds), ...):
    # proved for all matrices of every size from 2 up to dims (D2: cubes); seconds at dims, 60 s budget
    smt_checked: tuple = ()
    # the equality condition for the paper and docs/theorems.md: words with inline math in $...$ (LaTeX
    # inside the dollars, no backslash outside them), so that one text serves LaTeX and Markdown
    equality_tex: str = ""
    # formal proofs for every n checked by Coq + mathcomp (`make proofs`; theory/formal/README.md):
    # ("file.v:lemma", ...) relative to theory/formal/, each closed under the global context (no axiom)
    formal: tuple[str, ...] = ()
    # what the statement's paper proof (docs/theory.md, paper/sections/proofs.tex) says beyond the formal
    # lemmas, proved on paper only: the paper lists them as not formalised (generated from here); words
    # with inline math in $...$, as equality_tex
    not_formal: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"theorem {self.id}: category {self.category!r} not in {CATEGORIES}")
        if "." not in self.id:
            raise ValueError(f"theorem id {self.id!r} must be dotted, e.g. 'dobrushin.factor'")

    def latex(self) -> str:
        """LaTeX of the statement, named symbols printed as in the papers (:data:`LATEX_SYMBOLS`)."""
        names = {sym: LATEX_SYMBOLS[sym.name] for sym in self.statement.atoms(sp.Symbol)
                 if sym.name in LATEX_SYMBOLS}
        import re

        text = sp.latex(self.statement, symbol_names=names)
        for pattern, repl in LATEX_REWRITES:
            text = re.sub(pattern, repl, text)
        return text

    def equality_latex(self) -> str:
        """The equality condition for LaTeX: :attr:`equality_tex` (its words escaped, its ``$...$``
        math kept), else the plain words escaped."""
        return math_text(self.equality_tex) if self.equality_tex else latex_text(self.equality)

    def latex_block(self) -> str:
        """A ``theorem`` environment (amsthm) with a label, the statement in display math and the
        equality condition in words and inline math, set loosely (``\\sloppy``: a long formula moves to
        the next line rather than into the margin)."""
        kind = {"proved": "theorem", "sanity": "proposition"}.get(self.category, "conjecture")
        return (f"\\begin{{{kind}}}[{latex_text(self.title)}]\\label{{thm:{self.id}}}\n"
                f"\\[ {self.latex()} \\]\n{{\\sloppy Equality: {self.equality_latex()}.\\par}}\n\\end{{{kind}}}")

    def evaluator(self, backend: str) -> Callable:
        """Resolve the evaluator registered for ``backend`` (imports numerics lazily)."""
        try:
            path = self.evaluators[backend]
        except KeyError:
            raise KeyError(f"theorem {self.id} has no {backend!r} evaluator; "
                           f"it has {sorted(self.evaluators)}") from None
        module, _, name = path.partition(":")
        return getattr(import_module(module), name)


REGISTRY: dict[str, Theorem] = {}
# The modules that register their theorems on import (each imports this one), named here and
# imported by name in load_all. Add a new family here.
THEORY_MODULES: tuple[str, ...] = ("theory.dobrushin", "theory.rank", "theory.poincare", "theory.san")


def load_all() -> None:
    """Import every theorem family so that the registry is complete."""
    for name in THEORY_MODULES:
        import_module(name)


def register(theorem: Theorem) -> Theorem:
    """Add a theorem; re-registering the same id with a different object is an error."""
    old = REGISTRY.get(theorem.id)
    if old is not None and old is not theorem:
        raise ValueError(f"theorem id {theorem.id!r} registered twice")
    REGISTRY[theorem.id] = theorem
    return theorem


def get(theorem_id: str) -> Theorem:
    load_all()
    try:
        return REGISTRY[theorem_id]
    except KeyError:
        raise KeyError(f"no theorem {theorem_id!r}; known: {sorted(REGISTRY)}") from None


def theorems() -> list[Theorem]:
    load_all()
    return [REGISTRY[k] for k in sorted(REGISTRY)]


def theorems_markdown() -> str:
    """Every registered theorem as Markdown (``docs/theorems.md`` is this text; a test keeps it so)."""
    out = ["# Registered theorems", "",
           "Generated from the registry: `attnbounds theorems --markdown > docs/theorems.md`.", ""]
    for th in theorems():
        out += [f"## `{th.id}` ({th.category})", "", th.title, "", f"$$ {th.latex()} $$", "",
                f"- equality: {th.equality_tex or th.equality}", f"- backends: {', '.join(sorted(th.evaluators))}"]
        out += [f"- formal proof (Coq): `theory/formal/{f.replace(':', '` lemma `')}`" for f in th.formal]
        out += [f"- proved on paper only (not formalised): {x}" for x in th.not_formal]
        out += [f"- reference: {r}" for r in th.references] + [""]
    return "\n".join(out)
