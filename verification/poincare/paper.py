"""The Poincare family's part of the paper: estimated Poincare constants against their bounds, where
Villani's condition (the seed paper's route) fails, and the Langevin SDE, read from the stored
campaigns only (docs/theory.md section 4). Tables, macros and claims are rendered from the family's
findings (:func:`verification.poincare.findings.findings`); the tables are the very objects the
report writes (:mod:`verification.poincare.report.tables` and
:mod:`~verification.poincare.report.findings`), with the paper's columns picked by name, its name and
its caption; nothing is recomputed.

Tables ``poincare-bounds``, ``poincare-muckenhoupt`` (certified 1-D brackets), ``poincare-thresholds``,
``poincare-villani-boundary`` (lambda_V(beta) against the seed's hypothesis), ``poincare-metastable``,
``poincare-sde``, ``poincare-sde-loss`` (E_beta[L] - inf L against d/(2 beta)); figures
``poincare-villani-<family>`` (the outcomes around lambda_V(beta)) and ``poincare-constant-<family>``
(the C_P estimate and its bounds against lambda).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Optional, Sequence

from theory.errors import InvalidInput
from verification.paper.notation import poincare as notation
from verification.poincare.checks import LOSSES, Plan
from verification.poincare.checks.sde import sde_campaign, sde_chunks
from verification.poincare.checks.villani import map_campaign, map_chunks
from verification.poincare.findings import GAUSSIAN, Findings, Instance, MapPoint, findings
from verification.poincare.findings.claims import NOT_LOCATED, SDE_RULE, aggregate, quote
from verification.poincare.report.findings import (metastable_table, minimises_table, orders_table,
                                                   villani_boundary_table)
from verification.poincare.report.tables import (bounds_table, excess_outcome_text, muckenhoupt_table, provenance,
                                                 sde_loss_table, sde_table, thresholds_table)
from verification.report.part import Figure, MissingCampaign, Need, Part, Table, claims_table
from verification.report.tables import fmt

BOUND_COLS = ("family", "beta", "lambda", "C_P", "error", "BE/C_P", "BE verdict", "HS/C_P", "HS verdict",
              "Var/C_P", "quad/C_P", "eig_mp/C_P")
SDE_WORDS = {"rate": "rate", "mean_loss": "mean loss", "expected_loss": "loss excess"}
MARKERS = {"refuted": ("x", "tab:red"), "supported": ("o", "tab:green"), "inconclusive": ("s", "0.5")}


def latex(table: Table, name: str, caption: str, columns: Optional[Sequence[str]] = None) -> Table:
    """The paper's view of a report table: its ``columns`` (by name; default all), ``name`` and
    ``caption``, every number formatted as in the Markdown / CSV (verification.report.tables.fmt)."""
    view = table.select(list(columns or table.columns()), name=name, caption=caption)
    return replace(view, frame=view.formatted())


# figure titles: the loss families by name, not by their keys (numerics.poincare.losses)
FAMILY_TITLES = {"attn1": "scalar attention, one parameter", "attn2": "scalar attention, two parameters",
                 "lora2": "LoRA, two parameters", "gauss1": "Gaussian, one dimension", "attnfull": "full attention"}


def _villani_figure(points: Sequence[MapPoint], fam: str):
    pts = [(p.beta, p.lam, p.outcome) for p in points]
    lv: dict = {}
    for p in points:
        lv.setdefault(p.data_seed, {})[p.beta] = p.statistic

    def draw(ax: Any) -> None:
        for verdict, (marker, color) in MARKERS.items():
            sel = [(b, l) for b, l, v in pts if v == verdict]
            if sel:
                ax.scatter(*zip(*sel), marker=marker, color=color, s=14, label=verdict, zorder=3)
        for seed, curve in sorted(lv.items()):
            bs = sorted(curve)
            ax.plot(bs, [max(curve[b], 1e-4) for b in bs], "-", lw=0.8, color="0.3",
                    label=notation.LAMBDA_V_PER_SEED if seed == min(lv) else None)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(notation.BETA)
        ax.set_ylabel(notation.LAMBDA)
        ax.set_title(f"{FAMILY_TITLES.get(fam, fam)}: Villani's condition")
        ax.figure.set_size_inches(4.2, 3.4)        # the legend below the plot, never over the points
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False, handlelength=1.5)
    return draw


def _constant_figure(instances: Sequence[Instance], fam: str):
    betas = sorted({i.beta for i in instances})
    beta = betas[len(betas) // 2]
    sel = sorted((i for i in instances if i.beta == beta), key=lambda i: i.lam)
    x = [i.lam for i in sel]
    series = [(notation.C_P_ESTIMATE, "ko-", [i.C_P for i in sel]),
              (notation.GAUSSIAN_C, "k:", [i.gaussian_C for i in sel]),
              ("Bakry-Emery", "b^--", [i.be and i.be.bound for i in sel]),
              ("Holley-Stroock", "rs--", [i.hs and i.hs.bound for i in sel]),
              (notation.VAR_THETA_LOWER, "gv-.", [None if i.var_ratio is None else i.var_ratio * i.C_P for i in sel])]
    cap = 1e6 * max(i.C_P for i in sel)

    def draw(ax: Any) -> None:
        for label, style, ys in series:
            pts = [(a, b) for a, b in zip(x, ys) if b is not None and b < cap]
            if pts:
                ax.plot(*zip(*pts), style, ms=3, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(notation.LAMBDA)
        ax.set_ylabel("Poincaré constant")
        ax.set_title(notation.constant_title(FAMILY_TITLES.get(fam, fam), beta))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)   # beside
    return draw


def _share(k: int, n: int) -> str:
    return f"{k}/{n}"


def _bounds(part: Part, f: Findings, plan: Plan, cmd: str, prov: str) -> None:
    rows = f.instances
    if not rows:
        raise MissingCampaign(plan.campaign, cmd)
    part.macro(str(len(rows)), "Poincare instances")
    part.macro(_share(f.gaussian_tight.k, f.gaussian_tight.n), "Poincare Gaussian tight")
    part.macro(_share(f.gaussian_float_agrees.k, f.gaussian_float_agrees.n), "Poincare Gaussian float agrees")
    for verdict_of, word in ((lambda i: i.be and i.be.verdict, "BE"), (lambda i: i.hs and i.hs.verdict, "HS")):
        for fam in dict.fromkeys(i.family for i in rows):
            mine = [i for i in rows if i.family == fam]
            c = Counter(verdict_of(i) for i in mine)
            for verdict in ("holds", "tight", "undecided", "not-applicable"):
                part.macro(_share(c[verdict], len(mine)), "Poincare", word, fam, verdict)
        c = Counter(verdict_of(i) for i in rows)
        part.macro(str(c["violated"]), "Poincare", word, "violated")
        other = [i for i in rows if i.family not in GAUSSIAN]
        c = Counter(verdict_of(i) for i in other)
        for verdict in ("holds", "undecided", "not-applicable"):
            part.macro(_share(c[verdict], len(other)), "Poincare", word, "non Gaussian", verdict)
    part.macro(", ".join(f.hs_every_lambda()) or "none", "Poincare HS every lambda families")
    part.macro(", ".join(f.no_bound()) or "none", "Poincare no bound families")
    lin = [i.var_ratio for i in rows if i.family not in GAUSSIAN and i.var_ratio is not None]
    part.macro(fmt(min(lin)) if lin else "-", "Poincare Var ratio min")
    part.macro(fmt(max(lin)) if lin else "-", "Poincare Var ratio max")
    eig = [i.eig_ratio for i in rows if i.eig_ratio is not None]
    part.macro(fmt(min(eig)) if eig else "-", "Poincare eigenfunction ratio min")
    part.macro(_share(sum(i.collapsed for i in rows), len(rows)), "Poincare collapsed")
    refuted = [v for v in f.villani if v.outcome == "refuted"]
    part.macro(_share(len(refuted), len(f.villani)), "Poincare bounds grid Villani refuted")
    inst = {i.key: i for i in rows}
    rel = [inst[(v.family, v.beta, v.lam)].trunc_err / inst[(v.family, v.beta, v.lam)].C_P for v in refuted]
    part.macro(fmt(max(rel, default=None)), "Poincare window change max where refuted")
    brackets = f.brackets
    inside = sum(bool(b.inside) for b in brackets)
    part.macro(_share(inside, len(brackets)), "Poincare Muckenhoupt inside")
    part.guard(inside == len(brackets) > 0, "Poincare Muckenhoupt all inside",
               detail=f"{inside} of {len(brackets)} estimates inside their certified bracket")
    part.macro(str(sum(b.verdict == "violated" for b in brackets)), "Poincare Muckenhoupt violated")
    # Gaussians: the constant is known (1/(beta lambda)), so their bracket containing it is a check of the
    # bracket, not a measurement; the other families' estimates are what the brackets certify
    gauss = [b for b in brackets if b.family.startswith("gauss")]
    other = [b for b in brackets if not b.family.startswith("gauss")]
    part.macro(_share(sum(bool(b.inside) for b in gauss), len(gauss)), "Poincare Muckenhoupt inside gauss")
    part.macro(_share(sum(bool(b.inside) for b in other), len(other)), "Poincare Muckenhoupt inside other")
    part.macro(fmt(min((b.ratio for b in brackets), default=None)), "Poincare Muckenhoupt ratio min")
    part.macro(fmt(max((b.ratio for b in brackets), default=None)), "Poincare Muckenhoupt ratio max")
    part.tables += [
        latex(bounds_table(f, plan), "poincare-bounds", notation.BOUNDS_CAPTION, BOUND_COLS),
        latex(thresholds_table(f, plan), "poincare-thresholds", notation.THRESHOLDS_CAPTION),
        latex(muckenhoupt_table(f, plan), "poincare-muckenhoupt", notation.MUCKENHOUPT_CAPTION),
        latex(metastable_table(f, plan), "poincare-metastable", notation.METASTABLE_CAPTION)]
    for fam in dict.fromkeys(i.family for i in rows):
        mine = [i for i in rows if i.family == fam]
        if len({i.lam for i in mine}) >= 2:
            part.figures.append(Figure(f"poincare-constant-{fam}", _constant_figure(mine, fam),
                                       notation.constant_caption(fam), prov))


def _villani_boundary(part: Part, f: Findings, plan: Plan, cmd: str, prov: str) -> None:
    if not f.map_points:
        raise MissingCampaign(f.map_campaign, cmd)
    rows = f.boundaries
    for fam in dict.fromkeys(b.family for b in rows):
        mine = [b for b in rows if b.family == fam]
        cert = [b for b in mine if b.status == "certified"]
        positive = sum(b.certified_positive for b in mine)
        part.macro(_share(sum(b.fails for b in mine), len(mine)), "Villani fails somewhere", fam)
        part.macro(_share(positive, len(mine)), "Villani certified positive", fam)
        part.guard(positive > 0, "Villani fails below a certified threshold", fam,
                   detail=f"{positive} certified positive thresholds")
        part.macro(fmt(min(b.estimate for b in mine)), "Villani lambda V", fam, "min")
        part.macro(fmt(max(b.estimate for b in mine)), "Villani lambda V", fam, "max")
        part.macro(fmt(min((b.certified_lo for b in cert), default=None)), "Villani certified lo", fam, "min")
        part.macro(fmt(max((b.certified_lo for b in cert), default=None)), "Villani certified lo", fam, "max")
        part.macro(fmt(max((b.certified_hi - b.certified_lo for b in cert), default=None)), "Villani bracket width",
                   fam, "max")
        part.macro(str(len({b.data_seed for b in mine})), "Villani data seeds", fam)
        part.macro(", ".join(str(v) for v in sorted({b.data_seed for b in mine})), "Villani data seed list", fam)
        grid = [p for p in f.map_points if p.family == fam]
        part.macro(_share(sum(p.outcome == "refuted" for p in grid), len(grid)), "Villani refuted", fam)
    an = f.analytic
    part.macro(_share(sum(x.every_beta_refuted for x in an), len(an)), "Villani every beta refuted")
    part.macro(fmt(min((x.a for x in an if x.a is not None), default=None)), "Villani L two p star min")
    part.macro(fmt(max((x.A for x in an), default=None)), "Villani sup L two max")
    meet = [b[-1] for x in an for b in x.per_beta]
    part.macro(_share(sum(m is True for m in meet), len(meet)), "Villani brackets meet")
    part.guard(bool(meet) and all(m is True for m in meet), "Villani brackets meet all",
               detail=f"{sum(m is True for m in meet)} of {len(meet)} (data set, beta) brackets meet")
    if an:
        part.tables.append(latex(orders_table(f, plan), "poincare-villani-orders", notation.ORDERS_CAPTION,
                                 ("family", "data seed", "L''(p*) >= a", "sup L'' <= A",
                                  "every beta: lambda_V(beta) >= sqrt(2a/beta)", "beta large: holds when beta lambda^2 >",
                                  "brackets meet")))
    betas = sorted({b.beta for b in rows})
    part.macro(str(len(betas)), "Villani betas")
    part.macro(fmt(betas[0]), "Villani beta min")
    part.macro(fmt(betas[-1]), "Villani beta max")
    part.tables.append(latex(villani_boundary_table(f, plan), "poincare-villani-boundary",
                             notation.VILLANI_BOUNDARY_CAPTION,
                             ("family", "data seed", "beta", "lambda_V estimate", "certified lo", "certified hi",
                              "lambda_V is", "route fails for some lambda > 0")))
    for fam in dict.fromkeys(p.family for p in f.map_points):
        part.figures.append(Figure(f"poincare-villani-{fam}",
                                   _villani_figure([p for p in f.map_points if p.family == fam], fam),
                                   notation.villani_caption(fam), prov + f", {f.map_campaign}"))


def _sde(part: Part, f: Findings, plan: Plan, cmd: str) -> None:
    if not f.sde:
        raise MissingCampaign(f.sde_campaign, cmd)
    for kind, word in SDE_WORDS.items():    # every kind, so that a partial campaign shows its 0/0
        tally = f.sde_tally(kind)
        for outcome in ("supported", "refuted", "inconclusive"):
            part.macro(_share(tally.count(outcome), tally.total), "SDE", word, outcome)
    part.tables.append(latex(sde_table(f, plan), "poincare-sde",
                             "Langevin SDE (MALA): decay rate against 1/(beta C_P), E[L] against quadrature, "
                             "E_beta[L] - inf L against d/(2 beta); agreement by TOST at a margin of 10% of the "
                             "prediction (the excess: one-sided, at most d/(2 beta) plus 10%), 90% t intervals with "
                             "df = units - 1 (8 chain groups for the rate, one unit per chain otherwise)."))
    ms = f.minimisation
    part.macro(", ".join(m.outcome for m in ms) or "-", "SDE minimises F outcomes")
    part.macro(", ".join(fmt(m.beta) for m in ms) or "-", "SDE minimises F betas")
    part.macro(aggregate(m.outcome for m in ms), "SDE minimises F aggregate")
    part.macro(SDE_RULE, "SDE aggregation rule")
    part.macro(", ".join(f"{m.dist_end.mean:.4g} ± {3 * m.dist_end.se:.2g}" for m in ms) or "-",
               "SDE distance argmin F end")
    if ms:
        part.tables.append(latex(minimises_table(f, plan), "poincare-sde-minimises", notation.MINIMISES_CAPTION,
                                 ("family", "beta", "lambda", "E[F] - F_min", "lo", "hi", "d/(2 beta)",
                                  "E dist^2 to argmin F", "dist^2 hi", "tr(H^-1)/beta", "outcome")))
    xs = f.loss_excess
    part.macro(fmt(max((x.gap for x in xs), default=None)), "SDE regularisation gap")
    part.macro(", ".join(fmt(x.beta) for x in xs) or "-", "SDE loss excess betas")
    part.macro(", ".join(excess_outcome_text(x) for x in xs) or "-", "SDE loss excess outcomes")
    k_pred = sum(x.predicted for x in xs)
    part.macro(str(k_pred), "SDE loss excess predicted")
    part.macro(refutations_sentence(k_pred, sum(x.outcome == "refuted" for x in xs)),
               "SDE loss excess predicted sentence")
    part.macro(", ".join(f"{x.to_argmin[-1].mean:.4g} ± {3 * x.to_argmin[-1].se:.2g}" for x in xs) or "-",
               "SDE distance argmin L end")
    if not xs:                              # the campaign holds no expected-loss chunk (a partial run)
        return
    part.tables.append(latex(sde_loss_table(f, plan), "poincare-sde-loss",
                             "Does the SDE minimise the loss? E_beta[L] - inf L (inf L: best L-BFGS value, an upper "
                             "estimate) against the Laplace value d/(2 beta), the regularisation gap, and the chains' "
                             "distance to the minimisers of L found (an upper estimate of the distance to argmin L) at "
                             "the first, middle and last record time, mean +- 3 se.",
                             ("family", "beta", "lambda", "E[L] - inf L", "lo", "hi", "Laplace d/(2 beta)", "outcome",
                              "L(theta*_lambda) - inf L", "dist to argmin L, start", "dist to argmin L, end")))


def check_plan(plan: Plan) -> None:
    """``attnbounds paper --from "poincare ..."``: the Poincare part shows every family of the grid
    and the Langevin runs; a plan of fewer families or without them (``--no-sde``) is refused."""
    if tuple(plan.families) != LOSSES:
        raise InvalidInput(f"--families {','.join(plan.families)}: the paper's Poincare part shows every family "
                           f"({','.join(LOSSES)}); give no --families")
    if not plan.sde:
        raise InvalidInput("--no-sde: the paper's Poincare part shows the Langevin runs; drop --no-sde")


def needs(store: Any, plan: Plan) -> list[Need]:
    """The bounds, Villani-map and Langevin campaigns of ``plan`` (a
    :class:`verification.poincare.checks.Plan`) and their chunk keys, each filled by ``plan.command()``."""
    from verification.poincare.checks.bounds import plan_chunks

    cmd = plan.command()
    plans = {plan.campaign: plan_chunks(plan), map_campaign(plan): map_chunks(plan), sde_campaign(plan): sde_chunks(plan)}
    return [Need("poincare", name, frozenset(c.key for c in chunks), cmd) for name, chunks in plans.items()]


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables, figures and macros of the Poincare campaigns of ``plan`` (see the module docstring)."""
    cmd = plan.command()
    part = Part("poincare", commands=[cmd])
    prov = provenance(plan)
    f = findings(store, plan)
    missing = []
    for section in (lambda: _bounds(part, f, plan, cmd, prov),
                    lambda: _villani_boundary(part, f, plan, cmd, prov),
                    lambda: _sde(part, f, plan, cmd)):
        try:                               # every campaign looked up: all missing ones named
            section()
        except MissingCampaign as exc:
            missing.append(exc)
    if missing:
        raise MissingCampaign.combine(missing)
    loss_definitions(part)
    part.tables.insert(0, claims(f, prov, cmd))
    return part


