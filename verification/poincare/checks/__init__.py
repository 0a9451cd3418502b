"""What the Poincare family runs: plans, chunks, instance -> records (docs/theory.md section 4).

* :mod:`~verification.poincare.checks.plan`: the (family, beta, lambda) grid and campaign name (light).
* :mod:`~verification.poincare.checks.bounds`: the estimated C_P against Bakry-Emery, Holley-Stroock, the
  test-function lower bounds and Villani's condition, per instance.
* :mod:`~verification.poincare.checks.villani`: the map of Villani's condition over a (beta, lambda)
  grid and several data seeds.
* :mod:`~verification.poincare.checks.sde`: the Langevin SDE against the constants (statistical outcomes).
"""
