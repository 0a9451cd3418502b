"""How the chunks of a campaign run. One interface: ``executor.map(chunks)`` yields
``(chunk, records)`` pairs, in any order, as each chunk finishes; the campaign runner stores each
pair in one transaction. :class:`SerialExecutor` runs them one after another in this process; a
distributed executor (a Dask cluster) plugs in behind the same interface, so results do not depend
on where a chunk ran: every chunk carries its own deterministic seed.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Protocol


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
            yield chunk, list(chunk.run())
