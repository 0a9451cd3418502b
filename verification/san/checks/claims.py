"""The paper's claims decided from the stored run records (the ``san-claims`` campaign).

Every claim is a direction tested with :func:`numerics.san.claims.decide_exact` on per-seed-pair
values against the seed-to-seed noise floor (:func:`numerics.san.claims.noise_floor` of the same
quantity over the runs of each role). A diverged run counts as having learnt nothing: its loss is
the unigram entropy. Claims (registry id, instance):

    san.claim.gap          depth / flops / params: L(SAN) - L(std) > 0 (paper: 0.47 / 0.26 / 0.006 nats)
                           params-closes: L(SAN depth-matched) - L(SAN params-matched) > 0
                           flops-between: L(SAN depth-matched) - L(SAN flops-matched) > 0
    san.claim.probes       retrieval-<pair>: acc(SAN) - acc(std) > 0;  recall-<pair>: < 0
    san.claim.low_context  <pair>: (gap on the first ctx/8 positions) - (gap on the last half) > 0
    san.claim.spectra      routing-settles: late rank growth share, content minus routing, > 0
                           content-gains: late threshold-rank growth of W_V, W_O > 0
                           rank-into-WO: threshold rank of W_O, SAN minus std at matched depth, > 0
    san.claim.qk_norm      L<d>: L(no QK-norm) - L(QK-norm) > 0 at depth d (one seed: noise floor only)
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np

from verification.store import Record, outcome_record

ROUTING, CONTENT = ("W_Q", "W_K", "QK"), ("W_V", "W_O", "OV")
CLAIMS_VERSION = "v2"     # v2: routing-settles-circuits
PAIRS = ("params", "depth")
PAPER = {"depth": "0.47 nats", "flops": "0.26 nats", "params": "0.006 nats", "params-closes": "0.47 -> 0.006",
         "flops-between": "0.47 > 0.26"}


def summaries(store: Any, campaign: str) -> list[dict]:
    """The run records of a SAN campaign: extra + seed, in store order."""
    out = []
    for r in store.records(campaign, theorem="san.claim.trainable"):
        out.append(dict(r["extra"], seed=r["provenance"]["seed"], verdict=r["verdict"]))
    return out


def digest(runs: list[dict]) -> str:
    keys = sorted((r["key"], r["val_loss"], r["diverged"]) for r in runs)
    return hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:12]


def loss(run: dict) -> float:
    v = run["val_loss"]
    return run["unigram"] if run["diverged"] or not math.isfinite(v) else v


def _rank(run: dict, names: tuple, estimator: str, where: str) -> float:
    """Mean over layers and ``names`` of one estimator at the early (second) or final checkpoint."""
    steps = sorted(run["spectra"], key=int)
    step = steps[-1] if where == "final" else steps[min(1, len(steps) - 1)]
    layers = run["spectra"][step]
    return float(np.mean([layer[n][estimator] for layer in layers for n in names if estimator in layer[n]]))


def late_share(run: dict, names: tuple) -> float:
    """Share of the final threshold rank gained after the early checkpoint (0: settled early)."""
    fin, early = _rank(run, names, "threshold", "final"), _rank(run, names, "threshold", "early")
    return (fin - early) / max(fin, 1.0)


def late_drift(run: dict, circuit: str) -> float:
    """Relative change of a circuit's entropy rank after the early checkpoint (0: settled early)."""
    fin, early = _rank(run, (circuit,), "entropy", "final"), _rank(run, (circuit,), "entropy", "early")
    return abs(fin - early) / max(fin, 1e-12)


def _record(theorem: str, instance: str, values: list, noise: float, direction: str, prov: dict, **extra) -> Record:
    from numerics.san.claims import decide_exact

    values = [float(v) for v in values]
    if not values or not math.isfinite(noise):
        return outcome_record(theorem, instance, "inconclusive", math.nan, None, "too few runs to decide",
                              provenance=prov, extra=dict(extra, values=values, noise=noise, direction=direction))
    d = decide_exact(values, noise, direction)
    return outcome_record(theorem, instance, d["outcome"], d["statistic"], d["interval"], d["method"],
                          value=d["statistic"], provenance=prov,
                          extra=dict(extra, values=values, noise=noise, direction=direction, n=d["n"]))


