"""The Dobrushin campaign of the main job: Theorems D1 and D2 on random row-stochastic families.

Families (rows i.i.d. unless said): ``dirichlet`` (uniform on the simplex), ``softmax-T`` (softmax of
standard Gaussian logits / T), ``sparse`` (Dirichlet(1) on a random support of ceil(n/4) entries:
exact zeros), ``hard`` (one-hot), ``causal`` (softmax of Gaussian logits under a causal mask).
For every instance: D1's verdict (exact), its slack by the closed form, and an independent check
that delta((I+A)/2) <= (1+delta(A))/2 by computing both sides directly; for pairs (P, Q) of the same
family: D2's verdict (exact) and delta(PQ) <= delta(P) delta(Q) checked directly. A violation
beyond the rigorous float error is stored as ``violated`` and stops the run loudly.

Chunks of instances are stored one transaction each; re-running the same command resumes.
"""
from __future__ import annotations

import argparse
import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

import numpy as np
from rich.progress import Progress

from numerics.dobrushin import dobrushin, factor_check, float_error, product_equality
from numerics.stochastic import UNIT_ROUNDOFF, as_stochastic
from theory.verdicts import Verdict, ViolationError
from verification.stats import share_text
from verification.store import Record
from verification.tables import print_table, write_table

SECTION = "dobrushin"
FAMILIES = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4", "sparse", "hard", "causal")
SIZES = (2, 3, 4, 5, 8, 16, 32, 64, 128)
CHUNK = 50
VERSION = "v1"  # bump when the sampling or the checks change: a new campaign, not a resume


@dataclass(frozen=True)
class Plan:
    families: tuple[str, ...] = FAMILIES
    sizes: tuple[int, ...] = SIZES
    seed: int = 0
    full: bool = False

    def instances(self, n: int) -> int:
        base = 200 if n <= 16 else 100 if n <= 64 else 50
        return base * (10 if self.full else 1)

    @property
    def campaign(self) -> str:
        return f"dobrushin.random-{VERSION}-seed{self.seed}-{'full' if self.full else 'quick'}"


def _family_id(family: str) -> int:
    return int.from_bytes(hashlib.sha256(family.encode()).digest()[:4], "little")


