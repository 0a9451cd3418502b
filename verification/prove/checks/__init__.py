"""The SMT campaign: every Dobrushin statement through z3 and cvc5, size by size (``numerics.smt``).

    statements  the built-in statements, a user's theorem over theory.expr as one, their premises
    records     one chunk: a statement at one size decided by both solvers, and its record
    schedule    the order: sizes increasing, premises first, a statement stops at its first undecided size

Here: the family's :class:`Plan` (statements with their premises, sizes, budget; the presets
:data:`QUICK` and :data:`FULL`) and :func:`run`. One chunk per (statement, size), keyed by the hash
of its query texts, so a changed encoding is never served a stored answer. A registered theorem over
:mod:`theory.expr` (a user's, ``--theory FILE.py``) is planned at sizes 2..max_n (default 2), its
records go to their own campaign (``prove.expr-smt-...``: never the paper's); a plan holds built-in
statements or user theorems, never both.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from numerics.smt.solve import check_timeout, digest
from theory.errors import InvalidInput
from verification import campaign
from verification.plan import RunResult, recording
from verification.prove.checks.records import prove_chunk, record  # noqa: F401  (the chunk function, its record)
from verification.prove.checks.schedule import (plan_chunks, plan_records, run_campaign,  # noqa: F401
                                                sensitivity_failures)
from verification.prove.checks.statements import (ALL, TRUE, WRONG, depth, is_user, premise_at,  # noqa: F401
                                                  select, statement, with_premises)

VERSION = "v2"      # the record's layout (z3 and cvc5); a changed encoding changes the chunk's hash instead
EXPR_DEFAULT_MAX_N = 2     # a user theorem's sizes without --max-n: 2 only


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


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """:func:`run_campaign` (level by level: each level is planned from the answers before it, so
    the levels run one after another, each level's chunks on ``executor``, default serially); what each level's campaign run
    did (:class:`verification.plan.RunResult`; the records: :func:`plan_records`)."""
    with recording("prove") as result:
        run_campaign(store, plan, console, executor)
    return result

