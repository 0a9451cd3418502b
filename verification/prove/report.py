"""Tables of the SMT campaign, from stored records only (never recomputes): ``prove-sizes`` (every
statement and size) and ``prove-reach`` (:func:`reach_table`, defined once: the paper shows a view of
it, :func:`verification.prove.paper.paper_part`). Each row shows z3's and cvc5's answers and times on
the same query texts; a size counts as proved only where both proved it and every premise of the
statement (``extra["needs"]``, either encoding) is proved at its size too.

A plan of user theorems over theory.expr (``--theory FILE.py``) is reported per theorem and size
instead (:func:`expr_report`, the table ``prove-expr``): proved (for what: ``extra["for_every"]``), a
counterexample (its exact matrices and parameters as p/q, re-checked: both exact sides), or undecided
at the timeout. :func:`json_result` is what
``--json`` prints, for either kind of plan."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Optional

from verification.report.tables import Table, print_table, write_table

COLUMNS = ("theorem", "statement", "encoding", "size", "result", "z3", "z3 seconds", "cvc5", "cvc5 seconds",
           "queries", "variables", "query chars", "re-check")
SUMMARY_COLUMNS = ("theorem", "statement", "encoding", "proved for all sizes up to", "seconds there",
                   "cvc5 seconds there", "first undecided", "counterexamples")
SYMMETRY_COLUMNS = ("statement", "size", "exhaustive z3", "split z3", "exhaustive cvc5", "split cvc5", "agree",
                    "exhaustive queries", "split queries")
SYMMETRY_OF = {"d1.bound.exhaustive": "d1.bound.split", "d2.bound.exhaustive": "d2.bound.split"}


def latest(records: Iterable[dict]) -> list[dict]:
    """The last stored record of each (statement, size): an answer for an older encoding is replaced."""
    by: dict = {}
    for r in records:
        by[(r["extra"]["statement"], tuple(r["extra"]["dims"]))] = r
    return list(by.values())


def z3_text(e: dict) -> str:
    """z3's own answer: the combined answer is "undecided" where only cvc5 did not prove it."""
    if e["smt"] == "undecided" and e.get("cvc5") == "undecided" and e["reason"].startswith("z3 unsat"):
        return "proved"
    return e["smt"]


def premise_gaps(records: Iterable[dict]) -> set[tuple[str, tuple]]:
    """(statement, dims) proved by both solvers whose premises are not all proved at their size."""
    recs = list(records)
    proved = {(r["extra"]["statement"], tuple(r["extra"]["dims"])) for r in recs if r["extra"]["smt"] == "proved"}
    out = set()
    for r in recs:
        e = r["extra"]
        pd = tuple(e.get("premise_dims") or e["dims"])
        at = {b: tuple(d) for b, d in (e.get("premise_at") or {}).items()}
        bases = {k.removesuffix(".split"): at.get(k.removesuffix(".split"), pd) for k in e.get("needs") or ()}
        if e["smt"] == "proved" and any(not ({(b, d), (f"{b}.split", d)} & proved) for b, d in bases.items()):
            out.add((e["statement"], tuple(e["dims"])))
    return out


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
    return [(r["theorem"], r["extra"]["statement"], r["extra"]["encoding"], r["extra"]["shape"],
             result_text(r["extra"]),
             z3_text(r["extra"]), r["extra"]["seconds"], r["extra"].get("cvc5") or "-",
             r["extra"].get("cvc5_seconds"), r["extra"]["queries"], r["extra"]["variables"],
             r["extra"]["size_chars"], recheck_text(r["extra"])) for r in recs]


