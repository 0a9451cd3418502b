"""Attention-native rank campaigns: data-only kernel recovery, GD students, the interpolation ladder.

recovery  linear attention (W_V known / unknown) vs inputs B, noise; softmax vs beta, T, noise.
          A draw counts as recovered when the relative error of the recovered kernel W_Q W_K^T,
          up to scale and sign, is at most KERNEL_TOL; every estimator's rank of it is stored
          alongside (energy 0.9 / 0.99, entropy from sigma^2 and from sigma, threshold). Every
          softmax draw also gets the nonlinear least-squares fit (:mod:`numerics.rank.fits`, a few
          seeded starts, convergence by first-order optimality): of W with W_V known, and of
          (W, W_V) jointly with W_V unknown, next to the linearised / inverted regression. Its own
          outcome (:func:`fit_outcome`) separates estimator bias, optimisation and identifiability.
          Linear, noiseless, identifiable design: the proved theorem (verdicts; an exact rational
          check on one small instance too); otherwise not-applicable + data. Softmax recovery is
          a claim: outcomes (supported / refuted / inconclusive) with the kernel error as statistic.
students  GD on U V^T of rank r in {r*-1, r*, r*+1} for linear and softmax teachers, W_V fixed.
          Linear r < r*: the certified lower bound mu_lo tail_lo (Fraction LDL^T + 60-digit tail,
          multiplied exactly) against the exact risk of the exact rank-r product U V^T.
ladder    Y = ((1 - lam) M_static + lam A(X)) X W_V: rank of the best static mixer vs r* (a claim).
native    the attention-native claims as stated, on the recovery campaign's teachers (the clusters):
          achievability (a student of kernel rank r* reaches zero risk) and recovery (an
          over-parameterised student, rank d, from small initialisation NATIVE_INIT ends at kernel
          rank r*; noiseless data that identify W, so recovery is GD reaching the one zero-risk kernel
          without spurious directions), linear and softmax; and the exact rational recovery of the
          kernel's rank with the value map unknown (:func:`exact_unknown_chunk`). A campaign of its
          own (seconds): the three above keep their records.
Kernels: :mod:`numerics.rank.attention`, :mod:`numerics.rank.students` (docs/theory.md); tables:
:mod:`verification.rank.report.attention`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from numerics.rank import attention as A
from numerics.rank import fits as F
from numerics.rank import students as S
from theory.verdicts import Outcome, Verdict
from verification import campaign
from verification.store import Record, outcome_record

SOFTMAX_BATCH = 32        # inputs per draw of the softmax recovery
KERNEL_TOL = 0.1          # a draw recovers W when its relative kernel error (scale, sign) is <= this
RANKS = ("energy_0.9", "energy_0.99", "entropy", "entropy_sigma", "threshold")


def kernel_outcome(rel_error: float, tol: float = KERNEL_TOL) -> Outcome:
    """supported iff the recovered kernel is within ``tol`` (relative, up to scale and sign)."""
    if rel_error is None or not np.isfinite(rel_error):
        return Outcome.INCONCLUSIVE
    return Outcome.SUPPORTED if rel_error <= tol else Outcome.REFUTED


def fit_outcome(fit: dict, tol: float = KERNEL_TOL) -> Outcome:
    """The nonlinear fit's outcome on "W is recovered from the data": supported when its kernel error
    is within ``tol``; refuted when it is not and the best start converged (a stationary point of
    the lowest cost found that is not W); inconclusive when no converged start reached W (an
    optimisation failure says nothing about identifiability)."""
    err = fit.get("rel_error")
    if err is None or not np.isfinite(err):
        return Outcome.INCONCLUSIVE
    if err <= tol:
        return Outcome.SUPPORTED
    return Outcome.REFUTED if fit.get("best_converged") else Outcome.INCONCLUSIVE


def identifiability_failure(fit: dict, tol: float = KERNEL_TOL) -> bool:
    """Converged starts of equal cost whose kernels differ by more than ``tol``: W not identified."""
    return bool(np.isfinite(fit.get("spread", np.nan)) and fit["spread"] > tol)


@dataclass(frozen=True)
class AttPlan:
    d: int = 4
    r_star: int = 2
    T: int = 6
    inputs: tuple[int, ...] = (8, 32)
    noises: tuple[float, ...] = (0.0, 0.01, 0.1)
    betas: tuple[float, ...] = (0.1, 1.0, 4.0, 16.0)
    seeds: int = 5
    student_seeds: int = 4
    steps: int = 1500
    lams: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    fit_starts: int = 3       # nonlinear softmax fit: the regression's estimate + (fit_starts - 1) random
    fit_nfev: int = 150       # evaluation budget per start (convergence is judged by optimality, not budget)
    full: bool = False

    def tag(self, seed: int) -> str:
        return f"v5-d{self.d}-r{self.r_star}-seed{seed}-{'full' if self.full else 'quick'}"

    def softmax_lengths(self) -> tuple[int, ...]:
        """The sequence lengths of the softmax recovery with W_V known: min(3, d) (T <= d: the inversion)
        and T."""
        return (min(3, self.d), self.T)

    def check(self) -> None:
        """Every chunk's parameters against what its kernels require (:mod:`numerics.rank.attention`,
        :mod:`numerics.rank.students`), nothing computed: InvalidInput naming the first that fails."""
        from theory.errors import InvalidInput

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise InvalidInput(f"rank attention plan (d = {self.d}, r* = {self.r_star}): {what}")

        need(self.d >= 1 and self.T >= 1, f"d = {self.d}, T = {self.T}: need d, T >= 1")
        need(2 <= self.r_star <= self.d, f"r* = {self.r_star}: the teacher needs r* <= d = {self.d}, the students "
                                         "(ranks r* - 1, r*, r* + 1) r* - 1 >= 1")
        need(self.r_star <= self.T, f"r* = {self.r_star}: the ladder's static mixer of rank r* needs r* <= T = {self.T}")
        need(all(B >= 1 for B in self.inputs), f"inputs = {self.inputs}: need batches >= 1")
        need(all(x >= 0 for x in self.noises), f"noises = {self.noises}: need noise levels >= 0")
        need(all(b > 0 for b in self.betas), f"betas = {self.betas}: need beta > 0")
        need(all(0 <= lam <= 1 for lam in self.lams), f"lams = {self.lams}: need 0 <= lambda <= 1")
        need(min(self.seeds, self.student_seeds) >= 1 and self.steps >= 0,
             f"seeds = {self.seeds}, student_seeds = {self.student_seeds}, steps = {self.steps}: need seeds >= 1, "
             "steps >= 0")
        need(SOFTMAX_BATCH * self.T >= self.d + self.d ** 3,
             f"the softmax recovery with W_V unknown needs B T >= d + d^3 = {self.d + self.d ** 3}, "
             f"got B T = {SOFTMAX_BATCH} x {self.T}")


QUICK_ATT = AttPlan()
FULL_ATT = AttPlan(d=6, r_star=3, T=8, inputs=(8, 32, 128), noises=(0.0, 0.001, 0.01, 0.1),
                   betas=(0.03, 0.1, 0.3, 1.0, 2.0, 4.0, 8.0, 16.0), seeds=50, student_seeds=16, steps=5000,
                   full=True)


def recovery_chunk(p: AttPlan, kind: str, setting: tuple, seed: int) -> list[Record]:
    """The draws of one setting, on one BLAS thread (many small least-squares problems: threads only
    contend; the results are the same up to rounding order)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _recovery_draws(p, kind, setting, seed)


