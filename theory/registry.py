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

import numpy as np
import sympy as sp

from theory.tolerances import row_tol

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
    # the rest is derived for a statement over theory.expr (A, B, C, I, delta: a user's bound; see
    # docs/your-theorem.md): hypotheses "row-stochastic" (and `assume`), a witness found among small
    # exact candidates, the evaluators of numerics.expr; required for any other statement
    equality: str = ""                      # the equality condition, in words (plain text: logs, the CLI)
    hypotheses: Optional[Callable[[Any], Hypotheses]] = None  # instance -> Hypotheses(ok, reason)
    witness: Optional[Callable[[], Any]] = None               # an instance on which equality holds
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
    # a statement over theory.expr only: extra hypotheses on every matrix beyond row-stochastic
    # (:data:`theory.expr.ASSUMPTIONS`: "causal" lower triangular, "positive" every entry > 0), and an
    # optional equality condition, a predicate on the exact matrices ({"A": rows of Fractions, ...} ->
    # bool) that the stress sweep checks against the exact tight verdicts
    assume: tuple[str, ...] = ()
    equality_condition: Optional[Callable[[Mapping[str, Any]], bool]] = None
    # a statement over theory.expr only: relations over the same vocabulary an instance must satisfy
    # (e.g. ``where=[ptp(L) <= 2]``); an instance where one is false is not-applicable
    where: tuple = ()
    # a statistical statement that is a proved consequence of another registered theorem (its id): the
    # documents typeset it as a corollary of that theorem, not as a conjecture; its campaigns still
    # test it on draws (outcomes), which is what its category says
    follows_from: str = ""
    # the hypotheses under which the statement is claimed, for every typeset form (the paper's theorem
    # blocks, docs/theorems.md, `attnbounds theorems`, a user's own.md): words with inline math in $...$,
    # as equality_tex; derived for a statement over theory.expr (row-stochastic, one size, `assume`)
    hypotheses_tex: str = ""

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"theorem {self.id}: category {self.category!r} not in {CATEGORIES}")
        if not isinstance(self.id, str) or "." not in self.id or not all(self.id.split(".")):
            raise ValueError(f"theorem id {self.id!r} must be dotted, e.g. 'dobrushin.factor'")
        if not isinstance(self.statement, sp.Basic):
            raise ValueError(f"theorem {self.id}: statement must be a sympy relation, got {type(self.statement).__name__}")
        from theory import expr

        object.__setattr__(self, "assume", tuple(self.assume))
        object.__setattr__(self, "where", tuple(self.where))
        form = expr.normal_form(self.statement, self.assume) if expr.is_statement(self.statement, self.assume) else None
        matrices = form.matrices if form is not None else ()
        if matrices:
            expr.check_assumptions(self.assume, self.id)
            for w in self.where:                      # the where= relations read in the same vocabulary
                expr.normal_form(w, self.assume)
            if self.hypotheses is None:
                object.__setattr__(self, "hypotheses", DerivedHypothesis(matrices, self.assume, tuple(form.symbols),
                                                                         tuple(form.params)))
            if self.witness is None:
                object.__setattr__(self, "witness", DerivedWitness(self.statement, self.assume, self.where))
            if not self.evaluators:
                object.__setattr__(self, "evaluators", dict(expr.EVALUATORS))
            if not self.equality:
                object.__setattr__(self, "equality", "not stated" if self.equality_condition is None
                                   else "the predicate equality_condition")
            if not self.hypotheses_tex:
                words = expr.hypotheses_tex(matrices, self.assume, dict(form.symbols), form.params)
                if self.where:
                    words += "; where " + ", ".join(f"${sp.latex(w)}$" for w in self.where)
                object.__setattr__(self, "hypotheses_tex", words)
        else:
            missing = [f for f in ("hypotheses", "witness") if getattr(self, f) is None]
            if missing or self.assume or self.where or self.equality_condition is not None:
                what = (f"needs {' and '.join(missing)}=" if missing else
                        "takes assume=, where= and equality_condition= only for a statement over theory.expr")
                raise ValueError(f"theorem {self.id}: its statement is not over theory.expr (A, B, C, I, delta), "
                                 f"so it {what}")

    @property
    def matrices(self) -> tuple[str, ...]:
        """The matrix symbols a statement over :mod:`theory.expr` is about (A, B, C first); () for any
        other statement (the built-in theorems' symbols, which no evaluator derives from)."""
        from theory import expr

        return expr.matrices_of(self.statement, self.assume) if expr.is_statement(self.statement, self.assume) else ()

    @property
    def is_expr(self) -> bool:
        """Whether the statement is over :mod:`theory.expr`: everything the suite does with the
        theorem (sweep, search, proof in small n, tables) is derived from it."""
        return bool(self.matrices)

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

    def hypotheses_words(self) -> str:
        """The hypotheses in words with inline math: :attr:`hypotheses_tex`, else (a theorem registered
        without it, whose statement is not over theory.expr) the first line of its hypothesis
        function's docstring, as plain words; "" when neither says anything."""
        if self.hypotheses_tex:
            return self.hypotheses_tex
        doc = (getattr(self.hypotheses, "__doc__", None) or "").strip()
        return doc.splitlines()[0].rstrip(".").replace("$", "") if doc else ""

    def hypotheses_latex(self) -> str:
        """The hypotheses for LaTeX (:meth:`hypotheses_words`: its words escaped, its ``$...$`` math kept)."""
        return math_text(self.hypotheses_words())

    def latex_block(self) -> str:
        """A ``theorem`` environment (amsthm) with a label, its hypotheses in words and inline math,
        the statement in display math and the equality condition, one paragraph set loosely
        (``\\sloppy``: a long formula moves to the next line rather than into the margin)."""
        kind = {"proved": "theorem", "sanity": "proposition"}.get(self.category, "conjecture")
        source = ""
        if self.follows_from:
            kind, source = "corollary", f" It follows from Theorem~\\ref{{thm:{self.follows_from}}} (a proof on paper)."
        hyp = self.hypotheses_latex()
        hyp = f"Hypotheses: {hyp}.\n" if hyp else ""
        return (f"\\begin{{{kind}}}[{latex_text(self.title)}]\\label{{thm:{self.id}}}\n{{\\sloppy {hyp}"
                f"\\[ {self.latex()} \\]\nEquality: {self.equality_latex()}.{source}\\par}}\n\\end{{{kind}}}")

    def evaluator(self, backend: str) -> Callable:
        """Resolve the evaluator registered for ``backend`` (imports numerics lazily)."""
        try:
            path = self.evaluators[backend]
        except KeyError:
            raise KeyError(f"theorem {self.id} has no {backend!r} evaluator; "
                           f"it has {sorted(self.evaluators)}") from None
        module, _, name = path.partition(":")
        return getattr(import_module(module), name)


