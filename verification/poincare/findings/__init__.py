"""The Poincare family's findings: the typed values its report and its paper part both render, built
once from the plan's stored campaigns by :func:`findings` (numbers, verdicts and outcomes; no text
made from numbers, no Markdown, no LaTeX).

* :mod:`~verification.poincare.findings.bounds`: per (family, beta, lambda) the estimated C_P and its
  bounds (:class:`Instance`, ``collapsed`` below :data:`COLLAPSE`), Villani's condition there, the
  smallest lambda each derivation needs, the certified 1-D brackets, E_mu[L].
* :mod:`~verification.poincare.findings.villani`: the Villani map's outcomes and lambda_V(beta) per
  family, data seed and beta against the seed's hypothesis (every lambda > 0).
* :mod:`~verification.poincare.findings.sde`: the Langevin outcomes and E_beta[L] - inf L against d/(2 beta).
* :mod:`~verification.poincare.findings.claims`: the claims of Frangi et al., the source they are
  quoted from, the quantifier orders of Villani's condition, the SDE's aggregation rule.
* :class:`Findings` (here): all of them for one plan, and each claim with the outcome decided here
  (``Findings.claims``).

The report (:mod:`verification.poincare.report`) and the paper (:mod:`verification.poincare.paper`)
read these values only; neither reads the store.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verification.findings import Share, Tally
from verification.poincare.checks.sde import sde_campaign
from verification.poincare.checks.villani import map_campaign
from verification.poincare.findings.bounds import (COLLAPSE, GAUSSIAN, Bracket, ExpectedLoss, Instance, Threshold,
                                                   VillaniOutcome, bracket, by_instance, expected_losses,
                                                   gaussian_shares, instance, thresholds, villani_outcome)
from verification.poincare.findings.claims import Claim, decide
from verification.poincare.findings.sde import (LossExcess, Minimisation, SdeOutcome, loss_excesses, minimisations,
                                                sde_outcomes)
from verification.poincare.findings.villani import SEED_HYPOTHESIS, Analytic, Boundary, MapPoint, analytic, villani_map

__all__ = ["COLLAPSE", "GAUSSIAN", "SEED_HYPOTHESIS", "Analytic", "Boundary", "Bracket", "Claim", "ExpectedLoss",
           "Findings", "Instance", "LossExcess", "MapPoint", "Minimisation", "SdeOutcome", "Threshold",
           "VillaniOutcome", "findings"]


@dataclass(frozen=True)
class Findings:
    """Everything the Poincare report and paper part show of one plan (see the module docstring)."""

    campaign: str
    map_campaign: str
    sde_campaign: str
    instances: tuple[Instance, ...]
    villani: tuple[VillaniOutcome, ...]
    thresholds: tuple[Threshold, ...]
    brackets: tuple[Bracket, ...]
    expected_loss: tuple[ExpectedLoss, ...]
    gaussian_tight: Share
    gaussian_float_agrees: Share
    map_points: tuple[MapPoint, ...]
    boundaries: tuple[Boundary, ...]
    sde: tuple[SdeOutcome, ...]
    loss_excess: tuple[LossExcess, ...]
    analytic: tuple[Analytic, ...] = ()
    minimisation: tuple[Minimisation, ...] = ()

    @property
    def metastable(self) -> tuple[Instance, ...]:
        """Every instance, worst test-function lower bound over C_P first."""
        return tuple(sorted(self.instances, key=lambda i: (i.worst_ratio, i.family, i.beta, i.lam)))

    def hs_every_lambda(self) -> list[str]:
        """The non-Gaussian families whose loss is bounded: Holley-Stroock at every lambda > 0."""
        fams = dict.fromkeys(t.family for t in self.thresholds if t.family not in GAUSSIAN)
        return [f for f in fams if all(t.osc_certified is not None for t in self.thresholds if t.family == f)]

    def no_bound(self) -> list[str]:
        """The non-Gaussian families for which neither Bakry-Emery nor Holley-Stroock ever applies."""
        fams = dict.fromkeys(t.family for t in self.thresholds if t.family not in GAUSSIAN)
        return [f for f in fams if all(not t.hessian_bounded and t.osc_certified is None
                                       for t in self.thresholds if t.family == f)]

    def sde_tally(self, kind: str) -> Tally:
        """The outcomes of the Langevin comparisons of ``kind``."""
        return Tally.of(s.outcome for s in self.sde if s.kind == kind)

    @property
    def claims(self) -> tuple[Claim, ...]:
        """The outcome of each claim (:func:`verification.poincare.findings.claims.decide`)."""
        return decide(self)


def findings(store: Any, plan: Any) -> Findings:
    """The findings of ``plan`` (a :class:`verification.poincare.checks.Plan`) from its stored
    campaigns: the bounds grid, the Villani map and the Langevin runs (empty where not stored)."""
    inst = by_instance(store, plan.campaign)
    maps, sdes = map_campaign(plan), sde_campaign(plan)
    sde_records = list(store.records(campaign=sdes))
    map_records = list(store.records(campaign=maps))
    points, boundaries = villani_map(map_records)
    tight, agrees = gaussian_shares(inst)
    return Findings(
        campaign=plan.campaign, map_campaign=maps, sde_campaign=sdes,
        instances=tuple(instance(k, recs) for k, recs in inst.items()),
        villani=tuple(v for v in (villani_outcome(k, recs) for k, recs in inst.items()) if v is not None),
        thresholds=thresholds(inst),
        brackets=tuple(b for b in (bracket(k, recs) for k, recs in inst.items()) if b is not None),
        expected_loss=expected_losses(inst, sde_records), gaussian_tight=tight, gaussian_float_agrees=agrees,
        map_points=points, boundaries=boundaries, sde=sde_outcomes(sde_records), loss_excess=loss_excesses(sde_records),
        analytic=analytic(map_records), minimisation=minimisations(sde_records))
