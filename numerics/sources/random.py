"""Random families: the random-matrix instance source of the Dobrushin campaigns and of the stress
sweep of a statement over :mod:`theory.expr` (every kind of symbol).

Row-stochastic families (rows i.i.d. unless said): ``dirichlet`` (uniform on the simplex),
``softmax-T`` (softmax of standard Gaussian logits / T), ``sparse`` (Dirichlet(1) on a random support
of ceil(n/4) entries: exact zeros; one-hot, the law of ``hard``, at n <= 4), ``hard`` (one-hot),
``causal`` (softmax of Gaussian logits under a causal mask), ``birkhoff`` (doubly stochastic: an exact
convex combination of permutation matrices with dyadic weights), ``symmetric`` ((M + M^T)/2 of a
``birkhoff`` M). Real families (a ``logits`` n x n or ``tokens`` n x d matrix): ``gauss-<s>``
(Gaussian entries of standard deviation s) and ``grid`` (integers/4 in [-8, 8]). A parameter is drawn
by :func:`parameter_values` (:data:`PARAMETER_TEXT`). :data:`FAMILY_TEXT` defines each family in
one line. Every draw comes from an explicit generator; :func:`generator` derives it
deterministically from (seed, family, n, chunk), so any chunk can be regenerated on its own.

>>> A = sample("hard", 3, 2, generator(0, "hard", 3, 0))
>>> A.shape, bool((A.sum(-1) == 1).all())
((2, 3, 3), True)
>>> D = sample("birkhoff", 3, 1, generator(0, "birkhoff", 3, 0))[0]
>>> bool((D.sum(0) == 1).all() and (D.sum(1) == 1).all())
True
>>> real("grid", 2, 3, 1, generator(0, "grid", 2, 0)).shape
(1, 2, 3)
"""
from __future__ import annotations

import hashlib
from fractions import Fraction

import numpy as np

from theory.errors import InvalidInput

DISTRIBUTIONS = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4", "sparse", "hard", "causal")
DOUBLY = ("birkhoff", "symmetric")             # doubly stochastic families (exact dyadic floats)
STOCHASTIC = DISTRIBUTIONS + DOUBLY            # every row-stochastic family (softmax-T<T>: any T)
POSITIVE_FREE = ("dirichlet", "birkhoff", "symmetric")   # with softmax-T<T>: no exact zeros (almost surely)
REAL = ("gauss-0.25", "gauss-1", "gauss-4", "grid")   # real families (logits, tokens; gauss-<s>: any s)
SCALES = (1e-3, 1e3)         # gauss-<s>: the standard deviations a family name may carry
WEIGHT_BITS = 20             # birkhoff: weights are multiples of 2^-20
GRID_STEP, GRID_MAX = 4, 8   # grid: the integers/4 in [-8, 8]
PARAMETER_BITS = 16          # a parameter's interior values: lo + (hi - lo) j / 2^16
GENERATOR = "numpy.default_rng(SeedSequence([seed, family_id, n, chunk]))"


TEMPERATURES = (1e-3, 1e3)   # softmax-T<T>: the temperatures a family name may carry

# Each family in one line: the law of one n x n matrix (rows independent) and what it degenerates to at
# small n. `attnbounds stress --help` prints these lines; docs/your-theorem.md quotes them (a test keeps
# the two in step).
FAMILY_TEXT = {
    "dirichlet": "each row uniform on the simplex (Dirichlet(1, ..., 1)); every entry positive almost surely; "
                 "at n = 2 a row is (u, 1 - u), u uniform on [0, 1]",
    "softmax-T<T>": "each row the softmax of n independent standard Gaussian logits divided by T (T from 0.001 to "
                    "1000, e.g. softmax-T1): every entry positive (but for float underflow at a small T); a small "
                    "T tends to hard, a large one to the constant matrix of 1/n (delta = 0)",
    "sparse": "each row Dirichlet(1, ..., 1) on ceil(n/4) columns drawn uniformly, exact zeros elsewhere: at "
              "n <= 4 one column, so sparse is hard (one-hot rows); two columns at n = 5 to 8",
    "hard": "each row one-hot, its column uniform on 0..n-1 (a random map of the positions; delta(A) is 0 or 1)",
    "causal": "row i the softmax of independent standard Gaussian logits on columns 0..i, exact zeros above the "
              "diagonal (lower triangular, row 0 = e_0); at n = 2, row 1 is (p, 1 - p), p = 1/(1 + exp(z)), z "
              "a Gaussian of variance 2",
    "birkhoff": "doubly stochastic: sum_k w_k P_k over 2n permutation matrices, the weights w_k >= 0 multiples of "
                "2^-20 summing to exactly 1 (uniform spacings), P_k = pi S^k rho for k < n (S the cyclic shift, pi "
                "and rho uniform: they cover every entry, so every entry is positive unless a weight is 0), the "
                "others uniform; exact floats",
    "symmetric": "(M + M^T)/2 for M drawn from birkhoff: symmetric and doubly stochastic, exact floats",
    "gauss-<s>": "a real matrix (logits n x n, tokens n x d) of independent Gaussians of standard deviation s (s "
                 "from 0.001 to 1000, e.g. gauss-0.25, gauss-1, gauss-4); a logits matrix under "
                 "assume=('symmetric',) is (Z + Z^T)/2",
    "grid": "a real matrix (logits n x n, tokens n x d) of independent entries uniform on the integers/4 in [-8, 8] "
            "(65 values, exact floats: ties and exact equalities are frequent); a logits matrix under "
            "assume=('symmetric',) is (Z + Z^T)/2 (multiples of 1/8)",
}
# How a parameter("alpha", lo, hi) is drawn, per instance and parameter, and how d (the width of a tokens
# matrix) enters the cells: printed by `attnbounds stress --help` and quoted by docs/your-theorem.md
PARAMETER_TEXT = ("lo with probability 1/8, hi with probability 1/8, else lo + (hi - lo) j / 2^16 with j uniform on "
                  "0..2^16 - 1 (exact rationals; dyadic for dyadic lo and hi)")
