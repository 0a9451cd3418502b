"""The linear rank campaigns: deficiency, achievability and recovery for the linear surrogate
(docs/theory.md; kernels in :mod:`numerics.rank.linear` and :mod:`numerics.rank.gd`).

  optimum     R(r) for r = 0..r*+2 on teachers of three spectrum shapes; the tail sum certified in
              60-digit intervals, the risk of the explicit minimizer, deficiency/achievability
              verdicts decided exactly from r* = rank(M*) (the rational the floats represent).
  gd-pop      batched GD on U V^T, population loss: learned rank (singular values of U V^T K^{1/2}
              above 10x their initial scale) against r* and init scale; risk at r < r*, r*, r* + 2
              with how converged it is (relative change over the last tenth, gradient norm).
  gd-data     the same on finite noisy data from small initialisation (1e-3, 1e-6): the rank along the
              trajectory counted above the noise level (Gavish-Donoho threshold of the least-squares
              fit's entry noise), where it passes r* and for how long, and the rank it ends at.
  estimators  least squares then energy rank (0.9, 0.99), entropy rank (p_i from sigma_i^2 and
              from sigma_i), Gavish-Donoho threshold with the noise unknown (median rule: the spectrum
              alone, the same information as the others) and with the fit's residual noise (more
              information): recovery rate vs sample size, noise and shape. The estimators see the same
              draws (paired); the draws of one (shape, N, draw index) share their random numbers over
              the noise levels (repeated measures of one unit).
The recovery claims (rank.linear.gd_recovery, rank.linear.data_recovery) are conjectures: each
draw is an outcome (supported / refuted / inconclusive) with its statistic, the rank it found; the
tables aggregate them as shares with 95% Wilson intervals. A refuted draw is a finding, not a stop.
Attention part: :mod:`verification.rank.checks.attention`; trained heads:
:mod:`verification.rank.checks.weights`. Records go to the store chunk by chunk (re-running
resumes); tables and figures (:mod:`verification.rank.report.linear`) are aggregated from the
stored records only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from numerics.rank import linear as R
from numerics.rank import gd as G
from theory.verdicts import Outcome, Verdict
from verification import campaign
from verification.store import Record, outcome_record

VERSION = "v4"  # bump when a chunk's computation changes: a new campaign, not a resume
ESTIMATORS = ("energy_0.9", "energy_0.99", "entropy_round", "entropy_sigma_round", "threshold_median", "threshold")
# the estimators given the same information (the singular values of the fit alone), compared paired;
# "threshold" also reads the fit's residual noise, so it is shown beside them, not ranked against them
SAME_INFORMATION = ESTIMATORS[:5]
ONE_DRAW = "one draw: the statistic is the rank this draw gives; no per-draw interval (tables: Wilson 95% of the share)"


def rank_outcome(found: Any, want: int) -> Outcome:
    """supported when the rank found equals the rank claimed, refuted when not, inconclusive when
    the rank could not be decided (None)."""
    if found is None:
        return Outcome.INCONCLUSIVE
    return Outcome.SUPPORTED if int(found) == int(want) else Outcome.REFUTED


D = 4                   # columns per input: an input is an n x D matrix, N inputs give N D columns


def least_samples(n: int) -> int:
    """The least number of inputs whose N D columns exceed n (the least-squares fit of the finite-data
    campaigns needs more columns than rows)."""
    return n // D + 1


@dataclass(frozen=True)
class Plan:
    """What a run covers; quick is the main-job section, full the standalone campaign. A plan is
    valid when :meth:`check` passes: every chunk's parameters pass the checks its kernels apply."""
    n: int = 8
    r_star: int = 3
    seeds: int = 2                         # teacher seeds per (shape, covariance)
    gd_seeds: int = 8
    gd_steps: int = 3000
    init_scales: tuple[float, ...] = (1e-1, 1e-3)
    samples: tuple[int, ...] = (8, 64)     # N inputs of d = 4 columns each
    noises: tuple[float, ...] = (0.01, 0.1, 0.5)
    data_inits: tuple[float, ...] = (1e-3, 1e-6)   # GD on finite data: small initialisation (implicit bias)
    est_seeds: int = 40
    seed: int = 0
    full: bool = False

    @property
    def tag(self) -> str:
        return f"{VERSION}-n{self.n}-r{self.r_star}-seed{self.seed}-{'full' if self.full else 'quick'}"

    def gd_ranks(self) -> tuple[int, ...]:
        """The student ranks of the population GD campaign: r* - 1 (where it is at least 1), r*, r* + 2."""
        return tuple(r for r in (self.r_star - 1, self.r_star, self.r_star + 2) if r >= 1)

    def at_size(self, n: int, r_star: int) -> "Plan":
        """This plan at dimension ``n`` and teacher rank ``r_star``: a sample size whose N D columns
        would not exceed n is raised to :func:`least_samples` (n) (the least-squares fit needs more
        columns than rows)."""
        from dataclasses import replace

        least = least_samples(n)
        return replace(self, n=n, r_star=r_star, samples=tuple(sorted({max(N, least) for N in self.samples})))

    def check(self) -> None:
        """Every chunk's parameters against what its kernels require (:mod:`numerics.rank.linear`,
        :mod:`numerics.rank.gd`), nothing computed: InvalidInput naming the first that fails."""
        from theory.errors import InvalidInput

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise InvalidInput(f"rank linear plan {self.tag}: {what}")

        need(self.n >= 3, f"n = {self.n}: needs n >= 3")
        need(1 <= self.r_star <= min(self.n - 2, R.MAX_TEACHER_RANK),
             f"r* = {self.r_star}: needs 1 <= r* <= n - 2 = {self.n - 2} (students up to r* + 2) and "
             f"r* <= {R.MAX_TEACHER_RANK} (the teacher's exact grid)")
        for name in ("seeds", "gd_seeds", "est_seeds"):
            need(getattr(self, name) >= 1, f"{name} = {getattr(self, name)}: needs at least 1")
        need(self.gd_steps >= 0, f"gd_steps = {self.gd_steps}: needs >= 0")
        for name in ("init_scales", "data_inits"):
            need(all(x > 0 for x in getattr(self, name)),
                 f"{name} = {getattr(self, name)}: needs initial scales > 0")
        need(all(x >= 0 for x in self.noises), f"noises = {self.noises}: needs noise levels >= 0")
        for N in self.samples:
            need(N * D > self.n, f"sample size N = {N}: {N} inputs x {D} columns = {N * D} columns, but the "
                                 f"least-squares fit needs more than n = {self.n} (N >= {least_samples(self.n)})")


