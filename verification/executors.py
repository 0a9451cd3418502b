"""How the chunks of a campaign run. One interface: ``executor.map(chunks)`` yields
``(chunk, records)`` pairs, in any order, as each chunk finishes; the campaign runner stores each
pair in one transaction. :class:`SerialExecutor` runs them one after another in this process; a
distributed executor (:class:`DaskExecutor`, a Dask cluster) plugs in behind the same interface, so results do not depend
on where a chunk ran: every chunk carries its own deterministic seed.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional, Protocol


class Executor(Protocol):
    """Anything with a name and ``map``; chunks are :class:`verification.campaign.Chunk`."""

    name: str

    def map(self, chunks: Iterable[Any]) -> Iterator[tuple[Any, list]]:
        ...


class SerialExecutor:
    """Run each chunk in this process, in plan order."""

    name = "serial"

    def map(self, chunks: Iterable[Any]) -> Iterator[tuple[Any, list]]:
        for chunk in chunks:
            out = chunk.run()
            yield chunk, out if isinstance(out, list) else list(out)


class DaskExecutor:
    """Run chunks on a Dask ``distributed`` cluster: ``workers=K`` starts a ``LocalCluster`` of K
    single-threaded worker processes (``processes=False``: threads in this process, for tests);
    ``scheduler="tcp://HOST:PORT"`` joins a running cluster (``dask scheduler`` and ``dask worker``
    started by hand or by a job system, each worker in an environment with this package installed).

    Each chunk is submitted as its function (pickled by reference: module and name) and its
    arguments: for a stress campaign a plan and a chunk index (the seed derives from them), never
    matrices. Workers compute; results come back to this process, which alone writes the store, as
    each chunk finishes (any order). At most ``window`` chunks are in flight (default 4 per worker
    thread), so a campaign of 10^4 chunks never queues 10^4 results in memory. A worker that dies
    loses only its chunks in flight: the scheduler recomputes them elsewhere.
    Use as a context manager (or call :meth:`close`) to stop a cluster it started.
    """

    name = "dask"

    def __init__(self, workers: Optional[int] = None, scheduler: Optional[str] = None, *,
                 processes: bool = True, window: Optional[int] = None, timeout: float = 20.0):
        if (workers is None) == (scheduler is None):
            raise ValueError("DaskExecutor: give exactly one of workers=K (a local cluster) and "
                             "scheduler='tcp://HOST:PORT' (an existing cluster)")
        if workers is not None and int(workers) < 1:
            raise ValueError(f"--workers: must be at least 1, got {workers}")
        import logging

        from distributed import Client, LocalCluster

        self.cluster = None
        if workers is not None:
            # one core per worker process: its compiled kernels and torch run single-threaded, so
            # K workers use K cores (not K times the machine's threads)
            single = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            extra = {"env": single} if processes else {}
            self.cluster = LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=processes,
                                        dashboard_address=None, silence_logs=logging.ERROR, **extra)
            self.client = Client(self.cluster, set_as_default=False)
            self.address = self.cluster.scheduler_address
        else:
            try:
                self.client = Client(scheduler, timeout=timeout, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ValueError(f"--scheduler {scheduler!r}: cannot reach a Dask scheduler there "
                                 f"({' '.join(str(exc).split()) or type(exc).__name__})") from None
            self.address = scheduler
        threads = sum(self.client.nthreads().values()) or 1
        self.window = int(window) if window else 4 * threads

    def map(self, chunks: Iterable[Any]) -> Iterator[tuple[Any, list]]:
        from distributed import as_completed

        pending = iter(chunks)
        where: dict[Any, Any] = {}
        done = as_completed(loop=self.client.loop)

        def submit() -> bool:
            chunk = next(pending, None)
            if chunk is None:
                return False
            fut = self.client.submit(chunk.fn, *chunk.args, pure=False, **chunk.kwargs)
            where[fut] = chunk
            done.add(fut)
            return True

        for _ in range(self.window):
            if not submit():
                break
        try:
            for fut in done:
                chunk = where.pop(fut)
                out = fut.result()
                fut.release()
                submit()
                yield chunk, out if isinstance(out, list) else list(out)
        finally:   # stopped early (a loud stop, an interrupt): cancel what is still in flight
            if where:
                self.client.cancel(list(where))

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> "DaskExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
