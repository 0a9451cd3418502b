"""The reproduction report's typeset tables, from the findings: the claims (the report's first
table), what each numerical path found per claim (its statistic, Holm-adjusted p and own outcome,
which paths decided, how far apart they lie), the power analysis beside the seed pairs the preset
has, and the identity checks (what a proved theorem forces, checked on the trained models: checks of
the implementation, never claims or findings).
"""
from __future__ import annotations

import math
from typing import Any

from verification.paper.notation.san import BONFERRONI_LEVEL
from verification.report.part import Table
from verification.san.checks.gates import GateKind, kinds
from verification.san.findings import ClaimFinding, Findings, IdentityCheck
from verification.san.report.tables import PATH_NAMES, needs, paths_found

GATE_SHORT = {GateKind.UNTRAINED: "roles not trained here", GateKind.TRAINING: "training gate failed",
              GateKind.CONTROL: "positive control failed", GateKind.CEILING: "probe at ceiling for both roles"}


def _num(x: Any, spec: str) -> str:
    return f"{float(x):{spec}}" if isinstance(x, (int, float)) and math.isfinite(x) else "-"


def claim_label(c: ClaimFinding) -> str:
    """A claim's short name in the report's tables: its kind and instance."""
    return f"{c.claim.kind.replace('_', ' ')} ({c.claim.instance})"


def per_token(x: float) -> str:
    """An approximate nats-per-token figure as prose prints it: two decimals, or one significant digit
    where two decimals would print 0.00 (never "-0.00")."""
    x = float(x)
    return f"{x:.2f}" if abs(x) >= 0.005 else f"{x:.1g}"


def outcome_words(c: ClaimFinding) -> str:
    """A claim's outcome with the reason where the outcome alone would mislead: the numerical paths
    disagree (an interval may exclude 0 on one path and the outcome still be inconclusive), every seed
    pair gives the same value (not applicable), or the claim is not testable (which gate)."""
    if c.gates:
        return f"{c.outcome} ({GATE_SHORT[kinds(c.gates)[0]]})"
    if c.no_spread:
        return f"{c.outcome} (no spread: the t test does not apply)"
    found = paths_found(dict(c.outcomes_by_path))
    return f"{c.outcome} (the numerical paths differ: {found})" if found else c.outcome


def adjusted_level(claims: tuple[ClaimFinding, ...]) -> float:
    """The level of the Bonferroni-adjusted intervals, 1 - alpha / m over the Holm family of m claims
    (nan where no claim was in a family)."""
    sized = [c for c in claims if isinstance(c.family, int) and c.family > 0 and c.alpha is not None]
    return 1 - sized[0].alpha / sized[0].family if sized else math.nan


def report_claims(claims: tuple[ClaimFinding, ...], per_tok: dict, bytes_per_token: float, prov: str,
                  **made: Any) -> Table:
    """The reproduction report's first table: each claim of the SAN abstract in its words, its number,
    this suite's design, the statistic with its Bonferroni-adjusted interval (level 1 - alpha / m, the
    simultaneous level of the family; the decisions are Holm's step-down adjustment of the p-values)
    in nats per byte, and nats per token at the measured bytes per token of a stated tokenizer
    (``per_tok`` by claim), and the outcome after Holm."""
    from verification.report.part import claims_table
    from verification.report.tables import fmt_ci

    rows = []
    for c in claims:
        stat = float(c.statistic)
        here = f"{stat:.3g}"
        if c.interval_adjusted is not None and all(math.isfinite(x) for x in c.interval_adjusted):
            here = " ".join(fmt_ci(stat, float(c.interval_adjusted[0]), float(c.interval_adjusted[1])))
        here = f"{here} {c.unit}" if math.isfinite(stat) else "not measured"
        if math.isfinite(per_tok[c.claim.key]):     # nats/byte times the measured bytes per token
            here += f" (about {per_token(per_tok[c.claim.key])} nats/token)"
        if c.no_spread and math.isfinite(stat):
            here = f"{stat:.3g} {c.unit} on every seed pair (no spread)"
        rows.append([c.claim.words, c.claim.number, c.claim.design, here, outcome_words(c)])
    level = adjusted_level(claims)
    family = next((c.family for c in claims if isinstance(c.family, int) and c.family > 0), 0)
    at = (f"its Bonferroni-adjusted {level:.2%} interval (level {BONFERRONI_LEVEL} over the family of m = {family} "
          "claims)"
          if math.isfinite(level) else "its interval")
    return claims_table("san-report-claims", rows,
                        "The claims of Ndubuaku et al. (arXiv:2607.18363) tested at tiny scale: each in the "
                        f"abstract's words, its number, this suite's design, the mean paired difference with {at}, "
                        "and the outcome after Holm's step-down adjustment of the p-values; nats per token are the "
                        "suite's nats per byte times the measured bytes per token ("
                        + (f"{bytes_per_token:.2f}" if math.isfinite(bytes_per_token) else "not measured") + ") of the "
                        "MiniLM WordPiece tokenizer, a stated conversion, not the paper's tokenizer; a claim whose "
                        "models failed a gate is not testable.", prov, **made)


