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
ORDERS_CAPTION = (
    r"Villani's condition in each quantifier order, LoRA: per data set, a certified lower bound $a$ of $L''(p^*)$ at a "
    r"critical point $p^*$ of $L$ and a certified upper bound $A$ of $\sup L''$, so that "
    r"$\sqrt{2a/\beta} \le \lambda_V(\beta) \le \sqrt{2A/\beta}$ at every $\beta$ (proof in the appendix): the "
    r"reading for every $\beta$ fails where $a > 0$; the reading for $\beta$ large holds once $\beta\lambda^2 > 2A$; "
    r"the last column checks the analytic against the certified bracket at each $\beta$ of the map.")
MINIMISES_CAPTION = (
    r"Does the SDE minimise $F$? Per $\beta$, on MALA chains started from the Laplace approximation of $\mu_\beta$: "
    r"$E_\beta[F] - F_{\min}$ against $d/(2\beta)$ and the mean squared distance to $\operatorname{argmin} F$ "
    r"(L-BFGS on $F$) against $\operatorname{tr}(H^{-1})/\beta$, 90% $t$ intervals, one unit per chain.")
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
NOT_IN_ABSTRACT = "- (not in the abstract)"
EVERY_LAMBDA_VILLANI = r"every $\lambda > 0$, through Villani's condition, for every $\beta > 0$"
ORDER_EVERY_BETA = r"LoRA through Villani's condition, for every $\lambda > 0$ and every $\beta > 0$"
ORDER_BETA_LARGE = (r"LoRA through Villani's condition, read for every $\lambda > 0$ and every $\beta$ large enough "
                    r"($\beta > \beta_0(\lambda)$)")
ORDERS_DESIGN = (r"$\lambda_V(\beta) \ge \sqrt{2L''(p^*)/\beta}$ ($p^*$ a critical point of $L$) and "
                 r"$\lambda_V(\beta) \le \sqrt{2\sup L''/\beta}$, both constants enclosed in ball arithmetic")
SDE_TARGET = (r"- (the SDE samples $e^{-\beta F}$: it minimises $F$, as $\beta \to \infty$)")
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


def paraphrased(statement: str, marker: str) -> str:
    """A statement the paper's abstract does not make, as the suite paraphrases it, with ``marker``."""
    return f"{statement} ({marker})"


def ordered(outcome: str, order: str) -> str:
    """A Villani outcome with the quantifier ``order`` it is about."""
    words = {"every beta": r"every $\beta$", "beta large": r"$\beta$ large"}
    return f"{outcome} (for {words[order]})"


def every_beta_result(share: str, a_min: str) -> str:
    """The every-beta reading: the ``share`` of data sets with L''(p*) > 0 certified, the smallest lower bound."""
    return (rf"$L''(p^*) > 0$ certified at {share} data sets (lower bounds from {a_min}): "
            r"$\lambda_V(\beta) > 0$ at every $\beta$")


def beta_large_result(A_max: str) -> str:
    """The beta-large reading: it holds once beta lambda^2 > 2 sup L'' (``A_max`` the largest certified sup L'')."""
    return rf"holds for $\beta\lambda^2 > 2\sup L''$ ($\sup L'' \le$ {A_max} over the data sets)"


def sde_minimises_design(betas: str) -> str:
    """The design of the SDE-minimises test at the listed ``betas`` (its aggregation rule: the table's caption)."""
    return (r"per $\beta$ (" + betas + r"): $E_\beta[F] - F_{\min}$ against $d/(2\beta)$, squared distance to "
            r"$\operatorname{argmin} F$ against $\operatorname{tr}(H^{-1})/\beta$; one-sided t, 10%; the rule below")
