"""The Dobrushin campaign: Theorems D1 and D2 on random row-stochastic families
(:mod:`numerics.sources.random`), one record per instance.

Every instance is checked by the one vectorised check of these theorems,
:func:`numerics.dobrushin.batch.check_batch` (both sides computed directly and compared
with the exact verdicts within a rigorous float error), on the chunk's matrices at once: D1 on
every matrix, with every instance certified exactly (``certify_all``: its closed-form slack, its
maximising pair, whether equality goes through token 0), and D2 on the pairs (A[2k], A[2k+1]).
A violation beyond the rigorous float error is stored as ``violated`` and stops the run loudly
(through the campaign runner). One chunk of instances per (family, n, chunk index), seeded on its own.

Beside it, when the plan has the causal family, the share of tight causal pairs against the share
the causal-D2 condition predicts (``dobrushin.product.causal.share``, :mod:`numerics.dobrushin.causal_share`):
per size n <= :data:`CAUSAL_MAX_N`, pi_n estimated on fresh draws, D2 decided exactly on as many
independent pairs, the predicted verdict compared with the exact one pair by pair, and the outcome of
the agreement of the two shares (TOST within :data:`CAUSAL_MARGIN`, normal quantiles: thousands of
draws). One chunk per n, in its own campaign (:meth:`Plan.causal_campaign`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from numerics.dobrushin.batch import NAMES, check_batch, check_factor
from numerics.dobrushin.causal_share import minimiser_count, predicted_share, predicted_tight
from numerics.sources.random import DISTRIBUTIONS, GENERATOR, check_family, generator, sample
from verification import campaign
from verification.plan import RunResult, recording
from verification.stats import agreement_normal
from verification.store import Record, outcome_record

SIZES = (2, 3, 4, 5, 8, 16, 32, 64, 128)
CHUNK = 50
FULL_SCALES = ("ten times the instances per (family, n): 2000 up to n = 16, 1000 up to 64, 500 at 128; five times "
               "the draws of the causal-share check")
CAUSAL_VERSION = "v1"
CAUSAL_MAX_N = 16               # the causal-share check's sizes (beyond, the predicted share is below 1e-3)
CAUSAL_DRAWS = 20_000           # per n: draws for pi_n, and as many independent pairs for the measured share
CAUSAL_MARGIN = 0.02            # the two shares agree when they differ by less than this (TOST)
CAUSAL_OFFSET = 3_000_000       # generator chunk indices of the prediction's draws (no other campaign's)
CAUSAL_PAIRS_OFFSET = 4_000_000  # and of the measured pairs
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
        plan = cls(families=args.families or DISTRIBUTIONS, sizes=args.sizes or SIZES, seed=args.seed,
                   full=args.full)
        plan.check()
        return plan

    def check(self) -> None:
        """Every chunk's parameters against what its kernels require, nothing computed: each family
        one the sampler draws (:func:`numerics.sources.random.check_family`), each size n >= 2 with a
        chunk within the memory budget (:func:`numerics.device.check_memory`), at least one instance
        per cell and one draw per causal-share size; InvalidInput naming the first that fails."""
        from numerics.device import check_memory, chunk_memory
        from theory.errors import InvalidInput

        for f in self.families:
            check_family(f, "--families")
        for n in self.sizes:
            if isinstance(n, bool) or not isinstance(n, int) or n < 2:
                raise InvalidInput(f"--sizes: n = {n!r}: the theorems need an integer n >= 2")
            if self.instances(n) < 1:
                raise InvalidInput(f"dobrushin plan: {self.instances(n)} instances at n = {n}")
            check_memory(f"--sizes {n}", chunk_memory(n, min(CHUNK, self.instances(n))))
        for chunk in self.causal_chunks():
            n, draws, _ = chunk.args
            if draws < 1:
                raise InvalidInput(f"dobrushin plan: the causal-share check at n = {n} has {draws} draws")

    def campaigns(self) -> tuple[str, ...]:
        return (self.campaign,) + ((self.causal_campaign,) if self.causal_sizes() else ())

    def command(self) -> str:
        """The command line that reproduces the plan: the main job's section for its plan, else the
        ``dobrushin`` subcommand with its cells.

        >>> Plan.for_verify(0, True).command()
        'attnbounds verify --only dobrushin --seed 0 --full'
        >>> Plan(families=("dirichlet", "causal"), sizes=(3,), seed=4).command()
        'attnbounds dobrushin --families dirichlet,causal --sizes 3 --seed 4'
        """
        if self == Plan.for_verify(self.seed, self.full):
            return f"attnbounds verify --only dobrushin --seed {self.seed}" + (" --full" if self.full else "")
        return (f"attnbounds dobrushin --families {','.join(self.families)} --sizes {','.join(map(str, self.sizes))} "
                f"--seed {self.seed}" + (" --full" if self.full else ""))

    def provenance(self) -> dict[str, Any]:
        """Seed, preset, cells, sampler and chunk size (:func:`verification.plan.provenance_line`).

        >>> Plan(families=("dirichlet",), sizes=(2, 3)).provenance()["sizes"]
        '2,3'
        """
        return {"seed": self.seed, "preset": "full" if self.full else "quick", "families": ",".join(self.families),
                "sizes": ",".join(map(str, self.sizes)), "sampler": GENERATOR, "chunk": CHUNK}

    def causal_sizes(self) -> tuple[int, ...]:
        """The sizes of the causal-share check: the plan's n <= :data:`CAUSAL_MAX_N`, when it has the
        causal family."""
        return tuple(n for n in self.sizes if n <= CAUSAL_MAX_N) if "causal" in self.families else ()

    @property
    def causal_campaign(self) -> str:
        return f"dobrushin.causal-share-{CAUSAL_VERSION}-seed{self.seed}-{'full' if self.full else 'quick'}"

    def causal_chunks(self) -> list[campaign.Chunk]:
        draws = CAUSAL_DRAWS * (5 if self.full else 1)
        return [campaign.Chunk(f"causal/n{n}", causal_share_chunk, (n, draws, self.seed)) for n in self.causal_sizes()]

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


def causal_share_chunk(n: int, draws: int, seed: int) -> list[Record]:
    """The causal-share check at size n: pi_n on ``draws`` fresh matrices (the prediction pi_n^2 with
    its interval), D2 decided exactly on ``draws`` independent pairs (the measured share), the verdict
    the condition predicts against the exact one on each pair, and the agreement of the two shares."""
    k1, m1 = minimiser_count("causal", n, draws, seed, CAUSAL_OFFSET)
    pred, lo, hi = predicted_share(k1, m1)
    tight = agree = m2 = 0
    batch = max(1, (2 ** 20) // (n * n))              # pairs per batch
    for b in range(-(-draws // batch)):
        size = min(batch, draws - b * batch)
        A = sample("causal", n, 2 * size, generator(seed, "causal", n, CAUSAL_PAIRS_OFFSET + b))
        verdict = check_batch("dobrushin.product", A)["verdict"]
        is_tight = verdict == NAMES.index("tight")
        tight += int(is_tight.sum())
        agree += int((is_tight == predicted_tight(A[0::2], A[1::2])).sum())
        m2 += size
    share = tight / m2
    # standard error of share - pi^2 (delta method for pi^2), with Agresti-Coull's (k + 2) / (m + 4) in the
    # variances, so that a share of 0 or 1 (n = 2, n = 16) never has a zero standard error
    s_ac, p_ac = (tight + 2) / (m2 + 4), (k1 + 2) / (m1 + 4)
    se = (s_ac * (1 - s_ac) / m2 + (2 * p_ac) ** 2 * p_ac * (1 - p_ac) / m1) ** 0.5
    a = agreement_normal(share - pred, se, CAUSAL_MARGIN)
    prov = {"generator": GENERATOR, "seed": seed, "family": "causal", "n": n,
            "prediction_chunks_from": CAUSAL_OFFSET, "pairs_chunks_from": CAUSAL_PAIRS_OFFSET}
    return [outcome_record(
        "dobrushin.product.causal.share", f"causal/n{n}", a["outcome"], share,
        (pred + a["interval"][0], pred + a["interval"][1]),
        f"measured share of tight pairs (D2 decided exactly on {m2} pairs) against pi_n^2 (pi_n on {m1} other draws); "
        f"TOST within {CAUSAL_MARGIN:g}, normal quantiles, level {a['alpha']:g}; interval: the measured share plus "
        "the 90% interval of the difference", value=share, bound=pred, slack=pred - share, provenance=prov,
        extra={"n": n, "pi_count": k1, "pi_draws": m1, "predicted": pred, "predicted_interval": [lo, hi],
               "pairs": m2, "tight": tight, "verdict_agrees": agree, "diff": a["diff"], "se": se,
               "margin": CAUSAL_MARGIN, "p_equivalent": a["p"], "p_different": a["p_outside"], "mde": a["mde"]})]


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """Check every chunk of ``plan`` not yet in ``store`` (and its causal-share check); a violated
    proved theorem stops loudly. What each campaign did (:class:`verification.plan.RunResult`)."""
    with recording("dobrushin") as result:
        if plan.causal_sizes():
            campaign.run(store, plan.causal_campaign, plan.causal_chunks(), executor=executor, console=console,
                         description="causal D2: measured share against the condition's prediction")
        campaign.run(store, plan.campaign, plan.chunks(), executor=executor, console=console,
                     description="D1/D2 on random families")
    return result
