"""``attnbounds stress THEOREM_ID``: a sweep of N random instances (or, with ``--search``, a
guided search for tight cases and counterexamples), serially, on a local Dask cluster
(``--workers K``) or on an existing one (``--scheduler tcp://HOST:PORT``). Re-running resumes; a
larger ``--instances`` extends the campaign; a theorem of your own found false as filed ends with
:data:`verification.options.REFUTED`. And ``verify_section(ctx)``, the main job's stress
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
    """A theorem with a stress sampler: a built-in one (:data:`verification.stress.checks.specs.THEOREMS`)
    or any registered theorem over theory.expr (``--theory FILE.py``)."""
    from theory.errors import InvalidInput
    from verification.stress.checks.specs import spec_of

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
    from verification.options import make_console
    from verification.stress.checks import Plan, check_device

    check_device(args.device)
    plan = Plan.from_args(args)               # refused here, before anything is created
    console = make_console()
    for sweep in plan.sweeps:                 # what --instances became, before anything runs
        if sweep.rounding() is not None:
            console.print(sweep.rounding(), markup=False, highlight=False, soft_wrap=True)
        if sparse_note(sweep) is not None:
            console.print(sparse_note(sweep), markup=False, highlight=False, soft_wrap=True)
    if plan.search is not None:
        return _search(args, plan, console)
    return _sweep(args, plan, console)


def filed_as_proved(theorem: str) -> bool:
    """A theorem over theory.expr (a user's) filed as proved: a counterexample ends its run with
    :data:`verification.options.REFUTED` (a built-in one's violation is a bug: a traceback)."""
    from theory import get
    from verification.stress.checks.specs import THEOREMS

    return theorem not in THEOREMS and get(theorem).category == "proved"


def stored_refutation(db: str, campaign: str, theorem: str, keys: list, search: bool = False,
                      check: bool = True) -> tuple[set, Any]:
    """(the verified stored chunks of ``campaign``, :func:`~verification.stress.findings.counterexamples.refutation` of
    those among ``keys`` when ``check``, else None), read without writing anything; (empty, None)
    where no store exists."""
    from pathlib import Path

    from verification.store import ResultStore
    from verification.stress.findings.counterexamples import refutation

    if db == ":memory:" or not Path(db).is_file():
        return set(), None
    with ResultStore(db, readonly=True) as stored:
        done = stored.done_chunks(campaign)
        return done, refutation(stored, campaign, theorem, [k for k in keys if k in done], search) if check else None


def say_refuted(text: str) -> None:
    import sys

    sys.stdout.flush()
    print("attnbounds stress: " + text.replace("\n", "\n  "), file=sys.stderr, flush=True)


def write_json(console: Any, got: dict) -> None:
    import json
    import sys

    console.file.flush()
    sys.stdout.write(json.dumps(got) + "\n")
    sys.stdout.flush()


def _search(args: argparse.Namespace, plan: Any, console: Any) -> int:
    """``stress --search``: the guided search's chunks (resumed); a theorem filed as proved with a
    violating find, in this run or stored by any earlier one, ends with :data:`~verification.options.REFUTED`."""
    from theory.verdicts import ViolationError
    from verification.executors import SerialExecutor
    from verification.options import REFUTED
    from verification.store import ResultStore
    from verification.stress.checks import run
    from verification.stress.findings.counterexamples import refutation, stored_counterexample
    from verification.stress.report import counterexample_text, refutation_json, refutation_text

    search = plan.search
    keys = sorted(search.chunk_keys())
    proved = filed_as_proved(search.theorem)
    _, stop = stored_refutation(args.db, search.campaign, search.theorem, keys, True, check=proved)
    # a refutation already stored: nothing more to compute, the same outcome as the run that stored it
    with make_executor(args) if stop is None else SerialExecutor() as executor, ResultStore(args.db) as store:
        if stop is None:                       # one chunk per size: in parallel
            stopped = None
            try:
                run(plan, store, executor, console)
            except ViolationError as exc:
                if not proved:
                    raise
                stopped = exc
            if proved:
                done = store.done_chunks(search.campaign)
                stop = refutation(store, search.campaign, search.theorem, [k for k in keys if k in done], True)
            if stopped is not None and stop is None:     # the runner stopped, the stored chunks disagree: a bug
                raise stopped
        found = [r for r in store.records(search.campaign) if r["instance"].rsplit("/", 1)[0] in keys]
        cex = stop.counterexample if stop is not None else stored_counterexample(store, search.campaign,
                                                                                  search.theorem, keys)
    if stop is not None:
        say_refuted(refutation_text(search.theorem, stop, len(keys), 0, search=True))
    elif cex is not None:
        console.print(counterexample_text(cex), markup=False, highlight=False, soft_wrap=True)
    if args.json:
        named = {"supported": "holds", "refuted": "violated", "inconclusive": "undecided"}
        verdicts = {k: 0 for k in ("holds", "tight", "violated", "undecided")}
        for r in found:
            v = "tight" if r["verdict"] == "supported" and r["slack"] == 0 else named.get(r["verdict"], r["verdict"])
            verdicts[v] = verdicts.get(v, 0) + 1
        got = {"theorem": search.theorem, "campaign": search.campaign, "search": True,
               "instances": search.budget * len(search.sizes), "finds": len(found), "verdicts": verdicts,
               "counterexample": None if cex is None else cex.values}
        if stop is not None:
            got["refuted"] = refutation_json(stop)
        write_json(console, got)
    return REFUTED if stop is not None else 0


def _sweep(args: argparse.Namespace, plan: Any, console: Any) -> int:
    """``stress``: the sweep's missing chunks, its table, the simplest kept counterexample. A theorem
    filed as proved that the stored chunks of the plan refute (this run's, or any earlier run's: the
    outcome does not depend on how the chunks got there) ends with :data:`~verification.options.REFUTED`,
    as does one whose equality condition disagrees with an exact tight verdict."""
    from pathlib import Path

    from theory.verdicts import ViolationError
    from verification.executors import SerialExecutor
    from verification.options import REFUTED
    from verification.store import ResultStore
    from verification.stress.checks import chunks, run_sweep
    from verification.stress.checks.expr import KEEP_VIOLATED
    from verification.stress.findings import sweep_findings
    from verification.stress.findings.counterexamples import condition_mismatch, refutation
    from verification.stress.report import (condition_json, counterexample_text, mismatch_json, mismatch_text,
                                            refutation_json, refutation_text, report_sweep, store_bytes, sweep_json)

    (one,) = plan.sweeps
    from verification.stress.checks.expr import check_condition_first

    check_condition_first(one)                # a user's equality condition that raises: refused before the store
    keys = one.chunk_keys()
    proved = one.spec.kind == "expr" and filed_as_proved(one.theorem)
    done, stop = stored_refutation(args.db, one.campaign, one.stored_as, keys, check=proved)
    # a refutation already stored: nothing more to compute, the same outcome as the run that stored it
    todo = [] if stop is not None else [c for c in chunks(one) if c.key not in done]
    stored_stop = stop is not None
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
        stopped = None
        try:
            measured = run_sweep(store, one, executor, console, todo)
        except ViolationError as exc:         # stored: the chunk summaries say how many, the records which
            if not proved:
                raise
            measured, stopped = None, exc
        if proved and stop is None:
            done = store.done_chunks(one.campaign)
            stop = refutation(store, one.campaign, one.stored_as, [k for k in keys if k in done])
        if stopped is not None and stop is None:         # the runner stopped, the stored chunks disagree: a bug
            raise stopped
        found = sweep_findings(store, one)
        report_sweep(found, Path(args.out) / "tables", console)
        cex = stop.counterexample if stop is not None else found.counterexample
        mismatch = condition_mismatch(store, one.campaign, one.stored_as, keys) if one.spec.kind == "expr" else None
        if cex is not None and stop is None:
            console.print(counterexample_text(cex), markup=False, highlight=False, soft_wrap=True)
        if mismatch is not None and not proved:      # a conjecture's wrong condition: a finding, shown
            console.print(mismatch_text(one.theorem, mismatch), markup=False, highlight=False, soft_wrap=True)
        chunks_stored = found.total.chunks
        payload = store.payload_bytes(one.campaign)
        if stored_stop:
            console.print(f"this run: nothing computed (the stored chunks already refute {one.theorem})")
        elif measured is None:
            console.print("this run: stopped after storing the chunk with a violation")
        else:
            console.print(f"this run: {measured['computed']} chunks computed, {measured['skipped']} already stored; "
                          f"{measured['instances']:,} instances in {measured['seconds']:.1f} s "
                          f"({measured['rate']:,.0f} instances/s)")
    disk = store_bytes(args.db)           # after closing: the write-ahead log is checkpointed
    console.print(f"stored: {chunks_stored} chunks, {payload / max(chunks_stored, 1):,.0f} bytes per chunk of values"
                  + (f"; store file {disk:,} bytes ({disk / max(chunks_stored, 1):,.0f} per chunk if the store holds "
                     "only this campaign)" if disk is not None else ""))
    failed = stop is not None or (proved and mismatch is not None)
    if stop is not None:
        say_refuted(refutation_text(one.theorem, stop, len(keys), KEEP_VIOLATED))
    elif failed:
        say_refuted(mismatch_text(one.theorem, mismatch))
    if args.json:
        got = sweep_json(one.theorem, one.campaign, found.total, cex)
        if args.db != ":memory:" and found.condition is not None:      # the stored tallies of the condition
            got["equality_condition"] = condition_json(found.condition)
        if stop is not None:
            got["refuted"] = refutation_json(stop)
        if mismatch is not None:
            got["condition_mismatch"] = mismatch_json(mismatch)
        write_json(console, got)
    return REFUTED if failed else 0


def sparse_note(sweep: Any) -> Any:
    """A note when the sweep draws ``sparse`` at a size where it is one-hot (n <= 4: a support of one
    column), the law of ``hard`` (:data:`numerics.sources.random.FAMILY_TEXT`); None otherwise."""
    small = [n for n in sweep.sizes if n <= 4]
    if "sparse" not in {f.partition("+")[0] for f in sweep.families} or not small:
        return None
    return (f"note: sparse at n = {', '.join(map(str, small))} has one-hot rows (a support of ceil(n/4) = 1 column): "
            "the law of hard")


def per_theorem(default: Any, search: str = "") -> str:
    """``default per theorem: T1, T2: value; T3: value`` for a help text, read from the plans'
    table (:data:`verification.stress.checks.specs.THEOREMS`): ``default(spec)`` is a theorem's
    value as a string (empty: the option does not apply to it); theorems with one value share an
    entry. ``search``: the value under ``--search``, when it is not the theorem's.

    >>> per_theorem(lambda spec: ",".join(map(str, spec.layers)))
    'default per theorem: dobrushin.rollout: 2,4,12'
    """
    from verification.stress.checks.specs import THEOREMS

    grouped: dict[str, list[str]] = {}
    for theorem, spec in THEOREMS.items():
        if default(spec):
            grouped.setdefault(default(spec), []).append(theorem)
    out = "default per theorem: " + "; ".join(f"{', '.join(ths)}: {value}" for value, ths in grouped.items())
    return out + (f"; with --search: {search}" if search else "")


def families_text(width: int = 88) -> str:
    """The random families, one definition each (:data:`numerics.sources.random.FAMILY_TEXT`), how a
    parameter is drawn and how d enters the cells, for the end of ``stress --help``."""
    import textwrap

    from numerics.sources.random import DIMS_TEXT, FAMILY_TEXT, PARAMETER_TEXT

    lines = textwrap.wrap("random families (--families): one n x n row-stochastic matrix per draw, its rows "
                          "independent, or one real matrix (logits, tokens); a statement over both kinds names one of "
                          "each, e.g. dirichlet+gauss-1", width + 2)
    for name, text in FAMILY_TEXT.items():
        lines += textwrap.wrap(text, width, initial_indent=f"  {name:<13} ", subsequent_indent=" " * 16)
    for name, text in (("parameter", PARAMETER_TEXT), ("d", DIMS_TEXT)):
        lines += textwrap.wrap(text, width, initial_indent=f"  {name:<13} ", subsequent_indent=" " * 16)
    return "\n".join(lines)


def cell_families(text: str) -> tuple[str, ...]:
    """``--families``: comma-separated families of any kind (:mod:`numerics.sources.random`: row-stochastic,
    real) or ``S+R`` pairs; each name checked here, whether it fits the theorem by its plan."""
    from numerics.sources.random import check_family, check_real, known_real

    items = [s.strip() for s in text.split(",")]
    if not text.strip() or any(not s for s in items):
        raise argparse.ArgumentTypeError(f"empty family in {text!r}; give a comma-separated list")
    try:
        for item in items:
            if "+" in item:
                s, _, r = item.partition("+")
                check_family(s)
                check_real(r)
            elif not known_real(item):
                check_family(item)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return tuple(dict.fromkeys(items))


cell_families.__name__ = "family list"


def register(sub: Any) -> None:
    from verification.options import add_common, add_executor, add_theory, int_list, positive_int
    from verification.stress.checks import SEARCH_BUDGET, SIZES
    from verification.stress.checks.plan import CHUNK_ELEMENTS, MAX_CHUNK
    from verification.stress.checks.specs import THEOREMS

    p = sub.add_parser("stress", help="stress-test a theorem on many random instances (sweep or guided search; "
                                      "serial or Dask)", epilog=families_text(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(p)
    add_theory(p)
    p.add_argument("theorem", type=theorem_id, help=f"theorem id: one of {', '.join(THEOREMS)}, or a theorem over "
                                                    "theory.expr registered by a --theory file")
    p.add_argument("--family", "--families", dest="family", default=None,
                   type=cell_families, help="comma-separated random families, defined below; a statement over "
                   "stochastic and real matrices takes pairs such as dirichlet+gauss-1, and by default families by "
                   "the kinds of its symbols and its hypotheses (" + per_theorem(lambda spec: ",".join(spec.families))
                   + ")")
    p.add_argument("--sizes", default=None, type=int_list(2, "size"), help="comma-separated n >= 2 ("
                   + per_theorem(lambda spec: ",".join(map(str, spec.sizes)), ",".join(map(str, SIZES))) + ")")
    p.add_argument("--layers", default=None, type=int_list(2, "layer count"),
                   help="dobrushin.rollout only: comma-separated layer counts L of the random stacks ("
                        + per_theorem(lambda spec: ",".join(map(str, spec.layers))) + ")")
    p.add_argument("--instances", default=100_000, type=positive_int,
                   help="instances in all (pairs for dobrushin.product, stacks for dobrushin.rollout), split evenly over "
                        f"the cells (families x sizes [x layer counts or widths d]) and rounded up to whole chunks ({MAX_CHUNK:,} "
                        f"instances up to n = {int((CHUNK_ELEMENTS // MAX_CHUNK) ** 0.5)}, then 2^22/n^2; a tenth of "
                        "that for a statement beyond delta (softmax, logits, tokens, parameters, the other functionals); "
                        "a rollout stack's chunk 2^22/(L n^2)), so a run may check many more: it says how many before it "
                        "starts; "
                        "a larger value extends the campaign (default 100000)")
    p.add_argument("--dims", default=None, type=int_list(1, "width d"),
                   help="a statement with a tokens matrix (n x d) only: comma-separated widths d, one cell each "
                        "(default 1,2,4)")
    add_executor(p, "run the chunks")
    p.add_argument("--sampler", default=None, choices=("counter", "numpy"),
                   help="how chunks are drawn: counter (default: Philox4x32-10, compiled and parallel, campaign "
                        "version v2) or numpy (numpy's sequential generator, v1 campaigns; rollout stacks always)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where the float filter runs; exact certification is always on the CPU")
    p.add_argument("--json", action="store_true",
                   help="print, as the last line of stdout, one JSON object: theorem, campaign, instances, verdicts "
                        "(holds, tight, violated, undecided) and not_applicable (they add up to instances), "
                        "counterexample (the simplest kept one, exact rationals, or null), sides (its exact lhs, "
                        "relation and rhs as the statement writes them, or null); also on a theorem of your own "
                        "found false as filed (refuted, condition_mismatch; exit status 3)")
    p.add_argument("--search", action="store_true", help="guided search (hypothesis target() + local "
                                                         "optimiser) for tight cases and counterexamples")
    p.add_argument("--budget", default=None, type=positive_int,
                   help=f"--search only: evaluations per size (default {SEARCH_BUDGET}; hypothesis gets a quarter, "
                        "at most 100 examples)")
    p.set_defaults(func=_cmd)
