"""``attnbounds stress THEOREM_ID``: a sweep of N random instances (or, with ``--search``, a
guided search for tight cases and counterexamples), serially, on a local Dask cluster
(``--workers K``) or on an existing one (``--scheduler tcp://HOST:PORT``). Re-running resumes; a
larger ``--instances`` extends the campaign. And ``verify_section(ctx)``, the main job's stress
section (what it runs: :meth:`verification.stress.checks.Plan.for_verify`).

Light at import: the plans, checks, executors and the store load only when a command runs."""
from __future__ import annotations

import argparse
from typing import Any


def verify_section(ctx: Any) -> None:
    """The ``stress`` section of the main job (:meth:`verification.stress.checks.Plan.for_verify`:
    the D1 sweep, its guided search and the rollout-chain sweep, serially) with its tables; what
    ``attnbounds paper`` reads for its stress section."""
    from verification import family
    from verification.stress.checks import THEOREM

    family.verify(ctx, "stress", f"Stress: {THEOREM} on random matrices, a guided search, the rollout chain")


def theorem_id(text: str) -> str:
    """A theorem with a stress sampler: a built-in one (:data:`verification.stress.checks.plan.THEOREMS`)
    or any registered theorem over theory.expr (``--theory FILE.py``)."""
    from theory.errors import InvalidInput
    from verification.stress.checks.plan import spec_of

    try:
        spec_of(text)
    except InvalidInput as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def make_executor(args: argparse.Namespace) -> Any:
    """The executor ``--workers`` / ``--scheduler`` / ``--connect-timeout`` ask for
    (:func:`verification.executors.executor_for`, every command's one factory), for a ``with``
    block (which shuts it down)."""
    from verification.executors import executor_for

    return executor_for(args.workers, args.scheduler, getattr(args, "connect_timeout", None))


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verification.executors import SerialExecutor
    from verification.options import make_console
    from verification.store import ResultStore
    from verification.stress.checks import Plan, check_device, chunks, run, run_sweep
    from verification.stress.report import (counterexample_text, first_counterexample, report_sweep, store_bytes,
                                            sweep_json, with_condition)
    from contextlib import nullcontext

    check_device(args.device)
    plan = Plan.from_args(args)               # refused here, before anything is created
    console = make_console()
    for sweep in plan.sweeps:                 # what --instances became, before anything runs
        if sweep.rounding() is not None:
            console.print(sweep.rounding(), markup=False, highlight=False, soft_wrap=True)
    if plan.search is not None:
        with make_executor(args) as executor, ResultStore(args.db) as store:   # one chunk per size: in parallel
            run(plan, store, executor, console)
            search = plan.search
            keys = sorted(search.chunk_keys())
            found = [r for r in store.records(search.campaign) if r["instance"].rsplit("/", 1)[0] in keys]
        cex = next((r for r in found if "counterexample" in r["extra"]), None)
        if cex is not None:
            console.print(counterexample_text(cex), markup=False, highlight=False, soft_wrap=True)
        if args.json:
            import json
            import sys

            named = {"supported": "holds", "refuted": "violated", "inconclusive": "undecided"}
            verdicts = {k: 0 for k in ("holds", "tight", "violated", "undecided")}
            for r in found:
                v = "tight" if r["verdict"] == "supported" and r["slack"] == 0 else named.get(r["verdict"], r["verdict"])
                verdicts[v] = verdicts.get(v, 0) + 1
            console.file.flush()
            sys.stdout.write(json.dumps({"theorem": search.theorem, "campaign": search.campaign, "search": True,
                                         "instances": search.budget * len(search.sizes), "finds": len(found),
                                         "verdicts": verdicts,
                                         "counterexample": None if cex is None else cex["extra"]["counterexample"]})
                             + "\n")
        return 0
    (one,) = plan.sweeps
    from verification.stress.checks.expr import check_condition_first

    check_condition_first(one)                # a user's equality condition that raises: refused before the store
    done: set = set()
    if args.db != ":memory:" and Path(args.db).is_file():  # what is stored, read without writing anything
        with ResultStore(args.db, readonly=True) as stored:
            done = stored.done_chunks(one.campaign)
    todo = [c for c in chunks(one) if c.key not in done]
    # nothing left to compute: resume at once, without starting (or joining) a cluster; a cluster that
    # cannot be reached is refused before the store is created or changed
    with make_executor(args) if todo else SerialExecutor() as executor, ResultStore(args.db) as store:
        # the runner asks the store again: a chunk another writer stored meanwhile is skipped
        where = (f"Dask scheduler {executor.address}" if executor.name == "dask" and todo
                 else "this process")
        console.print(f"[bold]{one.campaign}[/]: {one.total():,} instances in {len(one.chunk_keys()):,} chunks "
                      f"({', '.join(one.families)}; n = {', '.join(map(str, one.sizes))}"
                      + (f"; L = {', '.join(map(str, one.layers))}" if one.layers else "") + f"), {len(todo):,} to "
                      f"compute, on {where}")
        measured = run_sweep(store, one, executor, console, todo)
        cells = report_sweep(store, one.campaign, one.stored_as, Path(args.out) / "tables", console,
                             target=one.theorem, chunks=one.chunk_keys(), command=one.command())
        cex = first_counterexample(store, one.campaign, one.stored_as, one.chunk_keys())
        if cex is not None:
            console.print(counterexample_text(cex), markup=False, highlight=False, soft_wrap=True)
        chunks_stored = sum(t.chunks for t in cells.values())
        payload = store.payload_bytes(one.campaign)
        console.print(f"this run: {measured['computed']} chunks computed, {measured['skipped']} already stored; "
                      f"{measured['instances']:,} instances in {measured['seconds']:.1f} s "
                      f"({measured['rate']:,.0f} instances/s)")
    disk = store_bytes(args.db)           # after closing: the write-ahead log is checkpointed
    console.print(f"stored: {chunks_stored} chunks, {payload / max(chunks_stored, 1):,.0f} bytes per chunk of values"
                  + (f"; store file {disk:,} bytes ({disk / max(chunks_stored, 1):,.0f} per chunk if the store holds "
                     "only this campaign)" if disk is not None else ""))
    if args.json:
        import json
        import sys

        console.file.flush()
        with ResultStore(args.db, readonly=True) if args.db != ":memory:" else nullcontext(None) as again:
            got = sweep_json(one.theorem, one.campaign, cells, cex)
            if again is not None:
                got = with_condition(got, again, one.campaign, one.stored_as, one.chunk_keys())
        sys.stdout.write(json.dumps(got) + "\n")
    return 0