QUICK = Plan()
FULL = Plan(n=16, r_star=4, seeds=5, gd_seeds=64, gd_steps=20000, init_scales=(1e-1, 1e-2, 1e-3, 1e-4),
            samples=(5, 8, 16, 64, 256), noises=(0.01, 0.03, 0.1, 0.3, 1.0), est_seeds=100, full=True)
COVS = ("identity", "spread")


def _instance(plan: Plan, shape: str, cov: str, s: int):
    seed = plan.seed * 1000 + 17 * s + 3 * COVS.index(cov) + R.SPECTRUM_SHAPES.index(shape)
    K = R.covariance(plan.n, cov, seed)
    return K, R.teacher(plan.n, plan.r_star, shape, K, seed), seed


# -- optimum: tail sum, deficiency, achievability, the excess-risk identity -------------------------


def optimum_chunk(plan: Plan, shape: str, cov: str, s: int) -> list[Record]:
    K, M, seed = _instance(plan, shape, cov, s)
    prov = {"seed": seed, "generator": "numerics.rank.teacher", "shape": shape, "covariance": cov,
            "n": plan.n, "r_star": plan.r_star}
    out = []
    for r in range(0, plan.r_star + 3):
        cert = R.certify_tail_sum(M, K, r)
        lo, hi = float(cert["tail_lo"]), float(cert["tail_hi"])
        overlap = cert["risk_lo"] <= cert["tail_hi"] and cert["tail_lo"] <= cert["risk_hi"]
        width = float(max(cert["tail_hi"], cert["risk_hi"]) - min(cert["tail_lo"], cert["risk_lo"]))
        fast = R.optimal_excess_risk(M, K, r)
        out.append(Record("rank.linear.eckart_young", f"{shape}/{cov}/{s}/r{r}",
                          # overlapping 60-digit enclosures are consistent with equality but do not
                          # exclude a difference below their width: undecided, never "tight"
                          Verdict.UNDECIDED, slack=None if overlap else float(cert["risk_lo"] - cert["tail_hi"]),
                          value=float(cert["risk_lo"]),
                          bound=lo, backend="mpmath-iv", dtype="60 digits", provenance={**prov, "r": r},
                          extra={"fast": fast, "certified_width": width, "fast_error": abs(fast - lo),
                                 "enclosures_overlap": bool(overlap)}))
        for name, fn in (("deficiency", R.deficiency_fast), ("achievability", R.achievability_fast)):
            res = fn(M, K, r)
            out.append(Record(f"rank.linear.{name}", f"{shape}/{cov}/{s}/r{r}", res["verdict"],
                              slack=res["value"] - res["bound"], value=res["value"], bound=res["bound"],
                              backend="fraction+float", provenance={**prov, "r": r},
                              extra={"r_star_exact": res["r_star"], "tail_interval": [lo, hi]}))
    student = np.random.default_rng(seed).standard_normal(M.shape) * 0.25
    lhs, rhs = R.excess_risk_exact(M, student, K, d=4)
    mc = R.excess_risk_monte_carlo(M, student, K, d=4, samples=4000, seed=seed)
    out.append(Record("rank.linear.excess_risk_identity", f"{shape}/{cov}/{s}",
                      Verdict.TIGHT if lhs == rhs else Verdict.VIOLATED, slack=float(rhs - lhs), value=float(lhs),
                      bound=float(rhs), backend="fraction", dtype="exact", provenance={**prov, "d": 4},
                      extra={"mc_mean": mc["mean"], "mc_z": (mc["mean"] - mc["identity"]) / mc["stderr"]}))
    return out


