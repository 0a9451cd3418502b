"""The rollout chain under stress: Theorem D2 at every step of attention rollout.

An instance is a stack of L random attention layers A_1..A_L (one family of
:mod:`numerics.sources.random`), Ahat_l = (I + A_l)/2 (residual 0.5, as
:func:`numerics.dobrushin.rollout`), R_1 = Ahat_1 and R_l = Ahat_l R_{l-1}. Step l (2..L) checks
delta(R_l) <= delta(Ahat_l) delta(R_{l-1}) (Theorem D2, ``dobrushin.product``, with P = Ahat_l and
Q = R_{l-1}); step 1 is tight by definition (R_0 = I, delta(I) = 1).

Per chunk: the products R_l and all deltas in one batched pass per layer (no Python loop over
stacks; the deltas on the chunk's device through :func:`numerics.dobrushin.batch.deltas`), then
the **float filter** per step: with ``err`` a rigorous bound on the float error of the slack (the
error bounds of :func:`numerics.dobrushin.rollout_tightness`), slack > 64 err is strict (``holds``)
and slack < -err a violation. Only the stacks with a step the filter cannot decide go to the
**exact** path: :func:`numerics.dobrushin.rollout_tightness` on that stack (Fraction arithmetic,
complete budget), whose D2 verdicts must agree with the filter where both decide (else the bound
or the error analysis is wrong: ``violated``, a loud stop). A strict step whose float slack is
within err gets its exact slack (Fractions), whose sign then decides.

An instance's verdict is the worst of its steps (violated, undecided, holds, tight: tight only when
every step is); its slack the smallest strict step slack, its ``layer`` that step (1-based). The
chunk summary adds per step the verdict counts and the smallest slack.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from numerics.dobrushin import float_error, rollout_tightness
from numerics.stochastic import UNIT_ROUNDOFF, ExactMatrix
from theory.verdicts import Verdict
from verification.campaign import ChunkResult
from verification.store import Record
from verification.stress.checks.campaigns import chunk_key
from verification.stress.checks.plan import draw_stacks, provenance
from numerics.dobrushin.batch import HOLDS, NAMES, TIGHT, UNDECIDED, VIOLATED
from verification.stress.checks.summaries import keep, summarise
from numerics.dobrushin.batch import MARGIN, deltas, exact_delta, residual, row_dev

STORED_AS = "dobrushin.product"
CODE = {Verdict.HOLDS: HOLDS, Verdict.TIGHT: TIGHT, Verdict.UNDECIDED: UNDECIDED, Verdict.VIOLATED: VIOLATED}


def rollout_filter(A: np.ndarray, device: str = "cpu") -> dict[str, np.ndarray]:
    """Float pass over stacks A (B, L, n, n): per step (B, L) arrays value = delta(R_l),
    bound = delta(Ahat_l) delta(R_{l-1}) (delta(Ahat_1) at step 1), slack, err."""
    B, L, n, _ = A.shape
    H = residual(A)
    R = np.empty_like(H)
    R[:, 0] = H[:, 0]
    for l in range(1, L):                       # a loop over layers, each a batched matmul
        np.matmul(H[:, l], R[:, l - 1], out=R[:, l])
    dH, dR = (d.reshape(B, L) for d in deltas([H.reshape(-1, n, n), R.reshape(-1, n, n)], device))
    u = UNIT_ROUNDOFF
    dev = np.maximum(row_dev(A.reshape(-1, n, n)), row_dev(H.reshape(-1, n, n))).reshape(B, L).max(1)
    ent = dev + 4 * u                           # entry error of float Ahat against the exact factor
    eps_p = float_error(ent, n)[:, None]        # error of float delta(Ahat_l)
    gamma = (n + 2) * u * 1.01                  # one float product of stochastic matrices
    errR = n * np.arange(1, L + 1)[None, :] * (ent + gamma)[:, None] + 4 * (n + 4) * u
    prev_dR = np.concatenate([np.ones((B, 1)), dR[:, :-1]], axis=1)
    prev_err = np.concatenate([np.zeros((B, 1)), errR[:, :-1]], axis=1)
    bound = dH * prev_dR
    err = eps_p + prev_err + eps_p * prev_err + errR + 4 * u
    return {"value": dR, "bound": bound, "slack": bound - dR, "err": err}


def exact_step_slacks(stack: np.ndarray) -> list[Fraction]:
    """delta(Ahat_l) delta(R_{l-1}) - delta(R_l) for l = 1..L (0 at l = 1) for the rationals the
    floats represent (rows renormalised exactly, residual exactly 1/2): Fraction arithmetic."""
    half = Fraction(1, 2)
    slacks, Rm, d_prev = [], None, Fraction(1)
    for A in stack:
        rows = ExactMatrix.from_floats(A).rows()
        Hm = [[half * a + (half if i == k else 0) for k, a in enumerate(row)] for i, row in enumerate(rows)]
        Rm = Hm if Rm is None else [[sum((h * r for h, r in zip(hrow, col) if h), Fraction(0))
                                     for col in zip(*Rm)] for hrow in Hm]
        dH, dR = exact_delta(ExactMatrix.from_rationals(Hm)), exact_delta(ExactMatrix.from_rationals(Rm))
        slacks.append(dH * d_prev - dR)
        d_prev = dR
    return slacks


def check_rollout(A: np.ndarray, device: str = "cpu") -> dict[str, np.ndarray]:
    """Per-step verdict codes and slacks (``steps``, ``step_slack``: (B, L)) and per-instance
    verdict, slack, value, bound, ``layer`` (0-based step they describe), ``sent`` / ``exact`` (a
    step needed the exact path) for stacks A (B, L, n, n)."""
    B, L, n, _ = A.shape
    f = rollout_filter(A, device)
    slack, err = f["slack"].copy(), f["err"]
    steps = np.full((B, L), UNDECIDED, dtype=np.int64)
    steps[f["slack"] > MARGIN * err] = HOLDS
    steps[f["slack"] < -err] = VIOLATED                   # rigorous: the float slack is within err
    steps[:, 0] = TIGHT                                   # R_1 = Ahat_1 I: equality by definition
    slack[:, 0] = 0.0
    sent = (steps == UNDECIDED).any(1)
    for b in np.flatnonzero(sent):
        rt = rollout_tightness(A[b], fused=True, exact_budget=L * n ** 3 + 1)
        exact_slacks = None
        for l in range(1, L):
            code = CODE[rt.d2[l]]
            if steps[b, l] == VIOLATED:
                continue
            if steps[b, l] == HOLDS:                       # decided by the filter: must agree
                if code == TIGHT:
                    steps[b, l] = VIOLATED                 # filter and exact path disagree: a bug, loudly
                continue
            steps[b, l] = code
            if code == TIGHT:
                if abs(f["slack"][b, l]) > err[b, l]:
                    steps[b, l] = VIOLATED                 # exact equality, float slack beyond its error
                else:
                    slack[b, l] = 0.0
            elif code == HOLDS and f["slack"][b, l] <= err[b, l]:
                exact_slacks = exact_slacks or exact_step_slacks(A[b])
                slack[b, l] = float(exact_slacks[l])
                if exact_slacks[l] <= 0:
                    steps[b, l] = VIOLATED                 # strict, on the wrong side of the bound
    verdict = np.full(B, TIGHT, dtype=np.int64)
    for code in (HOLDS, UNDECIDED, VIOLATED):              # worst step wins, in this order
        verdict[(steps == code).any(1)] = code
    masked = np.where(steps == HOLDS, slack, np.inf)
    layer = np.argmin(masked, axis=1)
    for code in (UNDECIDED, VIOLATED):
        hit = verdict == code
        layer[hit] = np.argmax(steps[hit] == code, axis=1)
    layer[verdict == TIGHT] = L - 1
    rows = np.arange(B)
    inst_slack = slack[rows, layer]
    return {"verdict": verdict, "slack": inst_slack, "value": f["value"][rows, layer],
            "bound": f["bound"][rows, layer], "layer": layer, "exact": sent, "sent": sent,
            "steps": steps, "step_slack": slack}


def step_summaries(steps: np.ndarray, slack: np.ndarray) -> list[dict[str, Any]]:
    """Per step l = 1..L: verdict counts, the smallest strict slack and its index in the chunk."""
    out = []
    for l in range(steps.shape[1]):
        counts = np.bincount(steps[:, l], minlength=len(NAMES))
        body: dict[str, Any] = {"counts": {NAMES[i]: int(c) for i, c in enumerate(counts) if c},
                                "min_slack": None, "min_index": None}
        strict = np.flatnonzero(steps[:, l] == HOLDS)
        if len(strict):
            j = int(strict[np.argmin(slack[strict, l])])
            body["min_slack"], body["min_index"] = float(slack[j, l]), j
        out.append(body)
    return out


def chunks(plan: Any) -> list:
    """The chunks of a rollout :class:`~verification.stress.checks.plan.StressPlan` (any plan:
    :func:`verification.stress.checks.chunks`): ``run_rollout_chunk(spec, k)``, ``spec`` the cell
    (theorem, family, n, layers, seed, device): what a worker receives."""
    from verification.campaign import Chunk

    if plan.spec.kind != "rollout":
        raise ValueError(f"{plan.theorem}: single matrices or pairs; "
                         "its chunks are verification.stress.checks.sweep.chunks")
    out = []
    for f, n, L, count in plan.cells():
        spec = {"theorem": plan.theorem, "family": f, "n": n, "layers": L, "seed": plan.seed, "device": plan.device}
        out += [Chunk(chunk_key(f, n, k, L), run_rollout_chunk, (spec, k)) for k in range(count)]
    return out


def run_rollout_chunk(spec: dict, k: int) -> ChunkResult:
    """Chunk ``k`` of the rollout cell ``spec`` (theorem, family, n, layers, seed, device): its
    summary (per instance and per step) and records of the instances worth keeping, as verdicts of
    Theorem D2 (``dobrushin.product``) with the step's layer in the provenance."""
    theorem, family, n, L, seed = spec["theorem"], spec["family"], spec["n"], spec["layers"], spec["seed"]
    device = spec.get("device", "cpu")
    A = draw_stacks(family, n, L, k, seed)
    out = check_rollout(A, device)
    v, s = out["verdict"], out["slack"]
    body = summarise(v, s, out["exact"])
    body.update(device=device, sent=int(np.count_nonzero(out["sent"])), layers=L,
                steps=step_summaries(out["steps"], out["step_slack"]))
    prov = provenance(theorem, family, n, k, seed, L)
    key = chunk_key(family, n, k, L)
    records = [Record(STORED_AS, f"{key}/i{i}", NAMES[v[i]], slack=float(s[i]), value=float(out["value"][i]),
                      bound=float(out["bound"][i]), backend="numba" if device == "cpu" else f"torch-{device}",
                      provenance={**prov, "index": i, "layer": int(out["layer"][i]) + 1},
                      extra={"kept": why, "exact_path": bool(out["exact"][i]),
                             "steps": [NAMES[c] for c in out["steps"][i]]})
               for i, why in sorted(keep(v, s).items())]
    return ChunkResult(records, {STORED_AS: body})