def reach(records: Iterable[dict]) -> dict[str, dict[str, Any]]:
    """Per true statement: the largest size up to which every size is proved, its time, the first
    undecided size and the number of counterexamples (a true statement: must be 0). A size whose
    premises are not proved is not counted (:func:`premise_gaps`)."""
    records = list(records)
    gaps = premise_gaps(records)
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
            if r["extra"]["smt"] != "proved" or (key, tuple(r["extra"]["dims"])) in gaps:
                undecided = undecided or (r if r["extra"]["smt"] == "undecided" else None)
                break
            best = r
        out[key] = dict(theorem=recs[0]["theorem"], encoding=recs[0]["extra"]["encoding"],
                        largest=best["extra"]["shape"] if best else None,
                        largest_n=max(best["extra"]["dims"]) if best else None,
                        seconds=best["extra"]["seconds"] if best else None,
                        cvc5_seconds=best["extra"].get("cvc5_seconds") if best else None,
                        undecided=undecided["extra"]["shape"] if undecided else None,
                        counterexamples=sum(r["extra"]["smt"] == "counterexample" for r in recs))
    return out


def summary_rows(records: Iterable[dict]) -> list[tuple]:
    return [(v["theorem"], k, v["encoding"], v["largest"], v["seconds"], v["cvc5_seconds"], v["undecided"],
             v["counterexamples"])
            for k, v in reach(records).items()]


def reach_table(records: Iterable[dict], campaign: str, command: str) -> Table:
    """``prove-reach``: per true statement, proved for all sizes up to (None: not even the first),
    the seconds there, the first undecided size and the counterexamples (a true statement: 0);
    ``command``: the plan's (:meth:`verification.prove.checks.Plan.command`)."""
    return Table.from_rows("prove-reach", summary_rows(records), SUMMARY_COLUMNS,
                           "Dobrushin statements: proved for all sizes up to", f"campaign {campaign}",
                           campaigns=(campaign,), command=command)


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> int:
    """The tables of ``plan``'s stored records (:func:`verification.prove.checks.plan_records`),
    under ``out_dir/tables`` and on the console, then its alarms (:func:`alarms`): 1 when one rang."""
    from verification.prove.checks import plan_records

    records = plan_records(store, plan)
    if getattr(plan, "expr", False):
        return expr_report(records, plan, Path(out_dir) / "tables", console)
    report_records(records, plan, Path(out_dir) / "tables", console)
    return alarms(records, console)


def alarms(records: list[dict], console: Any) -> int:
    """Print, loudly, every way the stored answers contradict the registry or each other (a wrong
    variant without a confirmed counterexample, a registered smt_checked the solvers disagree with,
    the two encodings disagreeing): 1 when one did, else 0."""
    from verification.prove.checks import sensitivity_failures

    unconfirmed: list = []
    wrong = registry_mismatches(records, unconfirmed)
    split = symmetry_disagreements(records)
    for line in unconfirmed:
        console.print(f"[yellow]{line}: not confirmed within the budget here (not a contradiction)[/]")
    for line in split:
        console.print(f"[bold red]{line}: the symmetry reduction of the split encoding is wrong, or an encoding is[/]")
    for line in wrong:
        console.print(f"[bold red]{line}: correct theory's smt_checked[/]")
    bad = sensitivity_failures(records)
    for r in bad:
        console.print(f"[bold red]the wrong variant {r['extra']['statement']} at {r['extra']['shape']} came back "
                      f"{r['extra']['smt']}, not with a confirmed counterexample: the encoding cannot be trusted "
                      "to fail[/]")
    return 1 if bad or wrong or split else 0


def report_records(records: list[dict], plan: Any, tables: Optional[Path], console: Any) -> None:
    """Print (and write under ``tables``) the per-size table and the reach summary of ``plan``'s
    ``records``."""
    campaign = plan.campaign
    prov = f"campaign {campaign}"
    detail = rows(records)
    cmd = plan.command()
    summary, symmetry = reach_table(records, campaign, cmd), symmetry_table(records, campaign, cmd)
    if console is not None:
        print_table(console, detail, COLUMNS, f"SMT: every statement and size ({campaign})")
        print_table(console, summary.rows(), summary.columns(), "SMT: proved for all sizes up to")
        print_table(console, symmetry.rows(), symmetry.columns(), "SMT: the symmetry reduction checked")
    if tables is not None:
        write_table(detail, COLUMNS, "prove-sizes", "Dobrushin statements through z3 and cvc5, per size", prov, tables)
        summary.write(tables)
        symmetry.write(tables)