def refutations_sentence(predicted: int, refuted: int) -> str:
    """How many of the SDE-loss refutations the regularisation gap predicts, in words that agree in
    number with the counts.

    >>> refutations_sentence(1, 1), refutations_sentence(2, 3), refutations_sentence(0, 0)
    ('the one refutation is of this kind', '2 of the 3 refutations are of this kind', 'there is no refutation')
    """
    if refuted == 0:
        return "there is no refutation"
    if refuted == 1:
        return "the one refutation is of this kind" if predicted else "the one refutation is not of this kind"
    return f"{predicted} of the {refuted} refutations {'is' if predicted == 1 else 'are'} of this kind"


def loss_definitions(part: Part) -> None:
    """Macros that define the losses attn1, attn2 and lora2 (model, data, activation) as the code
    computes them (:mod:`numerics.poincare.losses`): the sizes of each family and the defaults of
    the functions that draw its data, so that the report's definitions are the code's."""
    import inspect

    from numerics.poincare.losses import AttentionScalar, LoRADirectional, attention_data, lora_data

    attn, lora = AttentionScalar(dim=1), LoRADirectional()
    ad = {k: v.default for k, v in inspect.signature(attention_data).parameters.items()}
    ld = {k: v.default for k, v in inspect.signature(lora_data).parameters.items()}
    for name, value in (("attn n", attn.n), ("attn T", attn.T), ("attn d", attn.d), ("attn v zero", attn.v0),
                        ("attn s true", ad["s_true"]), ("attn v true", ad["v_true"]), ("attn noise", ad["noise"]),
                        ("lora n", lora.n), ("lora d", lora.d), ("lora h", lora.h), ("lora noise", ld["noise"]),
                        ("lora scale", ld["scale"])):
        part.macro(f"{value:g}", "Poincare", name)


