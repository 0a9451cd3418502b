"""SAN family: attention-only vs standard decoders at tiny scale (THEORY.md section 5).

checks (presets -> runs -> records), claims (stored runs -> claim outcomes), report and figures
(stored records -> tables, figures, macros), command (CLI + section).
"""
from verification.san.command import SECTION, register, verify_section  # noqa: F401
from verification.san.report import paper_part  # noqa: F401
