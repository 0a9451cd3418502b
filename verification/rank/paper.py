"""The rank family's part of the paper: deficiency, achievability and recovery for the linear
surrogate, rank estimators, attention-native kernel recovery, GD students, the interpolation
ladder and the head ranks of the embedded models, rendered from the family's findings
(:mod:`verification.rank.findings`, the same values the report renders): the tables are those of
:mod:`verification.rank.report.linear`, :mod:`~verification.rank.report.attention` and
:mod:`~verification.rank.report.weights`, built once there; here they get the paper's names and
captions and, where the paper shows fewer columns, columns selected by name; the macros and the
claims table are written from the typed findings (:mod:`verification.rank.report.cells`).

Tables ``rank-linear-risk``, ``rank-gd-population``, ``rank-gd-data``, ``rank-estimators``,
``rank-estimators-summary``, ``rank-estimator-comparison``, ``rank-attention-recovery``, ``rank-attention-students``,
``rank-ladder``, ``rank-softmax-recovery``, ``rank-softmax-estimators``, ``rank-softmax-estimator-outcomes``,
``rank-weights``; figures ``rank-estimators`` (recovery rate against N) and
``rank-weights`` (effective rank / head dim by layer).
"""
from __future__ import annotations

from numerics.sources.embedded import EMBEDDED
from dataclasses import replace
from typing import Any, Optional, Sequence

from theory.errors import InvalidInput
from verification.paper.notation import rank as N
from verification.rank.checks import PARTS, Plan
from verification.rank.checks import attention as att
from verification.rank.checks import weights as rw
from verification.rank.checks.linear import linear_chunks
from verification.rank.findings import Findings, findings
from verification.rank.findings.claims import PRIMARY
from verification.rank.findings.linear import linear_campaigns
from verification.rank.report import attention as ar
from verification.rank.report import cells as C
from verification.rank.report import linear as rr
from verification.rank.report import weights as rwr
from verification.report.part import Figure, MissingCampaign, Need, Part, Table

MODEL_WORDS = {k: s.display.legend for k, s in EMBEDDED.items() if s.display is not None}   # legends
# the estimators as a figure names them (mathematics set as such; the terminal tables keep rr.ESTIMATOR_NAMES)
FIGURE_NAMES = {"energy_0.9": f"energy rank, {N.TAU_90}", "energy_0.99": f"energy rank, {N.TAU_99}",
                "entropy_round": f"entropy rank, {N.P_SIGMA_SQUARED}",
                "entropy_sigma_round": f"entropy rank, {N.P_SIGMA}",
                "threshold_median": "threshold, noise from the median", "threshold": "threshold, residual noise"}
ESTIMATOR_WORDS = {"energy_0.9": "energy ninety", "energy_0.99": "energy ninety nine", "entropy_round": "entropy",
                   "entropy_sigma_round": "entropy sigma", "threshold_median": "threshold median",
                   "threshold": "threshold"}


def _view(table: Table, name: str, caption: str, columns: Optional[Sequence[str]] = None,
          provenance: Optional[str] = None) -> Table:
    """The paper's rendering of a report table: its own name and caption, the ``columns`` named
    (all by default), every number formatted (:meth:`Table.formatted`)."""
    view = table.select(columns) if columns is not None else table
    return replace(view, name=name, caption=caption, frame=view.formatted(),
                   provenance=table.provenance if provenance is None else provenance)


def _rate(s: Any) -> str:
    return f"{s.value:.2f}" if s.n else "-"


def _estimator_curve(curves: tuple):
    def draw(ax: Any) -> None:
        from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

        for e, xs, ys in curves:
            ax.plot(list(xs), list(ys), "o-", ms=3, label=FIGURE_NAMES.get(e, rr.ESTIMATOR_NAMES[e]))
        ax.set_xscale("log")
        ticks = sorted({x for _, xs, _ in curves for x in xs})
        ax.xaxis.set_major_locator(FixedLocator(ticks))         # the N that were run, written plainly
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("$N$ inputs")
        ax.set_ylabel(f"share of draws\nrecovering {N.R_STAR}")
        # below the plot, never over the curves
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, frameon=False)
    return draw