def sample(family: str, n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` row-stochastic n x n matrices of ``family``, float64, (count, n, n)."""
    if family == "dirichlet":
        return rng.dirichlet(np.ones(n), size=(count, n))
    if family.startswith("softmax-T"):
        T = float(family[len("softmax-T"):])
        z = rng.standard_normal((count, n, n)) / T
        z -= z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)
    if family == "sparse":
        k = max(1, -(-n // 4))
        w = rng.dirichlet(np.ones(k), size=(count, n))
        out = np.zeros((count, n, n))
        cols = np.argsort(rng.random((count, n, n)), axis=-1)[..., :k]
        np.put_along_axis(out, cols, w, axis=-1)
        return out
    if family == "hard":
        out = np.zeros((count, n, n))
        np.put_along_axis(out, rng.integers(0, n, (count, n, 1)), 1.0, axis=-1)
        return out
    if family == "causal":
        z = rng.standard_normal((count, n, n))
        z = np.where(np.tril(np.ones((n, n), dtype=bool)), z, -np.inf)
        z -= z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)
    raise ValueError(f"unknown family {family!r}; known: {FAMILIES}")


def check_chunk(family: str, n: int, chunk: int, count: int, seed: int) -> list[Record]:
    """All records of one chunk: D1 on ``count`` matrices, D2 on ``count // 2`` pairs."""
    ss = np.random.SeedSequence([seed, _family_id(family), n, chunk])
    rng = np.random.default_rng(ss)
    A = sample(family, n, count, rng)
    prov = {"generator": "numpy.default_rng(SeedSequence([seed, family_id, n, chunk]))", "seed": seed,
            "family": family, "n": n, "chunk": chunk}
    out: list[Record] = []

    # Theorem D1 -----------------------------------------------------------------------------
    fc = factor_check(A)
    Ahat = 0.5 * (np.eye(n) + A)
    value = dobrushin(Ahat)                     # delta((I+A)/2), computed directly
    dA = dobrushin(A)
    bound = (1 + dA) / 2
    # rigorous bound on the float error of each side (rounding + exact renormalisation of the rows;
    # forming Ahat rounds only the diagonal): a "violated" verdict is certified, never a guess
    err = 2 * float_error(as_stochastic(A, "A").row_dev, n) + 2 * UNIT_ROUNDOFF
    for k in range(count):
        direct = bound[k] - value[k]
        verdict = Verdict.TIGHT if fc.equality[k] else Verdict.HOLDS
        if direct < -err[k] or abs(direct - fc.slack[k]) > 2 * err[k]:
            verdict = Verdict.VIOLATED          # the bound, or its closed form, fails: a bug or a false claim
        out.append(Record("dobrushin.factor", f"{family}/n{n}/c{chunk}/i{k}", verdict,
                          slack=float(fc.slack[k]), value=float(value[k]), bound=float(bound[k]),
                          provenance={**prov, "index": k},
                          extra={"exact_path": bool(fc.exact[k]), "through_first": bool(fc.through_first[k]),
                                 "through_other": bool(fc.through_other[k]), "delta_A": float(dA[k]),
                                 "pair": [int(v) for v in fc.pair[k]]}))

    # Theorem D2 on pairs (A[2k], A[2k+1]) -------------------------------------------------------
    P, Q = A[0::2][: count // 2], A[1::2][: count // 2]
    eq = product_equality(P, Q)
    dP, dQ, dPQ = dobrushin(P), dobrushin(Q), dobrushin(P @ Q)
    # each row of the float product is off by <= gamma_n in l1 (stochastic factors), and each of the
    # three deltas carries float_error: together at most 4 float_error
    err2 = 4 * float_error(np.maximum(as_stochastic(P, "P").row_dev, as_stochastic(Q, "Q").row_dev), n)
    for k in range(len(P)):
        b = dP[k] * dQ[k]
        verdict = Verdict.TIGHT if eq[k] else Verdict.HOLDS
        if dPQ[k] > b + err2[k]:
            verdict = Verdict.VIOLATED
        out.append(Record("dobrushin.product", f"{family}/n{n}/c{chunk}/p{k}", verdict,
                          slack=float(b - dPQ[k]), value=float(dPQ[k]), bound=float(b),
                          provenance={**prov, "pair": [2 * k, 2 * k + 1]}))
    return out


def run_campaign(store, plan: Plan, console=None) -> None:
    """Check every chunk of ``plan`` not yet in ``store``; raise ViolationError after storing any."""
    done = store.done_chunks(plan.campaign)
    todo = [(f, n, c) for f in plan.families for n in plan.sizes
            for c in range(-(-plan.instances(n) // CHUNK)) if f"{f}/n{n}/c{c}" not in done]
    violations = []
    with Progress(console=console, transient=False) as bar:
        task = bar.add_task(f"D1/D2 on random families ({len(done)} chunks stored)", total=len(todo))
        for f, n, c in todo:
            count = min(CHUNK, plan.instances(n) - c * CHUNK)
            recs = check_chunk(f, n, c, count, plan.seed)
            store.write_chunk(plan.campaign, f"{f}/n{n}/c{c}", recs)
            violations += [r for r in recs if r.verdict == Verdict.VIOLATED]
            bar.advance(task)
    if violations:
        v = violations[0]
        raise ViolationError(f"{len(violations)} violated record(s) stored in campaign {plan.campaign}; "
                             f"first: {v.theorem} on {v.instance} (slack {v.slack})")


COLUMNS = ("family", "n", "instances", "D1 equality [95% CI]", "D1 only via token 0", "D1 via exact path",
           "D2 pairs", "D2 equality [95% CI]", "min strict D1 slack", "violated", "undecided")


def summarise(records: Iterable[dict]) -> list[tuple]:
    """Aggregate stored records (never recomputes) into the main table's rows."""
    acc: dict = defaultdict(lambda: {"d1": 0, "d1_eq": 0, "d1_first": 0, "d1_exact": 0, "d2": 0, "d2_eq": 0,
                                     "slack": float("inf"), "viol": 0, "und": 0})
    for r in records:
        p = r["provenance"]
        a = acc[(p["family"], p["n"])]
        a["viol"] += r["verdict"] == "violated"
        a["und"] += r["verdict"] == "undecided"
        if r["theorem"] == "dobrushin.factor":
            a["d1"] += 1
            a["d1_eq"] += r["verdict"] == "tight"
            a["d1_exact"] += bool(r["extra"].get("exact_path"))
            a["d1_first"] += bool(r["extra"].get("through_first")) and not r["extra"].get("through_other")
            if r["slack"] is not None and r["verdict"] == "holds":
                a["slack"] = min(a["slack"], r["slack"])
        else:
            a["d2"] += 1
            a["d2_eq"] += r["verdict"] == "tight"
    order = {f: i for i, f in enumerate(FAMILIES)}
    rows = []
    for (f, n), a in sorted(acc.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])):
        rows.append((f, n, a["d1"], share_text(a["d1_eq"], a["d1"]), share_text(a["d1_first"], a["d1"]),
                     a["d1_exact"], a["d2"],
                     share_text(a["d2_eq"], a["d2"]), None if a["slack"] == float("inf") else a["slack"],
                     a["viol"], a["und"]))
    return rows


def report(store, plan: Plan, out_dir, console) -> list[tuple]:
    rows = summarise(r for r in store.records(plan.campaign)
                     if r["provenance"]["family"] in plan.families and r["provenance"]["n"] in plan.sizes)
    caption = ("Theorem D1 (delta((I+A)/2) <= (1+delta(A))/2) and D2 (delta(PQ) <= delta(P)delta(Q)) "
               "on random row-stochastic matrices: share of instances with exact equality")
    prov = (f"campaign {plan.campaign}; numpy default_rng seeded by SeedSequence([{plan.seed}, family, n, chunk]); "
            f"chunks of {CHUNK}; verdicts exact (Fraction), never by tolerance")
    write_table(rows, COLUMNS, "dobrushin_random", caption, prov, out_dir)
    print_table(console, rows, COLUMNS, "Dobrushin rollout factor (D1) and submultiplicativity (D2)")
    return rows


def verify_section(ctx) -> None:
    plan = Plan(seed=ctx.seed, full=not ctx.quick)
    ctx.console.rule("[bold]Dobrushin coefficient: Theorems D1 and D2 on random families")
    run_campaign(ctx.store, plan, ctx.console)
    report(ctx.store, plan, ctx.tables, ctx.console)


def _softmax_family(name: str) -> bool:
    """``softmax-T<temperature>`` with a positive finite temperature."""
    if not name.startswith("softmax-T"):
        return False
    try:
        T = float(name[len("softmax-T"):])
    except ValueError:
        return False
    return 0 < T < float("inf")


def check_plan(plan: Plan) -> None:
    """Refuse a plan whose chunks would exceed the memory budget (before computing anything)."""
    from verification.options import chunk_memory, check_memory

    n = max(plan.sizes)
    check_memory(f"--sizes {n}", chunk_memory(n, min(CHUNK, plan.instances(n))))


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verification.cli import make_console
    from verification.store import ResultStore

    plan = Plan(families=args.families or FAMILIES, sizes=args.sizes or SIZES, seed=args.seed, full=args.full)
    check_plan(plan)
    console = make_console()
    with ResultStore(args.db) as store:
        run_campaign(store, plan, console)
        report(store, plan, Path(args.out) / "tables", console)
    return 0


def register(sub) -> None:
    from verification.options import add_common, int_list, name_list

    p = sub.add_parser("dobrushin", help="Theorems D1/D2 on random stochastic families (resumable)")
    add_common(p)
    p.add_argument("--families", default=None, type=name_list(FAMILIES, "family", accept=_softmax_family),
                   help=f"comma-separated, default all: {','.join(FAMILIES)} (or softmax-T<temperature>)")
    p.add_argument("--sizes", default=None, type=int_list(2, "size"),
                   help="comma-separated n >= 2 (Theorem D1 needs two tokens), default 2,3,4,5,8,16,32,64,128")
    p.add_argument("--full", action="store_true", help="10x the quick instance counts")
    p.set_defaults(func=_cmd)