def _recovery_draws(p: AttPlan, kind: str, setting: tuple, seed: int) -> list[Record]:
    out = []
    for i in range(p.seeds):
        sd = teacher_seed(seed, i)                    # the same teachers in every setting (paired)
        W, W_V = A.kernel_teacher(p.d, p.r_star, "linear", sd)
        rng = np.random.default_rng(sd + 1)
        fit = None
        if kind == "linear":
            B, noise, value_map = setting
            X = A.sample_tokens(B, p.T, p.d, sd + 2)
            Y = A.linear_attention(X, W, W_V)
            Y = Y + noise * rng.standard_normal(Y.shape)
            res = A.recover_linear_kernel(X, Y, W_V if value_map == "known" else None, W_true=W)
            identifiable = (res.get("design_cond", 0) < 1e10) if value_map == "known" else B * p.T >= p.d**3
            applies = noise == 0 and identifiable
            prov = {"B": B, "noise": noise, "value_map": value_map}
        else:
            beta, T, noise, value_map = setting
            X = A.sample_tokens(SOFTMAX_BATCH, T, p.d, sd + 2)
            Y = A.softmax_attention(X, W, W_V, beta)
            Y = Y + noise * rng.standard_normal(Y.shape)
            res = A.recover_softmax_kernel(X, Y, W_V if value_map == "known" else None, beta, W_true=W)
            if p.fit_starts > 0 and value_map == "known":
                fit = F.fit_softmax_kernel(X, Y, W_V, beta, res["W_hat"], starts=p.fit_starts, seed=sd, W_true=W,
                                           max_nfev=p.fit_nfev)
            elif p.fit_starts > 0:
                fit = F.fit_softmax_joint(X, Y, beta, res["W_hat"], starts=p.fit_starts, seed=sd, W_true=W,
                                          max_nfev=p.fit_nfev)
            prov = {"beta": beta, "T": T, "noise": noise, "B": SOFTMAX_BATCH, "method": res["method"], "value_map": value_map}
        prov = {"seed": sd, "d": p.d, "T": p.T, "r_star": p.r_star, "kind": kind, **prov}
        extra = {"rel_error": res["rel_error"], "tol": KERNEL_TOL, **{k: res[k] for k in RANKS},
                 "energy_ok": bool(res["energy_0.99"] == p.r_star)}
        if fit is not None:
            extra["fit"] = {"rel_error": fit["rel_error"], "converged": fit["converged"], "starts": fit["starts"],
                            "spread": fit["spread"], "optimality": fit["optimality"], "cost": fit["cost"],
                            "best_converged": fit["best_converged"], "stuck": fit["stuck"], "nfev": fit["nfev"],
                            "value_map": fit["value_map"], "outcome": fit_outcome(fit).value,
                            **{k: fit[k] for k in RANKS if k != "threshold"}}
        instance = f"{kind}/{setting}/{sd}"
        if kind == "linear":
            # a float rank estimate certifies nothing: the proved claim gets its certified verdict from
            # the exact rational regression (exact_chunk); here the estimate is stored, undecided
            verdict = Verdict.UNDECIDED if applies else Verdict.NOT_APPLICABLE
            extra = {**extra, "float_rank_matches": bool(res["energy_0.99"] == p.r_star)}
            out.append(Record("rank.attention.linear.recovery", instance, verdict, value=float(res["energy_0.99"]),
                              bound=float(p.r_star), provenance=prov, extra=extra))
        else:
            out.append(outcome_record(
                "rank.attention.softmax.recovery", instance, kernel_outcome(res["rel_error"]), res["rel_error"], None,
                f"relative error of the recovered W ({res['method']}) up to scale and sign, recovered iff <= "
                f"{KERNEL_TOL}; one draw, no per-draw interval", value=float(res["energy_0.99"]),
                bound=float(p.r_star), provenance=prov, extra=extra))
    return out