def _weights_curve(curves: tuple):
    lines = [(f"{MODEL_WORDS.get(model, model)} {circuit.upper()}", list(xs), list(ys))
             for model, circuit, xs, ys in curves]

    def draw(ax: Any) -> None:
        for label, xs, ys in lines:
            ax.plot(xs, ys, "o-" if "QK" in label else "s--", ms=3, label=label)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("layer")
        ax.set_ylabel(f"mean {N.ENERGY_PER_DIM}")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, frameon=False)   # below, never over data
    return draw


def _require(store: Any, campaigns: Any, cmd: str) -> None:
    """Every one of ``campaigns`` has records in ``store``, else :class:`MissingCampaign` naming ``cmd``."""
    for campaign in campaigns:
        if not store.count(campaign):
            raise MissingCampaign(campaign, cmd)


def _linear(part: Part, found: Findings, family_plan: Any) -> None:
    f = found.linear
    plan = family_plan.linear
    r_star = plan.r_star
    prov = rr.linear_provenance(plan)
    part.macro(str(plan.n), "rank n")
    part.macro(str(r_star), "rank r star")
    part.macro(C.tally_share(f.deficiency, "holds", "tight"), "rank deficiency certified")
    part.macro(C.tally_share(f.achievability, "holds", "tight"), "rank achievability certified")
    part.macro(C.count(f.eym_agrees), "rank EYM agrees")
    part.macro(C.tally_share(f.identity, "tight"), "rank identity exact")
    part.macro(C.count(f.gd_population.share), "rank GD population recovered")
    for rel in ("below", "at", "above"):
        part.macro(C.count(f.gd_population_by[rel].share), "rank GD population recovered", rel)
    part.macro(C.count(f.data_passes), "rank GD data passes")
    part.macro(C.outcomes(f.data_ends), "rank GD data ends")
    claim = {c.key: c for c in found.claims}
    if "gd recovery" in claim:
        pc, w = claim["gd recovery"].evidence[0], claim["gd recovery"].evidence[0].worst.key
        for value, name in ((str(pc.supported), "conditions supported"), (str(len(pc.conditions)), "conditions"),
                            (f"{w[0]} spectrum, {w[1]} inputs, noise {w[2]:g}, init {w[3]:g}", "worst condition"),
                            (C.share_with_interval(pc.worst.share), "worst share"),
                            (claim["gd recovery"].decision.outcome, "outcome")):
            part.macro(value, "rank GD data", name)
    if "pre-training recovery" in claim:
        pre = claim["pre-training recovery"]
        part.macro(pre.decision.outcome, "rank pretraining primary outcome")
        b = pre.evidence[1]
        for value, name in ((rr.ESTIMATOR_NAMES[b.estimator], "best"), (str(b.family), "family"),
                            (C.estimate(b.estimate), "best adjusted"), (f"{b.p:.2g}", "best p"),
                            (b.outcome, "best outcome")) if b is not None else ():
            part.macro(value, "rank pretraining", name)
    part.macro(", ".join(f"{x:g}" for x in plan.data_inits), "rank GD data inits")
    part.macro(f"{f.data_span:.2f}" if f.data_span is not None else "-", "rank GD data span decades")
    part.macro(C.count(f.data_stays), "rank GD data stays")
    part.macro(f"{f.data_escape:g}", "rank GD data escape median")
    for e, o in f.estimator_outcomes.items():
        part.macro(_rate(o.share), "rank estimator", ESTIMATOR_WORDS[e], "share")
        part.macro(C.count(o.share), "rank estimator", ESTIMATOR_WORDS[e], "count")
    for o in f.comparison:
        part.macro(C.estimate(o.share), "rank estimator", ESTIMATOR_WORDS[o.estimator], "mean")
        part.macro(o.decision.outcome, "rank estimator", ESTIMATOR_WORDS[o.estimator], "outcome")
    part.macro(str(f.comparison[0].share.n if f.comparison else 0), "rank estimator units")
    part.macro(", ".join(rr.ESTIMATOR_NAMES[e] for e in f.best), "rank best estimator")
    part.macro(rr.ESTIMATOR_NAMES[f.winner] if f.winner else "none", "rank estimator winner")
    # the estimators' bias on a fixed noiseless spectrum: the definitions evaluated, not a measurement
    b = f.bias
    part.macro(", ".join(f"{x:g}" for x in b.spectrum), "rank bias spectrum")
    part.macro(str(len(b.spectrum)), "rank bias r star")
    part.macro(str(int(b.energy_90)), "rank bias energy ninety")
    part.macro(f"{float(b.entropy):.2f}", "rank bias entropy")
    part.macro(f"{float(b.entropy_sigma):.2f}", "rank bias entropy sigma")
    risk, gd_pop, gd_data, estimators, summary, comparison = rr.linear_tables(f, family_plan)
    part.tables += [
        _view(risk, "rank-linear-risk",
              f"Optimal rank-$r$ excess risk $R(r)$ per unit $d$ ($n={plan.n}$, {N.r_star_is(r_star)}): tail sum "
              f"certified in 60-digit intervals; deficiency ({N.R_BELOW}) and achievability ({N.R_ABOVE}) verdicts "
              "decided exactly."),
        _view(gd_pop, "rank-gd-population",
              f"Gradient descent on {N.UV_T}, population loss, {plan.gd_seeds} seeds per row: learned rank against "
              f"{N.MIN_R} (95% Wilson), risks per unit $d$."),
        _view(gd_data, "rank-gd-data",
              f"Gradient descent (full width) on finite noisy data from small initialisation: the rank along the "
              f"trajectory counted above the noise level (Gavish-Donoho threshold of the least-squares fit's entry "
              f"noise), whether and where it passes {N.R_STAR} and for how many decades of steps, and the rank it "
              f"ends at after {plan.gd_steps} steps (95% Wilson).",
              ["shape", "N", "noise", "init", "passes r* [95% CI]", "first step at r* (median)",
               "decades at r* (median)", "ends at r* [95% CI]", "final rank, 10x-init threshold (median)"]),
        _view(estimators, "rank-estimators",
              f"Pre-training recovery of {N.r_star_is(r_star)} from least-squares fits, {plan.est_seeds} draws per "
              "cell; BELOW: the teacher's smallest signal singular value lies under the noise edge (the true noise: a "
              "description of the design, given to no estimator); the last column lists the pairs that differ "
              "(McNemar's exact test, Holm across every pair of every cell)."),
        _view(summary, "rank-estimators-summary",
              f"Mean share of draws recovering {N.R_STAR} per estimator and spectrum shape: one unit per independent "
              "data draw (its noise levels averaged first), Wilson 95% interval at $n$ = draws."),
        _view(comparison, "rank-estimator-comparison",
              "The estimators given the same information (the fit's singular values), compared paired over the "
              "independent data draws: exact sign tests on the draws' differences, Holm across every pair; "
              "supported = significantly better than every other. The residual-noise threshold reads more "
              "than the spectrum and is not compared.")]
    part.figures.append(Figure("rank-estimators", _estimator_curve(f.curves),
                               f"Share of draws whose estimated rank equals {N.R_STAR}, against the number of "
                               "inputs $N$ (all shapes and noise levels).", prov))


