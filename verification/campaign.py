"""The one campaign runner: plan -> chunks -> executor -> store.

A *campaign* is a named set of *chunks*; a chunk is a deterministic piece of work (a module-level
function and its arguments, seeds included) that returns the :class:`~verification.store.Record`
rows of its instances. :func:`run` skips the chunks already stored (resume: a chunk counts as
stored when its content matches its mark, :meth:`~verification.store.ResultStore.chunk_check`; one
deleted from, edited or moved by hand is computed again and replaced whole, and what does not verify
under a key outside the plan is removed, :meth:`~verification.store.ResultStore.discard`), hands the rest to an
executor, writes each finished chunk in one transaction (a run killed at any moment loses at most
the chunks in flight), shows progress, and stops loudly with :class:`~theory.verdicts.ViolationError`
right after storing a chunk with a ``violated`` record of a *proved* theorem (the category is read
from the registry). A violated sanity check is stored and reported, no stop. Claims (conjectures) and
statistical comparisons speak the other vocabulary (supported / refuted / inconclusive, with their
statistic): a refuted claim is a finding, and a claim record that says ``violated`` is refused as a
bug before anything of its chunk is stored.

>>> from verification.store import ResultStore, Record
>>> def square(k):
...     return [Record("dobrushin.factor", f"i{k}", "holds", value=k * k)]
>>> with ResultStore(":memory:") as store:
...     chunks = [Chunk(f"c{k}", square, (k,)) for k in range(3)]
...     first = run(store, "demo", chunks, progress=False)
...     again = run(store, "demo", chunks, progress=False)     # resumed: nothing recomputed
>>> (first.computed, first.records, again.computed, again.skipped)
(3, 3, 0, 3)

A chunk of a compact campaign returns a :class:`ChunkResult`: the records worth keeping, plus one
summary per theorem (verdict counts, smallest slack, ...) stored with them in the same transaction.
An executor is any :class:`concurrent.futures.Executor`: :class:`~verification.executors.SerialExecutor`
(the default), :class:`~verification.executors.DaskExecutor` (a cluster), or the standard library's
``ThreadPoolExecutor`` / ``ProcessPoolExecutor``; the runner only calls ``submit`` and cancels the
futures still in flight when it stops. Chunks may finish in any order (a cluster); what is stored
depends only on each chunk. Whoever makes an executor shuts it down (``with``).
"""
from __future__ import annotations

import concurrent.futures as cf
import os
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Optional

from theory.verdicts import Verdict, ViolationError, judge, spoken, vocabulary
from verification.executors import SerialExecutor


@dataclass(frozen=True)
class Chunk:
    """One unit of work: ``fn(*args, **kwargs)`` returns a list of records. ``key`` is unique in
    its campaign and names the chunk in the store (resume skips stored keys)."""

    key: str
    fn: Callable[..., list]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def run(self) -> list:
        return self.fn(*self.args, **self.kwargs)


class ChunkResult(list):
    """What a chunk of a compact campaign returns: a list of records (the instances worth keeping)
    with ``summaries``, theorem id -> JSON-serialisable summary of all the chunk's instances."""

    def __init__(self, records: Iterable = (), summaries: Optional[dict] = None):
        super().__init__(records)
        self.summaries = dict(summaries or {})

    def __reduce__(self) -> tuple:  # ships between processes as (records, summaries)
        return (ChunkResult, (list(self), self.summaries))


@dataclass
class CampaignResult:
    campaign: str
    computed: int = 0       # chunks computed in this run
    skipped: int = 0        # chunks already stored (resumed)
    records: int = 0        # records written in this run
    recomputed: int = 0     # chunks whose stored content did not match their mark (computed again)
    removed: int = 0        # chunk keys outside the plan whose content did not verify (removed)
    violations: list = field(default_factory=list)  # violated records of any theorem, this run


def is_proved(theorem_id: str) -> bool:
    """Whether the registry files ``theorem_id`` as proved (a violation of it is a loud stop).
    A record naming no registered theorem is a bug in the campaign: KeyError."""
    from theory import get

    return get(theorem_id).category == "proved"


def check_vocabulary(records: list, campaign: str, chunk: str) -> None:
    """Every record speaks its theorem's vocabulary: verdicts for proved theorems and sanity
    checks, outcomes (with their statistic) for claims and statistical comparisons. A claim can
    be refuted, never ``violated``. A mismatch is a bug in the campaign: ValueError, nothing stored."""
    from theory import get

    for r in records:
        th = get(r.theorem)
        kind = vocabulary(th.category)
        if not isinstance(judge(r.verdict), kind):
            raise ValueError(f"campaign {campaign!r}, chunk {chunk!r}: record {r.instance!r} of {th.category} "
                             f"{r.theorem} has {judge(r.verdict).value!r}, which is not {spoken(kind)}")
        if kind is not Verdict and "statistic" not in r.extra:
            raise ValueError(f"campaign {campaign!r}, chunk {chunk!r}: outcome record {r.instance!r} of "
                             f"{r.theorem} carries no statistic (use verification.store.outcome_record)")


