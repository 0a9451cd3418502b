"""The local Dask cluster of ``--workers K`` (:class:`verification.executors.DaskExecutor`): a
scheduler in this process and K single-threaded workers on 127.0.0.1, each in a process of its own
under a nanny (``processes=False``: threads in this process, for tests).

It opens only what the run needs. Its comm ports speak TLS with the throw-away credentials the
caller made (``Security.temporary()``), and it serves no HTTP at all: distributed's scheduler and
workers start an HTTP server even with the dashboard off (``dashboard_address=None`` still binds
the scheduler's routes, ``/health``, ``/metrics``, the workers pages, to port 8787, and each worker's
to a random port, in plain text for any local user), so :class:`PrivateScheduler` and
:class:`PrivateWorker` start none, and the scheduler reports no ``dashboard`` service. A dashboard
is for a cluster started by hand (``dask scheduler``), joined with ``--scheduler``.

Ctrl-C belongs to the command. A terminal sends SIGINT to its whole process group, workers
included; a worker that took it died with two tracebacks on stderr, before the command's own one
line. Here SIGINT is held while the cluster starts (:func:`sigint_held`: the threads that spawn
worker processes, and so the processes, inherit the blocked mask; a Ctrl-C meanwhile is raised in
this process once the cluster exists, which is then closed), a worker process ignores it
(:class:`WorkerProcessWorker`), and the command stores what has finished and shuts the workers
down: one line, exit status 130, and the same command resumes.
"""
from __future__ import annotations

import logging
import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from distributed import Nanny, Scheduler, SpecCluster, Worker
from distributed.gc import disable_gc_diagnosis, enable_gc_diagnosis


class PrivateScheduler(Scheduler):
    """A :class:`distributed.Scheduler` that serves nothing but its comm port: no HTTP server, so
    no dashboard, ``/health``, ``/metrics`` or workers pages, and no ``dashboard`` service in
    ``scheduler_info()["services"]``. It runs in the command's process, so it also leaves out
    distributed's GC diagnosis (a ``gc.callbacks`` entry that only logs at INFO/DEBUG, which the
    cluster silences): Python prints and drops an exception raised in a GC callback, so a Ctrl-C
    landing there came out as "Exception ignored in ... KeyboardInterrupt" before the one line."""

    _gc_diagnosis_off = False

    def start_http_server(self, routes: Any, dashboard_address: Any, default_port: int = 0,
                          ssl_options: Any = None) -> None:
        return None

    def identity(self, n_workers: int = -1) -> dict:
        return {**super().identity(n_workers), "type": "Scheduler"}     # what it is, to any client

    async def start_unsafe(self) -> Any:
        started = await super().start_unsafe()
        disable_gc_diagnosis()                 # what Scheduler.start_unsafe enabled
        self._gc_diagnosis_off = True
        return started

    async def close(self, *args: Any, **kwargs: Any) -> Any:
        if self._gc_diagnosis_off:             # Scheduler.close disables it: keep the count even
            self._gc_diagnosis_off = False
            enable_gc_diagnosis()
        return await super().close(*args, **kwargs)


class PrivateWorker(Worker):
    """A :class:`distributed.Worker` without its HTTP server (``/health``, ``/metrics``)."""

    def start_http_server(self, routes: Any, dashboard_address: Any, default_port: int = 0,
                          ssl_options: Any = None) -> None:
        return None


class WorkerProcessWorker(PrivateWorker):
    """The worker a nanny runs in a process of its own. It ignores SIGINT (set in the process's
    main thread, before the worker starts), so a Ctrl-C sent to the process group leaves it to
    the command, which shuts the cluster down; and once it is asked to close, its process logs
    only CRITICAL messages (a heartbeat in flight when its connection pool closes is logged as an
    ERROR with three tracebacks by distributed: noise about a worker the command is stopping)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        super().__init__(*args, **kwargs)

    async def close(self, *args: Any, **kwargs: Any) -> Any:
        logging.disable(logging.ERROR)
        return await super().close(*args, **kwargs)


@contextmanager
def sigint_held() -> Iterator[None]:
    """Hold Ctrl-C for the block, then deliver it. SIGINT is blocked in this thread (the main one),
    so threads started meanwhile, and the processes they spawn, inherit the mask; and a SIGINT that
    another thread takes is only noted, not raised in the middle of the block. When the block
    ends, the handler it found is back and a noted SIGINT is raised to it (the command's handler:
    KeyboardInterrupt). An ignored SIGINT stays ignored; outside the main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    noted: list = []
    handler = signal.getsignal(signal.SIGINT)
    if handler not in (signal.SIG_IGN, None):
        signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)     # one held for this thread is noted now
        if handler not in (signal.SIG_IGN, None):
            signal.signal(signal.SIGINT, handler)
        if noted:
            signal.raise_signal(signal.SIGINT)


def start(workers: int, processes: bool, security: Any, silence_logs: int) -> SpecCluster:
    """A running cluster of ``workers`` single-threaded workers: processes under nannies on
    127.0.0.1 over TLS with ``security`` (``processes=True``), else threads over ``inproc://``
    (``security`` None). What :class:`distributed.LocalCluster` starts, with the classes above."""
    host = "127.0.0.1" if processes else None
    protocol = "tls://" if processes else "inproc://"
    common = dict(host=host, protocol=protocol, interface=None, security=security)
    scheduler = {"cls": PrivateScheduler,
                 "options": dict(common, port=0, services={}, dashboard=False, dashboard_address=None)}
    options = dict(common, nthreads=1, services={}, dashboard=False, dashboard_address=None,
                   silence_logs=silence_logs, memory_limit=1 / workers)   # a K-th of the memory each
    if processes:
        # one core per worker process: its compiled kernels and torch run single-threaded, so
        # K workers use K cores (not K times the machine's threads)
        options["env"] = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        worker = {"cls": Nanny, "options": dict(options, worker_class=WorkerProcessWorker)}
    else:
        worker = {"cls": PrivateWorker, "options": options}
    if processes:
        # multiprocessing starts its resource tracker at the first spawn and unblocks SIGINT in the
        # thread that does (bpo-33613): start it now, so that every spawning thread keeps the mask
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    cluster = None
    try:
        with sigint_held():     # a Ctrl-C held meanwhile is raised as the block ends: close what started
            cluster = SpecCluster(scheduler=scheduler, workers={k: worker for k in range(workers)},
                                  worker=worker, security=security, silence_logs=silence_logs)
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    return cluster