def _attention(part: Part, found: Findings, plan: Any) -> None:
    f = found.attention
    ap = plan.attention
    part.macro(C.count(f.softmax_recovered.share), "rank softmax regression recovered")
    part.macro(C.count(f.fit_recovered), "rank softmax fit recovered")
    part.macro(f"{att.KERNEL_TOL:g}", "rank kernel tolerance")
    exact = f.exact
    part.macro(exact["exact/d3"].verdict if "exact/d3" in exact else "-", "rank linear exact verdict")
    unknown = exact.get("exact/d3/value-map-unknown")
    part.macro(unknown.verdict if unknown else "-", "rank linear exact unknown verdict")
    part.guard(bool(unknown and unknown.verdict == "tight"), "rank linear exact unknown holds",
               detail=f"verdict {unknown.verdict if unknown else 'absent'}")
    part.macro(str(ap.d), "rank attention d")
    part.macro(str(ap.r_star), "rank attention r star")
    part.macro(f"{exact['exact/inversion'].value:.1e}" if "exact/inversion" in exact else "-",
               "rank softmax inversion error")
    part.macro(C.count(f.linear_float_matches), "rank linear float rank matches")
    part.macro(C.tally_share(f.students_deficiency, "holds", "tight"), "rank students deficiency certified")
    for kind in ("linear", "softmax"):
        part.macro(C.count(f.reach_zero[kind].share), "rank students", kind, "reach zero")
    part.macro(C.count(f.ladder_equals.share), "rank ladder static equals r star")
    part.macro(C.count(f.ladder_misses), "rank ladder static misses")
    part.macro(C.count(f.ladder_static.share), "rank ladder static equals r star at zero")
    part.macro(C.count(f.ladder_mixed.share), "rank ladder static equals r star mixed")
    for vm, v in f.softmax.value_maps.items():
        part.macro(C.outcomes(v.regression), "rank softmax regression", vm)
        part.macro(C.outcomes(v.fit), "rank softmax fit", vm)
        part.macro(C.count(v.identifiability_failures), "rank softmax identifiability failures", vm)
        part.macro(C.count(v.converged), "rank softmax fit converged starts", vm)
    for o in f.softmax.decisions:
        word = ESTIMATOR_WORDS[{"entropy": "entropy_round", "entropy_sigma": "entropy_sigma_round"}.get(
            o.estimator, o.estimator)]
        part.macro(f"{o.share.k}/{o.share.n} [{o.share.lo:.2f}, {o.share.hi:.2f}]", "rank softmax estimator", word,
                   "share")
        part.macro(o.decision.outcome, "rank softmax estimator", word, "outcome")
    part.macro(str(f.softmax.teachers), "rank softmax estimator teachers")
    claim = {c.key: c for c in found.claims}
    for key in ("attention achievability", "attention recovery", "naive transfer fails", "robust estimator",
                "softmax identifiability"):
        if key in claim:
            part.macro(claim[key].decision.outcome, "rank claim", key, "outcome")
    if f.native:
        for role, by in f.native.items():
            for kind, c in by.items():
                part.macro(_clustered(c), "rank native", role, kind)
    if f.ladder_misses_by_teacher is not None:
        part.macro(_clustered(f.ladder_misses_by_teacher), "rank ladder misses by teacher")
    for vm, v in f.softmax.value_maps.items():
        part.macro(_clustered(v.regression_by_teacher), "rank softmax regression by teacher", vm)
        part.macro(_clustered(v.failures_where_regression_fails), "rank softmax identifiability where misses", vm)
    energy = next(d for d in f.softmax.decisions if d.estimator == "energy_0.9")
    part.macro(_clustered(energy.by_teacher), "rank softmax estimator energy ninety by teacher")
    part.macro(f"This design cannot decide it: {energy.decision.reason}." if energy.decision.reason else "",
               "rank softmax estimator reason")
    made = {t.name: t for t in ar.attention_tables(f, plan)}
    recovery, students, ladder, sm_recovery, sm_estimators, sm_outcomes = (made[k] for k in (
        "rank-attention-recovery", "rank-attention-students", "rank-ladder", "rank-softmax-recovery",
        "rank-softmax-estimators", "rank-softmax-estimator-outcomes"))
    if "rank-attention-native" in made:
        part.tables.append(_view(made["rank-attention-native"], "rank-attention-native", (
            f"Attention-native claims, intervals over the teachers: kernel rank {N.R_STAR} reaches zero risk "
            f"(achievability); kernel rank $d={ap.d}$ from init {att.NATIVE_INIT:g}, noiseless data, ends at {N.R_STAR} (recovery).")))
    part.tables += [
        _view(recovery, "rank-attention-recovery",
              f"Data-only recovery of the query-key kernel $W$ ({N.r_star_is(ap.r_star)}, $d={ap.d}$): a draw "
              f"recovers $W$ when the relative kernel error (up to scale and sign) is at most {att.KERNEL_TOL:g}; "
              f"'fit' is the nonlinear least-squares fit (softmax: of $W$ with the value map known, of $W$ and "
              f"{N.W_V} jointly with it unknown).",
              ["kind", "value map", "B", "beta", "T", "noise", ar.RECOVERED, "median kernel error",
               "fit: median kernel error", "outcomes"]),
        _view(students, "rank-attention-students",
              f"Kernel-rank-$r$ students trained by GD ({ap.steps} steps): linear {N.R_BELOW} certified against "
              f"the exact lower bound; {N.R_ABOVE} a claim (risk to zero with learned rank {N.R_STAR})."),
        _view(ladder, "rank-ladder",
              f"Interpolation ladder between a static mixer ({N.LAMBDA_STATIC}) and attention "
              f"({N.LAMBDA_ATTENTION}): the best static mixer's rank against {N.R_STAR}."),
        _view(sm_recovery, "rank-softmax-recovery",
              "Softmax kernel recovery by value map: the linearised regression against the nonlinear least-squares "
              f"fit ($W$ alone with {N.W_V} known; $W$ and {N.W_V} jointly with {N.W_V} unknown), converged starts "
              "by first-order optimality, identifiability failures (converged starts of equal cost, different "
              "kernels); the regression's share also over the teachers (the independent units).",
              ["value map", "draws", "regression recovers W [95% CI]", "fit recovers W [95% CI]",
               "fit: converged starts", "identifiability failures", "fit outcomes",
               "regression recovers W, over teachers [95% CI, method]"]),
        _view(sm_estimators, "rank-softmax-estimators",
              "Each estimator's rank of the recovered softmax kernels: share equal to "
              f"{N.r_star_is(ap.r_star, spaced=True)} (95% Wilson), per kernel source and value map."),
        _view(sm_outcomes, "rank-softmax-estimator-outcomes",
              "The claim that the energy effective rank is the robust estimator under softmax distortion, for every "
              "estimator: the teachers are the independent units (every setting and kernel source of a teacher a "
              "repeated measure); exact sign tests over the teachers on the difference of their shares, Holm "
              "across every pair at 0.05.")]