def stochastic(M: Any, name: str = "A", tol: Optional[float] = None) -> Hypotheses:
    """``M`` is a non-empty finite nonnegative matrix whose rows sum to 1 within ``tol``
    (default: :func:`row_tol` of ``M``'s dtype); the reason names the offending row / entry."""
    dtype = getattr(M, "dtype", None)
    tol = row_tol(dtype) if tol is None else float(tol)
    if "bfloat16" in str(dtype) and hasattr(M, "float"):
        M = M.float()                                # torch bfloat16 -> float32, exact
    try:
        if np.iscomplexobj(M):
            return Hypotheses(False, f"{name}: complex entries (dtype {dtype}); a stochastic matrix is real")
        X = np.asarray(M, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return Hypotheses(False, f"{name}: not a real matrix ({exc})")
    if X.ndim != 2 or X.size == 0:
        return Hypotheses(False, f"{name}: must be a non-empty matrix, got shape {X.shape}")
    for bad, what in ((~np.isfinite(X), "non-finite"), (X < 0, "negative")):
        if bad.any():
            i, k = (int(v) for v in np.argwhere(bad)[0])
            return Hypotheses(False, f"{name}: {what} entry {float(X[i, k])!r} at row {i}, column {k}")
    sums = X.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1) > tol)
    if off.size:
        i = int(off[0])
        k = off.size - 1
        more = f"; {k} more row{'s' if k > 1 else ''} off" if k else ""
        dt = "float64" if dtype is None else str(dtype)
        return Hypotheses(False, f"{name}: row {i} sums to {float(sums[i])!r}, not 1 "
                                 f"(tolerance {tol:g} for {dt}){more}")
    return HOLDS


