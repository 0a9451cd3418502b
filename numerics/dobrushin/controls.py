"""Controls for Theorem D1's equality share on trained attention (docs/theory.md §2, "Controls"):
matrices that keep part of a trained attention matrix and remove the rest, whose D1 verdict is
decided exactly like the real one (:func:`numerics.dobrushin.factor_check`, rows divided by their
exact sums), and two descriptions of *why* a matrix is tight.

    permute_columns      B = A[:, sigma]: every row keeps its distribution (the multiset of its
                         entries, so its entropy and its row sum), the alignment of rows to columns
                         is gone (the diagonal becomes A_{i, sigma(i)}). One uniform permutation
                         sigma per input, the same for every layer (:func:`column_permutation`).
    shuffle_offdiagonal  B_ii = A_ii and row i's off-diagonal entries in a uniformly random order,
                         independently per row and per layer: diagonal mass and the multiset of each
                         row (hence its entropy) are kept *exactly*; what is removed is which other
                         token a row attends to.

Both are permutations of a row's own floats, so the exact row sums, and with them the rational
matrix a verdict is decided for, are permuted with them: nothing is rounded.

    every_pair_self_dominant   whether every pair i != j is mutually self-dominant (A_ii >= A_ji for
                               all i != j: each column's largest entry is its diagonal), decided
                               exactly on the rows divided by their exact sums; it implies D1's
                               equality whatever pair attains delta(A)
    pair_kind                  what a maximising pair (i, j) of delta(A) is: "special" (a special
                               token: CLS, SEP, BOS, ...), "adjacent" (|i - j| = 1), or "other"
    column_permuted_share      the exact probability that D1 is tight on A[:, sigma] for a uniform
                               sigma, for a fixed A whose maximising pair is unique: at most 1/2 when
                               its two rows tie in at most one column, at most n / (4(n - 1)) when in
                               none (docs/theory.md §2, "the column-permuted control")

>>> A = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
>>> bool(every_pair_self_dominant(A))
True
>>> pair_kind((0, 2), np.array([True, False, False])), pair_kind((1, 2), np.zeros(3, bool))
('special', 'adjacent')
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from theory.errors import InvalidInput

PAIR_KINDS = ("special", "adjacent", "other")
GENERATOR = "numpy PCG64 (default_rng), entropy [seed, first 60 bits of sha256(input hash), stream]"
STREAM_COLUMNS, STREAM_OFFDIAGONAL = 1, 2


def control_rng(seed: int, input_sha: str, stream: int) -> np.random.Generator:
    """The generator of one input's control draws: ``default_rng([seed, h, stream])`` with h the first
    60 bits of sha256 of ``input_sha`` (the input's content hash, so a control depends on the input, not
    on its position in a corpus).

    >>> int(control_rng(0, "ab12", 1).integers(1000)) == int(control_rng(0, "ab12", 1).integers(1000))
    True
    """
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidInput(f"control seed: a nonnegative integer, got {seed!r}")
    if not isinstance(input_sha, str) or not input_sha:
        raise InvalidInput(f"control draws: the input hash must be a nonempty string, got {input_sha!r}")
    import hashlib

    h = int(hashlib.sha256(input_sha.encode()).hexdigest()[:15], 16)
    return np.random.default_rng([int(seed), h, int(stream)])


def _square(A: Any) -> np.ndarray:
    a = np.asarray(A, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise InvalidInput(f"A: must be square (..., n, n), got shape {a.shape}")
    return a


def column_permutation(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation of range(n)."""
    return rng.permutation(n)


