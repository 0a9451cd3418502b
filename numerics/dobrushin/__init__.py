"""Dobrushin coefficient kernels: fast float paths and exact certification (docs/theory.md §1).

Public API (batched over leading dimensions; numpy arrays or torch tensors in, same kind out):

    dobrushin(P)                 delta(P) per matrix                            (..., n, m) -> (...)
    factor_slack(A)              (1+delta(A))/2 - delta((I+A)/2); 0.0 iff tight  (..., n, n) -> (...)
    factor_equality(A)           Theorem D1 equality, decided exactly           (..., n, n) -> bool (...)
    factor_check(A)              everything D1 says about A (FactorCheck)
    product_equality(P, Q)       Theorem D2 equality, decided exactly           -> bool (...)
    rollout(A, ...)              partial rollout products R_1..R_L (discard variants "offdiag" / "vit-explain")
    rollout_tightness(A, ...)    per-layer bounds and verdicts                  (numerics.dobrushin.rollout)
    check_batch(theorem, A)      the one batched D1/D2 check: verdict codes, slacks (numerics.dobrushin.batch)
    predicted_tight(P, Q)        causal D2's verdict on continuous entries, as its condition predicts
    minimiser_count(...), predicted_share(k, m)   the predicted share pi_n^2 of tight causal pairs
                                 (numerics.dobrushin.causal_share)

Exactness: a float matrix stands for the rationals its floats represent, rows renormalised exactly
(see :mod:`numerics.stochastic`). The float path decides only cases whose margin exceeds a
rigorous bound on its rounding and renormalisation error; everything within that distance of a
tie goes to the exact integer path (:class:`numerics.stochastic.ExactMatrix`). No tolerance ever
decides an equality.
"""
from numerics.dobrushin.core import (FactorCheck, d2_decide, dobrushin, factor_check,  # noqa: F401
                                     factor_equality, factor_slack, float_error, product_equality)
from numerics.dobrushin.torch_path import dobrushin_torch  # noqa: F401
from numerics.dobrushin.batch import check_batch  # noqa: F401,E402
from numerics.dobrushin.causal_share import minimiser_count, predicted_share, predicted_tight  # noqa: F401
from numerics.dobrushin.rollout import (RolloutTightness, fuse_heads, residual_factors, rollout,  # noqa: F401
                                        rollout_tightness)

__all__ = ["FactorCheck", "RolloutTightness", "check_batch", "d2_decide", "dobrushin", "dobrushin_torch", "factor_check",
           "factor_equality", "factor_slack", "float_error", "fuse_heads", "minimiser_count", "predicted_share",
           "predicted_tight", "product_equality",
           "residual_factors", "rollout", "rollout_tightness"]
