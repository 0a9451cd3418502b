"""``attnbounds stress THEOREM_ID``: a sweep of N random instances (or, with ``--search``, a
guided search for tight cases and counterexamples), serially, on a local Dask cluster
(``--workers K``) or on an existing one (``--scheduler tcp://HOST:PORT``). Re-running resumes; a
larger ``--instances`` extends the campaign. And ``verify_section(ctx)``, the main job's stress
section (what it runs: :mod:`verification.stress.checks.section`).

Light at import: the plans, checks, executors and the store load only when a command runs."""
from __future__ import annotations

import argparse
import time
from typing import Any, Optional

from theory.errors import InvalidInput


def verify_section(ctx: Any) -> None:
    """The ``stress`` section of the main job: the D1 sweep (serial), the guided search and the
    rollout-chain sweep, with their tables; what ``attnbounds paper`` reads for its stress section."""
    from verification.executors import SerialExecutor
    from verification.stress.checks import section
    from verification.stress.checks.search import run_search
    from verification.stress.report import report

    full = ctx.full
    factor = section.section_plan(section.THEOREM, ctx.seed, full)
    rollout = section.section_plan(section.ROLLOUT, ctx.seed, full)
    ctx.console.rule(f"[bold]Stress: {factor.theorem} on {factor.total():,} random matrices, and a guided search")
    with SerialExecutor() as executor:
        sweep(ctx.store, factor, executor, ctx.console)
        report(ctx.store, factor.campaign, factor.stored_as, ctx.tables, ctx.console, target=factor.theorem,
               chunks=factor.chunk_keys(), command=section.sweep_command(factor.theorem, ctx.seed, full))
        run_search(ctx.store, section.THEOREM, sizes=section.SIZES, budget=section.BUDGET[full], seed=ctx.seed,
                   console=ctx.console, executor=executor)
        sweep(ctx.store, rollout, executor, ctx.console)
        report(ctx.store, rollout.campaign, rollout.stored_as, ctx.tables, ctx.console, target=rollout.theorem,
               chunks=rollout.chunk_keys(), command=section.sweep_command(rollout.theorem, ctx.seed, full))


SEARCH_BUDGET = 4000      # --search: evaluations per size, by default


def theorem_id(text: str) -> str:
    from verification.stress.checks.plan import THEOREMS

    if text not in THEOREMS:
        raise argparse.ArgumentTypeError(f"no stress sampler for {text!r}; known: {', '.join(THEOREMS)}")
    return text


def make_executor(args: argparse.Namespace) -> Any:
    """The executor ``--workers`` / ``--scheduler`` / ``--connect-timeout`` ask for
    (:func:`verification.executors.executor_for`, every command's one factory), for a ``with``
    block (which shuts it down)."""
    from verification.executors import executor_for

    return executor_for(args.workers, args.scheduler, getattr(args, "connect_timeout", None))


def scheduler_address(text: str) -> str:
    """``--scheduler``: tcp://HOST:PORT or tls://HOST:PORT, checked before anything connects."""
    from verification.executors import check_scheduler_address

    try:
        return check_scheduler_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def seconds(text: str) -> float:
    from verification.executors import check_timeout

    try:
        return check_timeout(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}") from None


def check_device(device: str) -> None:
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InvalidInput("--device cuda: no CUDA device is visible here (torch.cuda.is_available() is False)")


def sweep(store: Any, plan: Any, executor: Any, console: Any, todo: Optional[list] = None) -> dict:
    """Run the plan's missing chunks (``todo``, when the caller has already asked the store which
    are stored) through ``executor``; return what the run measured."""
    from verification import campaign
    from verification.stress.checks import chunks
    from verification.stress.report import Progress

    t0 = time.perf_counter()
    progress = Progress(plan.stored_as)
    every = chunks(plan)
    if todo == []:              # everything stored: nothing to run, and no second question to the store
        return {"computed": 0, "skipped": len(every), "instances": 0, "seconds": 0.0, "rate": 0.0}
    res = campaign.run(store, plan.campaign, every if todo is None else todo, executor=executor, console=console,
                       description=f"stress {plan.theorem}", status=progress)
    skipped = res.skipped if todo is None else len(every) - len(todo)
    seconds = time.perf_counter() - t0
    return {"computed": res.computed, "skipped": skipped, "instances": progress.tally.n,
            "seconds": seconds, "rate": progress.tally.n / seconds if seconds > 0 else 0.0}