DIMS_TEXT = ("a statement with a tokens matrix (n x d) is swept over d in --dims (default 1,2,4): one cell per "
             "family, n and d, its chunks <family>/n<n>/d<d>/c<k>")


def check_family(name: str, option: str = "") -> str:
    """``name`` if it names a row-stochastic family here (or ``softmax-T<T>`` with T in
    :data:`TEMPERATURES`), else an InvalidInput (a ValueError), prefixed by ``option`` when given: the
    instance source owns the validation of its families (:func:`check_real` for the real ones).

    >>> check_family("softmax-T2")
    'softmax-T2'
    >>> check_family("softmax-T1e-320", "--families")
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: --families: family 'softmax-T1e-320' has temperature 1e-320, outside [0.001, 1000] (softmax of Gaussian logits / T must stay finite)
    """
    where = f"{option}: " if option else ""
    if name in STOCHASTIC:
        return name
    if name.startswith("softmax-T"):
        return _scaled(name, "softmax-T", "temperature", TEMPERATURES, where,
                       " (softmax of Gaussian logits / T must stay finite)")
    if known_real(name):
        raise InvalidInput(f"{where}family {name!r} draws real matrices (logits, tokens), not row-stochastic ones; "
                           f"row-stochastic families: {', '.join(STOCHASTIC)} (or softmax-T<temperature>)")
    raise InvalidInput(f"{where}unknown family {name!r}; known: {', '.join(STOCHASTIC)} (or softmax-T<temperature>)")


def check_real(name: str, option: str = "") -> str:
    """``name`` if it names a real family (``gauss-<s>`` with s in :data:`SCALES`, ``grid``), else an
    InvalidInput prefixed by ``option``.

    >>> check_real("gauss-0.5")
    'gauss-0.5'
    >>> check_real("dirichlet")
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: family 'dirichlet' draws row-stochastic matrices; real families (logits, tokens): gauss-0.25, gauss-1, gauss-4, grid (or gauss-<s>)
    """
    where = f"{option}: " if option else ""
    if name == "grid":
        return name
    if name.startswith("gauss-"):
        return _scaled(name, "gauss-", "standard deviation", SCALES, where)
    what = "draws row-stochastic matrices" if name in STOCHASTIC or name.startswith("softmax-T") else "is unknown"
    raise InvalidInput(f"{where}family {name!r} {what}; real families (logits, tokens): {', '.join(REAL)} "
                       "(or gauss-<s>)")


def _scaled(name: str, prefix: str, what: str, bounds: tuple, where: str, why: str = "") -> str:
    """``name`` (``<prefix><number>``) if its number lies in ``bounds`` (nan and inf refused too), else
    an InvalidInput naming ``what`` the number is."""
    text = name[len(prefix):]
    try:
        x = float(text)
    except ValueError:
        raise InvalidInput(f"{where}family {name!r}: {what} {text!r} is not a number") from None
    lo, hi = bounds
    if not lo <= x <= hi:
        raise InvalidInput(f"{where}family {name!r} has {what} {text}, outside [{lo:g}, {hi:g}]{why}")
    return name


def known_real(name: str) -> bool:
    """True when :func:`check_real` accepts ``name``."""
    try:
        check_real(name)
    except ValueError:
        return False
    return True


def known_family(name: str) -> bool:
    """True when :func:`check_family` accepts ``name``."""
    try:
        check_family(name)
    except ValueError:
        return False
    return True


def family_id(family: str) -> int:
    """A stable 32-bit integer for a family name (part of every chunk's seed)."""
    return int.from_bytes(hashlib.sha256(family.encode()).digest()[:4], "little")


def generator(seed: int, family: str, n: int, chunk: int) -> np.random.Generator:
    """The generator of one chunk: :data:`GENERATOR`."""
    return np.random.default_rng(np.random.SeedSequence([seed, family_id(family), n, chunk]))


