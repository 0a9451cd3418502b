"""Poincare family: true Poincare constants of regularised attention / LoRA Gibbs measures against
their bounds (checks), the Langevin SDE (sde), report (stored records -> tables, figures), command
(CLI + main-job section)."""
from verification.poincare.command import SECTION, register, verify_section  # noqa: F401
from verification.poincare.paper import paper_part  # noqa: F401
