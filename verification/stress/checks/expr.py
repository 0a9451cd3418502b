"""One chunk of a stress sweep of a statement over :mod:`theory.expr` (a user's theorem): draw every
symbol of the chunk's instances from its own generators (:mod:`verification.stress.checks.draws`:
stochastic, logits and tokens matrices, parameters), decide every instance with the compiled
statement (:func:`numerics.expr.decide`: floats where the margin exceeds the rigorous error bound,
exact or certified arithmetic for the rest and for every equality), store one summary (the sweep's
layout, :mod:`verification.stress.checks.summaries`) and the records worth keeping.

A violated instance is re-checked on its exact values (:func:`exact_instance`: its matrices as the
exact rationals they stand for, a stochastic one's rows summing to exactly 1; its parameters) by
the exact or certified evaluator, hypotheses and ``where=`` included (:func:`recheck`), before it is
stored; its record carries the counterexample, every symbol as ``"p/q"`` strings (matrices as rows,
a parameter as one string: ``extra["counterexample"]``) and both exact sides. Records speak the theorem's
vocabulary (:mod:`theory.verdicts`): a proved theorem's violated instance is ``violated`` (the campaign
runner stops loudly), a conjecture's is ``refuted`` (a finding: stored, reported). The summary's
counts are per-instance verdicts of the bound in both cases.

With an equality condition (``Theorem.equality_condition``, a predicate on the exact matrices) every
instance's exact matrices are handed to it and the summary counts where it agrees with the exact tight
verdicts (``condition``: tight and said, tight and missed, said but not tight); the first disagreements
are kept as records.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from numerics.dobrushin.batch import TIGHT, UNDECIDED, VIOLATED
from theory.verdicts import Code
from verification.campaign import ChunkResult
from verification.store import Record
from verification.stress.checks.draws import Law, draw_values, exact_values
from verification.stress.checks.campaigns import chunk_key
from verification.stress.checks.plan import chunk_size, provenance
from verification.stress.checks.summaries import keep, summarise

KEEP_VIOLATED = 16          # violated instances stored in full per chunk (every one is counted)
KEEP_MISMATCH = 8           # equality-condition disagreements stored per chunk


def spec_part(theorem: str) -> dict:
    """What a worker needs of the theorem (the compiled statement, with its hypotheses and
    ``where=``, travels: no theory file is needed where the chunk runs, unless the theorem has an
    equality condition)."""
    from numerics.expr import compile_statement
    from theory import get
    from theory.plugins import source
    from verification.stress.checks.draws import Law

    th = get(theorem)
    compiled = compile_statement(th.statement, th.assume, th.where)
    return {"compiled": compiled, "category": th.category, "source": source(theorem),
            "condition": th.equality_condition is not None, "assume": tuple(th.assume), "law": Law.of(compiled)}


def exact_text(x: Any) -> str:
    """A Fraction as "p/q" (or "p"); an exact transcendental value or a certified ball as it prints."""
    if not isinstance(x, Fraction):
        return str(x)
    return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)


def exact_instance(compiled: Any, values: dict, b: int) -> tuple[dict, Any, Any]:
    """Instance ``b`` of a batch of ``values`` (matrices (B, rows, cols), parameters B values) as
    the exact values it stands for ({"A": rows of Fractions, ..., "alpha": Fraction}) and its exact
    (or certified) sides (:func:`numerics.expr.sides`)."""
    from numerics.expr.certified import batches, sides

    one = {k: (v[b:b + 1] if isinstance(v, np.ndarray) else [v[b]]) for k, v in values.items()
           if k in compiled.matrices or k in {p for p, _, _ in compiled.params}}
    inst = batches(compiled, one).instance(0)
    lhs, rhs = sides(compiled, inst)
    return {**inst.matrices, **inst.params}, lhs, rhs


def as_text(instance: dict) -> dict:
    """An exact instance as the counterexample's strings: a matrix as rows of "p/q", a parameter as
    one "p/q"."""
    return {name: ([[exact_text(x) for x in r] for r in v] if isinstance(v, list) else exact_text(v))
            for name, v in instance.items()}


def violates(compiled: Any, lhs: Any, rhs: Any) -> bool:
    """The exact (or certified) sides violate the statement: lhs > rhs (>= for a strict bound,
    lhs != rhs for an equality)."""
    from numerics.expr import compare

    c = compare(lhs, rhs)
    if c is None:
        return False
    return c != 0 if compiled.equal else c >= 0 if compiled.strict else c > 0


def recheck(compiled: Any, counterexample: dict, assume: tuple = ()) -> tuple[bool, str]:
    """(whether the exact instance ``counterexample`` ({"A": rows of "p/q" or Fractions, ...,
    "alpha": "p/q"}) violates the statement, why not), from the exact values alone: every symbol's
    kind, shape and the hypotheses ``assume`` (:class:`theory.hypotheses.DerivedHypothesis`, exact), every
    ``where=`` relation true, the sides certified to violate it."""
    from numerics.expr.certified import Undefined, instance, values_of
    from numerics.expr.decide import VIOLATED, settle
    from theory.hypotheses import DerivedHypothesis

    h = DerivedHypothesis(compiled.matrices, tuple(assume), compiled.roles, compiled.params)(counterexample)
    if not h:
        return False, h.reason
    try:
        vals = values_of(compiled, instance(compiled, counterexample))
    except Undefined as exc:
        return False, f"the statement is undefined there ({exc})"
    code, _ = settle(compiled, vals)
    if code != VIOLATED:
        return False, f"the exact check says {('holds', 'tight', 'violated', 'not-applicable', 'undecided')[code]}"
    return True, ""


def _condition(theorem: str, source: str) -> Any:
    """The theorem's equality condition, loading its theory file here when this process has not."""
    from theory import registry

    th = registry.REGISTRY.get(theorem)
    if th is None and source not in ("built-in",) and not source.startswith("entry point"):
        from theory.plugins import load_file

        load_file(source)
        th = registry.REGISTRY.get(theorem)
    if th is None:
        registry.load_all()
        th = registry.REGISTRY.get(theorem)
    return None if th is None else th.equality_condition


