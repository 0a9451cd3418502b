"""The trained-model tables as rows of cells, rendered from the findings
(:mod:`verification.trained.findings.model`): D1 per layer and token set, rollout, the comparison
bounds, the sources beside random matrices, and the float tests against the exact verdicts; and
the cell formats they share with the paper part (a share ``k/n = s [lo, hi]``, an interval, a
median with its order-statistic interval).
"""
from __future__ import annotations

from typing import Any, Optional

from verification.findings import Estimate, Share
from verification.report.tables import ci_decimals
from verification.trained.findings.model import PRECISIONS, ModelFindings
from verification.trained.findings.records import VARIANTS
from verification.trained.findings.sweep import KINDS, TESTS, TOLERANCES

VARIANT_TITLES = {"all": "all tokens", "content": "content tokens", "nofirst": "first position dropped"}
CLUSTER_NOTE = ("Wilson intervals, the one interval of every share and count (0 and n included), on the effective "
                "number of verdicts: their number divided by the design effect of the inputs (the cluster-robust variance "
                "of the pooled share over the binomial one, at least 1; 1 where no input or every input has a hit in "
                "every verdict, as for independent verdicts)")
CLUSTER_SHORT = ("Wilson intervals on the effective number of verdicts, the design effect of the inputs taken out "
                 "(the methods section)")   # a typeset table's caption: the method in one line; the data tables say it in full
LOWEST_SHARE = "D1 tight, layer with the lowest share"      # the sources table's column: "layer l: k/n = ..."
FLOAT_COLUMNS = ["model", "float test", "D1 verdicts", "float32 wrong [95% CI]", "float32: violated",
                 "float32: tight missed", "float64 wrong [95% CI]", "float64: violated", "float64: tight missed"]
FLOAT_CAPTION = (
    "What a float test of D1 at tolerance 0 gets wrong depends on how the test is implemented. Every D1 "
    "verdict {of} on all tokens (each head and the head mean, every layer) decided "
    "exactly, against three float implementations of it, each in float32 and in float64 on the stored "
    "attention: as-stored (both sides computed from the stored floats; equal: tight, left smaller: holds, "
    "larger: violated), renormalised (the same after the rows are divided by their sum in that precision) "
    "and condition (the equality condition in floats: a pair maximising the float distance between two "
    "rows, tight if both self-dominance margins are nonnegative, else holds); and the constant answer "
    "'always tight' (its errors: the exact strict verdicts). 'violated': the float test shows the bound broken "
    "where exact arithmetic proves it holds; 'tight missed': an exact equality the float test calls strict or "
    "violated (95% intervals: {cluster}).")
"""The caption of the float-versus-exact table (``of``: whose verdicts; ``cluster``: :data:`CLUSTER_NOTE`)."""


def interval_text(lo: float, hi: float) -> str:
    """``[lo, hi]`` with two decimals, or, where the upper end is below 0.005 (two decimals would print
    [0.00, 0.00], an interval that hides its width), one significant digit; where two decimals would
    print both ends alike, the decimals its half-width needs (:func:`verification.report.tables.ci_decimals`).

    >>> interval_text(0.4312, 0.4571), interval_text(1.9e-05, 0.0006), interval_text(0.0104, 0.0146)
    ('[0.43, 0.46]', '[2e-05, 0.0006]', '[0.0104, 0.0146]')
    """
    if hi < 0.005:
        return f"[{lo:.1g}, {hi:.1g}]"
    if f"{lo:.2f}" == f"{hi:.2f}":               # [0.01, 0.01] would hide the width too: the digits it needs
        d = ci_decimals(lo, hi)
        return f"[{lo:.{d}f}, {hi:.{d}f}]"
    return f"[{lo:.2f}, {hi:.2f}]"


def share_cell(s: Share) -> str:
    """``k/n = s [lo, hi]``, "-" for n = 0; a share a theorem forces, ``n/n = 1 (forced)``, no interval.

    >>> share_cell(Share.wilson(3, 10)), share_cell(Share.forced_share(12))
    ('3/10 = 0.30 [0.11, 0.60]', '12/12 = 1 (forced)')
    """
    if s.forced:
        return f"{s.k}/{s.n} = 1 (forced)"
    return "-" if s.n == 0 else f"{s.k}/{s.n} = {s.value:.2f} {interval_text(s.lo, s.hi)}"


def interval_cell(s: Optional[Share]) -> str:
    """``[lo, hi]`` of a share (:func:`interval_text`), "-" without one (None, or n = 0), "forced"
    for a share a theorem forces (no interval)."""
    if s is not None and s.forced:
        return "forced"
    return "-" if s is None or not s.n else interval_text(s.lo, s.hi)


