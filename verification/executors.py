"""How the chunks of a campaign run: behind the standard :class:`concurrent.futures.Executor`
interface (``submit(fn, *args)`` returns a :class:`concurrent.futures.Future`, ``map``,
``shutdown()``, ``with``), so the campaign runner (:func:`verification.campaign.run`) never asks
which executor it holds. :class:`SerialExecutor` runs each chunk in this process when it is
submitted; :class:`DaskExecutor` runs them on a Dask cluster; the standard library's thread and
process pools plug in the same way. Results do not depend on where a chunk ran: every chunk
carries its own deterministic seed.

Joining a cluster (``scheduler=``) is bounded in time: the address must be ``tcp://HOST:PORT`` or
``tls://HOST:PORT`` (checked before anything connects), and a scheduler that does not complete the
connect, the handshake and an identity request within ``timeout`` seconds (default
:data:`CONNECT_TIMEOUT`; ``attnbounds stress --connect-timeout``) is given up with a
``ValueError``, before any ``distributed.Client`` exists. A local cluster (``workers=``,
:mod:`verification.local_cluster`) speaks TLS with credentials made for it in memory
(``distributed.security.Security.temporary()``): its ports refuse any client without them, so
another user of the machine cannot submit code to it; it serves no HTTP (no dashboard, ``/health``
or ``/metrics``), and its worker processes leave Ctrl-C to the command, which shuts them down.
"""
from __future__ import annotations

import concurrent.futures as cf
import math
import threading
from contextlib import suppress
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from theory.errors import InvalidInput

# seconds to connect to a scheduler and finish the handshake (--connect-timeout)
CONNECT_TIMEOUT = 10.0
SCHEMES = ("tcp", "tls")


def check_scheduler_address(address: Optional[str]) -> str:
    """``address`` if it is ``tcp://HOST:PORT`` or ``tls://HOST:PORT`` (port 1-65535, nothing
    after it), else a ``ValueError`` saying what is wrong (without the address: the caller names
    it). Nothing connects."""
    want = "give tcp://HOST:PORT or tls://HOST:PORT"
    if address is None or not str(address).strip():
        raise InvalidInput(f"empty address; {want}")
    text = str(address)
    if text != text.strip() or any(c.isspace() for c in text):
        raise InvalidInput(f"white space in the address; {want}")
    if "://" not in text:
        raise InvalidInput(f"no scheme; {want}")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidInput(f"not an address ({exc}); {want}") from None
    if parts.scheme not in SCHEMES:
        raise InvalidInput(f"scheme {parts.scheme!r} is not a Dask scheduler's; {want}")
    if not parts.hostname:
        raise InvalidInput(f"no host; {want}")
    if port is None or port == 0:
        raise InvalidInput(f"no port (1-65535); {want}")
    if parts.username is not None or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InvalidInput(f"more than a host and a port; {want}")
    return f"{parts.scheme}://{parts.netloc}"


MAX_CONNECT_TIMEOUT = 600.0   # seconds: a scheduler that has not answered in ten minutes will not


def check_timeout(timeout: Any) -> float:
    """``--connect-timeout`` in seconds: a number in (0, :data:`MAX_CONNECT_TIMEOUT`], else
    :class:`~theory.errors.InvalidInput` (a huge value would be a hang by another name)."""
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        t = math.nan
    if not (0 < t <= MAX_CONNECT_TIMEOUT):
        raise InvalidInput(f"--connect-timeout: must be a number of seconds in (0, {MAX_CONNECT_TIMEOUT:g}], "
                           f"got {timeout!r}")
    return t


WORKERS_PER_CORE = 2   # --workers K: at most this many worker processes per core of this machine


def max_workers(cores: Optional[int] = None) -> int:
    """The largest ``--workers``: :data:`WORKERS_PER_CORE` per core (``os.cpu_count()``). Each
    worker is a single-threaded process that loads its own numpy, numba and torch (hundreds of MB),
    so more of them only share the same cores and fill the memory; a larger cluster is joined with
    ``--scheduler``."""
    import os

    return WORKERS_PER_CORE * max(1, cores if cores is not None else os.cpu_count() or 1)


