"""What the SAN family runs: presets (the settings and the campaign each names), runs (a preset ->
one chunk per trained decoder -> records) and claims (the stored runs -> the paper's claims, each
decided against the seed-to-seed noise floor). Here: the family's :class:`Plan` and :func:`run`
(:mod:`verification.family`).

>>> plan = Plan.for_verify(0, False)
>>> plan.command(), Plan("tiny", 3, ("sdpa",), "cuda").command()
('attnbounds san --preset quick --seed 0', 'attnbounds san --preset tiny --seed 3 --kernels sdpa --device cuda')
>>> plan.full, Plan.for_verify(0, True).preset
(False, 'paper')
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from verification.plan import RunResult

def _full_scales() -> str:
    from verification.san.checks.presets import PRESETS

    q, p = PRESETS["quick"], PRESETS["paper"]
    return (f"the paper preset instead of the quick one: d_model {p.d_model} (quick: {q.d_model}), context {p.ctx} "
            f"({q.ctx}), {p.seeds} seed pairs ({q.seeds}) of all four roles (quick: the reference and its "
            f"depth-matched partner), {p.steps} steps ({q.steps}) per model, and the depth sweep at "
            f"{', '.join(map(str, p.depths))} layers (quick: none) (verification.san.checks.presets)")


FULL_SCALES = _full_scales()


@dataclass(frozen=True)
class Plan:
    """A preset (tiny, quick, paper) at a base seed, trained along each numerical path of
    ``kernels`` (None: every one, :data:`verification.san.checks.presets.KERNELS`) on ``device``,
    its checkpoints under ``out_dir/checkpoints/san`` (None: the working folder; :meth:`at`). A
    :class:`verification.plan.Plan`: ``full`` is the paper preset (``attnbounds verify --full``)."""

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
        """``attnbounds san [--preset | --full] [--kernels] [--device]``; its checkpoint folder
        (``<out>/checkpoints/san``) checked before the store is opened."""
        from verification.checkpoints import check_checkpoint_folder

        plan = cls("paper" if args.full else args.preset, args.seed, tuple(args.kernels), args.device, Path(args.out))
        plan.check()
        check_checkpoint_folder(plan.checkpoint_root(), "--out")
        return plan

    def check(self) -> None:
        """Every run's model and training configuration as the runs build them
        (:func:`verification.san.checks.runs.plan`: :class:`numerics.san.SANConfig` and
        :class:`numerics.san.TrainConfig` validate themselves), and the preset's data (its probes,
        :meth:`~verification.san.checks.presets.Preset.data`), for every numerical path, nothing trained:
        InvalidInput naming the first that fails."""
        from theory.errors import InvalidInput
        from verification.san.checks.presets import KERNELS, PRESETS
        from verification.san.checks.runs import plan as runs_of

        if self.preset not in PRESETS:
            raise InvalidInput(f"--preset {self.preset!r}: one of {', '.join(PRESETS)}")
        for k in self.paths():
            if k not in KERNELS:
                raise InvalidInput(f"--kernels: unknown numerical path {k!r}; known: {', '.join(KERNELS)}")
        preset = PRESETS[self.preset]
        preset.data()
        for k in self.paths():
            runs_of(preset, self.seed, k, self.device)

    def at(self, out_dir: Any) -> "Plan":
        """This plan with its checkpoints under the job's ``out_dir``."""
        from dataclasses import replace

        return replace(self, out_dir=Path(out_dir))

    def checkpoint_root(self) -> Path:
        """Where the runs' checkpoints go: ``out_dir/checkpoints/san``."""
        return (self.out_dir if self.out_dir is not None else Path(".")) / "checkpoints" / "san"

    @property
    def full(self) -> bool:
        return self.preset == "paper"

    def paths(self) -> tuple[str, ...]:
        from verification.san.checks.presets import KERNELS

        return tuple(self.kernels or KERNELS)

    def runs_campaigns(self) -> dict[str, str]:
        """{numerical path: its runs campaign}, the primary path first."""
        from verification.san.checks.presets import PRESETS, campaign_name

        return {k: campaign_name(PRESETS[self.preset], self.seed, k, self.device) for k in self.paths()}

    def campaigns(self) -> tuple[str, ...]:
        from verification.san.checks.decide import claims_campaign

        runs = tuple(self.runs_campaigns().values())
        return runs + (claims_campaign(runs[0]),)

    def command(self) -> str:
        """The command line that reproduces this plan (the main job's too: ``attnbounds verify``
        runs the ``san`` section as this command would): ``attnbounds san --preset P --seed S
        [--kernels K] [--device D]`` (``--kernels`` where it is not the default paths)."""
        from verification.san.checks.presets import KERNELS

        return (f"attnbounds san --preset {self.preset} --seed {self.seed}"
                + ("" if self.paths() == tuple(KERNELS) else f" --kernels {','.join(self.paths())}")
                + ("" if self.device == "cpu" else f" --device {self.device}"))

    def provenance(self) -> dict[str, Any]:
        return {"seed": self.seed, "preset": self.preset, "paths": ",".join(self.paths()), "device": self.device}


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """Train every run of the preset along each numerical path (one chunk per model, resumed; on
    ``executor``: the runs are independent), then decide the claims (the campaigns:
    :meth:`Plan.runs_campaigns`)."""
    from verification.plan import recording
    from verification.san.checks.decide import run_claims
    from verification.san.checks.presets import PRESETS
    from verification.san.checks.runs import run_campaign

    root = plan.checkpoint_root()
    with recording("san") as result:
        camps = {k: run_campaign(store, PRESETS[plan.preset], plan.seed, root, console, executor, k, plan.device)
                 for k in plan.paths()}
        run_claims(store, camps, plan.preset, plan.seed, console)
    return result
