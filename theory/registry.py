"""Theorem objects and the registry (the sympy.stats pattern: one frozen object per claim).

A theorem carries a dotted id, a category, its statement as sympy relations, the equality
condition, a hypothesis check returning :class:`Hypotheses` (ok True / False / None = undecided,
with a reason naming the failed condition), a witness family on which equality is known to hold,
references, and evaluators per backend given as dotted paths (``"numerics.dobrushin:factor_slack"``)
so that theory/ never imports numerics/. Hypothesis functions build their answer from
:func:`check` (one condition and its message) and :func:`hyp_all` (their conjunction), in
:mod:`theory.hypotheses`; how a theorem is typeset is :mod:`verification.paper.typeset`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Callable, Mapping, Optional

import sympy as sp

from theory.hypotheses import HOLDS, DerivedHypothesis, DerivedWitness, Hypotheses, check, hyp_all, stochastic  # noqa: F401  (re-exported)

CATEGORIES = ("proved", "conjecture", "sanity", "statistical")  # records: verdicts, outcomes, verdicts, outcomes
# the kinds of a result's label (Theorem.label): "Theorem D1", "Proposition D1a", "Corollary D1c"
LABEL_KINDS = ("Theorem", "Proposition", "Corollary", "Lemma")


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
    # the one name of the result in every document (docs/theory.md, the paper, docs/theorems.md, the
    # tables): a kind of LABEL_KINDS and a name, "Theorem D1"; the paper numbers it by its name (never by a
    # counter), and a test fails where a document calls it otherwise (tests/theory/test_numbering.py)
    label: str = ""

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"theorem {self.id}: category {self.category!r} not in {CATEGORIES}")
        kind, _, name = self.label.partition(" ")
        if self.label and (kind not in LABEL_KINDS or not name.isalnum() or not name[:1].isupper()):
            raise ValueError(f"theorem {self.id}: label {self.label!r} must be a kind ({', '.join(LABEL_KINDS)}), "
                             "a space and a name of letters and digits starting with a capital, e.g. 'Theorem D1'")
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

    @property
    def label_kind(self) -> str:
        """The kind of :attr:`label` ("Theorem" of "Theorem D1"); "" without a label."""
        return self.label.partition(" ")[0]

    @property
    def label_name(self) -> str:
        """The name of :attr:`label` ("D1" of "Theorem D1"); "" without a label."""
        return self.label.partition(" ")[2]

    @property
    def named_title(self) -> str:
        """The title with the label in front ("Theorem D1: Rollout factor bound"), or the title alone."""
        return f"{self.label}: {self.title}" if self.label else self.title

    def hypotheses_words(self) -> str:
        """The hypotheses in words with inline math: :attr:`hypotheses_tex`, else (a theorem registered
        without it, whose statement is not over theory.expr) the first line of its hypothesis
        function's docstring, as plain words; "" when neither says anything."""
        if self.hypotheses_tex:
            return self.hypotheses_tex
        doc = (getattr(self.hypotheses, "__doc__", None) or "").strip()
        return doc.splitlines()[0].rstrip(".").replace("$", "") if doc else ""

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
THEORY_MODULES: tuple[str, ...] = ("theory.dobrushin", "theory.rank", "theory.poincare", "theory.san", "theory.trained")


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
    named = [t.id for t in REGISTRY.values() if t is not theorem and theorem.label_name
             and t.label_name == theorem.label_name]
    if named:
        raise ValueError(f"theorem {theorem.id}: its label {theorem.label!r} names {named[0]} already "
                         "(one name, one result)")
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
