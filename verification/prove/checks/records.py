"""One chunk of the SMT campaign: a statement at one size decided by z3 and by cvc5 on the same
SMT-LIB text (:mod:`numerics.smt.solve`), and the one record of its answer (:func:`record`).

Vocabulary (theory/verdicts.py has no word for "proved for all matrices of this size", so the SMT
answer is also stored in ``extra["smt"]``):

* a true statement: ``unsat`` -> ``holds`` (the statement holds for *every* stochastic matrix of that
  size: ``extra["scope"] = "all matrices of this size"``); a ``sat`` model confirmed by the exact
  re-check -> ``violated`` (the campaign runner stores it and stops loudly); a model the exact
  re-check does not confirm, or ``unknown`` (timeout) -> ``undecided`` with the time spent;
* a deliberately wrong variant: the record is not a check of the theorem, so ``not-applicable``,
  with ``extra["expected"] = "counterexample"`` and what came back;
* a user theorem over theory.expr: its category's vocabulary (a conjecture's: supported / refuted /
  inconclusive), what a proof covers (``extra["for_every"]``) and the exact sides of a counterexample.

A size is ``holds`` only if both solvers say unsat; both answers and times are in ``extra``
(``answers``: per query); a sat against an unsat stops the run (``SolverDisagreement``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

from numerics.smt import SmtResult, Statement, decide, decide_split
from numerics.smt.user import UserStatement
from theory.verdicts import Outcome, Verdict
from verification.prove.checks.statements import premise_at, premise_keys, statement
from verification.store import Record


def record(st: Statement, r: SmtResult, timeout: float) -> Record:
    """One record of the SMT answer ``r`` for ``st`` (see the module docstring for the vocabulary)."""
    extra: dict[str, Any] = dict(
        statement=st.key, text=st.text, encoding=st.encoding, wrong=st.wrong, shape=st.shape(r.dims),
        dims=list(r.dims), smt=r.status, seconds=round(r.seconds, 3), queries=r.queries,
        variables=r.variables, assertions=r.assertions, size_chars=r.size_chars, query=r.label,
        reason=r.reason, counterexample=r.counterexample, confirmed=r.confirmed,
        suite_agrees=r.suite_agrees, solver=r.solver, timeout_s=timeout, cvc5=r.cvc5,
        cvc5_seconds=round(r.cvc5_seconds, 3), solver2=r.solver2, answers=r.answers, digest=r.digest,
        needs=list(premise_keys(st.key)) if not st.wrong else [], premise_dims=list(st.premise_dims(r.dims)),
        premise_at=premise_at(st.key, r.dims) if not st.wrong else {})
    if st.wrong:
        verdict = Verdict.NOT_APPLICABLE
        extra["expected"] = "counterexample"
    elif r.status == "proved":
        verdict = Verdict.HOLDS
        extra["scope"] = "all matrices of this size"
    elif r.status == "counterexample" and r.confirmed and r.suite_agrees is not False:
        verdict = Verdict.VIOLATED
    else:
        verdict = Verdict.UNDECIDED
        if r.status == "counterexample":
            extra["reason"] = (r.reason or "the solver's model is not a counterexample by the exact re-check "
                               "(or the suite's evaluators disagree): an encoding bug, not a finding")
    if isinstance(st, UserStatement):
        verdict = _user_extra(st, r, verdict, extra)
    return Record(st.theorem, f"{st.key}@{st.shape(r.dims)}", verdict, value=r.seconds, backend="z3",
                  dtype="rational", provenance={"solver": r.solver, "solver2": r.solver2, "timeout_s": timeout,
                                                "statement": st.key, "encoding": st.encoding, "dims": list(r.dims),
                                                "digest": r.digest},
                  extra=extra)


OUTCOME_OF = {Verdict.HOLDS: Outcome.SUPPORTED, Verdict.VIOLATED: Outcome.REFUTED,
              Verdict.UNDECIDED: Outcome.INCONCLUSIVE, Verdict.NOT_APPLICABLE: Outcome.NOT_TESTABLE}


def _user_extra(st: UserStatement, r: SmtResult, verdict: Verdict, extra: dict) -> Any:
    """A user theorem's record: its statement, hypotheses and side conditions, the exact sides of a
    confirmed counterexample, and the verdict in its category's vocabulary (a conjecture's: an
    outcome, whose statistic is the bound's slack on the counterexample, None otherwise; the sides and the
    relation as the statement writes them)."""
    from numerics.expr.values import approx, sub
    from numerics.smt.user import sides, value_text
    from theory import get
    from theory.expr import as_written, written_relation
    from theory.verdicts import vocabulary

    written = written_relation(st.relation)         # lhs, relation, rhs: as the statement writes them
    extra.update(kind=st.kind, relation=written, assume=list(st.assume), where=[str(w) for w in st.where],
                 conditions=list(st.conditions), matrices=list(st.matrices), params=[p for p, _, _ in st.params],
                 widths=list(st.widths), for_every=st.scope(max(r.dims)), lhs=None, rhs=None)
    slack = None
    if r.status == "counterexample" and r.confirmed:
        lhs, rhs = sides(st, r.counterexample)
        extra.update(as_written(written, value_text(lhs), value_text(rhs)))
        exact = isinstance(lhs, Fraction) and isinstance(rhs, Fraction)
        slack = float(rhs - lhs) if exact else approx(sub(rhs, lhs))[0]
    if vocabulary(get(st.theorem).category) is Verdict:
        return verdict
    extra.update(statistic=slack, interval=None,
                 method="SMT (z3 and cvc5) over every value of the statement's symbols at the size; statistic: the "
                        "bound's slack on the counterexample, negative where it fails (an equality: rhs - lhs, "
                        "nonzero)")
    return OUTCOME_OF[verdict]


def prove_chunk(key: str, dims: tuple, timeout: float, expected: Optional[str] = None) -> list[Record]:
    """Decide ``key`` at ``dims``; ``expected``: the hash the chunk was planned with (a mismatch: the
    encoding changed between planning and solving, ValueError)."""
    st = statement(key)
    if isinstance(st, UserStatement):
        from numerics.smt.user import decide as decide_user

        r = decide_user(st, dims, timeout)
    else:
        r = decide_split(st, dims, timeout) if st.encoding == "split" else decide(st, dims, timeout)
    if expected is not None and r.digest != expected:
        raise ValueError(f"{key} at {dims}: the query texts changed since the chunk was planned")
    return [record(st, r, timeout)]
