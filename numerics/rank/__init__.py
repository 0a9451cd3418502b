"""Rank lower bounds, computed (docs/theory.md §3): the linear surrogate's optimum and its
certification, rank estimators, gradient descent on U V^T, attention-native kernel recovery and
students, and the head circuits of trained models.

Public API (numpy in, numpy out unless said; estimators batched over leading dimensions):

    optimal_excess_risk(M_star, K, r)      R(r) = sum_{i>r} sigma_i(M* K^1/2)^2, per unit d  (n, n), (n, n) -> float
    weighted_singular_values(M_star, K)    sigma(M* K^{1/2}), non-increasing                   -> (n,)
    certify_tail_sum(M_star, K, r)         R(r) enclosed in 60-digit intervals (rationals the floats represent)
    deficiency_fast / deficiency_exact(M_star, K, r)        r < r*: R(r) >= sigma_r*^2, verdict decided exactly
    achievability_fast / achievability_exact(M_star, K, r)  r >= r*: R(r) = 0, verdict decided exactly
    excess_risk_exact(M_star, M, K, d)     the excess-risk identity, both sides as Fractions
    energy_rank(s, tau)                    min{k : sum_{i<=k} s_i^2 >= tau sum s_i^2}          (..., k) -> (...) int
    entropy_rank(s, power=2)               exp H(p), p_i = s_i^power / sum s^power              (..., k) -> (...) float
    threshold_rank(s, noise_std, shape)    #s_i above the Gavish-Donoho hard threshold         (..., k) -> (...) int
    median_threshold_rank(s, shape)        the same with the noise unknown: omega(beta) median(s) (..., k) -> (...) int
    estimate_ranks(M_hat, K_hat, noise_std, columns)        every estimator of r* on one least-squares fit
    spectrum, teacher, covariance, sample_data, least_squares   teachers of exact rank r* and their data
    gd_factorised(M_star, K, r, seeds, ...)  batched GD on U V^T over seeds; spectra, risks    (numerics.rank.gd)
    learned_rank(spectra, threshold)       #sigma_i above the escape threshold                 (S, ..., k) -> (S, ...)
    learned_rank_exact(U, V, L, threshold) the same count from 50-digit singular values (None: undecided)
    kernel_teacher, sample_tokens, linear_attention, softmax_attention   attention teachers, X (B, T, d)
    recover_linear_kernel / recover_softmax_kernel(X, Y, W_V, ...)      data-only recovery of W = W_Q W_K^T
    recover_linear_kernel_exact(X, W, W_V) exact rational regression (noiseless, linear attention)
    kernel_error(W_hat, W)                 relative error up to scale and sign                 (d, d), (d, d) -> float
    fit_softmax_kernel / fit_softmax_joint  nonlinear least squares of W (W_V known) / of (W, W_V)  (numerics.rank.fits)
    linear_deficiency_bound(_exact)(X, W_star, W_V, r)   mu tail_r(W*) <= min risk, certified   (numerics.rank.students)
    train_kernel_students(X, Y, W_V, r, seeds, kind, ...) batched GD students of kernel rank r
    ladder_rung(X, Y, W_V)                 the best static token mixer and its ranks
    head_spectra(module, config)           QK / OV singular values per head            -> (layers, H, dh) (numerics.rank.weights)
    product_singular_values(A, B)          sigma(A_h B_h^T) through thin QR, torch   (H, D, dh), (H, D, dh) -> (H, dh)
    effective_ranks(spectra)               energy 0.9 / 0.99 and entropy ranks          (..., dh) -> (...) each
    head_rank_exact(A, B)                  rank(A B^T) of the rationals the factors represent (exact, mod p)

Exactness: a float matrix stands for the rationals its floats represent. Verdicts of the proved
theorems (deficiency, achievability, recovery, the students' lower bound) come from exact
rational arithmetic or interval enclosures, never from a tolerance; estimators are estimates.
"""
from numerics.rank.attention import (kernel_error, kernel_teacher, linear_attention,  # noqa: F401
                                     recover_linear_kernel, recover_linear_kernel_exact, recover_softmax_kernel,
                                     recover_softmax_kernel_exact, sample_tokens, softmax_attention)
from numerics.rank.fits import fit_softmax_joint, fit_softmax_kernel  # noqa: F401
from numerics.rank.gd import (convergence, escape_threshold, gd_factorised, learned_rank,  # noqa: F401
                              learned_rank_exact)
from numerics.rank.linear import (COVARIANCES, SPECTRUM_SHAPES, achievability_exact,  # noqa: F401
                                  achievability_fast, certify_tail_sum, covariance, deficiency_exact,
                                  deficiency_fast, detection_limit, energy_rank, entropy_rank, estimate_ranks,
                                  excess_risk_exact, excess_risk_monte_carlo, gavish_donoho_threshold,
                                  least_squares, marchenko_pastur_median, median_threshold,
                                  median_threshold_rank, optimal_excess_risk, sample_data, spectrum, teacher,
                                  threshold_rank, weighted_singular_values)
from numerics.rank.students import (ladder_data, ladder_rung, ladder_rung_exact,  # noqa: F401
                                    linear_deficiency_bound, linear_deficiency_bound_exact, static_mixer,
                                    student_risk_exact, train_kernel_students)
from numerics.rank.weights import (effective_ranks, head_rank_exact, head_spectra,  # noqa: F401
                                   product_singular_values)

__all__ = ["COVARIANCES", "SPECTRUM_SHAPES", "achievability_exact", "achievability_fast", "certify_tail_sum",
           "convergence", "covariance", "deficiency_exact", "deficiency_fast", "detection_limit", "effective_ranks",
           "energy_rank", "entropy_rank", "escape_threshold", "estimate_ranks", "excess_risk_exact",
           "excess_risk_monte_carlo", "fit_softmax_joint", "fit_softmax_kernel", "gavish_donoho_threshold", "gd_factorised",
           "head_rank_exact", "head_spectra", "kernel_error", "kernel_teacher", "ladder_data", "ladder_rung",
           "ladder_rung_exact", "learned_rank", "learned_rank_exact", "least_squares", "linear_attention",
           "linear_deficiency_bound", "linear_deficiency_bound_exact", "marchenko_pastur_median", "median_threshold",
           "median_threshold_rank", "optimal_excess_risk",
           "product_singular_values", "recover_linear_kernel", "recover_linear_kernel_exact",
           "recover_softmax_kernel", "recover_softmax_kernel_exact", "sample_data", "sample_tokens",
           "softmax_attention", "spectrum", "static_mixer", "student_risk_exact", "teacher", "threshold_rank",
           "train_kernel_students", "weighted_singular_values"]
