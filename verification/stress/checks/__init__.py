"""What a stress campaign runs, and the family's plan (:mod:`verification.family`).

Modules: specs (how each theorem is stress-tested), campaigns (the names of campaigns and chunks),
plan (one sweep: theorem, cells, chunks, regeneration of any instance), sweep (one chunk
of single matrices or pairs: float filter, exact certification, summary; the one vectorised check
of Theorems D1 and D2, :func:`~numerics.dobrushin.batch.check_batch`), rollout (one chunk of stacks
of L layers: Theorem D2 at every rollout step), summaries (per-chunk summary, kept instances,
merge), search (hypothesis ``target()`` and a local optimiser on the simplex rows), hunt and
strategies (the guided search over a statement over theory.expr), draws and expr (the sweep of a
statement over theory.expr).

Here: :class:`Plan`, the sweeps and the guided search one run covers. The main job's
(:meth:`Plan.for_verify`) is Theorem D1's sweep (:data:`THEOREM`, :data:`INSTANCES`), its guided
search (:data:`SIZES`, :data:`BUDGET`) and the rollout sweep (:data:`ROLLOUT`,
:data:`ROLLOUT_INSTANCES`); the paper (:func:`verification.stress.paper.paper_part`) reads exactly
their chunks. ``attnbounds stress THEOREM ...`` is one sweep or one search (:meth:`Plan.from_args`).

>>> plan = Plan.for_verify(0, False)
>>> [s.instances for s in plan.sweeps], sorted(plan.search.chunk_keys())
([320000, 20000], ['n3/b500', 'n4/b500', 'n5/b500'])
>>> plan.sweeps[1].command(), plan.command()
('attnbounds stress dobrushin.rollout --instances 20000 --seed 0', 'attnbounds verify --only stress --seed 0')
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

from theory.errors import InvalidInput
from verification.plan import RunResult, recording
from verification.stress.checks.campaigns import sampler_text
from verification.stress.checks.plan import StressPlan
from verification.stress.checks.specs import THEOREMS, spec_of

FULL_SCALES = ("five times the sweeps' instances (D1: 1,600,000 matrices; rollout: 100,000 stacks) and eight "
               "times the guided search's evaluations per size (4000)")
THEOREM = "dobrushin.factor"                    # the main job's sweep and guided search
INSTANCES = {False: 320_000, True: 1_600_000}   # quick / --full: 10,000 / 50,000 per family and n (32 cells)
BUDGET = {False: 500, True: 4000}               # the main job's search: evaluations per size
SIZES = (3, 4, 5)                               # the search's sizes
ROLLOUT = "dobrushin.rollout"                   # stacks of layers, the theorem's default cells
ROLLOUT_INSTANCES = {False: 20_000, True: 100_000}
SEARCH_BUDGET = 4000                            # `attnbounds stress --search`: evaluations per size, by default


def chunks(plan: Any) -> list:
    """The chunks of a :class:`~verification.stress.checks.plan.StressPlan`: stacks of layers for
    the rollout target (:func:`verification.stress.checks.rollout.chunks`), single matrices or
    pairs for every other theorem (:func:`verification.stress.checks.sweep.chunks`)."""
    if plan.spec.kind == "rollout":
        from verification.stress.checks.rollout import chunks as rollout_chunks

        return rollout_chunks(plan)
    if plan.spec.kind == "expr":
        from verification.stress.checks.expr import chunks as expr_chunks

        return expr_chunks(plan)
    from verification.stress.checks.sweep import chunks as sweep_chunks

    return sweep_chunks(plan)


def section_plan(theorem: str, seed: int, full: bool) -> StressPlan:
    """The main job's sweep of ``theorem`` (:data:`THEOREM` or :data:`ROLLOUT`, the theorem's
    default cells): a user's run with other cells is another campaign; a larger run of the same
    cells adds chunks the paper does not read."""
    spec = spec_of(theorem)
    return StressPlan(theorem, spec.families, spec.sizes, instance_count(theorem, full), seed=seed)


def instance_count(theorem: str, full: bool) -> int:
    return ROLLOUT_INSTANCES[full] if theorem == ROLLOUT else INSTANCES[full]


@dataclass(frozen=True)
class Search:
    """A guided search: one chunk per size at ``budget`` evaluations
    (:func:`verification.stress.checks.search.run_search`)."""

    theorem: str
    sizes: tuple[int, ...]
    budget: int
    seed: int = 0

    @property
    def campaign(self) -> str:
        from verification.stress.checks.search import search_campaign

        return search_campaign(self.theorem, self.seed)

    def chunk_keys(self) -> set[str]:
        return {f"n{n}/b{self.budget}" for n in self.sizes}

    def command(self) -> str:
        return (f"attnbounds stress {self.theorem} --search --budget {self.budget} "
                f"--sizes {','.join(map(str, self.sizes))} --seed {self.seed}")


def main_search(seed: int, full: bool) -> Search:
    """The main job's guided search."""
    return Search(THEOREM, SIZES, BUDGET[full], seed)