def symmetry_rows(records: Iterable[dict]) -> list[tuple]:
    """The symmetry reduction checked (``numerics.smt.exhaustive``): per bound and size where both its
    exhaustive (no symmetry) and its split (symmetry-reduced) encoding are stored, each solver's answer
    for each, and whether they agree: "yes" (both proved, or both refuted, by each solver that decided
    both), "NO" (a solver proves one and refutes the other: an encoding bug), "-" (nothing to compare:
    every solver left one of them undecided)."""
    by = {(r["extra"]["statement"], tuple(r["extra"]["dims"])): r["extra"] for r in records}
    out = []
    for (key, dims), ex in sorted(by.items(), key=lambda kv: (kv[0][0], max(kv[0][1]), kv[0][1])):
        sp = by.get((SYMMETRY_OF.get(key, ""), dims))
        if sp is None:
            continue
        answers = {s: (a, b) for s, a, b in (("z3", z3_text(ex), z3_text(sp)),
                                             ("cvc5", ex.get("cvc5") or "-", sp.get("cvc5") or "-"))}
        decided = [a == b for a, b in answers.values() if "undecided" not in (a, b) and "-" not in (a, b)]
        agree = "-" if not decided else "yes" if all(decided) else "NO"
        out.append((key.removesuffix(".exhaustive"), ex["shape"], answers["z3"][0], answers["z3"][1],
                    answers["cvc5"][0], answers["cvc5"][1], agree, ex["queries"], sp["queries"]))
    return out


def symmetry_checked(records: Iterable[dict]) -> dict[str, Optional[str]]:
    """Per bound ("d1.bound", "d2.bound"): the largest size up to which, at every size, both
    encodings are proved by both solvers (the reduction is machine-checked there); None: not even
    the first. A disagreement (agree "NO") ends the climb as an undecided size does."""
    out: dict[str, Optional[str]] = {}
    stopped: set[str] = set()
    for key, shape, ez, sz, ec, sc, agree, *_ in symmetry_rows(records):     # sizes increasing per key
        out.setdefault(key, None)
        if key in stopped:
            continue
        if agree == "yes" and {ez, sz, ec, sc} == {"proved"}:
            out[key] = shape
        else:
            stopped.add(key)
    return out


def symmetry_disagreements(records: Iterable[dict]) -> list[str]:
    return [f"{r[0]} at {r[1]}: the exhaustive encoding says z3 {r[2]} / cvc5 {r[4]}, the split z3 {r[3]} / "
            f"cvc5 {r[5]}" for r in symmetry_rows(records) if r[6] == "NO"]


def symmetry_table(records: Iterable[dict], campaign: str, command: str) -> Table:
    return Table.from_rows("prove-symmetry", symmetry_rows(records), SYMMETRY_COLUMNS,
                           "The symmetry reduction checked: the bounds without symmetry (every pair, column set "
                           "and sign pattern) against the symmetry-reduced split, per solver",
                           f"campaign {campaign}", campaigns=(campaign,), command=command)


REGISTRY_BUDGET = 60.0     # seconds: the budget under which theory's ``smt_checked`` sizes were measured


