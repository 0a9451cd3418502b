"""Run a statement's queries through z3 and cvc5 on the same SMT-LIB text; re-check counterexamples exactly.

:func:`decide` returns an :class:`SmtResult`: ``proved`` (every query ``unsat`` for z3 *and* for
cvc5), ``counterexample`` (a query ``sat`` for z3; the model's rational entries, and whether the
exact evaluation confirms that the statement fails on them; cvc5's answer kept beside), or
``undecided`` (z3 said ``unknown``, or z3 said ``unsat`` and cvc5 did not: the time spent and the
reason are kept). One solver saying ``sat`` where the other says ``unsat`` is
:class:`SolverDisagreement`, never a result. Each solver has one budget for all queries of the size,
between :data:`MIN_TIMEOUT` and :data:`MAX_TIMEOUT` seconds (1 ms .. one day; else InvalidInput). The
texts are :func:`numerics.smt.smtlib.text`'s; :func:`digest` hashes them (the key of a stored answer).

Both solvers run in a forked child process that dies with its parent: a driver killed with
``kill -9`` leaves no solver running (see :func:`_tie_to_parent`).

>>> from numerics.smt.statements import STATEMENTS
>>> r = decide(STATEMENTS["d1.bound"], (2,), timeout=30)
>>> r.status, r.cvc5, r.queries
('proved', 'proved', 1)
"""
from __future__ import annotations

import ctypes
import json
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional

import z3

from numerics.smt import exact as X
from numerics.smt import smtlib as T
from numerics.smt.smtlib import run_cvc5, run_z3
from numerics.smt.statements import Statement, mats_for_cross_check
from theory.errors import InvalidInput

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
    reason: str = ""                       # why undecided (z3 or cvc5), or why a model is not re-checkable
    counterexample: dict = field(default_factory=dict)   # name -> rows of "p/q" strings (a parameter: "p/q")
    confirmed: Optional[bool] = None       # the exact evaluation says the statement fails there
    suite_agrees: Optional[bool] = None    # the suite's exact evaluators agree (None: not dyadic)
    solver: str = "z3 " + z3.get_version_string()
    cvc5: str = ""                         # cvc5 on the same texts: proved / counterexample / undecided / "" (not run)
    cvc5_seconds: float = 0.0
    solver2: str = field(default_factory=T.version)
    answers: list = field(default_factory=list)   # per query run: [label, z3, seconds, cvc5, seconds]
    digest: str = ""                       # sha256 of the query texts (the key of a stored answer)
    disagreement: str = ""                 # z3 sat and cvc5 unsat (or the converse) on a query


def recheck(st: Statement, mats: dict) -> tuple[bool, Optional[bool]]:
    """(the statement fails on ``mats``, exactly; the suite's evaluators agree, or None). A statement
    with a ``recheck`` of its own (a user's, :class:`numerics.smt.user.UserStatement`) answers itself."""
    own = getattr(st, "recheck", None)
    if own is not None:
        return own(mats)
    confirmed = not st.holds(mats)
    kind, seen = mats_for_cross_check(st, mats)
    return confirmed, X.suite_cross_check(kind, seen)


GRACE = 5.0     # seconds past the budget before a solver that ignores its timeout is killed
MIN_TIMEOUT = 0.001       # seconds: z3 counts its timeout in whole milliseconds
MAX_TIMEOUT = 86400.0     # seconds (one day): z3's timeout is an unsigned 32-bit count of milliseconds
WATCHDOG_EVERY = 0.2      # seconds between a solver child's looks at whether its parent is still there
PR_SET_PDEATHSIG = 1      # <linux/prctl.h>


def check_timeout(timeout: Any) -> float:
    """``timeout`` as float seconds if finite and within [MIN_TIMEOUT, MAX_TIMEOUT], else InvalidInput."""
    try:
        v = float(timeout)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and MIN_TIMEOUT <= v <= MAX_TIMEOUT):
        raise InvalidInput(f"timeout must be a finite number of seconds from {MIN_TIMEOUT:g} to {MAX_TIMEOUT:g} "
                         f"(one day), got {timeout!r}")
    return v


class SolverDisagreement(RuntimeError):
    """z3 and cvc5 gave opposite answers (sat / unsat) on the same SMT-LIB text: a solver bug or an
    encoding outside both solvers' logic. Never recorded as a result: the run stops."""


