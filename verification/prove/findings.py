"""The SMT family's findings: what the stored answers of a plan's statements say, as typed values
built once from its records (:func:`findings`) and rendered by both the report
(:mod:`verification.prove.report`) and the paper part (:mod:`verification.prove.paper`). Words
the solvers answered ("proved", "counterexample", "undecided") and numbers only: no formatting.

An :class:`Answer` per statement and size (both solvers' answers, times, the query's size, the
exact re-check of a model); per true statement its :class:`Reach` (proved for every size up to,
the first undecided size; a size counts only where both solvers proved it and every premise is
proved at its size, :func:`premise_gaps`); per bound and size the :class:`Symmetry` comparison of
its exhaustive and split encodings; the wrong variants refuted as a :class:`~verification.findings.Share`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from verification.findings import Share

SYMMETRY_OF = {"d1.bound.exhaustive": "d1.bound.split", "d2.bound.exhaustive": "d2.bound.split"}


def latest(records: Iterable[dict]) -> list[dict]:
    """The last stored record of each (statement, size): an answer for an older encoding is replaced."""
    by: dict = {}
    for r in records:
        by[(r["extra"]["statement"], tuple(r["extra"]["dims"]))] = r
    return list(by.values())


def z3_answer(e: dict) -> str:
    """z3's own answer: the combined answer is "undecided" where only cvc5 did not prove it."""
    if e["smt"] == "undecided" and e.get("cvc5") == "undecided" and e["reason"].startswith("z3 unsat"):
        return "proved"
    return e["smt"]


def size_key(dims: Iterable[int]) -> tuple:
    """The order of sizes: the largest dimension first, then the dims."""
    dims = tuple(dims)
    return (max(dims), dims)


@dataclass(frozen=True)
class Answer:
    """One statement at one size, as stored: the combined answer ``smt`` (both solvers), each
    solver's own (``z3``; ``cvc5`` None where it did not run), their times, the query's size and,
    for a model, its exact re-check (``confirmed``: None where the model is not rational) and
    whether the suite's evaluators agree."""

    theorem: str
    statement: str
    encoding: str
    text: str
    shape: str
    dims: tuple[int, ...]
    wrong: bool
    smt: str
    z3: str
    cvc5: Optional[str]
    seconds: float
    cvc5_seconds: Optional[float]
    queries: int
    variables: int
    size_chars: int
    confirmed: Optional[bool]
    suite_agrees: Optional[bool]
    solver: str = ""
    solver2: Optional[str] = None

    @classmethod
    def of(cls, r: dict) -> "Answer":
        e = r["extra"]
        return cls(r["theorem"], e["statement"], e["encoding"], e.get("text", ""), e["shape"], tuple(e["dims"]),
                   e["wrong"], e["smt"], z3_answer(e), e.get("cvc5") or None, e["seconds"], e.get("cvc5_seconds"),
                   e["queries"], e["variables"], e["size_chars"], e.get("confirmed"), e.get("suite_agrees"),
                   e.get("solver", ""), e.get("solver2"))

    @property
    def refuted(self) -> bool:
        """A counterexample confirmed by the exact re-check."""
        return self.smt == "counterexample" and bool(self.confirmed)


@dataclass(frozen=True)
class Reach:
    """A true statement's reach: proved for every size up to ``largest`` (its dims ``largest_dims``;
    None: not even the first), the solvers' seconds there, the first ``undecided`` size and the
    number of counterexamples (a true statement: must be 0)."""

    theorem: str
    statement: str
    encoding: str
    largest: Optional[str]
    largest_dims: Optional[tuple[int, ...]]
    seconds: Optional[float]
    cvc5_seconds: Optional[float]
    undecided: Optional[str]
    counterexamples: int


@dataclass(frozen=True)
class Symmetry:
    """A bound at one size with both its exhaustive (no symmetry) and its split (symmetry-reduced)
    encoding stored: each solver's answer for each, and whether they agree (True: every solver that
    decided both gave the same answer; False: one proves one and refutes the other, an encoding bug;
    None: nothing to compare)."""

    bound: str
    shape: str
    exhaustive_z3: str
    split_z3: str
    exhaustive_cvc5: Optional[str]
    split_cvc5: Optional[str]
    agree: Optional[bool]
    exhaustive_queries: int
    split_queries: int

    @property
    def all_proved(self) -> bool:
        return {self.exhaustive_z3, self.split_z3, self.exhaustive_cvc5, self.split_cvc5} == {"proved"}


def premise_gaps(records: Iterable[dict]) -> set[tuple[str, tuple]]:
    """(statement, dims) proved by both solvers whose premises are not all proved at their size."""
    recs = list(records)
    proved = {(r["extra"]["statement"], tuple(r["extra"]["dims"])) for r in recs if r["extra"]["smt"] == "proved"}
    out = set()
    for r in recs:
        e = r["extra"]
        pd = tuple(e.get("premise_dims") or e["dims"])
        at = {b: tuple(d) for b, d in (e.get("premise_at") or {}).items()}
        bases = {k.removesuffix(".split"): at.get(k.removesuffix(".split"), pd) for k in e.get("needs") or ()}
        if e["smt"] == "proved" and any(not ({(b, d), (f"{b}.split", d)} & proved) for b, d in bases.items()):
            out.add((e["statement"], tuple(e["dims"])))
    return out