def per_theorem(default: Any, search: str = "") -> str:
    """``default per theorem: T1, T2: value; T3: value`` for a help text, read from the plans'
    table (:data:`verification.stress.checks.plan.THEOREMS`): ``default(spec)`` is a theorem's
    value as a string (empty: the option does not apply to it); theorems with one value share an
    entry. ``search``: the value under ``--search``, when it is not the theorem's.

    >>> per_theorem(lambda spec: ",".join(map(str, spec.layers)))
    'default per theorem: dobrushin.rollout: 2,4,12'
    """
    from verification.stress.checks.plan import THEOREMS

    grouped: dict[str, list[str]] = {}
    for theorem, spec in THEOREMS.items():
        if default(spec):
            grouped.setdefault(default(spec), []).append(theorem)
    out = "default per theorem: " + "; ".join(f"{', '.join(ths)}: {value}" for value, ths in grouped.items())
    return out + (f"; with --search: {search}" if search else "")


def register(sub: Any) -> None:
    from verification.options import add_common, add_executor, add_theory, family_list, int_list, positive_int
    from verification.stress.checks import SEARCH_BUDGET, SIZES
    from verification.stress.checks.plan import CHUNK_ELEMENTS, MAX_CHUNK, THEOREMS

    p = sub.add_parser("stress", help="stress-test a theorem on many random instances (sweep or guided search; "
                                      "serial or Dask)")
    add_common(p)
    add_theory(p)
    p.add_argument("theorem", type=theorem_id, help=f"theorem id: one of {', '.join(THEOREMS)}, or a theorem over "
                                                    "theory.expr registered by a --theory file")
    p.add_argument("--family", "--families", dest="family", default=None,
                   type=family_list, help="comma-separated random families ("
                   + per_theorem(lambda spec: ",".join(spec.families)) + ")")
    p.add_argument("--sizes", default=None, type=int_list(2, "size"), help="comma-separated n >= 2 ("
                   + per_theorem(lambda spec: ",".join(map(str, spec.sizes)), ",".join(map(str, SIZES))) + ")")
    p.add_argument("--layers", default=None, type=int_list(2, "layer count"),
                   help="dobrushin.rollout only: comma-separated layer counts L of the random stacks ("
                        + per_theorem(lambda spec: ",".join(map(str, spec.layers))) + ")")
    p.add_argument("--instances", default=100_000, type=positive_int,
                   help="instances in all (pairs for dobrushin.product, stacks for dobrushin.rollout), split evenly over "
                        f"the cells (families x sizes [x layer counts]) and rounded up to whole chunks ({MAX_CHUNK:,} "
                        f"instances up to n = {int((CHUNK_ELEMENTS // MAX_CHUNK) ** 0.5)}, then 2^22/n^2; a rollout "
                        "stack's chunk 2^22/(L n^2)), so a run may check many more: it says how many before it starts; "
                        "a larger value extends the campaign (default 100000)")
    add_executor(p, "run the chunks")
    p.add_argument("--sampler", default=None, choices=("counter", "numpy"),
                   help="how chunks are drawn: counter (default: Philox4x32-10, compiled and parallel, campaign "
                        "version v2) or numpy (numpy's sequential generator, v1 campaigns; rollout stacks always)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where the float filter runs; exact certification is always on the CPU")
    p.add_argument("--json", action="store_true",
                   help="print, as the last line of stdout, one JSON object: theorem, campaign, instances, verdicts "
                        "(holds, tight, violated, undecided), not_applicable, counterexample (exact rationals or null)")
    p.add_argument("--search", action="store_true", help="guided search (hypothesis target() + local "
                                                         "optimiser) for tight cases and counterexamples")
    p.add_argument("--budget", default=None, type=positive_int,
                   help=f"--search only: evaluations per size (default {SEARCH_BUDGET}; hypothesis gets a quarter, "
                        "at most 100 examples)")
    p.set_defaults(func=_cmd)