# chunks in flight at once, by default: enough to keep every core of this machine busy, few
# enough that a campaign of 10^4 chunks never holds 10^4 results in memory
WINDOW = 4 * (os.cpu_count() or 1)


def finished(executor: cf.Executor, chunks: Iterable[Chunk], window: int = WINDOW) -> Iterator[tuple[Chunk, list]]:
    """``(chunk, records)`` as each chunk finishes, at most ``window`` submitted and not yet
    handed back; finished chunks are handed back in the order they were submitted (so an
    executor that runs ``submit`` at once, :class:`~verification.executors.SerialExecutor`, runs
    and hands back one chunk at a time, in plan order). A chunk's exception is raised here.
    Closing the iterator early (a loud stop, an interrupt) cancels the chunks still in flight."""
    if window < 1:
        raise ValueError(f"window: must be at least 1, got {window}")
    todo = iter(chunks)
    flight: dict[cf.Future, Chunk] = {}           # in submission order
    try:
        while True:
            for fut in [f for f in flight if f.done()]:
                chunk = flight.pop(fut)
                out = fut.result()
                yield chunk, out if isinstance(out, list) else list(out)
            if len(flight) < window:
                chunk = next(todo, None)
                if chunk is not None:
                    flight[executor.submit(chunk.fn, *chunk.args, **chunk.kwargs)] = chunk
                    continue
            if not flight:
                return
            cf.wait(flight, return_when=cf.FIRST_COMPLETED)
    finally:
        for fut in flight:
            fut.cancel()


def run(store: Any, campaign: str, chunks: Iterable[Chunk], *, executor: Optional[cf.Executor] = None,
        console: Any = None, description: Optional[str] = None, progress: bool = True,
        status: Optional[Callable[[Chunk, list], str]] = None, window: Optional[int] = None) -> CampaignResult:
    """Run every chunk of ``campaign`` not yet in ``store`` (see the module docstring) on
    ``executor`` (default: a :class:`~verification.executors.SerialExecutor`), at most ``window``
    chunks in flight (:func:`finished`; by default the executor's own ``window`` where it has one, e.g.
    a :class:`~verification.executors.DaskExecutor`'s 4 per worker thread of the cluster, else
    :data:`WINDOW`). ``status(chunk, records)``, called after each stored
    chunk, returns a line shown in the progress bar (e.g. instances/s, verdict counts, smallest
    slack so far)."""
    chunks = list(chunks)
    keys = [c.key for c in chunks]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"campaign {campaign!r}: chunk key {dup!r} appears twice in the plan")
    done = store.done_chunks(campaign)
    todo = [c for c in chunks if c.key not in done]
    checked = store.chunk_check(campaign) if hasattr(store, "chunk_check") else None
    problems = {} if checked is None else {k: v for k, v in checked.problems.items() if k not in checked.unmarked}
    altered = [c.key for c in todo if c.key in problems]
    gone = discard_strays(store, campaign, keys, console)
    result = CampaignResult(campaign, skipped=len(chunks) - len(todo), recomputed=len(altered), removed=len(gone))
    for hook in _COLLECTORS:           # verification.plan.recording: the family's RunResult sees it
        hook(result)
    if altered and console is not None:
        console.print(f"{campaign}: {len(altered)} stored chunk{'s do' if len(altered) > 1 else ' does'} not match "
                      f"{'their marks' if len(altered) > 1 else 'its mark'}, computed again (e.g. {altered[0]!r} "
                      f"{problems[altered[0]]})")
    if not todo:
        return result
    # an executor made here is shut down here; one the caller made, by the caller
    with SerialExecutor() if executor is None else nullcontext(executor) as ex:
        bar = _progress(console, description or campaign, len(todo), result.skipped) if progress else None
        results = finished(ex, todo, getattr(ex, "window", WINDOW) if window is None else window)
        try:
            for chunk, records in results:
                _store(store, campaign, chunk, records, result)
                line = status(chunk, records) if status is not None else None
                if bar is not None:
                    bar[0].advance(bar[1])
                    if line:
                        bar[0].update(bar[1], description=f"{description or campaign} {line}")
                _stop_if_violated(campaign, chunk, records)
                if _INTERRUPTED[0]:         # an interrupt Python dropped (it landed in a finaliser)
                    raise KeyboardInterrupt
        finally:
            results.close()             # cancels the chunks still in flight
            if bar is not None:
                bar[0].stop()
    return result


