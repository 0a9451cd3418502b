"""Compiled min-form kernels for the Dobrushin coefficient (numba, CPU).

    1/2 ||a - b||_1 = (sum a + sum b)/2 - sum_k min(a_k, b_k)

computed over the upper triangle of row pairs like a (min,+) product, with the maximum fused:
memory per call is O(B n) beyond the input, never B x n x n x n (or even B x n x n).
Row pairs are taken in 4 x 4 tiles: each of the 8 row loads per column k feeds 4 min-add chains
(register blocking), and the k loop vectorises (fastmath reassociation) with 16 accumulators.
float32 input is accumulated in float32 by dobrushin_batch and by pair_scan (certification scans
float32 first, then float64 where its error bounds need it).

Two modules: :mod:`numerics.kernels.tiles` (tiles, delta, validation) and
:mod:`numerics.kernels.scan` (the pair scan behind Theorem D1's certification); everything public
is re-exported here (``from numerics import kernels as K``; ``K.pair_scan``, ``K.BEST``).
"""
from numerics.kernels.scan import (BEST, BEST_I, BEST_J, HALF, NSTAT, PENALISED, SECOND, TOP_FIRST, TOP_OTHER,
                                   TWO_PHASE_MAX_N, ZERO_ANY, ZERO_FIRST, ZERO_OTHER, near_max_pairs, pair_d,
                                   pair_scan)
from numerics.kernels.tiles import (FLAGS, check_stochastic, dobrushin_batch, exact_grid, pair_overlap,
                                    pair_overlaps, row_sum, row_sums_serial, tile_sums)

__all__ = ["BEST", "BEST_I", "BEST_J", "HALF", "NSTAT", "PENALISED", "SECOND", "TOP_FIRST", "TOP_OTHER",
           "TWO_PHASE_MAX_N", "ZERO_ANY", "ZERO_FIRST", "ZERO_OTHER", "FLAGS", "check_stochastic",
           "dobrushin_batch", "exact_grid", "near_max_pairs", "pair_d", "pair_overlap", "pair_overlaps",
           "pair_scan", "row_sum", "row_sums_serial", "tile_sums"]
