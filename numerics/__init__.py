"""How attnbounds computes: batched float kernels and exact / certified evaluators.

Importing this package applies the thread policy (:mod:`numerics.device`) before torch loads.
"""
from numerics.device import apply_thread_policy

apply_thread_policy()
