"""Comparison bounds: Birkhoff tanh(Diam/4) and the softmax-logit bound (docs/theory.md §1)."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from numerics.dobrushin.contraction import (birkhoff, birkhoff_diameter, logits_from_probabilities,
                                  max_log_oscillation, softmax_bound_from_probabilities,
                                  softmax_logit_bound)
from numerics.dobrushin import dobrushin


def softmax(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def brute_diameter(T):
    n, m = T.shape
    return max(math.log(T[i, k] * T[j, l] / (T[j, k] * T[i, l]))
               for i in range(n) for j in range(n) for k in range(m) for l in range(m))


def test_two_tokens_symmetric_point_is_equality():
    # logits s = (a, 0), s' = (0, a): TV = tanh(a/2)... and osc(s - s') = 2a -> tanh(2a/4): equal
    a = 1.3
    S = np.array([[a, 0.0], [0.0, a]])
    assert softmax_logit_bound(S) == pytest.approx(dobrushin(softmax(S)), rel=1e-12)
    assert birkhoff(softmax(S)) == pytest.approx(math.tanh(a / 2), rel=1e-12)


def test_diameter_matches_brute_force():
    rng = np.random.default_rng(3)
    T = rng.uniform(0.05, 1.0, size=(4, 5))
    assert birkhoff_diameter(T) == pytest.approx(brute_diameter(T), rel=1e-12)


def test_zeros_make_birkhoff_trivial_and_masks_follow_the_support_rule():
    T = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    assert math.isinf(birkhoff_diameter(T)) and birkhoff(T) == 1.0
    causal = np.where(np.tril(np.ones((3, 3))) > 0, 0.0, -np.inf)
    assert softmax_logit_bound(causal) == 1.0          # rows with different supports
    both = np.array([[0.0, 1.0, -np.inf], [1.0, 0.0, -np.inf]])  # column masked in both rows
    assert softmax_logit_bound(both) == pytest.approx(math.tanh(2 / 4), rel=1e-12)
    assert max_log_oscillation(np.zeros((1, 4))) == 0.0  # n = 1


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="NaN"):
        birkhoff(np.array([[np.nan, 1.0], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="negative"):
        logits_from_probabilities(np.array([[-0.1, 1.1], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="shape"):
        birkhoff(np.ones(3))


@given(arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 6)),
              elements=st.floats(-6, 6, allow_nan=False)))
def test_bounds_dominate_delta_and_coincide_for_one_softmax(S):
    A = softmax(S)
    d = float(dobrushin(A))
    b_logit = float(softmax_logit_bound(S))
    assert d <= b_logit + 1e-12
    if (A > 0).all():
        assert float(birkhoff(A)) == pytest.approx(b_logit, abs=1e-9)  # logits = log A + row const
        assert float(softmax_bound_from_probabilities(A)) == pytest.approx(b_logit, abs=1e-9)


@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 5))
def test_birkhoff_dominates_delta_batched(seed, n):
    rng = np.random.default_rng(seed)
    T = rng.dirichlet(np.ones(n), size=(3, n))
    assert np.all(dobrushin(T) <= birkhoff(T) + 1e-12)
    assert birkhoff(T).shape == (3,)