def _entries(M: Any, name: str) -> Any:
    """(float array, exact rows or None) of a matrix given as an array or as rows of numbers
    (exact when every entry is an int, a Fraction or a "p/q" string), or the Hypotheses saying why
    it is not a matrix."""
    from fractions import Fraction as F

    if hasattr(M, "dtype") and not isinstance(M, list):
        return M, None
    try:
        rows = [list(r) for r in M]
    except TypeError:
        return Hypotheses(False, f"{name}: not a matrix (rows of numbers), got {type(M).__name__}")
    exact = all(isinstance(v, (int, F, str)) and not isinstance(v, bool) for r in rows for v in r)
    try:
        if exact:
            E = [[F(v) for v in r] for r in rows]
            return np.array([[float(v) for v in r] for r in E]) if rows and rows[0] else np.zeros((len(rows), 0)), E
        return np.array([[float(v) for v in r] for r in rows]), None
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        return Hypotheses(False, f"{name}: not a matrix of numbers ({exc})")


def _where(X: np.ndarray) -> tuple[int, int]:
    i, k = (int(v) for v in np.argwhere(X)[0])
    return i, k


@dataclass(frozen=True)
class DerivedHypothesis:
    """The derived hypothesis of a statement over the vocabulary, on one instance: every symbol it
    names is present and of its kind (``roles``: name -> kind, stochastic by default; a
    ``stochastic`` matrix square and row-stochastic, rows summing to 1 within
    :func:`theory.tolerances.row_tol`, or exactly for exact entries; a ``logits`` matrix square and
    real; a ``tokens`` matrix n x d, one d for all), all of one size n, ``assume`` holds (on the
    stochastic matrices: ``causal``, ``positive``, ``doubly-stochastic`` (columns sum to 1),
    ``symmetric``; on the logits matrices: ``symmetric``), and every parameter (``params``: (name,
    lo, hi)) lies in its interval. An instance is ``{"A": matrix, ..., "alpha": value}``, or one
    matrix for a statement over one matrix (float arrays, or rows of ints, Fractions or "p/q"
    strings: exact, and checked exactly). A failure is one line naming the symbol, the entry and the
    hypothesis.

    >>> h = DerivedHypothesis(("A",), ("causal",))
    >>> bool(h([[1, 0], [0.5, 0.5]])), h({"A": [[0.5, 0.5], [0.5, 0.5]]}).reason
    (True, 'A: entry 0.5 at row 0, column 1 is above the diagonal (assumed causal)')
    >>> h = DerivedHypothesis(("A", "X"), ("doubly-stochastic",), {"X": "tokens"}, (("alpha", 0, 1),))
    >>> h({"A": [["1/2", "1/2"], ["1/4", "3/4"]], "X": [[1], [2]], "alpha": "1/2"}).reason
    'A: column 0 sums to 3/4, not 1 (assumed doubly-stochastic)'
    >>> h({"A": [[1, 0], [0, 1]], "X": [[1, 2]], "alpha": 2}).reason
    'X: has 1 rows but A has 2 (every matrix of an instance has the same n)'
    >>> h({"A": [[1, 0], [0, 1]], "X": [[1], [2]], "alpha": 2}).reason
    'alpha: 2 is outside its interval [0, 1]'
    """

    matrices: tuple[str, ...]
    assume: tuple[str, ...] = ()
    roles: Any = ()
    params: tuple = ()

    def __call__(self, inst: Any) -> Any:
        from fractions import Fraction as F

        kinds = dict(self.roles)
        names = list(self.matrices) + [p for p, _, _ in self.params]
        if not isinstance(inst, dict):
            if len(names) != 1:
                return Hypotheses(False, f"instance: a dict of {', '.join(names)}, got {type(inst).__name__}")
            inst = {names[0]: inst}
        missing = [m for m in names if m not in inst]
        if missing:
            what = "matrix" if missing[0] in self.matrices else "parameter"
            return Hypotheses(False, f"instance: no {what} {missing[0]} (the statement is about {', '.join(names)})")
        size = width = None
        first = None
        for name in self.matrices:
            kind = kinds.get(name) or "stochastic"
            got = _entries(inst[name], name)
            if isinstance(got, Hypotheses):
                return got
            X, E = got
            X = np.asarray(X)
            if kind == "stochastic" and E is None:
                h = stochastic(X, name)
                if not h:
                    return h
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2 or X.size == 0:
                return Hypotheses(False, f"{name}: must be a non-empty matrix, got shape {X.shape}")
            if kind != "tokens" and X.shape[0] != X.shape[1]:
                return Hypotheses(False, f"{name}: must be square ({kind}), got shape {X.shape}")
            if size is not None and X.shape[0] != size:
                return Hypotheses(False, f"{name}: has {X.shape[0]} rows but {first} has {size} (every matrix of an "
                                         "instance has the same n)")
            size, first = (X.shape[0], name) if size is None else (size, first)
            if kind == "tokens":
                if width is not None and X.shape[1] != width:
                    return Hypotheses(False, f"{name}: has {X.shape[1]} columns but another tokens matrix has "
                                             f"{width} (one d for all)")
                width = X.shape[1]
            if kind != "stochastic":
                if E is None and not np.isfinite(X).all():
                    i, k = _where(~np.isfinite(X))
                    return Hypotheses(False, f"{name}: entry {float(X[i, k])!r} at row {i}, column {k} is not finite")
                if kind == "logits" and "symmetric" in self.assume:
                    bad = (np.array([[a != b for a, b in zip(r, c)] for r, c in zip(E, zip(*E))])
                           if E is not None else X != X.T)
                    if bad.any():
                        i, k = _where(bad)
                        return Hypotheses(False, f"{name}: entries ({i}, {k}) and ({k}, {i}) differ (assumed symmetric)")
                continue
            if E is not None:
                for i, row in enumerate(E):
                    neg = [k for k, v in enumerate(row) if v < 0]
                    if neg:
                        return Hypotheses(False, f"{name}: negative entry {row[neg[0]]} at row {i}, column {neg[0]}")
                    if sum(row) != 1:
                        return Hypotheses(False, f"{name}: row {i} sums to {sum(row)}, not 1 (exactly)")
            if "causal" in self.assume and np.triu(X, 1).any():
                i, k = _where(np.triu(X, 1))
                return Hypotheses(False, f"{name}: entry {float(X[i, k])!r} at row {i}, column {k} is above the "
                                         "diagonal (assumed causal)")
            if "positive" in self.assume and not (X > 0).all():
                i, k = _where(X <= 0)
                return Hypotheses(False, f"{name}: entry {float(X[i, k])!r} at row {i}, column {k} is not positive "
                                         "(assumed positive)")
            if "symmetric" in self.assume:
                bad = (np.array([[a != b for a, b in zip(r, c)] for r, c in zip(E, zip(*E))]) if E is not None
                       else X != X.T)
                if bad.any():
                    i, k = _where(bad)
                    return Hypotheses(False, f"{name}: entries ({i}, {k}) and ({k}, {i}) differ (assumed symmetric)")
            if {"doubly-stochastic", "symmetric"} & set(self.assume):
                why = "doubly-stochastic" if "doubly-stochastic" in self.assume else "symmetric"
                cols = [sum(c) for c in zip(*E)] if E is not None else X.sum(axis=0).tolist()
                tol = 0 if E is not None else row_tol(getattr(inst[name], "dtype", None))
                off = [k for k, c in enumerate(cols) if abs(c - 1) > tol]
                if off:
                    return Hypotheses(False, f"{name}: column {off[0]} sums to {cols[off[0]]}, not 1 (assumed {why})")
        for name, lo, hi in self.params:
            v = inst[name]
            try:
                q = F(v)
            except (TypeError, ValueError, ZeroDivisionError):
                return Hypotheses(False, f"{name}: {v!r} is not a number")
            if isinstance(v, bool) or not F(lo) <= q <= F(hi):
                return Hypotheses(False, f"{name}: {v} is outside its interval [{lo}, {hi}]")
        return HOLDS


