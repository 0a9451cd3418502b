"""The one verdict vocabulary used everywhere in attnbounds (DESIGN.md)."""
from __future__ import annotations

from enum import Enum


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


class ViolationError(AssertionError):
    """Raised when a certified counterexample to a proved theorem is found."""
