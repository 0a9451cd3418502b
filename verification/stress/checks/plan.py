"""What a stress campaign is: a theorem, cells (family x n), a number of instances, a seed.

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

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from typing import Any, Optional

import numpy as np

from numerics.sources.random import GENERATOR, check_family, family_id, generator, sample
from theory.errors import InvalidInput

VERSION = "v1"   # bump when sampling, chunk sizes or checks change: a new campaign, not a resume
# The campaign version names the sampler: v1 draws each chunk with numpy's sequential generator
# (GENERATOR), v2 with the compiled counter-based one (numerics.sources.counter_random: Philox4x32-10,
# parallel, each instance regenerable alone), the default. Rollout stacks are drawn with v1.
SAMPLERS = {"numpy": VERSION, "counter": "v2"}
DEFAULT_SAMPLER = "counter"
MAX_CHUNK = 10_000
CHUNK_ELEMENTS = 2 ** 22       # matrix entries per chunk (32 MiB of float64; the filter holds two copies)
MAX_CHUNKS = 100_000           # chunks in one plan: about 10^9 instances at n <= 20, hours of a laptop's time
COPIES = 8                     # float64 copies of a chunk's matrices alive at once (input, (I+A)/2, filter temporaries)
MAX_BUDGET = 1_000_000         # --search: evaluations per size


@dataclass(frozen=True)
class TheoremSpec:
    """How a theorem is stress-tested: which instances (``kind``), default cells."""

    kind: str                      # "factor": one matrix A per instance; "product": a pair (P, Q);
    families: tuple[str, ...]      # "rollout": a stack of L layers A_1..A_L
    sizes: tuple[int, ...]
    allowed: Optional[tuple[str, ...]] = None   # families the theorem's hypotheses admit (None: any)
    layers: tuple[int, ...] = ()   # "rollout": default layer counts L
    stored_as: Optional[str] = None   # the registered theorem its records are verdicts of (None: itself)
    matrices: tuple[str, ...] = ()    # "expr": the matrices of a statement over theory.expr, per instance
    statement: str = ""               # "expr": the statement as sympy prints it (named in the campaign)


THEOREMS: dict[str, TheoremSpec] = {
    # D1's default cells are the continuous families of the Dobrushin campaign at every size up to 64:
    # the main job's sweep measures the share of tight random matrices per family and n from them
    "dobrushin.factor": TheoremSpec("factor", ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4"),
                                    (2, 3, 4, 5, 8, 16, 32, 64)),
    "dobrushin.factor.causal": TheoremSpec("factor", ("causal",), (4, 16), allowed=("causal",)),
    "dobrushin.product": TheoremSpec("product", ("dirichlet", "softmax-T1"), (4, 16)),
    # causal pairs: D2's equality against the causal condition (the guided search's scorer,
    # verification.stress.checks.search.causal_score; a sweep checks D2 on causal pairs)
    "dobrushin.product.causal": TheoremSpec("product", ("causal",), (3, 4), allowed=("causal",)),
    # the rollout chain: Theorem D2 at every step R_l = Ahat_l R_{l-1}, Ahat_l = (I + A_l)/2
    "dobrushin.rollout": TheoremSpec("rollout", ("dirichlet", "softmax-T1"), (4, 16), layers=(2, 4, 12),
                                     stored_as="dobrushin.product"),
}
MAX_LAYERS = 64
# a statement over theory.expr (a user's theorem, --theory FILE.py): its default cells, by assumption
EXPR_FAMILIES = {(): ("dirichlet", "softmax-T1", "sparse"), ("causal",): ("causal",),
                 ("positive",): ("dirichlet", "softmax-T1")}
EXPR_SIZES = (2, 3, 4, 8)
POSITIVE_FAMILIES = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4")   # no exact zeros


def spec_of(theorem: str) -> TheoremSpec:
    """How ``theorem`` is stress-tested: its entry of :data:`THEOREMS`, or, for a registered
    theorem whose statement is over :mod:`theory.expr` (a user's, ``--theory FILE.py``), a spec
    derived from it: kind "expr", one matrix per name of the statement per instance, default cells
    :data:`EXPR_FAMILIES` x :data:`EXPR_SIZES`, families restricted by its ``assume``. InvalidInput
    for any other id, with the ids that have one."""
    if theorem in THEOREMS:
        return THEOREMS[theorem]
    from theory import registry

    th = registry.REGISTRY.get(theorem)
    if th is None:
        registry.load_all()
        th = registry.REGISTRY.get(theorem)
    if th is None or not th.is_expr:
        why = "no theorem of that id is registered" if th is None else "its statement is not over theory.expr"
        raise InvalidInput(f"no stress sampler for {theorem!r} ({why}); stress takes {', '.join(THEOREMS)} or a "
                           "theorem over theory.expr (A, B, C, I, delta) registered by --theory FILE.py")
    assume = tuple(sorted(th.assume))
    families = EXPR_FAMILIES.get(assume, ("causal",) if "causal" in assume else EXPR_FAMILIES[()])
    allowed = ("causal",) if "causal" in assume else POSITIVE_FAMILIES if "positive" in assume else None
    text = f"{th.statement}" + (f" [{', '.join(assume)}]" if assume else "")
    if th.equality_condition is not None:           # another condition: another campaign (its tallies differ)
        import inspect

        try:
            code = inspect.getsource(th.equality_condition)
        except (OSError, TypeError):
            code = repr(th.equality_condition)
        text += f" [equality condition {hashlib.sha256(code.encode()).hexdigest()[:8]}]"
    return TheoremSpec("expr", families, EXPR_SIZES, allowed=allowed, matrices=th.matrices, statement=text)


def per_instance(spec: TheoremSpec) -> int:
    """Matrices drawn per instance: 2 for a pair (D2), one per matrix of a statement, else 1."""
    return 2 if spec.kind == "product" else max(1, len(spec.matrices))
ROLLOUT_GENERATOR = "numpy.default_rng(SeedSequence([seed, family_id, n, chunk, layers]))"


def chunk_size(n: int) -> int:
    """Instances per chunk at size n: 10^4 up to n = 20, then 2^22 / n^2 (1024 at n = 64)."""
    return int(max(16, min(MAX_CHUNK, CHUNK_ELEMENTS // (n * n))))


def cell_chunk_size(n: int, layers: Optional[int] = None) -> int:
    """Instances per chunk of a cell: :func:`chunk_size` for one matrix per instance; for stacks of
    L layers 2^22 / (L n^2) (85 at n = 64, L = 12: 32 MiB per copy of the stack), at most 10^4."""
    if layers is None:
        return chunk_size(n)
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
        for f in self.families:
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
                count = cell_chunk_size(n, L) * per * (L or 1)
                check_memory(f"--sizes {n}" + (f" with --layers {L}" if L else ""), COPIES * count * n * n * 8)
        chunks = sum(c for *_, c in self.cells())
        if chunks > MAX_CHUNKS:
            most = sum(MAX_CHUNKS // len(self.cells()) * cell_chunk_size(n, L) for _, n, L, _ in self.cells())
            raise InvalidInput(f"--instances {self.instances:,}: {chunks:,} chunks, over the limit of {MAX_CHUNKS:,} "
                             f"chunks per plan (at most about {most:,} instances for these cells); run a smaller "
                             "campaign and extend it later with a larger --instances")

    @property
    def spec(self) -> TheoremSpec:
        return spec_of(self.theorem)

    @property
    def campaign(self) -> str:
        return campaign_name(self.theorem, self.seed, self.families, self.sizes, self.layers, self.sampler,
                             self.spec.statement)

    @property
    def stored_as(self) -> str:
        """The registered theorem whose verdicts the records and summaries are."""
        return self.spec.stored_as or self.theorem

    def layer_counts(self) -> tuple:
        return self.layers if self.spec.kind == "rollout" else (None,)

    def per_cell(self) -> int:
        return -(-self.instances // (len(self.families) * len(self.sizes) * len(self.layer_counts())))

    def cells(self) -> list[tuple[str, int, Optional[int], int]]:
        """(family, n, L or None, chunks) per cell: ceil(per-cell instances / chunk size) chunks each."""
        return [(f, n, L, -(-self.per_cell() // cell_chunk_size(n, L)))
                for f in self.families for n in self.sizes for L in self.layer_counts()]

    def chunk_keys(self) -> list[str]:
        return [chunk_key(f, n, k, L) for f, n, L, c in self.cells() for k in range(c)]

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
        default = (self.families, self.sizes, self.layers, self.sampler) == (
            spec.families, spec.sizes, spec.layers, "numpy" if spec.kind == "rollout" else DEFAULT_SAMPLER)
        if default:
            return f"attnbounds stress {self.theorem} --instances {self.instances} --seed {self.seed}"
        return (f"attnbounds stress {self.theorem} --families {','.join(self.families)} "
                f"--sizes {','.join(map(str, self.sizes))}" + (f" --layers {','.join(map(str, self.layers))}"
                                                               if self.layers else "")
                + f" --instances {self.instances} --seed {self.seed} --sampler {self.sampler}")

    def total(self) -> int:
        """Instances the plan's chunks hold (per-cell counts rounded up to whole chunks)."""
        return sum(c * cell_chunk_size(n, L) for _, n, L, c in self.cells())

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
        if self.spec.kind == "rollout":
            dims.append((len(self.layers), "layer count", "layer counts"))
        cells = self.cells()
        held: dict[int, list[str]] = {}            # chunk size -> the cells' n (or (n, L)) that have it
        for n in self.sizes:
            for L in self.layer_counts():
                held.setdefault(cell_chunk_size(n, L), []).append(f"{n}" if L is None else f"({n}, {L})")
        at = "n" if self.spec.kind != "rollout" else "(n, L)"
        where = "; ".join(f"{size:,} at {at} = {', '.join(cells_at)}" for size, cells_at in held.items())
        return (f"--instances {self.instances:,}: rounded up to whole chunks: {total:,} instances in "
                f"{len(self.chunk_keys()):,} chunks ({' x '.join(f'{k} {one if k == 1 else many}' for k, one, many in dims)}"
                f" = {len(cells):,} cell{'' if len(cells) == 1 else 's'}, {self.per_cell():,} asked of each; "
                f"a chunk holds {where})")

    def describe(self) -> dict:
        return asdict(self)


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


def cells_digest(families: tuple[str, ...], sizes: tuple[int, ...], layers: tuple[int, ...] = (),
                 statement: str = "") -> str:
    """8 hex digits naming a plan's cells (families, sizes and layer counts, as sets) and, for a
    statement over theory.expr, the statement itself (another statement under the same id is another
    campaign, never merged into the old one's)."""
    cells = {"families": sorted(set(families)), "sizes": sorted(set(map(int, sizes))),
             "layers": sorted(set(map(int, layers)))}
    if statement:
        cells["statement"] = statement
    key = json.dumps(cells, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:8]


def campaign_name(theorem: str, seed: int, families: tuple[str, ...], sizes: tuple[int, ...],
                  layers: tuple[int, ...] = (), sampler: str = "numpy", statement: str = "") -> str:
    """``stress.<theorem>-<version>-seed<seed>-cells<digest>``: everything that defines a campaign
    but its size (a larger ``--instances`` extends the same campaign); the version names the sampler
    (:data:`SAMPLERS`)."""
    digest = cells_digest(families, sizes, layers, statement)
    return f"stress.{theorem}-{SAMPLERS[sampler]}-seed{seed}-cells{digest}"


def chunk_key(family: str, n: int, k: int, layers: Optional[int] = None) -> str:
    return f"{family}/n{n}/c{k}" if layers is None else f"{family}/n{n}/L{layers}/c{k}"


_CAMPAIGN = re.compile(r"^stress\.(?P<th>.+)-(?P<v>v\d+)-seed(?P<seed>\d+)-cells[0-9a-f]{8}$")
_CHUNK = re.compile(r"^(?P<f>[^/]+)/n(?P<n>\d+)(/L(?P<L>\d+))?/c(?P<k>\d+)$")


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
    if not m:
        raise InvalidInput(f"chunk {key!r} is not <family>/n<n>/c<index> (or <family>/n<n>/L<layers>/c<index>)")
    return m["f"], int(m["n"]), int(m["k"])


def chunk_layers(key: str) -> Optional[int]:
    """L of a rollout chunk ``<family>/n<n>/L<L>/c<k>``, None for a chunk of single matrices."""
    parse_chunk(key)
    m = _CHUNK.match(key)
    return int(m["L"]) if m and m["L"] else None


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
    stack (L, n, n), or, for a theorem over theory.expr (a user's), ``{"A": (n, n), ...}``, one matrix
    per name of its statement. ``theory``: the theory file that registers a user's theorem (the run's
    ``--theory FILE.py``, :func:`theory.plugins.load_file`), loaded here when this process has not; the
    statement it registers must be the one the campaign ran (the statement names the campaign)."""
    theorem, seed = parse_campaign(campaign)
    if theory is not None:
        from theory.plugins import load_file

        load_file(theory)
    family, n, k = parse_chunk(chunk)
    L = chunk_layers(chunk)
    try:
        spec = spec_of(theorem)
    except InvalidInput as exc:
        if theory is not None:
            raise
        raise InvalidInput(f"regenerate: {exc}; for a theorem of a theory file pass theory='FILE.py' (the --theory "
                           "file of the run)") from None
    if (L is not None) != (spec.kind == "rollout"):
        raise InvalidInput(f"chunk {chunk!r} does not belong to campaign {campaign!r} "
                         "(rollout chunks, and only they, carry /L<layers>)")
    if not 0 <= index < cell_chunk_size(n, L):
        raise InvalidInput(f"index {index} outside chunk {chunk!r} (0..{cell_chunk_size(n, L) - 1})")
    if L is not None:
        return draw_stacks(family, n, L, k, seed)[index]
    sampler = campaign_sampler(campaign)
    per = per_instance(spec)
    if sampler == "counter":                                   # the one instance, computed alone
        from numerics.sources.counter_random import sample_counter

        X = sample_counter(family, n, per, seed, k, start=per * index)
    else:
        X = draw(theorem, family, n, k, seed, sampler)[per * index:per * index + per]
    if spec.kind == "expr":
        return {name: X[j] for j, name in enumerate(spec.matrices)}
    return X if per > 1 else X[0]


def provenance(theorem: str, family: str, n: int, k: int, seed: int, layers: Optional[int] = None,
               sampler: str = "numpy") -> dict:
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
            "chunk_size": chunk_size(n), "campaign_version": SAMPLERS[sampler]}