@dataclass(frozen=True)
class DerivedWitness:
    """The derived witness: the first of a few small exact instances (rank-one, identity,
    permutation, two-point rows; :func:`numerics.expr.witness.find_witness`) on which the statement
    is an equality, in exact arithmetic; LookupError when none is (a strict bound has none)."""

    statement: Any
    assume: tuple[str, ...] = ()
    where: tuple = ()

    def __call__(self) -> Any:
        from importlib import import_module

        return import_module("numerics.expr.witness").find_witness(self.statement, self.assume, self.where)


REGISTRY: dict[str, Theorem] = {}
# The modules that register their theorems on import (each imports this one), named here and
# imported by name in load_all. Add a new family here.
THEORY_MODULES: tuple[str, ...] = ("theory.dobrushin", "theory.rank", "theory.poincare", "theory.san")


def load_all() -> None:
    """Import every theorem family so that the registry is complete, and the theories installed
    packages declare in the ``attnbounds.theories`` entry-point group (:mod:`theory.plugins`; a
    file given with ``--theory`` is loaded by the command line)."""
    for name in THEORY_MODULES:
        import_module(name)
    load_entry_points()


GROUP = "attnbounds.theories"           # the entry-point group of installed theories (theory.plugins)
SOURCES: dict[str, str] = {}            # theorem id -> the file or entry point that registered it
_ENTRY_POINTS_LOADED = [False]