# -- gradient descent ----------------------------------------------------------------------------


def _learned_counts(run: dict, L: np.ndarray) -> tuple[np.ndarray, int]:
    """Final learned rank per seed: float count when every singular value is clearly away from the
    threshold (relative 1e-9 of sigma_1), else the 50-digit count (None = undecided)."""
    thr = G.escape_threshold(run["init_top"])
    final = run["spectra"][:, -1]
    counts, exact_calls = [], 0
    for i in range(final.shape[0]):
        gap = np.min(np.abs(final[i] - thr[i])) / max(final[i, 0], 1e-300)
        if gap > 1e-9:
            counts.append(int(np.sum(final[i] > thr[i])))
        else:
            exact_calls += 1
            counts.append(G.learned_rank_exact(run["U"][i], run["V"][i], L, float(thr[i])))
    return np.array(counts, dtype=object), exact_calls


def gd_population_chunk(plan: Plan, shape: str, r: int, init: float) -> list[Record]:
    K, M, seed = _instance(plan, shape, "spread", 0)
    seeds = [seed * 100 + i for i in range(plan.gd_seeds)]
    run = G.gd_factorised(M, K, r, seeds, init_scale=init, steps=plan.gd_steps)
    counts, exact_calls = _learned_counts(run, np.linalg.cholesky(K))
    thr = G.escape_threshold(run["init_top"])
    path = G.learned_rank(run["spectra"], thr)                              # (S, T)
    conv = G.convergence(run)
    opt = R.optimal_excess_risk(M, K, r)
    prov = {"seed": seed, "seeds": [seeds[0], seeds[-1]], "shape": shape, "covariance": "spread", "n": plan.n,
            "r_star": plan.r_star, "r": r, "init_scale": init, "steps": plan.gd_steps, "lr": run["lr"]}
    out = []
    for i, sd in enumerate(seeds):
        c = counts[i]
        want = min(r, plan.r_star)
        risk = float(run["risk"][i, -1])
        out.append(outcome_record("rank.linear.gd_recovery", f"pop/{shape}/r{r}/init{init}/{sd}",
                          rank_outcome(c, want), float("nan") if c is None else float(c), None,
                          "learned rank = #sigma_i(U V^T K^(1/2)) > 10 x the initial top value (50-digit "
                          "count near the cut-off; undecided there = inconclusive); " + ONE_DRAW,
                          value=None if c is None else float(c), bound=float(want), backend="torch", dtype="float64",
                          provenance={**prov, "gd_seed": sd},
                          extra={"risk": risk, "optimum": opt, "gap": risk - opt,
                                 "rel_change_last_tenth": float(conv["rel_change_last_tenth"][i]),
                                 "grad_norm": float(conv["grad_norm"][i]), "exact_calls": exact_calls,
                                 "path": path[i].tolist(), "steps": run["steps"].tolist(),
                                 "spectrum": run["spectra"][i, -1].tolist(),
                                 "first_step_at_r_star": _first(path[i], want, run["steps"]),
                                 "threshold": float(thr[i]),
                                 "spectra_path": run["spectra"][i].tolist() if i == 0 else None}))
    return out


