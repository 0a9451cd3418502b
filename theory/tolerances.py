"""The one table of tolerances on ``|row sum - 1|`` by input dtype (the sum itself is taken in
float64), used by the hypotheses of the Dobrushin theorems (:mod:`theory.dobrushin`) and by every
input check of the kernels (:mod:`numerics.stochastic`). Plain numpy, no sympy: a worker that
only checks inputs never loads the symbolic side (``docs/theory.md``, the exactness convention).

>>> row_tol("float32"), row_tol("bfloat16"), row_tol("int64")
(1e-05, 0.02, 1e-09)
"""
from __future__ import annotations

from typing import Any

import numpy as np

# bfloat16 uses float16's entry; any other dtype float64's.
ROW_TOL = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-2}


def row_tol(dtype: Any) -> float:
    """The :data:`ROW_TOL` entry for ``dtype`` (numpy, torch or ml_dtypes dtype, or its name);
    bfloat16 as float16; integers, bool, object and anything unknown as float64."""
    try:
        name = np.dtype(dtype).name                   # numpy dtypes and scalar types, "float32"
    except TypeError:
        name = str(dtype).rsplit(".", 1)[-1]          # "torch.float32" -> "float32"
    name = "float16" if name == "bfloat16" else name
    try:
        return ROW_TOL.get(np.dtype(name), ROW_TOL[np.dtype(np.float64)])
    except TypeError:
        return ROW_TOL[np.dtype(np.float64)]
