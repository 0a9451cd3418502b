"""A user's theorem over :mod:`theory.expr` as SMT queries: proved for every value of its symbols at size n.

:func:`statement_for` turns a statement, its hypotheses ``assume`` and its ``where=`` relations
(compiled once, :func:`numerics.expr.compile_statement`) into a :class:`numerics.smt.Statement` of
kind ``"expr"`` (dims ``(n,)``) whose query asks: *are there* values of the statement's symbols at
size n (every stochastic matrix's entries, every logits and tokens matrix's entries, every parameter
in its closed interval: :mod:`numerics.smt.nodes`) satisfying the hypotheses and the ``where=``
relations with ``lhs > rhs`` (the theorem says ``<=``), ``lhs >= rhs`` (``<``) or ``lhs != rhs``
(``Eq``)? ``unsat`` from z3 and cvc5 (the same SMT-LIB text) proves the statement for all of them;
a ``sat`` model is a counterexample: its rationals (a parameter's exact value included) are
re-checked by :meth:`UserStatement.verdict`, the suite's exact and certified evaluator
(:func:`numerics.expr.sides` and :func:`numerics.expr.compare`, the where= relations and the
hypotheses included), independently of this encoding.

Tokens (n x d): the width d is not a size the query can leave open, so a statement over tokens is
queried at each width of :data:`TOKEN_WIDTHS` (one query per width, ``bound d=1``, ``bound d=2``):
"proved" then means proved for those widths at that n, and the result's text says so. It is a
proof for every d only where the statement reduces to one column at a time (a statement that is
a maximum over columns of one column's claim follows from d = 1); the encoding does not decide that.

Refused, each in one line that says why and what to do instead (``attnbounds stress``, whose
verdicts are exact or certified): exp, log, tanh and softmax (transcendental: outside the
polynomial real arithmetic the solvers decide exactly) and slem (eigenvalues).

>>> from theory.expr import A, B, I, Max, delta, parameter
>>> st = statement_for("mine.square", delta(A**2) <= delta(A)**2)
>>> st.kind, st.dims(3), st.matrices, [label for label, _, _ in st.build((2,))]
('expr', (3,), ('A',), ['bound'])
>>> st.holds({"A": [["1/2", "1/2"], ["1/4", "3/4"]]}), st.holds({"A": [[1, 0], [0, 1]]})
(True, True)
>>> alpha = parameter("alpha", 0, 1)
>>> wrong = statement_for("mine.mix", delta(alpha * I + (1 - alpha) * A) <= alpha * delta(A))
>>> wrong.holds({"A": [[1, 0], [1, 0]], "alpha": "1/2"}), wrong.scope(2)
(False, '2x2 row-stochastic A, alpha in [0, 1]')
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import z3

from numerics.smt.nodes import STOCHASTIC, Encoder
from numerics.smt.statements import Statement
from theory.errors import InvalidInput
from theory.verdicts import Code

KIND = "expr"
TOKEN_WIDTHS = (1, 2)       # the widths d at which a statement over tokens is queried
TRANSCENDENTAL = ("exp", "log", "tanh")
VIOLATED, UNDECIDED = int(Code.VIOLATED), int(Code.UNDECIDED)  # theory.verdicts.Code


@dataclass(frozen=True)
class UserStatement(Statement):
    """A :class:`~numerics.smt.Statement` of a theorem over :mod:`theory.expr`: ``matrices`` (its
    matrix symbols), ``roles`` ((name, kind)), ``params`` ((name, lo, hi)), ``widths`` (the token
    widths queried; () without tokens), ``assume``, ``where`` (relations), ``strict`` / ``equal``
    (the theorem says ``<`` / ``Eq``), ``conditions`` (the domain of the encoding in words: "every
    denominator nonzero"), ``relation`` (the sympy statement) and ``program`` (it compiled)."""

    matrices: tuple = ()
    assume: tuple = ()
    strict: bool = False
    conditions: tuple = ()
    relation: Any = None
    where: tuple = ()
    params: tuple = ()
    roles: tuple = ()
    widths: tuple = ()
    equal: bool = False
    program: Any = field(default=None, compare=False, hash=False)

    def recheck(self, mats: dict) -> tuple[Optional[bool], Optional[bool]]:
        """:func:`recheck` (what :func:`numerics.smt.solve.recheck` asks a statement of its own)."""
        return recheck(self, mats)

    def verdict(self, values: dict) -> int:
        """The verdict code of :func:`numerics.expr.decide` (HOLDS 0, TIGHT 1, VIOLATED 2,
        NOT_APPLICABLE 3, UNDECIDED 4) of the statement on one exact instance ``values`` ({matrix:
        rows of rationals, parameter: rational}): not-applicable outside ``assume`` or a ``where=``
        relation, where the statement is undefined, or where ``values`` is not an instance (rows
        that do not sum to 1); decided by the exact and certified evaluator."""
        from numerics.expr.certified import Undefined, instance, values_of
        from numerics.expr.decide import NOT_APPLICABLE, settle

        c = self.program
        try:
            inst = instance(c, {k: values[k] for k in list(c.matrices) + [p for p, _, _ in c.params]})
        except (InvalidInput, KeyError):
            return NOT_APPLICABLE
        if not satisfies(inst.matrices, self.assume, dict(self.roles)):
            return NOT_APPLICABLE
        try:
            vals = values_of(c, inst)
        except Undefined:
            return NOT_APPLICABLE
        return settle(c, vals)[0]

    def scope(self, n: int) -> str:
        """What a proof at size n is for, in words: "2x2 row-stochastic A (causal), real 2xd X with
        d = 1, 2 (these widths only), alpha in [0, 1], where ..., every denominator nonzero"."""
        by: dict = {}
        for name, role in self.roles:
            by.setdefault("stochastic" if role in STOCHASTIC else role, []).append(name)
        parts = []
        if by.get("stochastic"):
            hyp = f" ({', '.join(self.assume)})" if self.assume else ""
            parts.append(f"{n}x{n} row-stochastic {', '.join(by['stochastic'])}{hyp}")
        if by.get("logits"):
            sym = " (symmetric)" if "symmetric" in self.assume else ""
            parts.append(f"real {n}x{n} {', '.join(by['logits'])}{sym}")
        if by.get("tokens"):
            widths = ", ".join(str(d) for d in self.widths)
            parts.append(f"real {n}xd {', '.join(by['tokens'])} with d = {widths} (these widths only)")
        parts += [f"{p} in [{lo}, {hi}]" for p, lo, hi in self.params]
        parts += [f"where {w}" for w in self.where]
        return ", ".join(parts + list(self.conditions))


def satisfies(mats: dict, assume: tuple, roles: dict) -> bool:
    """Whether the exact matrices ``mats`` ({name: rows of Fractions}) satisfy the hypotheses
    ``assume`` (on the stochastic ones; "symmetric" on the logits ones too)."""
    for name, M in mats.items():
        role, n = roles.get(name, "stochastic"), len(M)
        if role == "tokens" or (role == "logits" and "symmetric" not in assume):
            continue
        if "symmetric" in assume and any(M[i][k] != M[k][i] for i in range(n) for k in range(i)):
            return False
        if role == "logits":
            continue
        if "causal" in assume and any(M[i][k] != 0 for i in range(n) for k in range(i + 1, n)):
            return False
        if "positive" in assume and any(v <= 0 for row in M for v in row):
            return False
        if {"doubly-stochastic", "symmetric"} & set(assume) and any(sum(col) != 1 for col in zip(*M)):
            return False
    return True


def refusal(compiled: Any, theorem_id: str) -> Optional[str]:
    """Why ``compiled`` has no exact SMT encoding (one line), or None."""
    stress = f"stress it instead (attnbounds stress {theorem_id} --theory FILE.py: exact or certified verdicts)"
    for node in compiled.nodes:
        if node.op in TRANSCENDENTAL or node.op == "softmax":
            what = "softmax (made of exp)" if node.op == "softmax" else node.op
            return (f"prove cannot take {what}: it is transcendental, outside the polynomial real arithmetic "
                    f"that z3 and cvc5 decide exactly; {stress}")
        if node.op == "fn" and node.name == "slem":
            return ("prove cannot take slem: an eigenvalue modulus (a root of the characteristic polynomial of a "
                    f"matrix of variables) has no encoding here; {stress}")
    return None


def _conditions(compiled: Any) -> tuple:
    """The domain of the encoding in words (where the statement is defined), for the result's text."""
    def variable(node: Any) -> bool:          # its base is not a size (n, d: positive constants)
        return compiled.nodes[node.args[0]].op not in ("size", "const")

    out = []
    if any(((node.op == "pow" and node.power < 0) or (node.op == "rpow" and node.const < 0)) and variable(node)
           for node in compiled.nodes):
        out.append("every denominator nonzero")
    if any(node.op == "rpow" and variable(node) for node in compiled.nodes):
        out.append("every root taken of a nonnegative number")
    return tuple(f"{c} (the statement is undefined elsewhere)" for c in out)


def _negation(lhs: z3.ArithRef, rhs: z3.ArithRef, compiled: Any) -> z3.BoolRef:
    if compiled.equal:
        return lhs != rhs
    return lhs >= rhs if compiled.strict else lhs > rhs


def _relation(lhs: z3.ArithRef, rhs: z3.ArithRef, op: str) -> z3.BoolRef:
    return lhs == rhs if op == "=" else lhs < rhs if op == "<" else lhs <= rhs


def statement_for(theorem_id: str, statement: Any, assume: tuple = (), theorem: Optional[str] = None,
                  where: tuple = ()) -> UserStatement:
    """The :class:`UserStatement` of ``statement`` (a relation over :mod:`theory.expr`; InvalidInput if
    outside its vocabulary or outside what SMT encodes exactly, one line saying why), keyed
    ``theorem_id``, with the hypotheses ``assume`` and the relations ``where``; ``theorem``: the
    registry id it belongs to (default ``theorem_id``)."""
    from numerics.expr import compile_statement
    from theory.expr import check_assumptions

    check_assumptions(tuple(assume), theorem_id)
    where = tuple(where)
    try:
        compiled = compile_statement(statement, tuple(assume), where)
    except InvalidInput as exc:
        if "uses no matrix" in str(exc):
            raise InvalidInput(f"theorem {theorem_id}: its statement has no matrix once simplified; nothing to "
                               "prove") from None
        raise
    why = refusal(compiled, theorem_id)
    if why:
        raise InvalidInput(why)
    assume = tuple(a for a in ("causal", "positive", "doubly-stochastic", "symmetric") if a in assume)
    widths = TOKEN_WIDTHS if "d" in compiled.sizes else ()
    conditions = _conditions(compiled)
    label = "equality" if compiled.equal else "bound"

    def build(dims: tuple) -> list:
        out = []
        for d in widths or (None,):
            c: list = []
            enc = Encoder(compiled, dims[0], d, assume, c)
            v = enc.value
            c += [_relation(v[lo], v[hi], op) for lo, hi, op in compiled.where]
            c.append(_negation(v[compiled.lhs], v[compiled.rhs], compiled))
            out.append((label if d is None else f"{label} d={d}", c, enc.symbols))
        return out

    st: Optional[UserStatement] = None

    def holds(m: dict) -> bool:
        return st.verdict(m) != VIOLATED

    text = (str(statement) + "".join(f" [{a}]" for a in assume) + "".join(f" (where {w})" for w in where)
            + (f" (tokens of width d = {', '.join(map(str, widths))})" if widths else "")
            + "".join(f" ({w})" for w in conditions))
    st = UserStatement(theorem_id, theorem or theorem_id, text, KIND, build, holds, matrices=compiled.matrices,
                       assume=assume, strict=compiled.strict, conditions=conditions, relation=statement, where=where,
                       params=compiled.params, roles=compiled.roles, widths=widths, equal=compiled.equal,
                       program=compiled)
    return st


def sides(st: UserStatement, counterexample: dict) -> tuple[Any, Any]:
    """Both sides of the statement on a stored counterexample ({matrix: rows of "p/q", parameter:
    "p/q"}): Fractions where rational, else exact or certified values (:func:`numerics.expr.sides`)."""
    from numerics.expr import sides as exact_or_certified

    c = st.program
    return exact_or_certified(c, {k: counterexample[k] for k in list(c.matrices) + [p for p, _, _ in c.params]})


def value_text(v: Any) -> str:
    """A side's value as text: "p/q" where rational, else a certified enclosure "mid +/- radius"."""
    if isinstance(v, Fraction):
        return str(v)
    from numerics.expr.values import approx

    mid, rad = approx(v)
    return f"{mid!r} +/- {rad:.2g}"


def recheck(st: UserStatement, mats: dict) -> tuple[Optional[bool], Optional[bool]]:
    """(the statement fails on ``mats`` by the exact or certified evaluator (:meth:`UserStatement.verdict`;
    None where it cannot decide); the suite's certified float path, :func:`numerics.expr.decide`,
    agrees, or None where a matrix entry is not exactly a float)."""
    import numpy as np

    from numerics.expr import decide as decide_floats

    code = st.verdict(mats)
    confirmed = None if code == UNDECIDED else code == VIOLATED
    c = st.program
    rows = {k: mats[k] for k in c.matrices}
    if confirmed is None or not all(Fraction(float(v)) == v for M in rows.values() for row in M for v in row):
        return confirmed, None
    values: dict = {k: np.array([[float(v) for v in row] for row in M], dtype=np.float64)[None]
                    for k, M in rows.items()}
    values.update({p: [Fraction(mats[p])] for p, _, _ in c.params})
    try:
        got = int(decide_floats(c, values, st.assume).codes[0])
    except InvalidInput:                      # not an instance at all (a parameter outside its interval)
        return confirmed, None
    return confirmed, (got == VIOLATED) == confirmed


def decide(st: UserStatement, dims: tuple, timeout: float = 60.0, isolate: bool = True) -> Any:
    """:func:`numerics.smt.solve.decide` (z3, then cvc5 on the same SMT-LIB texts; a counterexample
    re-checked by the statement's own :meth:`UserStatement.recheck`; a model the certified
    evaluator cannot decide is undecided, with the reason)."""
    from numerics.smt import solve as S

    r = S.decide(st, dims, timeout, isolate=isolate)
    if r.counterexample and r.confirmed is None:
        r.status = "undecided"
        r.reason = ("the certified evaluator cannot decide the statement on the solvers' model (a tie of values "
                    "that are not rational)")
    return r
