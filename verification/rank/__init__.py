"""Rank family: deficiency, achievability and recovery of rank r* for the linear surrogate, for
attention (linear and softmax kernels) and for the heads of trained models (docs/theory.md).

Roles (import the role module; this package imports nothing):

    checks/   what is run: plans, campaigns and chunk functions (instance -> records) for the linear
              surrogate (checks.linear), attention (checks.attention) and trained heads (checks.weights)
    findings/ stored records -> typed values (findings(store, plan) -> Findings: shares, tallies,
              estimates, decisions, per-cell dataclasses, the claims); every statistic decided here
    report/   findings -> tables (verification.report.tables.Table) and figures, per part
              (report.linear, report.attention, report.softmax, report.weights); never recomputes
    paper     paper_part(store, plan) -> Part: the paper's tables, figures and macros of a
              checks.Plan (made once: Plan.for_verify(seed, full) or Plan.from_args), needs(store, plan)
    command   register(subparsers) for ``attnbounds rank`` and verify_section(ctx) for the main job
"""
