"""Per-chunk summaries of a stress sweep, and their merge.

A chunk of 10^4 instances is stored as one summary per theorem (a few hundred bytes of JSON) plus
full records only for the instances worth keeping (:func:`keep`): every violated and undecided
instance, the ``k`` smallest positive slacks, and tight instances where tight is rare (under 1% of
the chunk). The summary holds the verdict counts, how many verdicts the exact path decided, the
smallest strict slack and its index, and a histogram of log10(slack) over strict instances.

>>> v = np.array([HOLDS, TIGHT, HOLDS, HOLDS]); s = np.array([0.1, 0.0, 1e-7, 0.3])
>>> body = summarise(v, s, np.array([False, True, False, False]))
>>> body["counts"], body["min_slack"], body["min_index"], sum(body["hist"])
({'holds': 3, 'tight': 1}, 1e-07, 2, 3)
>>> keep(v, s, k=1)
{2: 'smallest-slack'}
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

import numpy as np

from numerics.dobrushin.batch import HOLDS, NAMES, TIGHT, UNDECIDED, VIOLATED  # noqa: F401  (the verdict codes)

LOG_LO, LOG_HI, BIN = -18.0, 0.0, 0.5   # strict slacks: bins of half a decade; below 1e-18 -> bin 0
EDGES = np.arange(LOG_LO, LOG_HI + BIN / 2, BIN)    # 37 edges: bin 0 below 1e-18, bin 37 from 1
KEEP_SMALLEST = 3
RARE_TIGHT = 0.01


def summarise(verdict: np.ndarray, slack: np.ndarray, exact: np.ndarray) -> dict[str, Any]:
    """Summary of one chunk: ``verdict`` codes, ``slack`` per instance, ``exact`` (decided by
    the exact path)."""
    counts = np.bincount(verdict, minlength=len(NAMES))
    strict = verdict == HOLDS
    body: dict[str, Any] = {"n": int(len(verdict)),
                            "counts": {NAMES[i]: int(c) for i, c in enumerate(counts) if c},
                            "exact": int(np.count_nonzero(exact)), "min_slack": None, "min_index": None}
    if strict.any():
        idx = np.flatnonzero(strict)
        j = int(idx[np.argmin(slack[idx])])
        body["min_slack"], body["min_index"] = float(slack[j]), j
        logs = np.log10(np.maximum(slack[idx], 1e-300))
        hist = np.bincount(np.digitize(logs, EDGES), minlength=len(EDGES) + 1)
        body["hist"] = [int(h) for h in hist]
        body["slack_sum"] = float(slack[idx].sum())
    else:
        body["hist"] = [0] * (len(EDGES) + 1)
        body["slack_sum"] = 0.0
    return body


def keep(verdict: np.ndarray, slack: np.ndarray, k: int = KEEP_SMALLEST) -> dict[int, str]:
    """Indices worth a full record, with the reason: violated, undecided, the ``k`` smallest
    strict slacks, and every tight one when tight is rare (< 1%, at most 16)."""
    out: dict[int, str] = {}
    for code, why in ((VIOLATED, "violated"), (UNDECIDED, "undecided")):
        for i in np.flatnonzero(verdict == code):
            out[int(i)] = why
    strict = np.flatnonzero(verdict == HOLDS)
    if len(strict):
        for i in strict[np.argsort(slack[strict], kind="stable")[:k]]:
            out.setdefault(int(i), "smallest-slack")
    tight = np.flatnonzero(verdict == TIGHT)
    if 0 < len(tight) <= RARE_TIGHT * len(verdict):
        for i in tight[:16]:
            out.setdefault(int(i), "tight-rare")
    return out


class Merged:
    """A running merge of chunk summaries (of one theorem): counts, smallest slack and where, histogram
    (typed for the report and the paper: :mod:`verification.stress.findings.cells`)."""

    def __init__(self) -> None:
        self.n = 0
        self.exact = 0
        self.counts: dict[str, int] = {}
        self.min_slack: Optional[float] = None
        self.min_at: Optional[tuple[str, int]] = None
        self.hist = [0] * (len(EDGES) + 1)
        self.slack_sum = 0.0
        self.chunks = 0
        self.steps: list[dict[str, Any]] = []    # rollout chunks: per step counts, min slack and where

    def add(self, chunk: str, body: dict[str, Any]) -> "Merged":
        self.chunks += 1
        self.n += body["n"]
        self.exact += body.get("exact", 0)
        for k, v in body["counts"].items():
            self.counts[k] = self.counts.get(k, 0) + v
        s = body.get("min_slack")
        if s is not None and (self.min_slack is None or s < self.min_slack):
            self.min_slack, self.min_at = s, (chunk, body["min_index"])
        self.hist = [a + b for a, b in zip(self.hist, body["hist"])]
        self.slack_sum += body.get("slack_sum", 0.0)
        for l, st in enumerate(body.get("steps", ())):
            if l == len(self.steps):
                self.steps.append({"counts": {}, "min_slack": None, "min_at": None})
            mine = self.steps[l]
            for k, v in st["counts"].items():
                mine["counts"][k] = mine["counts"].get(k, 0) + v
            s = st.get("min_slack")
            if s is not None and (mine["min_slack"] is None or s < mine["min_slack"]):
                mine["min_slack"], mine["min_at"] = s, (chunk, st["min_index"])
        return self


def merge(rows: Iterable[dict[str, Any]]) -> dict[str, Merged]:
    """Stored summary rows (``ResultStore.summaries``) -> one :class:`Merged` per key: the chunk's
    family and n (``'<family>/n<n>'``)."""
    out: dict[str, Merged] = {}
    for row in rows:
        cell = row["chunk"].rsplit("/", 1)[0]
        out.setdefault(cell, Merged()).add(row["chunk"], row["body"])
    return out

