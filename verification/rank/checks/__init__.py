"""What the rank family runs: plans, campaigns and chunk functions (instance -> records).

    linear     the linear surrogate: optimum (certified tail sums, deficiency, achievability), GD on
               U V^T (population and finite data), pre-training rank estimators
    attention  attention-native: data-only kernel recovery, GD students, the interpolation ladder
    weights    effective ranks of the per-head circuits of the embedded trained models

Here: the family's :class:`Plan` (the linear plan, the attention plan its ``full`` chooses, the
parts to run) and :func:`run` (:mod:`verification.family`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

PARTS = ("linear", "attention", "weights")
MAX_N = 64  # largest --n the exact certification finishes in minutes
FULL_SCALES = ("the linear surrogate n = 16, r* = 4 (quick: 8, 3) with more seeds, GD steps, initial scales, sample "
               "sizes and noise levels; attention d = 6, r* = 3 (quick: 4, 2), 50 teacher seeds (quick: 5), longer "
               "students; the trained heads are the same")


@dataclass(frozen=True)
class Plan:
    """``linear``: a :class:`verification.rank.checks.linear.Plan` (its ``seed`` and ``full``
    choose the attention plan, :attr:`attention`); ``parts``: which of :data:`PARTS` run."""

    linear: Any
    parts: tuple[str, ...] = PARTS

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        from verification.rank.checks.linear import FULL, QUICK

        return cls(replace(FULL if full else QUICK, seed=seed))

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds rank [--full] [--n] [--r-star] [--part]``, checked before any work."""
        from theory.errors import InvalidInput

        plan = cls.for_verify(args.seed, args.full).linear
        if args.n is not None:
            plan = replace(plan, n=args.n)
        if args.r_star is not None:
            plan = replace(plan, r_star=args.r_star)
        if plan.n > MAX_N:
            raise InvalidInput(f"--n {plan.n}: the exact (Fraction / 60-digit) certification grows like n^3; "
                               f"at most {MAX_N}")
        if not (1 <= plan.r_star <= plan.n - 2):
            raise InvalidInput(f"--r-star must satisfy 1 <= r* <= n - 2 (r* + 2 students), got r*={plan.r_star}, "
                               f"n={plan.n}")
        return cls(plan, args.part or PARTS)

    @property
    def seed(self) -> int:
        return self.linear.seed

    @property
    def attention(self) -> Any:
        from verification.rank.checks import attention as att

        return att.FULL_ATT if self.linear.full else att.QUICK_ATT

    def campaigns(self) -> tuple[str, ...]:
        from verification.rank.checks import attention, linear, weights

        out: tuple[str, ...] = ()
        if "linear" in self.parts:
            out += tuple(linear.linear_chunks(self.linear))
        if "attention" in self.parts:
            out += attention.campaigns(self.attention, self.seed)
        if "weights" in self.parts:
            out += (weights.CAMPAIGN,)
        return out


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> None:
    """The campaigns of ``plan.parts`` (resumed), serially (``executor`` is not used)."""
    if "linear" in plan.parts:
        from verification.rank.checks.linear import run_linear

        run_linear(store, plan.linear, console)
    if "attention" in plan.parts:
        from verification.rank.checks.attention import run_attention

        run_attention(store, plan.attention, plan.seed, console)
    if "weights" in plan.parts:
        from verification.rank.checks.weights import run_weights

        run_weights(store, console=console)
