"""The order the SMT campaign runs in: sizes in increasing order, one level at a time (each level
its own campaign pass, so an interrupted run resumes); a statement stops climbing at its first
undecided size (a user theorem also at a counterexample). Within a level, statements whose queries
rely on others (``Statement.needs``: the bounds) run after them, and only where every premise is
proved at that size by either encoding. :func:`plan_records` replays the schedule on the stored
answers (nothing solved) to select a plan's records.
"""
from __future__ import annotations

from typing import Any, Iterator

from verification import campaign
from verification.prove.checks.statements import depth, premise_at, statement


def premises_proved(key: str, dims: tuple, records: list[dict]) -> list[str]:
    """The premises of ``key`` at ``dims`` NOT proved (by either encoding) in ``records``."""
    st = statement(key)
    if st.wrong:
        return []
    proved = {(r["extra"]["statement"], tuple(r["extra"]["dims"])) for r in records if r["extra"]["smt"] == "proved"}
    return [p for p, pd in premise_at(key, dims).items() if not ({(p, tuple(pd)), (f"{p}.split", tuple(pd))} & proved)]


def schedule(plan: Any, store: Any, current: set, console: Any = None) -> Iterator[tuple[int, list]]:
    """The plan's chunks, ``(n, chunks)`` per level n and premise depth, each list planned from
    the answers stored for the lists before it (a statement stops at its first undecided size; one
    whose premises are not proved at a size is not run there): the caller runs each list before
    asking for the next. ``current`` collects the hashes of the query texts planned."""
    stuck: set[str] = set()
    for n in plan.levels():
        stored = [r for r in store.records(plan.campaign) if r["extra"].get("digest") in current]
        stuck |= {r["extra"]["statement"] for r in stored
                  if r["extra"]["smt"] == "undecided" and not r["extra"]["wrong"] and max(r["extra"]["dims"]) < n}
        if plan.expr:                      # a user theorem also stops at a counterexample: it is refuted
            stuck |= {r["extra"]["statement"] for r in stored
                      if r["extra"]["smt"] != "proved" and max(r["extra"]["dims"]) < n}
        for layer in range(1 + max(depth(k) for k in plan.statements)):    # premises first, then what relies on them
            keys = [k for k in plan.statements if k not in stuck and depth(k) == layer and n <= plan.largest(k)]
            if layer:
                level = [r for r in store.records(plan.campaign) if r["extra"].get("digest") in current]
                blocked = {k: premises_proved(k, plan.dims(k, n), level) for k in keys if plan.dims(k, n)}
                for k, missing in blocked.items():
                    if missing:
                        stuck.add(k)
                        if console is not None:
                            console.print(f"{k} at n = {n} not run: its premise {', '.join(missing)} is not proved "
                                          "at that size")
                keys = [k for k in keys if not blocked.get(k)]
            chunks = [c for c in (plan.chunk(k, n) for k in keys) if c is not None]
            current |= {c.args[3] for c in chunks}
            if chunks:
                yield n, chunks


def plan_chunks(store: Any, plan: Any) -> list[str]:
    """The chunk keys of ``plan`` as :func:`run_campaign` runs it on ``store``'s answers, nothing
    solved: every list of :func:`schedule` up to the first one the store lacks a chunk of (what
    comes after it depends on the answers still to be computed)."""
    done, keys = store.done_chunks(plan.campaign), []
    for _, chunks in schedule(plan, store, set()):
        keys += [c.key for c in chunks]
        if any(c.key not in done for c in chunks):
            break
    return keys


def run_campaign(store: Any, plan: Any, console: Any = None, executor: Any = None) -> list[dict]:
    """Run the plan level by level (resumable); returns the stored records of its statements."""
    current: set[str] = set()                      # the hashes of this plan's query texts
    for n, chunks in schedule(plan, store, current, console):
        campaign.run(store, plan.campaign, chunks, console=console, description=f"SMT proofs, level n = {n}",
                     progress=console is not None, executor=executor)
    keys = set(plan.statements)
    return [r for r in store.records(plan.campaign) if r["extra"]["statement"] in keys
            and max(r["extra"]["dims"]) <= plan.max_n and r["extra"].get("digest") in current]


def plan_records(store: Any, plan: Any) -> list[dict]:
    """The stored records of ``plan``'s statements and sizes, as :func:`run_campaign` returns them
    (its schedule replayed on the stored answers, nothing solved)."""
    current: set[str] = set()
    for _ in schedule(plan, store, current):
        pass
    keys = set(plan.statements)
    return [r for r in store.records(plan.campaign) if r["extra"]["statement"] in keys
            and max(r["extra"]["dims"]) <= plan.max_n and r["extra"].get("digest") in current]


def sensitivity_failures(records: list[dict]) -> list[dict]:
    """Wrong variants that did not come back with an exactly confirmed counterexample."""
    return [r for r in records if r["extra"]["wrong"] and not (r["extra"]["smt"] == "counterexample"
                                                                and r["extra"]["confirmed"])]