def _search(args: argparse.Namespace, console: Any) -> int:
    from verification.store import ResultStore
    from verification.stress.checks.plan import check_search
    from verification.stress.checks.search import run_search

    sizes = args.sizes or (3, 4, 5)
    budget = SEARCH_BUDGET if args.budget is None else args.budget
    check_search(sizes, budget)           # before any work
    with make_executor(args) as executor, ResultStore(args.db) as store:   # one chunk per size: in parallel
        run_search(store, args.theorem, sizes=sizes, budget=budget, seed=args.seed, console=console,
                   executor=executor)
    return 0


def plan_of(args: argparse.Namespace) -> Any:
    """The :class:`~verification.stress.checks.plan.StressPlan` of a sweep's parsed command line
    (what ``attnbounds stress`` runs, and what ``attnbounds paper --from`` reads)."""
    from verification.stress.checks.plan import THEOREMS, StressPlan

    spec = THEOREMS[args.theorem]
    return StressPlan(args.theorem, args.family or spec.families, args.sizes or spec.sizes, args.instances,
                      seed=args.seed, device=args.device, layers=tuple(args.layers or ()), sampler=args.sampler)


class _Refusing(argparse.ArgumentParser):
    """A parser whose errors are an InvalidInput (one line), not a usage message and an exit."""

    def error(self, message: str) -> None:   # type: ignore[override]
        raise InvalidInput(message)


def paper_plan(argv: list[str]) -> Any:
    """``attnbounds paper --from "stress THEOREM [options]"``: the sweep plan of that command line,
    parsed by this command's own parser (:func:`register`) and built as the command builds it
    (:func:`plan_of`). The paper's stress section shows the sweeps of ``dobrushin.factor`` and
    ``dobrushin.rollout``; a search (``--search``) or another theorem is refused."""
    from verification.stress.checks import section

    if {"-h", "--help"} & set(argv):
        raise InvalidInput("a command line to read, not --help")
    parser = _Refusing(prog="attnbounds", add_help=False)
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    if args.search:
        raise InvalidInput("the paper reads a sweep; its guided search stays the main job's (drop --search)")
    if args.budget is not None:
        raise InvalidInput(f"--budget {args.budget} applies to --search only")
    if args.theorem not in (section.THEOREM, section.ROLLOUT):
        raise InvalidInput(f"the paper's stress section shows the sweeps of {section.THEOREM} and "
                           f"{section.ROLLOUT}, not {args.theorem}")
    return plan_of(args)


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verification.executors import SerialExecutor
    from verification.options import make_console
    from verification.store import ResultStore
    from verification.stress.checks import chunks
    from verification.stress.checks.plan import THEOREMS
    from verification.stress.report import report, store_bytes

    spec = THEOREMS[args.theorem]
    check_device(args.device)
    if args.search and spec.kind == "rollout":
        raise InvalidInput(f"--search: not available for {args.theorem} (stacks of layers); it supports "
                         f"{', '.join(t for t, s in THEOREMS.items() if s.kind != 'rollout')}")
    if args.budget is not None and not args.search:
        raise InvalidInput(f"--budget {args.budget}: applies to --search only (a sweep's size is --instances)")
    console = make_console()
    if args.search:
        return _search(args, console)
    plan = plan_of(args)
    done: set = set()
    if args.db != ":memory:" and Path(args.db).is_file():  # what is stored, read without writing anything
        with ResultStore(args.db, readonly=True) as stored:
            done = stored.done_chunks(plan.campaign)
    todo = [c for c in chunks(plan) if c.key not in done]
    # nothing left to compute: resume at once, without starting (or joining) a cluster; a cluster that
    # cannot be reached is refused before the store is created or changed
    with make_executor(args) if todo else SerialExecutor() as executor, ResultStore(args.db) as store:
        # the runner asks the store again: a chunk another writer stored meanwhile is skipped
        where = (f"Dask scheduler {executor.address}" if executor.name == "dask" and todo
                 else "this process")
        console.print(f"[bold]{plan.campaign}[/]: {plan.total():,} instances in {len(plan.chunk_keys()):,} chunks "
                      f"({', '.join(plan.families)}; n = {', '.join(map(str, plan.sizes))}"
                      + (f"; L = {', '.join(map(str, plan.layers))}" if plan.layers else "") + f"), {len(todo):,} to "
                      f"compute, on {where}")
        run = sweep(store, plan, executor, console, todo)
        cells = report(store, plan.campaign, plan.stored_as, Path(args.out) / "tables", console, target=plan.theorem,
                       chunks=plan.chunk_keys(), command=f"attnbounds stress {args.theorem} --instances {args.instances} --seed {args.seed}")
        chunks_stored = sum(t.chunks for t in cells.values())
        payload = store.payload_bytes(plan.campaign)
        console.print(f"this run: {run['computed']} chunks computed, {run['skipped']} already stored; "
                      f"{run['instances']:,} instances in {run['seconds']:.1f} s ({run['rate']:,.0f} instances/s)")
    disk = store_bytes(args.db)           # after closing: the write-ahead log is checkpointed
    console.print(f"stored: {chunks_stored} chunks, {payload / max(chunks_stored, 1):,.0f} bytes per chunk of values"
                  + (f"; store file {disk:,} bytes ({disk / max(chunks_stored, 1):,.0f} per chunk if the store holds "
                     "only this campaign)" if disk is not None else ""))
    return 0


