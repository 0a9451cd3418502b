"""Run a statement's queries through z3 and re-check any counterexample exactly.

:func:`decide` returns an :class:`SmtResult`: ``proved`` (every query ``unsat``), ``counterexample``
(a query ``sat``; the model's rational entries, and whether the exact evaluation confirms that the
statement fails on them), or ``undecided`` (a query came back ``unknown``: timeout or incompleteness;
the time spent and z3's reason are kept). The timeout is one budget for all queries of the size.

>>> from numerics.smt.statements import STATEMENTS
>>> r = decide(STATEMENTS["d1.bound"], (2,), timeout=30)
>>> r.status, r.queries
('proved', 1)
"""
from __future__ import annotations

import json
import multiprocessing
import os
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional

import z3

from numerics.smt import exact as X
from numerics.smt.statements import Statement, mats_for_cross_check

STATUSES = ("proved", "counterexample", "undecided")


@dataclass
class SmtResult:
    statement: str
    dims: tuple
    status: str                            # proved / counterexample / undecided
    seconds: float
    queries: int = 0                       # queries run (cases, directions)
    variables: int = 0                     # real variables over all queries run
    assertions: int = 0                    # top-level assertions over all queries run
    size_chars: int = 0                    # SMT-LIB text length over all queries run (query size)
    label: str = ""                        # the query that gave the counterexample / stayed unknown
    reason: str = ""                       # z3's reason_unknown for undecided
    counterexample: dict = field(default_factory=dict)   # name -> rows of "p/q" strings
    confirmed: Optional[bool] = None       # the exact evaluation says the statement fails there
    suite_agrees: Optional[bool] = None    # the suite's exact evaluators agree (None: not dyadic)
    solver: str = "z3 " + z3.get_version_string()


def _value(model: z3.ModelRef, x: z3.ArithRef) -> Fraction:
    v = model.eval(x, model_completion=True)
    if isinstance(v, z3.RatNumRef):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    raise ValueError(f"{x} = {v} is not rational")


def _rational_model(model: z3.ModelRef, mats: dict) -> Optional[dict]:
    try:
        return {name: [[_value(model, x) for x in row] for row in M] for name, M in mats.items()}
    except ValueError:
        return None                          # an algebraic model (nonlinear queries): not re-checkable


def recheck(st: Statement, mats: dict) -> tuple[bool, Optional[bool]]:
    """(the statement fails on ``mats``, exactly; the suite's evaluators agree, or None)."""
    confirmed = not st.holds(mats)
    kind, seen = mats_for_cross_check(st, mats)
    return confirmed, X.suite_cross_check(kind, seen)


GRACE = 5.0     # seconds past the budget before a solver that ignores its timeout is killed


def decide(st: Statement, dims: tuple, timeout: float = 60.0, build: Optional[Callable[[], list]] = None,
           isolate: bool = True) -> SmtResult:
    """Run the queries of ``st`` at ``dims`` (or those of ``build()``) within ``timeout`` seconds in all.

    ``isolate``: solve in a forked child process that is killed ``GRACE`` seconds after the budget
    (z3's own timeout is not always honoured by its nonlinear engine); the answer comes back as JSON.
    """
    res = _isolated(st, dims, timeout, build) if isolate and hasattr(os, "fork") else _decide(st, dims, timeout, build)
    if res.counterexample:                   # re-checked here, not in the child (numba compiles once)
        res.confirmed, res.suite_agrees = recheck(st, fractions(res.counterexample))
    return res


def _isolated(st: Statement, dims: tuple, timeout: float, build: Optional[Callable[[], list]]) -> SmtResult:
    t0 = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(send, st, dims, timeout, build), daemon=True)
    child.start()
    send.close()
    try:
        if recv.poll(timeout + GRACE):
            data = json.loads(recv.recv_bytes().decode())
            return SmtResult(**{**data, "dims": tuple(data["dims"])})
    except EOFError:
        pass
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
    return SmtResult(st.key, tuple(dims), "undecided", time.perf_counter() - t0,
                     reason="hard timeout: the solver did not stop at its budget" if child.exitcode in (None, -9)
                     else f"solver process ended with exit code {child.exitcode}")


def _child(send: Any, st: Statement, dims: tuple, timeout: float, build: Optional[Callable[[], list]]) -> None:
    res = _decide(st, dims, timeout, build)
    send.send_bytes(json.dumps(asdict(res)).encode())
    send.close()


def _decide(st: Statement, dims: tuple, timeout: float, build: Optional[Callable[[], list]]) -> SmtResult:
    t0 = time.perf_counter()
    res = SmtResult(st.key, tuple(dims), "proved", 0.0)
    queries = st.build(tuple(dims)) if build is None else build()
    for label, constraints, mats in queries:
        left = timeout - (time.perf_counter() - t0)
        if left <= 0:
            res.status, res.label, res.reason = "undecided", label, "budget spent before this query"
            break
        s = z3.Solver()
        s.set("timeout", max(1, int(left * 1000)))
        s.add(*constraints)
        res.queries += 1
        res.assertions += len(constraints)
        res.size_chars += len(s.sexpr())
        res.variables += len({str(v) for v in _variables(constraints)})
        out = s.check()
        if out == z3.unsat:
            continue
        res.label = label
        if out == z3.sat:
            res.status = "counterexample"
            model = _rational_model(s.model(), mats)
            if model is None:
                res.reason = "the model is not rational (algebraic); not re-checkable"
            else:
                res.counterexample = {k: [[str(v) for v in row] for row in M] for k, M in model.items()}
        else:
            res.status, res.reason = "undecided", s.reason_unknown()
        break
    res.seconds = time.perf_counter() - t0
    return res


def _variables(constraints: list) -> list:
    """The uninterpreted constants (variables) of the constraints."""
    seen, out, stack = set(), [], list(constraints)
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(e)
        stack.extend(e.children())
    return out


def fractions(counterexample: dict) -> dict:
    """A stored counterexample (rows of "p/q" strings) back as Fractions."""
    return {k: [[Fraction(v) for v in row] for row in M] for k, M in counterexample.items()}
