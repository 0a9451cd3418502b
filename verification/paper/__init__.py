"""The paper: one LaTeX document whose tables, figures and quoted numbers are regenerated from the
results store (``attnbounds paper``). build (store -> files), latex (rendering and static checks),
command (CLI)."""
from verification.paper.command import register  # noqa: F401
