r"""The notation of the Dobrushin family's tables and captions (:mod:`verification.dobrushin.paper`):
the theorems' inequalities ($\delta(PQ) \le \delta(P)\,\delta(Q)$) and the causal prediction
$\pi_n^2$, spelled once here so that the family's modules hold no LaTeX."""
from __future__ import annotations

PREDICTED_PI_N_SQUARED = r"predicted $\pi_n^2$"      # a column of table dobrushin-causal-share

D2_SHARE_CAPTION = (r"Theorem D2, $\delta(PQ) \le \delta(P)\,\delta(Q)$: share of random pairs $(P, Q)$ of the "
                    "same family with exact equality, per family and size $n$.")


def d1_share_caption(fewest: int, most: int) -> str:
    """The caption of table ``dobrushin-d1-share``, with the ``fewest`` and ``most`` instances per cell."""
    return (r"Theorem D1, $\delta((I+A)/2) \le (1+\delta(A))/2$: share of random row-stochastic $A$ "
            "with exact equality, per family and size $n$ (instances per cell: "
            f"{fewest} to {most}).")


def causal_caption(pairs: str, check_pairs: str, margin: float) -> str:
    """The caption of table ``dobrushin-causal-share``: the campaign's ``pairs`` and the check's
    ``check_pairs`` per size, and the equivalence ``margin``."""
    return (r"Causal D2: the share of tight pairs against the share the exact condition "
            r"predicts, $\pi_n^2$ with $\pi_n$ the probability that row 1 minimises $A_{l0}$ over $l \ge 1$ ($\pi_n$ "
            r"estimated on fresh draws; Wilson 95% interval, squared). The campaign's " + pairs + r" pairs per size "
            r"are tested against $\pi_n^2$ (exact binomial test, Holm across sizes); on " + check_pairs +
            r" independent pairs per size, how many exact verdicts the condition predicts, and whether the two "
            rf"shares agree within {margin:g} (two one-sided tests).")
