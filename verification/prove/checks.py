"""The SMT campaign: every Dobrushin statement through z3, size by size (``numerics.smt``).

One chunk per (statement, size): the solver's answer becomes one record of the statement's theorem.
Vocabulary (theory/verdicts.py has no word for "proved for all matrices of this size", so the SMT
answer is also stored in ``extra["smt"]``):

* a true statement: ``unsat`` -> ``holds`` (the statement holds for *every* stochastic matrix of that
  size: ``extra["scope"] = "all matrices of this size"``); a ``sat`` model confirmed by the exact
  re-check -> ``violated`` (the campaign runner stores it and stops loudly); a model the exact
  re-check does not confirm, or ``unknown`` (timeout) -> ``undecided`` with the time spent;
* a deliberately wrong variant: the record is not a check of the theorem, so ``not-applicable``,
  with ``extra["expected"] = "counterexample"`` and what came back; :func:`sensitivity_failures`
  lists the variants that did not come back with a confirmed counterexample.

Sizes run in increasing order, one level at a time (each level its own campaign pass, so an
interrupted run resumes); a statement stops climbing at its first undecided size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from numerics.smt import SPLIT, STATEMENTS, SmtResult, Statement, decide, decide_split
from numerics.smt.solve import check_timeout
from theory.verdicts import Verdict
from verification import campaign
from verification.store import Record

VERSION = "v1"      # bump when an encoding changes: a new campaign, not a resume
TRUE = ("d1.bound", "d1.bound.split", "d1.iff", "d1.iff.split", "causal", "d2.bound", "d2.bound.split", "d2.iff",
        "d2.iff.split", "chain")
ALL = {**STATEMENTS, **SPLIT}
WRONG = tuple(k for k, s in ALL.items() if s.wrong)


def statement(key: str) -> Statement:
    return ALL[key]


def select(names: tuple[str, ...]) -> tuple[str, ...]:
    """Statement keys for THEOREM_IDs and/or statement keys (all when empty); unknown: ValueError."""
    if not names:
        return TRUE + WRONG
    out = []
    for name in names:
        keys = [k for k in TRUE + WRONG if ALL[k].theorem == name] if name not in ALL else [name]
        if not keys:
            known = sorted({s.theorem for s in ALL.values()})
            raise ValueError(f"unknown theorem or statement {name!r}; theorems: {', '.join(known)}; "
                             f"statements: {', '.join(TRUE + WRONG)}")
        out += keys
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class Plan:
    statements: tuple[str, ...] = TRUE + WRONG
    max_n: int = 4
    timeout: float = 60.0

    def __post_init__(self) -> None:
        check_timeout(self.timeout)         # 1 ms .. one day, finite: else ValueError before any solving

    @property
    def campaign(self) -> str:
        return f"prove.smt-{VERSION}-timeout{self.timeout:g}s"

    def levels(self) -> list[int]:
        return list(range(2, self.max_n + 1))

    def dims(self, key: str, n: int) -> Optional[tuple]:
        """The dims of ``key`` at level n (a wrong variant: its fixed dims, at level max(dims))."""
        st = statement(key)
        if st.wrong:
            return st.at if max(st.at) == n else None
        return st.dims(n)

    def chunk(self, key: str, n: int) -> Optional[campaign.Chunk]:
        dims = self.dims(key, n)
        if dims is None:
            return None
        return campaign.Chunk(f"{key}@{statement(key).shape(dims)}", prove_chunk, (key, dims, self.timeout))


QUICK = Plan(max_n=3, timeout=3.0)      # the main job's quick section (about 20 s here)
FULL = Plan(max_n=12, timeout=60.0)     # `attnbounds verify --full` and the paper's full tables (about 15 min)


def record(st: Statement, r: SmtResult, timeout: float) -> Record:
    """One record of the SMT answer ``r`` for ``st`` (see the module docstring for the vocabulary)."""
    extra: dict[str, Any] = dict(
        statement=st.key, text=st.text, encoding=st.encoding, wrong=st.wrong, shape=st.shape(r.dims),
        dims=list(r.dims), smt=r.status, seconds=round(r.seconds, 3), queries=r.queries,
        variables=r.variables, assertions=r.assertions, size_chars=r.size_chars, query=r.label,
        reason=r.reason, counterexample=r.counterexample, confirmed=r.confirmed,
        suite_agrees=r.suite_agrees, solver=r.solver, timeout_s=timeout)
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
    return Record(st.theorem, f"{st.key}@{st.shape(r.dims)}", verdict, value=r.seconds, backend="z3",
                  dtype="rational", provenance={"solver": r.solver, "timeout_s": timeout, "statement": st.key,
                                                "encoding": st.encoding, "dims": list(r.dims)},
                  extra=extra)


def prove_chunk(key: str, dims: tuple, timeout: float) -> list[Record]:
    st = statement(key)
    r = decide_split(st, dims, timeout) if st.encoding == "split" else decide(st, dims, timeout)
    return [record(st, r, timeout)]


def run_campaign(store: Any, plan: Plan, console: Any = None) -> list[dict]:
    """Run the plan level by level (resumable); returns the stored records of its statements."""
    stuck: set[str] = set()
    for n in plan.levels():
        stuck |= {r["extra"]["statement"] for r in store.records(plan.campaign)
                  if r["extra"]["smt"] == "undecided" and not r["extra"]["wrong"] and max(r["extra"]["dims"]) < n}
        chunks = [c for c in (plan.chunk(k, n) for k in plan.statements if k not in stuck) if c is not None]
        if chunks:
            campaign.run(store, plan.campaign, chunks, console=console, description=f"SMT proofs, level n = {n}",
                         progress=console is not None)
    keys = set(plan.statements)
    return [r for r in store.records(plan.campaign) if r["extra"]["statement"] in keys
            and max(r["extra"]["dims"]) <= plan.max_n]


def sensitivity_failures(records: list[dict]) -> list[dict]:
    """Wrong variants that did not come back with an exactly confirmed counterexample."""
    return [r for r in records if r["extra"]["wrong"] and not (r["extra"]["smt"] == "counterexample"
                                                                and r["extra"]["confirmed"])]