def sample(family: str, n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` row-stochastic n x n matrices of ``family``, float64, (count, n, n)."""
    if family in DOUBLY:
        M = birkhoff(n, count, rng)
        return M if family == "birkhoff" else symmetrised(M)
    if family == "dirichlet":
        return rng.dirichlet(np.ones(n), size=(count, n))
    if family.startswith("softmax-T"):
        T = float(family[len("softmax-T"):])
        z = rng.standard_normal((count, n, n)) / T
        z -= z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)
    if family == "sparse":
        k = max(1, -(-n // 4))
        w = rng.dirichlet(np.ones(k), size=(count, n))
        out = np.zeros((count, n, n))
        cols = np.argsort(rng.random((count, n, n)), axis=-1)[..., :k]
        np.put_along_axis(out, cols, w, axis=-1)
        return out
    if family == "hard":
        out = np.zeros((count, n, n))
        np.put_along_axis(out, rng.integers(0, n, (count, n, 1)), 1.0, axis=-1)
        return out
    if family == "causal":
        z = rng.standard_normal((count, n, n))
        z = np.where(np.tril(np.ones((n, n), dtype=bool)), z, -np.inf)
        z -= z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)
    raise InvalidInput(f"unknown family {family!r}; known: {STOCHASTIC}")


def spacings(total: int, parts: int, cuts: np.ndarray) -> np.ndarray:
    """Integer gaps (..., parts) summing to ``total`` from (..., parts - 1) cut points in [0, total]."""
    c = np.sort(cuts, axis=-1)
    lead = np.zeros(c.shape[:-1] + (1,), dtype=np.int64)
    end = np.full(c.shape[:-1] + (1,), total, dtype=np.int64)
    return np.diff(np.concatenate([lead, c.astype(np.int64), end], axis=-1), axis=-1)


def combine(perms: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_k w_k P_k, (count, n, n): ``perms`` (count, K, n) (row i of P_k has its 1 in column
    perms[c, k, i]), ``weights`` (count, K) dyadic floats; every sum exact."""
    count, K, n = perms.shape
    out = np.zeros((count, n, n))
    rows = np.arange(n)
    at = np.arange(count)[:, None]
    for k in range(K):                      # one permutation per instance: no entry is hit twice
        out[at, rows[None, :], perms[:, k]] += weights[:, k, None]
    return out


def covering(pi: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """The n permutations i -> pi[(rho[i] + k) mod n], k = 0..n-1, of (count, n) pi and rho:
    (count, n, n); together they hit every entry (i, j) exactly once."""
    n = pi.shape[-1]
    shifted = (rho[:, None, :] + np.arange(n)[None, :, None]) % n
    return np.take_along_axis(np.repeat(pi[:, None, :], n, axis=1), shifted, axis=-1)


def birkhoff(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` doubly stochastic n x n matrices (:data:`FAMILY_TEXT` ``birkhoff``)."""
    pi = np.argsort(rng.random((count, n)), axis=-1)
    rho = np.argsort(rng.random((count, n)), axis=-1)
    others = np.argsort(rng.random((count, n, n)), axis=-1)
    perms = np.concatenate([covering(pi, rho), others], axis=1)
    total = 2 ** WEIGHT_BITS
    w = spacings(total, 2 * n, rng.integers(0, total + 1, (count, 2 * n - 1))) / total
    return combine(perms, w)


def symmetrised(M: np.ndarray) -> np.ndarray:
    """(M + M^T)/2 of a batch (count, n, n): exact for dyadic entries (a sum and a halving)."""
    return (M + np.swapaxes(M, -1, -2)) / 2


def real(family: str, rows: int, cols: int, count: int, rng: np.random.Generator,
         symmetric: bool = False) -> np.ndarray:
    """``count`` real rows x cols matrices of the real ``family`` (:func:`check_real`), float64;
    ``symmetric`` (square only): (Z + Z^T)/2."""
    check_real(family)
    if family == "grid":
        Z = rng.integers(-GRID_STEP * GRID_MAX, GRID_STEP * GRID_MAX + 1, (count, rows, cols)) / GRID_STEP
    else:
        Z = rng.standard_normal((count, rows, cols)) * float(family[len("gauss-"):])
    return symmetrised(Z) if symmetric else Z


def parameter_values(words: np.ndarray, lo: Fraction, hi: Fraction) -> list[Fraction]:
    """One value of a parameter over [lo, hi] per 32-bit word (:data:`PARAMETER_TEXT`): top three
    bits 0 -> lo, 1 -> hi, else lo + (hi - lo) j / 2^16 with j the low 16 bits.

    >>> [str(v) for v in parameter_values(np.array([0, 1 << 29, (2 << 29) + (1 << 15)]), Fraction(0), Fraction(1))]
    ['0', '1', '1/2']
    """
    w = np.asarray(words).astype(np.uint64)
    sel = (w >> np.uint64(29)).tolist()
    j = (w & np.uint64((1 << PARAMETER_BITS) - 1)).tolist()
    step = (hi - lo) / (1 << PARAMETER_BITS)
    return [lo if s == 0 else hi if s == 1 else lo + step * k for s, k in zip(sel, j)]


def parameter_words(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` uniform 32-bit words (uint64) for :func:`parameter_values`."""
    return rng.integers(0, 1 << 32, count, dtype=np.uint64)
