"""The Poincare campaign's plan: which (family, beta, lambda) instances a run covers, and its name.

Light on purpose (no numpy, no torch): the CLI builds its ``--families`` option from
:data:`LOSSES` without loading the kernels. The checks that run the plan:
:mod:`verification.poincare.checks.bounds`.

>>> Plan().campaign, Plan(seed=3, full=True).campaign
('poincare.bounds-v3-seed0-quick', 'poincare.bounds-v3-seed3-full')
>>> Plan().grid("attn1")[:2]
[(1.0, 0.1), (1.0, 0.3)]
"""
from __future__ import annotations

from dataclasses import dataclass

VERSION = "v3"
LOSSES = ("gauss1", "attn1", "gauss2", "attn2", "lora2")


@dataclass(frozen=True)
class Plan:
    seed: int = 0
    full: bool = False
    families: tuple[str, ...] = LOSSES

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
