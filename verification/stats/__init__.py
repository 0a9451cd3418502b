"""The statistics of the suite, in one place: every statistical decision of a check or a findings
stage goes through here, and no report or paper module computes one (a test checks it).

- :mod:`verification.stats.shares`: binomial shares (the Wilson interval, for every count, with a
  design effect where verdicts are clustered), shares over a handful of clusters (a t interval with
  df = clusters - 1), the paired cluster bootstrap of a difference of shares, the score test, the
  exact binomial test, the outcome of a claim about a share;
- :mod:`verification.stats.paired`: paired comparisons over seed pairs (t intervals with df = pairs
  - 1, Holm, TOST, minimum detectable effects), the sign test, pairwise comparisons of methods,
  agreement with a prediction;
- :mod:`verification.stats.spread`: a mean with its t interval, a median with its order-statistic interval.

The significance level is :data:`theory.verdicts.ALPHA`, re-exported here.
"""
from theory.verdicts import ALPHA  # noqa: F401  (re-exported: the one level)
from verification.stats.paired import (POWER, SD_FLOOR, agreement, agreement_normal, at_most, best_outcome,  # noqa: F401
                                       exact_sd, holm, mde, no_variation, paired_t, pairs_needed, pairwise,
                                       sign_test, tost, tost_mde, unit_share)
from verification.stats.shares import (BOOTSTRAP_RESAMPLES, Z95, binomial_p, cluster_bootstrap_difference,  # noqa: F401
                                       cluster_share, clustered_wilson, design_effect, interval_outcome,
                                       score_p, share_outcome, wilson, z_of)
from verification.stats.spread import Spread, median_interval, t_spread  # noqa: F401
