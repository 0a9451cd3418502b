"""Attention-only transformers (SANs): the scalar-bottleneck lemma and the third paper's claims
(docs/theory.md §5).

**Lemma (scalar bottleneck).** Let a decoder consist of L attention-only blocks
h_l = h_{l-1} + g_l(h_{l-1}) Attn_l(N_l(h_{l-1})) (no feed-forward layer), N_l an RMSNorm without
bias (x / rms(x) * gamma_l) or the identity, g_l a scalar gate or 1, any W_Q, W_K, QK-norm. At
sequence length 1 every attention distribution is the softmax of one logit, exactly 1, so
Attn_l(x) = x W_V^l W_O^l, and

    h_L = h_0 prod_{l=1..L} (I + c_l M_l),   M_l = diag(gamma_l) W_V^l W_O^l,   c_l = g_l / rms(h_{l-1})

(the product ordered l = 1 .. L from the left; c_l = 1 without norm and gate): a fixed linear
map modulated by L scalars; the logits add one more scalar, the final norm's. With feed-forward
layers no such form exists. Consequence: the first position of a SAN sees the token through
2^L fixed matrices h_0 M_S weighted by products of L scalars; a standard block's MLP is a free
nonlinear function of it.

Derivations (residuals that must simplify to 0): :func:`bottleneck_residual` (the recursion
against the expanded product, noncommutative M_l, for small L) and :func:`single_key_residual`.

Claims of the paper (conjectures, tested at small scale for their *direction*, or for equivalence
within a stated margin, by paired t intervals over seed pairs with df = pairs - 1; evaluators
numerics.san.claims, one claim at a time; the family of a run, Holm's adjustment and TOST in
verification.san.checks.claims): ``san.claim.*``.
"""
from __future__ import annotations

from typing import Any

import sympy as sp

from theory.errors import InvalidInput
from theory.hypotheses import Hypotheses, check, hyp_all
from theory.registry import Theorem, register

REF = "[SAN] seed abstract 3: attention-only decoders at matched parameters, FLOPs and depth"
h0, hL = sp.Symbol("h_0", commutative=False), sp.Symbol("h_L", commutative=False)
_l, _L = sp.symbols("l L", integer=True, positive=True)
_c, _M = sp.IndexedBase("c"), sp.IndexedBase("M", commutative=False)


def bottleneck_residual(L: int) -> sp.Expr:
    """h_L from the block recursion h_l = h_{l-1} + c_l h_{l-1} M_l minus h_0 prod (1 + c_l M_l),
    expanded; 0 for every L (noncommutative M_l, scalar c_l)."""
    if L < 1:
        raise InvalidInput(f"bottleneck_residual: L must be >= 1, got {L}")
    c = sp.symbols(f"c1:{L + 1}")
    M = sp.symbols(f"M1:{L + 1}", commutative=False)
    h = h0
    for l in range(L):
        h = h + c[l] * h * M[l]
    prod = h0
    for l in range(L):
        prod = prod * (1 + c[l] * M[l])
    return sp.expand(h - prod)


def single_key_residual() -> sp.Expr:
    """softmax over one key minus 1: exp(s) / sum_{j=1}^{1} exp(s_j) - 1 = 0 for any logit s."""
    s = sp.Symbol("s", real=True)
    return sp.simplify(sp.exp(s) / sp.Sum(sp.exp(s), (sp.Symbol("j"), 1, 1)).doit() - 1)


def _get(instance: Any, key: str, default: Any = None) -> Any:
    cfg = getattr(instance, "cfg", instance)
    return cfg.get(key, default) if isinstance(cfg, dict) else getattr(cfg, key, default)


def bottleneck_hypotheses(instance: Any) -> Hypotheses:
    """A decoder (object with ``cfg`` or a dict): attention-only blocks, RMSNorm or none, at T = 1."""
    return hyp_all(
        check(_get(instance, "block") == "attention",
              f"block is {_get(instance, 'block')!r}: the lemma needs attention-only blocks (no feed-forward layer)"),
        check(_get(instance, "norm", "rms") in ("rms", "none"),
              f"norm {_get(instance, 'norm')!r}: RMSNorm without bias or none (a bias makes the map affine)"),
        check(_get(instance, "seq_len", 1) == 1,
              f"sequence length {_get(instance, 'seq_len')}: the lemma is about length 1"))


def _bottleneck_witness() -> dict:
    return {"block": "attention", "norm": "rms", "seq_len": 1, "n_layer": 2, "gate": True, "qk_norm": True}


BOTTLENECK = register(Theorem(
    id="san.bottleneck", title="Scalar bottleneck of attention-only stacks at length one",
    category="proved",
    statement=sp.Eq(hL, h0 * sp.Product(1 + _c[_l] * _M[_l], (_l, 1, _L))),
    hypotheses_tex=r"a decoder of $L$ attention-only blocks $h_l = h_{l-1} + g_l \operatorname{Attn}_l(N_l(h_{l-1}))$ "
                   r"(no feed-forward layer), $N_l$ an RMSNorm without bias or the identity, $g_l$ a scalar gate or "
                   r"$1$, any $W_Q$, $W_K$ and QK-norm, at sequence length one",
    equality="always (an identity): the model at T = 1 equals h_0 prod_l (I + c_l M_l), "
             "M_l = diag(gamma_l) W_V W_O, c_l = gate_l / rms(h_{l-1}), product ordered l = 1..L",
    equality_tex=r"always (an identity): at sequence length one the model equals $h_0 \prod_{l=1}^{L} (I + c_l M_l)$ "
                 r"with $M_l = \operatorname{diag}(\gamma_l)\, W_V^{l} W_O^{l}$ and $c_l = g_l / \operatorname{rms}(h_{l-1})$, "
                 r"the product ordered $l = 1, \dots, L$ from the left",
    hypotheses=bottleneck_hypotheses, witness=_bottleneck_witness,
    evaluators={"fast": "numerics.san.bottleneck:bottleneck_residual",
                "exact": "numerics.san.bottleneck:bottleneck_exact"},
    references=(REF, "docs/theory.md §5: the scalar-bottleneck lemma"),
    symbols={"c_l": "gate over rms of the residual stream entering layer l", "M_l": "diag(gamma) W_V W_O"}))


