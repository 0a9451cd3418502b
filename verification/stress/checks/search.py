"""The guided search: steer toward tight and near-tight instances, and toward counterexamples.

Two engines, both scoring an instance with the sweep's own certified check
(:func:`numerics.dobrushin.batch.check_batch`: float filter, exact certification):

* **hypothesis** (:func:`hypothesis_search`): matrices from the adversarial strategies of
  :mod:`verification.testing.strategies` (floats, dyadic rationals full of ties, 2^-50 near-ties),
  with ``target()`` on -log10(slack) and on -log10(distance to a tie) (the gap between the two
  largest d_ij), so generation drifts toward near-tight and near-tied cases. A violated instance
  is raised inside the test, so hypothesis shrinks it to a minimal counterexample.
* **local optimiser** (:func:`descend`): from a strict instance, projected moves on the simplex
  rows (move 2^-k of mass between two entries of one row, on a dyadic grid so that rows sum to
  exactly 1 and ties are exact), accepting a move that lowers the certified slack; ``goal="tight"``
  stops at a certified tight instance, ``goal="near"`` stays strict and drives the slack down.

Causal pairs (``dobrushin.product.causal``, :func:`causal_score`): D2's certified equality verdict
against the exact causal condition, from tie- and zero-heavy causal starts (:func:`causal_starts`,
hypothesis' ``causal`` strategy), the optimiser moving mass only within the lower triangle.

A statement over theory.expr (a user's: any kind of symbol, parameters included) is searched by
:mod:`verification.stress.checks.hunt`, the same two engines over every kind of symbol, only inside
its hypotheses and ``where=``; its violated finds are re-checked on their exact values and stored
with their counterexample, every symbol exact.

A violation of a proved theorem found by either engine is shrunk (:func:`shrink`), scored again
(the record carries the shrunk instance's own verdict, slack and size), stored, and stops the run
loudly (the campaign runner); a conjecture's would be a finding.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from verification.campaign import ChunkResult
from verification.store import Record
from numerics.dobrushin.batch import HOLDS, NAMES, TIGHT, UNDECIDED, VIOLATED

VERSION = "v1"
EXPR_VERSION = "v3"                  # statements over theory.expr: every kind of symbol (verification.stress.checks.hunt)
GRID = 2 ** 30                       # the optimiser's dyadic grid: entries k / 2^30, rows sum to 1 exactly


def search_campaign(theorem: str, seed: int) -> str:
    """``stress-search.<theorem>-v1-seed<seed>``; for a statement over theory.expr
    ``stress-search.<theorem>-v3-seed<seed>-stmt<digest>``, the digest of the statement with its
    hypotheses, parameters' intervals and ``where=`` (another statement under the same id is another
    campaign)."""
    from verification.stress.checks.specs import THEOREMS

    if theorem in THEOREMS:
        return f"stress-search.{theorem}-{VERSION}-seed{seed}"
    import hashlib

    from verification.stress.checks.specs import spec_of

    digest = hashlib.sha256(spec_of(theorem).statement.encode()).hexdigest()[:8]
    return f"stress-search.{theorem}-{EXPR_VERSION}-seed{seed}-stmt{digest}"


Scorer = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def scorer(theorem: str, device: str = "cpu") -> Scorer:
    """(verdict codes, slacks) of a batch of instances of ``theorem``: (B, n, n) matrices, or
    (B, 2, n, n) pairs for a product theorem; certified (the sweep's own check)."""
    from numerics.dobrushin.batch import check_batch

    if theorem == CAUSAL:
        return lambda X: causal_score(X, device)

    def score(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = X.reshape(-1, X.shape[-2], X.shape[-1])
        out = check_batch(theorem, A, device)
        return out["verdict"], out["slack"]
    return score


CAUSAL = "dobrushin.product.causal"     # causal pairs: D2's equality against the causal condition


def causal_score(X: np.ndarray, device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """(verdict codes, slacks) of causal pairs (B, 2, n, n): D2 by the sweep's certified check, and
    ``violated`` wherever its exact equality verdict and the causal condition
    (:func:`numerics.smt.causal.causal_product_condition`, exact) disagree, or D2 itself fails."""
    from numerics.smt.causal import causal_product_condition
    from numerics.dobrushin.batch import check_batch

    out = check_batch("dobrushin.product", X.reshape(-1, X.shape[-2], X.shape[-1]), device)
    v, s = out["verdict"].copy(), out["slack"]
    cond = causal_product_condition(X[:, 0], X[:, 1])
    v[(v != VIOLATED) & ((v == TIGHT) != cond)] = VIOLATED
    return v, s


def tie_distance(A: np.ndarray) -> float:
    """Gap between the two largest d_ij = 1/2 ||A_i - A_j||_1 (0 when delta is attained twice)."""
    n = A.shape[0]
    d = 0.5 * np.abs(A[:, None, :] - A[None, :, :]).sum(-1)[np.triu_indices(n, 1)]
    if len(d) < 2:
        return 1.0
    top = np.sort(d)[-2:]
    return float(top[1] - top[0])


@dataclass
class Found:
    """An instance the search keeps, with its certified verdict and slack."""

    matrix: np.ndarray
    verdict: int
    slack: float
    how: str
    evaluations: int = 0
    extra: dict = field(default_factory=dict)


class Counterexample(Exception):
    def __init__(self, matrix: np.ndarray):
        super().__init__("violated")
        self.matrix = matrix


_HOME: list = []


def private_hypothesis_home() -> None:
    """hypothesis keeps caches in ``.hypothesis/`` under the working folder even without an example
    database: this process's go to a temporary folder of its own (removed at exit), so a search
    writes nothing where it is run. ``HYPOTHESIS_STORAGE_DIRECTORY``, when set, is left to rule."""
    import os

    if _HOME or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    import atexit
    import shutil
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir

    home = tempfile.mkdtemp(prefix="attnbounds-hypothesis-")
    set_hypothesis_home_dir(home)
    atexit.register(shutil.rmtree, home, True)
    _HOME.append(home)


def hypothesis_search(theorem: str, n: int, budget: int, seed: int = 0, score: Optional[Scorer] = None,
                      product: bool = False, causal: bool = False, per: int = 2, positive: bool = False) -> list[Found]:
    """``budget`` hypothesis examples at size n; returns the smallest strict slack found, the first
    tight instance, and (shrunk by hypothesis) a violated one if any. ``causal``: causal matrices only;
    ``positive``: float and dyadic matrices (the scorer rules out any with a zero entry)."""
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    from verification.testing import strategies as S

    private_hypothesis_home()
    score = score or scorer(theorem)
    one = (S.causal(n=n) if causal else st.one_of(S.stochastic(n=n), S.dyadic(n=n)) if positive
           else st.one_of(S.stochastic(n=n), S.dyadic(n=n), S.near_tie(n=n), S.unnormalised(n=n)))
    strat = st.tuples(*[one] * per).map(lambda pq: np.stack(pq)) if product else one
    best: dict[str, Found] = {}
    count = [0]

    @hseed(seed)
    @settings(max_examples=budget, database=None, deadline=None, derandomize=False,
              phases=[Phase.generate, Phase.target, Phase.shrink], suppress_health_check=list(HealthCheck))
    @given(strat)
    def probe(X: np.ndarray) -> None:
        count[0] += 1
        v, s = score(X[None])
        v, s = int(v[0]), float(s[0])
        if v == VIOLATED:
            raise Counterexample(X)
        if v == HOLDS:
            target(-math.log10(max(s, 1e-300)), label="-log10 slack")
            if "near" not in best or s < best["near"].slack:
                best["near"] = Found(X.copy(), v, s, "hypothesis")
        elif v == TIGHT and "tight" not in best:
            best["tight"] = Found(X.copy(), v, 0.0, "hypothesis")
        tie = tie_distance(X[0] if product else X)
        target(-math.log10(max(tie, 1e-300)), label="-log10 tie distance")

    import warnings

    from hypothesis.errors import HypothesisDeprecationWarning

    try:
        with warnings.catch_warnings():   # on a Dask worker other threads draw from `random` meanwhile
            warnings.simplefilter("ignore", HypothesisDeprecationWarning)
            probe()
    except Counterexample as exc:                  # the last raise is hypothesis' shrunk example
        v, s = score(exc.matrix[None])
        best["violated"] = Found(exc.matrix, int(v[0]), float(s[0]), "hypothesis (shrunk)")
    for f in best.values():
        f.evaluations = count[0]
    return list(best.values())


def to_grid(A: np.ndarray) -> np.ndarray:
    """Integer rows summing to exactly GRID (A's rows rounded onto the dyadic grid)."""
    K = np.floor(A * GRID).astype(np.int64)
    rest = GRID - K.sum(-1)
    idx = np.argmax(A, axis=-1)
    np.put_along_axis(K, idx[..., None], np.take_along_axis(K, idx[..., None], -1) + rest[..., None], -1)
    return K


def moves(n_rows: int, n: int) -> np.ndarray:
    """Every single move (row, from column, to column), from != to: (n_rows n (n - 1), 3)."""
    r, a, b = np.meshgrid(np.arange(n_rows), np.arange(n), np.arange(n), indexing="ij")
    m = np.stack([r.ravel(), a.ravel(), b.ravel()], -1)
    return m[m[:, 1] != m[:, 2]]


def candidates(K: np.ndarray, M: np.ndarray, level: int) -> np.ndarray:
    """The batch of instances one step away from ``K`` (integer rows on the grid): for every move
    (row r, from a, to b) of :func:`moves`, shift t = 2^-level of mass (clipped at zero), all of
    entry (r, a) (an exact zero), and, for every other row r' of the same matrix, exactly the
    amount that makes entry (r, a) equal to entry (r', a) (an exact tie)."""
    n = K.shape[-1]
    flatK = K.reshape(-1, n)
    src = flatK[M[:, 0], M[:, 1]]                                   # entry (r, a) per move
    amounts = [np.minimum(GRID >> level, src), src]
    mat = M[:, 0] // n                                              # which matrix row r belongs to
    for off in range(1, n):
        other = mat * n + (M[:, 0] % n + off) % n
        amounts.append(np.clip(src - flatK[other, M[:, 1]], 0, None))
    t = np.concatenate(amounts)
    MM = np.tile(M, (len(amounts), 1))
    keep = t > 0
    t, MM = t[keep], MM[keep]
    C = np.repeat(K[None], len(t), axis=0)
    flat = C.reshape(len(t), -1, n)
    ar = np.arange(len(t))
    flat[ar, MM[:, 0], MM[:, 1]] -= t
    flat[ar, MM[:, 0], MM[:, 2]] += t
    return C


def descend(A0: np.ndarray, budget: int, score: Scorer, goal: str = "tight", causal: bool = False) -> Found:
    """Pattern search by projected moves on the simplex rows from ``A0``: each step scores every
    candidate of :func:`candidates` in one batch and takes the best that lowers the certified
    slack, else halves the step t (down to 2^-30). At most ``budget`` evaluations.
    ``goal="tight"`` stops at a certified tight instance; ``goal="near"`` accepts only strict
    instances (the slack driven toward 0 from above). ``causal``: mass moves only within the lower
    triangle (moves into a column above the diagonal are dropped)."""
    K = to_grid(A0)
    n = K.shape[-1]
    v, s = score((K / GRID)[None])
    cur_v, cur_s = int(v[0]), float(s[0])
    used, level = 1, 2
    M = moves(int(np.prod(K.shape[:-1])), n)
    if causal:
        M = M[M[:, 2] <= M[:, 0] % n]
    while level <= 30 and cur_v == HOLDS:
        C = candidates(K, M, level)[: budget - used]
        if not len(C):
            break
        v, s = score(C / GRID)
        used += len(C)
        if (v == VIOLATED).any():
            j = int(np.flatnonzero(v == VIOLATED)[0])
            return Found(C[j] / GRID, VIOLATED, float(s[j]), "optimiser", used)
        if goal == "tight" and (v == TIGHT).any():
            K, cur_v, cur_s = C[int(np.flatnonzero(v == TIGHT)[0])], TIGHT, 0.0
            break
        ok = np.flatnonzero((v == HOLDS) & (s < cur_s) & (s > 0))
        if len(ok):
            j = int(ok[np.argmin(s[ok])])
            K, cur_s = C[j], float(s[j])
        else:
            level += 1
        if used >= budget:
            break
    return Found(K / GRID, cur_v, cur_s, "optimiser", used)


def shrink(A: np.ndarray, still_bad: Callable[[np.ndarray], bool]) -> np.ndarray:
    """A smaller counterexample: drop tokens (principal submatrix, rows renormalised) and coarsen
    the entries (rows rounded onto grids 2^-1, 2^-2, ...) while ``still_bad`` holds."""
    best = A
    changed = True
    while changed and best.shape[-1] > 2:
        changed = False
        for k in range(best.shape[-1]):
            keep = [i for i in range(best.shape[-1]) if i != k]
            sub = best[..., keep, :][..., :, keep]
            if (sub.sum(-1) <= 0).any():
                continue
            sub = sub / sub.sum(-1, keepdims=True)
            if still_bad(sub):
                best, changed = sub, True
                break
    for bits in range(1, 31):
        g = 2 ** bits
        K = np.floor(best * g)
        K[..., 0] += g - K.sum(-1)
        if (K >= 0).all() and still_bad(K / g):
            return K / g
    return best


def search_chunk(theorem: str, n: int, budget: int, seed: int, device: str = "cpu",
                 expr: Optional[dict] = None) -> ChunkResult:
    """The search at size n: hypothesis (a quarter of the budget, at most 100 examples), then the optimiser from the strictest
    of a few seeded Dirichlet starts toward tight and toward near-tight; records of what it found. ``expr``: a
    statement over theory.expr (:func:`verification.stress.checks.expr.spec_part`: compiled, category), searched
    over every kind of symbol by :func:`verification.stress.checks.hunt.search_size`."""
    from numerics.sources.random import generator, sample
    from verification.stress.checks.specs import THEOREMS

    if expr is not None:
        return expr_chunk(theorem, n, budget, seed, expr)
    positive = False
    per, causal = (2 if THEOREMS[theorem].kind == "product" else 1), theorem == CAUSAL
    score = scorer(theorem, device)
    product = per > 1
    found = hypothesis_search(theorem, n, max(1, min(100, budget // 4)), seed, score, product=product, causal=causal,
                              per=per, positive=positive)
    rng = generator(seed, "search", n, 0)
    starts = sample("dirichlet", n, 16 * per, rng).reshape((16, per, n, n) if product else (16, n, n))
    if causal:                          # tie- and zero-heavy dyadic causal instances (floats exactly)
        starts = causal_starts(n, 16, seed, per)
        starts = starts if product else starts[:, 0]
    v, s = score(starts)
    strict = np.flatnonzero(v == HOLDS)
    if len(strict):
        A0 = starts[strict[np.argmax(s[strict])]]
        for goal in ("tight", "near"):
            f = descend(A0, max(1, 3 * budget // 8), score, goal, causal=causal)
            f.how = f"optimiser ({goal})"
            found.append(f)
    for f in found:
        if f.verdict == VIOLATED:
            def bad(M: np.ndarray) -> bool:
                return int(score(M[None])[0][0]) == VIOLATED
            f.matrix = shrink(f.matrix, bad)
            v, s = score(f.matrix[None])           # the shrunk instance's own verdict and slack
            f.verdict, f.slack = int(v[0]), float(s[0])
            f.extra["shrunk"] = True
    records = [Record(theorem, f"n{n}/b{budget}/{i}", verdict_name(f.verdict, None), slack=f.slack, backend=device,
                      provenance={"search": VERSION, "seed": seed, "n": int(f.matrix.shape[-1]), "budget": budget,
                                  "how": f.how, **({"searched_n": n} if f.matrix.shape[-1] != n else {})},
                      extra={"matrix": [[float(x).hex() for x in row] for row in f.matrix.reshape(-1, f.matrix.shape[-1])],
                             "shape": list(f.matrix.shape), "evaluations": f.evaluations, **f.extra})
               for i, f in enumerate(found)]
    summary = {"n": n, "budget": budget, "found": len(found),
               "tight": sum(f.verdict == TIGHT for f in found), "violated": sum(f.verdict == VIOLATED for f in found),
               "min_slack": min((f.slack for f in found if f.verdict == HOLDS), default=None)}
    return ChunkResult(records, {theorem: summary})


def verdict_name(code: int, expr: Optional[dict]) -> str:
    """The record's verdict: the sweep's name; for a conjecture over theory.expr its outcome
    (violated -> refuted, holds and tight -> supported)."""
    name = NAMES[code]
    if expr is None or expr["category"] in ("proved", "sanity"):
        return name
    return {"holds": "supported", "tight": "supported", "violated": "refuted", "undecided": "inconclusive"}[name]


def expr_chunk(theorem: str, n: int, budget: int, seed: int, expr: dict) -> ChunkResult:
    """The search at size n of a statement over theory.expr (:func:`verification.stress.checks.hunt.search_size`):
    records of its finds (every violated one re-checked exactly, with its counterexample), a summary."""
    from verification.stress.checks.draws import Law
    from verification.stress.checks.hunt import exact_find, search_size, stored

    compiled = expr["compiled"]
    law = expr.get("law") or Law.of(compiled)
    found = search_size(compiled, law, n, budget, seed)
    proved = expr["category"] in ("proved", "sanity")
    for f in found:
        if f.verdict == VIOLATED:
            exact_find(compiled, law, f)
        if not proved:
            f.extra.update(statistic=float(f.slack), interval=None,
                           method="guided search: the bound's slack, negative where it fails")
    records = []
    for i, f in enumerate(found):
        size = int(np.shape(f.instance[law.roles[0][0]])[0])
        dims = {m: int(np.shape(f.instance[m])[1]) for m in law.names("tokens")}
        prov = {"search": EXPR_VERSION, "seed": seed, "n": size, "budget": budget, "how": f.how,
                **({"searched_n": n} if size != n else {}), **({"d": next(iter(dims.values()))} if dims else {})}
        records.append(Record(theorem, f"n{n}/b{budget}/{i}", verdict_name(f.verdict, expr), slack=f.slack,
                              backend="cpu", provenance=prov,
                              extra={**stored(law, f.instance), "evaluations": f.evaluations, **f.extra}))
    summary = {"n": n, "budget": budget, "found": len(found),
               "tight": sum(f.verdict == TIGHT for f in found), "violated": sum(f.verdict == VIOLATED for f in found),
               "min_slack": min((f.slack for f in found if f.verdict == HOLDS), default=None)}
    return ChunkResult(records, {theorem: summary})


def causal_starts(n: int, count: int, seed: int, per: int = 2) -> np.ndarray:
    """``count`` causal instances of ``per`` matrices (count, per, n, n; pairs by default) from
    :func:`numerics.smt.causal.sample_matrix`, styles ``dyadic`` (exact floats) and ``zeros``,
    ``ties`` rounded onto the optimiser's grid :data:`GRID` (zeros kept exactly, ties mostly)."""
    import random

    from numerics.smt.causal import sample_matrix

    rng = random.Random(seed * 1000 + n)
    styles = ("dyadic", "zeros", "ties")
    out = np.array([[[[float(v) for v in r] for r in sample_matrix(n, rng, styles[i % 3])] for _ in range(per)]
                    for i in range(count)])
    return to_grid(out) / GRID


def matrix_of(record: dict) -> np.ndarray:
    """The instance stored in a search record (exact floats, from their hex form)."""
    rows = [[float.fromhex(x) for x in row] for row in record["extra"]["matrix"]]
    return np.array(rows).reshape(record["extra"]["shape"])


def run_search(store: Any, theorem: str, sizes: tuple[int, ...], budget: int, seed: int = 0,
               console: Any = None, executor: Any = None) -> Any:
    """Search each size (one chunk per n, resumable) and print what was found."""
    from verification import campaign
    from verification.campaign import Chunk

    from verification.stress.checks.specs import THEOREMS

    name = search_campaign(theorem, seed)
    if theorem in THEOREMS:
        chunks = [Chunk(f"n{n}/b{budget}", search_chunk, (theorem, n, budget, seed)) for n in sizes]
    else:
        from verification.stress.checks.expr import spec_part

        part = spec_part(theorem)
        chunks = [Chunk(f"n{n}/b{budget}", search_chunk, (theorem, n, budget, seed, "cpu", part)) for n in sizes]
    res = campaign.run(store, name, chunks, executor=executor, console=console, description=f"search {theorem}")
    if console is not None:
        for r in store.records(name, theorem):
            console.print(f"  {r['instance']} ({r['provenance']['how']}): {r['verdict']}, slack {r['slack']!r}")
    return res