def queries(st: Statement, dims: tuple, build: Optional[Callable[[], list]] = None) -> list[tuple[str, str, dict]]:
    """The queries of ``st`` at ``dims`` (or of ``build()``) as (label, SMT-LIB text, {matrix: rows of
    variable names, parameter: its variable's name}): the text both solvers read. No query at all is an InvalidInput (a ValueError) (proves nothing)."""
    built = st.build(tuple(dims)) if build is None else build()
    if not built:
        raise InvalidInput(f"{st.key} at {st.shape(tuple(dims))}: no queries to decide (an empty case split "
                         "proves nothing)")
    return [(label, T.text(c), {k: _names(M) for k, M in mats.items()}) for label, c, mats in built]


def _names(M: Any) -> Any:
    """A symbol's variable names: rows of names for a matrix, one name for a scalar (a parameter)."""
    return [[str(x) for x in row] for row in M] if isinstance(M, (list, tuple)) else str(M)


def digest(st: Statement, dims: tuple) -> str:
    """sha256 of the SMT-LIB texts of ``st`` at ``dims``: the key of a stored answer."""
    return T.digest([(label, text) for label, text, _ in queries(st, dims)])


def decide(st: Statement, dims: tuple, timeout: float = 60.0, build: Optional[Callable[[], list]] = None,
           isolate: bool = True) -> SmtResult:
    """Run the queries of ``st`` at ``dims`` (or those of ``build()``) through z3 and then cvc5, each
    solver within ``timeout`` seconds for all queries together; ``proved`` only if both say ``unsat``
    to every query, a ``sat`` of one against an ``unsat`` of the other is :class:`SolverDisagreement`.

    ``isolate``: each solver runs in a forked child process that is killed ``GRACE`` seconds after its
    budget (neither z3's nonlinear engine nor cvc5's always honours its own timeout); the answers come
    back as JSON.
    A timeout outside [MIN_TIMEOUT, MAX_TIMEOUT] seconds, or not finite, is an InvalidInput (a ValueError); so is an
    empty list of queries.
    """
    timeout = check_timeout(timeout)
    texts = queries(st, dims, build)
    solve = _isolated if isolate and hasattr(os, "fork") else (lambda solver, t, b: _run(solver, t, b))
    z = solve("z3", texts, timeout)
    ran = [row for row in z["answers"] if row[1] in ("sat", "unsat")]
    c = solve("cvc5", texts[:len(ran)], timeout) if ran and not z["killed"] else None
    res = _combine(st.key, dims, z, c)
    res.digest = T.digest([(label, text) for label, text, _ in texts])
    res.variables = sum(text.count("(declare-fun ") for _, text, _ in texts[:res.queries])
    res.assertions = sum(text.count("(assert ") for _, text, _ in texts[:res.queries])
    res.size_chars = sum(len(text) for _, text, _ in texts[:res.queries])
    if res.disagreement:
        raise SolverDisagreement(f"{st.key} at {st.shape(tuple(dims))}: {res.disagreement}")
    if res.counterexample:                   # re-checked here, not in the child (numba compiles once)
        res.confirmed, res.suite_agrees = recheck(st, fractions(res.counterexample))
    return res


def _isolated(solver: str, texts: list, timeout: float) -> dict:
    """:func:`_run` in a forked child, killed ``GRACE`` seconds after the budget. This thread forks it
    and does not return before the child is dead (killed or joined in ``finally``), so the
    parent-death signal, which Linux sends when the *forking thread* ends, fires only when the whole
    parent process is gone."""
    t0 = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(os.getpid(), send, solver, texts, timeout), daemon=True)
    child.start()
    send.close()
    answers: list = []
    try:
        while recv.poll(max(0.0, t0 + timeout + GRACE - time.perf_counter())):
            msg = json.loads(recv.recv_bytes().decode())
            if "answers" in msg:
                return msg
            answers.append(msg["answer"])         # streamed: kept if the child is killed later
    except EOFError:
        pass
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
    why = ("hard timeout: the solver did not stop at its budget" if child.exitcode in (None, -9)
           else f"solver process ended with exit code {child.exitcode}")
    return {"answers": answers, "model": None, "seconds": time.perf_counter() - t0, "killed": why}


