"""The notation of the rank family's tables, captions and figure labels (:mod:`verification.rank.paper`):
the intrinsic rank ``$r^*$``, the deficient and achieving ranks, the estimators' parameters, the
factors of a low-rank model, the interpolation ladder's weight, in LaTeX."""
from __future__ import annotations

from typing import Any

R_STAR = "$r^*$"
R_BELOW = "$r < r^*$"                   # the ranks of the deficiency bound
R_AT = "$r = r^*$"
R_ABOVE = r"$r \ge r^*$"                # the ranks that achieve the bound
MIN_R = r"$\min(r, r^*)$"               # the rank a rank-r student can learn
UV_T = r"$U V^\top$"                    # a low-rank model's factors
W_V = "$W_V$"                           # the value map
TAU_90 = r"$\tau = 0.9$"                # the energy rank's thresholds
TAU_99 = r"$\tau = 0.99$"
P_SIGMA_SQUARED = r"$p \propto \sigma^2$"   # the entropy rank's distributions
P_SIGMA = r"$p \propto \sigma$"
LAMBDA_STATIC = r"$\lambda = 0$"        # the interpolation ladder's ends and its inside
LAMBDA_ATTENTION = r"$\lambda = 1$"
LAMBDA_POSITIVE = r"$\lambda > 0$"
ENERGY_PER_DIM = r"$r^{\mathrm{energy}}_{0.99} / d_h$"   # the energy rank over the head dimension
RANK_IS_DH = r"rank $= d_h$"             # a head circuit's full rank
THETA_UNKNOWN = r"$W \otimes W_V$"       # what data identify without the value map (up to a symmetrisation)


def r_star_is(value: Any, spaced: bool = False) -> str:
    """``$r^*=value$`` (``$r^* = value$`` when ``spaced``)."""
    return f"$r^* = {value}$" if spaced else f"$r^*={value}$"
