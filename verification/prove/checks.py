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

Every query is decided by z3 and by cvc5 on the same SMT-LIB text (:mod:`numerics.smt.solve`): a
size is ``holds`` only if both say unsat; both answers and times are in ``extra`` (``answers``: per
query); a sat against an unsat stops the run (``SolverDisagreement``).

Sizes run in increasing order, one level at a time (each level its own campaign pass, so an
interrupted run resumes); a statement stops climbing at its first undecided size. Within a level,
statements whose queries rely on others (``Statement.needs``: the bounds) run after them, and only
where every premise is proved at that size by either encoding; :func:`select` adds the premises of
what is asked. A chunk's key carries the hash of its query texts, so a changed encoding is never
served a stored answer.

A registered theorem over :mod:`theory.expr` (a user's, ``--theory FILE.py``; not one of the built-in
Dobrushin theorems above) is one statement of its own, keyed by its id (:func:`user_statement`,
:mod:`numerics.smt.user`): it needs no premise, is planned at sizes 2..max_n (default 2) and stops
climbing at its first size that is not proved; its records go to their own campaign
(``prove.expr-smt-...``: never the paper's), speak its category's vocabulary (a conjecture's:
supported / refuted / inconclusive) and carry what a proof covers (``extra["for_every"]``: its symbols,
parameters' intervals, token widths, hypotheses, where= relations) and the exact sides of a
counterexample. A plan holds
built-in statements or user theorems, never both.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Iterator, Optional

from numerics.smt import SPLIT, STATEMENTS, SmtResult, Statement, decide, decide_split
from numerics.smt.causal import STATEMENTS as CAUSAL_D2
from numerics.smt.exhaustive import EXHAUSTIVE
from numerics.smt.solve import check_timeout, digest
from numerics.smt.user import UserStatement
from theory.errors import InvalidInput
from theory.verdicts import Outcome, Verdict
from verification import campaign
from verification.plan import RunResult, recording
from verification.store import Record

VERSION = "v2"      # the record's layout (z3 and cvc5); a changed encoding changes the chunk's hash instead
TRUE = ("d1.bound", "d1.bound.split", "d1.bound.exhaustive", "d1.iff", "d1.iff.split", "causal", "d2.bound",
        "d2.bound.split", "d2.bound.exhaustive", "d2.iff", "d2.iff.split", "chain", "causal.d2", "causal.d2.lemma")
ALL = {**STATEMENTS, **SPLIT, **EXHAUSTIVE, **CAUSAL_D2}
WRONG = tuple(k for k, s in ALL.items() if s.wrong)


BUILTIN_THEOREMS = frozenset(s.theorem for s in ALL.values())
EXPR_DEFAULT_MAX_N = 2     # a user theorem's sizes without --max-n: 2 only
_USER: dict = {}


def user_statement(theorem_id: str) -> Optional[UserStatement]:
    """The SMT statement of a registered theorem over theory.expr that is not a built-in prove
    statement or theorem (a user's), else None; built once per registered statement."""
    if theorem_id in ALL or theorem_id in BUILTIN_THEOREMS:
        return None
    from theory import registry

    th = registry.REGISTRY.get(theorem_id)
    if th is None or not th.is_expr:
        return None
    key = (theorem_id, th.statement, tuple(th.assume), tuple(th.where))
    if key not in _USER:
        from numerics.smt.user import statement_for

        _USER[key] = statement_for(theorem_id, th.statement, tuple(th.assume), where=tuple(th.where))
    return _USER[key]


def is_user(key: str) -> bool:
    return user_statement(key) is not None


def statement(key: str) -> Statement:
    """The built-in statement ``key`` (:data:`ALL`) or a user theorem's (:func:`user_statement`)."""
    if key in ALL:
        return ALL[key]
    st = user_statement(key)
    if st is None:
        raise KeyError(key)
    return st


def premise_at(key: str, dims: tuple) -> dict[str, list]:
    """Each premise of ``key`` (a base statement key) -> the dims where it must be proved."""
    st = statement(key)
    return {p: list(st.premise_dims(tuple(dims), statement(p).kind)) for p in st.needs}


def premise_keys(key: str) -> tuple[str, ...]:
    """The keys that satisfy the premises of ``key``: either encoding of each statement it needs."""
    return tuple(k for p in statement(key).needs for k in (p, f"{p}.split") if k in ALL)


def select(names: tuple[str, ...]) -> tuple[str, ...]:
    """Statement keys for THEOREM_IDs and/or statement keys (all when empty), with the premises of
    each (the split encoding of a needed bound, unless an encoding of it is already asked) first;
    unknown: InvalidInput."""
    if not names:
        return TRUE + WRONG
    out = []
    for name in names:
        if is_user(name):
            out.append(name)
            continue
        keys = [k for k in TRUE + WRONG if ALL[k].theorem == name] if name not in ALL else [name]
        if not keys:
            known = sorted({s.theorem for s in ALL.values()})
            raise InvalidInput(f"unknown theorem or statement {name!r}; theorems: {', '.join(known)}; "
                             f"statements: {', '.join(TRUE + WRONG)}")
        out += keys
    return with_premises(tuple(out))


def with_premises(keys: tuple[str, ...]) -> tuple[str, ...]:
    """``keys`` with, first, an encoding of every statement they need (the split one, which reaches
    further, unless an encoding of it is among ``keys``)."""
    out = list(dict.fromkeys(keys))
    todo = list(out)
    while todo:                                    # premises of premises too (causal.d2.lemma -> causal -> d1.bound)
        key = todo.pop()
        if not statement(key).wrong:
            for p in statement(key).needs:
                if p not in out and f"{p}.split" not in out:
                    out.insert(0, f"{p}.split" if f"{p}.split" in ALL else p)
                    todo.append(out[0])
    return tuple(out)


def depth(key: str) -> int:
    """0 for a statement that needs nothing (or a wrong variant), else 1 + the deepest premise."""
    st = statement(key)
    return 0 if st.wrong or not st.needs else 1 + max(depth(p) for p in st.needs)


@dataclass(frozen=True)
class Plan:
    """Statements (with their premises), sizes up to ``max_n``, ``timeout`` seconds per statement,
    size and solver; ``seed`` (nothing here is random: it changes nothing but the plan's provenance)
    and ``full`` (the preset it starts from: :data:`FULL`, else :data:`QUICK`)."""

    statements: tuple[str, ...] = TRUE + WRONG
    max_n: int = 4
    timeout: float = 60.0
    upto: tuple = ()      # (statement, largest size) pairs below max_n: sizes beyond are left to a larger plan
    seed: int = 0
    full: bool = False
    theory: tuple[str, ...] = ()   # the --theory files of a plan of user theorems (its command line)

    @property
    def expr(self) -> bool:
        """Whether the plan's statements are user theorems over theory.expr (else built-in ones)."""
        return bool(self.statements) and is_user(self.statements[0])

    def largest(self, key: str) -> int:
        """The largest size ``key`` is planned at (``max_n`` unless :attr:`upto` says less)."""
        return min(self.max_n, dict(self.upto).get(key, self.max_n))

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        """:data:`QUICK` or :data:`FULL` (no random draw: ``seed`` changes nothing but the provenance)."""
        return replace(FULL if full else QUICK, seed=seed)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds prove [THEOREM_ID ...] [--max-n] [--timeout] [--full]``: the main job's plan
        (:data:`QUICK`, or :data:`FULL` with ``--full``), its sizes and budget overridden by the options."""
        base = cls.for_verify(args.seed, args.full)
        names = tuple(args.theorems)
        user = [n for n in names if is_user(n)]
        if user:
            return cls(statements=tuple(dict.fromkeys(names)),
                       max_n=EXPR_DEFAULT_MAX_N if args.max_n is None else args.max_n,
                       timeout=base.timeout if args.timeout is None else args.timeout, seed=args.seed,
                       full=args.full, theory=tuple(dict.fromkeys(getattr(args, "theory", None) or ())))
        return cls(statements=select(names),
                   max_n=base.max_n if args.max_n is None else args.max_n,
                   timeout=base.timeout if args.timeout is None else args.timeout,
                   upto=base.upto if args.max_n is None else (), seed=args.seed, full=args.full)

    def command(self) -> str:
        """The ``attnbounds prove`` command line of the plan: for the main job's plans the sizes and
        budget spelled out (what the paper has always printed; ``--max-n`` plans every statement up
        to it, the statements :data:`QUICK` leaves at n = 2 included, so it fills the campaign with
        a little more), else the options that reproduce it from its preset (the statement keys
        when not all, ``--full``, ``--max-n`` and ``--timeout`` where they differ from the preset's).

        >>> QUICK.command(), FULL.command()
        ('attnbounds prove --max-n 3 --timeout 10', 'attnbounds prove --max-n 12 --timeout 60')
        >>> Plan(statements=("d1.iff",), max_n=2, timeout=5).command()
        'attnbounds prove d1.bound.split d1.iff --max-n 2 --timeout 5'
        """
        if self.expr:
            return " ".join(["attnbounds prove", *self.statements, *(f"--theory {f}" for f in self.theory)]
                            + (["--full"] if self.full else [])
                            + [f"--max-n {self.max_n}", f"--timeout {self.timeout:g}"])
        base = FULL if self.full else QUICK
        statements = self.statements != base.statements
        if not statements and (self.max_n, self.timeout, self.upto) == (base.max_n, base.timeout, base.upto):
            return f"attnbounds prove --max-n {self.max_n} --timeout {self.timeout:g}"
        return " ".join(["attnbounds prove"] + (list(self.statements) if statements else [])
                        + (["--full"] if self.full else [])
                        + ([f"--max-n {self.max_n}"] if (self.max_n, self.upto) != (base.max_n, base.upto) else [])
                        + ([f"--timeout {self.timeout:g}"] if self.timeout != base.timeout else []))

    def provenance(self) -> dict[str, Any]:
        """Seed, preset, sizes, budget, statements and solvers.

        >>> QUICK.provenance()["preset"], FULL.provenance()["max_n"]
        ('quick', 12)
        """
        return {"seed": self.seed, "preset": "full" if self.full else "quick", "max_n": self.max_n,
                "timeout_s": self.timeout, "statements": len(self.statements), "solvers": "z3, cvc5",
                "campaign": self.campaign}

    def campaigns(self) -> tuple[str, ...]:
        return (self.campaign,)

    def check(self) -> None:
        """Every chunk's parameters against what the solvers require, nothing solved: the budget
        (:func:`numerics.smt.solve.check_timeout`), each statement one with an encoding, sizes from
        n = 2 (a statement's dims at every level it is planned at); InvalidInput naming the first that
        fails. (The query texts themselves are built level by level as the run climbs: a statement
        stops at its first undecided size.)"""
        check_timeout(self.timeout)
        if isinstance(self.max_n, bool) or not isinstance(self.max_n, int) or self.max_n < 2:
            raise InvalidInput(f"--max-n {self.max_n!r}: sizes start at n = 2")
        for key, n in self.upto:
            if key not in self.statements or n < 2:
                raise InvalidInput(f"prove plan: {key!r} planned up to n = {n}, not a statement of the plan from n = 2")
        for key in self.statements:
            try:
                st = statement(key)
            except KeyError:
                raise InvalidInput(f"prove plan: no statement {key!r}") from None
            for n in self.levels():
                dims = self.dims(key, n) if n <= self.largest(key) else None
                if dims is not None and (len(dims) not in (1, 3) or min(dims) < 2):
                    raise InvalidInput(f"prove plan: {key} at n = {n} has dims {dims} ({st.kind}: n x n matrices, n >= 2)")

    def __post_init__(self) -> None:
        check_timeout(self.timeout)         # 1 ms .. one day, finite: else InvalidInput before any solving
        user = [k for k in self.statements if is_user(k)]
        if user and len(user) != len(self.statements):
            other = next(k for k in self.statements if not is_user(k))
            raise InvalidInput(f"{user[0]} (a theorem over theory.expr) and {other} (a built-in statement) "
                               "cannot share a run; prove them with two commands")
        object.__setattr__(self, "statements", with_premises(tuple(self.statements)))

    @property
    def campaign(self) -> str:
        if self.expr:                       # a user's theorems: their own campaign, never the paper's
            return f"prove.expr-smt-{VERSION}-timeout{self.timeout:g}s"
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
        """The chunk of ``key`` at level n, keyed by the hash of its query texts (None: no dims there)."""
        dims = self.dims(key, n)
        if dims is None:
            return None
        h = digest(statement(key), dims)
        return campaign.Chunk(f"{key}@{statement(key).shape(dims)}#{h[:16]}", prove_chunk, (key, dims, self.timeout, h))


# the statements at 3x3x3 that neither solver decides within the quick budget (10 s each, measured on the
# 2-core machine: undecided every time): quick plans them at n = 2 only, --full at every size
QUICK_UNDECIDED_AT_3 = ("d2.bound", "d2.bound.exhaustive", "d2.iff", "d2.iff.split", "chain")
QUICK = Plan(max_n=3, timeout=10.0, upto=tuple((k, 2) for k in QUICK_UNDECIDED_AT_3))
# the main job's quick section: 10 s per size and solver, 5x what cvc5 needs
# for the slowest size proved here (D2's split bound at 3x3x3, 2.0 s quiet, 4.5 s loaded), so the quick reach
# does not change with the machine's speed (3 s did)
FULL = Plan(max_n=12, timeout=60.0, full=True)  # `attnbounds verify --full` and the paper's full tables (about 15 min)
FULL_SCALES = ("sizes up to n = 12 (quick: 3; the unsplit D2 encodings and the chain, which no solver decides at "
               "3x3x3 in 10 s, at 2) and 60 s per statement, size and solver (quick: 10 s)")


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


def premises_proved(key: str, dims: tuple, records: list[dict]) -> list[str]:
    """The premises of ``key`` at ``dims`` NOT proved (by either encoding) in ``records``."""
    st = statement(key)
    if st.wrong:
        return []
    proved = {(r["extra"]["statement"], tuple(r["extra"]["dims"])) for r in records if r["extra"]["smt"] == "proved"}
    return [p for p, pd in premise_at(key, dims).items() if not ({(p, tuple(pd)), (f"{p}.split", tuple(pd))} & proved)]


def schedule(plan: Plan, store: Any, current: set, console: Any = None) -> Iterator[tuple[int, list]]:
    """The plan's chunks, ``(n, chunks)`` per level n and premise depth, each list planned from
    the answers stored for the lists before it (a statement stops at its first undecided size; one
    whose premises are not proved at a size is not run there): the caller runs each list before
    asking for the next. ``current`` collects the hashes of the query texts planned."""
    stuck: set[str] = set()
    for n in plan.levels():
        stored = [r for r in store.records(plan.campaign) if r["extra"].get("digest") in current]
        stuck |= {r["extra"]["statement"] for r in stored
                  if r["extra"]["smt"] == "undecided" and not r["extra"]["wrong"] and max(r["extra"]["dims"]) < n}
        if plan.expr:                      # a user theorem also stops at a counterexample: it is refuted
            stuck |= {r["extra"]["statement"] for r in stored
                      if r["extra"]["smt"] != "proved" and max(r["extra"]["dims"]) < n}
        for layer in range(1 + max(depth(k) for k in plan.statements)):    # premises first, then what relies on them
            keys = [k for k in plan.statements if k not in stuck and depth(k) == layer and n <= plan.largest(k)]
            if layer:
                level = [r for r in store.records(plan.campaign) if r["extra"].get("digest") in current]
                blocked = {k: premises_proved(k, plan.dims(k, n), level) for k in keys if plan.dims(k, n)}
                for k, missing in blocked.items():
                    if missing:
                        stuck.add(k)
                        if console is not None:
                            console.print(f"{k} at n = {n} not run: its premise {', '.join(missing)} is not proved "
                                          "at that size")
                keys = [k for k in keys if not blocked.get(k)]
            chunks = [c for c in (plan.chunk(k, n) for k in keys) if c is not None]
            current |= {c.args[3] for c in chunks}
            if chunks:
                yield n, chunks


def plan_chunks(store: Any, plan: Plan) -> list[str]:
    """The chunk keys of ``plan`` as :func:`run_campaign` runs it on ``store``'s answers, nothing
    solved: every list of :func:`schedule` up to the first one the store lacks a chunk of (what
    comes after it depends on the answers still to be computed)."""
    done, keys = store.done_chunks(plan.campaign), []
    for _, chunks in schedule(plan, store, set()):
        keys += [c.key for c in chunks]
        if any(c.key not in done for c in chunks):
            break
    return keys


def run_campaign(store: Any, plan: Plan, console: Any = None) -> list[dict]:
    """Run the plan level by level (resumable); returns the stored records of its statements."""
    current: set[str] = set()                      # the hashes of this plan's query texts
    for n, chunks in schedule(plan, store, current, console):
        campaign.run(store, plan.campaign, chunks, console=console, description=f"SMT proofs, level n = {n}",
                     progress=console is not None)
    keys = set(plan.statements)
    return [r for r in store.records(plan.campaign) if r["extra"]["statement"] in keys
            and max(r["extra"]["dims"]) <= plan.max_n and r["extra"].get("digest") in current]


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """:func:`run_campaign` (level by level: each level is planned from the answers before it, so
    the levels run one after another, each on the default executor); what each level's campaign run
    did (:class:`verification.plan.RunResult`; the records: :func:`plan_records`)."""
    with recording("prove") as result:
        run_campaign(store, plan, console)
    return result


def plan_records(store: Any, plan: Plan) -> list[dict]:
    """The stored records of ``plan``'s statements and sizes, as :func:`run_campaign` returns them
    (its schedule replayed on the stored answers, nothing solved)."""
    current: set[str] = set()
    for _ in schedule(plan, store, current):
        pass
    keys = set(plan.statements)
    return [r for r in store.records(plan.campaign) if r["extra"]["statement"] in keys
            and max(r["extra"]["dims"]) <= plan.max_n and r["extra"].get("digest") in current]


def sensitivity_failures(records: list[dict]) -> list[dict]:
    """Wrong variants that did not come back with an exactly confirmed counterexample."""
    return [r for r in records if r["extra"]["wrong"] and not (r["extra"]["smt"] == "counterexample"
                                                                and r["extra"]["confirmed"])]
