"""Random baselines at matched n: the share of D1 equality on random n x n matrices drawn at the
token counts a model's inputs keep (docs/theory.md §2), owned here for the trained text models
(:mod:`verification.trained`) and the vision and tabular models (:mod:`verification.modalities`).

A *sample* (n, c) is ``count`` matrices of one family of :data:`FAMILIES` (Dirichlet(1) rows;
softmax of Gaussian logits at T = 0.25, 1, 4: a fixed range, never fitted to a model), drawn by
:mod:`numerics.sources.random` from the generator ``generator(seed, family, n, offset + c)``, D1
decided exactly on each matrix: one record per matrix, one store chunk per (family, sample).

Each family's campaign keeps the layout it has always written (:class:`Layout`), so every stored
campaign stays readable and a rerun resumes it; the code is this one module:

==============  =======================================  =================================================
layout          :data:`TRAINED`                          :data:`MODALITIES`
==============  =======================================  =================================================
campaign        ``trained-baseline-v1-seed<s>-m<count>``  ``modalities-v1-baseline:s<s>:m<count>``
samples         one per (n, c): the c-th input with n     one per n (c = 0), shared by every model whose
                kept tokens of a token set has its own    inputs keep n tokens
                draws (:func:`baseline_slots`)
chunk key       ``<family>/n<n>/c<c>``                   ``<family>/n<n>``
generator       chunk index 1,000,000 + c                chunk index 2,000,000
D1 check        :func:`numerics.dobrushin.factor_check`  the stress sweep's batched check
                (extra: exact, through_first)            (:func:`numerics.dobrushin.batch.check_factor`;
                                                         extra: sent)
==============  =======================================  =================================================

Every record's instance is ``<chunk key>/i<k>``, its provenance the generator, seed, family, n
(and c, trained) and the index k; both layouts read the same way (:func:`read_baselines`:
``{(family, n, c): (tight, count)}``, c = 0 in the per-size layout; :func:`pool_by_size` sums
over c).

The rollout's null (:func:`chain_ratio_null`): the ratio delta(R_L) / prod_l delta(Ahat_l) of stacks of L
random matrices of one family at size n, the residual factors Ahat = (I + A)/2 multiplied as rollout
multiplies them; drawn from ``generator(seed, family, n, CHAIN_NULL_OFFSET + L)``, not stored (a few
hundred small products: the paper's findings draw it, seeded, in well under a second per size).

>>> TRAINED.campaign(0, 10), MODALITIES.campaign(3, 200)
('trained-baseline-v1-seed0-m10', 'modalities-v1-baseline:s3:m200')
>>> TRAINED.key("dirichlet", 5, 2), MODALITIES.key("dirichlet", 5, 0)
('dirichlet/n5/c2', 'dirichlet/n5')
>>> baseline_slots({"all": {("b", "2"): 5, ("a", "1"): 5, ("c", "3"): 7}})
{'all': {('a', '1'): (5, 0), ('b', '2'): (5, 1), ('c', '3'): (7, 0)}}
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from verification import campaign
from verification.store import Record

FAMILIES = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4")
CHAIN_NULL_OFFSET = 3_000_000      # the rollout null's generator chunk index at depth L: offset + L
CHAIN_NULL_DRAWS = 16              # random stacks per (family, n, L)


@dataclass(frozen=True)
class Layout:
    """How one family's campaign of random baselines is named and stored (see the module table).
    ``per_input``: a sample per (n, c), else one per n; ``sweep``: D1 by the stress sweep's batched
    check, else by :func:`numerics.dobrushin.factor_check`."""

    name: str            # the campaign name, with {seed} and {count}
    offset: int          # the generator chunk index of sample c is offset + c
    per_input: bool
    sweep: bool

    def campaign(self, seed: int, count: int) -> str:
        return self.name.format(seed=seed, count=count)

    def key(self, family: str, n: int, c: int) -> str:
        return f"{family}/n{n}/c{c}" if self.per_input else f"{family}/n{n}"


TRAINED = Layout("trained-baseline-v1-seed{seed}-m{count}", 1_000_000, per_input=True, sweep=False)
MODALITIES = Layout("modalities-v1-baseline:s{seed}:m{count}", 2_000_000, per_input=False, sweep=True)


def baseline_slots(sizes: dict) -> dict:
    """``{variant: {input key: n}}`` -> ``{variant: {input key: (n, c)}}``: the c-th input (in sorted
    key order) of its variant with ``n`` kept tokens gets the random sample (n, c), so inputs of the
    same size never share random matrices (the pooled share is then a share of independent draws)."""
    out: dict = {}
    for v, by in sizes.items():
        seen: dict = {}
        out[v] = {}
        for key in sorted(by):
            n = int(by[key])
            out[v][key] = (n, seen.get(n, 0))
            seen[n] = seen.get(n, 0) + 1
    return out


def slot_samples(slots: dict) -> list[tuple[int, int]]:
    """The samples (n, c) that ``slots`` (:func:`baseline_slots`) asks for, sorted."""
    return sorted({nc for by in slots.values() for nc in by.values()})


def size_samples(sizes: Iterable[int]) -> list[tuple[int, int]]:
    """The samples (n, 0) of the token counts ``sizes`` (the per-size layout), sorted."""
    return [(int(n), 0) for n in sorted(set(sizes))]


def baseline_records(layout: Layout, family: str, n: int, c: int, count: int, seed: int) -> list[Record]:
    """One chunk: ``count`` random n x n matrices of ``family`` (sample (n, c) of ``layout``), D1
    decided exactly on each (``layout.sweep``: by the stress sweep's check); one record per matrix."""
    from numerics.sources.random import GENERATOR, generator, sample

    A = sample(family, n, count, generator(seed, family, n, layout.offset + c))
    key = layout.key(family, n, c)
    if layout.sweep:
        from numerics.dobrushin.batch import NAMES, check_factor

        out = check_factor(A)
        prov = dict(generator=GENERATOR, chunk=layout.offset, seed=seed, family=family, n=n, check="stress sweep")
        return [Record("dobrushin.factor", f"{key}/i{k}", NAMES[out["verdict"][k]],
                       slack=float(out["slack"][k]), value=float(out["value"][k]), bound=float(out["bound"][k]),
                       provenance=dict(prov, index=k), extra=dict(sent=bool(out["sent"][k])))
                for k in range(count)]
    from numerics.dobrushin import factor_check
    from verification.measure.attention import verdict_of

    fc = factor_check(A)
    prov = dict(generator=GENERATOR, chunk_offset=layout.offset, seed=seed, family=family, n=n, c=c)
    return [Record("dobrushin.factor", f"{key}/i{k}", verdict_of(fc.equality[k]),
                   slack=float(fc.slack[k]), value=(1 + float(fc.delta[k])) / 2 - float(fc.slack[k]),
                   bound=(1 + float(fc.delta[k])) / 2, provenance=dict(prov, index=k),
                   extra=dict(exact=bool(fc.exact[k]), through_first=bool(fc.through_first[k])))
            for k in range(count)]


def baseline_chunks(layout: Layout, samples: Iterable[tuple[int, int]], count: int, seed: int) -> list[campaign.Chunk]:
    """One chunk per (family, sample) of ``samples`` with n >= 2 (D1 needs two tokens); nothing run."""
    samples = list(samples)
    return [campaign.Chunk(layout.key(f, n, c), baseline_records, (layout, f, n, c, count, seed))
            for f in FAMILIES for n, c in samples if n >= 2]


def run_baselines(store: Any, layout: Layout, samples: Iterable[tuple[int, int]], count: int, seed: int,
                  console: Any = None, description: str = "random baselines at matched n",
                  progress: bool = True) -> str:
    """Draw and check every sample of ``samples`` the store lacks (resumed); the campaign's name."""
    name = layout.campaign(seed, count)
    campaign.run(store, name, baseline_chunks(layout, samples, count, seed), console=console,
                 description=description, progress=progress)
    return name


def read_baselines(records: Iterable[dict]) -> dict:
    """Stored baseline records of either layout -> ``{(family, n, c): (tight, count)}`` (c = 0 where
    the layout has one sample per n)."""
    out: dict = defaultdict(lambda: [0, 0])
    for r in records:
        p = r["provenance"]
        cell = out[(p["family"], int(p["n"]), int(p.get("c", 0)))]
        cell[0] += r["verdict"] == "tight"
        cell[1] += 1
    return {k: tuple(v) for k, v in out.items()}


def pool_by_size(base: dict) -> dict:
    """``{(family, n, c): (tight, count)}`` -> ``{(family, n): (tight, count)}``, summed over c.

    >>> pool_by_size({("dirichlet", 4, 0): (3, 10), ("dirichlet", 4, 1): (1, 10), ("softmax-T1", 4, 0): (0, 10)})
    {('dirichlet', 4): (4, 20), ('softmax-T1', 4): (0, 10)}
    """
    out: dict = {}
    for (family, n, _), (k, m) in base.items():
        k0, m0 = out.get((family, n), (0, 0))
        out[(family, n)] = (k0 + k, m0 + m)
    return out


def baseline_share(base: dict, slots: dict, keys: Any, family: str) -> tuple[int, int]:
    """(tight, count) of ``family``'s random matrices drawn for the inputs ``keys`` (their slots
    (n, c) of one token set); a slot the store lacks is a KeyError naming it (never a silent gap)."""
    k = m = 0
    for key in keys:
        n, c = slots[key]
        if (family, n, c) not in base:
            raise KeyError(f"no stored random baseline {family}/n{n}/c{c} (input {key[0]})")
        k, m = k + base[(family, n, c)][0], m + base[(family, n, c)][1]
    return k, m


def chain_ratio_null(family: str, n: int, L: int, seed: int, count: int = CHAIN_NULL_DRAWS) -> "np.ndarray":
    """delta(R_L) / prod_l delta(Ahat_l) of ``count`` stacks of ``L`` random n x n matrices of ``family``
    (:func:`numerics.sources.random.sample`), Ahat_l = (I + A_l)/2 and R_L = Ahat_L ... Ahat_1 (later layers
    on the left, as rollout multiplies): the ratio rollout's product bound leaves on matrices without
    trained structure; (count,) float64, each in (0, 1] by Theorem D2.

    >>> r = chain_ratio_null("dirichlet", 5, 3, 0, count=4)
    >>> r.shape, bool(((r > 0) & (r <= 1 + 1e-12)).all()), bool((r == chain_ratio_null("dirichlet", 5, 3, 0, 4)).all())
    ((4,), True, True)
    """
    import numpy as np

    from numerics.dobrushin import dobrushin
    from numerics.sources.random import generator, sample
    from theory.errors import InvalidInput

    if n < 2 or L < 1 or count < 1:
        raise InvalidInput(f"chain ratio null: n >= 2, L >= 1 and count >= 1, got n={n}, L={L}, count={count}")
    A = sample(family, n, count * L, generator(seed, family, n, CHAIN_NULL_OFFSET + L)).reshape(count, L, n, n)
    Ahat = (np.eye(n) + A) / 2
    R = Ahat[:, 0]
    for l in range(1, L):
        R = Ahat[:, l] @ R
    R /= R.sum(axis=-1, keepdims=True)        # a product of stochastic matrices, its rows' rounding removed
    return dobrushin(R) / np.prod(dobrushin(Ahat), axis=1)
