"""The Dobrushin campaign: Theorems D1 and D2 on random row-stochastic families
(:mod:`numerics.sources.random`), one record per instance.

Every instance is checked by the one vectorised check of these theorems,
:func:`numerics.dobrushin.batch.check_batch` (both sides computed directly and compared
with the exact verdicts within a rigorous float error), on the chunk's matrices at once: D1 on
every matrix, with every instance certified exactly (``certify_all``: its closed-form slack, its
maximising pair, whether equality goes through token 0), and D2 on the pairs (A[2k], A[2k+1]).
A violation beyond the rigorous float error is stored as ``violated`` and stops the run loudly
(through the campaign runner). One chunk of instances per (family, n, chunk index), seeded on its own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from numerics.sources.random import DISTRIBUTIONS, GENERATOR, generator, sample
from verification import campaign
from verification.store import Record
from numerics.dobrushin.batch import NAMES
from numerics.dobrushin.batch import check_batch, check_factor

SIZES = (2, 3, 4, 5, 8, 16, 32, 64, 128)
CHUNK = 50
FULL_SCALES = "ten times the instances per (family, n): 2000 up to n = 16, 1000 up to 64, 500 at 128"
VERSION = "v2"  # bump when the sampling or the checks change: a new campaign, not a resume


@dataclass(frozen=True)
class Plan:
    """Families x sizes, each with :meth:`instances` matrices in chunks of :data:`CHUNK`."""

    families: tuple[str, ...] = DISTRIBUTIONS
    sizes: tuple[int, ...] = SIZES
    seed: int = 0
    full: bool = False

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        return cls(seed=seed, full=full)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds dobrushin [--families] [--sizes] [--full]``; a chunk over the memory budget
        is refused here (:func:`numerics.device.check_memory`), before anything is computed."""
        from numerics.device import check_memory, chunk_memory

        plan = cls(families=args.families or DISTRIBUTIONS, sizes=args.sizes or SIZES, seed=args.seed,
                   full=args.full)
        n = max(plan.sizes)
        check_memory(f"--sizes {n}", chunk_memory(n, min(CHUNK, plan.instances(n))))
        return plan

    def campaigns(self) -> tuple[str, ...]:
        return (self.campaign,)

    def instances(self, n: int) -> int:
        base = 200 if n <= 16 else 100 if n <= 64 else 50
        return base * (10 if self.full else 1)

    @property
    def campaign(self) -> str:
        return f"dobrushin.random-{VERSION}-seed{self.seed}-{'full' if self.full else 'quick'}"

    def chunks(self) -> list[campaign.Chunk]:
        return [campaign.Chunk(f"{f}/n{n}/c{c}", check_chunk, (f, n, c, min(CHUNK, self.instances(n) - c * CHUNK),
                                                               self.seed))
                for f in self.families for n in self.sizes for c in range(-(-self.instances(n) // CHUNK))]


def check_chunk(family: str, n: int, chunk: int, count: int, seed: int) -> list[Record]:
    """All records of one chunk: D1 on ``count`` matrices, D2 on ``count // 2`` pairs."""
    A = sample(family, n, count, generator(seed, family, n, chunk))
    prov = {"generator": GENERATOR, "seed": seed,
            "family": family, "n": n, "chunk": chunk}

    d1 = check_factor(A, certify_all=True)      # Theorem D1, every instance certified exactly
    fc = d1["certificate"]
    out = [Record("dobrushin.factor", f"{family}/n{n}/c{chunk}/i{k}", NAMES[d1["verdict"][k]],
                  slack=float(fc.slack[k]), value=float(d1["value"][k]), bound=float(d1["bound"][k]),
                  provenance={**prov, "index": k},
                  extra={"exact_path": bool(fc.exact[k]), "through_first": bool(fc.through_first[k]),
                         "through_other": bool(fc.through_other[k]), "delta_A": float(d1["delta"][k]),
                         "pair": [int(v) for v in fc.pair[k]]})
           for k in range(count)]

    pairs = count // 2                          # Theorem D2 on pairs (A[2k], A[2k+1])
    if pairs:
        d2 = check_batch("dobrushin.product", A[:2 * pairs])
        out += [Record("dobrushin.product", f"{family}/n{n}/c{chunk}/p{k}", NAMES[d2["verdict"][k]],
                       slack=float(d2["bound"][k] - d2["value"][k]), value=float(d2["value"][k]),
                       bound=float(d2["bound"][k]), provenance={**prov, "pair": [2 * k, 2 * k + 1]})
                for k in range(pairs)]
    return out


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> campaign.CampaignResult:
    """Check every chunk of ``plan`` not yet in ``store``; a violated proved theorem stops loudly."""
    return campaign.run(store, plan.campaign, plan.chunks(), executor=executor, console=console,
                        description="D1/D2 on random families")
