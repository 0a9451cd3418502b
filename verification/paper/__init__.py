"""The paper: one LaTeX document whose tables, figures and quoted numbers are regenerated from the
results store (``attnbounds paper``). build (store -> files: each family's ``paper_part`` from
``verification.<family>.paper``), latex (macros, theorem blocks, static checks), tables (the one
table renderer), command (the ``paper`` subcommand, ``register(subparsers)``)."""