def run_chunk(spec: dict, k: int) -> ChunkResult:
    """Chunk ``k`` of the cell ``spec`` (theorem, family, n, seed, sampler, and :func:`spec_part`)."""
    from numerics.expr import decide

    theorem, family, n, seed = spec["theorem"], spec["family"], spec["n"], spec["seed"]
    sampler, compiled = spec.get("sampler", "counter"), spec["compiled"]
    law = spec.get("law") or Law.of(compiled)
    size = spec.get("count") or chunk_size(n)
    mats = draw_values(law, family, n, spec.get("d"), k, seed, sampler, size)
    d = decide(compiled, mats, tuple(spec.get("assume", ())))
    codes = d.codes.astype(np.int64)
    na = codes == Code.NOT_APPLICABLE             # undefined there, or outside the theorem's hypotheses
    v = np.where(na | (codes == Code.UNDECIDED), UNDECIDED, codes)      # counted as undecided
    with np.errstate(invalid="ignore"):
        slack = np.where(na, np.nan, d.rhs - d.lhs)
    slack = np.where(codes == TIGHT, 0.0, slack)
    body = summarise(v, np.nan_to_num(slack, nan=np.inf), d.exact)
    if na.any():
        undecided = int((codes == Code.UNDECIDED).sum())
        body["counts"].pop("undecided", None)
        if undecided:
            body["counts"]["undecided"] = undecided
        body["counts"]["not-applicable"] = int(na.sum())
    body["rational"] = d.rational_count
    body["device"] = "cpu"
    prov = provenance(theorem, family, n, k, seed, sampler=sampler, size=size)
    if spec.get("d") is not None:
        prov["d"] = spec["d"]
    key = chunk_key(family, n, k, d=spec.get("d"))
    proved = spec["category"] in ("proved", "sanity")
    kept = keep(v, np.nan_to_num(slack, nan=np.inf))
    violated = [i for i, why in kept.items() if why == "violated"]
    for i in violated[KEEP_VIOLATED:]:
        kept.pop(i)
    records = []
    for i, why in sorted(kept.items()):
        extra: dict[str, Any] = {"kept": "not-applicable" if na[i] else why, "exact_path": bool(d.exact[i])}
        verdict = "not-applicable" if na[i] else Code(int(v[i])).verdict.value
        if v[i] == VIOLATED and not na[i]:
            rows, lhs, rhs = exact_instance(compiled, mats, i)
            cex = as_text(rows)
            ok, why = recheck(compiled, cex, tuple(spec.get("assume", ())))   # re-checked before it is reported
            if not ok or not violates(compiled, lhs, rhs):
                raise RuntimeError(f"{theorem}: instance {key}/i{i} was decided violated but its exact sides are "
                                   f"{lhs} and {rhs} ({why or 'not violated'}): a bug in numerics.expr")
            extra.update(counterexample=cex, **compiled.as_written(exact_text(lhs), exact_text(rhs)))  # as written
        if not proved:
            verdict = {"holds": "supported", "tight": "supported", "violated": "refuted",
                       "not-applicable": "not-testable", "undecided": "inconclusive"}[verdict]
            extra.update(statistic=float(slack[i]) if np.isfinite(slack[i]) else None,
                         interval=None, method="exact verdict of the bound on this instance (statistic: its slack, "
                                "negative where it fails)")
        records.append(Record(theorem, f"{key}/i{i}", verdict, slack=float(slack[i]) if np.isfinite(slack[i])
                              else None, value=float(d.lhs[i]), bound=float(d.rhs[i]), backend="numerics.expr",
                              provenance={**prov, "index": int(i)}, extra=extra))
    if spec.get("condition"):
        body["condition"], mismatch = check_condition(spec, compiled, mats, codes)
        for i, rows, said, lhs, rhs in mismatch[:KEEP_MISMATCH]:
            # the instance, what the condition said and what exact arithmetic says
            extra = {"kept": "condition-mismatch", "tight": bool(codes[i] == TIGHT), "condition_said": said,
                     "instance": as_text(rows),
                     "lhs": exact_text(lhs), "rhs": exact_text(rhs), "relation": compiled.relation}
            verdict = ("holds", "tight", "violated")[codes[i]] if proved else "supported"
            if not proved:
                extra.update(statistic=0.0, interval=None, method="equality condition against the exact verdict")
            records.append(Record(theorem, f"{key}/i{i}/condition", verdict, slack=float(slack[i]),
                                  backend="numerics.expr", provenance={**prov, "index": int(i)}, extra=extra))
    return ChunkResult(records, {theorem: body})