def _first(path: np.ndarray, want: int, steps: np.ndarray) -> Any:
    hit = np.nonzero(path == want)[0]
    return int(steps[hit[0]]) if hit.size else None


def dwell(path: np.ndarray, steps: np.ndarray, want: int) -> dict[str, Any]:
    """Where a rank path (recorded at ``steps``) is at ``want`` and for how long: the first and the
    last recorded step at it, and the span from the first to the next recorded step after the last
    (the final step if it ends there), in steps and in decades (log10 of end / first step, first >= 1)."""
    at = np.nonzero(np.asarray(path) == want)[0]
    if at.size == 0:
        return {"first": None, "last": None, "span_steps": 0, "span_decades": 0.0}
    first, last = int(steps[at[0]]), int(steps[at[-1]])
    end = int(steps[min(at[-1] + 1, len(steps) - 1)])
    return {"first": first, "last": last, "span_steps": end - first,
            "span_decades": float(np.log10(max(end, 1) / max(first, 1)))}


def _fit(plan: Plan, M: np.ndarray, K: np.ndarray, N: int, noise: float, seed: int) -> dict:
    """The least-squares fit of N noisy inputs drawn with ``seed``. N D columns that do not exceed n
    are a bug here, not the user's input: :meth:`Plan.check` refuses such a plan before any work."""
    if N * D <= plan.n:
        raise RuntimeError(f"rank plan {plan.tag}: N = {N} inputs give {N * D} columns for n = {plan.n}; the plan "
                           "should have been refused by Plan.check() before it ran (a bug)")
    return R.least_squares(*R.sample_data(M, K, N, D, noise, seed))


def gd_data_chunk(plan: Plan, shape: str, N: int, noise: float, init: float) -> list[Record]:
    """GD on U V^T (full width) on finite noisy data from small initialisation. The learned rank along
    the trajectory counts sigma_i(U V^T K^(1/2)) above the noise level: the Gavish-Donoho threshold of
    the entry noise of the least-squares fit, noise_hat / sqrt(N d) (as the threshold estimator), so the
    rank GD ends at is not full by construction. Outcome: the rank at the last step equals r*; the
    path's passage through r* (first / last step, span) is stored beside it."""
    K, M, seed = _instance(plan, shape, "spread", 0)
    seeds = [seed * 100 + 7 * N + i for i in range(plan.gd_seeds)]
    fits = [_fit(plan, M, K, N, noise, sd) for sd in seeds]
    Kh = np.stack([f["K_hat"] for f in fits])
    C = np.stack([f["M_hat"] @ f["K_hat"] for f in fits])                     # Y X^T / cols
    run = G.gd_factorised(M, K, plan.n, seeds, init_scale=init, steps=plan.gd_steps, data=(Kh, C), points=120)
    tau = np.array([R.gavish_donoho_threshold(f["noise_std"] / np.sqrt(f["columns"]), M.shape) for f in fits])
    path = G.learned_rank(run["spectra"], tau)                                 # (S, T)
    escape = G.learned_rank(run["spectra"], G.escape_threshold(run["init_top"]))
    prov = {"seed": seed, "shape": shape, "N": N, "d": D, "noise": noise, "n": plan.n, "r_star": plan.r_star,
            "r": plan.n, "init_scale": init, "steps": plan.gd_steps, "lr": run["lr"]}
    out = []
    for i, sd in enumerate(seeds):
        ends = int(path[i, -1])
        where = dwell(path[i], run["steps"], plan.r_star)
        out.append(outcome_record("rank.linear.gd_recovery", f"data/{shape}/N{N}/noise{noise}/init{init}/{sd}",
                          rank_outcome(ends, plan.r_star), float(ends), None,
                          "rank at the last step: #sigma_i(U V^T K^(1/2)) above the Gavish-Donoho threshold of the "
                          "least-squares fit's entry noise; " + ONE_DRAW,
                          value=float(ends), bound=float(plan.r_star), backend="torch",
                          provenance={**prov, "gd_seed": sd},
                          extra={"passes_r_star": where["first"] is not None, "path": path[i].tolist(),
                                 "first_step_at_r_star": where["first"], "last_step_at_r_star": where["last"],
                                 "span_steps": where["span_steps"], "span_decades": where["span_decades"],
                                 "threshold": float(tau[i]), "noise_hat": fits[i]["noise_std"],
                                 "escape_final_rank": int(escape[i, -1]), "steps": run["steps"].tolist(),
                                 "grad_norm_end": float(run["grad_norm"][i, -1]),
                                 "risk_end": float(run["risk"][i, -1]), "risk_min": float(run["risk"][i].min())}))
    return out


