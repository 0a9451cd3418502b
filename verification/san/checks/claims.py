"""The paper's claims decided from the stored run records (the ``san-claims`` campaign).

Every claim is a statistic of paired differences over seed pairs (both members of a pair share the
seed and the data order), tested with Student's t (df = pairs - 1, :mod:`verification.stats`):
a directional claim by the two-sided t test (the sign of the mean says supported or refuted), an
equivalence claim by two one-sided tests (TOST) with a stated margin. The decision p-values of all
claims of one run with at least two seed pairs are Holm-adjusted together (family-wise level
:data:`ALPHA`); a claim is supported or refuted only below that level, else inconclusive, and each
claim carries its minimum detectable effect at the run's noise floor (power 0.8, at alpha / m,
Holm's strictest step), so an inconclusive outcome says how large an effect could hide. The claims
are decided along every numerical path of the run (the attention kernels of
:data:`verification.san.checks.presets.KERNELS`); an outcome that differs between the paths is
reported inconclusive (machine robustness). Losses are nats per *byte*; the paper's numbers are
nats per *token* of another tokeniser, so they are compared in direction only. A diverged run
counts as having learnt nothing: its loss is the unigram entropy. Claims (registry id, instance):

    san.claim.gap          depth / flops: L(SAN) - L(std) > 0 (paper: 0.47 / 0.26 nats per token)
                           params: |L(SAN) - L(std)| < MARGIN, TOST (paper: 0.006, "closes the gap")
                           reduction: gap(depth) - gap(params) > 0, the closing of the gap (0.47 -> 0.006)
                           flops-between: gap(depth) - gap(flops) > 0
    san.claim.probes       retrieval-<pair>: acc(SAN) - acc(std) > 0;  recall-<pair>: < 0
    san.claim.low_context  <pair>: (gap on the first ctx/8 positions) - (gap on the last half) > 0
    san.claim.spectra      routing-settles: late rank growth share, content minus routing, > 0
                           content-later: half-growth time of the threshold rank, W_V/W_O minus
                           W_Q/W_K (fractions of training), > 0: the paper's relative claim, routing
                           settles before content (every matrix gains rank from ~0 over training,
                           so "content ranks rise" alone is forced and is not tested)
                           rank-into-WO: threshold rank of W_O, SAN minus std at matched depth, > 0
    san.claim.qk_norm      L<d>: L(no QK-norm) - L(QK-norm) > 0 at depth d (one seed: no degrees of
                           freedom, so inconclusive and outside the Holm family)
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Optional

import numpy as np

from theory.verdicts import ALPHA  # the family-wise level of the claims of one run
from verification.store import Record, outcome_record
from verification.stats import binomial_p

ROUTING, CONTENT = ("W_Q", "W_K", "QK"), ("W_V", "W_O", "OV")
CLAIMS_VERSION = "v7"     # bump when the claims' tests change (paired t, Holm, TOST, MDE, numerical paths;
                          # v6: the bigram gate, roles a preset does not train, not testable on any path;
                          # v7: the positive control by exact binomial tests per seed;
                          # v4: no-variation rule, TOST MDE at the doubled level, adjusted intervals, drops;
                          # v5: content-later (half-growth times) replaces content-gains)
PAIRS = ("params", "depth")
MARGIN = 0.02             # nats per byte: the equivalence margin of "matched parameters close the gap"
# The training gate: a run has learned when its validation loss is below the bigram model's loss on the
# same validation windows (verification.san.checks.runs.bigram_validation): a model that uses no context
# beyond the previous byte reaches that; a comparison of models needs models that beat it.
PAPER = {"depth": "0.47 nats/token (direction only)", "flops": "0.26 nats/token (direction only)",
         "params": "0.006 nats/token (equivalence)", "reduction": "0.47 -> 0.006 nats/token (direction only)",
         "flops-between": "0.47 > 0.26 nats/token (direction only)"}


# the phrase each gate's reason carries (gate_reason, probe_control): the reports read which gate failed from it
GATE_PHRASES = {"untrained": "not trained by this preset", "gate": "training gate", "control": "positive control"}

RUN_ORDER = {"std": 0, "san-depth": 1, "san-flops": 2, "san-params": 3}


def summaries(store: Any, campaign: str) -> list[dict]:
    """The run records of a SAN campaign: extra + seed, in plan order (per seed the reference,
    then the matched runs; then the depth sweep by depth, without QK-norm first), never in the
    order a pool of workers happened to store them."""
    out = [dict(r["extra"], seed=r["provenance"]["seed"], verdict=r["verdict"])
           for r in store.records(campaign, theorem="san.claim.trainable")]
    return sorted(out, key=lambda r: (r["role"] == "sweep", r["seed"], RUN_ORDER.get(r["role"], len(RUN_ORDER)),
                                      r["n_layer"], bool(r["qk_norm"]), r["key"]))


def digest(runs: list[dict]) -> str:
    keys = sorted((r["key"], r["val_loss"], r["diverged"]) for r in runs)
    return hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:12]


def loss(run: dict) -> float:
    v = run["val_loss"]
    return run["unigram"] if run["diverged"] or not math.isfinite(v) else v


def _rank(run: dict, names: tuple, estimator: str, where: str) -> float:
    """Mean over layers and ``names`` of one estimator at the early (second) or final checkpoint, or
    at the checkpoint of step ``where``."""
    steps = sorted(run["spectra"], key=int)
    step = steps[-1] if where == "final" else steps[min(1, len(steps) - 1)] if where == "early" else where
    layers = run["spectra"][step]
    return float(np.mean([layer[n][estimator] for layer in layers for n in names if estimator in layer[n]]))


def late_share(run: dict, names: tuple) -> float:
    """Share of the final threshold rank gained after the early checkpoint (0: settled early)."""
    fin, early = _rank(run, names, "threshold", "final"), _rank(run, names, "threshold", "early")
    return (fin - early) / max(fin, 1.0)


def rank_path(run: dict, names: tuple, estimator: str = "threshold") -> list[tuple[float, float]]:
    """(fraction of training, mean rank over layers and ``names``) at initialisation (the run's
    ``spectra_init``) and at every checkpoint."""
    total = max(int(s) for s in run["spectra"])
    pts = [(0.0, float(np.mean([layer[n][estimator] for layer in run["spectra_init"] for n in names])))]
    for step in sorted(run["spectra"], key=int):
        pts.append((int(step) / total, _rank(run, names, estimator, step)))
    return pts


def growth_time(run: dict, names: tuple) -> float:
    """Half-growth time of the threshold rank of ``names``: the fraction of training at which the
    rank, linear between checkpoints, first reaches half-way from its initial to its final value (0
    when it does not grow: nothing to wait for)."""
    pts = rank_path(run, names)
    r0, r1 = pts[0][1], pts[-1][1]
    if not r1 > r0:
        return 0.0
    half = r0 + 0.5 * (r1 - r0)
    for (t0, a), (t1, b) in zip(pts, pts[1:]):
        if b >= half:
            return t0 + (t1 - t0) * ((half - a) / (b - a) if b != a else 1.0)
    return 1.0


def late_drift(run: dict, circuit: str) -> float:
    """Relative change of a circuit's entropy rank after the early checkpoint (0: settled early)."""
    fin, early = _rank(run, (circuit,), "entropy", "final"), _rank(run, (circuit,), "entropy", "early")
    return abs(fin - early) / max(fin, 1e-12)


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
                 applicable=not r["no_variation"] and not t.get("gate"))
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
    tests = [test("san.claim.gap", "depth", gap["depth"], paper=PAPER["depth"], unit="nats/byte"),
             test("san.claim.gap", "flops", gap["flops"], paper=PAPER["flops"], unit="nats/byte"),
             test("san.claim.gap", "params", gap["params"], margin=MARGIN, paper=PAPER["params"], unit="nats/byte"),
             test("san.claim.gap", "reduction", [a - b for a, b in zip(gap["depth"], gap["params"])],
                  paper=PAPER["reduction"], unit="nats/byte",
                  share_closed=_ratio(gap["depth"], gap["params"])),
             test("san.claim.gap", "flops-between", [a - b for a, b in zip(gap["depth"], gap["flops"])],
                  paper=PAPER["flops-between"], unit="nats/byte")]
    for pair in PAIRS:
        san = f"san-{pair}"
        pair_seeds = seeds if san in roles else []
        for kind, direction in (("retrieval", ">"), ("recall", "<")):
            acc = {role: [by[(role, s)][f"{kind}_acc"] for s in pair_seeds] for role in ("std", san)}
            chance = {c: float(np.mean([by[(role, s)].get(f"{kind}_chance_{c}", math.nan) for role in ("std", san)
                                        for s in pair_seeds])) if pair_seeds else math.nan for c in ("copy", "majority")}
            tests.append(test("san.claim.probes", f"{kind}-{pair}", [a - b for a, b in zip(acc[san], acc["std"])],
                              direction, unit="accuracy", san=acc[san], std=acc["std"], chance_copy=chance["copy"],
                              chance_majority=chance["majority"]))
        ctx = len(by[("std", seeds[0])]["loss_by_pos"]) if seeds else 0
        k = max(1, ctx // 8)
        el = {role: [float(np.mean(by[(role, s)]["loss_by_pos"][:k]) - np.mean(by[(role, s)]["loss_by_pos"][ctx // 2:]))
                     for s in pair_seeds] for role in ("std", san)}
        tests.append(test("san.claim.low_context", pair, [a - b for a, b in zip(el[san], el["std"])],
                          unit="nats/byte", early_positions=k, late_from=ctx // 2))
    # spectra: a per-seed value is the mean over the roles trained, of one seed
    share = {role: [late_share(by[(role, s)], CONTENT) - late_share(by[(role, s)], ROUTING) for s in seeds]
             for role in roles}
    tests.append(test("san.claim.spectra", "routing-settles", [float(np.mean([share[r][i] for r in roles]))
                                                               for i in range(len(seeds))],
                      unit="share of final threshold rank", estimator="threshold rank"))
    drift = {role: [late_drift(by[(role, s)], "OV") - late_drift(by[(role, s)], "QK") for s in seeds] for role in roles}
    tests.append(test("san.claim.spectra", "routing-settles-circuits", [float(np.mean([drift[r][i] for r in roles]))
                                                                        for i in range(len(seeds))],
                      unit="relative drift", estimator="entropy rank of the per-head QK and OV circuits"))
    later = {role: [growth_time(by[(role, s)], ("W_V", "W_O")) - growth_time(by[(role, s)], ("W_Q", "W_K"))
                    for s in seeds] for role in roles}
    tests.append(test("san.claim.spectra", "content-later", [float(np.mean([later[r][i] for r in roles]))
                                                             for i in range(len(seeds))],
                      unit="fraction of training", estimator="threshold rank, half-growth time"))
    wo = {role: [_rank(by[(role, s)], ("W_O",), "threshold", "final") for s in seeds] if "san-depth" in roles else []
          for role in ("std", "san-depth")}
    tests.append(test("san.claim.spectra", "rank-into-WO", [a - b for a, b in zip(wo["san-depth"], wo["std"])],
                      unit="threshold rank", estimator="threshold rank"))
    sweep = {(r["n_layer"], r["qk_norm"]): r for r in runs if r["role"] == "sweep"}
    for depth in sorted({d for d, _ in sweep}):
        if (depth, False) in sweep and (depth, True) in sweep:
            a, b = sweep[(depth, False)], sweep[(depth, True)]
            tests.append(test("san.claim.qk_norm", f"L{depth}", [loss(a) - loss(b)], unit="nats/byte",
                              diverged_without=a["diverged"], diverged_with=b["diverged"]))
    gates = role_gates(by, seeds, sweep)
    for t in tests:
        t["gate"] = gate_reason(t, gates, by, seeds)
    return tests, dict(seeds=seeds, noise=noise, gates=gates)


def learned(run: dict) -> bool:
    """The training gate of one run: finite, not diverged, and a validation loss below the bigram
    model's loss on the same validation windows (``bigram_val``: fitted on the training bytes,
    :func:`verification.san.checks.runs.bigram_validation`). A run stored without that number
    (an older campaign) has not shown that it learned."""
    v, bar = run.get("val_loss", math.nan), run.get("bigram_val")
    return (not run.get("diverged")) and bar is not None and math.isfinite(v) and v < bar


def role_gates(by: dict, seeds: list, sweep: dict) -> dict:
    """Per role: how many of its runs passed the training gate (:func:`learned`), of how many, and
    the worst validation loss; the sweep's runs by (depth, qk_norm) under ``sweep-L<d>[-qk]``."""
    from verification.san.checks.runs import ROLES

    out = {}
    for role in ROLES:
        rs = [by[(role, s)] for s in seeds if (role, s) in by]
        out[role] = dict(passed=sum(learned(r) for r in rs), runs=len(rs),
                         worst=max((loss(r) for r in rs), default=math.nan),
                         unigram=rs[0]["unigram"] if rs else math.nan,
                         bigram_val=rs[0].get("bigram_val", math.nan) if rs else math.nan)
    for (depth, qk), r in sweep.items():
        out[f"sweep-L{depth}{'-qk' if qk else ''}"] = dict(passed=int(learned(r)), runs=1, worst=loss(r),
                                                           unigram=r["unigram"],
                                                           bigram_val=r.get("bigram_val", math.nan))
    return out


def claim_roles(t: dict) -> tuple:
    """The runs a claim compares (roles; the QK-norm sweep's two runs at its depth)."""
    claim, inst = t["theorem"].removeprefix("san.claim."), t["instance"]
    if claim == "gap":
        return {"depth": ("std", "san-depth"), "flops": ("std", "san-flops"), "params": ("std", "san-params"),
                "reduction": ("std", "san-depth", "san-params"),
                "flops-between": ("std", "san-depth", "san-flops")}[inst]
    if claim == "probes":
        return ("std", f"san-{inst.split('-', 1)[1]}")
    if claim == "low_context":
        return ("std", f"san-{inst}")
    if claim == "spectra":
        return ("std", "san-depth") if inst == "rank-into-WO" else ("std", "san-depth", "san-flops", "san-params")
    if claim == "qk_norm":
        return (f"sweep-{inst}", f"sweep-{inst}-qk")
    return ()


def probe_control(kind: str, by: dict, seeds: list, alpha: float = ALPHA) -> Optional[str]:
    """The positive control of a probe: every seed's standard model must beat the probe's larger
    chance level (copy, majority), each by an exact one-sided binomial test of its hits among the
    probe's answers (``<kind>_acc`` x ``<kind>_n``), at ``alpha`` / seeds (Bonferroni over the seeds: a
    probe that some reference run cannot pass tests nothing). A seed-level t test would call a ceiling
    (every reference perfect: no variation) a failure. None when it passes, else the reason.

    >>> run = {"recall_acc": 1.0, "recall_n": 96, "recall_chance_copy": 0.1, "recall_chance_majority": 0.25}
    >>> probe_control("recall", {("std", 0): run, ("std", 1): run}, [0, 1]) is None
    True
    """
    rs = [by[("std", s)] for s in seeds if ("std", s) in by]
    if len(rs) < 2:
        return f"{GATE_PHRASES['control']}: the standard model's {kind} accuracy against chance needs two seeds"
    worst = None
    for r in rs:
        n = int(r.get(f"{kind}_n", 0) or 0)
        chance = max(r.get(f"{kind}_chance_copy", math.nan), r.get(f"{kind}_chance_majority", math.nan))
        acc = r.get(f"{kind}_acc", math.nan)
        if n < 1 or not (math.isfinite(chance) and math.isfinite(acc)):
            return f"{GATE_PHRASES['control']}: the standard model's {kind} answers or chance level are missing"
        hits = int(round(acc * n))
        p = (1.0 if chance >= 1 else float(hits == 0) if chance <= 0
             else binomial_p(hits, n, chance, "greater"))
        if worst is None or p > worst[0]:
            worst = (p, acc, chance, n)
    p, acc, chance, n = worst
    if p < alpha / len(rs):
        return None
    return (f"{GATE_PHRASES['control']} failed: a standard model's {kind} accuracy {acc:.3f} on {n} answers is not above "
            f"its chance level {chance:.3f} (one-sided exact binomial p {p:.2g}, Bonferroni over {len(rs)} seeds "
            f"at {alpha:g})")


def gate_reason(t: dict, gates: dict, by: dict, seeds: list) -> Optional[str]:
    """Why the claim ``t`` cannot be tested (None: it can): a compared role with a run that failed
    the training gate (which role, how many runs, the worst loss against the bigram model's), or,
    for a probe claim, the reference's failed positive control."""
    reasons = []
    for role in claim_roles(t):
        g = gates.get(role)
        if g is None or g["runs"] == 0:
            if t["theorem"] == "san.claim.spectra" and t["instance"] != "rank-into-WO":
                continue            # a mean over the roles trained: a role not trained is not in it
            reasons.append(f"{role}: {GATE_PHRASES['untrained']}")
        elif g["passed"] < g["runs"]:
            reasons.append(f"{role}: {g['runs'] - g['passed']} of {g['runs']} runs failed the {GATE_PHRASES['gate']} "
                           f"(worst validation loss {g['worst']:.3f} nats/byte, gate: below the bigram model's "
                           f"validation loss {g['bigram_val']:.3f})")
    if t["theorem"] == "san.claim.probes":
        why = probe_control(t["instance"].split("-", 1)[0], by, seeds)
        if why:
            reasons.append(why)
    return "; ".join(reasons) or None


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
    drops = leave_one_out(planned[primary], len(info[primary]["seeds"]), alpha)
    recs = []
    for i, d in enumerate(decided[primary]):
        per_path = {k: decided[k][i]["outcome"] for k in decided}
        same = len(set(per_path.values())) == 1
        # a claim some path cannot test (a model of it failed the gate there) is not testable: the
        # reason is that path's; otherwise one that flips between the paths is inconclusive
        untestable = next((k for k in decided if decided[k][i]["outcome"] == "not-testable"), None)
        if untestable is not None and not d.get("gate"):
            d = dict(d, gate=f"{untestable} path: {decided[untestable][i]['gate']}")
        outcome = "not-testable" if untestable is not None else d["outcome"] if same else "inconclusive"
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
                     gate=d.get("gate"))
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


def leave_one_out(tests: list[dict], pairs: int, alpha: float = ALPHA) -> list[list[str]]:
    """Robustness of the outcomes: for each of the ``pairs`` seed pairs, the outcomes of every test of
    ``tests`` (:func:`claim_tests`: a test with one value per seed pair holds them in seed order)
    decided again without that pair's value, in their own Holm family; a test with another number of
    values (the one-seed QK-norm sweep) is kept whole. An outcome kept by at most half of the drops is
    *fragile*. Empty with fewer than three seed pairs (a drop would leave no degrees of freedom)."""
    if pairs < 3:
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
    """The claims campaign of the runs campaign ``primary`` (the primary numerical path's)."""
    return primary.replace("san-", "san-claims-", 1)


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
