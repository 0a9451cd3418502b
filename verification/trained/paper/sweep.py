"""The float tests of D1 at every tolerance in the paper, rendered from each model's
:class:`verification.trained.findings.sweep.FloatSweep`: the data table ``trained-float-sweep``
(per model, float test, precision and tolerance kind the wrong verdicts at each tolerance, with
their intervals), the table ``trained-float-ties`` (the verdicts within rounding of a tie, and the
condition's errors among them), their macros and the guards of the words that depend on them.
"""
from __future__ import annotations

from typing import Any

from verification.report.part import Part, Table, frame
from verification.trained.findings import Findings
from verification.trained.findings.sweep import KINDS, PRECISIONS, TOLERANCES, FloatSweep, SweepCell
from verification.trained.paper.names import MODELS, SHORT, TITLES
from verification.trained.report.tables import (CLUSTER_NOTE, SWEEP_CAPTION, SWEEP_COLUMNS, TIES_CAPTION, TIES_COLUMNS,
                                                interval_cell, sweep_rows, ties_rows, tolerance_label)

EQUALITY_TESTS = ("as-stored", "renormalised")      # the two-sided == tests, whose tolerance the sweep varies


def wrong_cell(c: SweepCell, verdicts: int) -> str:
    """``k/n [lo, hi]`` of a sweep cell's wrong verdicts."""
    return f"{c.wrong.k}/{verdicts} {interval_cell(c.wrong)}"


def at_words(c: SweepCell) -> str:
    """Where a sweep cell lies, in words: ``"renormalised, absolute t = 1e-7"``; tolerance 0 has no kind."""
    return f"{c.test}, t = 0" if c.tolerance == 0 else f"{c.test}, {c.kind} t = {tolerance_label(c.tolerance)}"


def listing(items: list[str]) -> str:
    """``"a, b and c"``.

    >>> listing(["0", "1e-12", "1e-9"]), listing(["x"])
    ('0, 1e-12 and 1e-9', 'x')
    """
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def sweep_macros(part: Part, word: str, sw: FloatSweep) -> None:
    """One model's macros (word W, precision P): ``\\WFloatPNearTies`` ("k/n"; P as the float table's: ``\\MiniLMFloatThreeTwoNearTies``), ``...NearTiesInterval``,
    ``\\WFloatPEqualityBestWrong`` (the == tests' fewest wrong over the sweep, "k/n [lo, hi]") and
    ``...EqualityBestAt`` (its test and tolerance in words), ``\\WFloatPTolerance...Wrong`` per test
    X and kind at the largest tolerance, ``\\WFloatPConditionWrongNear`` (of the condition's errors at
    tolerance 0, those within rounding of a tie), ``\\WFloatPNearTiesEqual`` (of the verdicts within rounding
    of a tie, the exact equalities) and ``\\WStrictSlackBelowTolerance`` (the exact strict verdicts with
    slack at most t, for each t > 0, as words)."""
    below = [t for t in TOLERANCES if t > 0]
    part.macro(f"{listing([str(sw.slack_below[t]) for t in below])} at t = {listing([tolerance_label(t) for t in below])}",
               word, "strict slack below tolerance")
    for dt in PRECISIONS:
        near = sw.near[dt]
        part.macro(str(sw.near_equal[dt]), word, dt, "near ties equal")
        part.macro(f"{near.k}/{sw.verdicts}", word, dt, "near ties")
        part.macro(interval_cell(near), word, dt, "near ties interval")
        best = sw.best(EQUALITY_TESTS, dt)
        part.macro(wrong_cell(best, sw.verdicts), word, dt, "equality best wrong")
        part.macro(at_words(best), word, dt, "equality best at")
        part.macro(f"{sw.condition_wrong_near[dt]}/{sw.condition_wrong[dt]}", word, dt, "condition wrong near")
        for test in EQUALITY_TESTS + ("condition",):
            for kind in KINDS:
                part.macro(wrong_cell(sw.cell(test, dt, kind, TOLERANCES[-1]), sw.verdicts), word, dt, test,
                           kind, "largest wrong")


def sweep_part(part: Part, found: Findings) -> None:
    """The data table ``trained-float-sweep``, the table ``trained-float-ties``, the macros of every
    model with a sweep (:func:`sweep_macros`), ``\\FloatSweepTolerances`` and ``\\FloatSweepLargest``,
    and the guards ``FloatConditionErrorsNearTies`` (every error of the condition in floats at
    tolerance 0, every model and precision, lies within rounding of a tie) and ``FloatSweepZeroAgrees``
    (at tolerance 0 the sweep gives every stored verdict back)."""
    models = {n: m for n, m in found.models.items() if m.findings.sweep is not None}
    for name, m in models.items():
        sweep_macros(part, MODELS.get(name, name), m.findings.sweep)
    part.macro(listing([tolerance_label(t) for t in TOLERANCES]), "float sweep tolerances")
    part.macro(tolerance_label(TOLERANCES[-1]), "float sweep largest")
    errs = [(name, dt, m.findings.sweep.condition_wrong_near[dt], m.findings.sweep.condition_wrong[dt])
            for name, m in models.items() for dt in PRECISIONS]
    part.guard(bool(errs) and all(k == n for _, _, k, n in errs), "float condition errors near ties",
               detail=", ".join(f"{SHORT.get(n, n)} {dt}: {k} of {e} errors within rounding" for n, dt, k, e in errs))
    part.guard(bool(models) and all(m.findings.sweep.zero_agrees for m in models.values()), "float sweep zero agrees",
               detail=", ".join(f"{SHORT.get(n, n)}: {'agrees' if m.findings.sweep.zero_agrees else 'differs'}"
                                for n, m in models.items()))
    camps = tuple(m.campaign for m in models.values())
    by = {TITLES.get(n, n): m.findings for n, m in models.items()}
    prov = ("campaigns " + ", ".join(camps) + "; the floats each float verdict decides by, stored beside it "
            "(numerics.dobrushin.float_tests.values), a tolerance applied by numerics.dobrushin.float_tests.at_tolerance, "
            "the ties by numerics.dobrushin.float_tests.near_tie")
    made: dict[str, Any] = dict(campaigns=camps, command=part.commands[0])
    part.tables.append(Table("trained-float-sweep", frame(sweep_rows(by), SWEEP_COLUMNS),
                             SWEEP_CAPTION.format(of="of the measured models", cluster=CLUSTER_NOTE), prov,
                             keys=4, **made))
    part.tables.append(Table("trained-float-ties", frame(ties_rows(by), TIES_COLUMNS),
                             TIES_CAPTION.format(of="of the measured models", cluster=CLUSTER_NOTE), prov, **made))
