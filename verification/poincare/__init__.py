"""Poincare family: estimated Poincare constants of regularised attention / LoRA Gibbs measures against
their bounds, Villani's condition and the Langevin SDE (docs/theory.md section 4).

* ``checks``: what is run (the plan, ``bounds``, ``villani``,
  ``sde``): plans, chunks, instance -> records.
* ``findings``: ``findings(store, plan)``: the plan's stored campaigns as typed values (numbers,
  verdicts, outcomes, the claims' decisions), built once; what the report and the paper render.
* ``report``: findings -> tables (Markdown / CSV, the terminal) and figures.
* ``paper``: ``paper_part(store, plan)`` and ``needs(store, plan)``: the paper's tables, figures and
  macros of a ``checks.Plan`` (made once: ``Plan.for_verify(seed, full)`` or ``Plan.from_args``),
  rendered from its findings.
* ``command``: ``register(subparsers)`` (the ``attnbounds poincare`` subcommand) and
  ``verify_section(ctx)`` (the main job's part).
"""
