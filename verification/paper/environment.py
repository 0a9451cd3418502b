"""The environment paragraph of every document's appendix (:func:`verification.paper.appendix.appendix_tex`)
and its section of the supplement (:func:`environment_md`): the software a result depends on
(:func:`verification.provenance.versions`, read when the document is built; every record stores them
when it is written, the machine included), the proof assistant's versions (read when the document is
built: ``make proofs`` records none), the machine the document was built on, and the wall time the
store's chunk stamps give for the campaigns the document reads (in all in the appendix, per family in
the supplement).

The wall time is what the store can say without a clock of its own: each chunk is stamped when it is
stored, so a campaign ran at least from its first stamp to its last; the figure is the length of the
union of those intervals over the campaigns read (overlapping campaigns, such as the main job's two
lanes, counted once). The time a campaign spent before its first chunk was stored is not stamped (a
campaign of one chunk counts 0), and a campaign resumed after a pause counts the pause: the figure is
the stamps' span, not a measured cost.

>>> union_seconds([(0.0, 10.0), (5.0, 12.0), (20.0, 21.0)])
13.0
>>> duration(5400.0), duration(75.0), duration(0.0)
('1 h 30 min', '1 min 15 s', '0 s')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from verification.paper.typeset import latex_text

# the software the paragraph names (keys of verification.provenance.versions; every record stores them all, and the
# supplement lists them all), in this order
SOFTWARE = ("python", "numpy", "python-flint", "torch", "transformers", "onnx", "onnxruntime", "z3-solver", "cvc5")


@dataclass(frozen=True)
class Environment:
    """What the paragraph says: the software versions, the prover's, the build machine, and the
    stamps' wall time per family and in all (seconds; None where the store gives no stamps)."""

    software: dict
    provers: dict
    machine: str
    spans: dict
    total: float


def union_seconds(intervals: Iterable[tuple[float, float]]) -> float:
    """The length of the union of the intervals [a, b]."""
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def duration(seconds: float) -> str:
    """A duration in words: hours and minutes, or minutes and seconds, or seconds."""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60} min"
    if s >= 60:
        return f"{s // 60} min {s % 60} s"
    return f"{s} s"


def campaigns_of(part: Any) -> set:
    return {c for item in part.tables + part.data_tables + part.figures for c in item.campaigns}


def environment(store: Any, parts: list) -> Environment:
    """The :class:`Environment` of a document built from ``parts`` out of ``store``."""
    from verification.provenance import machine, prover_versions, versions

    try:
        first, last = store.campaigns("", first=True), store.campaigns("")
    except TypeError:                  # a store without chunk stamps (a test's fake): no wall time
        first, last = {}, {}
    spans, every = {}, []
    for part in parts:
        stamps = [(first[c], last[c]) for c in campaigns_of(part) if c in first and c in last]
        if stamps:
            spans[part.family] = union_seconds(stamps)
            every += stamps
    return Environment(dict(versions()), dict(prover_versions()), machine(), spans, union_seconds(every))


def environment_tex(env: Environment) -> list[str]:
    """The paragraph (LaTeX; every value escaped): software, prover, machine, and the stamps' wall time."""
    v, t = env.software, latex_text
    text = (", ".join(f"{k} {v.get(k, 'absent')}" for k in SOFTWARE) + f", kernels {v.get('kernels', 'not recorded')}"
            f"; Coq {env.provers.get('Coq')}, mathcomp {env.provers.get('mathcomp')} (read at build time); {env.machine}.")
    if env.spans:
        text += (f" The campaigns read span {duration(env.total)} of chunk stamps (first to last chunk of each, "
                 "overlaps once; the supplement says more).")
    return [f"\\paragraph{{Software, machine{', wall time' if env.spans else ''}.}} " + t(text)]


def environment_md(env: Environment) -> list[str]:
    """The supplement's section (Markdown): every version a record stores, the prover's, the machine,
    and the stamps' wall time per family."""
    out = ["## Software, machine, wall time", "", "Versions (as every record stores them; read when this document was "
           "built): " + ", ".join(f"{k} {v}" for k, v in sorted(env.software.items())) + ".",
           f"Proofs: Coq {env.provers.get('Coq')}, mathcomp {env.provers.get('mathcomp')} (read at build time).", ""]
    if env.spans:
        out += [f"Chunk stamps of the campaigns read span {duration(env.total)} in all: "
                + ", ".join(f"{family} {duration(s)}" for family, s in env.spans.items())
                + " (per campaign from its first to its last stored chunk, overlapping campaigns counted once: the time "
                "a campaign spent before its first chunk was stored is not stamped, and a pause in a resumed campaign "
                "counts).", ""]
    return out
