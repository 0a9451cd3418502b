"""The claims of Frangi et al. that the Poincare family tests: the source they are quoted from, the
quantifier orders of Villani's condition, the rule that aggregates the per-beta SDE outcomes, and each
claim's outcome decided from the findings (:func:`decide`).

The only text of the paper in the project's seed (../shared/seeds) is its abstract, :data:`SOURCE`;
its theorems and equations are not there. So a claims table quotes only :data:`SOURCE` (:func:`quote`
refuses any fragment that is not in it, at build time), and a statement the abstract does not make
(Villani's condition, its quantifier order over beta, the Langevin rate) is given as the suite's
paraphrase, marked :data:`NOT_LOCATED`, never as the paper's words.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

SOURCE = (
    "Transformers have revolutionized machine learning and deploying attention layers in the model is increasingly "
    "standard across a myriad of applications. Further, for large models, it is common to implement Low Rank "
    "Adaptation (LoRA), whereby a factorized parameterization of them is trained, to achieve a surprisingly "
    "beneficial accuracy-size trade-off. In this work, via a unified framework we rigorously establish trainability "
    "of such models under stochastic methods. We prove that for any mild regularization, the empirical regression "
    "loss on a attention layer and LoRA on a shallow neural net, both induce Poincaré inequality for the "
    "corresponding Gibbs' measure. Then it follows via invoking recent results that a certain SDE, which mimics the "
    "SGD, minimizes the corresponding losses. In both the cases, our first-of-its-kind results of trainability on "
    "attention and nets, do not rely on any assumptions on the data or the size of the architecture.")
"""The abstract of Frangi et al. (arXiv:2605.07959) as the seed gives it, verbatim."""

NOT_LOCATED = "as paraphrased, source theorem not located"
"""What stands for a statement the source (:data:`SOURCE`) does not make: the suite's paraphrase
(docs/theory.md section 4), whose theorem or equation in the paper is not in the seed."""

ELISION = " [...] "


def quote(*fragments: str) -> str:
    """The paper's words: ``fragments`` of :data:`SOURCE`, each verbatim, joined by an elision;
    ValueError naming the first fragment that is not in the source.

    >>> quote("a certain SDE, which mimics the SGD, minimizes the corresponding losses")
    'a certain SDE, which mimics the SGD, minimizes the corresponding losses'
    >>> quote("the SDE minimises the loss")
    Traceback (most recent call last):
    ValueError: not in the paper's words (verification.poincare.findings.claims.SOURCE): 'the SDE minimises the loss'
    """
    for frag in fragments:
        if not frag or frag not in SOURCE:
            raise ValueError(f"not in the paper's words (verification.poincare.findings.claims.SOURCE): {frag!r}")
    return ELISION.join(fragments)


ORDERS = {"every beta": "for every lambda > 0 and every beta > 0",
          "beta large": "for every lambda > 0, for every beta large enough (beta > beta_0(lambda))"}
"""The two readings of the seed's Villani route over beta; the abstract states neither (:data:`NOT_LOCATED`)."""

SDE_RULE = ("supported only if supported at every inverse temperature run; refuted only if refuted at every one; "
            "inconclusive if inconclusive at every one; not-testable if none was run; otherwise mixed")
"""How the per-beta outcomes of the SDE's minimisation of F aggregate into the claim's outcome (:func:`aggregate`)."""


def aggregate(outcomes: Iterable[str]) -> str:
    """The claim's outcome from its per-beta ``outcomes`` by :data:`SDE_RULE`.

    >>> aggregate(["supported", "supported"]), aggregate(["supported", "supported", "refuted"]), aggregate([])
    ('supported', 'mixed', 'not-testable')
    >>> aggregate(["refuted", "refuted"]), aggregate(["inconclusive"]), aggregate(["supported", "not-testable"])
    ('refuted', 'inconclusive', 'mixed')
    """
    outs = list(outcomes)
    if not outs:
        return "not-testable"
    for o in ("supported", "refuted", "inconclusive"):
        if all(x == o for x in outs):
            return o
    return "mixed"


@dataclass(frozen=True)
class Claim:
    """One claim of Frangi et al. (``key``), the outcome decided here and, for Villani's condition,
    the quantifier ``order`` (a key of :data:`ORDERS`) the outcome is about."""

    key: str
    outcome: str
    order: Optional[str] = None


CLAIMS = ("attention-villani", "lora-poincare", "lora-villani-every-beta", "lora-villani-beta-large",
          "sde-minimises", "langevin-rate")


def decide(f: Any) -> tuple[Claim, ...]:
    """The outcome of each claim of :data:`CLAIMS` from the findings ``f``
    (:class:`verification.poincare.findings.Findings`): attention's Villani route by the grid estimate
    (not certified: inconclusive where it fails); LoRA's inequality by Holley-Stroock; LoRA's Villani
    route read for every beta refuted where L''(p*) > 0 is certified (or lambda_V(beta) > 0 on a
    certified bracket), read for beta large holding where the analytic bracket's sup L'' is certified
    and meets every certified bracket; the SDE by :data:`SDE_RULE` over the per-beta outcomes of its
    minimisation of F; the rate supported where every setting supports it."""
    attn2 = [b for b in f.boundaries if b.family == "attn2"]
    lora = [b for b in f.boundaries if b.family == "lora2"]
    an = [x for x in f.analytic if x.family == "lora2"]
    every = ("refuted" if any(x.every_beta_refuted for x in an) or any(b.certified_positive for b in lora)
             else "inconclusive" if lora or an else "not-testable")
    large = ("not-testable" if not an else "holds (certified)" if all(x.consistent for x in an) else "inconclusive")
    rate = f.sde_tally("rate")
    return (Claim("attention-villani", "inconclusive" if any(b.fails for b in attn2) else "supported", "every beta"),
            Claim("lora-poincare", "holds (certified)" if "lora2" in f.hs_every_lambda() else "inconclusive"),
            Claim("lora-villani-every-beta", every, "every beta"),
            Claim("lora-villani-beta-large", large, "beta large"),
            Claim("sde-minimises", aggregate(m.outcome for m in f.minimisation)),
            Claim("langevin-rate", "refuted" if rate.count("refuted")
                  else "supported" if rate.total and rate.count("supported") == rate.total else "inconclusive"))
