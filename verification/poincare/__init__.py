"""Poincare family: estimated Poincare constants of regularised attention / LoRA Gibbs measures against
their bounds, Villani's condition and the Langevin SDE (docs/theory.md section 4).

* ``checks``: what is run (the plan, ``bounds``, ``villani``,
  ``sde``): plans, chunks, instance -> records.
* ``report``: stored records -> tables (Markdown / CSV, the terminal) and figures.
* ``paper``: ``paper_part(store, plan)`` and ``needs(store, plan)``: the paper's tables, figures and
  macros of a ``checks.Plan`` (made once: ``Plan.for_verify(seed, full)`` or ``Plan.from_args``).
* ``command``: ``register(subparsers)`` (the ``attnbounds poincare`` subcommand) and
  ``verify_section(ctx)`` (the main job's part).
"""
