"""Random row-stochastic families: the random-matrix instance source of the Dobrushin campaigns.

Families (rows i.i.d. unless said): ``dirichlet`` (uniform on the simplex), ``softmax-T`` (softmax of
standard Gaussian logits / T), ``sparse`` (Dirichlet(1) on a random support of ceil(n/4) entries:
exact zeros; one-hot, the law of ``hard``, at n <= 4), ``hard`` (one-hot), ``causal`` (softmax of
Gaussian logits under a causal mask). :data:`FAMILY_TEXT` defines each in one line.
Every draw comes from an explicit generator; :func:`generator` derives it deterministically from
(seed, family, n, chunk), so any chunk can be regenerated on its own.

>>> A = sample("hard", 3, 2, generator(0, "hard", 3, 0))
>>> A.shape, bool((A.sum(-1) == 1).all())
((2, 3, 3), True)
"""
from __future__ import annotations

import hashlib

import numpy as np

from theory.errors import InvalidInput

DISTRIBUTIONS = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4", "sparse", "hard", "causal")
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
}


def check_family(name: str, option: str = "") -> str:
    """``name`` if it names a family here (or ``softmax-T<T>`` with T in :data:`TEMPERATURES`),
    else an InvalidInput (a ValueError), prefixed by ``option`` when given: the instance source owns the validation
    of its families.

    >>> check_family("softmax-T2")
    'softmax-T2'
    >>> check_family("softmax-T1e-320", "--families")
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: --families: family 'softmax-T1e-320' has temperature 1e-320, outside [0.001, 1000] (softmax of Gaussian logits / T must stay finite)
    """
    where = f"{option}: " if option else ""
    if name in DISTRIBUTIONS:
        return name
    if name.startswith("softmax-T"):
        text = name[len("softmax-T"):]
        try:
            T = float(text)
        except ValueError:
            raise InvalidInput(f"{where}family {name!r}: temperature {text!r} is not a number") from None
        lo, hi = TEMPERATURES
        if not lo <= T <= hi:   # also refuses nan and inf
            raise InvalidInput(f"{where}family {name!r} has temperature {text}, outside [{lo:g}, {hi:g}] "
                             "(softmax of Gaussian logits / T must stay finite)")
        return name
    raise InvalidInput(f"{where}unknown family {name!r}; known: {', '.join(DISTRIBUTIONS)} (or softmax-T<temperature>)")


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
    raise InvalidInput(f"unknown family {family!r}; known: {DISTRIBUTIONS}")