def claim_hypotheses(instance: Any) -> Hypotheses:
    """A claim instance: dict with ``values`` (per seed pair, finite), ``noise`` (>= 0) and
    ``direction`` ('>' or '<')."""
    if not isinstance(instance, dict):
        return Hypotheses(False, f"a claim instance is a dict, got {type(instance).__name__}")
    vals = instance.get("values")
    return hyp_all(
        check(isinstance(vals, (list, tuple)) and len(vals) >= 1, "values: need at least one seed pair"),
        lambda: check(all(isinstance(v, (int, float)) and v == v and abs(v) != float("inf") for v in vals),
                      "values: every value must be a finite number"),
        check(isinstance(instance.get("noise"), (int, float)) and instance.get("noise", -1) >= 0,
              "noise: the noise floor must be a number >= 0"),
        check(instance.get("direction", ">") in (">", "<"), "direction: '>' or '<'"))


def _claim_witness() -> dict:
    return {"values": [0.3, 0.32], "noise": 0.01, "direction": ">"}


_EVAL = {"fast": "numerics.san.claims:decide", "exact": "numerics.san.claims:decide_exact"}


CLAIM_HYPOTHESES = (r"one finite value of the compared difference per seed pair (its two sides measured on runs from "
                    r"paired seeds), at least one pair; decided by a paired $t$ interval over the pairs")


def _claim(id_: str, title: str, statement: sp.Basic, equality: str, equality_tex: str) -> Theorem:
    return register(Theorem(id=id_, title=title, category="conjecture", statement=statement, equality=equality,
                            hypotheses=claim_hypotheses, witness=_claim_witness, evaluators=_EVAL,
                            references=(REF,), equality_tex=equality_tex, hypotheses_tex=CLAIM_HYPOTHESES))


def _sym(name: str) -> sp.Symbol:
    """A symbol printed as the papers write it (its name is its LaTeX)."""
    return sp.Symbol(name)


_Ls, _Ln = _sym(r"L_{\mathrm{SAN}}"), _sym(r"L_{\mathrm{std}}")
TRAINABLE = _claim("san.claim.trainable", "A configuration trains below the bigram model's validation loss",
                   sp.StrictLessThan(_sym(r"L_{\mathrm{val}}"), _sym(r"L_{\mathrm{bigram,val}}")),
                   "never (a strict comparison); the run has not diverged",
                   "never (a strict comparison); the run has not diverged")
GAP = _claim("san.claim.gap", "The loss gap of attention-only models",
             sp.StrictGreaterThan(_Ls - _Ln, 0),
             "paper: 0.47 nats (depth), 0.26 (FLOPs), 0.006 (parameters)",
             "not an inequality but a measured gap: deleting the feed-forward layers costs loss at matched depth "
             "and FLOPs, and attention depth closes the gap at matched parameters (the paper: 0.47 nats per "
             "token at matched depth, 0.26 at matched FLOPs, 0.006 at matched parameters)")
PROBES = _claim("san.claim.probes", "Attention-only models retrieve better and recall worse",
                sp.And(sp.StrictGreaterThan(_sym(r"\mathrm{acc}^{\mathrm{SAN}}_{\mathrm{ctx}}")
                                            - _sym(r"\mathrm{acc}^{\mathrm{std}}_{\mathrm{ctx}}"), 0),
                       sp.StrictLessThan(_sym(r"\mathrm{acc}^{\mathrm{SAN}}_{\mathrm{recall}}")
                                         - _sym(r"\mathrm{acc}^{\mathrm{std}}_{\mathrm{recall}}"), 0)),
                "paper: the remaining gap is parametric recall",
                "not an inequality but a measured difference: attention-only models win on context-grounded "
                "retrieval and lose on parametric recall (the paper: the remaining gap is parametric recall)")
LOW_CONTEXT = _claim("san.claim.low_context", "The deficit concentrates on early positions",
                     sp.StrictGreaterThan(_sym(r"\mathrm{gap}_{\mathrm{early}}") - _sym(r"\mathrm{gap}_{\mathrm{late}}"), 0),
                     "paper: localises there entirely at the largest budget",
                     "not an inequality but a measured difference (the paper: the deficit sits on the "
                     "low-context positions entirely at the largest budget)")
SPECTRA = _claim("san.claim.spectra", "Routing spectra settle early, content spectra keep growing",
                 sp.StrictGreaterThan(_sym(r"\mathrm{drift}_{\mathrm{content}}")
                                      - _sym(r"\mathrm{drift}_{\mathrm{routing}}"), 0),
                 "paper: weight spectra over training",
                 r"not an inequality but a measured difference: the routing matrices $W_Q, W_K$ settle early, "
                 r"the content matrices $W_V, W_O$ keep gaining rank, and without feed-forward layers rank moves "
                 r"into $W_O$ (the paper: weight spectra over training)")
QK_NORM = _claim("san.claim.qk_norm", "QK-normalisation keeps deep attention-only stacks trainable",
                 sp.StrictGreaterThan(_sym(r"L_{\mathrm{noQK}}") - _sym(r"L_{\mathrm{QK}}"), 0),
                 "paper: 48-layer SANs train only with QK-norm",
                 "not an inequality but a measured difference (the paper: 48-layer attention-only models train "
                 "only with QK-normalisation)")
