"""How attnbounds computes: batched float kernels and exact / certified evaluators.

Importing this package changes nothing in the process: the numerical pins (:mod:`numerics.pins`:
instruction sets, BLAS modes, threads) and the thread policy (:mod:`numerics.device`) are applied by
:func:`numerics.pins.pin`, which the command line, the test suite and the fingerprint call before
torch, numba or a BLAS loads (``attnbounds.pin_numerics()`` for a script of one's own).
"""