def source(theorem_id: str) -> str:
    """Where ``theorem_id`` was registered: a theory file's path, ``entry point NAME``, else ``built-in``."""
    return SOURCES.get(theorem_id, "built-in")


def registered_during(run: Any, what: str) -> list:
    """Run ``run()`` and return the theorems it registered (ids new to the registry)."""
    before = set(REGISTRY)
    run()
    return [REGISTRY[k] for k in REGISTRY if k not in before]


def load_entry_points() -> list:
    """Import (or call) every entry point of :data:`GROUP`, once per process; their theorems."""
    if _ENTRY_POINTS_LOADED[0]:
        return []
    _ENTRY_POINTS_LOADED[0] = True
    from importlib.metadata import entry_points

    out: list = []
    for ep in entry_points(group=GROUP):
        def run(ep: Any = ep) -> None:
            obj = ep.load()
            if callable(obj):
                obj()
        try:
            found = registered_during(run, ep.name)
        except Exception as exc:
            _ENTRY_POINTS_LOADED[0] = False
            raise InvalidInput(f"entry point {ep.name!r} ({ep.value}) of group {GROUP}: {type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")) from None
        for th in found:
            SOURCES[th.id] = f"entry point {ep.name}"
        out += found
    return out


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
        hyp = th.hypotheses_words()
        out += [f"## `{th.id}` ({th.category})", "", th.title, ""] + ([f"Hypotheses: {hyp}.", ""] if hyp else [])
        out += [f"$$ {th.latex()} $$", "",
                f"- equality: {th.equality_tex or th.equality}", f"- backends: {', '.join(sorted(th.evaluators))}"]
        out += [f"- formal proof (Coq): `theory/formal/{f.replace(':', '` lemma `')}`" for f in th.formal]
        out += [f"- proved on paper only (not formalised): {x}" for x in th.not_formal]
        out += [f"- a corollary of `{th.follows_from}` (proved on paper; the campaigns test it on draws)"] \
            if th.follows_from else []
        out += [f"- reference: {r}" for r in th.references] + [""]
    return "\n".join(out)