def exact_chunk(p: AttPlan, seed: int) -> list[Record]:
    """Exact rational recovery for linear attention (d = 3) and the 50-digit softmax inversion."""
    W = np.array([[1.0, 0.5, 0.0], [0.5, 0.25, 0.0], [0.0, 0.0, 0.0]])      # rank 1, rational
    X = np.round(A.sample_tokens(3, 3, 3, seed) * 4) / 4
    ex = A.recover_linear_kernel_exact(X, W, np.eye(3))
    ok = ex["identifiable"] and ex["equal"] and ex["rank"] == 1
    Wt, W_V = A.kernel_teacher(p.d, p.r_star, "linear", seed)
    Xs = A.sample_tokens(6, min(p.T, p.d), p.d, seed + 5)
    soft = {b: A.recover_softmax_kernel_exact(Xs, Wt, W_V, b)["rel_error"] for b in (16.0, 64.0)}
    return [Record("rank.attention.linear.recovery", "exact/d3", Verdict.TIGHT if ok else Verdict.VIOLATED,
                   value=float(ex.get("rank", -1)), bound=1.0, backend="fraction", dtype="exact",
                   provenance={"seed": seed, "d": 3, "T": 3, "B": 3}, extra={"W_hat_equals_W": bool(ex.get("equal"))}),
            outcome_record("rank.attention.softmax.recovery", "exact/inversion",
                           Outcome.SUPPORTED if max(soft.values()) < 1e-30 else Outcome.INCONCLUSIVE,
                           max(soft.values()), None, "largest relative kernel error of the 50-digit inversion "
                           "(noiseless, T <= d) over beta 16, 64; supported when < 1e-30",
                           value=max(soft.values()), backend="mpmath", dtype="50 digits",
                           provenance={"seed": seed, "d": p.d, "T": min(p.T, p.d), "B": 6, "noise": 0.0},
                           extra={"rel_error_by_beta": soft})]


