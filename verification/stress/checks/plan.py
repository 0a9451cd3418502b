"""What a stress campaign is: a theorem, cells (family x n), a number of instances, a seed
(:class:`StressPlan`), its chunks' sizes, and the drawing of any of its instances. How each theorem
is stress-tested is :mod:`verification.stress.checks.specs`; the names of campaigns and chunks,
:mod:`verification.stress.checks.campaigns`.

Chunks have a fixed size per n (:func:`chunk_size`), so a larger ``--instances`` only adds chunks
(the campaign is extended, never recomputed), and a chunk is named ``<family>/n<n>/c<k>``. Every
instance can be regenerated from (campaign, chunk, index) alone (:func:`regenerate`): the campaign
name carries the theorem, the version, the seed and a digest of the cells (families, sizes, layer
counts: everything that defines the campaign but its size), so a run with other cells is another
campaign, never merged into this one; the chunk key the family, n and the chunk's index; the
chunk's generator is :func:`numerics.sources.random.generator`. A report reads exactly the chunks
of a plan (:meth:`StressPlan.chunk_keys`), never the union of every run stored under the name.

A plan is refused before any work when one chunk would exceed the memory budget
(:func:`numerics.device.check_memory`) or when it has more than :data:`MAX_CHUNKS` chunks (a count
too large to finish is refused, never materialised).

The rollout target ``dobrushin.rollout`` draws stacks of L layers (``--layers``, default 2, 4, 12):
its chunks are ``<family>/n<n>/L<L>/c<k>``, its generator also takes L (:func:`rollout_generator`),
and its records are Theorem D2's (``dobrushin.product``), one verdict per rollout step.

>>> plan = StressPlan("dobrushin.factor", ("dirichlet",), (16,), instances=25_000)
>>> plan.campaign, chunk_size(16), plan.chunk_keys()
('stress.dobrushin.factor-v2-seed0-cellsa19b5fab', 10000, ['dirichlet/n16/c0', 'dirichlet/n16/c1', 'dirichlet/n16/c2'])
>>> StressPlan("dobrushin.factor", ("dirichlet",), (16,), instances=1, sampler="numpy").campaign
'stress.dobrushin.factor-v1-seed0-cellsa19b5fab'
>>> parse_campaign(plan.campaign), parse_chunk("dirichlet/n16/c2")
(('dobrushin.factor', 0), ('dirichlet', 16, 2))
>>> roll = StressPlan("dobrushin.rollout", ("dirichlet",), (64,), instances=200, layers=(12,))
>>> roll.stored_as, cell_chunk_size(64, 12), roll.chunk_keys(), chunk_layers("dirichlet/n64/L12/c1")
('dobrushin.product', 85, ['dirichlet/n64/L12/c0', 'dirichlet/n64/L12/c1', 'dirichlet/n64/L12/c2'], 12)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from numerics.sources.random import GENERATOR, check_family, family_id, generator, sample
from theory.errors import InvalidInput
from verification.stress.checks.campaigns import (DEFAULT_SAMPLER, SAMPLERS, VERSION, campaign_name,
                                                  campaign_sampler, chunk_dim, chunk_key, chunk_layers,
                                                  parse_campaign, parse_chunk)
from verification.stress.checks.specs import (SMALL, THEOREMS, TheoremSpec, per_instance, spec_of,
                                              tokens_axis)

MAX_CHUNK = 10_000
CHUNK_ELEMENTS = 2 ** 22       # matrix entries per chunk (32 MiB of float64; the filter holds two copies)
MAX_CHUNKS = 100_000           # chunks in one plan: about 10^9 instances at n <= 20, hours of a laptop's time
COPIES = 8                     # float64 copies of a chunk's matrices alive at once (input, (I+A)/2, filter temporaries)
MAX_BUDGET = 1_000_000         # --search: evaluations per size
MAX_LAYERS = 64
MAX_DIM = 1024                 # --dims: the largest d
ROLLOUT_GENERATOR = "numpy.default_rng(SeedSequence([seed, family_id, n, chunk, layers]))"


def chunk_size(n: int, small: bool = False) -> int:
    """Instances per chunk at size n: 10^4 up to n = 20, then 2^22 / n^2 (1024 at n = 64); ``small``
    (a statement beyond the delta-only vocabulary, :attr:`TheoremSpec.small`): a tenth of that (at
    least 16)."""
    size = int(max(16, min(MAX_CHUNK, CHUNK_ELEMENTS // (n * n))))
    return max(16, size // SMALL) if small else size


def cell_chunk_size(n: int, layers: Optional[int] = None, small: bool = False) -> int:
    """Instances per chunk of a cell: :func:`chunk_size` for one matrix per instance; for stacks of
    L layers 2^22 / (L n^2) (85 at n = 64, L = 12: 32 MiB per copy of the stack), at most 10^4."""
    if layers is None:
        return chunk_size(n, small)
    return int(max(1, min(MAX_CHUNK, CHUNK_ELEMENTS // (layers * n * n))))


@dataclass(frozen=True)
class StressPlan:
    theorem: str
    families: tuple[str, ...]
    sizes: tuple[int, ...]
    instances: int
    seed: int = 0
    device: str = "cpu"        # where the float filter runs: cpu (compiled kernel), cuda, torch:cpu
    layers: tuple[int, ...] = ()   # dobrushin.rollout: layer counts L (empty: the theorem's default)
    sampler: Optional[str] = None  # "counter" (default) or "numpy" (v1 campaigns); rollout: numpy only
    dims: tuple[int, ...] = ()     # a statement with a tokens matrix: widths d (empty: the default)

    def __post_init__(self) -> None:
        spec = spec_of(self.theorem)
        if self.sampler is not None and self.sampler not in SAMPLERS:
            raise InvalidInput(f"--sampler {self.sampler!r}: one of {', '.join(SAMPLERS)}")
        if spec.kind == "rollout" and self.sampler == "counter":
            raise InvalidInput(f"--sampler counter: {self.theorem} draws its stacks with numpy's generator only")
        if self.sampler is None:
            object.__setattr__(self, "sampler", "numpy" if spec.kind == "rollout" else DEFAULT_SAMPLER)
        if spec.kind != "rollout" and self.layers:
            raise InvalidInput(f"--layers: applies to dobrushin.rollout only, not to {self.theorem}")
        if spec.kind == "rollout":
            object.__setattr__(self, "layers", tuple(self.layers) or spec.layers)
        self.check()

    def check(self) -> None:
        """Every chunk's parameters against what its kernels require, nothing drawn: the layer
        counts, each family one the sampler draws and the theorem's hypotheses admit, sizes n >= 2,
        at least one instance, and the memory and chunk-count budget (:meth:`check_budget`);
        InvalidInput naming the first that fails."""
        spec = self.spec
        if spec.kind == "rollout":
            for L in self.layers:
                if not 2 <= L <= MAX_LAYERS:
                    raise InvalidInput(f"--layers: L = {L} outside 2..{MAX_LAYERS} (a rollout step needs two layers)")
        if self.dims and not tokens_axis(spec):
            raise InvalidInput(f"--dims: applies to a statement with a tokens matrix (n x d), not to {self.theorem}")
        if tokens_axis(spec):
            object.__setattr__(self, "dims", tuple(self.dims) or spec.dims)
            for d in self.dims:
                if not 1 <= d <= MAX_DIM:
                    raise InvalidInput(f"--dims: d = {d} outside 1..{MAX_DIM}")
        for f in self.families:
            if spec.kind == "expr":
                from verification.stress.checks.draws import check_cell

                check_cell(spec.law, f, "--families")
                continue
            check_family(f, "--family")
            if spec.allowed and f not in spec.allowed:
                raise InvalidInput(f"--family {f!r}: {self.theorem} needs one of {', '.join(spec.allowed)}")
        for n in self.sizes:
            if n < 2:
                raise InvalidInput(f"--sizes: n = {n} is below 2 (the theorems need two tokens)")
        if self.instances < 1:
            raise InvalidInput(f"--instances: must be at least 1, got {self.instances}")
        self.check_budget()

    def check_budget(self) -> None:
        """Refuse, before any work, a plan whose chunks would exceed the memory budget or whose
        chunk count exceeds :data:`MAX_CHUNKS` (computed from the cells, nothing materialised)."""
        from numerics.device import check_memory

        per = per_instance(self.spec)
        for n in self.sizes:
            for L in self.layer_counts():
                count = self.chunk_of(n, L) * per * (L if self.axis == "L" else 1)
                side = max(n, L) if self.axis == "d" else n
                check_memory(f"--sizes {n}" + (f" with --layers {L}" if self.axis == "L" else
                                               f" with --dims {L}" if self.axis == "d" else ""),
                             COPIES * count * n * side * 8)
        chunks = sum(c for *_, c in self.cells())
        if chunks > MAX_CHUNKS:
            most = sum(MAX_CHUNKS // len(self.cells()) * self.chunk_of(n, L) for _, n, L, _ in self.cells())
            raise InvalidInput(f"--instances {self.instances:,}: {chunks:,} chunks, over the limit of {MAX_CHUNKS:,} "
                             f"chunks per plan (at most about {most:,} instances for these cells); run a smaller "
                             "campaign and extend it later with a larger --instances")

    @property
    def spec(self) -> TheoremSpec:
        return spec_of(self.theorem)

    @property
    def campaign(self) -> str:
        spec = self.spec
        return campaign_name(self.theorem, self.seed, self.families, self.sizes, self.layers, self.sampler,
                             spec.statement, self.dims, spec.small)

    @property
    def stored_as(self) -> str:
        """The registered theorem whose verdicts the records and summaries are."""
        return self.spec.stored_as or self.theorem

    @property
    def axis(self) -> str:
        """The cells' third axis: "L" (rollout stacks: layer counts), "d" (a statement with a tokens
        matrix: its width), "" (none)."""
        spec = self.spec
        return "L" if spec.kind == "rollout" else "d" if tokens_axis(spec) else ""

    def layer_counts(self) -> tuple:
        """The values of the cells' third axis (:attr:`axis`): layer counts, widths d, or (None,)."""
        return self.layers if self.axis == "L" else self.dims if self.axis == "d" else (None,)

    def chunk_of(self, n: int, x: Optional[int]) -> int:
        """Instances per chunk of the cell (n, x): :func:`cell_chunk_size` (x: L for rollout stacks)."""
        return cell_chunk_size(n, x if self.axis == "L" else None, self.spec.small)

    def key(self, family: str, n: int, k: int, x: Optional[int]) -> str:
        """Chunk ``k`` of the cell (family, n, x): :func:`chunk_key`."""
        return chunk_key(family, n, k, x if self.axis == "L" else None, x if self.axis == "d" else None)

    def per_cell(self) -> int:
        return -(-self.instances // (len(self.families) * len(self.sizes) * len(self.layer_counts())))

    def cells(self) -> list[tuple[str, int, Optional[int], int]]:
        """(family, n, L or d or None (:attr:`axis`), chunks) per cell: ceil(per-cell instances /
        chunk size) chunks each."""
        return [(f, n, L, -(-self.per_cell() // self.chunk_of(n, L)))
                for f in self.families for n in self.sizes for L in self.layer_counts()]

    def chunk_keys(self) -> list[str]:
        return [self.key(f, n, k, L) for f, n, L, c in self.cells() for k in range(c)]

    def command(self) -> str:
        """The ``attnbounds stress`` command line that reproduces this sweep (a larger
        ``--instances`` extends the same campaign): short for the theorem's default cells and
        sampler, every option spelled out otherwise.

        >>> StressPlan("dobrushin.factor", ("dirichlet",), (5,), 20000).command()
        'attnbounds stress dobrushin.factor --families dirichlet --sizes 5 --instances 20000 --seed 0 --sampler counter'
        >>> spec = THEOREMS["dobrushin.rollout"]
        >>> StressPlan("dobrushin.rollout", spec.families, spec.sizes, 20000, seed=1).command()
        'attnbounds stress dobrushin.rollout --instances 20000 --seed 1'
        """
        spec = self.spec
        return self._command(spec) + theory_option(self.theorem)

    def _command(self, spec: TheoremSpec) -> str:
        default = (self.families, self.sizes, self.layers, self.sampler, self.dims) == (
            spec.families, spec.sizes, spec.layers, "numpy" if spec.kind == "rollout" else DEFAULT_SAMPLER, spec.dims)
        if default:
            return f"attnbounds stress {self.theorem} --instances {self.instances} --seed {self.seed}"
        return (f"attnbounds stress {self.theorem} --families {','.join(self.families)} "
                f"--sizes {','.join(map(str, self.sizes))}" + (f" --layers {','.join(map(str, self.layers))}"
                                                               if self.layers else "")
                + (f" --dims {','.join(map(str, self.dims))}" if self.dims else "")
                + f" --instances {self.instances} --seed {self.seed} --sampler {self.sampler}")

    def total(self) -> int:
        """Instances the plan's chunks hold (per-cell counts rounded up to whole chunks)."""
        return sum(c * self.chunk_of(n, L) for _, n, L, c in self.cells())

    def rounding(self) -> Optional[str]:
        """What ``--instances`` became, when whole chunks hold more than it asked (None: exactly it):
        the per-cell share is rounded up to whole chunks of :func:`cell_chunk_size` in every cell.

        >>> print(StressPlan("dobrushin.factor", ("dirichlet", "softmax-T1"), (4, 64), instances=1).rounding())
        --instances 1: rounded up to whole chunks: 22,048 instances in 4 chunks (2 families x 2 sizes = 4 cells, 1 asked of each; a chunk holds 10,000 at n = 4; 1,024 at n = 64)
        >>> StressPlan("dobrushin.factor", ("dirichlet",), (4,), instances=20_000).rounding() is None
        True
        """
        total = self.total()
        if total == self.instances:
            return None
        dims = [(len(self.families), "family", "families"), (len(self.sizes), "size", "sizes")]
        if self.axis == "L":
            dims.append((len(self.layers), "layer count", "layer counts"))
        if self.axis == "d":
            dims.append((len(self.dims), "width d", "widths d"))
        cells = self.cells()
        held: dict[int, list[str]] = {}            # chunk size -> the cells' n (or (n, L)) that have it
        for n in self.sizes:
            for L in (self.layer_counts() if self.axis == "L" else (None,)):
                held.setdefault(self.chunk_of(n, L), []).append(f"{n}" if L is None else f"({n}, {L})")
        at = "n" if self.axis != "L" else "(n, L)"
        where = "; ".join(f"{size:,} at {at} = {', '.join(cells_at)}" for size, cells_at in held.items())
        return (f"--instances {self.instances:,}: rounded up to whole chunks: {total:,} instances in "
                f"{len(self.chunk_keys()):,} chunks ({' x '.join(f'{k} {one if k == 1 else many}' for k, one, many in dims)}"
                f" = {len(cells):,} cell{'' if len(cells) == 1 else 's'}, {self.per_cell():,} asked of each; "
                f"a chunk holds {where})")


def theory_option(theorem: str) -> str:
    """`` --theory FILE`` for a theorem registered by a theory file (its commands need it), else ''."""
    if theorem in THEOREMS:
        return ""
    from theory.plugins import source

    where = source(theorem)
    import shlex

    return f" --theory {shlex.quote(where)}" if where not in ("built-in",) and not where.startswith("entry point") else ""


def check_search(sizes: tuple[int, ...], budget: int) -> None:
    """Refuse, before any work, a guided search too large to finish (``--budget`` over
    :data:`MAX_BUDGET`) or whose batches of starts would exceed the memory budget."""
    from numerics.device import check_memory

    if budget > MAX_BUDGET:
        raise InvalidInput(f"--budget {budget:,}: over the limit of {MAX_BUDGET:,} evaluations per size")
    for n in sizes:
        if n < 2:
            raise InvalidInput(f"--sizes: n = {n} is below 2 (the theorems need two tokens)")
        check_memory(f"--sizes {n}", COPIES * 32 * n * n * 8)      # 16 starts, pairs for D2


def rollout_generator(seed: int, family: str, n: int, layers: int, k: int) -> np.random.Generator:
    """The generator of one rollout chunk: :data:`ROLLOUT_GENERATOR`."""
    return np.random.default_rng(np.random.SeedSequence([seed, family_id(family), n, k, layers]))


def draw_stacks(family: str, n: int, layers: int, k: int, seed: int) -> np.ndarray:
    """All stacks of one rollout chunk, (count, L, n, n): layer l of stack i is matrix i L + l."""
    count = cell_chunk_size(n, layers)
    return sample(family, n, count * layers, rollout_generator(seed, family, n, layers, k)).reshape(count, layers, n, n)


def draw(theorem: str, family: str, n: int, k: int, seed: int, sampler: str = "numpy") -> np.ndarray:
    """All matrices of one chunk, (count, n, n) for a factor theorem, (2 count, n, n) for a
    product theorem (pair i is matrices 2i, 2i + 1), from ``sampler`` (:data:`SAMPLERS`)."""
    return draw_matrices(family, n, k, seed, sampler, per_instance(spec_of(theorem)))


def draw_matrices(family: str, n: int, k: int, seed: int, sampler: str, per: int) -> np.ndarray:
    """The (per chunk_size(n), n, n) matrices of chunk ``k`` of a cell, ``per`` for each instance
    (instance i is matrices per i .. per i + per - 1); what a worker calls (no registry needed)."""
    if sampler == "counter":
        from numerics.sources.counter_random import sample_counter

        return sample_counter(family, n, per * chunk_size(n), seed, k)
    return sample(family, n, per * chunk_size(n), generator(seed, family, n, k))


def regenerate(campaign: str, chunk: str, index: int, theory: Optional[str] = None) -> Any:
    """Instance ``index`` of ``chunk`` of ``campaign``: A (n, n), the pair stacked (2, n, n), a rollout
    stack (L, n, n), or, for a theorem over theory.expr (a user's), ``{"A": (n, n), "L": (n, n),
    "X": (n, d), "alpha": Fraction, ...}``, every symbol of its statement as drawn
    (:mod:`verification.stress.checks.draws`). ``theory``: the theory file that registers a user's theorem (the run's
    ``--theory FILE.py``, :func:`theory.plugins.load_file`), loaded here when this process has not; the
    statement it registers must be the one the campaign ran (the statement names the campaign)."""
    theorem, seed = parse_campaign(campaign)
    if theory is not None:
        from theory.plugins import load_file

        load_file(theory)
    family, n, k = parse_chunk(chunk)
    L, d = chunk_layers(chunk), chunk_dim(chunk)
    try:
        spec = spec_of(theorem)
    except InvalidInput as exc:
        if theory is not None:
            raise
        raise InvalidInput(f"regenerate: {exc}; for a theorem of a theory file pass theory='FILE.py' (the --theory "
                           "file of the run)") from None
    if (L is not None) != (spec.kind == "rollout") or (d is not None) != tokens_axis(spec):
        raise InvalidInput(f"chunk {chunk!r} does not belong to campaign {campaign!r} "
                         "(rollout chunks, and only they, carry /L<layers>; chunks of a statement with a tokens "
                         "matrix, and only they, /d<d>)")
    size = cell_chunk_size(n, L, spec.small)
    if not 0 <= index < size:
        raise InvalidInput(f"index {index} outside chunk {chunk!r} (0..{size - 1})")
    if L is not None:
        return draw_stacks(family, n, L, k, seed)[index]
    sampler = campaign_sampler(campaign)
    if spec.kind == "expr":
        from verification.stress.checks.draws import check_cell, draw_values

        check_cell(spec.law, family, f"chunk {chunk!r}")
        values = draw_values(spec.law, family, n, d, k, seed, sampler, size, start=index, count=1)
        return {name: v[0] for name, v in values.items()}
    per = per_instance(spec)
    if sampler == "counter":                                   # the one instance, computed alone
        from numerics.sources.counter_random import sample_counter

        X = sample_counter(family, n, per, seed, k, start=per * index)
    else:
        X = draw(theorem, family, n, k, seed, sampler)[per * index:per * index + per]
    return X if per > 1 else X[0]


def provenance(theorem: str, family: str, n: int, k: int, seed: int, layers: Optional[int] = None,
               sampler: str = "numpy", size: Optional[int] = None) -> dict:
    if layers is not None:
        return {"generator": ROLLOUT_GENERATOR, "seed": seed, "family": family, "n": n, "layers": layers,
                "chunk": k, "chunk_size": cell_chunk_size(n, layers), "campaign_version": VERSION,
                "target": theorem, "residual": 0.5}
    if sampler == "counter":
        from numerics.sources.counter_random import COUNTER_GENERATOR

        gen = COUNTER_GENERATOR
    else:
        gen = GENERATOR
    return {"generator": gen, "seed": seed, "family": family, "n": n, "chunk": k,
            "chunk_size": size or chunk_size(n), "campaign_version": SAMPLERS[sampler]}