def _weights(part: Part, found: Findings, plan: Any) -> None:
    f = found.weights
    prov = f"campaign {rw.CAMPAIGN}; {rwr.SPECTRA}"
    for c in f.circuits:
        word = MODEL_WORDS.get(c.model, c.model)
        part.macro(f"{c.energy_99.mean / c.head_dim:.2f}", "rank", word, c.circuit, "energy per dim")
        part.macro(C.count(c.certified), "rank", word, c.circuit, "head rank check")
        part.macro(str(c.head_dim), "rank", word, "head dim")
    table = rwr.summary_table(f, prov, plan.part_command("weights"))
    part.tables.append(_view(table, "rank-weights",
                             "Effective ranks of per-head QK kernels and OV circuits of the embedded models "
                             "(smollm2: 4-bit GGUF dequantised, the quantised weights); the exact head-rank check "
                             f"({N.RANK_IS_DH}) is a check of the extraction, not a result, and is not shown.",
                             [c for c in table.columns() if c != "rank = dh certified"]))
    part.figures.append(Figure("rank-weights", _weights_curve(f.curves),
                               f"Mean energy effective rank ({N.TAU_99}) over heads, divided by the head "
                               "dimension, by layer.",
                               prov))


def check_plan(plan: Plan) -> None:
    """``attnbounds paper --from "rank ..."``: the rank part shows every part of the family
    (linear, attention, weights); a plan of fewer parts is refused."""
    if tuple(plan.parts) != PARTS:
        raise InvalidInput(f"--part {','.join(plan.parts)}: the paper's rank part shows every part "
                           f"({', '.join(PARTS)}); give no --part")


