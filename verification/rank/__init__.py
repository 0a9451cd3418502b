"""Rank family: deficiency, achievability and recovery for the linear surrogate (linear), attention
(attention) and trained heads (weights); report (stored records -> tables, figures); command (CLI
+ main-job section)."""
from verification.rank.command import SECTION, register, verify_section  # noqa: F401
from verification.rank.paper import paper_part  # noqa: F401
