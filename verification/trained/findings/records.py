"""The stored records of one trained-model campaign, grouped as every finding reads them: D1 on the
head mean per token set and layer, per head, the rollout chain per layer; the inputs, their sources
and kept token counts; and the share pooled over inputs with its Wilson interval on the effective
number of verdicts (the input being the cluster).

>>> rs = [{"provenance": {"input": a, "text_sha": "s"}, "verdict": v} for a, v in (("x", "tight"), ("x", "holds"), ("y", "tight"))]
>>> input_clusters(rs, tight)
([1, 1], [2, 1])
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

from verification.findings import Share
from verification.measure.baselines import baseline_share
from verification.stats import clustered_wilson, wilson

VARIANTS = ("all", "content", "nofirst")     # the token sets, in table order
BOOTSTRAP_SEED = 0      # the paired cluster bootstrap's generator (numpy default_rng(BOOTSTRAP_SEED))
CLUSTER = "wilson-clustered"


def tight(r: dict) -> bool:
    return r["verdict"] == "tight"


def slug(name: str) -> str:
    """File-name form of a model id (ids carry no path: numerics.sources.models.load_model)."""
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


def collect(store: Any, campaign: str, inputs: Optional[set]) -> dict:
    """Keep the rows of the inputs ``{(input id, text hash)}`` (None: all) and group them:
    layer rows [variant][layer] -> list, head rows [variant][(l, h)] -> list."""
    return collect_records(store.records(campaign=campaign), inputs)


def collect_records(records: Any, inputs: Optional[set]) -> dict:
    """:func:`collect` on records already read from the store."""
    layer, head, roll = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list)), \
        defaultdict(lambda: defaultdict(list))
    seen, source = set(), {}
    for r in records:
        p = r["provenance"]
        if inputs is not None and (p["input"], p["text_sha"]) not in inputs:
            continue
        seen.add((p["input"], p.get("text_sha")))
        source[(p["input"], p.get("text_sha"))] = Path(p.get("source") or "").name   # a file's name, never its path
        v, l = p["variant"], p["layer"]
        if r["theorem"] == "dobrushin.product":
            roll[v][l].append(r)
        elif p.get("head") is None:
            layer[v][l].append(r)
        else:
            head[v][(l, p["head"])].append(r)
    return dict(layer=layer, head=head, roll=roll, inputs=seen, source=source)


def sizes_of(data: dict) -> dict:
    """``{variant: {(input, text hash): kept tokens n}}``, from the layer-0 head-mean records."""
    return {v: {(r["provenance"]["input"], r["provenance"]["text_sha"]): int(r["provenance"]["n"])
                for r in cells.get(0, [])} for v, cells in data["layer"].items()}


def source_order(data: dict) -> list[str]:
    """The sources of the inputs: the default corpus's in its order, then any other by name."""
    from numerics.sources.corpus import SOURCES

    found = set(data["source"].values())
    return [s for s in SOURCES if s in found] + sorted(found - set(SOURCES))


def count(k: int, n: int) -> Share:
    """k of n counted, no interval (a count the tables print as ``k/n``)."""
    return Share(int(k), int(n), float("nan"), float("nan"), "count")


def forced(records: list) -> bool:
    """Whether the causal corollary forces every verdict of ``records`` tight: all of them D1 verdicts
    (``dobrushin.factor``) on causal attention, and all of them tight (a causal verdict that is not
    would be a violated theorem, shown as measured, never hidden as forced)."""
    return bool(records) and all(r.get("theorem") == "dobrushin.factor" and r["provenance"].get("causal")
                                 and tight(r) for r in records)


def tight_share(records: list) -> Share:
    """The tight verdicts of ``records`` with their 95% Wilson interval; n of n with no interval
    where the causal corollary forces them (:func:`forced`)."""
    if forced(records):
        return Share.forced_share(len(records))
    return Share.wilson(sum(tight(r) for r in records), len(records))


def input_clusters(records: Any, hit: Any) -> tuple[list[int], list[int]]:
    """Per input (provenance input id and text hash, sorted): (hits, verdicts) of ``records``, a
    record counting as a hit when ``hit(record)``."""
    by: dict = {}
    for r in records:
        p = r["provenance"]
        key = (str(p["input"]), str(p.get("text_sha")))
        k, n = by.get(key, (0, 0))
        by[key] = (k + bool(hit(r)), n + 1)
    keys = sorted(by)
    return [by[k][0] for k in keys], [by[k][1] for k in keys]


def pooled_interval(k: Any, n: Any) -> tuple[float, float]:
    """The 95% interval of a share pooled over clusters (``k[c]`` of ``n[c]`` hits in cluster c, the
    input being the cluster): the Wilson interval on the effective number of verdicts
    (:func:`verification.stats.clustered_wilson`), the one interval method of every share, for
    every count, 0 and all included; never narrower than the Wilson interval of the verdicts.

    >>> (lo, hi), (wlo, whi) = pooled_interval([2, 0, 2, 0], [2, 2, 2, 2]), wilson(4, 8)
    >>> lo < wlo and hi > whi                             # all alike within an input: 4 inputs' worth
    True
    """
    return clustered_wilson(k, n)


def cluster_share(records: Any, hit: Any) -> Optional[Share]:
    """The hits of ``records`` pooled over inputs with their 95% interval over inputs
    (:func:`pooled_interval`); n of n with no interval where the hits are the tight verdicts and the
    causal corollary forces them (:func:`forced`); None without records."""
    k, n = input_clusters(records, hit)
    if not n:
        return None
    if hit is tight and forced(list(records)):
        return Share.forced_share(sum(n))
    lo, hi = pooled_interval(k, n)
    return Share(int(sum(k)), int(sum(n)), lo, hi, CLUSTER)


def random_share(base: dict, slots: dict, family: str) -> Share:
    """The tight share of ``family``'s random matrices drawn for the inputs of ``slots`` ({input key:
    (n, c)}), pooled with each input's matrices one cluster, as the model's verdicts are (no
    interval, nan, without inputs)."""
    baseline_share(base, slots, set(slots), family)       # a sample the store lacks: a KeyError naming it
    ks, ns = [], []
    for key in sorted(slots):
        n, c = slots[key]
        k, m = base[(family, n, c)]
        ks.append(k)
        ns.append(m)
    if not ns:
        return Share(0, 0, float("nan"), float("nan"), CLUSTER)
    lo, hi = pooled_interval(ks, ns)
    return Share(int(sum(ks)), int(sum(ns)), lo, hi, CLUSTER)