def _tie_to_parent(parent: int) -> None:
    """Make this (solver child) process die with its parent process ``parent``, in three ways:

    * Linux's parent-death signal: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``; the kernel kills this process
      the moment the parent (the thread that forked it: see :func:`_isolated`) is gone, even while z3
      runs in C and holds the GIL;
    * a watchdog thread that looks every ``WATCHDOG_EVERY`` seconds whether ``os.getppid()`` is still
      ``parent`` and SIGKILLs this process if not (other systems; or a prctl that failed);
    * the process group: the child stays in its parent's group (inherited with fork, never changed),
      so a signal to the group (^C on a terminal, ``kill -- -PGID``, a CI runner's timeout) reaches it.

    A parent that died before the prctl took effect is caught by the first ``getppid`` check here.
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass                              # the watchdog below still ties the child to its parent
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Thread(target=_watchdog, args=(parent,), name="smt-parent-watchdog", daemon=True).start()


def _watchdog(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCHDOG_EVERY)
    os.kill(os.getpid(), signal.SIGKILL)      # orphaned (reparented to init or a subreaper): nobody waits


def _child(parent: int, send: Any, solver: str, texts: list, timeout: float) -> None:
    _tie_to_parent(parent)
    out = _run(solver, texts, timeout, lambda row: send.send_bytes(json.dumps({"answer": row}).encode()))
    send.send_bytes(json.dumps(out).encode())
    send.close()


def _run(solver: str, texts: list, timeout: float, tell: Callable[[list], None] = lambda row: None) -> dict:
    """One solver on the query texts in turn, within ``timeout`` seconds in all; stops at the first
    answer that is not ``unsat``. Returns {answers: [[label, answer, seconds, reason]], model}."""
    run = run_z3 if solver == "z3" else run_cvc5
    answers: list = []
    spent, model = 0.0, None
    for label, source, shapes in texts:
        if timeout - spent <= 0:
            answers.append([label, "unknown", 0.0, "budget spent before this query"])
            break
        names = [x for M in shapes.values() for x in ([M] if isinstance(M, str) else [v for row in M for v in row])]
        a, secs, why, values = run(source, timeout - spent, names)
        spent += secs
        answers.append([label, a, secs, why])
        tell(answers[-1])
        if a != "unsat":
            if values is not None:
                model = {k: str(values[M]) if isinstance(M, str) else [[str(values[x]) for x in row] for row in M]
                         for k, M in shapes.items()}
            break
    return {"answers": answers, "model": model, "seconds": spent, "killed": ""}


def _combine(key: str, dims: tuple, z: dict, c: Optional[dict]) -> SmtResult:
    """One result from z3's run ``z`` and cvc5's run ``c`` on the same texts (None: cvc5 not run)."""
    res = SmtResult(key, tuple(dims), "proved", z["seconds"], queries=len(z["answers"]))
    if z["killed"]:
        res.status, res.reason = "undecided", z["killed"]
        res.label = z["answers"][-1][0] if z["answers"] else ""
        return res
    missing = (c or {}).get("killed") or "not run"
    cvc = {row[0]: row for row in (c or {"answers": []})["answers"]}
    for label, a, secs, _ in z["answers"]:
        b = cvc.get(label, [label, "unknown", 0.0, missing])
        res.answers.append([label, a, round(secs, 3), b[1], round(b[2], 3)])
        if {a, b[1]} == {"sat", "unsat"}:
            res.disagreement = f"query {label!r}: z3 {a}, cvc5 {b[1]}"
    res.cvc5_seconds = c["seconds"] if c else 0.0
    last, a, _, why = z["answers"][-1]
    if a == "unsat":
        open_ = [cvc.get(row[0], [row[0], "unknown", 0.0, missing]) for row in z["answers"]
                 if cvc.get(row[0], [0, ""])[1] != "unsat"]
        res.cvc5 = "undecided" if open_ else "proved"
        if open_:                              # z3 proved it, cvc5 did not: not proved by both
            res.status, res.label = "undecided", open_[0][0]
            res.reason = f"z3 unsat, cvc5 {open_[0][1]} ({open_[0][3] or missing})"
    elif a == "sat":
        res.status, res.label, res.reason = "counterexample", last, why
        res.cvc5 = "counterexample" if cvc.get(last, [0, ""])[1] == "sat" else "undecided"
        res.counterexample = z["model"] or {}
    else:
        res.status, res.label, res.reason, res.cvc5 = "undecided", last, why, ""
    return res


def fractions(counterexample: dict) -> dict:
    """A stored counterexample (rows of "p/q" strings; a parameter's one "p/q") back as Fractions."""
    return {k: Fraction(M) if isinstance(M, str) else [[Fraction(v) for v in row] for row in M]
            for k, M in counterexample.items()}