def students_chunk(p: AttPlan, kind: str, seed: int) -> list[Record]:
    W, W_V = A.kernel_teacher(p.d, p.r_star, "linear", seed)
    X, Xt = A.sample_tokens(48, p.T, p.d, seed + 1), A.sample_tokens(256, p.T, p.d, seed + 2)
    f = A.linear_attention if kind == "linear" else (lambda X_, W_, V_: A.softmax_attention(X_, W_, V_, 1.0))
    Y, Yt = f(X, W, W_V), f(Xt, W, W_V)
    bound = S.linear_deficiency_bound(X, W, W_V, p.r_star - 1)
    lr = 0.25 / bound["lam_max"] if kind == "linear" else 0.1
    out = []
    for r in (p.r_star - 1, p.r_star, p.r_star + 1):
        seeds = [seed * 100 + i for i in range(p.student_seeds)]
        run = S.train_kernel_students(X, Y, W_V, r, seeds, kind, 1.0, steps=p.steps, lr=lr, X_test=Xt, Y_test=Yt)
        cert = S.linear_deficiency_bound_exact(X, W, W_V, r) if (kind == "linear" and r < p.r_star) else None
        for i, sd in enumerate(seeds):
            train, test = float(run["train_risk"][i, -1]), float(run["test_risk"][i])
            sig = run["sigma"][i]
            learned = int(np.sum(sig > 1e-3 * sig[0]))
            extra = {"test_risk": test, "init_risk": float(run["train_risk"][i, 0]), "learned": learned,
                     "rel_change_last_tenth": float(run["rel_change_last_tenth"][i]),
                     "grad_norm": float(run["grad_norm"][i]), "sigma": sig.tolist()}
            prov = {"seed": sd, "teacher_seed": seed, "kind": kind, "r": r, "r_star": p.r_star,
                    "d": p.d, "T": p.T, "B": 48, "steps": p.steps, "lr": lr, "beta": 1.0}
            if cert is not None:                          # linear, r < r*: a proved theorem, certified
                exact = S.student_risk_exact(X, W, W_V, None, "linear", factors=(run["U"][i], run["V"][i]))
                lower = cert["lower_exact"]
                v = Verdict.UNDECIDED if not (cert["certified"] and lower > 0) else \
                    Verdict.HOLDS if exact > lower else Verdict.TIGHT if exact == lower else Verdict.VIOLATED
                extra.update(exact_risk=float(exact), exact_slack=float(exact - lower))
                out.append(Record("rank.attention.linear.deficiency", f"{kind}/r{r}/{sd}", v, value=train,
                                  bound=cert["lower"], slack=float(exact - lower), backend="fraction+mpmath-iv",
                                  dtype="exact", provenance=prov, extra=extra))
                continue
            if r < p.r_star:                              # softmax, r < r*: the claim R(r) > 0
                o, stat, method = Outcome.INCONCLUSIVE, train, (
                    "train risk of a GD student: an upper bound on min risk, so it cannot show R(r) > 0")
            else:                                         # the claim R(r) = 0 for r >= r*, reached by GD
                stat = train / max(extra["init_risk"], 1e-300)
                o = Outcome.SUPPORTED if learned == p.r_star and stat < 1e-6 else Outcome.REFUTED
                method = "train risk / initial risk of one GD run (supported: < 1e-6 and learned rank = r*)"
            out.append(outcome_record("rank.attention.native", f"{kind}/r{r}/{sd}", o, stat, None, method,
                                      value=train, bound=0.0 if r >= p.r_star else None, provenance=prov,
                                      extra=extra))
    return out


