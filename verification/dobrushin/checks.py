"""The Dobrushin campaign: Theorems D1 and D2 on random row-stochastic families
(:mod:`numerics.sources.random`).

For every instance: D1's verdict (exact), its slack by the closed form, and an independent check
that delta((I+A)/2) <= (1+delta(A))/2 by computing both sides directly; for pairs (P, Q) of the same
family: D2's verdict (exact) and delta(PQ) <= delta(P) delta(Q) checked directly. A violation
beyond the rigorous float error is stored as ``violated`` and stops the run loudly (through the
campaign runner). One chunk of instances per (family, n, chunk index), seeded on its own.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numerics.dobrushin import dobrushin, factor_check, float_error, product_equality
from numerics.sources.random import FAMILIES, GENERATOR, generator, sample
from numerics.stochastic import UNIT_ROUNDOFF, as_stochastic
from theory.verdicts import Verdict
from verification import campaign
from verification.store import Record

SIZES = (2, 3, 4, 5, 8, 16, 32, 64, 128)
CHUNK = 50
VERSION = "v2"  # bump when the sampling or the checks change: a new campaign, not a resume
#                 (v2: a strict slack is never stored as 0; it is exact below the float resolution)


@dataclass(frozen=True)
class Plan:
    families: tuple[str, ...] = FAMILIES
    sizes: tuple[int, ...] = SIZES
    seed: int = 0
    full: bool = False

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
    out: list[Record] = []

    # Theorem D1 -----------------------------------------------------------------------------
    fc = factor_check(A)
    Ahat = 0.5 * (np.eye(n) + A)
    value = dobrushin(Ahat)                     # delta((I+A)/2), computed directly
    dA = dobrushin(A)
    bound = (1 + dA) / 2
    # rigorous bound on the float error of each side (rounding + exact renormalisation of the rows;
    # forming Ahat rounds only the diagonal): a "violated" verdict is certified, never a guess
    err = 2 * float_error(as_stochastic(A, "A").row_dev, n) + 2 * UNIT_ROUNDOFF
    for k in range(count):
        direct = bound[k] - value[k]
        verdict = Verdict.TIGHT if fc.equality[k] else Verdict.HOLDS
        if direct < -err[k] or abs(direct - fc.slack[k]) > 2 * err[k]:
            verdict = Verdict.VIOLATED          # the bound, or its closed form, fails: a bug or a false claim
        out.append(Record("dobrushin.factor", f"{family}/n{n}/c{chunk}/i{k}", verdict,
                          slack=float(fc.slack[k]), value=float(value[k]), bound=float(bound[k]),
                          provenance={**prov, "index": k},
                          extra={"exact_path": bool(fc.exact[k]), "through_first": bool(fc.through_first[k]),
                                 "through_other": bool(fc.through_other[k]), "delta_A": float(dA[k]),
                                 "pair": [int(v) for v in fc.pair[k]]}))

    # Theorem D2 on pairs (A[2k], A[2k+1]) -------------------------------------------------------
    P, Q = A[0::2][: count // 2], A[1::2][: count // 2]
    eq = product_equality(P, Q)
    dP, dQ, dPQ = dobrushin(P), dobrushin(Q), dobrushin(P @ Q)
    # each row of the float product is off by <= gamma_n in l1 (stochastic factors), and each of the
    # three deltas carries float_error: together at most 4 float_error
    err2 = 4 * float_error(np.maximum(as_stochastic(P, "P").row_dev, as_stochastic(Q, "Q").row_dev), n)
    for k in range(len(P)):
        b = dP[k] * dQ[k]
        verdict = Verdict.TIGHT if eq[k] else Verdict.HOLDS
        if dPQ[k] > b + err2[k]:
            verdict = Verdict.VIOLATED
        out.append(Record("dobrushin.product", f"{family}/n{n}/c{chunk}/p{k}", verdict,
                          slack=float(b - dPQ[k]), value=float(dPQ[k]), bound=float(b),
                          provenance={**prov, "pair": [2 * k, 2 * k + 1]}))
    return out


def run_campaign(store, plan: Plan, console=None) -> campaign.CampaignResult:
    """Check every chunk of ``plan`` not yet in ``store``; a violated proved theorem stops loudly."""
    return campaign.run(store, plan.campaign, plan.chunks(), console=console,
                        description="D1/D2 on random families")