def needs(store: Any, plan: Plan) -> list[Need]:
    """The linear, attention and weights campaigns of ``plan`` (a :class:`verification.rank.checks.Plan`)
    and their chunk keys, each filled by ``plan.command()``."""
    cmd = plan.command()
    plans = {**linear_chunks(plan.linear), **att.attention_chunks(plan.attention, plan.seed),
             rw.CAMPAIGN: rw.weights_chunks()}
    return [Need("rank", name, frozenset(c.key for c in chunks), cmd) for name, chunks in plans.items()]


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables, figures and macros of the rank campaigns of ``plan`` (see the module docstring)."""
    cmd = plan.command()
    _require(store, [*linear_campaigns(plan.linear).values(), *att.campaigns(plan.attention, plan.seed),
                     rw.CAMPAIGN], cmd)
    found = findings(store, plan)
    part = Part("rank", commands=[cmd])
    _linear(part, found, plan)
    _attention(part, found, plan)
    _weights(part, found, plan)
    part.tables[0:0] = claims(found, cmd)
    return part


def _outcome(d: Any) -> str:
    """A claim's decision as the claims tables write it: a proved statement certified here is "holds
    (certified)"."""
    return "holds (certified)" if d.outcome == "holds" else d.outcome


def _clustered(c: Any) -> str:
    """A teacher-clustered share: pooled k/n, the mean of the teachers' shares with its interval and
    method, and the number of teachers."""
    if c is None or not c.clusters:
        return "-"
    tail = f", {c.inconclusive} inconclusive" if c.inconclusive else ""
    return f"{c.k}/{c.n}{tail}; {c.mean:.2f} [{c.lo:.2f}, {c.hi:.2f}] over {c.clusters} teachers ({c.method})"


