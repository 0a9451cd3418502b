"""The two vocabularies of attnbounds (README.md, "Verdicts and exactness").

A *proved* theorem (or a sanity check that must hold) checked on an instance gets a
:class:`Verdict`: holds / tight / violated / undecided / not-applicable, certified. A *claim* (a
conjecture from a paper, an estimator's success) or a *statistical* comparison (an SDE decay rate
against its prediction) gets an :class:`Outcome`: supported / refuted / inconclusive, stored with
its statistic and interval (``extra["statistic"]``, ``extra["interval"]``, ``extra["method"]``). A
refuted claim is a finding for the tables, never a ``violated`` record and never a stop.

>>> vocabulary("proved") is Verdict, vocabulary("conjecture") is Outcome
(True, True)
>>> judge("supported")
<Outcome.SUPPORTED: 'supported'>
"""
from __future__ import annotations

from enum import Enum, IntEnum

#: The significance level of every statistical decision of the suite (a claim is supported or refuted
#: only below it, family-wise where a family is tested; intervals are at 1 - ALPHA): defined here once
#: and imported by every module that decides (numerics.san.claims, verification.stats, ...).
ALPHA = 0.05


class Verdict(str, Enum):
    """Outcome of checking one theorem on one instance.

    HOLDS           the inequality holds strictly (certified)
    TIGHT           equality holds (certified exactly)
    VIOLATED        a certified counterexample: store it and fail loudly
    UNDECIDED       the exact check exhausted its budget; said so, never guessed
    NOT_APPLICABLE  the theorem's hypotheses fail on this instance
    """

    HOLDS = "holds"
    TIGHT = "tight"
    VIOLATED = "violated"
    UNDECIDED = "undecided"
    NOT_APPLICABLE = "not-applicable"

    def __str__(self) -> str:  # prints as its value in tables
        return self.value


class Code(IntEnum):
    """The one table of integer verdict codes, for arrays of verdicts (numpy int8): every batched
    check (numerics.expr.decide, numerics.dobrushin.batch, numerics.smt) returns these and
    :data:`VERDICT_OF` turns them back into :class:`Verdict`.

    >>> Code.UNDECIDED.verdict, Code.of(Verdict.TIGHT)
    (<Verdict.UNDECIDED: 'undecided'>, <Code.TIGHT: 1>)
    """

    HOLDS = 0
    TIGHT = 1
    VIOLATED = 2
    NOT_APPLICABLE = 3
    UNDECIDED = 4

    @property
    def verdict(self) -> Verdict:
        return Verdict[self.name]

    @classmethod
    def of(cls, verdict: "Verdict | str") -> "Code":
        return cls[Verdict(verdict).name]


#: code -> Verdict, in code order (index a numpy object array with a code array)
VERDICT_OF = tuple(c.verdict for c in Code)


class ViolationError(AssertionError):
    """Raised when a certified counterexample to a proved theorem is found."""


class Outcome(str, Enum):
    """Outcome of testing a claim or a statistical comparison on one instance (or one cell).

    SUPPORTED     the data agree with the claim (the statistic and its interval say how well)
    REFUTED       the data contradict the claim: a finding, reported plainly, never a stop
    INCONCLUSIVE  the interval does not separate the two (or the test could not be run)
    NOT_TESTABLE  the design's precondition failed, so the data cannot speak to the claim (e.g. the
                  models compared did not pass their training gate); the record says which and why
    """

    SUPPORTED = "supported"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    NOT_TESTABLE = "not-testable"

    def __str__(self) -> str:
        return self.value


# registry category -> the vocabulary its records use
OUTCOME_CATEGORIES = ("conjecture", "statistical")


def vocabulary(category: str) -> type:
    """:class:`Outcome` for claims and statistical comparisons, :class:`Verdict` otherwise."""
    return Outcome if category in OUTCOME_CATEGORIES else Verdict


def spoken(kind: type) -> str:
    """``kind`` (:class:`Verdict` or :class:`Outcome`) as a message names it: its article and its
    values, e.g. in "'violated', which is not an outcome (supported, ...)".

    >>> spoken(Outcome)
    'an outcome (supported, refuted, inconclusive, not-testable)'
    >>> spoken(Verdict)
    'a verdict (holds, tight, violated, undecided, not-applicable)'
    """
    noun = kind.__name__.lower()
    article = "an" if noun[0] in "aeiou" else "a"
    return f"{article} {noun} ({', '.join(v.value for v in kind)})"


def judge(value: "str | Verdict | Outcome") -> "Verdict | Outcome":
    """The Verdict or Outcome named by ``value`` (a ValueError naming both vocabularies if none)."""
    if isinstance(value, (Verdict, Outcome)):
        return value
    for kind in (Verdict, Outcome):
        try:
            return kind(value)
        except ValueError:
            pass
    raise ValueError(f"{value!r} is neither a verdict ({', '.join(v.value for v in Verdict)}) nor an "
                     f"outcome ({', '.join(o.value for o in Outcome)})")
