"""The Dobrushin family's part of the paper: Theorems D1/D2 on random row-stochastic matrices,
read from the stored campaign only (:func:`verification.dobrushin.report.tally`; never recomputed),
and there only the chunks of the plan it is given (the main job's, or a user's through ``attnbounds
paper --from "dobrushin ..."``: other families or sizes stored in the same campaign are never read);
every command it prints is the plan's ``command()``.

Tables: ``dobrushin-d1-share`` and ``dobrushin-d2-share`` (share of instances with exact equality,
family x n), ``dobrushin-summary`` (per family: instances, ranges of the shares, smallest strict
slack, violated / undecided). Figures: ``dobrushin-d1-frequency``, ``dobrushin-d2-frequency``
(share against n with 95% Wilson bands). Macros: every share per family and n
(``\\DOneShareDirichletNTwo``), and the ranges the prose quotes.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from verification.dobrushin.checks import CHUNK, Plan
from verification.dobrushin.report import causal_table, min_slack, tally
from verification.report.part import Figure, MissingCampaign, Need, Part, Table
from verification.stats import wilson
from verification.report.tables import fmt

CONTINUOUS = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4")   # positive entries a.s.
ZEROS = ("sparse", "hard")                                                # exact zeros, not causal
LABELS = {"dirichlet": "Dirichlet(1)", "softmax-T0.25": "softmax T=0.25", "softmax-T1": "softmax T=1",
          "softmax-T4": "softmax T=4", "sparse": "sparse", "hard": "hard (one-hot rows)",
          "causal": "causal softmax"}


def needs(store: Any, plan: Plan) -> list[Need]:
    """The campaigns of ``plan`` (the main job's, or a user's: ``attnbounds paper --from "dobrushin
    ..."``) and every chunk of that plan (:meth:`Plan.chunks`), filled by ``plan.command()``."""
    cmd = plan.command()
    out = [Need("dobrushin", plan.campaign, frozenset(c.key for c in plan.chunks()), cmd)]
    if plan.causal_sizes():
        out.append(Need("dobrushin", plan.causal_campaign, frozenset(c.key for c in plan.causal_chunks()), cmd))
    return out


def share2(k: int, n: int) -> str:
    """A share as a fixed two-decimal string ("-" without instances)."""
    return f"{k / n:.2f}" if n else "-"


def _pivot(acc: dict, num: str, den: str) -> Any:
    import pandas as pd

    fams = list(dict.fromkeys(f for f, _ in acc))
    sizes = sorted({n for _, n in acc})
    rows = [[LABELS.get(f, f)] + [share2(acc[(f, n)][num], acc[(f, n)][den]) if (f, n) in acc else "-"
                                  for n in sizes] for f in fams]
    return pd.DataFrame(rows, columns=["family"] + [f"n={n}" for n in sizes])


def _range(acc: dict, fams: tuple, num: str, den: str, sizes=lambda n: True) -> tuple[str, str]:
    vals = [a[num] / a[den] for (f, n), a in acc.items() if f in fams and sizes(n) and a[den]]
    return (f"{min(vals):.2f}", f"{max(vals):.2f}") if vals else ("-", "-")


def _count(acc: dict, fams: tuple, num: str, den: str, sizes=lambda n: True) -> str:
    k = sum(a[num] for (f, n), a in acc.items() if f in fams and sizes(n))
    m = sum(a[den] for (f, n), a in acc.items() if f in fams and sizes(n))
    return f"{k}/{m}"


def _curve(acc: dict, num: str, den: str, ylabel: str):
    series = {}
    for (f, n), a in acc.items():
        if a[den]:
            lo, hi = wilson(a[num], a[den])
            series.setdefault(f, []).append((n, a[num] / a[den], lo, hi))

    def draw(ax: Any) -> None:
        for f, pts in series.items():
            xs = [p[0] for p in pts]
            line, = ax.plot(xs, [p[1] for p in pts], "o-", ms=3, lw=1, label=LABELS.get(f, f))
            ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], color=line.get_color(), alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("$n$ (tokens)")
        ax.set_ylabel(ylabel)
        # seven families: the legend goes beside the plot, the figure widened to the text width for it
        ax.figure.set_size_inches(5.0, 2.9)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    return draw


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables, figures and macros of ``plan``'s random-matrix campaign (see the module docstring):
    the main job's plan, or a user's (``--from``)."""
    import pandas as pd

    cmd = plan.command()
    # exactly the main job's chunks: a user's `attnbounds dobrushin --families ... --sizes ...` run
    # stores other families / sizes in the same campaign, which the paper never reads
    keys = {c.key for c in plan.chunks()}
    acc = tally(r for r in store.records(plan.campaign) if r["chunk"] in keys)
    if not acc:
        raise MissingCampaign(plan.campaign, cmd)
    part = Part("dobrushin", commands=[cmd])
    prov = (f"campaign {plan.campaign}; numpy default_rng seeded by SeedSequence([{plan.seed}, family, n, chunk]); "
            f"chunks of {CHUNK}; verdicts exact (Fraction), never by tolerance")

    for (f, n), a in acc.items():
        part.macro(share2(a["d1_eq"], a["d1"]), "D1 share", f, "n", n)
        part.macro(share2(a["d2_eq"], a["d2"]), "D2 share", f, "n", n)
    d1 = sum(a["d1"] for a in acc.values())
    d2 = sum(a["d2"] for a in acc.values())
    part.macro(str(d1), "D1 random instances")
    part.macro(str(d2), "D2 random pairs")
    part.macro(str(len({f for f, _ in acc})), "random families")
    sizes = sorted({n for _, n in acc})
    part.macro(str(min(sizes)), "random smallest n")
    part.macro(str(max(sizes)), "random largest n")
    part.macro(str(sum(a["viol"] for a in acc.values())), "random violated")
    part.macro(str(sum(a["und"] for a in acc.values())), "random undecided")
    part.macro(str(sum(a["d1_exact"] for a in acc.values())), "D1 random exact path")
    viol, und = sum(a["viol"] for a in acc.values()), sum(a["und"] for a in acc.values())
    # the prose's qualitative sentences (\Guard{Key}{...} in paper/sections/dobrushin.tex), checked here
    part.guard(viol == 0 and und == 0, "dobrushin no counterexample", detail=f"{viol} violated, {und} undecided")
    for name, fams, num, den, cond in (
            ("D1 continuous n two", CONTINUOUS, "d1_eq", "d1", lambda n: n == 2),
            ("D1 continuous", CONTINUOUS, "d1_eq", "d1", lambda n: n >= 3),
            ("D1 zeros", ZEROS, "d1_eq", "d1", lambda n: True),
            ("D1 zeros large", ZEROS, "d1_eq", "d1", lambda n: n >= 8),
            ("D2 zeros", ZEROS, "d2_eq", "d2", lambda n: n >= 3),
            ("D2 hard", ("hard",), "d2_eq", "d2", lambda n: n >= 3),
            ("D2 sparse", ("sparse",), "d2_eq", "d2", lambda n: n >= 3),
            ("D2 sparse large", ("sparse",), "d2_eq", "d2", lambda n: n >= 16),
            ("D2 causal", ("causal",), "d2_eq", "d2", lambda n: n >= 3),
            ("D2 causal large", ("causal",), "d2_eq", "d2", lambda n: n >= 8)):
        lo, hi = _range(acc, fams, num, den, cond)
        part.macro(lo, name, "min")
        part.macro(hi, name, "max")
    part.macro(_count(acc, ("causal",), "d1_eq", "d1"), "D1 causal tight")
    k, m = map(int, _count(acc, ("causal",), "d1_eq", "d1").split("/"))
    part.guard(k == m > 0, "dobrushin D1 causal always tight", detail=f"{k} of {m} causal instances tight")
    k, m = map(int, _count(acc, CONTINUOUS, "d2_eq", "d2", lambda n: n >= 3).split("/"))
    part.guard(k == 0, "dobrushin D2 continuous never tight", detail=f"{k} of {m} positive pairs with n >= 3 tight")
    lo = _range(acc, CONTINUOUS, "d1_eq", "d1", lambda n: n >= 3)[0]
    part.guard(lo != "-" and float(lo) >= 0.1, "dobrushin D1 tight not rare",
               detail=f"smallest share of tight positive matrices with n >= 3: {lo} (the sentence needs at least 0.10)")
    part.macro(_count(acc, tuple(LABELS), "d2_eq", "d2", lambda n: n == 2), "D2 n two tight")
    part.macro(_count(acc, CONTINUOUS, "d2_eq", "d2", lambda n: n >= 3), "D2 continuous tight")
    full_sizes = [n for n in sizes if n >= 8 and all(acc[(f, n)]["d1_eq"] == acc[(f, n)]["d1"]
                                                     for f in ZEROS if (f, n) in acc)]
    part.macro(str(len(full_sizes)), "D1 zeros sizes all tight")
    part.macro(str(len([n for n in sizes if n >= 8])), "sizes from eight")

    if plan.causal_sizes():
        _causal(part, store, plan, acc)
    part.tables.append(Table("dobrushin-d1-share", _pivot(acc, "d1_eq", "d1"),
                             r"Theorem D1, $\delta((I+A)/2) \le (1+\delta(A))/2$: share of random row-stochastic $A$ "
                             "with exact equality, per family and size $n$ (instances per cell: "
                             f"{min(a['d1'] for a in acc.values())} to {max(a['d1'] for a in acc.values())}).",
                             prov))
    part.tables.append(Table("dobrushin-d2-share", _pivot(acc, "d2_eq", "d2"),
                             r"Theorem D2, $\delta(PQ) \le \delta(P)\,\delta(Q)$: share of random pairs $(P, Q)$ of the "
                             "same family with exact equality, per family and size $n$.", prov))
    rows = []
    for f in dict.fromkeys(f for f, _ in acc):
        mine = {k: a for k, a in acc.items() if k[0] == f}
        slacks = [s for s in (min_slack(a) for a in mine.values()) if isinstance(s, float)]
        rows.append([LABELS.get(f, f), sum(a["d1"] for a in mine.values()),
                     "-".join(_range(mine, (f,), "d1_eq", "d1")), _count(mine, (f,), "d1_first", "d1"),
                     sum(a["d1_exact"] for a in mine.values()), sum(a["d2"] for a in mine.values()),
                     "-".join(_range(mine, (f,), "d2_eq", "d2")), fmt(min(slacks)) if slacks else "-",
                     sum(a["viol"] for a in mine.values()), sum(a["und"] for a in mine.values())])
    cols = ["family", "D1 instances", "D1 equality share (range over n)", "D1 tight only via token 0",
            "D1 decided on the exact path", "D2 pairs", "D2 equality share (range over n)",
            "smallest strict D1 slack", "violated", "undecided"]
    part.tables.append(Table("dobrushin-summary", pd.DataFrame(rows, columns=cols),
                             "Per family, over every size: instances, the range of the equality shares, how "
                             "many D1 verdicts needed the exact rational path, the smallest strict slack.", prov))
    part.figures.append(Figure("dobrushin-d1-frequency", _curve(acc, "d1_eq", "d1", "share with D1 equality"),
                               "Theorem D1 on random matrices: share of instances with exact equality against n "
                               "(95% Wilson bands).", prov))
    part.figures.append(Figure("dobrushin-d2-frequency", _curve(acc, "d2_eq", "d2", "share with D2 equality"),
                               "Theorem D2 on random pairs: share with exact equality against n (95% Wilson bands).",
                               prov))
    return part


CAUSAL_PAPER_COLUMNS = ["$n$", "tight (campaign)", r"predicted $\pi_n^2$", "binomial $p$ (Holm)",
                        "tight (check)", "verdicts predicted", "agreement"]


def _causal(part: Part, store: Any, plan: Plan, acc: dict) -> None:
    """The causal-D2 prediction (table ``dobrushin-causal-share``) and the numbers the prose quotes."""
    from verification.dobrushin.checks import CAUSAL_MARGIN

    table = causal_table(store, plan, acc)
    if not len(table.frame):
        raise MissingCampaign(plan.causal_campaign, plan.command())
    frame = table.frame.drop(columns=["pairs (campaign)", "pairs (check)"]).set_axis(CAUSAL_PAPER_COLUMNS, axis=1)
    frame["agreement"] = [v.split(" (")[0] for v in frame["agreement"]]
    pairs = ", ".join(sorted({str(v) for v in table.frame["pairs (campaign)"]}))
    check_pairs = ", ".join(sorted({str(v) for v in table.frame["pairs (check)"]}))
    part.tables.append(replace(
        table, frame=frame, caption=r"Causal D2: the share of tight pairs against the share the exact condition "
        r"predicts, $\pi_n^2$ with $\pi_n$ the probability that row 1 minimises $A_{l0}$ over $l \ge 1$ ($\pi_n$ "
        r"estimated on fresh draws; Wilson 95% interval, squared). The campaign's " + pairs + r" pairs per size "
        r"are tested against $\pi_n^2$ (exact binomial test, Holm across sizes); on " + check_pairs + r" independent "
        r"pairs per size, how many exact verdicts the condition predicts, and whether the two shares agree within "
        rf"{CAUSAL_MARGIN:g} (two one-sided tests)."))
    keys = {c.key for c in plan.causal_chunks()}
    check = {r["extra"]["n"]: r for r in store.records(plan.causal_campaign) if r["chunk"] in keys}
    for n in (3, 4, 5):              # the sizes the prose quotes ("-" where the plan has no such size)
        part.macro(f"{check[n]['extra']['predicted']:.3f}" if n in check else "-", "D2 causal predicted", "n", n)
    agrees = sum(r["extra"]["verdict_agrees"] for r in check.values())
    pairs = sum(r["extra"]["pairs"] for r in check.values())
    part.macro(f"{agrees}/{pairs}", "D2 causal verdicts predicted")
    supported = sum(r["verdict"] == "supported" for r in check.values())
    part.macro(f"{supported}/{len(check)}", "D2 causal shares agree")
    part.macro(f"{CAUSAL_MARGIN:g}", "D2 causal margin")
    part.macro(", ".join(map(str, sorted(check))), "D2 causal check sizes")
    part.guard(agrees == pairs > 0, "dobrushin D2 causal verdicts all predicted",
               detail=f"the condition predicts {agrees} of {pairs} exact verdicts")
    part.guard(supported == len(check) > 0, "dobrushin D2 causal shares agree",
               detail=f"{supported} of {len(check)} sizes with the shares shown equivalent")
