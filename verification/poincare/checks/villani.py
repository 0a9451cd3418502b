"""Where does Villani's condition (the seed's route to Poincare for every lambda > 0) fail?

The result is the boundary lambda_V(beta) per family and data seed (3 quick, 6 full), over a
log-spaced beta grid (8 quick, 12 full): for lora2 with a certified bracket
(numerics.poincare.villani.lambda_v_certified: lambda_V^2 = sup_p 2L''/beta - L'^2 enclosed in arb
ball arithmetic), for attn2 an estimate (grid sup), for attn1 0 by proof. The seed's hypothesis is
every lambda > 0 (no assumption on beta or on the data), so a positive lambda_V(beta) is a
counterexample to its route at every lambda below it. The lambda grid only places outcome records
(theory: poincare.gibbs.villani, a conjecture here) on either side of the boundary: refuted where
lambda < lambda_V (a failure enclosed in interval arithmetic: ``certified``), supported above it,
inconclusive inside its interval; a share of that grid would depend only on the chosen range, so the
report gives the boundary (verification.poincare.report.findings). The condition: docs/theory.md
section 4.

For lora2 each chunk adds one record of kind ``analytic``: the analytic bracket
sqrt(2 L''(p*)/beta) <= lambda_V(beta) <= sqrt(2 sup L''/beta) (p* a critical point of L; proof:
docs/theory.md section 4), its two constants certified once per data set
(numerics.poincare.villani.lora_analytic_bracket), and, per beta of the grid, that bracket beside the
certified one (two rigorous enclosures of the same number must meet: ``consistent``, a check, never a
finding). Its outcome is the seed's condition read for every beta > 0: refuted,
certified, when L''(p*) > 0 is enclosed (then lambda_V(beta) > 0 at every beta, not only on the grid);
the reading for beta large holds by the upper end (beta > 2 sup L'' / lambda^2 suffices).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numerics.poincare.losses import family
from numerics.poincare.villani import analytic_interval, lambda_v, lambda_v_certified, lora_analytic_bracket
from verification import campaign
from verification.poincare.checks.bounds import villani_record
from theory.verdicts import Outcome
from verification.store import Record, outcome_record

VERSION = "v3"
MAP_LOSSES = ("attn1", "attn2", "lora2")


def map_grid(full: bool) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(betas, lambdas), log-spaced: 8 x 8 quick, 12 x 12 full."""
    n = 12 if full else 8
    betas = np.geomspace(0.25, 64.0, n)
    lams = np.geomspace(1e-3, 3.0, n)
    return tuple(float(f"{b:.4g}") for b in betas), tuple(float(f"{x:.4g}") for x in lams)


def map_seeds(plan: Any) -> tuple[int, ...]:
    """Data seeds of the map of ``plan`` (a :class:`verification.poincare.checks.Plan`): its seed
    and the next 2 (quick) or 5 (full)."""
    return tuple(plan.seed + k for k in range(6 if plan.full else 3))


def map_campaign(plan: Any) -> str:
    """The Villani map's campaign of ``plan`` (its seed, quick or full)."""
    return f"poincare.villani-map-{VERSION}-seed{plan.seed}-{'full' if plan.full else 'quick'}"


def map_chunk(name: str, data_seed: int, full: bool, certify: bool = True) -> list[Record]:
    """Every (beta, lambda) point of one family on one data set."""
    fam = family(name, data_seed)
    betas, lams = map_grid(full)
    recs, certified = [], []
    for beta in betas:
        est = lambda_v(fam, beta)
        cert = lambda_v_certified(fam, beta, est["witness"])
        bracket = None if cert is None else list(cert["bracket"])
        # a sup estimated from points can never exceed a certified upper bound of that sup (float
        # rounding of the torch estimate: 1e-12 relative, far above it)
        within = None if bracket is None else bool(est["lambda_V"] <= bracket[1] * (1 + 1e-12))
        certified.append((beta, bracket))
        for lam in lams:
            key = f"{name}-s{data_seed}-b{beta:g}-l{lam:g}"
            prov = {**fam.provenance, "seed": data_seed, "beta": beta, "lambda": lam, "grid": f"{len(betas)}x{len(lams)}"}
            extra = {"family": name, "data_seed": data_seed, "beta": beta, "lam": lam, "kind": "map",
                     "certified_bracket": bracket, "estimate_within_bracket": within,
                     "bracket_method": None if cert is None else cert["method"]}
            recs.append(villani_record(fam, beta, lam, key, prov, extra, certify=certify))
    ab = lora_analytic_bracket(fam) if certify else None
    if ab is not None:
        recs.append(analytic_record(fam, data_seed, ab, certified))
    return recs


def analytic_record(fam, data_seed: int, ab: dict, certified) -> Record:
    """The analytic bracket of one lora2 data set (``ab``: numerics.poincare.villani.lora_analytic_bracket)
    beside the certified brackets ``certified`` [(beta, [lo, hi] or None)], as one outcome record of the
    seed's condition read for every beta: refuted (certified) when a = L''(p*) > 0 is enclosed."""
    a, A = ab["a"], ab["A"]
    per_beta = []
    for beta, bracket in certified:
        lo, hi = analytic_interval(a, A, beta)
        ok = None if bracket is None else bool((lo is None or lo <= bracket[1]) and bracket[0] <= hi)
        per_beta.append([beta, lo, hi, None if bracket is None else bracket[0], None if bracket is None else bracket[1],
                         ok])
    positive = a is not None and a > 0
    out = Outcome.REFUTED if positive else Outcome.INCONCLUSIVE
    return outcome_record(
        "poincare.gibbs.villani", f"{fam.name}-s{data_seed}-analytic", out, 0.0 if a is None else a, None,
        "the seed's condition read for every lambda > 0 and every beta > 0: refuted where L''(p*) > 0 is enclosed, since then "
        "lambda_V(beta) >= sqrt(2 L''(p*)/beta) > 0 at every beta; " + ab["method"],
        value=a, bound=A, backend="python-flint", provenance={**fam.provenance, "seed": data_seed},
        extra={"family": fam.name, "data_seed": data_seed, "kind": "analytic", "order": "every beta",
               "certified": positive, "L2_at_p_star": a, "sup_L2": A, "p_star": ab["p_star"],
               "sup_point": ab["sup_point"], "P": ab["P"], "tail_bound": ab["tail_bound"],
               "beta0_times_lambda2": 2 * A, "per_beta": per_beta,
               "consistent": all(x[-1] is not False for x in per_beta)})


def map_chunks(plan: Any, families=MAP_LOSSES) -> list:
    """One chunk per (family, data seed) of the map of ``plan`` (nothing run)."""
    return [campaign.Chunk(f"{name}-s{s}", map_chunk, (name, s, plan.full)) for name in families
            for s in map_seeds(plan)]


def run_villani_map(store, plan: Any, families=MAP_LOSSES, console=None, executor: Any = None) -> None:
    """The map of ``families`` at ``plan``'s seed and size, resumed."""
    campaign.run(store, map_campaign(plan), map_chunks(plan, families), console=console,
                 description="Villani map", executor=executor)