def discard_strays(store: Any, campaign: str, keys: Iterable[str], console: Any = None) -> dict[str, str]:
    """Remove what ``campaign`` holds under chunk keys outside ``keys`` (the plan) that does not verify
    (:meth:`~verification.store.ResultStore.discard`: content with no mark, a mark its content does
    not match; a verified chunk never), and say so on ``console``: content the paper refuses as
    nobody's is gone after the command it names. :func:`run` calls it; a caller that skips
    :func:`run` when nothing is left to compute calls it itself. Returns chunk key -> what was wrong."""
    gone = store.discard(campaign, keys) if hasattr(store, "discard") else {}
    if gone and console is not None:
        key = next(iter(gone))
        console.print(f"{campaign}: removed what {len(gone)} chunk key{'s' * (len(gone) > 1)} outside the plan "
                      f"held that no mark vouches for (e.g. {key!r} {gone[key]})", markup=False, highlight=False)
    return gone


_COLLECTORS: list[Callable[[CampaignResult], None]] = []


@contextmanager
def collecting(hook: Callable[[CampaignResult], None]) -> Iterator[None]:
    """Inside the block, every :func:`run` hands its :class:`CampaignResult` to ``hook`` when it
    starts (the object is filled as its chunks are stored): how a family's ``run`` returns what all
    its campaigns did (:func:`verification.plan.recording`)."""
    _COLLECTORS.append(hook)
    try:
        yield
    finally:
        _COLLECTORS.remove(hook)


_STORED = [0]   # chunks stored by this process, every campaign (what an interrupt reports)
_INTERRUPTED = [False]


# where Python prints and drops an exception (finalisers, at-fork and logging lock callbacks): an
# interrupt landing there is only remembered, and raised at the next safe point
_DROPPING = ("__del__", "_releaseLock", "_acquireLock", "_after_at_fork_child_reinit_locks", "_remove",
             "_at_fork_reinit", "_after_fork")


def on_interrupt(signum: int, frame: Any) -> None:
    """SIGINT handler of ``attnbounds`` (:func:`verification.cli.main` installs it): remember the
    interrupt and raise KeyboardInterrupt as Python's own handler does, except inside a callback
    where Python would print the exception and drop it (a lock released after a solver's fork, a
    finaliser): there it is only remembered. :func:`run` raises it after the chunk it is storing,
    and the CLI after the command returns, so an interrupt is never lost."""
    _INTERRUPTED[0] = True
    if frame is not None and frame.f_code.co_name in _DROPPING:
        return
    raise KeyboardInterrupt


def was_interrupted() -> bool:
    """Whether :func:`on_interrupt` has run in this process (since :func:`clear_interrupt`)."""
    return _INTERRUPTED[0]


def clear_interrupt() -> None:
    _INTERRUPTED[0] = False


def stored_in_this_process() -> int:
    """How many chunks :func:`run` has stored since this process started (all campaigns): what
    ``attnbounds`` reports when it is interrupted (Ctrl-C), before it exits with status 130."""
    return _STORED[0]


def _store(store: Any, campaign: str, chunk: Chunk, records: list, result: CampaignResult) -> None:
    """Write one finished chunk (its records and summaries) in one transaction; count it."""
    check_vocabulary(records, campaign, chunk.key)
    store.write_chunk(campaign, chunk.key, records, records.summaries if isinstance(records, ChunkResult) else None)
    _STORED[0] += 1
    result.computed += 1
    result.records += len(records)
    result.violations += [r for r in records if judge(r.verdict) is Verdict.VIOLATED]


def _stop_if_violated(campaign: str, chunk: Chunk, records: list) -> None:
    """The loud stop: a violated record of a *proved* theorem, once its chunk is stored."""
    loud = [r for r in records if judge(r.verdict) is Verdict.VIOLATED and is_proved(r.theorem)]
    if loud:
        r = loud[0]
        raise ViolationError(
            f"{len(loud)} violated record(s) of proved theorems stored in campaign {campaign!r} (the records kept; "
            f"a chunk summary counts every violated instance), "
            f"chunk {chunk.key!r}; first: {r.theorem} on {r.instance} (value {r.value}, bound "
            f"{r.bound}, slack {r.slack}, extra {r.extra})")


def _progress(console: Any, description: str, total: int, stored: int) -> tuple:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=False)
    task = bar.add_task(f"{description} ({stored} chunks stored)", total=total)
    bar.start()
    return bar, task
