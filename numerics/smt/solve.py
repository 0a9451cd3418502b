"""Run a statement's queries through z3 and re-check any counterexample exactly.

:func:`decide` returns an :class:`SmtResult`: ``proved`` (every query ``unsat``), ``counterexample``
(a query ``sat``; the model's rational entries, and whether the exact evaluation confirms that the
statement fails on them), or ``undecided`` (a query came back ``unknown``: timeout or incompleteness;
the time spent and z3's reason are kept). The timeout is one budget for all queries of the size,
between :data:`MIN_TIMEOUT` and :data:`MAX_TIMEOUT` seconds (1 ms .. one day; else ValueError).

The solver runs in a forked child process that dies with its parent: a driver killed with
``kill -9`` leaves no z3 running (see :func:`_tie_to_parent`).

>>> from numerics.smt.statements import STATEMENTS
>>> r = decide(STATEMENTS["d1.bound"], (2,), timeout=30)
>>> r.status, r.queries
('proved', 1)
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
MIN_TIMEOUT = 0.001       # seconds: z3 counts its timeout in whole milliseconds
MAX_TIMEOUT = 86400.0     # seconds (one day): z3's timeout is an unsigned 32-bit count of milliseconds
WATCHDOG_EVERY = 0.2      # seconds between a solver child's looks at whether its parent is still there
PR_SET_PDEATHSIG = 1      # <linux/prctl.h>


def check_timeout(timeout: Any) -> float:
    """``timeout`` as float seconds if finite and within [MIN_TIMEOUT, MAX_TIMEOUT], else ValueError."""
    try:
        v = float(timeout)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and MIN_TIMEOUT <= v <= MAX_TIMEOUT):
        raise ValueError(f"timeout must be a finite number of seconds from {MIN_TIMEOUT:g} to {MAX_TIMEOUT:g} "
                         f"(one day), got {timeout!r}")
    return v


def decide(st: Statement, dims: tuple, timeout: float = 60.0, build: Optional[Callable[[], list]] = None,
           isolate: bool = True) -> SmtResult:
    """Run the queries of ``st`` at ``dims`` (or those of ``build()``) within ``timeout`` seconds in all.

    ``isolate``: solve in a forked child process that is killed ``GRACE`` seconds after the budget
    (z3's own timeout is not always honoured by its nonlinear engine); the answer comes back as JSON.
    A timeout outside [MIN_TIMEOUT, MAX_TIMEOUT] seconds, or not finite, is a ValueError.
    """
    timeout = check_timeout(timeout)
    res = _isolated(st, dims, timeout, build) if isolate and hasattr(os, "fork") else _decide(st, dims, timeout, build)
    if res.counterexample:                   # re-checked here, not in the child (numba compiles once)
        res.confirmed, res.suite_agrees = recheck(st, fractions(res.counterexample))
    return res


def _isolated(st: Statement, dims: tuple, timeout: float, build: Optional[Callable[[], list]]) -> SmtResult:
    """Solve in a forked child. This thread forks it and does not return before the child is dead
    (killed or joined in ``finally``), so the parent-death signal, which Linux sends when the
    *forking thread* ends, fires only when the whole parent process is gone."""
    t0 = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(os.getpid(), send, st, dims, timeout, build), daemon=True)
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


def _child(parent: int, send: Any, st: Statement, dims: tuple, timeout: float,
           build: Optional[Callable[[], list]]) -> None:
    _tie_to_parent(parent)
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