def _per_condition(pc: Any) -> str:
    w, (shape, n, noise, init) = pc.worst, pc.worst.key
    return (f"{C.count(pc.pooled)} pooled; {pc.supported} of {len(pc.conditions)} conditions supported; worst "
            f"({shape}, $N = {n}$, noise {noise:g}, init {init:g}): {C.share_with_interval(w.share)}")


def _best(b: Any) -> str:
    return "none" if b is None else (f"best of {b.family}, {rr.ESTIMATOR_NAMES[b.estimator]}: "
                                     f"{C.estimate(b.estimate)} Bonferroni, $p$ = {b.p:.2g} corrected: {b.outcome}")


def _result(c: Any) -> str:
    """What this suite found for claim ``c``, from its evidence."""
    e = c.evidence
    return {
        "deficiency": lambda: f"positive on {C.count(e[0])} instances",
        "achievability": lambda: f"zero on {C.count(e[0])} instances",
        "attention deficiency": lambda: f"certified on {C.count(e[0])}",
        "linear exact recovery": lambda: f"verdict {e[0]}",
        "linear exact recovery without the value map": lambda: f"verdict {e[0]}",
        "gd recovery": lambda: _per_condition(e[0]),
        "pre-training recovery": lambda: f"{rr.ESTIMATOR_NAMES[PRIMARY]} (primary): {C.estimate(e[0])}; " + _best(e[1]),
        "naive transfer fails": lambda: f"static rank differs from {N.R_STAR}: {_clustered(e[0])}",
        "attention achievability": lambda: f"zero risk at kernel rank {N.R_STAR}: {_clustered(e[2])}",
        "attention recovery": lambda: f"kernel rank {N.R_STAR} learned: {_clustered(e[2])}",
        "robust estimator": lambda: f"energy 0.9 gives {N.R_STAR}: {_clustered(e[0])}",
        "softmax partial recovery": lambda: f"regression: {_clustered(e[0])}; fit (training): {C.outcomes(e[1])}",
        "softmax identifiability": lambda: f"failures among the regression's misses: {_clustered(e[0])}",
    }[c.key]()


