"""What the rank family runs: plans, campaigns and chunk functions (instance -> records).

    linear     the linear surrogate: optimum (certified tail sums, deficiency, achievability), GD on
               U V^T (population and finite data), pre-training rank estimators
    attention  attention-native: data-only kernel recovery, GD students, the interpolation ladder
    weights    effective ranks of the per-head circuits of the embedded trained models
"""