def ladder_chunk(p: AttPlan, kind: str, lam: float, seed: int) -> list[Record]:
    out = []
    for i in range(3):
        sd = seed * 1000 + 7 * i
        W, W_V = A.kernel_teacher(p.d, p.r_star, "linear", sd)
        X = A.sample_tokens(64, p.T, p.d, sd + 1)
        rung = S.ladder_rung(X, S.ladder_data(X, lam, S.static_mixer(p.T, p.r_star, sd), W, W_V, kind), W_V)
        out.append(outcome_record("rank.attention.static_rank", f"{kind}/lam{lam}/{sd}",
                          Outcome.SUPPORTED if rung["energy_0.99"] == p.r_star else Outcome.REFUTED,
                          float(rung["energy_0.99"]), None, "energy_0.99 rank of the best static mixer on one "
                          "draw (supported iff = r*); no per-draw interval",
                          value=float(rung["energy_0.99"]), bound=float(p.r_star),
                          provenance={"seed": sd, "kind": kind, "lam": lam, "T": p.T, "d": p.d, "B": 64},
                          extra={"unexplained": rung["unexplained"], "energy_0.9": rung["energy_0.9"],
                                 "entropy": rung["entropy"]}))
    return out


NATIVE_INIT = 1e-3        # small initialisation of the over-parameterised students (the implicit-bias regime)
NATIVE_SEEDS = 2          # student seeds per teacher and rank
NATIVE_TEACHERS = 10      # at most this many of the plan's teachers (quick: all 5; full: 10 of 50)
NATIVE_VERSION = "v1"     # bump when native_chunk or exact_unknown_chunk changes: a new campaign
CONVERGED = 1e-6          # train risk / initial risk below this: the student reached zero risk
LEARNED_REL = 1e-3        # a kernel direction is learned when its singular value exceeds this x sigma_1


def teacher_seed(seed: int, i: int) -> int:
    """The seed of teacher ``i`` of the recovery and native campaigns (the same teachers in every setting)."""
    return seed * 1000 + 13 * i


def native_chunk(p: AttPlan, kind: str, i: int, seed: int) -> list[Record]:
    """Teacher ``i``: students of kernel rank r* (achievability: reach zero risk) and of rank d from
    small initialisation (recovery: reach zero risk with learned kernel rank r*), NATIVE_SEEDS each,
    on noiseless data (B = 48) of the teacher; W_V fixed to the teacher's."""
    sd = teacher_seed(seed, i)
    W, W_V = A.kernel_teacher(p.d, p.r_star, "linear", sd)
    X = A.sample_tokens(48, p.T, p.d, sd + 1)
    Y = A.linear_attention(X, W, W_V) if kind == "linear" else A.softmax_attention(X, W, W_V, 1.0)
    lr = 0.25 / S.linear_deficiency_bound(X, W, W_V, p.r_star - 1)["lam_max"] if kind == "linear" else 0.1
    out = []
    for role, r in (("achievability", p.r_star), ("recovery", p.d)):
        seeds = [sd * 100 + 7 * r + j for j in range(NATIVE_SEEDS)]
        run = S.train_kernel_students(X, Y, W_V, r, seeds, kind, 1.0, steps=p.steps, lr=lr, init_scale=NATIVE_INIT)
        for j, s in enumerate(seeds):
            sig = run["sigma"][j]
            ratio = float(run["train_risk"][j, -1] / max(run["train_risk"][j, 0], 1e-300))
            learned = int(np.sum(sig > LEARNED_REL * sig[0]))
            done = ratio < CONVERGED
            if role == "achievability":
                o = Outcome.SUPPORTED if done else Outcome.REFUTED
                method = f"train risk / initial risk of one GD run of kernel rank r* (supported: < {CONVERGED:g})"
            else:
                o = Outcome.INCONCLUSIVE if not done else Outcome.SUPPORTED if learned == p.r_star else Outcome.REFUTED
                method = (f"kernel rank learned by a rank-d student from init {NATIVE_INIT:g} (sigma_i > {LEARNED_REL:g} "
                          f"sigma_1), judged once train risk / initial risk < {CONVERGED:g} (else inconclusive)")
            out.append(outcome_record(
                "rank.attention.native", f"{kind}/{role}/t{i}/{s}", o, float(learned) if role == "recovery" else ratio,
                None, method + "; one run, intervals over teachers in the tables", value=float(run["train_risk"][j, -1]),
                bound=float(p.r_star) if role == "recovery" else 0.0,
                provenance={"seed": s, "teacher_seed": sd, "kind": kind, "role": role, "r": r, "r_star": p.r_star,
                            "d": p.d, "T": p.T, "B": 48, "steps": p.steps, "lr": lr, "beta": 1.0,
                            "init_scale": NATIVE_INIT, "noise": 0.0},
                extra={"learned": learned, "risk_ratio": ratio, "sigma": sig.tolist(),
                       "grad_norm": float(run["grad_norm"][j])}))
    return out