def permute_columns(A: Any, sigma: np.ndarray) -> np.ndarray:
    """A[..., :, sigma]: every matrix of ``A`` (..., n, n) with its columns permuted by ``sigma``.

    >>> permute_columns(np.array([[0.75, 0.25], [0.5, 0.5]]), np.array([1, 0])).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    a = _square(A)
    sigma = np.asarray(sigma)
    if sorted(sigma.tolist()) != list(range(a.shape[-1])):
        raise InvalidInput(f"sigma: must be a permutation of 0..{a.shape[-1] - 1}")
    return np.ascontiguousarray(a[..., sigma])


def shuffle_offdiagonal(A: Any, rng: np.random.Generator) -> np.ndarray:
    """Every row of every matrix of ``A`` (..., n, n): the diagonal entry kept, the n - 1 others in a
    uniformly random order (independent per row and matrix).

    >>> B = shuffle_offdiagonal(np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]]), np.random.default_rng(0))
    >>> np.diag(B).tolist(), sorted(B[0, 1:].tolist())
    ([0.5, 0.6, 0.6], [0.2, 0.3])
    """
    a = _square(A)
    n = a.shape[-1]
    flat = a.reshape((-1, n, n))
    out = flat.copy()
    if n < 2:
        return out.reshape(a.shape)
    off = ~np.eye(n, dtype=bool)
    cols = np.broadcast_to(np.arange(n), (n, n))[off].reshape(n, n - 1)      # row i: every column but i
    for b in range(flat.shape[0]):
        keys = rng.random((n, n - 1))
        order = np.take_along_axis(cols, np.argsort(keys, axis=1), axis=1)    # a random order per row
        out[b][off] = np.take_along_axis(flat[b], order, axis=1).reshape(-1)
    return out.reshape(a.shape)


def every_pair_self_dominant(A: Any) -> np.ndarray:
    """Per matrix of ``A`` (..., n, n), nonnegative floats whose rows are divided by their exact sums:
    whether A_ii >= A_ji for every i != j (then every pair is mutually self-dominant). Decided in
    float64 where a margin exceeds a rigorous bound on the rounding of the float renormalisation,
    otherwise on the exact rationals (``fractions.Fraction`` of each float). Shape (...); True for n = 1.

    >>> bool(every_pair_self_dominant(np.array([[3.0, 1.0], [3.0, 3.0]])))   # rows (3/4, 1/4), (1/2, 1/2)
    True
    >>> bool(every_pair_self_dominant(np.array([[1.0, 1.0], [2.0, 1.0]])))   # 1/2 < 2/3 in column 0
    False
    """
    a = _square(A)
    if np.any(~np.isfinite(a)) or np.any(a < 0):
        raise InvalidInput("A: entries must be finite and nonnegative")
    n = a.shape[-1]
    flat = a.reshape((-1, n, n))
    s = flat.sum(axis=-1, keepdims=True)
    if np.any(s <= 0):
        raise InvalidInput("A: a row is all zero; it cannot be renormalised")
    P = flat / s                                  # each entry within (n + 2) u of its exact value, relatively
    tol = 4.0 * (n + 2) * 2.0 ** -53
    diag = np.einsum("bii->bi", P)                # (B, n): column j's diagonal entry P_jj
    out = np.ones(flat.shape[0], dtype=bool)
    for b in range(flat.shape[0]):
        gap = diag[b][None, :] - P[b]                 # gap[i, j] = P_jj - P_ij
        np.fill_diagonal(gap, np.inf)
        scale = np.maximum(diag[b][None, :], P[b]) * tol
        if np.any(gap < -scale):                     # a column whose diagonal is surely not its maximum
            out[b] = False
            continue
        near = np.argwhere(gap <= scale)             # too close for floats: decide exactly
        if len(near):
            sums = {}

            def exact_sum(i: int) -> Fraction:
                if i not in sums:
                    sums[i] = sum((Fraction(float(x)) for x in flat[b, i]), Fraction(0))
                return sums[i]
            out[b] = all(Fraction(float(flat[b, j, j])) / exact_sum(j) >= Fraction(float(flat[b, i, j])) / exact_sum(i)
                         for i, j in near)
    return out.reshape(a.shape[:-2])


def pair_kind(pair: Any, special: np.ndarray) -> str:
    """"special" when the pair contains a special token (``special``: (n,) bool over the matrix's
    positions), else "adjacent" when |i - j| = 1, else "other"; "-" for no pair (n = 1)."""
    i, j = (int(v) for v in pair)
    if i < 0 or j < 0:
        return "-"
    if bool(special[i]) or bool(special[j]):
        return "special"
    return "adjacent" if abs(i - j) == 1 else "other"


def column_permuted_share(A: Any) -> Fraction:
    """The probability, over a uniform permutation sigma, that D1 holds with equality on B = A[:, sigma]
    (B_ik = A_{i, sigma(k)}), for one fixed n x n matrix ``A`` (nonnegative floats, each row divided by
    its exact sum; decided on the exact rationals) whose pair (i, j) attaining delta(A) > 0 is unique.

    Permuting columns keeps every d_ij, so (i, j) is B's unique maximising pair, and D1 is tight on B
    iff f(sigma(i)) >= 0 >= f(sigma(j)), f = A_i - A_j. (sigma(i), sigma(j)) is a uniform ordered pair
    of distinct columns; with p, m, z the columns where f > 0, < 0, = 0 the share is
    ((p + z)(m + z) - z) / (n (n - 1)). Swapping sigma(i) and sigma(j) (again uniform) maps the margins
    (x, y) to (-y, -x), so the share is at most (1 + P(x = y = 0)) / 2: at most 1/2 when z <= 1, and
    p m / (n (n - 1)) <= n / (4 (n - 1)) when z = 0. A matrix with several maximising pairs, or with
    delta(A) = 0 (every B tight), is refused: the closed form needs the unique pair.

    >>> column_permuted_share(np.array([[0.75, 0.25], [0.5, 0.5]]))       # n = 2: exactly 1/2
    Fraction(1, 2)
    >>> column_permuted_share(np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.4, 0.3, 0.3]]))
    Fraction(1, 3)
    """
    a = _square(A)
    if a.ndim != 2 or a.shape[0] < 2:
        raise InvalidInput(f"A: one n x n matrix with n >= 2, got shape {a.shape}")
    if np.any(~np.isfinite(a)) or np.any(a < 0):
        raise InvalidInput("A: entries must be finite and nonnegative")
    n = a.shape[0]
    rows = []
    for i in range(n):
        s = sum((Fraction(float(x)) for x in a[i]), Fraction(0))
        if s <= 0:
            raise InvalidInput("A: a row is all zero; it cannot be renormalised")
        rows.append([Fraction(float(x)) / s for x in a[i]])
    d = {(i, j): sum(abs(u - v) for u, v in zip(rows[i], rows[j])) / 2 for i in range(n) for j in range(i + 1, n)}
    best = max(d.values())
    top = [pair for pair, v in d.items() if v == best]
    if best == 0 or len(top) > 1:
        raise InvalidInput(f"A: the closed form needs a unique pair attaining delta(A) > 0; delta(A) = {best}, "
                           f"attained by {len(top)} pairs")
    i, j = top[0]
    f = [u - v for u, v in zip(rows[i], rows[j])]
    p, m = sum(x > 0 for x in f), sum(x < 0 for x in f)
    z = n - p - m
    return Fraction((p + z) * (m + z) - z, n * (n - 1))