def check_workers(workers: Any, cores: Optional[int] = None) -> int:
    """``--workers K``: an integer from 1 to :func:`max_workers`, else InvalidInput saying why."""
    try:
        k = int(workers)
    except (TypeError, ValueError):
        raise InvalidInput(f"--workers: must be an integer, got {workers!r}") from None
    if k < 1:
        raise InvalidInput(f"--workers: must be at least 1, got {workers}")
    most = max_workers(cores)
    if k > most:
        raise InvalidInput(f"--workers: at most {most} ({WORKERS_PER_CORE} per core; this machine has "
                           f"{most // WORKERS_PER_CORE}): each worker is a process with its own libraries in memory, "
                           f"and more only share the same cores (a larger cluster: --scheduler), got {k}")
    return k


def executor_for(workers: Optional[int] = None, scheduler: Optional[str] = None,
                 timeout: Optional[float] = None) -> cf.Executor:
    """The executor a command's ``--workers`` / ``--scheduler`` / ``--connect-timeout`` ask for:
    a local Dask cluster of ``workers`` processes, an existing one at ``scheduler`` (given up
    after ``timeout`` seconds, default :data:`CONNECT_TIMEOUT`), else serial. For a ``with``
    block, which shuts it down."""
    if workers is not None:
        return DaskExecutor(workers=workers)
    if scheduler is not None:       # '' is refused there, never taken for "serial"
        return DaskExecutor(scheduler=scheduler, timeout=CONNECT_TIMEOUT if timeout is None else timeout)
    return SerialExecutor()


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def root_cause(exc: BaseException) -> str:
    """The innermost cause, in words (``Connection refused``, not distributed's wrapping)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else None) or one_line(exc)


def probe_scheduler(address: str, timeout: float, connection_args: Optional[dict] = None) -> dict:
    """Connect to ``address``, do distributed's handshake and ask its identity, all within
    ``timeout`` seconds (a refused connection is retried until then, as distributed does);
    return the identity (``{"type": "Scheduler", "workers": {...}, ...}``).

    distributed's own ``connect`` bounds only the TCP connect, not the handshake read after it: a
    server that accepts and never answers holds ``Client(address, timeout=...)`` forever. Here every
    step is under one deadline, the connection is aborted whatever happens, and the event loop runs
    in a thread of its own that is abandoned (daemon) if even name resolution outlives the deadline,
    so this returns or raises ``TimeoutError``/``OSError`` within about ``timeout`` seconds."""
    import asyncio

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["identity"] = asyncio.run(_identity(address, timeout, connection_args or {}))
        except BaseException as exc:      # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="attnbounds-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["identity"]


async def _identity(address: str, timeout: float, connection_args: dict) -> dict:
    import asyncio

    from distributed.comm.addressing import parse_address
    from distributed.comm.core import FatalCommClosedError
    from distributed.comm.registry import get_backend

    scheme, loc = parse_address(address)
    connector = get_backend(scheme).get_connector()
    state: dict[str, Any] = {"comm": None, "last": None}

    async def talk() -> dict:
        delay = 0.01
        while state["comm"] is None:
            try:
                state["comm"] = await connector.connect(loc, deserialize=True, **connection_args)
            except FatalCommClosedError:
                raise
            except OSError as exc:           # refused (not listening yet): retry until the deadline
                state["last"] = exc
                await asyncio.sleep(delay)
                delay = min(2 * delay, 0.5)
        comm = state["comm"]
        local = comm.handshake_info()        # what distributed.comm.connect does, step by step
        await comm.write(local)
        remote = await comm.read()
        comm.local_info = {**local, "address": comm.local_address}
        comm.remote_info = {**remote, "address": comm.peer_address}
        comm.handshake_options = comm.handshake_configuration(comm.local_info, comm.remote_info)
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()

    try:
        return await asyncio.wait_for(talk(), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        if state["comm"] is not None:
            raise TimeoutError(f"it accepted the connection but did not complete the handshake "
                               f"within {timeout:g} s") from None
        last = f" (last: {root_cause(state['last'])})" if state["last"] is not None else ""
        raise TimeoutError(f"no connection within {timeout:g} s{last}") from None
    finally:
        if state["comm"] is not None:
            state["comm"].abort()


def _refuse_after_shutdown(executor: Any) -> None:
    if executor._shut:
        raise RuntimeError(f"{type(executor).__name__}: cannot schedule new work after shutdown")


class SerialExecutor(cf.Executor):
    """Run each chunk in this process, in plan order (``submit`` runs ``fn`` at once and returns a
    finished future)."""

    name = "serial"
    window = 1            # chunks worth keeping in flight (campaign.run's ``window``)

    def __init__(self) -> None:
        self._shut = False

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future:
        _refuse_after_shutdown(self)
        fut: cf.Future = cf.Future()
        fut.set_running_or_notify_cancel()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:
            fut.set_exception(exc)
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._shut = True


class DaskExecutor(cf.Executor):
    """Run chunks on a Dask ``distributed`` cluster: ``workers=K`` starts a ``LocalCluster`` of K
    single-threaded worker processes (``processes=False``: threads in this process, for tests);
    ``scheduler="tcp://HOST:PORT"`` (or ``tls://``) joins a running cluster (``dask scheduler`` and
    ``dask worker`` started by hand or by a job system, each worker in an environment with this
    package installed).

    A local cluster of processes speaks TLS with throw-away credentials made in memory for it
    (``Security.temporary()``; ``security`` is them): its scheduler, nannies and workers refuse any
    client that lacks them, and none of them serves HTTP (:mod:`verification.local_cluster`: no
    dashboard, ``/health`` or ``/metrics`` port, which distributed opens even with the dashboard
    off). Its worker processes ignore SIGINT: a Ctrl-C to the process group reaches the command
    alone, which stores what has finished and shuts the cluster down (no worker traceback).
    Threads (``processes=False``) talk ``inproc://`` and open no port.
    Joining: the address is checked first, then :func:`probe_scheduler` must get the scheduler's
    identity within ``timeout`` seconds, and only then is a ``Client`` made (with the same
    timeout). A cluster that is joined runs what this process sends and sends back pickles this
    process loads: join only clusters you control. ``tls://`` takes its credentials from the Dask
    configuration (``distributed.comm.tls.*``).

    Each chunk is submitted as its function (pickled by reference: module and name) and its
    arguments: for a stress campaign a plan and a chunk index (the seed derives from them), never
    matrices. Workers compute; results come back to this process, which alone writes the store, as
    each chunk finishes (any order). ``window`` is how many chunks are worth keeping in flight on
    this cluster (default 4 per worker thread): give it to :func:`verification.campaign.run`, which
    never holds more, so a campaign of 10^4 chunks never queues 10^4 results in memory. A worker
    that dies loses only its chunks in flight: the scheduler recomputes them elsewhere.
    Use as a context manager (or call :meth:`shutdown`) to stop a cluster it started.
    """

    name = "dask"

    def __init__(self, workers: Optional[int] = None, scheduler: Optional[str] = None, *,
                 processes: bool = True, window: Optional[int] = None, timeout: float = CONNECT_TIMEOUT):
        if (workers is None) == (scheduler is None):
            raise InvalidInput("DaskExecutor: give exactly one of workers=K (a local cluster) and "
                             "scheduler='tcp://HOST:PORT' (an existing cluster)")
        if workers is not None:
            workers = check_workers(workers)
        self.timeout = check_timeout(timeout)
        self._shut = False
        self._pending: set = set()
        self.cluster = None
        self.security = None
        if workers is not None:
            self._start_local(int(workers), processes)
        else:
            self._join(scheduler)
        threads = sum(self.client.nthreads().values()) or 1
        self.window = int(window) if window else 4 * threads

    def _start_local(self, workers: int, processes: bool) -> None:
        import logging

        from distributed import Client

        from verification import local_cluster

        if processes:                       # real ports: TLS, credentials only this run holds
            from distributed.security import Security

            try:
                self.security = Security.temporary()
            except ImportError:
                raise InvalidInput("--workers: the local Dask cluster needs the 'cryptography' package "
                                 "for its TLS credentials (pip install cryptography)") from None
        self.cluster = local_cluster.start(workers, processes, self.security, logging.ERROR)
        try:
            self.client = Client(self.cluster, set_as_default=False)
        except BaseException:
            self.cluster.close()
            raise
        self.address = self.cluster.scheduler_address

    def _join(self, scheduler: Any) -> None:
        try:
            address = check_scheduler_address(scheduler)
        except ValueError as exc:
            raise InvalidInput(f"--scheduler {scheduler!r}: {exc}") from None
        from distributed import Client
        from distributed.security import Security

        security = Security()                # tls:// credentials, if any, from the Dask config
        args = security.get_connection_args("client")
        if address.startswith("tls://") and args.get("ssl_context") is None:
            raise InvalidInput(f"--scheduler {address!r}: tls:// needs client credentials in the Dask "
                             "configuration (distributed.comm.tls.ca-file, .client.cert, .client.key)")
        how = "--connect-timeout SECONDS sets how long to wait"
        try:
            identity = probe_scheduler(address, self.timeout, args)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise InvalidInput(f"--scheduler {address!r}: cannot reach a Dask scheduler there "
                             f"({root_cause(exc)}; {how})") from None
        kind = identity.get("type") if isinstance(identity, dict) else None
        if kind != "Scheduler":
            raise InvalidInput(f"--scheduler {address!r}: what answers there is not a Dask scheduler "
                             f"(it says it is {kind!r}); give the scheduler's address")
        try:   # it answered the handshake just now; every later step of Client's start is bounded
            self.client = Client(address, timeout=self.timeout, set_as_default=False, security=security)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InvalidInput(f"--scheduler {address!r}: cannot reach a Dask scheduler there "
                             f"({root_cause(exc)}; {how})") from None
        self.address = address
        try:
            pin_workers(self.client)
        except Exception as exc:             # a worker without this package, or one that went away
            with suppress(OSError, TimeoutError, RuntimeError):
                self.client.close(timeout=self.timeout)
            raise InvalidInput(f"--scheduler {address!r}: the workers could not pin their numerics "
                               f"({one_line(exc)}; each worker needs this package installed)") from None

    # concurrent.futures.Executor -------------------------------------------------------------

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future:
        """``fn(*args, **kwargs)`` on the cluster (``pure=False``: each call runs), as a
        :class:`concurrent.futures.Future`; cancelling it cancels the task. (Not distributed's own
        ``Client.get_executor()``: its bridge settles a future that was cancelled meanwhile without
        a guard, and the ``InvalidStateError`` it then logs breaks the one-line Ctrl-C of a run
        with workers, ``tests/verification/test_local_cluster.py``.)"""
        _refuse_after_shutdown(self)
        task = self.client.submit(fn, *args, pure=False, **kwargs)
        out: cf.Future = cf.Future()
        out.dask_future = task              # holds the task: a released future is forgotten
        self._pending.add(task)

        def settle(done: Any) -> None:
            self._pending.discard(done)
            if out.done():
                return
            with suppress(cf.InvalidStateError):
                if done.cancelled():
                    out.cancel()
                    out.set_running_or_notify_cancel()
                    return
                try:
                    value = done.result()
                except Exception as exc:     # the task's error (or a lost task), as raised here
                    out.set_exception(exc)
                else:
                    out.set_result(value)

        def forward_cancel(f: cf.Future) -> None:
            if f.cancelled() and not task.done():
                with suppress(Exception):
                    task.cancel()

        out.add_done_callback(forward_cancel)
        task.add_done_callback(settle)
        return out

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Close the client and the local cluster this started (idempotent). A scheduler that
        has gone away does not turn this into a traceback."""
        if self._shut:
            return
        self._shut = True
        if cancel_futures and self._pending:
            with suppress(Exception):
                self.client.cancel(list(self._pending))
        with suppress(OSError, TimeoutError, RuntimeError):
            self.client.close(timeout=self.timeout)
        if self.cluster is not None:
            self.cluster.close()


def pin_workers(client: Any) -> None:
    """A pinned process (:func:`numerics.pins.pin`: the command line) pins the workers of a cluster it
    joins, as far as a running worker allows (its numpy is loaded already: start workers in an
    environment with the pins for the published bits, docs/stress.md); an unpinned or native
    process leaves them as they are. A local cluster's workers inherit this process's environment."""
    from numerics import pins

    if pins.pinned():
        client.run(pins.pin)


def local_pool(cores: Optional[int] = None) -> cf.Executor:
    """A pool of spawned processes on this machine, one per core up to 2 (the budget machine has 2);
    :class:`SerialExecutor` on one core. The main job trains its SAN runs on it: each run is
    single-threaded and deterministic (numerics.san.train), so the store holds what a serial run
    stores (a process pool stores what the serial executor stores: tests/verification/test_executors.py)."""
    import multiprocessing
    import os

    n = min(2, cores or os.cpu_count() or 1)
    if n < 2:
        return SerialExecutor()
    return cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"))
