"""The rank family's tables and figures, aggregated from stored records only (never recomputed).

    linear     R(r) vs r, GD (population, finite data), estimators; the outcome shares (Wilson 95%)
    attention  kernel recovery, GD students, the interpolation ladder
    softmax    softmax recovery by value map (regression vs nonlinear fit), estimators on recovered kernels
    weights    effective ranks of trained heads, per model and per layer
"""