def registry_mismatches(records: Iterable[dict], unconfirmed: Optional[list] = None) -> list[str]:
    """The registry's ``Theorem.smt_checked`` checked against stored records: an entry says "proved
    (by z3 and cvc5) for every size up to dims"; a record of that statement at a size up to dims,
    solved with at least :data:`REGISTRY_BUDGET` seconds, with a counterexample contradicts it (the
    lines returned). One that is not proved for another reason (a solver's timeout on a slower or
    busier machine, a premise not proved) does not contradict it, only leaves it unconfirmed here:
    those lines go to ``unconfirmed`` when given. Sizes the records do not reach are not judged."""
    from theory import theorems

    recs = [r for r in records if not r["extra"]["wrong"] and r["extra"]["timeout_s"] >= REGISTRY_BUDGET]
    gaps = premise_gaps(recs)
    out = []
    for th in theorems():
        for key, dims, _ in th.smt_checked:
            for r in recs:
                e = r["extra"]
                if e["statement"] == key and max(e["dims"]) <= max(dims) and (
                        e["smt"] != "proved" or (key, tuple(e["dims"])) in gaps):
                    line = (f"{th.id}: the registry records {key} proved up to {'x'.join(map(str, dims))}, "
                            f"but the store has it {e['smt']} at {e['shape']} "
                            f"({e['reason'] or 'premise not proved'})")
                    if e["smt"] == "counterexample":
                        out.append(line)
                    elif unconfirmed is not None:
                        unconfirmed.append(line)
    return out


# -- user theorems over theory.expr and --json -----------------------------------------------------
EXPR_COLUMNS = ("theorem", "size", "result", "z3", "z3 seconds", "cvc5", "cvc5 seconds", "re-check", "lhs", "rhs",
                "counterexample")


NEGATION = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "=": "!="}   # what a counterexample's exact sides satisfy


def outcome(e: dict) -> str:
    """proved / counterexample (confirmed by the exact re-check) / undecided (anything else: a
    timeout, one solver only, a model the re-check does not confirm or cannot read)."""
    if e["smt"] == "counterexample" and e.get("confirmed"):
        return "counterexample"
    return "proved" if e["smt"] == "proved" else "undecided"


def _matrix_text(rows: Any) -> str:
    """A counterexample's matrix (rows of "p/q") or parameter ("p/q") as text."""
    if isinstance(rows, str):
        return rows
    return "[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]"


def expr_lines(records: list[dict], plan: Any) -> list[str]:
    """What a run of user theorems says, per theorem and size, in plain text."""
    by: dict[str, dict[int, dict]] = {}
    for r in latest(records):
        by.setdefault(r["extra"]["statement"], {})[max(r["extra"]["dims"])] = r["extra"]
    out = []
    for key in plan.statements:
        sizes = by.get(key, {})
        first = next(iter(sizes.values()), None)
        head = f"{key}: {first['text']}" if first else key
        out.append(head)
        stop = None
        for n in range(2, plan.max_n + 1):
            e = sizes.get(n)
            if e is None:
                why = f"{stop} at a smaller size" if stop else "no answer stored"
                out.append(f"  n = {n}: not run ({why})")
                continue
            cvc5 = f"cvc5 {e['cvc5']} in {e.get('cvc5_seconds') or 0:.2f} s" if e.get("cvc5") else "cvc5 not run"
            times = f"z3 {z3_text(e)} in {e['seconds']:.2f} s, {cvc5}"
            what = outcome(e)
            mats = ", ".join(e["matrices"])
            if what == "proved" and e.get("for_every"):
                out.append(f"  n = {n}: proved for every {e['for_every']} ({times})")
            elif what == "proved":
                cond = "".join(f", {c}" for c in e.get("conditions") or ())
                hyp = "".join(f", {a}" for a in e.get("assume") or ())
                out.append(f"  n = {n}: proved for every {n}x{n} row-stochastic {mats}{hyp}{cond} ({times})")
            elif what == "counterexample":
                flip = NEGATION.get(e["relation"], ">")          # the sides as the statement writes them
                out.append(f"  n = {n}: counterexample, re-checked exactly: lhs = {e['lhs']} {flip} rhs = {e['rhs']} "
                           f"({times})")
                out += [f"      {k} = {_matrix_text(M)}" for k, M in e["counterexample"].items()]
                stop = "refuted"
            else:
                why = e["reason"] or "no answer"
                at = f" at the {e['timeout_s']:g} s timeout" if "timeout" in why or "canceled" in why else ""
                out.append(f"  n = {n}: undecided{at} ({why}; {times})")
                stop = "undecided"
    return out


