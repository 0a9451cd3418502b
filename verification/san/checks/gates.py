"""The gates before a claim is tested, as typed values: a :class:`Gate` says why a claim cannot be
tested (its :class:`GateKind`: a compared role this preset does not train, a compared run that
failed the training gate, a probe whose reference fails its positive control, or a probe at ceiling
for both roles it compares, :func:`probe_ceiling`) with the reason in words; a claim's record carries the reasons' text (:func:`gate_text`), the findings the gates.

The training gate of a run (:func:`learned`): finite, not diverged, and a validation loss below the
bigram model's loss on the same validation windows (:func:`verification.san.checks.runs.bigram_validation`):
a model that uses no context beyond the previous byte reaches that; a comparison of models needs
models that beat it.

>>> g = (Gate(GateKind.CONTROL, "positive control failed: ..."), Gate(GateKind.UNTRAINED, "san-flops: not trained by this preset"))
>>> gate_text(g), [k.value for k in kinds(g)]
('positive control failed: ...; san-flops: not trained by this preset', ['untrained', 'control'])
>>> gate_text(tuple(Gate(x.kind, x.reason, "explicit") for x in g[:1]))
'explicit path: positive control failed: ...'
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum
from typing import Optional, Sequence

from theory.verdicts import ALPHA
from verification.san.checks.claims import Claim
from verification.san.checks.measures import loss
from verification.stats import binomial_p


class GateKind(str, Enum):
    """Which gate a claim failed (in this order wherever kinds are listed)."""

    UNTRAINED = "untrained"       # a compared role is not trained by this preset
    TRAINING = "gate"             # a compared run failed the training gate
    CONTROL = "control"           # the probe's reference fails its positive control
    CEILING = "ceiling"           # both roles compared answer every probe correctly: nothing to separate


@dataclass(frozen=True)
class Gate:
    """One reason a claim cannot be tested: its ``kind``, the ``reason`` in words and, where it
    failed on a numerical path other than the primary one, that ``path``."""

    kind: GateKind
    reason: str
    path: Optional[str] = None


def gate_text(gates: Sequence[Gate]) -> Optional[str]:
    """The reasons of ``gates`` as one text (None: no gate), prefixed by the path they failed on."""
    if not gates:
        return None
    return (f"{gates[0].path} path: " if gates[0].path else "") + "; ".join(g.reason for g in gates)


def kinds(gates: Sequence[Gate]) -> list[GateKind]:
    """The kinds of ``gates``, each once, in :class:`GateKind` order."""
    return [k for k in GateKind if any(g.kind is k for g in gates)]


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


def probe_control(kind: str, by: dict, seeds: list, alpha: float = ALPHA) -> Optional[Gate]:
    """The positive control of a probe: every seed's standard model must beat the probe's larger
    chance level (copy, majority), each by an exact one-sided binomial test of its hits among the
    probe's answers (``<kind>_acc`` x ``<kind>_n``), at ``alpha`` / seeds (Bonferroni over the seeds: a
    probe that some reference run cannot pass tests nothing). A seed-level t test would call a ceiling
    (every reference perfect: no variation) a failure. None when it passes, else the failed gate.

    >>> run = {"recall_acc": 1.0, "recall_n": 96, "recall_chance_copy": 0.1, "recall_chance_majority": 0.25}
    >>> probe_control("recall", {("std", 0): run, ("std", 1): run}, [0, 1]) is None
    True
    """
    rs = [by[("std", s)] for s in seeds if ("std", s) in by]
    if len(rs) < 2:
        return Gate(GateKind.CONTROL, f"positive control: the standard model's {kind} accuracy against chance "
                                      "needs two seeds")
    worst = None
    for r in rs:
        n = int(r.get(f"{kind}_n", 0) or 0)
        chance = max(r.get(f"{kind}_chance_copy", math.nan), r.get(f"{kind}_chance_majority", math.nan))
        acc = r.get(f"{kind}_acc", math.nan)
        if n < 1 or not (math.isfinite(chance) and math.isfinite(acc)):
            return Gate(GateKind.CONTROL, f"positive control: the standard model's {kind} answers or chance level "
                                          "are missing")
        k = int(round(acc * n))
        p = (1.0 if chance >= 1 else float(k == 0) if chance <= 0
             else binomial_p(k, n, chance, "greater"))
        if worst is None or p > worst[0]:
            worst = (p, acc, chance, n)
    p, acc, chance, n = worst
    if p < alpha / len(rs):
        return None
    return Gate(GateKind.CONTROL, f"positive control failed: a standard model's {kind} accuracy {acc:.3f} on {n} "
                                  f"answers is not above its chance level {chance:.3f} (one-sided exact binomial p "
                                  f"{p:.2g}, Bonferroni over {len(rs)} seeds at {alpha:g})")


def hits(run: dict, kind: str) -> tuple[int, int]:
    """A run's correct answers on probe ``kind`` and the probe's answers (``<kind>_acc`` x ``<kind>_n``;
    the accuracy is stored as hits / answers, so the count is recovered exactly by rounding)."""
    n = int(run.get(f"{kind}_n", 0) or 0)
    acc = run.get(f"{kind}_acc", math.nan)
    return (int(round(acc * n)) if math.isfinite(acc) else -1), n


def probe_ceiling(kind: str, roles: Sequence[str], by: dict, seeds: list) -> Optional[Gate]:
    """The ceiling of a probe for the ``roles`` it compares: every seed's run of every role answers
    every one of the probe's answers correctly (counted exactly, :func:`hits`), so the paired
    differences are all 0 and no number of seed pairs can separate the models. None where some run
    misses an answer (or a role has no run: the untrained gate says so), else the gate.

    >>> run = {"recall_acc": 1.0, "recall_n": 96}
    >>> probe_ceiling("recall", ("std", "san-depth"), {(r, s): run for r in ("std", "san-depth") for s in (0, 1)}, [0, 1]).kind.value
    'ceiling'
    >>> probe_ceiling("recall", ("std",), {("std", 0): run, ("std", 1): dict(run, recall_acc=95 / 96)}, [0, 1]) is None
    True
    """
    rs = [by.get((role, s)) for role in roles for s in seeds]
    if not rs or any(r is None for r in rs):
        return None
    counted = [hits(r, kind) for r in rs]
    if all(n > 0 and h == n for h, n in counted):
        return Gate(GateKind.CEILING, f"ceiling: every run of {' and '.join(roles)} answers all {counted[0][1]} "
                                      f"{kind} answers correctly on each of {len(seeds)} seeds (the {kind} probe is "
                                      "at ceiling for both roles: no number of seed pairs can separate them)")
    return None


def claim_gates(claim: Claim, gates: dict, by: dict, seeds: list) -> tuple[Gate, ...]:
    """Why ``claim`` cannot be tested (empty: it can): a compared role with a run that failed the
    training gate (which role, how many runs, the worst loss against the bigram model's) or that
    this preset does not train, or, for a probe claim, the reference's failed positive control or the
    probe at ceiling for both roles compared (:func:`probe_ceiling`)."""
    out = []
    for role in claim.roles:
        g = gates.get(role)
        if g is None or g["runs"] == 0:
            if claim.over_trained:
                continue            # a mean over the roles trained: a role not trained is not in it
            out.append(Gate(GateKind.UNTRAINED, f"{role}: not trained by this preset"))
        elif g["passed"] < g["runs"]:
            out.append(Gate(GateKind.TRAINING, f"{role}: {g['runs'] - g['passed']} of {g['runs']} runs failed the "
                                               f"training gate (worst validation loss {g['worst']:.3f} nats/byte, "
                                               f"gate: below the bigram model's validation loss "
                                               f"{g['bigram_val']:.3f})"))
    if claim.probe is not None:
        why = probe_control(claim.probe, by, seeds)
        if why:
            out.append(why)
        top = probe_ceiling(claim.probe, claim.roles, by, seeds)
        if top:
            out.append(top)
    return tuple(out)


def path_gates(per_path: dict) -> list[tuple[Gate, ...]]:
    """Per claim (the tests of every numerical path, ``per_path``: kernel -> tests in the same order,
    the primary path first), the gates it is reported with: the primary path's, else those of the
    first path that cannot test it, tagged with that path."""
    primary, *_ = per_path
    out = []
    for i, t in enumerate(per_path[primary]):
        k = next((k for k, ts in per_path.items() if ts[i].get("gates")), None)
        gates = per_path[k][i]["gates"] if k is not None else ()
        out.append(tuple(replace(g, path=k) for g in gates) if k is not None and k != primary else tuple(gates))
    return out