def check_condition(spec: dict, compiled: Any, mats: dict, codes: np.ndarray) -> tuple[dict, list]:
    """The equality condition on every decided instance's exact matrices against its exact verdict:
    the tally, and per disagreement (index, exact matrices, what the condition said, exact sides)."""
    condition = _condition(spec["theorem"], spec.get("source", "built-in"))
    if condition is None:
        return {"checked": 0, "why": "the theorem's equality condition is not available here"}, []
    tally = {"checked": 0, "tight_said": 0, "tight_missed": 0, "said_not_tight": 0}
    mismatch = []
    for i in np.flatnonzero(codes < Code.NOT_APPLICABLE):   # neither not-applicable nor undecided
        rows, lhs, rhs = exact_instance(compiled, mats, int(i))
        said, tight = condition_says(spec["theorem"], condition, rows,
                                      f"a {spec['family']} n = {spec['n']} instance (i{int(i)})"), codes[i] == TIGHT
        tally["checked"] += 1
        if said and tight:
            tally["tight_said"] += 1
        elif tight:
            tally["tight_missed"] += 1
            mismatch.append((int(i), rows, said, lhs, rhs))
        elif said:
            tally["said_not_tight"] += 1
            mismatch.append((int(i), rows, said, lhs, rhs))
    return tally, mismatch


def condition_says(theorem: str, condition: Any, rows: dict, where: str) -> bool:
    """The user's equality condition on one instance's exact matrices; anything it raises is the
    user's error (InvalidInput naming the theorem, the instance and the exception, one line)."""
    from theory.errors import InvalidInput

    try:
        return bool(condition(rows))
    except Exception as exc:
        msg = str(exc).splitlines()[0] if str(exc) else ""
        raise InvalidInput(f"{theorem}: its equality_condition raised {type(exc).__name__}"
                           f"{': ' + msg if msg else ''} on {where} (it takes {{'A': rows of Fractions, ...}} "
                           "and returns True or False)") from None


def check_condition_first(plan: Any) -> None:
    """Call the theorem's equality condition on the first instance of the plan's first cell that
    meets its hypotheses, before anything is created: one that raises is refused in one line
    (:func:`condition_says`), and no store is made for it."""
    from theory import get

    if plan.spec.kind != "expr":             # a built-in theorem: no condition of the user's to call
        return
    th = get(plan.theorem)
    if th.equality_condition is None or not th.is_expr:
        return
    law = spec_part(plan.theorem)["law"]
    family, n, x, _ = plan.cells()[0]
    d = x if plan.axis == "d" else None
    size = min(64, plan.chunk_of(n, x))
    values = draw_values(law, family, n, d, 0, plan.seed, plan.sampler, size)
    for b in range(size):
        exact = exact_values(values, law, b)
        if th.hypotheses(exact):
            condition_says(plan.theorem, th.equality_condition, exact, f"{plan.key(family, n, 0, x)}/i{b}")
            return


def chunks(plan: Any) -> list:
    """The chunks of a sweep of a statement over theory.expr: ``run_chunk(spec, k)``."""
    from verification.campaign import Chunk

    part = spec_part(plan.theorem)
    out = []
    for f, n, x, count in plan.cells():
        spec = {"theorem": plan.theorem, "family": f, "n": n, "count": plan.chunk_of(n, x), "seed": plan.seed,
                "sampler": plan.sampler, "d": x if plan.axis == "d" else None, **part}
        out += [Chunk(plan.key(f, n, k, x), run_chunk, (spec, k)) for k in range(count)]
    return out

