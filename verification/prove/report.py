"""Tables of the SMT campaign, rendered from its findings (:mod:`verification.prove.findings`, stored
records only, never recomputed): ``prove-sizes`` (every statement and size), ``prove-reach``
(:func:`reach_table`) and ``prove-symmetry`` (:func:`symmetry_table`, which the paper shows too).
Each row shows z3's and cvc5's answers and times on the same query texts; a size counts as proved
only where both proved it and every premise of the statement (either encoding) is proved at its size
too. :func:`alarms` prints every way the stored answers contradict the registry or each other.

A plan of user theorems over theory.expr (``--theory FILE.py``) is reported per theorem and size
instead (:func:`expr_report`, the table ``prove-expr``): proved (for what: ``extra["for_every"]``), a
counterexample (its exact matrices and parameters as p/q, re-checked: both exact sides), or undecided
at the timeout. :func:`json_result` is what
``--json`` prints, for either kind of plan."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Optional

from verification.prove.findings import Answer, Findings, latest, of_records, premise_gaps, size_key, \
    symmetry, z3_answer
from verification.report.tables import Table, print_table, write_table

COLUMNS = ("theorem", "statement", "encoding", "size", "result", "z3", "z3 seconds", "cvc5", "cvc5 seconds",
           "queries", "variables", "query chars", "re-check")
SUMMARY_COLUMNS = ("theorem", "statement", "encoding", "proved for all sizes up to", "seconds there",
                   "cvc5 seconds there", "first undecided", "counterexamples")
SYMMETRY_COLUMNS = ("statement", "size", "exhaustive z3", "split z3", "exhaustive cvc5", "split cvc5", "agree",
                    "exhaustive queries", "split queries")


def recheck_text(a: Answer) -> str:
    """The exact re-check of a model, in words ("-" without a model)."""
    if a.smt != "counterexample":
        return "-"
    if a.confirmed is None:
        return "model not rational"
    suite = {True: ", suite agrees", False: ", SUITE DISAGREES", None: ""}[a.suite_agrees]
    return ("confirmed" if a.confirmed else "NOT confirmed") + suite


def result_text(a: Answer) -> str:
    if a.wrong:
        return f"{a.smt} ({'expected' if a.refuted else 'EXPECTED a counterexample'})"
    return a.smt


def rows(answers: Iterable[Answer]) -> list[tuple]:
    """One row per stored (statement, size), true statements first, sizes increasing."""
    ans = sorted(answers, key=lambda a: (a.wrong, a.statement, size_key(a.dims)))
    return [(a.theorem, a.statement, a.encoding, a.shape, result_text(a), a.z3, a.seconds, a.cvc5 or "-",
             a.cvc5_seconds, a.queries, a.variables, a.size_chars, recheck_text(a)) for a in ans]


def reach_table(found: Findings, campaign: str, command: str) -> Table:
    """``prove-reach``: per true statement, proved for all sizes up to (None: not even the first),
    the seconds there, the first undecided size and the counterexamples (a true statement: 0);
    ``command``: the plan's (:meth:`verification.prove.checks.Plan.command`)."""
    rows = [(r.theorem, r.statement, r.encoding, r.largest, r.seconds, r.cvc5_seconds, r.undecided, r.counterexamples)
            for r in found.reach]
    return Table.from_rows("prove-reach", rows, SUMMARY_COLUMNS, "Dobrushin statements: proved for all sizes up to",
                           f"campaign {campaign}", campaigns=(campaign,), command=command)


def agree_text(agree: Optional[bool]) -> str:
    return "-" if agree is None else "yes" if agree else "NO"


def symmetry_table(found: Findings, campaign: str, command: str) -> Table:
    """``prove-symmetry``: per bound and size, each solver's answer for its exhaustive and its split
    encoding, whether they agree, and the queries of each."""
    rows = [(s.bound, s.shape, s.exhaustive_z3, s.split_z3, s.exhaustive_cvc5 or "-", s.split_cvc5 or "-",
             agree_text(s.agree), s.exhaustive_queries, s.split_queries) for s in found.symmetry]
    return Table.from_rows("prove-symmetry", rows, SYMMETRY_COLUMNS,
                           "The symmetry reduction checked: the bounds without symmetry (every pair, column set "
                           "and sign pattern) against the symmetry-reduced split, per solver",
                           f"campaign {campaign}", campaigns=(campaign,), command=command)


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> int:
    """The tables of ``plan``'s stored records (:func:`verification.prove.checks.plan_records`),
    under ``out_dir/tables`` and on the console, then its alarms (:func:`alarms`): 1 when one rang."""
    from verification.prove.checks import plan_records

    records = plan_records(store, plan)
    if getattr(plan, "expr", False):
        return expr_report(records, plan, Path(out_dir) / "tables", console)
    report_findings(of_records(records), plan, Path(out_dir) / "tables", console)
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


def report_findings(found: Findings, plan: Any, tables: Optional[Path], console: Any) -> None:
    """Print (and write under ``tables``) the per-size table, the reach summary and the symmetry
    comparison of ``plan``'s findings."""
    campaign = plan.campaign
    prov = f"campaign {campaign}"
    detail = rows(found.answers)
    cmd = plan.command()
    summary, symmetry = reach_table(found, campaign, cmd), symmetry_table(found, campaign, cmd)
    if console is not None:
        print_table(console, detail, COLUMNS, f"SMT: every statement and size ({campaign})")
        print_table(console, summary.rows(), summary.columns(), "SMT: proved for all sizes up to")
        print_table(console, symmetry.rows(), symmetry.columns(), "SMT: the symmetry reduction checked")
    if tables is not None:
        write_table(detail, COLUMNS, "prove-sizes", "Dobrushin statements through z3 and cvc5, per size", prov, tables)
        summary.write(tables)
        symmetry.write(tables)


def symmetry_disagreements(records: Iterable[dict]) -> list[str]:
    return [f"{s.bound} at {s.shape}: the exhaustive encoding says z3 {s.exhaustive_z3} / cvc5 "
            f"{s.exhaustive_cvc5 or '-'}, the split z3 {s.split_z3} / cvc5 {s.split_cvc5 or '-'}"
            for s in symmetry(records) if s.agree is False]


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
            times = f"z3 {z3_answer(e)} in {e['seconds']:.2f} s, {cvc5}"
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
    recs = sorted(latest(records), key=lambda r: (r["extra"]["statement"], size_key(r["extra"]["dims"])))
    return [(r["theorem"], r["extra"]["shape"], outcome(r["extra"]), z3_answer(r["extra"]), r["extra"]["seconds"],
             r["extra"].get("cvc5") or "-", r["extra"].get("cvc5_seconds"), recheck_text(Answer.of(r)),
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
    recs = sorted(latest(records), key=lambda r: (order.get(r["extra"]["statement"], len(order)), size_key(r["extra"]["dims"])))
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
                        "reason": reason, "scope": e.get("for_every"), "z3": z3_answer(e), "cvc5": e.get("cvc5") or None,
                        "seconds": e["seconds"], "cvc5_seconds": e.get("cvc5_seconds")})
    return {"theorem": asked[0] if len(asked) == 1 else list(asked), "results": results}
