"""How attnbounds computes: batched float kernels and exact / certified evaluators.

Importing this package pins the numerics (:mod:`numerics.pins`: instruction sets, BLAS modes,
threads) and applies the thread policy (:mod:`numerics.device`) before torch, numba or a BLAS loads.
"""
from numerics import pins
from numerics.device import apply_thread_policy

pins.apply()
apply_thread_policy()
