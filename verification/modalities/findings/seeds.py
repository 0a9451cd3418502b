"""Across seeds and beside baselines: each model's D1 equality share as a mean over training seeds,
next to random matrices and the text encoder at the same token count n (one frozen
:class:`Summary` per model and token set).

The unit of a model's share is the *seed*: per seed, the share of its test inputs with D1 equality,
averaged over layers (one number per seed, at the last checkpoint and at initialisation); the mean
over k seeds has a t interval with k - 1 degrees of freedom (:func:`verification.stats.t_spread`),
at the run's simultaneous level 1 - alpha/m (Bonferroni over the m comparisons of the run, the level
of every decision: :mod:`verification.modalities.findings.comparisons`). Beside it, at the same n
(all tokens; content tokens):

- ``random``: the share of tight matrices of each random family (a Wilson :class:`Share` per
  family; independent draws; :mod:`verification.measure.baselines`) and the range of the family
  shares (the "random-matrix range");
- ``init``: the same architecture with its initial weights on the same inputs (paired per seed:
  trained - init, df = k - 1);
- ``text``: MiniLM with its inputs cut to n tokens (the unit is the input: per input the share of
  layers with equality; t interval with df = inputs - 1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from verification.findings import Share
from verification.modalities.findings.comparisons import Comparison, decide
from verification.modalities.findings.stages import VARIANTS, Stage
from verification.stats import ALPHA, Spread, t_spread


@dataclass(frozen=True)
class Summary:
    """One model and token set across seeds, with its baselines at the same n and (after
    :func:`verification.modalities.findings.comparisons.decide`) its comparisons at the run's
    simultaneous ``level`` over ``comparisons`` (m) comparisons."""

    model: str
    variant: str
    n: int
    seeds: Sequence[int]
    trained: Spread
    init: Spread
    change: Spread                                  # paired per seed: trained - init
    accuracy: Spread
    random: Mapping[str, Share]                     # family -> tight matrices of those drawn
    text: Optional[Spread] = None                   # MiniLM at n: per input, the share of layers with equality
    text_inputs: int = 0
    depth: Optional[Spread] = None                  # per seed: last layer's share - first layer's (trained)
    asis: Optional[Spread] = None                   # MiniLM as measured by the trained main job (its own n)
    init_accuracy: Optional[Spread] = None
    compared: Mapping[str, Comparison] = field(default_factory=dict)
    level: float = 1 - ALPHA
    comparisons: int = 1

    @property
    def random_range(self) -> Optional[tuple[float, float]]:
        s = [sh.value for sh in self.random.values() if sh.n]
        return (min(s), max(s)) if s else None

    @property
    def words(self) -> dict[str, str]:
        """Comparison -> its word (:attr:`Comparison.word`; the equivalence test has none of its own)."""
        return {k: c.word for k, c in self.compared.items() if k != "random-equivalence"}

    @property
    def mdes(self) -> dict[str, float]:
        return {k: c.mde for k, c in self.compared.items() if k != "random-equivalence"}


def per_seed(stages: Sequence[Stage]) -> dict:
    """``{model: {seed: (trained stage, init stage)}}`` (last checkpoint; epoch 0)."""
    out: dict = {}
    for s in stages:
        if s.epoch is None or s.seed is None:
            continue
        by = out.setdefault(s.model, {}).setdefault(s.seed, [None, None])
        if s.epoch == 0:
            by[1] = s
        if by[0] is None or s.epoch > by[0].epoch:
            by[0] = s
    return out


def text_shares(records: Any) -> dict:
    """MiniLM records at matched n -> ``{(variant, n): [per input: share of layers with equality]}``
    (head-averaged attention; the D1 records only)."""
    by: dict = {}
    for r in records:
        p = r["provenance"]
        if r["theorem"] != "dobrushin.factor" or p.get("head") is not None:
            continue
        key = (p["variant"], int(p["n"]), p["input"], p.get("text_sha"))
        by.setdefault(key, []).append(r["verdict"] == "tight")
    out: dict = {}
    for (v, n, _, _), tight in sorted(by.items()):
        out.setdefault((v, n), []).append(sum(tight) / len(tight))
    return out


def depth_change(s: Stage, variant: str) -> float:
    """The last layer's share minus the first layer's."""
    return s.share(variant, s.layers[-1]) - s.share(variant, s.layers[0])


def summarise(stages: Sequence[Stage], baselines: dict, texts: dict, asis: Optional[dict] = None) -> list[Summary]:
    """One :class:`Summary` per (model, token set), decided
    (:func:`verification.modalities.findings.comparisons.decide`). ``baselines``: ``{(family, n):
    (tight, matrices)}`` (:func:`verification.measure.baselines.pool_by_size`); ``texts``: MiniLM at
    matched n (:func:`text_shares`); ``asis``: ``{variant: per-input shares}`` of MiniLM as the
    trained main job measured it."""
    out = []
    for variant in VARIANTS:
        for model, by_seed in per_seed(stages).items():
            seeds = sorted(s for s, (t, i) in by_seed.items() if t is not None and i is not None)
            if not seeds:
                continue
            tr = [by_seed[s][0].mean_share(variant) for s in seeds]
            it = [by_seed[s][1].mean_share(variant) for s in seeds]
            if any(x is None for x in tr + it):
                continue
            n = by_seed[seeds[0]][0].sizes.get(variant)
            if n is None or any(by_seed[s][0].sizes.get(variant) != n for s in seeds):
                raise ValueError(f"{model}: the seeds' {variant} token counts differ; one n per model expected")
            rnd = {f: Share.wilson(*baselines[(f, nn)]) for f, nn in sorted(baselines) if nn == n}
            tx = texts.get((variant, n))
            out.append(Summary(model, variant, n, tuple(seeds), t_spread(tr), t_spread(it),
                               t_spread([a - b for a, b in zip(tr, it)]),
                               t_spread([by_seed[s][0].accuracy for s in seeds]), rnd,
                               t_spread(tx) if tx else None, len(tx or []),
                               t_spread([depth_change(by_seed[s][0], variant) for s in seeds]),
                               t_spread((asis or {})[variant]) if (asis or {}).get(variant) else None,
                               t_spread([by_seed[s][1].accuracy for s in seeds])))
    return decide(out)
