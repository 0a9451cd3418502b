"""``attnbounds stress THEOREM_ID``: a sweep of N random instances (or, with ``--search``, a
guided search for tight cases and counterexamples), serially, on a local Dask cluster
(``--workers K``) or on an existing one (``--scheduler tcp://HOST:PORT``). Re-running resumes; a
larger ``--instances`` extends the campaign."""
from __future__ import annotations

import argparse
import time
from typing import Any

from verification.stress.plan import THEOREMS, StressPlan

SECTION = "stress"
# the main job's stress section: Theorem D1's sweep and its guided search (quick / --full)
SECTION_THEOREM = "dobrushin.factor"
SECTION_INSTANCES = {False: 200_000, True: 1_000_000}
SECTION_BUDGET = {False: 500, True: 4000}
SECTION_SIZES = (3, 4, 5)      # the search's sizes
SECTION_ROLLOUT_INSTANCES = {False: 20_000, True: 100_000}   # dobrushin.rollout stacks (default cells)


def verify_section(ctx: Any) -> None:
    """The ``stress`` section of the main job: the D1 sweep (serial), the guided search and the
    rollout-chain sweep, with their tables; what ``attnbounds paper`` reads for its stress section."""
    from verification.executors import SerialExecutor
    from verification.stress.report import report
    from verification.stress.search import run_search

    full = not ctx.quick
    spec = THEOREMS[SECTION_THEOREM]
    plan = StressPlan(SECTION_THEOREM, spec.families, spec.sizes, SECTION_INSTANCES[full], seed=ctx.seed)
    ctx.console.rule(f"[bold]Stress: {SECTION_THEOREM} on {plan.total():,} random matrices, and a guided search")
    sweep(ctx.store, plan, SerialExecutor(), ctx.console)
    report(ctx.store, plan.campaign, plan.stored_as, ctx.tables, ctx.console, target=plan.theorem,
           chunks=plan.chunk_keys())
    run_search(ctx.store, SECTION_THEOREM, sizes=SECTION_SIZES, budget=SECTION_BUDGET[full], seed=ctx.seed,
               console=ctx.console, executor=SerialExecutor())
    spec = THEOREMS["dobrushin.rollout"]
    plan = StressPlan("dobrushin.rollout", spec.families, spec.sizes, SECTION_ROLLOUT_INSTANCES[full], seed=ctx.seed)
    sweep(ctx.store, plan, SerialExecutor(), ctx.console)
    report(ctx.store, plan.campaign, plan.stored_as, ctx.tables, ctx.console, target=plan.theorem,
           chunks=plan.chunk_keys())


def theorem_id(text: str) -> str:
    if text not in THEOREMS:
        raise argparse.ArgumentTypeError(f"no stress sampler for {text!r}; known: {', '.join(THEOREMS)}")
    return text


def make_executor(args: argparse.Namespace) -> Any:
    """Serial, a local Dask cluster (``--workers``, TLS with throw-away credentials) or an existing
    one (``--scheduler``, given up after ``--connect-timeout`` seconds)."""
    from verification.executors import CONNECT_TIMEOUT, DaskExecutor, SerialExecutor

    if args.workers is not None:
        return DaskExecutor(workers=args.workers)
    if args.scheduler is not None:      # '' is refused there, never taken for "serial"
        return DaskExecutor(scheduler=args.scheduler,
                            timeout=getattr(args, "connect_timeout", None) or CONNECT_TIMEOUT)
    return SerialExecutor()


def close_executor(executor: Any) -> None:
    """Stop what ``make_executor`` started (nothing for ``None`` or the serial executor)."""
    if executor is not None:
        executor.shutdown()


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
            raise ValueError("--device cuda: no CUDA device is visible here (torch.cuda.is_available() is False)")