def reach(records: Iterable[dict]) -> dict[str, Reach]:
    """Per true statement (sorted by key), its :class:`Reach`; a size whose premises are not proved
    is not counted (:func:`premise_gaps`)."""
    records = list(records)
    gaps = premise_gaps(records)
    by: dict[str, list] = {}
    for r in records:
        if not r["extra"]["wrong"]:
            by.setdefault(r["extra"]["statement"], []).append(r)
    out = {}
    for key, recs in sorted(by.items()):
        recs.sort(key=lambda r: size_key(r["extra"]["dims"]))
        best: Optional[dict] = None
        undecided = None
        for r in recs:
            if r["extra"]["smt"] != "proved" or (key, tuple(r["extra"]["dims"])) in gaps:
                undecided = undecided or (r if r["extra"]["smt"] == "undecided" else None)
                break
            best = r
        b = best["extra"] if best else None
        out[key] = Reach(recs[0]["theorem"], key, recs[0]["extra"]["encoding"], b["shape"] if b else None,
                         tuple(b["dims"]) if b else None, b["seconds"] if b else None,
                         b.get("cvc5_seconds") if b else None,
                         undecided["extra"]["shape"] if undecided else None,
                         sum(r["extra"]["smt"] == "counterexample" for r in recs))
    return out


def symmetry(records: Iterable[dict]) -> list[Symmetry]:
    """The symmetry reduction checked (``numerics.smt.exhaustive``): per bound and size (increasing)
    where both its exhaustive and its split encoding are stored, the :class:`Symmetry` comparison."""
    by = {(r["extra"]["statement"], tuple(r["extra"]["dims"])): r["extra"] for r in records}
    out = []
    for (key, dims), ex in sorted(by.items(), key=lambda kv: (kv[0][0], max(kv[0][1]), kv[0][1])):
        sp = by.get((SYMMETRY_OF.get(key, ""), dims))
        if sp is None:
            continue
        pairs = ((z3_answer(ex), z3_answer(sp)), (ex.get("cvc5") or None, sp.get("cvc5") or None))
        decided = [a == b for a, b in pairs if None not in (a, b) and "undecided" not in (a, b)]
        out.append(Symmetry(key.removesuffix(".exhaustive"), ex["shape"], pairs[0][0], pairs[0][1], pairs[1][0],
                            pairs[1][1], all(decided) if decided else None, ex["queries"], sp["queries"]))
    return out


def symmetry_checked(records: Iterable[dict]) -> dict[str, Optional[str]]:
    """Per bound ("d1.bound", "d2.bound"): the largest size up to which, at every size, both
    encodings are proved by both solvers (the reduction is machine-checked there); None: not even
    the first. A disagreement ends the climb as an undecided size does."""
    out: dict[str, Optional[str]] = {}
    stopped: set[str] = set()
    for s in symmetry(records):                     # sizes increasing per bound
        out.setdefault(s.bound, None)
        if s.bound in stopped:
            continue
        if s.agree and s.all_proved:
            out[s.bound] = s.shape
        else:
            stopped.add(s.bound)
    return out


@dataclass(frozen=True)
class Findings:
    """A plan's stored answers (the last per statement and size, in store order), the reach of its
    true statements, the symmetry comparisons and how far each bound's reduction is checked, its
    wrong variants (``variants``: those refuted among them), the queries one solver proved and the
    other refuted (``clashes``) and the true statements with a counterexample (``true_refuted``)."""

    answers: tuple[Answer, ...]
    reach: tuple[Reach, ...]
    symmetry: tuple[Symmetry, ...]
    symmetry_checked: tuple[tuple[str, Optional[str]], ...]
    variants: Share
    clashes: int
    true_refuted: tuple[str, ...]

    @property
    def wrong(self) -> list[Answer]:
        return [a for a in self.answers if a.wrong]

    def checked(self, bound: str) -> Optional[str]:
        return dict(self.symmetry_checked).get(bound)


def of_records(records: Iterable[dict]) -> Findings:
    """The findings of stored ``records`` (deduplicated: the last per statement and size)."""
    recs = latest(records)
    answers = tuple(Answer.of(r) for r in recs)
    wrong = [a for a in answers if a.wrong]
    return Findings(answers, tuple(reach(recs).values()), tuple(symmetry(recs)), tuple(symmetry_checked(recs).items()),
                    Share.wilson(sum(a.refuted for a in wrong), len(wrong)),
                    sum({"proved", "counterexample"} <= {a.smt, a.cvc5 or ""} for a in answers),
                    tuple(a.statement for a in answers if not a.wrong and a.smt == "counterexample"))


def findings(store: Any, plan: Any) -> Findings:
    """The findings of ``plan``'s campaign as stored: every statement's last answer at each size up
    to the largest the plan plans it at (the paper's view; the report's is the plan's schedule
    replayed on the stored answers, :func:`verification.prove.checks.plan_records`)."""
    return of_records(r for r in store.records(plan.campaign)
                      if max(r["extra"]["dims"]) <= plan.largest(r["extra"]["statement"]))
