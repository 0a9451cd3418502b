"""Trained transformers: the functional gate. Before a pretrained model's attention is measured, the
checkpoint read must be shown to work as published: on its own task it must beat a trivial
baseline on inputs it was not fitted to (DESIGN: "can the design decide?", the positive control).

``trained.functional``: per input i of the check, the model's quality q_model(i) and a trivial
baseline's q_baseline(i) on the same input (higher is better: minus the loss per token for a
decoder against a unigram model fitted on a disjoint part of the corpus, masked-token accuracy for a
masked encoder against the most frequent residue, the cosine of two halves of one text against two
halves of different texts for a sentence encoder, the contrast of a saliency map on a photograph
against the same photograph with its patches shuffled); the claim is that the mean of the paired
differences is above 0, decided by a paired t interval over the inputs (df = inputs - 1):
supported when the interval lies above 0, refuted below, inconclusive when it holds 0. The
measurements are :mod:`numerics.sources.functional`; the campaign is
:mod:`verification.trained.checks.functional`.
"""
from __future__ import annotations

import math
from typing import Any

import sympy as sp

from theory.hypotheses import Hypotheses, check, hyp_all
from theory.registry import Theorem, register


def functional_hypotheses(instance: Any) -> Hypotheses:
    """A functional check: a dict with ``values``, the per-input differences q_model - q_baseline
    (at least two, finite: a t interval needs a degree of freedom), ``noise`` (>= 0) and
    ``direction`` ``">"`` (the evaluator :func:`numerics.san.claims.decide`'s arguments)."""
    if not isinstance(instance, dict):
        return Hypotheses(False, f"a functional check is a dict, got {type(instance).__name__}")
    vals = instance.get("values")
    return hyp_all(
        check(isinstance(vals, (list, tuple)) and len(vals) >= 2,
              "values: need at least two inputs (a t interval needs one degree of freedom)"),
        lambda: check(all(isinstance(v, (int, float)) and math.isfinite(v) for v in vals),
                      "values: every difference must be a finite number"),
        check(isinstance(instance.get("noise"), (int, float)) and instance.get("noise", -1) >= 0,
              "noise: a number >= 0"),
        check(instance.get("direction", ">") == ">", "direction: the model must be better, '>'"))


def _witness() -> dict:
    """Three inputs on which the model is clearly better than its baseline."""
    return {"values": [2.5, 3.0, 2.75], "noise": 0.0, "direction": ">"}


FUNCTIONAL = register(Theorem(
    id="trained.functional", title="A shipped checkpoint beats a trivial baseline on its published task",
    category="statistical",
    statement=sp.StrictGreaterThan(sp.Symbol(r"q_{\mathrm{model}}"), sp.Symbol(r"q_{\mathrm{baseline}}")),
    hypotheses_tex=(r"$q$ the quality on the model's own task, higher is better, measured per input on inputs "
                    r"disjoint from those the baseline is fitted on (minus the loss per token of a decoder against "
                    r"a unigram model, masked-token accuracy of a masked encoder against the most frequent "
                    r"residue, the cosine of two halves of one text against halves of two texts for a sentence "
                    r"encoder, a saliency map's contrast on a photograph against the same photograph with its "
                    r"patches shuffled); decided by a paired $t$ interval over the inputs"),
    equality="never (a strict comparison); a checkpoint that fails it is not the model it is said to be",
    equality_tex="never (a strict comparison); a checkpoint that fails it is not the model it is said to be",
    hypotheses=functional_hypotheses, witness=_witness,
    evaluators={"fast": "numerics.san.claims:decide", "exact": "numerics.san.claims:decide_exact"},
    references=("DESIGN: the positive control of a comparison of trained models",),
    symbols={"q_model": "the model's quality per input", "q_baseline": "the trivial baseline's, same input"}))
