"""The plan: the one object that crosses every role of a family.

A plan is made once, from ``attnbounds verify``'s settings (``Plan.for_verify(seed, full)``) or
from a command line (``Plan.from_args(args)``), and then handed on, never rebuilt from (seed,
full): ``run(plan, store, executor, console)`` fills its campaigns and returns a
:class:`RunResult`; the family's report and paper read ``(store, plan)``. Every family's plan
implements :class:`Plan` (``tests/test_architecture.py`` checks it): a plan that comes from outside
the package (a user's theory file) is one more object of this shape.

- ``seed`` and ``full``: the seed every draw derives from, and whether it is the ``--full`` plan
  (the family's ``FULL_SCALES`` says what that scales);
- ``campaigns()``: the store campaigns it fills (names, or name prefixes where a name ends in a
  fingerprint of the weights measured);
- ``command()``: the command line that reproduces it (what a refusal tells the user to run);
- ``provenance()``: what a table of it says it came from (seed, preset, sizes, sampler, models...),
  a flat dict of strings and numbers;
- ``check()``: every chunk's parameters against what the kernels that compute it require (sample
  sizes against dimensions, ranks against sizes, presets' settings against the configurations they
  build), with nothing computed, no model loaded, nothing trained: an
  :class:`~theory.errors.InvalidInput` naming the first that fails. A plan made from a command line
  is checked before any work (``from_args``: the user's input, one line); the main job's plans are
  checked before its store is opened (:func:`assert_valid`: a failure there is the package's bug).

>>> r = RunResult("toy")
>>> r.add(CampaignResult("c", computed=2, skipped=1, records=10))
>>> r.computed, r.skipped, r.records, r.names()
(2, 1, 10, ('c',))
>>> provenance_line({"seed": 0, "sampler": "philox"})
'seed 0; sampler philox'
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol, runtime_checkable

from verification.campaign import CampaignResult, collecting

#: the methods (beyond the ``seed`` and ``full`` attributes) every family's plan has
PLAN_PROTOCOL: tuple[str, ...] = ("for_verify", "from_args", "campaigns", "command", "provenance", "check")


@runtime_checkable
class Plan(Protocol):
    """What every family's plan is (a structural type: no base class to inherit)."""

    seed: int
    full: bool

    def campaigns(self) -> tuple[str, ...]: ...

    def command(self) -> str: ...

    def provenance(self) -> dict[str, Any]: ...

    def check(self) -> None: ...


@dataclass
class RunResult:
    """What one ``run(plan, store, ...)`` did, per campaign (in the order they ran): chunks
    computed and skipped (already stored), records written, violations of proved theorems. The one
    return type of every family's ``run``."""

    family: str
    campaigns: list[CampaignResult] = field(default_factory=list)

    def add(self, result: CampaignResult) -> None:
        self.campaigns.append(result)

    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.campaign for c in self.campaigns))

    @property
    def computed(self) -> int:
        return sum(c.computed for c in self.campaigns)

    @property
    def skipped(self) -> int:
        return sum(c.skipped for c in self.campaigns)

    @property
    def recomputed(self) -> int:
        """Chunks computed again because their stored content did not match their marks."""
        return sum(c.recomputed for c in self.campaigns)

    @property
    def records(self) -> int:
        return sum(c.records for c in self.campaigns)

    @property
    def violations(self) -> list:
        return [v for c in self.campaigns for v in c.violations]


@contextmanager
def recording(family: str) -> Iterator[RunResult]:
    """The :class:`RunResult` of the campaigns run inside the block (every
    :func:`verification.campaign.run` call, however deep): a family's ``run`` is
    ``with recording("x") as result: ...; return result``."""
    result = RunResult(family)
    with collecting(result.add):
        yield result


def assert_valid(plan: Any) -> Any:
    """``plan`` (one the package made itself: the main job's) after its ``check()``; a failure is
    not the user's input but a bug in the package's presets: a RuntimeError (a traceback, exit 1),
    never the one-line refusal of bad input."""
    from theory.errors import InvalidInput

    try:
        plan.check()
    except InvalidInput as exc:
        raise RuntimeError(f"the plan of `{plan.command()}` is invalid (a bug in its preset, not your input): "
                           f"{exc}") from exc
    return plan


def provenance_line(prov: dict[str, Any]) -> str:
    """A plan's provenance as the one line a table prints under itself."""
    return "; ".join(f"{k} {v}" for k, v in prov.items())