@dataclass(frozen=True)
class Plan:
    """The sweeps (:class:`~verification.stress.checks.plan.StressPlan`) and the guided search
    (:class:`Search`) of one run, and the (``seed``, ``full``) of the main job's plan it stands
    beside: the paper reads the main job's sweep of a theorem the plan has none of, and the main
    job's search when it has none (:mod:`verification.stress.paper`)."""

    sweeps: tuple[StressPlan, ...] = ()
    search: Optional[Search] = None
    seed: int = 0
    full: bool = False

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        return cls((section_plan(THEOREM, seed, full), section_plan(ROLLOUT, seed, full)), main_search(seed, full),
                   seed=seed, full=full)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds stress THEOREM [options]``: one sweep, or with ``--search`` one search;
        checked before any work (options that do not apply, memory and size limits; whether the
        ``--device`` is here is the command's check, :func:`check_device`, so that ``paper --from``
        reads a sweep run on a GPU from any machine)."""
        from verification.stress.checks.plan import check_search

        spec = spec_of(args.theorem)
        if args.search and spec.kind == "rollout":
            raise InvalidInput(f"--search: not available for {args.theorem} (stacks of layers); it supports "
                               f"{', '.join(t for t, s in THEOREMS.items() if s.kind != 'rollout')}")
        if getattr(args, "dims", None) and args.search:
            raise InvalidInput("--dims: applies to a sweep; the guided search draws d from 1, 2, 3")
        if args.budget is not None and not args.search:
            raise InvalidInput(f"--budget {args.budget}: applies to --search only (a sweep's size is --instances)")
        if args.search:
            search = Search(args.theorem, args.sizes or SIZES, SEARCH_BUDGET if args.budget is None else args.budget,
                            args.seed)
            check_search(search.sizes, search.budget)
            return cls(search=search, seed=args.seed)
        families = args.family or spec.families
        if args.family and spec.kind == "expr":          # plain names of both kinds: their pairs
            from verification.stress.checks.draws import families as cell_families

            families = cell_families(spec.law, args.family)
        return cls((StressPlan(args.theorem, families, args.sizes or spec.sizes, args.instances,
                               seed=args.seed, device=args.device, layers=tuple(args.layers or ()),
                               sampler=args.sampler, dims=tuple(getattr(args, "dims", None) or ())),), seed=args.seed)

    def campaigns(self) -> tuple[str, ...]:
        return tuple(s.campaign for s in self.sweeps) + ((self.search.campaign,) if self.search else ())

    def check(self) -> None:
        """Every sweep's cells and budget (:meth:`~verification.stress.checks.plan.StressPlan.check`)
        and the search's sizes and budget (:func:`~verification.stress.checks.plan.check_search`, on
        a theorem it can search), nothing drawn: InvalidInput naming the first that fails."""
        from verification.stress.checks.plan import check_search

        for s in self.sweeps:
            s.check()
        if self.search is not None:
            if spec_of(self.search.theorem).kind == "rollout":
                raise InvalidInput(f"--search: not available for {self.search.theorem} (stacks of layers)")
            check_search(self.search.sizes, self.search.budget)

    def sweep(self, theorem: str) -> Optional[StressPlan]:
        """The plan's sweep of ``theorem`` (None: it has none)."""
        return next((s for s in self.sweeps if s.theorem == theorem), None)

    def shown_sweep(self, theorem: str) -> StressPlan:
        """The sweep of ``theorem`` the paper's stress section shows for this plan: its own, else the
        main job's at the plan's seed and preset (:func:`section_plan`; a user's sweep of Theorem D1,
        ``paper --from``, is shown beside the main job's rollout sweep)."""
        return self.sweep(theorem) or section_plan(theorem, self.seed, self.full)

    def shown_search(self) -> Search:
        """The guided search the paper's stress section shows for this plan: its own, else the main
        job's (:func:`main_search`)."""
        return self.search or main_search(self.seed, self.full)

    def shown(self) -> "Plan":
        """The plan of what the paper's stress section shows for this plan: the sweeps of Theorem D1
        (:data:`THEOREM`) and of the rollout chain (:data:`ROLLOUT`) and the guided search
        (:meth:`shown_sweep`, :meth:`shown_search`)."""
        return Plan((self.shown_sweep(THEOREM), self.shown_sweep(ROLLOUT)), self.shown_search(), self.seed, self.full)

    def command(self) -> str:
        """The command line that reproduces the plan: the main job's stress section for its plan,
        else each sweep's and the search's ``attnbounds stress`` line (joined by ``&&``).

        >>> Plan.for_verify(3, True).command()
        'attnbounds verify --only stress --seed 3 --full'
        >>> Plan(search=main_search(0, False)).command()
        'attnbounds stress dobrushin.factor --search --budget 500 --sizes 3,4,5 --seed 0'
        """
        if self == Plan.for_verify(self.seed, self.full):
            return f"attnbounds verify --only stress --seed {self.seed}" + (" --full" if self.full else "")
        return " && ".join([s.command() for s in self.sweeps] + ([self.search.command()] if self.search else []))

    def provenance(self) -> dict[str, Any]:
        """Seed, preset (``custom`` for a plan that is not the main job's), each sweep's cells
        (``<theorem>``: instances checked, and those ``--instances`` asked where whole chunks hold more;
        families, sizes, layer counts) and how its instances are drawn
        (``<theorem> sampler``: :func:`~verification.stress.checks.campaigns.sampler_text`), the search.

        >>> Plan.for_verify(0, False).provenance()["dobrushin.rollout sampler"][:13]
        'numpy default'
        """
        main = self == Plan.for_verify(self.seed, self.full)
        out: dict[str, Any] = {"seed": self.seed, "preset": ("full" if self.full else "quick") if main else "custom"}
        for s in self.sweeps:
            checked = (f"{s.instances} instances" if s.total() == s.instances else
                       f"{s.total()} instances checked ({s.instances} asked, rounded up to whole chunks)")
            out[s.theorem] = (f"{checked} over {','.join(s.families)} x n = {','.join(map(str, s.sizes))}"
                              + (f" x L = {','.join(map(str, s.layers))}" if s.layers else ""))
            out[f"{s.theorem} sampler"] = sampler_text(s.campaign, s.spec.kind == "rollout")
            if s.spec.kind == "expr":
                from theory.plugins import source

                out[f"{s.theorem} statement"] = s.spec.statement
                out[f"{s.theorem} from"] = source(s.theorem)
                out[f"{s.theorem} decided by"] = ("numerics.expr: float64 sides with a rigorous error bound, exact "
                                                  "or certified arithmetic past it and for every equality")
        if self.search is not None:
            out["search"] = (f"{self.search.theorem}, {self.search.budget} evaluations per size, "
                             f"n = {','.join(map(str, self.search.sizes))}")
        return out