def expr_rows(records: list[dict]) -> list[tuple]:
    recs = sorted(latest(records), key=lambda r: (r["extra"]["statement"], _size_key(r)))
    return [(r["theorem"], r["extra"]["shape"], outcome(r["extra"]), z3_text(r["extra"]), r["extra"]["seconds"],
             r["extra"].get("cvc5") or "-", r["extra"].get("cvc5_seconds"), recheck_text(r["extra"]),
             r["extra"].get("lhs"), r["extra"].get("rhs"),
             "; ".join(f"{k} = {_matrix_text(M)}" for k, M in r["extra"]["counterexample"].items()) or None)
            for r in recs]


def expr_report(records: list[dict], plan: Any, tables: Optional[Path], console: Any) -> int:
    """Print the per-size lines of a run of user theorems (and write the table ``prove-expr``);
    1 when a counterexample was not confirmed by the exact re-check (an encoding bug), else 0."""
    if console is not None:
        for line in expr_lines(records, plan):
            console.print(line, markup=False, highlight=False)
    if tables is not None:
        write_table(expr_rows(records), EXPR_COLUMNS, "prove-expr", "Theorems over theory.expr through z3 and cvc5, "
                    "per size", f"campaign {plan.campaign}; {plan.command()}", tables)
    bad = [r for r in records if r["extra"]["smt"] == "counterexample" and r["extra"].get("confirmed") is False]
    for r in bad:
        if console is not None:
            console.print(f"[bold red]{r['extra']['statement']} at {r['extra']['shape']}: the solvers' model is not a "
                          "counterexample by the exact re-check: an encoding bug[/]")
    return 1 if bad else 0


def json_result(records: list[dict], plan: Any, asked: tuple) -> dict:
    """What ``--json`` prints: ``{"theorem": the id asked (the list of ids when not one), "results":
    [...]}``, one result per statement and size in plan order, each ``{"n", "outcome", "counterexample"
    (None or {matrix: rows of "p/q", parameter: "p/q"}), "theorem", "statement", "dims", "wrong",
    "confirmed", "lhs", "rhs", "reason", "scope" (a user theorem: what a proof at n is for, in words;
    else None), "z3", "cvc5", "seconds", "cvc5_seconds"}``. A built-in size proved whose premise is not
    proved there counts as undecided (as in the reach table)."""
    gaps = premise_gaps(records)
    order = {k: i for i, k in enumerate(plan.statements)}
    recs = sorted(latest(records), key=lambda r: (order.get(r["extra"]["statement"], len(order)), _size_key(r)))
    results = []
    for r in recs:
        e = r["extra"]
        what = outcome(e)
        reason = e["reason"]
        if what == "proved" and (e["statement"], tuple(e["dims"])) in gaps:
            what, reason = "undecided", "a premise is not proved at this size"
        results.append({"n": max(e["dims"]), "outcome": what,
                        "counterexample": e["counterexample"] if what == "counterexample" else None,
                        "theorem": r["theorem"], "statement": e["statement"], "dims": list(e["dims"]),
                        "wrong": e["wrong"], "confirmed": e["confirmed"], "lhs": e.get("lhs"), "rhs": e.get("rhs"),
                        "reason": reason, "scope": e.get("for_every"), "z3": z3_text(e), "cvc5": e.get("cvc5") or None,
                        "seconds": e["seconds"], "cvc5_seconds": e.get("cvc5_seconds")})
    return {"theorem": asked[0] if len(asked) == 1 else list(asked), "results": results}
