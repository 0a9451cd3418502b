"""One SMT-LIB 2 text per query, decided by two solvers: z3 and cvc5 read the *same* text.

:func:`text` turns a query's z3 constraints into canonical SMT-LIB 2 (``set-logic QF_NRA``, the
declarations and assertions, no ``check-sat``): z3's printer is normalised (a one-argument ``+`` or
``*``, which cvc5 refuses, is replaced by its argument; the auxiliary variables ``t!17``, ``dA!3``
are renumbered in order of appearance, so the text does not depend on how many queries were built
before; z3's ``let``s, whose sharing depends on the other terms alive in the process, are inlined).
:func:`digest` hashes the texts of a statement at a size: a stored result is keyed by it,
so a changed encoding is never served an old answer. :func:`run_z3` and :func:`run_cvc5` decide a
text within a time limit and return ``(answer, seconds, reason, model)`` with answer ``sat`` /
``unsat`` / ``unknown`` and, for ``sat``, the rational values of the named variables.

>>> import z3
>>> x = z3.Real("x")
>>> print(text([z3.Sum([x]) > 1, x < 1]))
(set-logic QF_NRA)
(declare-fun x () Real)
(assert (> x 1.0))
(assert (< x 1.0))
>>> run_z3(text([x > 1, x < 1]), 5.0, ["x"])[0], run_cvc5(text([x > 1, x < 1]), 5.0, ["x"])[0]
('unsat', 'unsat')
"""
from __future__ import annotations

import hashlib
import re
import time
from fractions import Fraction
from typing import Optional, Sequence

import z3

LOGIC = "QF_NRA"        # cvc5: nonlinear real arithmetic ("ALL" times out far sooner), with option nl-rlv=always
_TOKEN = re.compile(r'\s*(?:(\()|(\))|(\|[^|]*\||"[^"]*"|[^\s()]+))')
_FRESH = re.compile(r"^([A-Za-z_]\w*)!\d+$")

Answer = tuple[str, float, str, Optional[dict]]       # (sat/unsat/unknown, seconds, reason, {name: Fraction})


def _parse(source: str) -> list:
    source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(";"))
    stack: list = [[]]
    for m in _TOKEN.finditer(source):
        opening, closing, atom = m.groups()
        if opening:
            stack.append([])
        elif closing:
            done = stack.pop()
            stack[-1].append(done)
        elif atom:
            stack[-1].append(atom)
    return stack[0]


def _show(e: object) -> str:
    return e if isinstance(e, str) else "(" + " ".join(_show(x) for x in e) + ")"


def _normalise(e: object, names: dict, env: Optional[dict] = None) -> object:
    """Inline z3's ``let``s (which terms it shares depends on what else lives in the process), drop
    one-argument ``+ * and or``, and renumber the auxiliary names in order of first use."""
    env = env or {}
    if isinstance(e, str):
        if e in env:
            return env[e]
        m = _FRESH.match(e)
        return names.setdefault(e, f"{m.group(1)}!{len(names)}") if m else e
    if len(e) == 3 and e[0] == "let":
        inner = dict(env)
        for name, value in e[1]:
            inner[name] = _normalise(value, names, env)
        return _normalise(e[2], names, inner)
    out = [_normalise(x, names, env) for x in e]
    if len(out) == 2 and out[0] in ("+", "*", "and", "or"):
        return out[1]
    return out


def text(constraints: Sequence[z3.BoolRef]) -> str:
    """The canonical SMT-LIB 2 text of a conjunction of z3 constraints (see the module docstring).
    Auxiliary names are numbered in order of first use in the assertions, and their declarations
    follow the others in that order (z3 prints declarations sorted by name, so "t!10" before "t!9")."""
    s = z3.Solver()
    s.add(*constraints)
    cmds = [c for c in _parse(s.to_smt2()) if c and c[0] not in ("check-sat", "set-info", "set-logic")]
    names: dict = {}
    asserts = [_normalise(c, names) for c in cmds if c[0] != "declare-fun"]
    decls = [_normalise(c, names) for c in cmds if c[0] == "declare-fun"]
    order = {v: i for i, v in enumerate(names.values())}
    decls.sort(key=lambda d: (d[1] in order, order.get(d[1], 0)))      # stable: the plain names keep z3's order
    return "\n".join([f"(set-logic {LOGIC})"] + [_show(c) for c in decls + asserts])


def digest(texts: Sequence[tuple[str, str]]) -> str:
    """sha256 (hex) of the labelled query texts of one statement at one size."""
    h = hashlib.sha256()
    for label, body in texts:
        h.update(label.encode() + b"\0" + body.encode() + b"\0")
    return h.hexdigest()


def run_z3(source: str, timeout: float, names: Sequence[str]) -> Answer:
    """z3 on the text (timeout in seconds, at least 1 ms)."""
    t0 = time.perf_counter()
    s = z3.Solver()
    s.set("timeout", max(1, int(timeout * 1000)))
    s.from_string(source)
    out = s.check()
    seconds = time.perf_counter() - t0
    if out == z3.unsat:
        return "unsat", seconds, "", None
    if out != z3.sat:
        return "unknown", seconds, s.reason_unknown(), None
    model, by = s.model(), {}
    decls = {d.name(): d for d in model.decls()}
    for name in names:
        v = model.eval(z3.Real(name), model_completion=True) if name not in decls else model[decls[name]]
        if not isinstance(v, z3.RatNumRef):
            return "sat", seconds, "the model is not rational (algebraic); not re-checkable", None
        by[name] = Fraction(v.numerator_as_long(), v.denominator_as_long())
    return "sat", seconds, "", by


def run_cvc5(source: str, timeout: float, names: Sequence[str]) -> Answer:
    """cvc5 (Python API, logic :data:`LOGIC`, ``tlimit-per`` in ms) on the same text."""
    import cvc5

    t0 = time.perf_counter()
    slv = cvc5.Solver()
    slv.setOption("tlimit-per", str(max(1, int(timeout * 1000))))
    slv.setOption("produce-models", "true")
    slv.setOption("nl-rlv", "always")          # relevance filtering: the split cases of D2 hang without it
    sm = cvc5.SymbolManager(slv)
    parser = cvc5.InputParser(slv, sm)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, source, "query")
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        cmd.invoke(slv, sm)
    res = slv.checkSat()
    seconds = time.perf_counter() - t0
    if res.isUnsat():
        return "unsat", seconds, "", None
    if not res.isSat():
        return "unknown", seconds, str(res.getUnknownExplanation()), None
    terms = {str(t): t for t in sm.getDeclaredTerms()}
    by = {}
    for name in names:
        v = slv.getValue(terms[name]) if name in terms else None
        if v is None or not v.isRealValue():
            return "sat", seconds, "the model is not rational (algebraic); not re-checkable", None
        by[name] = Fraction(v.getRealValue())
    return "sat", seconds, "", by


def version() -> str:
    import cvc5

    return "cvc5 " + getattr(cvc5, "__version__", "?")
