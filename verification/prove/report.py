"""Tables of the SMT campaign, from stored records only (never recomputes): ``prove-sizes`` (every
statement and size) and ``prove-reach`` (:func:`reach_table`, defined once: the paper shows a view of
it, :func:`verification.prove.paper.paper_part`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Optional

from verification.report.tables import Table, print_table, write_table

COLUMNS = ("theorem", "statement", "encoding", "size", "result", "solver", "seconds", "queries", "variables",
           "query chars", "re-check")
SUMMARY_COLUMNS = ("theorem", "statement", "encoding", "proved for all sizes up to", "seconds there",
                   "first undecided", "counterexamples")


def _size_key(r: dict) -> tuple:
    return (max(r["extra"]["dims"]), tuple(r["extra"]["dims"]))


def recheck_text(e: dict) -> str:
    if e["smt"] != "counterexample":
        return "-"
    if e["confirmed"] is None:
        return "model not rational"
    suite = {True: ", suite agrees", False: ", SUITE DISAGREES", None: ""}[e["suite_agrees"]]
    return ("confirmed" if e["confirmed"] else "NOT confirmed") + suite


def result_text(e: dict) -> str:
    if e["wrong"]:
        ok = e["smt"] == "counterexample" and e["confirmed"]
        return f"{e['smt']} ({'expected' if ok else 'EXPECTED a counterexample'})"
    return e["smt"]


def rows(records: Iterable[dict]) -> list[tuple]:
    """One row per stored (statement, size), true statements first, sizes increasing."""
    recs = sorted(records, key=lambda r: (r["extra"]["wrong"], r["extra"]["statement"], _size_key(r)))
    return [(r["theorem"], r["extra"]["statement"], r["extra"]["encoding"], r["extra"]["shape"], result_text(r["extra"]),
             r["extra"]["solver"], r["extra"]["seconds"], r["extra"]["queries"], r["extra"]["variables"],
             r["extra"]["size_chars"], recheck_text(r["extra"])) for r in recs]


def reach(records: Iterable[dict]) -> dict[str, dict[str, Any]]:
    """Per true statement: the largest size up to which every size is proved, its time, the first
    undecided size and the number of counterexamples (a true statement: must be 0)."""
    by: dict[str, list] = {}
    for r in records:
        if not r["extra"]["wrong"]:
            by.setdefault(r["extra"]["statement"], []).append(r)
    out = {}
    for key, recs in sorted(by.items()):
        recs.sort(key=_size_key)
        best: Optional[dict] = None
        undecided = None
        for r in recs:
            if r["extra"]["smt"] != "proved":
                undecided = undecided or (r if r["extra"]["smt"] == "undecided" else None)
                break
            best = r
        out[key] = dict(theorem=recs[0]["theorem"], encoding=recs[0]["extra"]["encoding"],
                        largest=best["extra"]["shape"] if best else None,
                        largest_n=max(best["extra"]["dims"]) if best else None,
                        seconds=best["extra"]["seconds"] if best else None,
                        undecided=undecided["extra"]["shape"] if undecided else None,
                        counterexamples=sum(r["extra"]["smt"] == "counterexample" for r in recs))
    return out


def summary_rows(records: Iterable[dict]) -> list[tuple]:
    return [(v["theorem"], k, v["encoding"], v["largest"], v["seconds"], v["undecided"], v["counterexamples"])
            for k, v in reach(records).items()]


def reach_table(records: Iterable[dict], campaign: str, command: str = "attnbounds prove") -> Table:
    """``prove-reach``: per true statement, proved for all sizes up to (None: not even the first),
    the seconds there, the first undecided size and the counterexamples (a true statement: 0)."""
    return Table.from_rows("prove-reach", summary_rows(records), SUMMARY_COLUMNS,
                           "Dobrushin statements: proved for all sizes up to", f"campaign {campaign}",
                           campaigns=(campaign,), command=command)


def report(records: list[dict], campaign: str, tables: Optional[Path], console: Any) -> None:
    """Print (and write under ``tables``) the per-size table and the reach summary."""
    prov = f"campaign {campaign}"
    detail, summary = rows(records), reach_table(records, campaign)
    if console is not None:
        print_table(console, detail, COLUMNS, f"SMT: every statement and size ({campaign})")
        print_table(console, summary.rows(), summary.columns(), "SMT: proved for all sizes up to")
    if tables is not None:
        write_table(detail, COLUMNS, "prove-sizes", "Dobrushin statements through z3, per size", prov, tables)
        summary.write(tables)
