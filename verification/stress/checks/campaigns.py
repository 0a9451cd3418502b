"""The identity of a stress campaign and of its chunks: the campaign's name (theorem, version, seed
and a digest of its cells, :func:`campaign_name`) and its parse, the chunk keys
(``<family>/n<n>[/L<L>|/d<d>]/c<k>``) and theirs, and the sampler a campaign's version names
(:data:`SAMPLERS`, :func:`sampler_text`).

>>> parse_campaign(campaign_name("dobrushin.factor", 0, ("dirichlet",), (16,), sampler="counter"))
('dobrushin.factor', 0)
>>> parse_chunk(chunk_key("dirichlet", 16, 2)), chunk_layers("dirichlet/n64/L12/c1")
(('dirichlet', 16, 2), 12)
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Optional

from theory.errors import InvalidInput
from verification.stress.checks.specs import SMALL

VERSION = "v1"   # bump when sampling, chunk sizes or checks change: a new campaign, not a resume
# The campaign version names the sampler: v1 draws each chunk with numpy's sequential generator
# (GENERATOR), v2 with the compiled counter-based one (numerics.sources.counter_random: Philox4x32-10,
# parallel, each instance regenerable alone), the default. Rollout stacks are drawn with v1.
SAMPLERS = {"numpy": VERSION, "counter": "v2"}
DEFAULT_SAMPLER = "counter"


def cells_digest(families: tuple[str, ...], sizes: tuple[int, ...], layers: tuple[int, ...] = (),
                 statement: str = "", dims: tuple[int, ...] = (), small: bool = False) -> str:
    """8 hex digits naming a plan's cells (families, sizes, layer counts and widths d, as sets, and
    the chunks' size where it is :attr:`TheoremSpec.small`) and, for a statement over theory.expr, the
    statement itself (another statement under the same id is another campaign, never merged into the
    old one's)."""
    cells = {"families": sorted(set(families)), "sizes": sorted(set(map(int, sizes))),
             "layers": sorted(set(map(int, layers)))}
    if dims:
        cells["dims"] = sorted(set(map(int, dims)))
    if small:
        cells["chunks"] = f"1/{SMALL}"
    if statement:
        cells["statement"] = statement
    key = json.dumps(cells, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:8]


def campaign_name(theorem: str, seed: int, families: tuple[str, ...], sizes: tuple[int, ...],
                  layers: tuple[int, ...] = (), sampler: str = "numpy", statement: str = "",
                  dims: tuple[int, ...] = (), small: bool = False) -> str:
    """``stress.<theorem>-<version>-seed<seed>-cells<digest>``: everything that defines a campaign
    but its size (a larger ``--instances`` extends the same campaign); the version names the sampler
    (:data:`SAMPLERS`)."""
    digest = cells_digest(families, sizes, layers, statement, dims, small)
    return f"stress.{theorem}-{SAMPLERS[sampler]}-seed{seed}-cells{digest}"


def chunk_key(family: str, n: int, k: int, layers: Optional[int] = None, d: Optional[int] = None) -> str:
    """``<family>/n<n>/c<k>``; a rollout chunk ``<family>/n<n>/L<L>/c<k>``; a chunk of a statement
    with a tokens matrix ``<family>/n<n>/d<d>/c<k>``."""
    if layers is not None:
        return f"{family}/n{n}/L{layers}/c{k}"
    return f"{family}/n{n}/c{k}" if d is None else f"{family}/n{n}/d{d}/c{k}"


_CAMPAIGN = re.compile(r"^stress\.(?P<th>.+)-(?P<v>v\d+)-seed(?P<seed>\d+)-cells[0-9a-f]{8}$")
_CHUNK = re.compile(r"^(?P<f>[^/]+)/n(?P<n>\d+)(/L(?P<L>\d+))?(/d(?P<d>\d+))?/c(?P<k>\d+)$")


def parse_campaign(campaign: str) -> tuple[str, int]:
    m = _CAMPAIGN.match(campaign)
    if not m or m["v"] not in SAMPLERS.values():
        versions = "/".join(sorted(SAMPLERS.values()))
        raise InvalidInput(f"campaign {campaign!r} is not a stress campaign of version {versions} "
                         f"(stress.<theorem>-<version>-seed<seed>-cells<digest>)")
    return m["th"], int(m["seed"])


def campaign_sampler(campaign: str) -> str:
    """The sampler a campaign's version names (:data:`SAMPLERS`)."""
    parse_campaign(campaign)
    v = _CAMPAIGN.match(campaign)["v"]
    return next(name for name, ver in SAMPLERS.items() if ver == v)


#: how each sampler draws a chunk, as a table's provenance line says it (a rollout stack: ROLLOUT_GENERATOR)
SAMPLER_TEXT = {"numpy": "numpy default_rng seeded by SeedSequence([seed, family, n, chunk])",
                "counter": "Philox4x32-10 counter-based sampler (Random123), key SeedSequence([seed, family, n]), "
                           "counter (block, index, chunk)"}


def sampler_text(campaign: str, rollout: bool = False) -> str:
    """How the instances of ``campaign`` were drawn, read from the sampler its version names (never
    assumed): the words of :data:`SAMPLER_TEXT`, or the rollout stacks' generator.

    >>> sampler_text("stress.dobrushin.factor-v2-seed0-cells5485235b")[:13]
    'Philox4x32-10'
    >>> sampler_text("stress.dobrushin.factor-v1-seed0-cells5485235b")
    'numpy default_rng seeded by SeedSequence([seed, family, n, chunk])'
    """
    if rollout:
        return "numpy default_rng seeded by SeedSequence([seed, family, n, chunk, layers])"
    return SAMPLER_TEXT[campaign_sampler(campaign)]


def parse_chunk(key: str) -> tuple[str, int, int]:
    m = _CHUNK.match(key)
    if not m or (m["L"] and m["d"]):
        raise InvalidInput(f"chunk {key!r} is not <family>/n<n>/c<index> (or <family>/n<n>/L<layers>/c<index>, "
                           "<family>/n<n>/d<d>/c<index>)")
    return m["f"], int(m["n"]), int(m["k"])


def chunk_dim(key: str) -> Optional[int]:
    """d of a chunk of a statement with a tokens matrix ``<family>/n<n>/d<d>/c<k>``, else None."""
    parse_chunk(key)
    m = _CHUNK.match(key)
    return int(m["d"]) if m["d"] else None


def chunk_layers(key: str) -> Optional[int]:
    """L of a rollout chunk ``<family>/n<n>/L<L>/c<k>``, None for a chunk of single matrices."""
    parse_chunk(key)
    m = _CHUNK.match(key)
    return int(m["L"]) if m and m["L"] else None
