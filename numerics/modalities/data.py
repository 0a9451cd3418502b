"""The data sets, offline: scikit-learn's bundled ``load_digits`` (8x8 images), ``load_breast_cancer``
and ``load_wine`` (tabular), with deterministic stratified splits.

Nothing is downloaded: these three sets ship inside the scikit-learn package. The split is
``train_test_split(test_size=0.25, stratify=y, random_state=seed)``; images are scaled to [0, 1]
(pixel / 16); tabular features are standardised with the training split's mean and standard
deviation (never the test split's). Every test example has an id and a hash of its content
(features as float32 bytes and label), so stored records are keyed by what was measured.

>>> d = load_dataset("wine", seed=0)
>>> d.x_train.shape[1], d.n_classes, len(d.x_test) + len(d.x_train)
(13, 3, 178)
>>> d.items()[0].id == d.items()[0].id and len(d.items()) == len(d.x_test)
True
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

import numpy as np

from theory.errors import InvalidInput

DATASETS = ("digits", "breast_cancer", "wine")
TEST_SIZE = 0.25
_CACHE: dict[tuple, "Dataset"] = {}


@dataclass(frozen=True)
class TestItem:
    """One test example as an input of an attention source."""

    id: str            # "<dataset>:s<seed>:test<k>" (k: position in the test split)
    sha: str           # sha256 (16 hex) of the example's float32 features and its label
    index: int         # position in the test split
    label: int


@dataclass(frozen=True)
class Dataset:
    """A split data set: float32 features, int64 labels."""

    name: str
    seed: int
    x_train: np.ndarray     # (N_train, F) float32; digits: F = 64 pixels, row-major 8x8
    y_train: np.ndarray     # (N_train,) int64
    x_test: np.ndarray      # (N_test, F) float32
    y_test: np.ndarray      # (N_test,) int64
    n_classes: int
    image_side: Optional[int] = None   # 8 for digits, None for tabular sets
    sha: str = ""                      # hash of the whole split (provenance of a trained model)

    def items(self, limit: Optional[int] = None) -> list[TestItem]:
        """The first ``limit`` test examples (all when None) as :class:`TestItem`."""
        n = len(self.x_test) if limit is None else min(int(limit), len(self.x_test))
        return [TestItem(id=f"{self.name}:s{self.seed}:test{k}", sha=example_sha(self.x_test[k], self.y_test[k]),
                         index=k, label=int(self.y_test[k])) for k in range(n)]


def example_sha(x: np.ndarray, y: int) -> str:
    h = hashlib.sha256(np.ascontiguousarray(x, dtype=np.float32).tobytes())
    h.update(str(int(y)).encode())
    return h.hexdigest()[:16]


def load_dataset(name: str, seed: int = 0) -> Dataset:
    """The split of ``name`` (one of :data:`DATASETS`) for ``seed`` (cached)."""
    if name not in DATASETS:
        raise InvalidInput(f"unknown data set {name!r}; known: {', '.join(DATASETS)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidInput(f"data set {name!r}: seed must be a non-negative integer, got {seed!r}")
    key = (name, int(seed))
    if key in _CACHE:
        return _CACHE[key]
    from sklearn import datasets
    from sklearn.model_selection import train_test_split

    loader = {"digits": datasets.load_digits, "breast_cancer": datasets.load_breast_cancer,
              "wine": datasets.load_wine}[name]
    X, y = loader(return_X_y=True)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)
    xtr, xte, ytr, yte = train_test_split(X, y, test_size=TEST_SIZE, stratify=y, random_state=int(seed))
    if name == "digits":
        xtr, xte = xtr / 16.0, xte / 16.0
        side: Optional[int] = 8
    else:
        mu, sd = xtr.mean(axis=0), xtr.std(axis=0)
        sd[sd == 0] = 1.0
        xtr, xte = (xtr - mu) / sd, (xte - mu) / sd
        side = None
    xtr, xte = xtr.astype(np.float32), xte.astype(np.float32)
    h = hashlib.sha256()
    for a in (xtr, ytr, xte, yte):
        h.update(np.ascontiguousarray(a).tobytes())
    ds = Dataset(name=name, seed=int(seed), x_train=xtr, y_train=ytr, x_test=xte, y_test=yte,
                 n_classes=int(y.max()) + 1, image_side=side, sha=h.hexdigest()[:16])
    _CACHE[key] = ds
    return ds
