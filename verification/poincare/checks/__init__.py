"""What the Poincare family runs (docs/theory.md section 4): its plan, here, and the checks.

* :class:`Plan` (here, light: no numpy, no torch, so the CLI builds ``--families`` from
  :data:`LOSSES` without loading the kernels): the (family, beta, lambda) grid, the campaign names.
* :mod:`~verification.poincare.checks.bounds`: the estimated C_P against Bakry-Emery, Holley-Stroock, the
  test-function lower bounds and Villani's condition, per instance.
* :mod:`~verification.poincare.checks.villani`: the map of Villani's condition over a (beta, lambda)
  grid and several data seeds.
* :mod:`~verification.poincare.checks.sde`: the Langevin SDE against the constants (statistical outcomes).

>>> Plan().campaign, Plan(seed=3, full=True).campaign
('poincare.bounds-v3-seed0-quick', 'poincare.bounds-v3-seed3-full')
>>> Plan().grid("attn1")[:2]
[(1.0, 0.1), (1.0, 0.3)]
>>> Plan.for_verify(0, True).command(), Plan(families=("attn1",), sde=False, origin="poincare").command()
('attnbounds verify --only poincare --seed 0 --full', 'attnbounds poincare --seed 0 --families attn1 --no-sde')
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verification.plan import RunResult

VERSION = "v3"
FULL_SCALES = ("the (beta, lambda) grid (8 x 5 for every family, instead of 4 x 3 in 1-D and 2 x 2 or one point "
               "in 2-D), the Muckenhoupt brackets at every lambda, the Villani map (12 x 12 grid, 6 data seeds "
               "instead of 8 x 8 and 3), more and longer Langevin chains, and LoRA and gauss1 in the SDE part")
LOSSES = ("gauss1", "attn1", "gauss2", "attn2", "lora2")
LANGEVIN_LOSSES = LOSSES + ("attnfull", "lorafull")   # the Langevin runs' families (numerics.poincare.losses.family)


@dataclass(frozen=True)
class Plan:
    """The bounds grid of ``families``, the Villani map of those of them it covers, and (``sde``)
    the Langevin runs, at ``seed``, quick or ``full``; ``origin``: the command line it reproduces,
    ``"verify"`` (``attnbounds verify --only poincare``) or ``"poincare"`` (``attnbounds poincare``;
    not compared: the same campaigns are the same plan). A :class:`verification.plan.Plan`."""

    seed: int = 0
    full: bool = False
    families: tuple[str, ...] = LOSSES
    sde: bool = True          # the Langevin simulations (``--no-sde``: skipped)
    origin: str = field(default="verify", compare=False)

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        return cls(seed=seed, full=full)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds poincare [--families] [--full] [--no-sde]``."""
        plan = cls(seed=args.seed, full=args.full, families=args.families or LOSSES, sde=not args.no_sde,
                   origin="poincare")
        plan.check()
        return plan

    def campaigns(self) -> tuple[str, ...]:
        from verification.poincare.checks.sde import sde_campaign
        from verification.poincare.checks.villani import map_campaign

        return (self.campaign, map_campaign(self)) + ((sde_campaign(self),) if self.sde else ())

    def command(self) -> str:
        """The command line that reproduces this plan: ``attnbounds verify --only poincare --seed S
        [--full]`` for the main job's, else ``attnbounds poincare --seed S [--full] [--families F]
        [--no-sde]``."""
        tail = f" --seed {self.seed}" + (" --full" if self.full else "")
        if self.origin == "verify":
            return "attnbounds verify --only poincare" + tail
        return ("attnbounds poincare" + tail
                + ("" if tuple(self.families) == LOSSES else f" --families {','.join(self.families)}")
                + ("" if self.sde else " --no-sde"))

    def provenance(self) -> dict[str, Any]:
        return {"seed": self.seed, "preset": "full" if self.full else "quick", "families": ",".join(self.families),
                "sde": "yes" if self.sde else "no", "campaign": self.campaign}

    def check(self) -> None:
        """Every chunk's parameters against what its kernels require (:mod:`numerics.poincare`),
        nothing computed: each family one of :data:`LOSSES`; every (beta, lambda) of the bounds grid,
        the Villani map and the Langevin runs finite and positive (the Gibbs measure exp(-beta F) with
        F = L + lambda/2 |theta|^2 needs both); every Langevin run at least one chain, one step and a
        positive step size, on a family the losses define; InvalidInput naming the first that fails."""
        import math

        from theory.errors import InvalidInput
        from verification.poincare.checks.sde import sde_chunks
        from verification.poincare.checks.villani import map_grid, map_seeds

        def positive(what: str, x: float) -> None:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not (math.isfinite(x) and x > 0):
                raise InvalidInput(f"poincare plan {self.campaign}: {what} = {x!r}; must be finite and > 0")

        if not self.families:
            raise InvalidInput("--families: no family to run")
        for name in self.families:
            if name not in LOSSES:
                raise InvalidInput(f"--families: unknown family {name!r}; known: {', '.join(LOSSES)}")
            for beta, lam in self.grid(name):
                positive(f"{name} beta", beta)
                positive(f"{name} lambda", lam)
        betas, lams = map_grid(self.full)
        for x in betas:
            positive("Villani map beta", x)
        for x in lams:
            positive("Villani map lambda", x)
        if not map_seeds(self):
            raise InvalidInput(f"poincare plan {self.campaign}: the Villani map has no data seed")
        if self.sde:
            for chunk in sde_chunks(self):
                name, *rest = chunk.args
                if name not in LANGEVIN_LOSSES:
                    raise InvalidInput(f"poincare plan {self.campaign}: Langevin run {chunk.key} on unknown family "
                                       f"{name!r}")
                if chunk.key.startswith("rate-"):
                    beta, lam, _, chains, steps = rest[:5]
                    positive(f"{chunk.key} beta", beta)
                else:
                    lam, betas_, _, chains, steps = rest[:5]
                    for b in betas_:
                        positive(f"{chunk.key} beta", b)
                positive(f"{chunk.key} lambda", lam)
                for what, v in (("chains", chains), ("steps", steps)):
                    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                        raise InvalidInput(f"poincare plan {self.campaign}: {chunk.key} {what} = {v!r}; must be >= 1")

    def grid(self, name: str) -> list[tuple[float, float]]:
        if self.full:
            betas, lams = (0.5, 1, 2, 4, 8, 16, 32, 64), (0.03, 0.1, 0.3, 1.0, 3.0)
        elif name.endswith("1"):
            betas, lams = (1, 4, 16, 64), (0.1, 0.3, 1.0)
        elif name.startswith("gauss"):
            betas, lams = (4,), (0.3,)
        else:
            betas, lams = (1, 16), (0.1, 1.0)
        return [(float(b), float(l)) for b in betas for l in lams]

    @property
    def campaign(self) -> str:
        return f"poincare.bounds-{VERSION}-seed{self.seed}-{'full' if self.full else 'quick'}"

    def mp_check(self, name: str, lam: float) -> bool:
        return name.endswith("1") and (self.full or lam == 0.3)


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """The bounds campaign of ``plan``, the Villani map of its 2-D and LoRA families, and (unless
    ``plan.sde`` is off) the Langevin runs; each resumed, its chunks on ``executor`` (default:
    serially, in this process; every chunk carries its own seed, so the store is the same on any
    executor)."""
    from verification.plan import recording
    from verification.poincare.checks.bounds import run_campaign
    from verification.poincare.checks.sde import run_sde
    from verification.poincare.checks.villani import MAP_LOSSES, run_villani_map

    with recording("poincare") as result:
        run_campaign(store, plan, console, executor)
        fams = tuple(f for f in MAP_LOSSES if f in plan.families)
        if fams:
            run_villani_map(store, plan, fams, console, executor)
        if plan.sde:
            run_sde(store, plan, console, executor)
    return result