def check_device(device: str) -> None:
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InvalidInput("--device cuda: no CUDA device is visible here (torch.cuda.is_available() is False)")


def run_sweep(store: Any, plan: StressPlan, executor: Any, console: Any, todo: Optional[list] = None) -> dict:
    """Run the sweep's missing chunks (``todo``, when the caller has already asked the store which
    are stored) through ``executor``; return what the run measured."""
    from verification import campaign
    from verification.stress.report import Progress

    t0 = time.perf_counter()
    progress = Progress(plan.stored_as)
    every = chunks(plan)
    if todo == []:              # everything stored: nothing to run, and no second question to the store
        campaign.discard_strays(store, plan.campaign, [c.key for c in every], console)   # but nobody's content
        return {"computed": 0, "skipped": len(every), "instances": 0, "seconds": 0.0, "rate": 0.0}
    res = campaign.run(store, plan.campaign, every if todo is None else todo, executor=executor, console=console,
                       description=f"stress {plan.theorem}", status=progress)
    skipped = res.skipped if todo is None else len(every) - len(todo)
    seconds = time.perf_counter() - t0
    return {"computed": res.computed, "skipped": skipped, "instances": progress.tally.n,
            "seconds": seconds, "rate": progress.tally.n / seconds if seconds > 0 else 0.0}


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """Every sweep of ``plan`` (resumed), then its search (one chunk per size); what each campaign
    did (:class:`verification.plan.RunResult`; what a sweep measured, instances per second:
    :func:`run_sweep`)."""
    from contextlib import nullcontext

    from verification.executors import SerialExecutor
    from verification.stress.checks.search import run_search

    # an executor made here is shut down here; the caller's, by the caller
    with recording("stress") as result, SerialExecutor() if executor is None else nullcontext(executor) as ex:
        for s in plan.sweeps:
            run_sweep(store, s, ex, console)
        search = plan.search
        if search is not None:
            run_search(store, search.theorem, sizes=search.sizes, budget=search.budget, seed=search.seed,
                       console=console, executor=ex)
    return result