def claim_records(runs: list[dict], preset: str, seed: int) -> list[Record]:
    """Every claim outcome from the run summaries of one campaign."""
    from numerics.san.claims import noise_floor

    by = {(r["role"], r["seed"]): r for r in runs if r["role"] != "sweep"}
    roles = ("std", "san-depth", "san-flops", "san-params")
    seeds = sorted({s for (_, s) in by if all((role, s) in by for role in roles)})
    prov = dict(preset=preset, seed=seed, seeds=seeds, runs=len(runs))
    L = {role: [loss(by[(role, s)]) for s in seeds] for role in roles}
    noise = noise_floor([L[role] for role in roles])
    recs = []
    for kind in ("depth", "flops", "params"):
        gap = [a - b for a, b in zip(L[f"san-{kind}"], L["std"])]
        recs.append(_record("san.claim.gap", kind, gap, noise, ">", prov, paper=PAPER[kind], noise_kind="loss"))
    for name, other in (("params-closes", "san-params"), ("flops-between", "san-flops")):
        diff = [a - b for a, b in zip(L["san-depth"], L[other])]
        recs.append(_record("san.claim.gap", name, diff, noise, ">", prov, paper=PAPER[name], noise_kind="loss"))
    for pair in PAIRS:
        san = f"san-{pair}"
        for kind, direction in (("retrieval", ">"), ("recall", "<")):
            acc = {role: [by[(role, s)][f"{kind}_acc"] for s in seeds] for role in ("std", san)}
            n = [by[(role, s)][f"{kind}_n"] for role in ("std", san) for s in seeds]
            p = float(np.mean(acc["std"] + acc[san])) if seeds else 0.5
            binom = math.sqrt(2 * max(p * (1 - p), 0.25 / max(min(n, default=1), 1)) / max(min(n, default=1), 1))
            nz = max(noise_floor(list(acc.values())) if len(seeds) > 1 else 0.0, binom)
            recs.append(_record("san.claim.probes", f"{kind}-{pair}", [a - b for a, b in zip(acc[san], acc["std"])],
                                nz, direction, prov, noise_kind="seed-to-seed accuracy or binomial, larger",
                                san=acc[san], std=acc["std"]))
        ctx = len(by[("std", seeds[0])]["loss_by_pos"]) if seeds else 0
        k = max(1, ctx // 8)
        el = {role: [float(np.mean(by[(role, s)]["loss_by_pos"][:k]) - np.mean(by[(role, s)]["loss_by_pos"][ctx // 2:]))
                     for s in seeds] for role in ("std", san)}
        recs.append(_record("san.claim.low_context", pair, [a - b for a, b in zip(el[san], el["std"])],
                            noise_floor(list(el.values())), ">", prov, early_positions=k, late_from=ctx // 2))
    # spectra: every pair run; a per-seed value is a mean over the four roles, whose spread is half a
    # single run's (sigma / 2 = noise / (2 sqrt 2)): noise / 2 is the conservative round-up
    share = {role: [late_share(by[(role, s)], CONTENT) - late_share(by[(role, s)], ROUTING) for s in seeds]
             for role in roles}
    recs.append(_record("san.claim.spectra", "routing-settles", [float(np.mean([share[r][i] for r in roles]))
                                                                 for i in range(len(seeds))],
                        noise_floor(list(share.values())) / 2, ">", prov, estimator="threshold rank",
                        per_role={r: share[r] for r in roles}))
    drift = {role: [late_drift(by[(role, s)], "OV") - late_drift(by[(role, s)], "QK") for s in seeds] for role in roles}
    recs.append(_record("san.claim.spectra", "routing-settles-circuits", [float(np.mean([drift[r][i] for r in roles]))
                                                                          for i in range(len(seeds))],
                        noise_floor(list(drift.values())) / 2, ">", prov, estimator="entropy rank of the per-head "
                        "QK and OV circuits", per_role={r: drift[r] for r in roles}))
    grow = {role: [_rank(by[(role, s)], ("W_V", "W_O"), "threshold", "final")
                   - _rank(by[(role, s)], ("W_V", "W_O"), "threshold", "early") for s in seeds] for role in roles}
    recs.append(_record("san.claim.spectra", "content-gains", [float(np.mean([grow[r][i] for r in roles]))
                                                               for i in range(len(seeds))],
                        noise_floor(list(grow.values())) / 2, ">", prov, estimator="threshold rank"))
    wo = {role: [_rank(by[(role, s)], ("W_O",), "threshold", "final") for s in seeds] for role in ("std", "san-depth")}
    wv = {role: [_rank(by[(role, s)], ("W_V",), "threshold", "final") for s in seeds] for role in ("std", "san-depth")}
    recs.append(_record("san.claim.spectra", "rank-into-WO", [a - b for a, b in zip(wo["san-depth"], wo["std"])],
                        noise_floor(list(wo.values())), ">", prov, estimator="threshold rank",
                        W_V_difference=[a - b for a, b in zip(wv["san-depth"], wv["std"])]))
    sweep = {(r["n_layer"], r["qk_norm"]): r for r in runs if r["role"] == "sweep"}
    for depth in sorted({d for d, _ in sweep}):
        if (depth, False) in sweep and (depth, True) in sweep:
            a, b = sweep[(depth, False)], sweep[(depth, True)]
            recs.append(_record("san.claim.qk_norm", f"L{depth}", [loss(a) - loss(b)], noise, ">", prov,
                                diverged_without=a["diverged"], diverged_with=b["diverged"]))
    return recs


def claims_chunk(runs: list[dict]) -> str:
    """The chunk holding the claims decided from ``runs`` (their digest) under this claims version:
    a report reads this chunk only, never claims left by other runs or versions."""
    return f"claims-{CLAIMS_VERSION}-{digest(runs)}"


def run_claims(store: Any, campaign: str, preset: str, seed: int, console: Any = None) -> str:
    from verification import campaign as C

    runs = summaries(store, campaign)
    name = campaign.replace("san-", "san-claims-", 1)
    C.run(store, name, [C.Chunk(claims_chunk(runs), claim_records, (runs, preset, seed))],
          console=console, description=f"SAN {preset}: claims")
    return name