def value_interval(s: Share) -> str:
    """``s [lo, hi]`` (:func:`ratio`, :func:`interval_cell`); ``1 (forced)`` alone for a forced share.

    >>> value_interval(Share.wilson(3, 10)), value_interval(Share.forced_share(5))
    ('0.30 [0.11, 0.60]', '1 (forced)')
    """
    return ratio(s) if s.forced else f"{ratio(s)} {interval_cell(s)}"


def count_cell(s: Share) -> str:
    """``k/n``, "-" for n = 0."""
    return f"{s.k}/{s.n}" if s.n else "-"


def ratio(s: Share) -> str:
    """The share with two decimals, "-" for n = 0, "1 (forced)" for a share a theorem forces."""
    if s.forced:
        return "1 (forced)"
    return f"{s.value:.2f}" if s.n else "-"


def median_cell(e: Optional[Estimate]) -> str:
    """``median [lo, hi]`` (three significant digits), the median alone without an interval (fewer than
    six values: no order-statistic interval reaches 95%), "-" without values."""
    if e is None:
        return "-"
    return f"{e.value:.3g}" if not e.has_interval else f"{e.value:.3g} [{e.lo:.3g}, {e.hi:.3g}]"


def d1_table(f: ModelFindings) -> tuple[list, list]:
    """Per layer: D1 tight on the head mean per token set (Wilson), tight only through token 0, the median slack."""
    variants = f.variants
    cols = ["layer"] + [f"D1 tight, {VARIANT_TITLES[v]}" for v in variants]
    cols += [f"tight only via token 0 ({v})" for v in variants]
    cols += [f"median slack [95% CI] ({v})" for v in variants]
    rows = []
    for l in f.sets["all"].layers:
        cells = [f.sets[v].layers.get(l) for v in variants]
        rows.append([l] + ["-" if c is None else share_cell(c.tight) for c in cells]
                    + ["-" if c is None else count_cell(c.via_first) for c in cells]
                    + ["-" if c is None else median_cell(c.slack) for c in cells])
    return rows, cols


def rollout_table(f: ModelFindings) -> tuple[list, list]:
    cols = ["layer", "median delta(A)", "median delta(R_l)", "median prod delta(Ahat)",
            "median prod (1+delta(A))/2", "median ratio R/prod [95% CI]", "ratio undecided",
            "median ratio prod/factor", "chain tight", "D2 step tight", "D2 undecided"]
    rows = [[r.layer, r.delta, r.rollout, r.product, r.factor_product, median_cell(r.ratio),
             f"{r.ratio_undecided.k}/{r.ratio_undecided.n}", r.factor_ratio, share_cell(r.chain_tight),
             share_cell(r.step_tight), f"{r.step_undecided.k}/{r.step_undecided.n}"] for r in f.rollout.values()]
    return rows, cols


def compare_table(f: ModelFindings) -> tuple[list, list]:
    cols = ["layer", "median delta(A)", "median (1+delta(A))/2", "median Birkhoff tau_B(A)",
            "tau_B finite (< 1)", "median mean-head softmax bound", "inputs with softmax bound"]
    rows = [[c.layer, c.delta, c.factor, c.birkhoff, f"{c.birkhoff_finite.k}/{c.birkhoff_finite.n}", c.softmax,
             f"{c.softmax_inputs.k}/{c.softmax_inputs.n}"] for c in f.compare.values()]
    return rows, cols


def heads_table(f: ModelFindings, variant: str) -> tuple[list, list]:
    """Per layer the share of inputs with D1 equality on each head (four decimals)."""
    sh = f.sets[variant].heads
    rows = [[l] + [None if x != x else round(float(x), 4) for x in sh[l]] for l in range(sh.shape[0])]
    return rows, ["layer"] + [f"h{h}" for h in range(sh.shape[1])]


def source_table(sources: tuple, families: tuple) -> tuple[list, list]:
    """Per source and pooled, per token set: inputs, median tokens, the D1 share (95% Wilson) in the
    layer where it is lowest, in the last layer, its range over the other layers, and beside them
    the share for random matrices of the same sizes (``sources``: :attr:`ModelFindings.sources`)."""
    cols = ["source", "token set", "inputs", "median tokens", LOWEST_SHARE, "D1 tight, last layer",
            "D1 tight, layers before last (range)"] + [f"random {fam}, matched n" for fam in families]
    rows = []
    for src in sources:
        if not src.present:
            continue
        for v in VARIANTS:
            s = src.sets.get(v)
            if s is None or not s.layers[0].n:
                continue
            inner = s.inner
            rows.append([src.name, VARIANT_TITLES[v], s.inputs, f"{s.tokens:g}",
                         f"layer {s.lowest}: {share_cell(s.layers[s.lowest])}", share_cell(s.layers[max(s.layers)]),
                         f"{min(inner):.2f}-{max(inner):.2f}" if inner else "-"]
                        + [share_cell(s.random[fam]) for fam in families])
    return rows, cols


