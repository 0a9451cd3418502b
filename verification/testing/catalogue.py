"""Catalogue of named known-answer instances, each run through every backend present.

An instance (:class:`KnownAnswer`) names a registered theorem, carries exact (dyadic) data and the
expected verdict and slack, derived here in exact Fraction arithmetic (never typed as floats). Every
backend returns the same answer shape, :class:`Evaluation`, so one parametrised test drives all
(instance, backend) pairs; :func:`mismatches` is the one comparison. Tolerances (:data:`TOLERANCE`)
only compare a float slack or value with the exact one; they never decide a verdict.

A backend that cannot decide equality (a float eigen-solve, overlapping interval enclosures) must
say UNDECIDED; an instance records that in ``backend_verdicts`` rather than pretending otherwise.

>>> inst = cyclic_shift()
>>> inst.verdict, inst.slack
(<Verdict.HOLDS: 'holds'>, Fraction(1, 2))
>>> evaluate(inst, "exact")
Evaluation(verdict=<Verdict.HOLDS: 'holds'>, slack=Fraction(1, 2), value=None)
>>> evaluate(inst, "float64").slack
0.5
>>> mismatches(inst, "float64", evaluate(inst, "float64"))
[]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional, Union

import numpy as np

from theory.errors import InvalidInput
from theory.verdicts import Verdict
from verification.testing import reference as ref

Number = Union[Fraction, float]
Matrix = tuple[tuple[Fraction, ...], ...]


@dataclass(frozen=True)
class Evaluation:
    """The one answer shape: verdict, slack (Fraction if exact, else float or None), value (if any)."""

    verdict: Verdict
    slack: Optional[Number]
    value: Optional[Number] = None


@dataclass(frozen=True)
class KnownAnswer:
    """A named instance with its exactly known answer.

    verdict           the true verdict; ``backend_verdicts`` overrides it for backends that cannot
                      certify it (they must answer UNDECIDED, and are tested to)
    slack / value     exact expected slack and value (None: not part of the known answer)
    """

    name: str
    theorem: str
    data: Any
    verdict: Verdict
    slack: Optional[Number]
    note: str
    value: Optional[Number] = None
    backend_verdicts: Mapping[str, Verdict] = field(default_factory=dict)

    def expected_verdict(self, backend: str) -> Verdict:
        return self.backend_verdicts.get(backend, self.verdict)


# -- exact helpers (overlap form of delta: independent of reference.py's L1 form) -----------------
def _mat(rows: list[list[Any]]) -> Matrix:
    M = tuple(tuple(Fraction(x) for x in r) for r in rows)
    assert all(sum(r) == 1 and min(r) >= 0 for r in M), "rows must be stochastic"
    return M


def _d(A: Matrix, i: int, j: int) -> Fraction:
    return 1 - sum(min(a, b) for a, b in zip(A[i], A[j]))


def _delta(A: Matrix) -> Fraction:
    return max(_d(A, i, j) for i in range(len(A)) for j in range(len(A)))


def _mul(X: Matrix, Y: Matrix) -> Matrix:
    return tuple(tuple(sum((X[i][k] * Y[k][j] for k in range(len(Y))), Fraction(0))
                       for j in range(len(Y[0]))) for i in range(len(X)))


def d1_closed_form(A: Matrix) -> Fraction:
    """THEORY D1: slack = 1/2 min_{i != j} [(delta - d_ij) + x^- + y^-], x = A_ii - A_ji, y = A_jj - A_ij."""
    n = len(A)
    if n == 1:
        return Fraction(1, 2)
    dl, neg = _delta(A), (lambda t: max(-t, Fraction(0)))
    return min((dl - _d(A, i, j)) + neg(A[i][i] - A[j][i]) + neg(A[j][j] - A[i][j])
               for i in range(n) for j in range(n) if i != j) / 2


def _verdict(slack: Fraction) -> Verdict:  # exact: the sign of an exact slack
    return Verdict.TIGHT if slack == 0 else Verdict.HOLDS if slack > 0 else Verdict.VIOLATED


# -- instances: Theorem D1 ---------------------------------------------------------------------------
def _d1(name: str, rows: list[list[Any]], note: str, theorem: str = "dobrushin.factor") -> KnownAnswer:
    A = _mat(rows)
    return KnownAnswer(name, theorem, A, _verdict(s := d1_closed_form(A)), s, note)


def d1_2x2_dominant() -> KnownAnswer:
    return _d1("d1-2x2-dominant", [["3/4", "1/4"], ["1/8", "7/8"]],
               "2x2, diagonal dominates: delta = |a-b| = 5/8, tight")


def d1_2x2_antidiagonal() -> KnownAnswer:
    return _d1("d1-2x2-antidiagonal", [["1/4", "3/4"], ["3/4", "1/4"]],
               "2x2, x = y = -1/2: slack = (x^- + y^-)/2 = 1/2")


def d1_identity() -> KnownAnswer:
    return _d1("d1-identity", [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "I: delta = 1, (I+I)/2 = I, tight")


def d1_rank_one() -> KnownAnswer:
    return _d1("d1-rank-one", [["1/2", "1/4", "1/4"]] * 3, "equal rows: delta = 0, x = y = 0, d_ij = delta: tight")


def d1_block_diagonal() -> KnownAnswer:
    return _d1("d1-block-diagonal", [["3/4", "1/4", 0, 0], ["1/4", "3/4", 0, 0],
                                     [0, 0, "1/2", "1/2"], [0, 0, "1/2", "1/2"]],
               "blocks: delta = 1 across blocks, diagonal dominates there: tight")


def d1_causal() -> KnownAnswer:
    return _d1("d1-causal", [[1, 0, 0], ["1/2", "1/2", 0], ["1/4", "1/4", "1/2"]],
               "lower triangular (causal): always tight", theorem="dobrushin.factor.causal")


def cyclic_shift() -> KnownAnswer:
    return _d1("d1-cyclic-shift", [[0, 1, 0], [0, 0, 1], [1, 0, 0]],
               "fixed-point-free permutation: delta = 1, every pair has a negative x or y: slack 1/2")


# -- instances: Theorem D2 ---------------------------------------------------------------------------
def _d2(name: str, P: list[list[Any]], Q: list[list[Any]], note: str) -> KnownAnswer:
    Pm, Qm = _mat(P), _mat(Q)
    return KnownAnswer(name, "dobrushin.product", (Pm, Qm),
                       _verdict(s := _delta(Pm) * _delta(Qm) - _delta(_mul(Pm, Qm))), s, note)


def d2_2x2() -> KnownAnswer:
    return _d2("d2-2x2", [["3/4", "1/4"], ["1/4", "3/4"]], [["1/2", "1/2"], ["1/8", "7/8"]],
               "2x2: delta = |det| is multiplicative, always tight")


def d2_identity() -> KnownAnswer:
    return _d2("d2-identity", [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
               [["1/2", "1/4", "1/4"], ["1/8", "3/4", "1/8"], [0, "1/2", "1/2"]],
               "delta(I Q) = delta(Q) = 1 * delta(Q): tight")


def d2_strict() -> KnownAnswer:
    return _d2("d2-strict", [["1/2", "1/4", "1/4"], ["1/4", "1/4", "1/2"], ["3/8", "1/4", "3/8"]],
               [["1/2", "1/4", "1/4"], ["1/8", "1/4", "5/8"], ["1/2", "1/4", "1/4"]],
               "positive 3x3: P's row differences lie along e0 - e2 and Q_0 = Q_2, so PQ has equal rows: "
               "delta(PQ) = 0 < 1/4 * 3/8")


# -- instances: rank (Eckart-Young and deficiency) ----------------------------------------------------
_SIGMA = (3, 2, 1)          # M* = diag(3, 2, 1), K = I: sigma_i(M* K^{1/2}) = 3, 2, 1


def _rank_data(r: int) -> dict:
    diag = (lambda v: tuple(tuple(Fraction(v[i] if i == j else 0) for j in range(3)) for i in range(3)))
    return {"M_star": diag(_SIGMA), "K": diag((1, 1, 1)), "r": r, "d": 1}


def eckart_young_r1() -> KnownAnswer:
    data = _rank_data(1)
    tail = data["d"] * sum(Fraction(s) ** 2 for s in _SIGMA[data["r"]:])
    undecided = {"fast": Verdict.UNDECIDED, "certified": Verdict.UNDECIDED}
    return KnownAnswer("rank-eckart-young-r1", "rank.linear.eckart_young", data, Verdict.TIGHT, Fraction(0),
                       "optimal rank-1 excess risk = d sum_{i>1} sigma_i^2 = 4 + 1 (optimal_excess_risk is "
                       "per unit d, d = 1); equality is proved, but neither float nor overlapping 60-digit "
                       "enclosures can certify it: those backends answer UNDECIDED",
                       value=tail, backend_verdicts=undecided)


def _deficiency(r: int) -> KnownAnswer:
    data = _rank_data(r)
    value = sum(Fraction(s) ** 2 for s in _SIGMA[r:])
    s = value - Fraction(_SIGMA[-1]) ** 2
    return KnownAnswer(f"rank-deficiency-r{r}", "rank.linear.deficiency", data, _verdict(s), s,
                       f"r = {r} < r* = 3: R(r) = {value} >= sigma_3^2 = 1", value=value)


def deficiency_r1() -> KnownAnswer:
    return _deficiency(1)


def deficiency_r2() -> KnownAnswer:
    return _deficiency(2)


# -- instances: Poincare ---------------------------------------------------------------------------
def bakry_emery_gauss1() -> KnownAnswer:
    beta, lam = Fraction(4), Fraction(1, 2)
    C = 1 / (beta * lam)     # Gaussian N(0, 1/(beta lam)): C_P = 1/(beta lam) = 1/kappa
    return KnownAnswer("poincare-bakry-emery-gauss1", "poincare.gibbs.bakry_emery",
                       {"family": "gauss1", "beta": beta, "lam": lam}, Verdict.TIGHT, Fraction(0),
                       "F = (lam/2) theta^2: kappa = beta lam, Bakry-Emery bound 1/kappa = C_P = 1/2; "
                       "the float eigen-solve cannot certify equality: 'fast' answers UNDECIDED",
                       value=C, backend_verdicts={"fast": Verdict.UNDECIDED})


CATALOGUE: tuple[Callable[[], KnownAnswer], ...] = (
    d1_2x2_dominant, d1_2x2_antidiagonal, d1_identity, d1_rank_one, d1_block_diagonal, d1_causal,
    cyclic_shift, d2_2x2, d2_identity, d2_strict, eckart_young_r1, deficiency_r1, deficiency_r2,
    bakry_emery_gauss1)


def instances() -> list[KnownAnswer]:
    return [make() for make in CATALOGUE]


# -- backends ----------------------------------------------------------------------------------------
def _item(x: Any) -> Any:   # numpy 0-d or torch (1,) result -> Python scalar
    return x.reshape(-1)[0].item()


def _array(M: Matrix, backend: str) -> Any:
    a = np.array([[float(x) for x in r] for r in M])     # dyadic: exact in float32 too
    if backend == "float32":
        return a.astype(np.float32)
    if backend in ("torch-cpu", "cuda"):
        import torch
        return torch.tensor(a, dtype=torch.float64, device="cuda" if backend == "cuda" else "cpu")
    return a


def _d1_float(backend: str) -> Callable[[KnownAnswer], Evaluation]:
    def run(inst: KnownAnswer) -> Evaluation:
        from numerics.dobrushin import factor_check
        fc = factor_check(_array(inst.data, backend))
        return Evaluation(Verdict.TIGHT if _item(fc.equality) else Verdict.HOLDS, float(_item(fc.slack)))
    return run


def _d1_exact(inst: KnownAnswer) -> Evaluation:
    floats = [[float(x) for x in r] for r in inst.data]
    s = ref.factor_slack(floats)
    assert ref.factor_equality(floats) == (s == 0)
    return Evaluation(_verdict(s), s)


def _d2_float(backend: str) -> Callable[[KnownAnswer], Evaluation]:
    def run(inst: KnownAnswer) -> Evaluation:
        from numerics.dobrushin import dobrushin, product_equality
        P, Q = (_array(M, backend) for M in inst.data)
        eq = bool(_item(product_equality(P, Q)))
        slack = float(_item(dobrushin(P))) * float(_item(dobrushin(Q))) - float(_item(dobrushin(P @ Q)))
        return Evaluation(Verdict.TIGHT if eq else Verdict.HOLDS, slack)
    return run


def _d2_exact(inst: KnownAnswer) -> Evaluation:
    P, Q = ([[float(x) for x in r] for r in M] for M in inst.data)
    Pe, Qe = ref.exact_rows(P), ref.exact_rows(Q)
    s = ref.delta(Pe) * ref.delta(Qe) - ref.delta(ref.matmul(Pe, Qe))
    assert ref.product_equality(P, Q) == (s == 0)
    return Evaluation(_verdict(s), s)


def _rank_np(inst: KnownAnswer) -> tuple[np.ndarray, np.ndarray, int, int]:
    d = inst.data
    return (np.array(d["M_star"], dtype=np.float64), np.array(d["K"], dtype=np.float64), d["r"], d["d"])


def _ey_fast(inst: KnownAnswer) -> Evaluation:
    from numerics.rank.linear import check_pair, optimal_excess_risk
    M, K, r, d = _rank_np(inst)
    _, _, L = check_pair(M, K)
    U, s, Vt = np.linalg.svd(M @ L)
    Mr = (U[:, :r] * s[:r]) @ Vt[:r] @ np.linalg.inv(L)            # the explicit minimiser
    value, D = d * optimal_excess_risk(M, K, r), M - Mr
    return Evaluation(Verdict.UNDECIDED, d * float(np.trace(D @ K @ D.T)) - value, value)


def _ey_certified(inst: KnownAnswer) -> Evaluation:
    from numerics.rank.linear import certify_tail_sum
    M, K, r, d = _rank_np(inst)
    c = certify_tail_sum(M, K, r)
    tail, risk = (c["tail_lo"] + c["tail_hi"]) / 2, (c["risk_lo"] + c["risk_hi"]) / 2
    overlap = c["risk_lo"] <= c["tail_hi"] and c["tail_lo"] <= c["risk_hi"]
    verdict = Verdict.UNDECIDED if overlap else Verdict.VIOLATED     # as verification/rank/checks/linear.py
    return Evaluation(verdict, float(d * (risk - tail)), float(d * tail))


def _deficiency_fast(inst: KnownAnswer) -> Evaluation:
    from numerics.rank.linear import deficiency_fast
    M, K, r, d = _rank_np(inst)
    out = deficiency_fast(M, K, r)
    return Evaluation(out["verdict"], d * out["slack"], d * out["value"])


def _deficiency_certified(inst: KnownAnswer) -> Evaluation:
    from numerics.rank.linear import deficiency_exact
    M, K, r, d = _rank_np(inst)
    out = deficiency_exact(M, K, r)
    if out["verdict"] is Verdict.NOT_APPLICABLE:
        return Evaluation(out["verdict"], None)
    value = sum(out["value_interval"]) / 2
    return Evaluation(out["verdict"], float(d * (value - sum(out["bound_interval"]) / 2)), float(d * value))


def _be_fast(inst: KnownAnswer) -> Evaluation:
    from numerics.poincare.bounds import bakry_emery
    from numerics.poincare.constants import gaussian_window, poincare_constant_1d
    from numerics.poincare.losses import family
    fam, beta, lam = family(inst.data["family"]), float(inst.data["beta"]), float(inst.data["lam"])
    R = gaussian_window(beta, lam, fam.oscillation(), fam.dim)   # as verification/poincare/checks/bounds.py
    res, wide = (poincare_constant_1d(fam.F(lam), beta, -w, w) for w in (R, 1.25 * R))
    C, err, bound = res.value, res.error + abs(wide.value - res.value), bakry_emery(fam, beta, lam)["bound"]
    if bound is None:
        return Evaluation(Verdict.NOT_APPLICABLE, None, C)
    # the solver's own error estimate (as verification/poincare/checks/bounds.py upper_verdict): a bound
    # within err of C can be neither certified tight nor strict, so the answer is UNDECIDED
    verdict = Verdict.VIOLATED if bound < C - err else Verdict.HOLDS if bound > C + err else Verdict.UNDECIDED
    return Evaluation(verdict, bound - C, C)


def _be_exact(inst: KnownAnswer) -> Evaluation:
    from numerics.poincare.bounds import bakry_emery_exact
    from numerics.poincare.losses import GaussianFamily, family
    fam, beta, lam = family(inst.data["family"]), inst.data["beta"], inst.data["lam"]
    if not isinstance(fam, GaussianFamily):  # exact C_P is known only for the Gaussian family
        raise InvalidInput(f"{inst.name}: no exact C_P for family {inst.data['family']!r}")
    C = 1 / (Fraction(beta) * Fraction(lam))       # theory.poincare: Gaussian spectral gap beta lam
    bound = bakry_emery_exact(fam, beta, lam)["bound"]
    return Evaluation(_verdict(bound - C), bound - C, C)


_DOBRUSHIN_FLOAT = ("float64", "float32", "torch-cpu", "cuda")
BACKENDS: dict[str, dict[str, Callable[[KnownAnswer], Evaluation]]] = {
    "dobrushin.factor": {**{b: _d1_float(b) for b in _DOBRUSHIN_FLOAT}, "exact": _d1_exact},
    "dobrushin.product": {**{b: _d2_float(b) for b in _DOBRUSHIN_FLOAT}, "exact": _d2_exact},
    "rank.linear.eckart_young": {"fast": _ey_fast, "certified": _ey_certified},
    "rank.linear.deficiency": {"fast": _deficiency_fast, "certified": _deficiency_certified},
    "poincare.gibbs.bakry_emery": {"fast": _be_fast, "exact": _be_exact},
}
BACKENDS["dobrushin.factor.causal"] = BACKENDS["dobrushin.factor"]

# Float error bound on |slack - exact| and |value - exact| per backend (relative once |exact| > 1).
# Compares numbers only: verdicts are compared exactly. None: exact backend, compared with ==.
TOLERANCE: dict[str, Optional[float]] = {
    "float64": 1e-12, "float32": 1e-6, "torch-cpu": 1e-12, "cuda": 1e-12, "exact": None,
    "fast": 1e-8, "certified": 1e-12}


def backends_for(theorem_id: str) -> list[str]:
    return list(BACKENDS[theorem_id])   # KeyError for a theorem without catalogue backends


def available(backend: str) -> bool:
    """Whether the backend can run here (only CUDA can be absent; torch is a core dependency)."""
    import torch
    return backend != "cuda" or bool(torch.cuda.is_available())


def evaluate(inst: KnownAnswer, backend: str) -> Evaluation:
    return BACKENDS[inst.theorem][backend](inst)


def evaluations(inst: KnownAnswer) -> dict[str, Evaluation]:  # CUDA left out without a device
    return {b: evaluate(inst, b) for b in backends_for(inst.theorem) if available(b)}


def _close(got: Optional[Number], want: Optional[Number], tol: Optional[float]) -> bool:
    if want is None:
        return True
    if got is None:
        return False
    if tol is None:     # exact backend: exact equality of Fractions, no tolerance
        return isinstance(got, Fraction) and got == want
    return abs(float(got) - float(want)) <= tol * max(1.0, abs(float(want)))


def mismatches(inst: KnownAnswer, backend: str, ev: Evaluation) -> list[str]:
    """Every way ``ev`` disagrees with the known answer (empty list: agreement)."""
    out, tol = [], TOLERANCE[backend]
    want = inst.expected_verdict(backend)
    if ev.verdict is not want:
        out.append(f"{inst.name}/{backend}: verdict {ev.verdict} != expected {want}")
    if want not in (Verdict.UNDECIDED, Verdict.NOT_APPLICABLE) or ev.slack is not None:
        if not _close(ev.slack, inst.slack, tol):
            out.append(f"{inst.name}/{backend}: slack {ev.slack!r} != expected {inst.slack} (tol {tol})")
    if not _close(ev.value, inst.value, tol):
        out.append(f"{inst.name}/{backend}: value {ev.value!r} != expected {inst.value} (tol {tol})")
    return out
