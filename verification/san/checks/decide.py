"""The paper's claims decided from the stored run records (the ``san-claims`` campaign).

Every claim (:mod:`verification.san.checks.claims`) is tested with Student's t on its paired
differences over seed pairs (df = pairs - 1, :mod:`verification.stats`): a directional claim by the
two-sided t test (the sign of the mean says supported or refuted), an equivalence claim by two
one-sided tests (TOST) with a stated margin. The decision p-values of all claims of one run with at
least two seed pairs are Holm-adjusted together (family-wise level :data:`ALPHA`); a claim is
supported or refuted only below that level, else inconclusive, and each claim carries its minimum
detectable effect at the run's noise floor (power 0.8, at alpha / m, Holm's strictest step), so an
inconclusive outcome says how large an effect could hide. The claims are decided along every
numerical path of the run (the attention kernels of :data:`verification.san.checks.presets.KERNELS`);
an outcome that differs between the paths is reported inconclusive (machine robustness), and each
claim's record keeps every path's own statistic, p-values, intervals and outcome, the paths that
decided it and how far their statistics lie apart. Leave-one-seed-pair-out robustness is run only
with more than three seed pairs (:data:`LOO_MIN_PAIRS`; with three, a drop leaves one degree of
freedom and its outcomes say nothing). A diverged
run counts as having learnt nothing: its loss is the unigram entropy. A claim whose compared models
did not pass their gates (:mod:`verification.san.checks.gates`) is not testable.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from theory.verdicts import ALPHA  # the family-wise level of the claims of one run
from verification.san.checks.claims import catalogue
from verification.san.checks.gates import claim_gates, gate_text, path_gates, role_gates
from verification.san.checks.measures import (CONTENT, ROUTING, digest, growth_time, late_drift, late_share, loss,
                                              rank_at, summaries)
from verification.store import Record, outcome_record

CLAIMS_VERSION = "v8"     # bump when the claims' tests change: a new claims chunk, never a resume
PAIRS = ("params", "depth")
LOO_MIN_PAIRS = 4          # leave-one-seed-pair-out robustness: only with more than three seed pairs


def test(theorem: str, instance: str, values: list, direction: str = ">", margin: float | None = None,
         **extra: Any) -> dict:
    """One claim to decide: per-seed-pair ``values`` and either a ``direction`` ('>' or '<' than 0)
    or an equivalence ``margin`` (|mean| < margin)."""
    return dict(theorem=theorem, instance=instance, values=[float(v) for v in values], direction=direction,
                margin=margin, extra=extra)


def decide_family(tests: list[dict], alpha: float = ALPHA) -> list[dict]:
    """Each test with its t statistics, Holm-adjusted decision p-value, outcome and minimum detectable
    effect (see the module docstring). A test with fewer than two values is left out of the family.

    The family is the run's planned tests with two or more seed pairs: a test whose values show *no
    variation* (identical per-seed values, or equal up to rounding: :func:`verification.stats.no_variation`)
    stays in it with p = 1 and is never decided (``applicable`` False; the t test has no spread to
    work with). The decision p-value of a directional claim is the two-sided t test's; of an
    equivalence claim twice the smaller of TOST's p-value and its opposite's (either direction may
    be decided), so its MDE is TOST's at the same doubled level, alpha / (2 m), as the decision
    uses. ``interval_adjusted``: the interval at the Bonferroni level 1 - alpha / m (simultaneous
    over the family; Holm's first step), printed beside the outcome; ``interval`` is unadjusted."""
    from verification.stats import holm, mde, paired_t, tost, tost_mde

    out = []
    for t in tests:
        r = paired_t(t["values"], alpha)
        d = dict(t, mean=r["mean"], sd=r["sd"], df=r["df"], n=r["n"], interval=r["interval"],
                 no_variation=bool(r["no_variation"]), applicable=not r["no_variation"] and not t.get("gate"))
        if t["margin"] is not None:
            e = tost(t["values"], t["margin"], alpha)
            d.update(p_support=e["p"], p_refute=e["p_outside"], test="TOST (two one-sided t tests), margin "
                     f"{t['margin']:g}", interval=e["interval"], level=1 - 2 * alpha)
        else:
            up, down = r["p_greater"], r["p_less"]
            d.update(p_support=up if t["direction"] == ">" else down, p_refute=down if t["direction"] == ">" else up,
                     test=f"two-sided paired t, df = {r['df']}", level=1 - alpha)
        d["p"] = min(1.0, 2 * min(d["p_support"], d["p_refute"])) if d["applicable"] else 1.0
        d["lean"] = "supported" if d["p_support"] <= d["p_refute"] else "refuted"
        out.append(d)
    family = [d for d in out if d["n"] >= 2]
    m = max(len(family), 1)
    for d, p in zip(family, holm([d["p"] for d in family])):
        d["p_holm"] = p
        if not d["applicable"]:
            d["mde"] = math.nan
        elif d["margin"] is not None:
            d["mde"] = tost_mde(d["sd"], d["n"], alpha / (2 * m))
        else:
            d["mde"] = mde(d["sd"], d["n"], alpha / m)
        adj = (tost(d["values"], d["margin"], alpha / (2 * m)) if d["margin"] is not None
               else paired_t(d["values"], alpha / m))["interval"]
        d["interval_adjusted"], d["level_adjusted"] = adj, 1 - alpha / m
    for d in out:
        d.setdefault("p_holm", 1.0)
        d.setdefault("mde", math.inf)
        d.setdefault("interval_adjusted", (-math.inf, math.inf))
        d.setdefault("level_adjusted", 1 - alpha)
        d["family"] = len(family)
        if d.get("gate"):                # the models compared have not learned: nothing to decide
            d["outcome"] = "not-testable"
        else:
            d["outcome"] = d["lean"] if d["n"] >= 2 and d["applicable"] and d["p_holm"] < alpha else "inconclusive"
    return out


def claim_tests(runs: list[dict]) -> tuple[list[dict], dict]:
    """The claims of one run (one numerical path) as tests, and what they were computed from."""
    from numerics.san.claims import noise_floor

    from verification.san.checks.runs import ROLES

    by = {(r["role"], r["seed"]): r for r in runs if r["role"] != "sweep"}
    # the roles this run trained (a preset may train fewer than all four: a claim about a role it did
    # not train has no values and is not testable, its gate naming the role)
    roles = tuple(role for role in ROLES if any(r == role for (r, _) in by))
    seeds = sorted({s for (_, s) in by if all((role, s) in by for role in roles)})
    L = {role: [loss(by[(role, s)]) for s in seeds] if role in roles else [] for role in ROLES}
    noise = noise_floor([L[role] for role in roles])
    gap = {k: [a - b for a, b in zip(L[f"san-{k}"], L["std"])] for k in ("depth", "flops", "params")}
    sweep = {(r["n_layer"], r["qk_norm"]): r for r in runs if r["role"] == "sweep"}
    claims = {c.key: c for c in catalogue(tuple({d for d, _ in sweep}))}

    def of(kind: str, instance: str, values: list, **extra: Any) -> dict:
        c = claims[(kind, instance)]
        note = {} if c.note is None else {"paper": c.note}
        return test(c.theorem, c.instance, values, "<" if c.direction == "<" else ">", c.margin, **note, **extra)

    tests = [of("gap", "depth", gap["depth"], unit="nats/byte"),
             of("gap", "flops", gap["flops"], unit="nats/byte"),
             of("gap", "params", gap["params"], unit="nats/byte"),
             of("gap", "reduction", [a - b for a, b in zip(gap["depth"], gap["params"])], unit="nats/byte",
                share_closed=_ratio(gap["depth"], gap["params"])),
             of("gap", "flops-between", [a - b for a, b in zip(gap["depth"], gap["flops"])], unit="nats/byte")]
    for pair in PAIRS:
        san = f"san-{pair}"
        pair_seeds = seeds if san in roles else []
        for kind in ("retrieval", "recall"):
            acc = {role: [by[(role, s)][f"{kind}_acc"] for s in pair_seeds] for role in ("std", san)}
            chance = {c: float(np.mean([by[(role, s)].get(f"{kind}_chance_{c}", math.nan) for role in ("std", san)
                                        for s in pair_seeds])) if pair_seeds else math.nan for c in ("copy", "majority")}
            tests.append(of("probes", f"{kind}-{pair}", [a - b for a, b in zip(acc[san], acc["std"])],
                            unit="accuracy", san=acc[san], std=acc["std"], chance_copy=chance["copy"],
                            chance_majority=chance["majority"]))
        ctx = len(by[("std", seeds[0])]["loss_by_pos"]) if seeds else 0
        k = max(1, ctx // 8)
        el = {role: [float(np.mean(by[(role, s)]["loss_by_pos"][:k]) - np.mean(by[(role, s)]["loss_by_pos"][ctx // 2:]))
                     for s in pair_seeds] for role in ("std", san)}
        tests.append(of("low_context", pair, [a - b for a, b in zip(el[san], el["std"])],
                        unit="nats/byte", early_positions=k, late_from=ctx // 2))
    # spectra: a per-seed value is the mean over the roles trained, of one seed
    share = {role: [late_share(by[(role, s)], CONTENT) - late_share(by[(role, s)], ROUTING) for s in seeds]
             for role in roles}
    tests.append(of("spectra", "routing-settles", [float(np.mean([share[r][i] for r in roles]))
                                                   for i in range(len(seeds))],
                    unit="share of final threshold rank", estimator="threshold rank"))
    drift = {role: [late_drift(by[(role, s)], "OV") - late_drift(by[(role, s)], "QK") for s in seeds] for role in roles}
    tests.append(of("spectra", "routing-settles-circuits", [float(np.mean([drift[r][i] for r in roles]))
                                                            for i in range(len(seeds))],
                    unit="relative drift", estimator="entropy rank of the per-head QK and OV circuits"))
    later = {role: [growth_time(by[(role, s)], ("W_V", "W_O")) - growth_time(by[(role, s)], ("W_Q", "W_K"))
                    for s in seeds] for role in roles}
    tests.append(of("spectra", "content-later", [float(np.mean([later[r][i] for r in roles]))
                                                 for i in range(len(seeds))],
                    unit="fraction of training", estimator="threshold rank, half-growth time"))
    wo = {role: [rank_at(by[(role, s)], ("W_O",), "threshold", "final") for s in seeds] if "san-depth" in roles else []
          for role in ("std", "san-depth")}
    tests.append(of("spectra", "rank-into-WO", [a - b for a, b in zip(wo["san-depth"], wo["std"])],
                    unit="threshold rank", estimator="threshold rank"))
    for depth in sorted({d for d, _ in sweep}):
        if (depth, False) in sweep and (depth, True) in sweep:
            a, b = sweep[(depth, False)], sweep[(depth, True)]
            tests.append(of("qk_norm", f"L{depth}", [loss(a) - loss(b)], unit="nats/byte",
                            diverged_without=a["diverged"], diverged_with=b["diverged"]))
    gates = role_gates(by, seeds, sweep)
    for t in tests:
        t["gates"] = claim_gates(claims[(t["theorem"].removeprefix("san.claim."), t["instance"])], gates, by, seeds)
        t["gate"] = gate_text(t["gates"])
    return tests, dict(seeds=seeds, noise=noise, gates=gates)


def _ratio(depth: list, params: list) -> float:
    """Share of the depth-matched gap closed at matched parameters, ratio of the means (descriptive)."""
    gd = float(np.mean(depth)) if depth else math.nan
    return (gd - float(np.mean(params))) / gd if depth and params and gd != 0 else math.nan


def _method(d: dict, alpha: float) -> str:
    return (f"{d['test']} on {d['n']} seed pair(s); Holm over {d['family']} claims at family-wise level "
            f"{alpha:g}; interval: unadjusted {d['level']:.0%} t interval (adjusted, Bonferroni "
            f"{d['level_adjusted']:.2%}: extra interval_adjusted)")


def claim_records(paths: dict, preset: str, seed: int, alpha: float = ALPHA) -> list[Record]:
    """Every claim outcome from the run summaries of each numerical path (``paths``: kernel -> runs,
    the primary path first): the primary path's statistic and interval, its outcome where every
    path decides the same, not testable where some path cannot test it (a model compared failed the
    gate there: that path's reason), else inconclusive."""
    decided, info, planned = {}, {}, {}
    for kernel, runs in paths.items():
        planned[kernel], info[kernel] = claim_tests(runs)
        decided[kernel] = decide_family(planned[kernel], alpha)
    primary = next(iter(paths))
    pairs = len(info[primary]["seeds"])
    drops = leave_one_out(planned[primary], pairs, alpha)
    recs = []
    for i, (d, gates) in enumerate(zip(decided[primary], path_gates(planned))):
        per_path = {k: decided[k][i]["outcome"] for k in decided}
        same = len(set(per_path.values())) == 1
        # a claim some path cannot test (a model of it failed the gate there) is not testable: the
        # reason is that path's; otherwise one that flips between the paths is inconclusive
        d = dict(d, gate=gate_text(gates))
        outcome = "not-testable" if gates else d["outcome"] if same else "inconclusive"
        finite = d["n"] >= 2 and all(math.isfinite(v) for v in d["interval"])
        prov = dict(preset=preset, seed=seed, seeds=info[primary]["seeds"], runs=len(paths[primary]),
                    paths=list(paths))
        adj = d["interval_adjusted"]
        extra = dict(d["extra"], values=d["values"], n=d["n"], df=d["df"], sd=d["sd"], p=d["p"], p_holm=d["p_holm"],
                     mde=d["mde"] if math.isfinite(d["mde"]) else None, family=d["family"], alpha=alpha,
                     applicable=d["applicable"], level=d["level"], level_adjusted=d["level_adjusted"],
                     interval_adjusted=[float(adj[0]), float(adj[1])] if all(map(math.isfinite, adj)) else None,
                     direction=d["direction"] if d["margin"] is None else "equivalence", margin=d["margin"],
                     noise=info[primary]["noise"], outcome_primary=d["outcome"], outcomes_by_path=per_path,
                     robust=same, statistic_by_path={k: decided[k][i]["mean"] for k in decided},
                     gate=d.get("gate"), no_variation=d["no_variation"], leave_one_out=pairs >= LOO_MIN_PAIRS,
                     **path_statistics({k: decided[k][i] for k in decided}))
        if d["outcome"] in ("supported", "refuted") and drops:
            kept = sum(o[i] == d["outcome"] for o in drops)
            extra.update(drops_kept=kept, drops=len(drops), fragile=2 * kept <= len(drops))
        method = _method(d, alpha) + ("" if same else "; the outcome differs between numerical paths: inconclusive")
        if d.get("gate"):
            method = f"not testable: {d['gate']}"
        elif d["n"] < 2:
            method = f"one seed: no degrees of freedom, no interval; outside the Holm family"
        elif not d["applicable"]:
            method = (f"no variation across the {d['n']} seed pairs (sd {d['sd']:.1g}, at or below the floor "
                      "verification.stats.SD_FLOOR of the values' scale): the t test is not applicable "
                      f"and decides nothing (p = 1 in the Holm family of {d['family']})")
        recs.append(outcome_record(d["theorem"], d["instance"], outcome, d["mean"],
                                   d["interval"] if finite else None, method, value=d["mean"], provenance=prov,
                                   extra=extra))
    return recs


def _bounded(iv: Any) -> list | None:
    return [float(iv[0]), float(iv[1])] if iv is not None and all(map(math.isfinite, iv)) else None


def path_statistics(by_path: dict) -> dict:
    """What each numerical path found for one claim (``by_path``: kernel -> its decided test, the
    primary path first): ``by_path`` (per path: mean paired difference, raw and Holm-adjusted p, the
    unadjusted and the Bonferroni-adjusted interval, its own outcome), ``decided_by`` (the paths
    whose own outcome is supported or refuted, in path order) and ``path_difference`` (the largest
    minus the smallest mean over the paths; None where a mean is not finite or there is one path).

    >>> d = dict(mean=0.25, p=0.004, p_holm=0.05, interval=(0.1, 0.4), interval_adjusted=(0.0, 0.5), outcome="inconclusive")
    >>> got = path_statistics({"sdpa": dict(d, outcome="supported"), "explicit": dict(d, mean=0.2)})
    >>> got["decided_by"], round(got["path_difference"], 3), got["by_path"]["explicit"]["outcome"]
    (['sdpa'], 0.05, 'inconclusive')
    """
    means = [float(d["mean"]) for d in by_path.values()]
    return dict(by_path={k: dict(statistic=float(d["mean"]), p=float(d["p"]), p_holm=float(d["p_holm"]),
                                 interval=_bounded(d["interval"]), interval_adjusted=_bounded(d["interval_adjusted"]),
                                 outcome=d["outcome"]) for k, d in by_path.items()},
                decided_by=[k for k, d in by_path.items() if d["outcome"] in ("supported", "refuted")],
                path_difference=max(means) - min(means) if len(means) > 1 and all(map(math.isfinite, means)) else None)


def leave_one_out(tests: list[dict], pairs: int, alpha: float = ALPHA) -> list[list[str]]:
    """Robustness of the outcomes: for each of the ``pairs`` seed pairs, the outcomes of every test of
    ``tests`` (:func:`claim_tests`: a test with one value per seed pair holds them in seed order)
    decided again without that pair's value, in their own Holm family; a test with another number of
    values (the one-seed QK-norm sweep) is kept whole. An outcome kept by at most half of the drops is
    *fragile*. Empty with :data:`LOO_MIN_PAIRS` - 1 = 3 seed pairs or fewer (a drop would leave one
    degree of freedom or none: its outcomes say nothing about robustness)."""
    if pairs < LOO_MIN_PAIRS:
        return []
    out = []
    for i in range(pairs):
        dropped = [dict(t, values=t["values"][:i] + t["values"][i + 1:]) if len(t["values"]) == pairs else t
                   for t in tests]
        out.append([d["outcome"] for d in decide_family(dropped, alpha)])
    return out


def claims_chunk(paths: dict) -> str:
    """The chunk holding the claims decided from the runs of ``paths`` (kernel -> runs; their
    digests) under this claims version: a report reads this chunk only, never claims left by other
    runs or versions."""
    return f"claims-{CLAIMS_VERSION}-" + "-".join(f"{k}{digest(r)}" for k, r in paths.items())


def claims_campaign(primary: str) -> str:
    """The claims campaign of the runs campaign ``primary`` (the primary numerical path's), named by
    the claims version too: a store whose claims an older version decided gets a new campaign beside
    the old one (a claim record is keyed by campaign, theorem and instance, so a new chunk in the old
    campaign would take the old chunk's records and leave it short of its mark).

    >>> claims_campaign("san-v5:quick:3a65d2f9:s0") == f"san-claims-{CLAIMS_VERSION}-v5:quick:3a65d2f9:s0"
    True
    """
    return primary.replace("san-", f"san-claims-{CLAIMS_VERSION}-", 1)


def path_runs(store: Any, campaigns: dict) -> dict:
    """kernel -> the run summaries of its campaign, for the campaigns (kernel -> name) with runs."""
    out = {k: summaries(store, c) for k, c in campaigns.items()}
    return {k: r for k, r in out.items() if r}


def run_claims(store: Any, campaigns: dict, preset: str, seed: int, console: Any = None) -> str:
    """Decide the claims from the campaigns of every numerical path (kernel -> campaign, the primary
    first); returns the claims campaign's name."""
    from verification import campaign as C

    paths = path_runs(store, campaigns)
    name = claims_campaign(next(iter(campaigns.values())))
    C.run(store, name, [C.Chunk(claims_chunk(paths), claim_records, (paths, preset, seed))],
          console=console, description=f"SAN {preset}: claims")
    return name
