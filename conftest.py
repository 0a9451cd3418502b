"""pytest, for every test path (tests/ and the packages' doctests, `pytest numerics/expr` included):
the published numerics pinned before anything loads torch, numpy or numba, as the command line
does (:func:`numerics.pins.pin`; importing the packages pins nothing)."""
from numerics import pins

pins.pin()
