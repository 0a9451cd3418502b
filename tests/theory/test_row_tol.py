"""One row-sum tolerance table (theory.dobrushin.ROW_TOL), picked by the input's dtype."""
import re

import numpy as np
import pytest

import theory.dobrushin as D

F64 = D.ROW_TOL[np.dtype(np.float64)]


def _off_by(dtype, dev):
    """A 2 x 2 stochastic matrix in ``dtype`` whose row 1 sums to about 1 + dev; its true deviation."""
    A = np.array([[1.0, 0.0], [0.5, 0.5 + dev]]).astype(dtype)
    return A, abs(float(A.astype(np.float64)[1].sum()) - 1)


def test_float32_accepts_what_float64_rejects():
    A32, dev = _off_by(np.float32, 1e-6)
    assert F64 < dev < D.ROW_TOL[np.dtype(np.float32)]      # the case is the one intended
    assert D.factor_hypotheses(A32).ok is True
    A64 = A32.astype(np.float64)                             # the same values, hence the same deviation
    h = D.factor_hypotheses(A64)
    assert h.ok is False and re.search(r"\brow 1\b", h.reason), h
    assert repr(float(A64[1].sum())) in h.reason and f"{F64:g}" in h.reason


@pytest.mark.parametrize("dtype", list(D.ROW_TOL), ids=str)
def test_each_dtype_uses_its_own_entry(dtype):
    tol = D.ROW_TOL[dtype]
    inside, d_in = _off_by(dtype, tol / 2)
    outside, d_out = _off_by(dtype, 2 * tol)
    assert d_in <= tol < d_out                                # representable on the intended sides
    assert D.factor_hypotheses(inside).ok is True
    h = D.factor_hypotheses(outside)
    assert h.ok is False and "row 1" in h.reason and f"{tol:g}" in h.reason and str(dtype) in h.reason


def test_row_tol_lookup():
    f16 = D.ROW_TOL[np.dtype(np.float16)]
    assert D.row_tol("bfloat16") == f16
    for dt in (np.int64, np.int8, np.uint16, bool, object, None, "no-such-dtype"):
        assert D.row_tol(dt) == F64, dt
    for dt, tol in D.ROW_TOL.items():
        assert D.row_tol(dt) == tol and D.row_tol(str(dt)) == tol


def test_integer_matrix_uses_float64_tolerance():
    assert D.factor_hypotheses(np.eye(3, dtype=np.int64)).ok is True
    h = D.factor_hypotheses(np.array([[1, 1], [0, 1]]))
    assert h.ok is False and "row 0" in h.reason and f"{F64:g}" in h.reason


def test_torch_dtypes_follow_the_table():
    torch = pytest.importorskip("torch")
    assert D.row_tol(torch.float32) == D.ROW_TOL[np.dtype(np.float32)]
    assert D.row_tol(torch.bfloat16) == D.ROW_TOL[np.dtype(np.float16)]
    A = torch.tensor([[1.0, 0.0], [0.5, 0.508]], dtype=torch.bfloat16)
    dev = abs(float(A.float()[1].sum()) - 1)
    assert D.ROW_TOL[np.dtype(np.float32)] < dev < D.ROW_TOL[np.dtype(np.float16)]
    assert D.factor_hypotheses(A).ok is True                  # bfloat16 is judged like float16
    assert D.factor_hypotheses(A.float()).ok is False         # the same values as float32 are not


def test_numerics_uses_the_same_table():
    from numerics.stochastic import ROW_TOL                   # may break while numerics/ is moved

    assert ROW_TOL is D.ROW_TOL