CLAIMS = {
    "deficiency": (f"in a linear attention surrogate, the intrinsic rank {N.R_STAR} of the token-mixing operator is "
                   "a tight lower bound: any rank-deficient model incurs unavoidable excess risk", "proved",
                   f"Eckart-Young: optimal excess risk at every {N.R_BELOW}, certified in 60-digit intervals"),
    "achievability": (f"the bound is achievable at {N.R_STAR}", "proved",
                      f"Eckart-Young: the excess risk at {N.R_AT}, decided exactly"),
    "attention deficiency": ("under the attention-native rank the structure is restored (deficiency), linear "
                             "attention", "-",
                             f"kernel-rank-$r$ linear students below {N.R_STAR} against the exact lower bound"),
    "linear exact recovery": (f"{N.R_STAR} is exactly recoverable for linear QK attention", "-",
                              "noiseless data, value map known: the regression solved in rational arithmetic"),
    "linear exact recovery without the value map": (
        "... even without the value map", "-",
        f"value map unknown: the identified part of {N.THETA_UNKNOWN} solved exactly; the rank of its unfolding"),
    "gd recovery": ("gradient descent recovers this rank under standard low-rank implicit-bias assumptions", "-",
                    "noisy data, small init, rank above the noise level at the last step; decided per condition"),
    "pre-training recovery": (f"{N.R_STAR} is recoverable from data before training", "-",
                              "the paper's energy rank (primary) on least-squares fits; the best of five estimators, "
                              "corrected for the choice (exploratory)"),
    "naive transfer fails": ("a naive transfer fails ... a static weight kernel cannot summarize the input-conditioned "
                             "mixing", "-",
                             "interpolation ladder from a static mixer to attention: the best static mixer's rank "
                             f"against {N.R_STAR} once attention contributes ({N.LAMBDA_POSITIVE})"),
    "attention achievability": ("... (achievability ...), for linear and softmax attention", "-",
                                f"students of kernel rank {N.R_STAR} trained by gradient descent reach zero risk "
                                "(linear and softmax)"),
    "attention recovery": ("... (... and recovery), for linear and softmax attention", "-",
                           f"students of kernel rank $d$ from small init, noiseless data: learned kernel rank {N.R_STAR}"),
    "robust estimator": ("the energy effective rank is the estimator robust to softmax distortion", "-",
                         "teachers as units: exact sign tests over teachers, Holm across every pair of estimators"),
    "softmax partial recovery": ("softmax attention admits only partial pre-training recovery ...", "-",
                                 "value map unknown: the linearised regression (the one pre-training estimator here) "
                                 f"beside the joint nonlinear fit of $W$ and {N.W_V}, which is training a one-layer "
                                 "student"),
    "softmax identifiability": ("... due to nonlinear inversion and kernel-value identifiability effects", "-",
                                "converged fits of equal cost, different kernels (identifiability failures) in the "
                                "draws the regression misses"),
}
"""Per claim key (:mod:`verification.rank.findings.claims`): the claim in the paper's words, what the
paper states, this suite's design."""


def claims(found: Findings, cmd: str) -> list[Table]:
    """The reproduction report's first tables, from the typed claims of the findings: the theorems
    checked (``rank-theorems``: a check, never a finding) and the claims tested (``rank-claims``),
    each in the paper's words, this suite's design, its number and the outcome."""
    from verification.report.part import claims_table

    def rows(kind: str) -> list:
        return [[*CLAIMS[c.key], _result(c), _outcome(c.decision)] for c in found.claims if c.kind == kind]

    return [claims_table("rank-theorems", rows("theorem"),
                         "The statements of Yoon's Entropic Bound (arXiv:2607.23050) that are theorems (proved in "
                         "the paper, or by linear algebra), checked here on every instance in exact or certified "
                         "arithmetic: checks of this suite, not findings about the paper.",
                         f"campaigns of {cmd}", command=cmd),
            claims_table("rank-claims", rows("claim"),
                         "The claims of Yoon's Entropic Bound tested here: each in the paper's words, what the paper "
                         "states (its abstract quotes no numbers), this suite's design, its result and the outcome. A "
                         "claim that something happens in most draws is supported when its 95% interval lies above "
                         "one half, refuted when below; draws of a few teachers get intervals over the teachers "
                         "(the mean of the teachers' shares, a t interval with df = teachers $-$ 1, or the Wilson "
                         "interval over the teachers where their shares do not vary), a design with conditions is "
                         "decided in each, and the best of several estimators is corrected for the choice.",
                         f"campaigns of {cmd}", command=cmd)]