def register(sub: Any) -> None:
    from verification.executors import CONNECT_TIMEOUT
    from verification.options import add_common, family_list, int_list, positive_int
    from verification.stress.checks.plan import THEOREMS

    p = sub.add_parser("stress", help="stress-test a theorem on many random instances (sweep or guided search; "
                                      "serial or Dask)")
    add_common(p)
    p.add_argument("theorem", type=theorem_id, help=f"theorem id, one of: {', '.join(THEOREMS)}")
    p.add_argument("--family", "--families", dest="family", default=None,
                   type=family_list, help="comma-separated random families (default per theorem: "
                   "dirichlet,softmax-T1; causal for dobrushin.factor.causal)")
    p.add_argument("--sizes", default=None, type=int_list(2, "size"), help="comma-separated n >= 2 (default 4,16)")
    p.add_argument("--layers", default=None, type=int_list(2, "layer count"),
                   help="dobrushin.rollout: comma-separated layer counts L of the random stacks (default 2,4,12)")
    p.add_argument("--instances", default=100_000, type=positive_int,
                   help="instances in all (pairs for dobrushin.product, stacks for dobrushin.rollout), split evenly over the cells and "
                        "rounded up to whole chunks; a larger value extends the campaign (default 100000)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", default=None, type=positive_int, metavar="K",
                       help="start a local Dask cluster of K worker processes; it speaks TLS with credentials made "
                            "in memory for this run, so no other user of the machine can join it or send it code")
    where.add_argument("--scheduler", default=None, type=scheduler_address, metavar="ADDRESS",
                       help="join an existing Dask cluster at tcp://HOST:PORT or tls://HOST:PORT (tls:// credentials "
                            "from the Dask configuration). That cluster runs what this command sends, and this "
                            "command unpickles what it sends back: a scheduler can run code here, so join only "
                            "clusters you control")
    p.add_argument("--connect-timeout", default=CONNECT_TIMEOUT, type=seconds, metavar="SECONDS",
                   help="--scheduler: give up, with one line and exit status 2, if no Dask scheduler completes the "
                        f"connect and handshake within SECONDS (default {CONNECT_TIMEOUT:g})")
    p.add_argument("--sampler", default=None, choices=("counter", "numpy"),
                   help="how chunks are drawn: counter (default: Philox4x32-10, compiled and parallel, campaign "
                        "version v2) or numpy (numpy's sequential generator, v1 campaigns; rollout stacks always)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where the float filter runs; exact certification is always on the CPU")
    p.add_argument("--search", action="store_true", help="guided search (hypothesis target() + local "
                                                         "optimiser) for tight cases and counterexamples")
    p.add_argument("--budget", default=None, type=positive_int,
                   help=f"--search only: evaluations per size (default {SEARCH_BUDGET}; hypothesis gets a quarter, "
                        "at most 100 examples)")
    p.set_defaults(func=_cmd)
