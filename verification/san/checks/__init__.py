"""What the SAN family runs: presets (the settings and the campaign each names), runs (a preset ->
one chunk per trained decoder -> records) and claims (the stored runs -> the paper's claims, each
decided against the seed-to-seed noise floor). Here: the family's :class:`Plan` and :func:`run`
(:mod:`verification.family`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

FULL_SCALES = ("the paper preset instead of the quick one: d_model 96 (quick: 32), context 128 (32), 6000 steps "
               "(170) per model (verification.san.checks.presets)")


@dataclass(frozen=True)
class Plan:
    """A preset (tiny, quick, paper) at a base seed, trained along each numerical path of
    ``kernels`` (None: every one, :data:`verification.san.checks.presets.KERNELS`) on ``device``,
    its checkpoints under ``out_dir/checkpoints/san`` (None: the working folder; :meth:`at`)."""

    preset: str = "quick"
    seed: int = 0
    kernels: Optional[tuple[str, ...]] = None
    device: str = "cpu"
    out_dir: Optional[Path] = None

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        return cls("paper" if full else "quick", seed)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds san [--preset | --full] [--kernels] [--device]``."""
        return cls("paper" if args.full else args.preset, args.seed, tuple(args.kernels), args.device, Path(args.out))

    def at(self, out_dir: Any) -> "Plan":
        """This plan with its checkpoints under the job's ``out_dir``."""
        from dataclasses import replace

        return replace(self, out_dir=Path(out_dir))

    def paths(self) -> tuple[str, ...]:
        from verification.san.checks.presets import KERNELS

        return tuple(self.kernels or KERNELS)

    def campaigns(self) -> tuple[str, ...]:
        from verification.san.checks.claims import claims_campaign
        from verification.san.checks.presets import PRESETS, campaign_name

        runs = tuple(campaign_name(PRESETS[self.preset], self.seed, k, self.device) for k in self.paths())
        return runs + (claims_campaign(runs[0]),)


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> dict:
    """Train every run of the preset along each numerical path (one chunk per model, resumed; on
    ``executor``: the runs are independent), then decide the claims; {path: runs campaign}."""
    from verification.san.checks.claims import run_claims
    from verification.san.checks.presets import PRESETS
    from verification.san.checks.runs import run_campaign

    root = (plan.out_dir if plan.out_dir is not None else Path(".")) / "checkpoints" / "san"
    camps = {k: run_campaign(store, PRESETS[plan.preset], plan.seed, root, console, executor, k, plan.device)
             for k in plan.paths()}
    run_claims(store, camps, plan.preset, plan.seed, console)
    return camps
