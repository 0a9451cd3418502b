"""The Langevin runs' findings: each comparison's outcome (:class:`SdeOutcome`) and, per beta, E_beta[L]
- inf L against d/(2 beta) with the chains' distances to the minimisers (:class:`LossExcess`), built
from the stored records of the SDE campaign; per beta, whether the SDE minimises F, the regularised loss
its invariant measure concentrates on (:class:`Minimisation`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class SdeOutcome:
    """One Langevin comparison (``kind``: rate, mean_loss, expected_loss): the measured value with
    its standard error and interval, the reference and the outcome."""

    family: str
    kind: str
    beta: Optional[float]
    lam: Optional[float]
    measured: float
    se: float
    lo: Optional[float]
    hi: Optional[float]
    reference: float
    outcome: str


@dataclass(frozen=True)
class Distance:
    """The chains' distance to a set at time ``t``: mean and standard error over chains."""

    t: float
    mean: float
    se: float


@dataclass(frozen=True)
class LossExcess:
    """E_beta[L] - inf L at one beta with its interval against the Laplace value d/(2 beta), the
    outcome (``predicted``: a refutation the regularisation gap alone forces), the gap
    L(theta*_lambda) - inf L, the distance to the minimisers of L found at the first, middle and last
    record time and to theta*_lambda at the end."""

    family: str
    beta: float
    lam: float
    excess: float
    lo: float
    hi: float
    laplace: float
    outcome: str
    predicted: bool
    gap: float
    to_argmin: tuple[Distance, Distance, Distance]
    to_theta_star: Distance


def sde_outcomes(records: list[dict]) -> tuple[SdeOutcome, ...]:
    """The rate, mean-loss and expected-loss comparisons among the SDE campaign's ``records``."""
    out = []
    for r in records:
        e = r["extra"]
        iv = e.get("interval") or [None, None]
        if e["kind"] in ("rate", "mean_loss"):
            se = e["se"]
        elif e["kind"] == "expected_loss":
            se = e["E_L_se"]
        else:
            continue
        out.append(SdeOutcome(e["family"], e["kind"], e.get("beta"), e.get("lam"), r["value"], se, iv[0], iv[1],
                              r["bound"], r["verdict"]))
    return tuple(out)


def loss_excesses(records: list[dict]) -> tuple[LossExcess, ...]:
    """The expected-loss records with their Laplace value, by (family, beta)."""
    out = []
    for r in records:
        e = r["extra"]
        if e.get("kind") != "expected_loss" or "laplace" not in e:
            continue
        d = e["dist_argmin_L"]
        out.append(LossExcess(e["family"], e["beta"], e["lam"], r["value"], e["interval"][0], e["interval"][1],
                              e["laplace"], r["verdict"], bool(e.get("predicted_refuted") and r["verdict"] == "refuted"),
                              e["L_star"] - e["min_L"], tuple(Distance(*x) for x in (d[0], d[len(d) // 2], d[-1])),
                              Distance(*e["dist_theta_star"][-1])))
    return tuple(sorted(out, key=lambda x: (x.family, x.beta)))


@dataclass(frozen=True)
class Minimisation:
    """Does the SDE minimise F at one beta: E_beta[F] - F_min (``f_excess``, its 1 - 2 alpha interval
    ``f_lo``-``f_hi``) against d/(2 beta), the mean squared distance to argmin F (``dist2``, interval
    ``d2_lo``-``d2_hi``) against tr(H^-1)/beta, the chains' distance to argmin F at the last record
    time, and the per-beta outcome (:func:`verification.poincare.checks.sde.minimises_outcome`)."""

    family: str
    beta: float
    lam: float
    f_excess: float
    f_lo: Optional[float]
    f_hi: Optional[float]
    laplace_f: float
    dist2: float
    d2_lo: Optional[float]
    d2_hi: Optional[float]
    laplace_d2: float
    dist_end: Distance
    min_F_seen: float
    outcome: str


def minimisations(records: list[dict]) -> tuple[Minimisation, ...]:
    """The minimises-F records of the SDE campaign's ``records``, by (family, beta)."""
    out = []
    for r in records:
        e = r["extra"]
        if e.get("kind") != "minimises_F":
            continue
        f_iv = e["interval"] or [None, None]
        d_iv = e["dist2_interval"] or [None, None]
        out.append(Minimisation(e["family"], e["beta"], e["lam"], r["value"], f_iv[0], f_iv[1], e["laplace_F"],
                                e["dist2"], d_iv[0], d_iv[1], e["laplace_dist2"], Distance(*e["dist_argmin_F"][-1]),
                                e["min_F_seen"], r["verdict"]))
    return tuple(sorted(out, key=lambda x: (x.family, x.beta)))
