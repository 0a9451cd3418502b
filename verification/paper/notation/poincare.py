r"""The notation of the Poincare family's tables, figures and captions (:mod:`verification.poincare.paper`):
the symbols ($C_P$, $\lambda_V(\beta)$, $1/(\beta\lambda)$) of its axis labels, legends and captions,
and the cells of its claims table, spelled once here so that the family's modules hold no LaTeX."""
from __future__ import annotations

# figure labels and legends
BETA = r"$\beta$"
LAMBDA = r"$\lambda$"
LAMBDA_V_PER_SEED = r"$\lambda_V(\beta)$, per data seed"
C_P_ESTIMATE = r"$C_P$ (estimate)"
GAUSSIAN_C = r"$1/(\beta\lambda)$"
VAR_THETA_LOWER = r"Var $\theta$ (lower)"


def constant_title(family_title: str, beta: float) -> str:
    """The title of figure ``poincare-constant-<family>`` at the middle ``beta``."""
    return rf"{family_title}, $\beta = {beta:g}$ (bounds above $10^6 C_P$ omitted)"


# table captions
BOUNDS_CAPTION = (
    r"Poincar\'e constant $C_P$ of $\exp(-\beta F)$, estimated by the discretised generator (error estimate = "
    "discretisation + window truncation) against the Bakry-Emery (BE) and Holley-Stroock (HS) upper bounds and the "
    "test-function lower bounds (ratios to $C_P$). Tight is the theorem's equality (Gaussian, exact arithmetic).")
THRESHOLDS_CAPTION = r"Smallest $\lambda$ each derivation needs, per family and $\beta$."
MUCKENHOUPT_CAPTION = (
    "Certified brackets of the one-dimensional $C_P$ on the window (Muckenhoupt's criterion, arb ball integrals) "
    "against the discretised estimate with its error, and the change of the estimate when the window is enlarged "
    "1.25 times.")
METASTABLE_CAPTION = (
    "Test-function lower bounds over $C_P$, worst first; 'collapsed': the best polynomial test function "
    r"(degree $\le 2$) gives less than half of $C_P$.")
VILLANI_BOUNDARY_CAPTION = (
    r"Villani's threshold $\lambda_V(\beta)$ per family, data seed and $\beta$ (lora2: certified bracket in arb "
    "ball arithmetic; attn2: grid estimate; attn1: 0 by proof) against the seed paper's hypothesis, every "
    r"$\lambda > 0$: the route fails for every $\lambda$ below it.")


def constant_caption(family: str) -> str:
    """The caption of figure ``poincare-constant-<family>``."""
    return f"{family}: the estimated $C_P$ and its bounds against $\\lambda$ at the middle $\\beta$."


def villani_caption(family: str) -> str:
    """The caption of figure ``poincare-villani-<family>``."""
    return (f"{family}: $\\lambda_V(\\beta)$ per data seed, with the outcomes of Villani's condition "
            r"at the values of $\lambda$ placed around it.")


# the claims table's cells (verification.poincare.paper.claims)
EVERY_LAMBDA = r"every $\lambda > 0$"
ATTENTION_VILLANI_DESIGN = (r"Villani's threshold $\lambda_V(\beta)$: 0 by proof for a scalar parameter; "
                            "a grid estimate for two")
LORA_POINCARE_DESIGN = r"the loss is bounded: the Holley--Stroock bound applies at every $\lambda$"
LORA_VILLANI_CLAIM = r"... through Villani's condition, for every $\lambda > 0$ (the proof's route, LoRA)"
LORA_VILLANI_DESIGN = r"$\lambda_V(\beta)$ enclosed in ball arithmetic over data sets and $\beta$"
RATE_STATES = r"rate $1/(\beta C_P)$"
RATE_DESIGN = r"decay rate of MALA chains against $1/(\beta C_P)$, TOST at 10%"


def attention_villani_result(share: str, largest: str) -> str:
    """Attention through Villani's condition: the ``share`` of (data, beta) pairs with a positive
    threshold and the ``largest`` estimate."""
    return (rf"one parameter: $\lambda_V = 0$; two: $\lambda_V > 0$ at {share} (data, $\beta$) pairs, "
            f"up to {largest} (estimate)")


def lora_poincare_result(families: str) -> str:
    """LoRA's Poincare inequality: the ``families`` whose Holley-Stroock bound holds at every lambda."""
    return rf"holds at every $\lambda > 0$ (Holley--Stroock: {families})"


def lora_villani_result(share: str, lo: str, hi: str) -> str:
    """LoRA through Villani's condition: the ``share`` of certified positive thresholds, lower ends ``lo``-``hi``."""
    return rf"certified $\lambda_V > 0$ at {share} pairs, lower ends {lo}-{hi}"


def sde_minimises_design(betas: str) -> str:
    """The design of the SDE-minimises test at the listed ``betas``."""
    return rf"$E_\beta[L] - \inf L$ at most $d/(2\beta)$ plus 10%, one-sided t over chains, at $\beta$ = " + betas