def estimator_chunk(plan: Plan, shape: str, N: int, noise: float) -> list[Record]:
    """Every estimator on each draw. Stored with the teacher's smallest signal singular value
    sigma_{r*}(M* K^{1/2}) and the detection limit (Gavish-Donoho threshold at the true noise): both
    describe the design, known to the experimenter and given to no estimator. ``draw`` (the index i)
    names the unit: the same i at another noise level reuses the same random numbers."""
    K, M, seed = _instance(plan, shape, "spread", 0)
    sigma_last = float(R.weighted_singular_values(M, K)[plan.r_star - 1])
    limit = R.detection_limit(noise, N * D, M.shape)
    out = []
    for i in range(plan.est_seeds):
        sd = seed * 1000 + 31 * N + i
        fit = _fit(plan, M, K, N, noise, sd)
        est = R.estimate_ranks(fit["M_hat"], fit["K_hat"], fit["noise_std"], fit["columns"])
        for name in ESTIMATORS:
            out.append(outcome_record(
                "rank.linear.data_recovery", f"{shape}/N{N}/noise{noise}/{sd}/{name}",
                rank_outcome(est[name], plan.r_star), float(est[name]), None,
                f"estimator {name} on sigma(M_hat K_hat^(1/2)) of the least-squares fit; " + ONE_DRAW,
                value=float(est[name]), bound=float(plan.r_star),
                provenance={"seed": sd, "shape": shape, "N": N, "d": D, "noise": noise, "n": plan.n,
                            "estimator": name, "draw": i},
                extra={"entropy": est["entropy"], "entropy_sigma": est["entropy_sigma"],
                       "noise_hat": fit["noise_std"], "sigma_r_star": sigma_last, "detection_limit": limit}))
    return out


# -- running, aggregating ------------------------------------------------------------------------------


def linear_chunks(plan: Plan) -> dict[str, list]:
    """campaign -> its chunks, for the four linear campaigns of ``plan`` (nothing run)."""
    tag = plan.tag
    C = campaign.Chunk
    return {
        f"rank.optimum-{tag}": [C(f"{sh}/{cov}/{s}", optimum_chunk, (plan, sh, cov, s))
                                for sh in R.SPECTRUM_SHAPES for cov in COVS for s in range(plan.seeds)],
        f"rank.gd-pop-{tag}": [C(f"{sh}/r{r}/init{init}", gd_population_chunk, (plan, sh, r, init))
                               for sh in R.SPECTRUM_SHAPES for r in plan.gd_ranks()
                               for init in plan.init_scales],
        f"rank.gd-data-{tag}": [C(f"{sh}/N{N}/noise{nz}/init{init}", gd_data_chunk, (plan, sh, N, nz, init))
                                for sh in ("flat", "geometric") for N in plan.samples for nz in plan.noises[1:]
                                for init in plan.data_inits],
        f"rank.estimators-{tag}": [C(f"{sh}/N{N}/noise{nz}", estimator_chunk, (plan, sh, N, nz))
                                   for sh in R.SPECTRUM_SHAPES for N in plan.samples for nz in plan.noises]}


def run_linear(store: Any, plan: Plan, console: Any = None, executor: Any = None) -> None:
    for name, chunks in linear_chunks(plan).items():
        campaign.run(store, name, chunks, console=console, executor=executor)
