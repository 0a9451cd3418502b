"""The notation of the stress family's tables, captions and figure labels (:mod:`verification.stress.paper`):
Theorem D2's step of attention rollout and the slack histogram's axis, in LaTeX."""
from __future__ import annotations

LATER_STEPS = r"$l \ge 2$"                                                   # the rollout steps checked
D2_STEP = r"$\delta(R_l) \le \delta(\hat A_l)\,\delta(R_{l-1})$"              # Theorem D2 at step l
A_HAT = r"$\hat A_l = (I + A_l)/2$"                                          # the lazy attention of step l
LOG10 = r"$\log_{10}$"
SLACK_FLOOR = "$10^{-18}$"              # the histogram's leftmost bin (verification.stress.checks.summaries.EDGES)