def decided_by(c: ClaimFinding) -> str:
    """Which numerical paths decided claim ``c`` on their own: both, one (then the rule that both must
    agree reports it inconclusive), or neither; "not testable" where a gate kept it from a test."""
    if c.gates:
        return "not testable"
    if not c.by_path:
        return "-"
    if len(c.by_path) == 1:
        return f"{PATH_NAMES.get(c.by_path[0].path, c.by_path[0].path)} path (the one run)" if c.decided_by else "no path"
    if len(c.decided_by) == len(c.by_path):
        return "both paths" if len(c.by_path) == 2 else "every path"
    if not c.decided_by:
        return "neither path"
    return " and ".join(f"{PATH_NAMES.get(k, k)}" for k in c.decided_by) + " path only"


def path_cell(c: ClaimFinding, path: str) -> str:
    """One path's finding for claim ``c``: mean paired difference, Holm-adjusted p, its own outcome."""
    s = next((s for s in c.by_path if s.path == path), None)
    if s is None:
        return "-"
    return f"{_num(s.statistic, '+.3g')}, p {_num(s.p_holm, '.2g')}: {s.outcome}"


def paths_report(f: Findings, prov: str, **made: Any) -> Table:
    """Per claim, what each numerical path found (mean paired difference, Holm-adjusted p, the outcome
    that path alone gives), which paths decided it, and the difference between the paths' means
    (largest minus smallest, the claim's units); the reported outcome needs every path to agree."""
    rows = [[claim_label(c)] + [path_cell(c, k) for k in f.paths] + [decided_by(c), _num(c.path_difference, ".2g"),
                                                                       c.outcome] for c in f.claims]
    cols = ["claim"] + [f"{PATH_NAMES.get(k, k)} path" for k in f.paths] + ["decided by", "difference", "reported"]
    return Table.from_rows("san-report-paths", rows, cols,
                           "What each numerical path found (the fused and the explicit attention kernel: the same "
                           "mathematics, other rounding): per claim, the mean paired difference (units as in "
                           "Table 1), its Holm-adjusted p and the outcome that path alone gives; which paths decide "
                           "the claim; the difference between the paths' means; and the outcome reported, which "
                           "needs every path to agree (a claim one path decides alone is reported inconclusive)",
                           prov, wrap=4, **made)


def power_report(f: Findings, prov: str, **made: Any) -> Table:
    """The power analysis, typeset: per claim, the mean and standard deviation of its paired
    differences over this run's seed pairs, the minimum detectable effect now, the seed pairs it was
    tested on beside what a test of it needs (:func:`verification.san.report.tables.needs`); the
    caption states the seed pairs the preset has."""
    rows = [[claim_label(c), _num(c.statistic, ".3g"), _num(c.sd, ".2g"), _num(c.mde, ".3g"),
             int(c.n) if isinstance(c.n, int) else 0, needs(c)] for c in f.claims]
    return Table.from_rows("san-power", rows, ["claim", "mean", "sd", "MDE now", "seed pairs here", "a test needs"],
                           f"What a test of each claim needs (the {f.settings.name} preset has {f.settings.seeds} seed "
                           "pairs): the mean and standard deviation of its paired differences over this run's seed "
                           "pairs (units as in Table 1), the minimum detectable effect now (power 0.8 at Holm's "
                           "strictest level), the seed pairs it was tested on, and the seed pairs a paired t test at "
                           "that level would need to detect the observed mean with power 0.8 at the measured spread "
                           "(for the equivalence claim, TOST at its margin), or what else it needs", prov, wrap=6,
                           **made)


def check_result(k: IdentityCheck) -> str:
    """An identity check's result in words: how many instances the exact check decides equal."""
    res = f"; largest float residual {k.float_residual:.1g}" if k.float_residual is not None else ""
    if k.checked == 0:
        return "nothing checked"
    if k.holds:
        return f"holds exactly on {k.passed} of {k.checked}{res}"
    return f"exact on {k.passed} of {k.checked}, the others undecided{res}"


def checks_report(f: Findings, prov: str, **made: Any) -> Table:
    """The identity checks (:attr:`~verification.san.findings.Findings.checks`): results a proved
    theorem forces, checked exactly on the trained models; checks of the implementation, not claims."""
    rows = [[k.name, k.theorem, check_result(k)] for k in f.checks]
    return Table.from_rows("san-checks", rows, ["identity check", "theorem", "result"],
                           "Identity checks, not findings: statements proved for every model (the registered "
                           "theorems), checked exactly on the trained decoders as checks of the implementation (a "
                           "failure would be a bug, never evidence about the paper's claims): "
                           + "; ".join(f"{k.name}: {k.what}, by {k.method}" for k in f.checks), prov, wrap=3, **made)
