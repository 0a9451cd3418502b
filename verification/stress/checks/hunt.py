"""The guided search over a statement over :mod:`theory.expr`: every kind of symbol (row-stochastic,
logits and tokens matrices, parameters) searched for counterexamples and tight instances, scored by
the certified check of the sweep (:func:`numerics.expr.decide`), only inside the theorem's hypotheses
and ``where=`` (an instance outside them scores not-applicable, so no engine and no shrinking keeps
one).

An instance is ``{"A": (n, n) floats, "L": (n, n), "X": (n, d), "alpha": Fraction}``: every float
stands for itself exactly (a stochastic matrix for its rows renormalised exactly), a parameter is an
exact rational in its interval.

* **hypothesis** (:func:`hypothesis_search`): per kind, adversarial strategies that shrink toward
  small rationals (:mod:`verification.stress.checks.strategies`); ``target()`` on -log10(slack)
  drives toward near-tight instances; a violated one is raised inside the test, so hypothesis
  shrinks it.
* **local optimiser** (:func:`descend`): from the strictest of a few seeded draws of the sweep's
  families, every move of every symbol scored in one batch, the best that lowers the certified slack
  taken, else the step halved: mass moved within a stochastic row on the grid 2^-30 (rows sum to
  exactly 1; within the lower triangle under ``causal``), rectangle moves t(E_ij + E_kl - E_il - E_kj)
  under ``doubly-stochastic`` (with their transposes under ``symmetric``), +-t on a real entry (on
  (i, j) and (j, i) for symmetric logits), a parameter moved by (hi - lo) t or set to an end.
* **shrinking** (:func:`shrink`): a violated find loses tokens (a principal submatrix of every n x n
  matrix, rows of a stochastic one renormalised; a row of every tokens matrix) and columns of its
  tokens, then every value is rounded onto coarser dyadic grids (a parameter onto lo + (hi - lo)
  j / 2^b), while it stays violated.

Every violated find is re-checked on its exact values (:func:`verification.stress.checks.expr.recheck`:
hypotheses, ``where=``, certified sides) before it is stored with its counterexample, every symbol as
``"p/q"`` strings.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional

import numpy as np

from numerics.dobrushin.batch import HOLDS, TIGHT, VIOLATED
from theory.verdicts import Code
from verification.stress.checks.draws import Law, default_families, draw_values
from verification.stress.checks.strategies import instances

GRID = 2 ** 30           # stochastic entries k / 2^30 (rows sum to exactly 1); a parameter lo + (hi - lo) j / 2^30
NA = int(Code.NOT_APPLICABLE)   # not-applicable or undecided: neither strict nor tight nor violated

Instance = dict
Score = Callable[[list], tuple[np.ndarray, np.ndarray]]


def batch(law: Law, insts: list) -> dict:
    """The values of :func:`numerics.expr.decide` for a list of instances of one shape."""
    out: dict = {}
    for name, _ in law.roles:
        out[name] = np.stack([np.asarray(i[name], dtype=np.float64) for i in insts])
    for name, _, _ in law.params:
        out[name] = [i[name] for i in insts]
    return out


def scorer(compiled: Any, law: Law, assume: tuple) -> Score:
    """(codes, slacks) of a list of instances: :data:`HOLDS`, :data:`TIGHT`, :data:`VIOLATED`, or
    :data:`NA` (not-applicable: outside the hypotheses or ``where=``, undefined, or undecided);
    the slack rhs - lhs (inf where NA, 0 where tight). Instances of different shapes are scored in
    groups of one shape."""
    from numerics.expr import decide

    def score(insts: list) -> tuple[np.ndarray, np.ndarray]:
        codes = np.full(len(insts), NA, dtype=np.int64)
        slack = np.full(len(insts), np.inf)
        groups: dict = {}
        for j, inst in enumerate(insts):
            groups.setdefault(tuple(np.shape(inst[m]) for m, _ in law.roles), []).append(j)
        for idx in groups.values():
            d = decide(compiled, batch(law, [insts[j] for j in idx]), assume)
            c = np.minimum(d.codes, NA).astype(np.int64)
            with np.errstate(invalid="ignore"):
                s = np.where(c == TIGHT, 0.0, d.rhs - d.lhs)
            codes[idx], slack[idx] = c, np.where(c == NA, np.inf, s)
        return codes, slack
    return score


@dataclass
class Find:
    """An instance the search keeps, with its certified verdict and slack."""

    instance: Instance
    verdict: int
    slack: float
    how: str
    evaluations: int = 0
    extra: dict = field(default_factory=dict)


# -- hypothesis -----------------------------------------------------------------------------------------
class Counterexample(Exception):
    def __init__(self, instance: Instance):
        super().__init__("violated")
        self.instance = instance


def hypothesis_search(law: Law, n: int, budget: int, seed: int, score: Score) -> list[Find]:
    """``budget`` hypothesis examples at size n: the smallest strict slack, the first tight instance
    and (shrunk by hypothesis) a violated one, if any."""
    import warnings

    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hseed
    from hypothesis.errors import HypothesisDeprecationWarning

    best: dict[str, Find] = {}
    count = [0]

    @hseed(seed)
    @settings(max_examples=budget, database=None, deadline=None, derandomize=False,
              phases=[Phase.generate, Phase.target, Phase.shrink], suppress_health_check=list(HealthCheck))
    @given(instances(law, n))
    def probe(inst: Instance) -> None:
        count[0] += 1
        v, s = score([inst])
        v, s = int(v[0]), float(s[0])
        if v == VIOLATED:
            raise Counterexample(inst)
        if v == HOLDS:
            target(-math.log10(max(s, 1e-300)), label="-log10 slack")
            if "near" not in best or s < best["near"].slack:
                best["near"] = Find(copy(inst), v, s, "hypothesis")
        elif v == TIGHT and "tight" not in best:
            best["tight"] = Find(copy(inst), v, 0.0, "hypothesis")

    try:
        with warnings.catch_warnings():   # on a Dask worker other threads draw from `random` meanwhile
            warnings.simplefilter("ignore", HypothesisDeprecationWarning)
            probe()
    except Counterexample as exc:                  # the last raise is hypothesis' shrunk example
        v, s = score([exc.instance])
        best["violated"] = Find(exc.instance, int(v[0]), float(s[0]), "hypothesis (shrunk)")
    for f in best.values():
        f.evaluations = count[0]
    return list(best.values())


def copy(inst: Instance) -> Instance:
    return {k: (np.array(v, dtype=np.float64) if isinstance(v, np.ndarray) else v) for k, v in inst.items()}


# -- the local optimiser ---------------------------------------------------------------------------------
def to_grid(A: np.ndarray) -> np.ndarray:
    """Integer rows summing to exactly GRID (A's rows rounded onto the dyadic grid)."""
    K = np.floor(np.asarray(A) * GRID).astype(np.int64)
    rest = GRID - K.sum(-1)
    idx = np.argmax(A, axis=-1)
    np.put_along_axis(K, idx[..., None], np.take_along_axis(K, idx[..., None], -1) + rest[..., None], -1)
    return K


def on_grid(law: Law, inst: Instance) -> Instance:
    """The instance with its stochastic matrices on the grid 2^-30 (a doubly stochastic one is
    already: dyadic) and its parameters on lo + (hi - lo) j / 2^30."""
    out = copy(inst)
    for name in law.names("stochastic"):
        K = np.round(out[name] * GRID)
        exact = (K / GRID == out[name]).all() and (K.sum(-1) == GRID).all()
        out[name] = K / GRID if exact else to_grid(out[name]) / GRID
    for name, lo, hi in law.params:
        if lo != hi:
            j = round((Fraction(out[name]) - lo) / (hi - lo) * GRID)
            out[name] = lo + (hi - lo) * Fraction(j, GRID)
    return out


def _row_moves(K: np.ndarray, t: int, causal: bool) -> list[np.ndarray]:
    """Move t (or all) of the mass of entry (i, a) to (i, b) of an integer matrix K (rows sum GRID)."""
    n = K.shape[0]
    out = []
    for i in range(n):
        for a in range(n):
            if K[i, a] == 0:
                continue
            for b in range(n):
                if b == a or (causal and b > i):
                    continue
                for amount in {min(t, int(K[i, a])), int(K[i, a])}:
                    C = K.copy()
                    C[i, a] -= amount
                    C[i, b] += amount
                    out.append(C)
    return out


def _rectangle_moves(K: np.ndarray, t: int, symmetric: bool) -> list[np.ndarray]:
    """t (E_ij + E_kl - E_il - E_kj) (and its transpose, symmetric) for i < k, j != l, entries kept >= 0."""
    n = K.shape[0]
    out = []
    for i in range(n):
        for k in range(i + 1, n):
            for j in range(n):
                for l in range(n):
                    if j == l:
                        continue
                    D = np.zeros_like(K)
                    D[i, j] += 1
                    D[k, l] += 1
                    D[i, l] -= 1
                    D[k, j] -= 1
                    if symmetric:
                        D = D + D.T
                    room = int(min(K[D < 0] // -D[D < 0])) if (D < 0).any() else t
                    for amount in {min(t, room), room}:
                        if amount > 0:
                            out.append(K + amount * D)
    return out


def neighbours(law: Law, inst: Instance, level: int) -> list[Instance]:
    """Every instance one move of step 2^-level away (see the module docstring)."""
    out = []
    t_grid = GRID >> level
    for name in law.names("stochastic"):
        K = np.round(inst[name] * GRID).astype(np.int64)
        if {"doubly-stochastic", "symmetric"} & set(law.assume):
            moved = _rectangle_moves(K, t_grid, "symmetric" in law.assume)
        else:
            moved = _row_moves(K, t_grid, "causal" in law.assume)
        out += [{**inst, name: C / GRID} for C in moved]
    step = 2.0 ** (3 - level)
    for kind in ("logits", "tokens"):
        for name in law.names(kind):
            Z = inst[name]
            sym = kind == "logits" and "symmetric" in law.assume
            for i in range(Z.shape[0]):
                for j in range(Z.shape[1]):
                    if sym and j < i:
                        continue
                    for sign in (1.0, -1.0):
                        C = Z.copy()
                        C[i, j] += sign * step
                        if sym:
                            C[j, i] = C[i, j]
                        out.append({**inst, name: C})
    for name, lo, hi in law.params:
        if lo == hi:
            continue
        width = hi - lo
        for v in {lo, hi, max(lo, inst[name] - width * Fraction(GRID >> level, GRID)),
                  min(hi, inst[name] + width * Fraction(GRID >> level, GRID))}:
            if v != inst[name]:
                out.append({**inst, name: v})
    return out


def descend(start: Instance, law: Law, budget: int, score: Score, goal: str = "tight") -> Find:
    """Pattern search from ``start``: each step scores every neighbour (:func:`neighbours`) in one
    batch and takes the best that lowers the certified slack, else halves the step (down to 2^-30).
    At most ``budget`` evaluations. ``goal="tight"`` stops at a certified tight instance; ``goal="near"``
    accepts only strict instances (the slack driven toward 0 from above); a violated one ends it."""
    cur = on_grid(law, start)
    v, s = score([cur])
    cur_v, cur_s = int(v[0]), float(s[0])
    used, level = 1, 2
    while level <= 30 and cur_v == HOLDS and used < budget:
        cands = neighbours(law, cur, level)[: budget - used]
        if not cands:
            break
        v, s = score(cands)
        used += len(cands)
        if (v == VIOLATED).any():
            j = int(np.flatnonzero(v == VIOLATED)[0])
            return Find(cands[j], VIOLATED, float(s[j]), "optimiser", used)
        if goal == "tight" and (v == TIGHT).any():
            cur, cur_v, cur_s = cands[int(np.flatnonzero(v == TIGHT)[0])], TIGHT, 0.0
            break
        ok = np.flatnonzero((v == HOLDS) & (s < cur_s) & (s > 0))
        if len(ok):
            j = int(ok[np.argmin(s[ok])])
            cur, cur_s = cands[j], float(s[j])
        else:
            level += 1
    return Find(cur, cur_v, cur_s, "optimiser", used)


def starts(law: Law, n: int, seed: int, count: int = 16) -> list[Instance]:
    """``count`` seeded draws of the sweep's default families in turn (numpy's generator: start j is
    chunk j of one instance), d = 2 for a tokens matrix."""
    fams = default_families(law)
    out = []
    for j in range(count):
        values = draw_values(law, fams[j % len(fams)], n, 2 if law.tokens else None, j, seed, "numpy", 1)
        out.append({k: (v[0] if isinstance(v, np.ndarray) else v[0]) for k, v in values.items()})
    return out


# -- shrinking -------------------------------------------------------------------------------------------
def _drop_token(law: Law, inst: Instance, k: int) -> Optional[Instance]:
    out = dict(inst)
    n = next(np.shape(inst[m])[0] for m, _ in law.roles)
    keep = [i for i in range(n) if i != k]
    for name, kind in law.roles:
        M = np.asarray(inst[name])
        if (kind or "stochastic") == "tokens":
            out[name] = M[keep]
            continue
        sub = M[np.ix_(keep, keep)]
        if (kind or "stochastic") == "stochastic":
            if (sub.sum(-1) <= 0).any():
                return None
            sub = sub / sub.sum(-1, keepdims=True)
        out[name] = sub
    return out


def _coarse(law: Law, inst: Instance, bits: int) -> Instance:
    g = 2 ** bits
    out = dict(inst)
    for name, kind in law.roles:
        M = np.asarray(inst[name])
        if (kind or "stochastic") == "stochastic":
            K = np.floor(M * g)
            K[..., 0] += g - K.sum(-1)
            out[name] = K / g
        else:
            out[name] = np.round(M * g) / g
    for name, lo, hi in law.params:
        if lo != hi:
            out[name] = lo + (hi - lo) * Fraction(round((Fraction(inst[name]) - lo) / (hi - lo) * g), g)
    return out


def shrink(law: Law, inst: Instance, bad: Callable[[Instance], bool]) -> Instance:
    """A smaller violated instance (see the module docstring): fewer tokens, fewer token columns,
    coarser values, while ``bad`` holds."""
    best = inst
    changed = True
    while changed:
        changed = False
        n = next(np.shape(best[m])[0] for m, _ in law.roles)
        for k in range(n if n > 2 else 0):
            sub = _drop_token(law, best, k)
            if sub is not None and bad(sub):
                best, changed = sub, True
                break
        for name in law.names("tokens") if not changed else ():
            d = best[name].shape[1]
            for c in range(d if d > 1 else 0):
                keep = [j for j in range(d) if j != c]
                sub = {**best, **{m: best[m][:, keep] for m in law.names("tokens")}}
                if bad(sub):
                    best, changed = sub, True
                    break
            break
    for bits in range(0, 31):
        cand = _coarse(law, best, bits)
        if all((v >= 0).all() for k, v in cand.items() if k in law.names("stochastic")) and bad(cand):
            return cand
    return best


# -- one size ----------------------------------------------------------------------------------------------
def search_size(compiled: Any, law: Law, n: int, budget: int, seed: int) -> list[Find]:
    """The search at size n: hypothesis (a quarter of the budget, at most 100 examples), then the
    optimiser from the strictest of 16 seeded draws toward tight and toward near-tight; every
    violated find shrunk and scored again (its own verdict and slack)."""
    score = scorer(compiled, law, law.assume)
    found = hypothesis_search(law, n, max(1, min(100, budget // 4)), seed, score)
    pool = starts(law, n, seed)
    v, s = score(pool)
    strict = np.flatnonzero(v == HOLDS)
    if len(strict):
        first = pool[int(strict[np.argmax(s[strict])])]
        for goal in ("tight", "near"):
            f = descend(first, law, max(1, 3 * budget // 8), score, goal)
            f.how = f"optimiser ({goal})"
            found.append(f)
    for f in found:
        if f.verdict == VIOLATED:
            f.instance = shrink(law, f.instance, lambda x: int(score([x])[0][0]) == VIOLATED)
            v, s = score([f.instance])
            f.verdict, f.slack = int(v[0]), float(s[0])
            f.extra["shrunk"] = True
    return [f for f in found if f.verdict != NA]


def stored(law: Law, inst: Instance) -> dict:
    """What a record keeps of an instance: ``values`` (every matrix as rows of float.hex, every
    parameter as "p/q"), and for an instance of n x n matrices only, ``matrix`` (their rows stacked,
    hex) and ``shape`` (as :func:`verification.stress.checks.search.matrix_of` reads them)."""
    from verification.stress.checks.expr import exact_text

    values = {k: ([[float(x).hex() for x in row] for row in np.asarray(v)] if isinstance(v, np.ndarray)
                  else exact_text(Fraction(v))) for k, v in inst.items()}
    out: dict = {"values": values}
    mats = [np.asarray(inst[m]) for m, _ in law.roles]
    if not law.params and all(M.shape[0] == M.shape[1] for M in mats):
        X = np.stack(mats) if len(mats) > 1 else mats[0]
        out.update(matrix=[[float(x).hex() for x in row] for row in X.reshape(-1, X.shape[-1])], shape=list(X.shape))
    return out


def exact_find(compiled: Any, law: Law, f: Find) -> None:
    """A violated find re-checked on its exact values (:func:`verification.stress.checks.expr.recheck`)
    and given its counterexample (every symbol "p/q"), exact sides and exact slack; RuntimeError where
    the exact check disagrees (a bug in numerics.expr)."""
    from numerics.expr.values import approx, sub
    from verification.stress.checks.expr import as_text, exact_instance, exact_text, recheck

    rows, lhs, rhs = exact_instance(compiled, batch(law, [f.instance]), 0)
    cex = as_text(rows)
    ok, why = recheck(compiled, cex, law.assume)
    if not ok:
        raise RuntimeError(f"search: a find decided violated does not re-check exactly ({why}): a bug in numerics.expr")
    f.slack = approx(sub(rhs, lhs))[0]          # its own exact slack, rounded once
    f.extra.update(counterexample=cex, slack_exact=exact_text(sub(rhs, lhs)),
                   **compiled.as_written(exact_text(lhs), exact_text(rhs)))
