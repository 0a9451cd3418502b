"""What the rank family runs: plans, campaigns and chunk functions (instance -> records).

    linear     the linear surrogate: optimum (certified tail sums, deficiency, achievability), GD on
               U V^T (population and finite data), pre-training rank estimators
    attention  attention-native: data-only kernel recovery, GD students, the interpolation ladder
    weights    effective ranks of the per-head circuits of the embedded trained models

Here: the family's :class:`Plan` (the linear plan, the attention plan its ``full`` chooses, the
parts to run; :class:`verification.plan.Plan`) and :func:`run` (:mod:`verification.family`).

>>> plan = Plan.for_verify(0, False)
>>> plan.command(), plan.part_command("weights")
('attnbounds verify --only rank --seed 0', 'attnbounds rank --part weights --seed 0')
>>> plan.provenance()["n"], plan.provenance()["preset"]
(8, 'quick')
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from verification.plan import RunResult

PARTS = ("linear", "attention", "weights")
MAX_N = 64  # largest --n the exact certification finishes in minutes
FULL_SCALES = ("the linear surrogate n = 16, r* = 4 (quick: 8, 3) with more seeds, GD steps, initial scales, sample "
               "sizes and noise levels; attention d = 6, r* = 3 (quick: 4, 2), 50 teacher seeds (quick: 5), longer "
               "students; the trained heads are the same")


@dataclass(frozen=True)
class Plan:
    """``linear``: a :class:`verification.rank.checks.linear.Plan` (its ``seed`` and ``full``
    choose the attention plan, :attr:`attention`, unless ``att`` gives one); ``parts``: which of
    :data:`PARTS` run; ``origin``: the command line it reproduces, ``"verify"`` (``attnbounds verify
    --only rank``) or ``"rank"`` (``attnbounds rank``; not compared: the same campaigns are the same
    plan)."""

    linear: Any
    parts: tuple[str, ...] = PARTS
    att: Optional[Any] = None
    origin: str = field(default="verify", compare=False)

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        from verification.rank.checks.linear import FULL, QUICK

        return cls(replace(FULL if full else QUICK, seed=seed))

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds rank [--full] [--n] [--r-star] [--part]``, checked before any work."""
        from theory.errors import InvalidInput

        plan = cls.for_verify(args.seed, args.full).linear
        n = plan.n if args.n is None else args.n
        r_star = plan.r_star if args.r_star is None else args.r_star
        if n > MAX_N:
            raise InvalidInput(f"--n {n}: the exact (Fraction / 60-digit) certification grows like n^3; "
                               f"at most {MAX_N}")
        if not (1 <= r_star <= n - 2):
            raise InvalidInput(f"--r-star must satisfy 1 <= r* <= n - 2 (r* + 2 students), got r*={r_star}, "
                               f"n={n}")
        out = cls(plan.at_size(n, r_star), args.part or PARTS, origin="rank")
        out.check()
        return out

    @property
    def seed(self) -> int:
        return self.linear.seed

    @property
    def full(self) -> bool:
        return self.linear.full

    @property
    def attention(self) -> Any:
        from verification.rank.checks import attention as att

        if self.att is not None:
            return self.att
        return att.FULL_ATT if self.linear.full else att.QUICK_ATT

    def check(self) -> None:
        """The parameters of every chunk of the parts it runs against what their kernels require
        (:meth:`verification.rank.checks.linear.Plan.check`,
        :meth:`verification.rank.checks.attention.AttPlan.check`; the trained heads have none), nothing
        computed: InvalidInput naming the first that fails."""
        if "linear" in self.parts:
            self.linear.check()
        if "attention" in self.parts:
            self.attention.check()

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

    def command(self) -> str:
        """The command line that reproduces this plan: ``attnbounds verify --only rank --seed S
        [--full]`` for the main job's, else ``attnbounds rank [--part P] --seed S [--full] [--n N]
        [--r-star R]`` (``--n``, ``--r-star`` where the linear part runs at sizes other than the
        preset's). A plan built in Python with other settings (a test's tiny one) has no command line
        of its own: it gets that of its preset at its ``n`` and ``r*``."""
        tail = f" --seed {self.seed}" + (" --full" if self.full else "")
        if self.origin == "verify":
            return "attnbounds verify --only rank" + tail
        line = "attnbounds rank" + ("" if tuple(self.parts) == PARTS else f" --part {','.join(self.parts)}") + tail
        preset = Plan.for_verify(self.seed, self.full).linear
        if "linear" in self.parts and self.linear.n != preset.n:
            line += f" --n {self.linear.n}"
        if "linear" in self.parts and self.linear.r_star != preset.r_star:
            line += f" --r-star {self.linear.r_star}"
        return line

    def part_command(self, part: str) -> str:
        """The command that fills this plan's campaigns of one part (linear, attention, weights):
        ``attnbounds rank --part PART --seed S ...``."""
        return replace(self, parts=(part,), origin="rank").command()

    def provenance(self) -> dict[str, Any]:
        att = self.attention
        return {"seed": self.seed, "preset": "full" if self.full else "quick", "parts": ",".join(self.parts),
                "n": self.linear.n, "r_star": self.linear.r_star, "linear": self.linear.tag,
                "attention": att.tag(self.seed), "attention d": att.d, "attention r_star": att.r_star}


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """The campaigns of ``plan.parts`` (resumed), their chunks on ``executor`` (default: serially, in
    this process; every chunk carries its own seed, so the store is the same on any executor)."""
    from verification.plan import recording

    with recording("rank") as result:
        if "linear" in plan.parts:
            from verification.rank.checks.linear import run_linear

            run_linear(store, plan.linear, console, executor)
        if "attention" in plan.parts:
            from verification.rank.checks.attention import run_attention

            run_attention(store, plan.attention, plan.seed, console, executor)
        if "weights" in plan.parts:
            from verification.rank.checks.weights import run_weights

            run_weights(store, console=console, executor=executor)
    return result