def claims(f: Findings, prov: str, cmd: str) -> Table:
    """The reproduction report's first table: the claims of Frangi et al., in the paper's words only
    where its abstract (the one text of it in the seed) says them (:func:`verification.poincare.findings.claims.quote`
    checks each fragment at build time), else marked as the suite's paraphrase; what the paper states,
    with Villani's quantifier order; this suite's design, its number and the outcome (``f.claims``; for
    Villani's condition, the order the outcome is about)."""
    outcome = {c.key: c.outcome for c in f.claims}
    attn2 = [b for b in f.boundaries if b.family == "attn2"]
    an = [x for x in f.analytic if x.family == "lora2"]
    rate = f.sde_tally("rate")
    ms = f.minimisation
    poincare_words = ("for any mild regularization", "induce Poincaré inequality")
    rows = [
        [quote(poincare_words[0], "the empirical regression loss on a attention layer", poincare_words[1]),
         notation.paraphrased(notation.EVERY_LAMBDA_VILLANI, NOT_LOCATED), notation.ATTENTION_VILLANI_DESIGN,
         notation.attention_villani_result(_share(sum(b.fails for b in attn2), len(attn2)) if attn2 else '-',
                                           fmt(max(b.estimate for b in attn2)) if attn2 else '-'),
         notation.ordered(outcome["attention-villani"], "every beta")],
        [quote(poincare_words[0], "LoRA on a shallow neural net", poincare_words[1]),
         notation.EVERY_LAMBDA, notation.LORA_POINCARE_DESIGN,
         notation.lora_poincare_result(', '.join(f.hs_every_lambda()) or 'none'),
         outcome["lora-poincare"]],
        [notation.NOT_IN_ABSTRACT, notation.paraphrased(notation.ORDER_EVERY_BETA, NOT_LOCATED),
         notation.ORDERS_DESIGN,
         notation.every_beta_result(_share(sum(x.every_beta_refuted for x in an), len(an)) if an else '-',
                                    fmt(min((x.a for x in an if x.a is not None), default=None))),
         notation.ordered(outcome["lora-villani-every-beta"], "every beta")],
        [notation.NOT_IN_ABSTRACT, notation.paraphrased(notation.ORDER_BETA_LARGE, NOT_LOCATED),
         notation.ORDERS_DESIGN, notation.beta_large_result(fmt(max((x.A for x in an), default=None))),
         notation.ordered(outcome["lora-villani-beta-large"], "beta large")],
        [quote("a certain SDE, which mimics the SGD, minimizes the corresponding losses"),
         notation.SDE_TARGET, notation.sde_minimises_design(', '.join(fmt(m.beta) for m in ms) or '-'),
         ", ".join(m.outcome for m in ms) or "-", outcome["sde-minimises"]],
        [notation.NOT_IN_ABSTRACT, notation.paraphrased(notation.RATE_STATES, NOT_LOCATED), notation.RATE_DESIGN,
         f"supported {_share(rate.count('supported'), rate.total)}, refuted "
         f"{_share(rate.count('refuted'), rate.total)}, inconclusive {_share(rate.count('inconclusive'), rate.total)}",
         outcome["langevin-rate"]],
    ]
    return claims_table("poincare-claims", rows,
                        "The claims of Frangi et al. (arXiv:2605.07959) tested here: each in the paper's words "
                        "(its abstract, the one text of it available here; a statement it does not make is the "
                        "suite's paraphrase, its source theorem not located), what the paper states (for "
                        "Villani's condition, its quantifier order), this suite's design, its result and "
                        "the outcome (a statement proved here is marked holds (certified); for Villani's condition, "
                        "the order the outcome is about; the SDE's outcome aggregates its outcomes at each "
                        f"temperature by the rule: {SDE_RULE}).", prov, command=cmd)
