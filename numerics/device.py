"""How to compute, decided in one place: thread policy, device and dtype choice, chunk memory budget.

- Thread policy: torch's OpenMP workers spin after each op and starve numba's parallel kernels on
  few cores (6x slower measured on 2 cores), so ``OMP_WAIT_POLICY=PASSIVE`` is set before torch
  loads: :func:`numerics.pins.pin` (which the command line and the tests call first) applies it. Tiny batched
  torch kernels run faster on one intra-op thread than on an oversubscribed pool (10-50x
  measured): :func:`single_thread`.
- Device: CUDA when present and asked for, else CPU (:func:`default_device`).
- Memory: one chunk of a batched kernel keeps its temporaries under :data:`DEFAULT_MAX_BYTES`
  (:func:`chunk_size`); a campaign refuses chunks over :func:`memory_budget`
  (``ATTNBOUNDS_MEMORY_BUDGET``, GiB) before computing anything.

>>> chunk_size(per_item=2 ** 20, max_bytes=2 ** 24)
16
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from theory.errors import InvalidInput

DEFAULT_MAX_BYTES = 256 * 2 ** 20   # temporaries of one kernel chunk
BUDGET_VARIABLE = "ATTNBOUNDS_MEMORY_BUDGET"
DEFAULT_BUDGET_GIB = 2.0             # one campaign chunk, when the variable is not set
MAX_BUDGET_GIB = 2.0 ** 20           # a pebibyte: anything larger is a typo


def memory_budget() -> int:
    """Bytes one campaign chunk may need: ``ATTNBOUNDS_MEMORY_BUDGET`` in GiB (default 2), read
    when asked (never at import, so that a bad value cannot break ``--help``). A value that is
    not a finite number in (0, 2^20] GiB is :class:`~theory.errors.InvalidInput` naming the
    variable.

    >>> import os; os.environ["ATTNBOUNDS_MEMORY_BUDGET"] = "0.5"; memory_budget() == 2 ** 29
    True
    >>> os.environ["ATTNBOUNDS_MEMORY_BUDGET"] = "nan"; memory_budget()
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: ATTNBOUNDS_MEMORY_BUDGET='nan': must be a finite number of GiB in (0, 1048576]
    >>> del os.environ["ATTNBOUNDS_MEMORY_BUDGET"]
    """
    import math

    text = os.environ.get(BUDGET_VARIABLE)
    if text is None:
        return int(DEFAULT_BUDGET_GIB * 2 ** 30)
    try:
        gib = float(text)
    except ValueError:
        gib = math.nan
    if not (math.isfinite(gib) and 0 < gib <= MAX_BUDGET_GIB):
        raise InvalidInput(f"{BUDGET_VARIABLE}={text!r}: must be a finite number of GiB in "
                           f"(0, {MAX_BUDGET_GIB:.0f}]")
    return max(1, int(gib * 2 ** 30))


def __getattr__(name: str) -> Any:
    if name == "MEMORY_BUDGET":       # the budget in force, read from the environment when asked
        return memory_budget()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def apply_thread_policy() -> None:
    """Set the OpenMP wait policy before torch loads (a user's explicit setting wins)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def chunk_size(per_item: int, max_bytes: Optional[int] = None) -> int:
    """How many items of ``per_item`` bytes fit in one chunk's budget (at least 1)."""
    budget = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
    return max(1, budget // max(per_item, 1))


def default_device(prefer: Optional[str] = None) -> Any:
    """torch device: ``prefer`` ("cpu" / "cuda") if given, else CUDA when available, else CPU."""
    import torch

    if prefer is not None:
        if prefer == "cuda" and not torch.cuda.is_available():
            raise InvalidInput("device 'cuda' asked for, but no CUDA device is available")
        return torch.device(prefer)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@contextmanager
def single_thread() -> Iterator[None]:
    """One intra-op torch thread inside the block; the previous setting is restored."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def chunk_memory(n: int, count: int, copies: int = 6, itemsize: int = 8) -> int:
    """Bytes one chunk of ``count`` n x n matrices needs (input, (I+A)/2, products, temporaries)."""
    return copies * count * n * n * itemsize


def check_memory(what: str, need: int) -> None:
    """InvalidInput naming ``what`` when one chunk would need more than :func:`memory_budget`."""
    budget = memory_budget()
    if need > budget:
        raise InvalidInput(f"{what} needs about {need / 2 ** 30:.3g} GiB per chunk, over the memory budget "
                           f"of {budget / 2 ** 30:.3g} GiB (set {BUDGET_VARIABLE} in GiB to change it)")