def sweep(store: Any, plan: StressPlan, executor: Any, console: Any) -> dict:
    """Run the plan's missing chunks through ``executor``; return what the run measured."""
    from verification import campaign
    from verification.stress.report import Progress
    from verification.stress.rollout import chunks as stress_chunks

    t0 = time.perf_counter()
    progress = Progress(plan.stored_as)
    res = campaign.run(store, plan.campaign, stress_chunks(plan), executor=executor, console=console,
                       description=f"stress {plan.theorem}", status=progress)
    seconds = time.perf_counter() - t0
    return {"computed": res.computed, "skipped": res.skipped, "instances": progress.tally.n,
            "seconds": seconds, "rate": progress.tally.n / seconds if seconds > 0 else 0.0}


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verification.options import make_console
    from verification.store import ResultStore
    from verification.stress.report import report, store_bytes

    spec = THEOREMS[args.theorem]
    check_device(args.device)
    if args.search and spec.kind == "rollout":
        raise ValueError(f"--search: not available for {args.theorem} (stacks of layers); it supports "
                         f"{', '.join(t for t, s in THEOREMS.items() if s.kind != 'rollout')}")
    console = make_console()
    if args.search:
        from verification.stress.plan import check_search
        from verification.stress.search import run_search

        check_search(args.sizes or (3, 4, 5), args.budget)      # before any work

        with ResultStore(args.db) as store:
            executor = make_executor(args)          # one chunk per size: sizes search in parallel
            try:
                run_search(store, args.theorem, sizes=args.sizes or (3, 4, 5), budget=args.budget,
                           seed=args.seed, console=console, executor=executor)
            finally:
                close_executor(executor)
        return 0
    plan = StressPlan(args.theorem, args.family or spec.families, args.sizes or spec.sizes, args.instances,
                      seed=args.seed, device=args.device, layers=tuple(args.layers or ()))
    with ResultStore(args.db) as store:
        missing = len(set(plan.chunk_keys()) - store.done_chunks(plan.campaign))
        # nothing left to compute: resume at once, without starting (or joining) a cluster
        executor = make_executor(args) if missing else None
        try:
            where = f"Dask scheduler {executor.address}" if hasattr(executor, "address") else "this process"
            console.print(f"[bold]{plan.campaign}[/]: {plan.total():,} instances in {len(plan.chunk_keys()):,} chunks "
                          f"({', '.join(plan.families)}; n = {', '.join(map(str, plan.sizes))}"
                          + (f"; L = {', '.join(map(str, plan.layers))}" if plan.layers else "") + f"), {missing:,} to "
                          f"compute, on {where}")
            run = sweep(store, plan, executor, console)
        finally:
            close_executor(executor)
        cells = report(store, plan.campaign, plan.stored_as, Path(args.out) / "tables", console, target=plan.theorem,
                       chunks=plan.chunk_keys())
        chunks = sum(t.chunks for t in cells.values())
        payload = store.payload_bytes(plan.campaign)
        console.print(f"this run: {run['computed']} chunks computed, {run['skipped']} already stored; "
                      f"{run['instances']:,} instances in {run['seconds']:.1f} s ({run['rate']:,.0f} instances/s)")
    disk = store_bytes(args.db)           # after closing: the write-ahead log is checkpointed
    console.print(f"stored: {chunks} chunks, {payload / max(chunks, 1):,.0f} bytes per chunk of values"
                  + (f"; store file {disk:,} bytes ({disk / max(chunks, 1):,.0f} per chunk if the store holds "
                     "only this campaign)" if disk is not None else ""))
    return 0


def register(sub: Any) -> None:
    from verification.options import add_common, family_list, int_list, positive_int

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
    from verification.executors import CONNECT_TIMEOUT

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
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where the float filter runs; exact certification is always on the CPU")
    p.add_argument("--search", action="store_true", help="guided search (hypothesis target() + local "
                                                         "optimiser) for tight cases and counterexamples")
    p.add_argument("--budget", default=4000, type=positive_int,
                   help="--search: evaluations per size (default 4000; hypothesis gets a quarter, at most 100 examples)")
    p.set_defaults(func=_cmd)
