"""The notation of the trained family's tables, captions and figure labels
(``verification/trained/paper/``): the rollout of the embedded models' attention, its D2 chain and
the comparison bounds on Dobrushin's coefficient."""

DELTA_A = r"$\delta(A)$"
DELTA_R = r"$\delta(R_l)$"
TAU_B = r"$\tau_B$"

# the rollout table's and figure's medians: the D2 chain's product and D1's factors
PROD_DELTA_HAT = r"$\prod \delta(\hat A)$"
PROD_FACTORS = r"$\prod (1+\delta(A))/2$"
CHAIN_RATIO = r"$\delta(R_l)/\prod \delta(\hat A)$"

# the rollout figure's curve labels, per layer k
PROD_DELTA_HAT_K = r"$\prod_k \delta(\hat A_k)$"
PROD_FACTORS_K = r"$\prod_k (1+\delta(A_k))/2$"

# the chain-ratio figure: its caption's ratio and its y axis
CHAIN_RATIO_BY_DEPTH = r"$\delta(R_l)/\prod_{k \le l}\delta(\hat A_k)$"
CHAIN_RATIO_AXIS = r"median $\delta(R_l) / \prod_{k \leq l} \delta(\hat A_k)$"

# the size of the slack (verification/trained/paper/size.py): D2's ratio at the last layer
CHAIN_RATIO_LAST = r"$\delta(R_L)/\prod_l \delta(\hat A_l)$"

