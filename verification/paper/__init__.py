"""The paper: one LaTeX document whose tables, figures and quoted numbers are regenerated from the
results store (``attnbounds paper``). build (store -> files: each family's ``paper_part`` from
``verification.<family>.paper``), latex (rendering and static checks), command (the ``paper``
subcommand, ``register(subparsers)``)."""