def float_rows(by_model: dict[str, ModelFindings]) -> list[list]:
    """Per model (``{label: its findings}``) four rows, one per float test of D1 at tolerance 0 and the
    constant answer "always tight": the verdicts it gets wrong (95% interval over inputs), those it calls
    violated and the exact equalities it misses ("-" where the records lack a test)."""
    rows = []
    for label, f in by_model.items():
        for t in f.floats:
            row: list[Any] = [label, t.test, t.verdicts]
            for dt in PRECISIONS:
                c = t.precisions[dt]
                row += ["-"] * 3 if c is None else [f"{c.wrong.k}/{t.verdicts} {interval_cell(c.wrong)}", c.violated,
                                                    c.missed]
            rows.append(row)
    return rows



def tolerance_label(t: float) -> str:
    """A tolerance of the sweep as a column title.

    >>> [tolerance_label(t) for t in (0.0, 1e-12, 1e-5)]
    ['0', '1e-12', '1e-5']
    """
    return "0" if t == 0 else f"{t:.0e}".replace("e-0", "e-")


SWEEP_COLUMNS = (["model", "float test", "precision", "tolerance", "D1 verdicts"]
                 + [f"wrong, t = {tolerance_label(t)} [95% CI]" for t in TOLERANCES])
SWEEP_CAPTION = (
    "The float tests of D1 at a tolerance t: every D1 verdict {of} on all tokens (each head and the head mean, "
    "every layer) decided exactly, against each float implementation in float32 and in float64 at t = "
    + ", ".join(tolerance_label(t) for t in TOLERANCES) + ", absolute and relative. An == test says tight where its "
    "two sides differ by at most t (relative: t times the larger side), else holds where the left side is smaller "
    "and violated where it is larger; the condition says tight where its slack in floats (the closed form of D1's "
    "slack on the condition's floats) is at most t (relative: t times the bound), else holds. A verdict is wrong "
    "where it differs from the exact one; the wrong verdicts with 95% intervals ({cluster}). Read from the floats the "
    "records keep beside each float verdict, nothing recomputed; t = 0 gives the tolerance-0 verdicts back.")
"""The caption of the tolerance sweep (``of``: whose verdicts; ``cluster``: :data:`CLUSTER_NOTE`)."""


def sweep_rows(by_model: dict[str, ModelFindings]) -> list[list]:
    """Per model with a sweep (``{label: its findings}``), float test, precision and tolerance kind one
    row of :data:`SWEEP_COLUMNS`: the wrong verdicts at each tolerance, ``k [lo, hi]``."""
    rows = []
    for label, f in by_model.items():
        sw = f.sweep
        if sw is None:
            continue
        for test in TESTS:
            for dt in PRECISIONS:
                for kind in KINDS:
                    cells = [sw.cell(test, dt, kind, t).wrong for t in TOLERANCES]
                    rows.append([label, test, dt, kind, sw.verdicts] + [f"{c.k} {interval_cell(c)}" for c in cells])
    return rows


TIES_COLUMNS = (["model", "D1 verdicts"] + [c for dt in PRECISIONS for c in (
    f"{dt}: within rounding of a tie [95% CI]", f"{dt}: of them exact equalities", f"{dt}: condition wrong",
    f"{dt}: of them within rounding")] + [f"strict, exact slack at most {tolerance_label(t)}" for t in TOLERANCES if t > 0])
TIES_CAPTION = (
    "The verdicts within rounding of a tie {of}: in each precision, with r the number of tokens times the "
    "precision's unit roundoff (the rounding of a sum of that many terms), those where the float condition says "
    "strict with a slack below r times the bound, or says tight with a self-dominance margin of its pair below r "
    "times the pair's two entries, or with a pair not self-dominant by more than that whose distance lies within r "
    "times the two distances of the largest (all in that precision); beside them the verdicts the condition in "
    "floats gets wrong at tolerance 0, and of those the ones within rounding of a tie; and the exact strict verdicts "
    "whose exact slack is at most t, which a test at an absolute tolerance t calls tight up to rounding (95% "
    "intervals: {cluster}).")
"""The caption of the verdicts within rounding of a tie (``of``, ``cluster`` as :data:`SWEEP_CAPTION`'s)."""


def ties_rows(by_model: dict[str, ModelFindings]) -> list[list]:
    """Per model with a sweep one row of :data:`TIES_COLUMNS`."""
    rows = []
    for label, f in by_model.items():
        sw = f.sweep
        if sw is not None:
            rows.append([label, sw.verdicts] + [c for dt in PRECISIONS for c in (
                f"{sw.near[dt].k} {interval_cell(sw.near[dt])}", sw.near_equal[dt], sw.condition_wrong[dt],
                sw.condition_wrong_near[dt])] + [sw.slack_below[t] for t in TOLERANCES if t > 0])
    return rows
