"""How the rank family writes a typed finding into a table cell or a macro: shares with their
Wilson intervals, counts, verdict tallies, means with intervals (plain text, no LaTeX; the same text
in the report's tables and the paper's macros).

>>> from verification.rank.findings import Outcomes
>>> outcomes(Outcomes.of(["supported"] * 3 + ["refuted", "inconclusive"]))
'3/4 [0.30, 0.95], 1 inconclusive'
>>> outcomes(Outcomes.of([])), outcomes(Outcomes.of(["inconclusive"]))
('-', '0/0 (1 inconclusive)')
"""
from __future__ import annotations

from typing import Any

from verification.findings import Estimate, Share, Tally


def outcomes(o: Any) -> str:
    """``k/n [lo, hi]``: the supported draws among the decided with the 95% Wilson interval of the
    share, the inconclusive counted apart (``, m inconclusive``); ``-`` where there are no draws."""
    s = o.share
    if s.n == 0:
        return f"0/0 ({o.inconclusive} inconclusive)" if o.inconclusive else "-"
    return f"{s.k}/{s.n} [{s.lo:.2f}, {s.hi:.2f}]" + (f", {o.inconclusive} inconclusive" if o.inconclusive else "")


def count(s: Share) -> str:
    """``k/n``."""
    return f"{s.k}/{s.n}"


def share_with_interval(s: Share) -> str:
    """``k/n [lo, hi]`` (``-`` where n = 0)."""
    return f"{s.k}/{s.n} [{s.lo:.2f}, {s.hi:.2f}]" if s.n else "-"


def tally(t: Tally) -> str:
    """The verdicts counted, ``holds 3, tight 2`` (sorted by verdict)."""
    return ", ".join(f"{v} {n}" for v, n in t.counts.items())


def tally_share(t: Tally, *verdicts: str) -> str:
    """``k/n``: how many of the tallied records have one of ``verdicts``."""
    return f"{t.count(*verdicts)}/{t.total}"


def estimate(e: Estimate) -> str:
    """``value [lo, hi]``, two decimals."""
    return f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]"


def counted(pairs: tuple) -> str:
    """``value:count`` pairs, space-separated, in the order given."""
    return " ".join(f"{k}:{v}" for k, v in pairs)
