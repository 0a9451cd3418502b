"""The notation of the san family's tables and captions (``verification/san/report/``): the rollout
on the trained decoders and the scalars of the scalar-bottleneck lemma."""

DELTA_R = r"$\delta(R_l)$"
CHAIN_RATIO = r"$\delta(R_l)/\prod_{k \le l} \delta(\hat A_k)$"
C_L = r"$c_l$"
BONFERRONI_LEVEL = r"$1 - \alpha/m$"      # the level of a Bonferroni-adjusted interval over a family of m
