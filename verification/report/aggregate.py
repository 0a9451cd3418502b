"""Aggregation shared by every family's report: grouping stored records, shares, medians, verdict
counts, and the one matplotlib entry point (headless).

>>> recs = [{"verdict": "tight", "n": 2}, {"verdict": "holds", "n": 2}, {"verdict": "holds", "n": 3}]
>>> {k: share(v, ("tight",)) for k, v in group(recs, lambda r: (r["n"],)).items()}
{(2,): '1/2', (3,): '0/1'}
>>> verdict_counts(recs), median([3.0, None, 1.0])
('holds 2, tight 1', 2.0)
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Optional

import numpy as np


def group(records: Iterable[dict], key: Callable[[dict], tuple]) -> dict[tuple, list[dict]]:
    """Records grouped by ``key``, groups sorted (numbers before strings, then by value)."""
    out: dict[tuple, list[dict]] = defaultdict(list)
    for rec in records:
        out[key(rec)].append(rec)
    order = lambda kv: tuple((0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x)) for x in kv[0])  # noqa: E731
    return dict(sorted(out.items(), key=order))


def share(recs: list[dict], verdicts: tuple[str, ...] = ("holds", "tight")) -> str:
    """``k/n``: how many of ``recs`` have one of ``verdicts``."""
    k = sum(r["verdict"] in verdicts for r in recs)
    return f"{k}/{len(recs)}"


def verdict_counts(recs: list[dict]) -> str:
    c = Counter(r["verdict"] for r in recs)
    return ", ".join(f"{v} {c[v]}" for v in sorted(c))


def median(xs: Iterable[Optional[float]], skip_nan: bool = True) -> Optional[float]:
    """Median of the values that are not None (nor NaN, unless ``skip_nan=False``: then a NaN
    makes the median NaN); None when there are none."""
    v = [x for x in xs if x is not None and not (skip_nan and isinstance(x, float) and math.isnan(x))]
    return float(np.median(v)) if v else None


def median_keep_nan(xs: Iterable[Optional[float]]) -> Optional[float]:
    """Median of the values that are not None; a NaN among them makes it NaN."""
    return median(xs, skip_nan=False)


def pyplot() -> Any:
    """matplotlib.pyplot on the headless Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