def exact_unknown_chunk(p: AttPlan, seed: int) -> list[Record]:
    """The kernel's rank from noiseless linear-attention data *without* the value map, decided in
    rational arithmetic (:func:`numerics.rank.attention.recover_linear_kernel_unknown_exact`): d = 3,
    a rational W of rank 2 and a rational invertible W_V, B = 8 inputs of T = 3 tokens (quarters)."""
    W = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 1.0], [1.0, 1.5, 1.0]])       # rank 2 (row 3 = row 1 + row 2)
    W_V = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.25, 0.0, 1.0]])   # invertible, no zero row
    X = np.round(A.sample_tokens(8, 3, 3, seed) * 4) / 4
    ex = A.recover_linear_kernel_unknown_exact(X, W, W_V)
    ok = ex["identifiable"] and ex["equal"] and ex["rank"] == ex["rank_W"] == 2
    return [Record("rank.attention.linear.recovery", "exact/d3/value-map-unknown",
                   Verdict.TIGHT if ok else Verdict.UNDECIDED if not ex["identifiable"] else Verdict.VIOLATED,
                   value=float(ex.get("rank", -1)), bound=2.0, backend="fraction", dtype="exact",
                   provenance={"seed": seed, "d": 3, "T": 3, "B": 8, "value_map": "unknown", "noise": 0.0},
                   extra={"identifiable": bool(ex["identifiable"]), "symmetric_theta_equal": bool(ex.get("equal")),
                          "rank_W": ex.get("rank_W")})]


def campaigns(p: AttPlan, seed: int) -> tuple[str, str, str, str]:
    tag = p.tag(seed)
    return (f"rank.att-recovery-{tag}", f"rank.att-students-{tag}", f"rank.att-ladder-{tag}",
            f"rank.att-native-{NATIVE_VERSION}-{tag}")


def attention_chunks(p: AttPlan, seed: int = 0) -> dict[str, list]:
    """campaign -> its chunks, for the four attention campaigns of ``p`` (nothing run)."""
    rec_c, stu_c, lad_c, nat_c = campaigns(p, seed)
    C = campaign.Chunk
    lin = [(B, nz, vm) for vm in ("known", "unknown") for B in p.inputs for nz in p.noises]
    soft = [(b, T, nz, "known") for T in p.softmax_lengths() for b in p.betas for nz in p.noises[:2]] \
        + [(b, p.T, nz, "unknown") for b in p.betas for nz in p.noises[:2]]
    return {rec_c: [C(f"linear/{s}", recovery_chunk, (p, "linear", s, seed)) for s in lin]
            + [C(f"softmax/{s}", recovery_chunk, (p, "softmax", s, seed)) for s in soft]
            + [C("exact", exact_chunk, (p, seed))],
            stu_c: [C(k, students_chunk, (p, k, seed)) for k in ("linear", "softmax")],
            lad_c: [C(f"{k}/{lam}", ladder_chunk, (p, k, lam, seed)) for k in ("linear", "softmax") for lam in p.lams],
            nat_c: [C(f"{k}/t{i}", native_chunk, (p, k, i, seed)) for k in ("linear", "softmax")
                    for i in range(min(p.seeds, NATIVE_TEACHERS))]
            + [C("exact-unknown", exact_unknown_chunk, (p, seed))]}


def run_attention(store: Any, p: AttPlan, seed: int = 0, console: Any = None, executor: Any = None) -> None:
    for name, chunks in attention_chunks(p, seed).items():
        campaign.run(store, name, chunks, console=console, executor=executor)
