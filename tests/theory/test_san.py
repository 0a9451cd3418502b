"""theory.san: the scalar-bottleneck lemma (sympy derivation, hypotheses) and its evaluators on
random weights, plus the registered claims."""
from verification.paper.typeset import latex_block, statement_latex
import pytest
import torch

import theory.san as S
from theory import get
from theory.verdicts import Outcome, Verdict, vocabulary


@pytest.mark.parametrize("L", [1, 2, 3, 4])
def test_derivation_simplifies_to_zero(L):
    assert S.bottleneck_residual(L) == 0
    assert S.single_key_residual() == 0


def test_derivation_can_fail():
    import sympy as sp

    c1, c2 = sp.symbols("c1 c2")
    M1, M2 = sp.symbols("M1 M2", commutative=False)
    # the product in the wrong order is not the recursion: M_l do not commute
    assert sp.expand(S.bottleneck_residual(2) + S.h0 * (1 + c1 * M1) * (1 + c2 * M2)
                     - S.h0 * (1 + c2 * M2) * (1 + c1 * M1)) != 0


def test_hypotheses_and_registry():
    th = get("san.bottleneck")
    assert th.category == "proved" and vocabulary(th.category) is Verdict
    assert th.hypotheses(th.witness()).ok is True
    h = th.hypotheses({"block": "standard", "norm": "rms", "seq_len": 1})
    assert h.ok is False and "feed-forward" in h.reason
    assert th.hypotheses({"block": "attention", "seq_len": 3}).ok is False
    for cid in ("gap", "probes", "low_context", "spectra", "qk_norm", "trainable"):
        claim = get(f"san.claim.{cid}")
        assert vocabulary(claim.category) is Outcome
        assert claim.hypotheses({"values": [], "noise": 0.1}).ok is False


def _perturbed(cfg, seed):
    from numerics.san import build

    model = build(cfg, seed)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():                  # gains away from 1, gate biases away from 0
            p.add_(0.2 * torch.randn(p.shape, generator=g))
    return model


@pytest.mark.parametrize("kw", [dict(), dict(gate=True, qk_norm=True), dict(norm="none")])
def test_lemma_on_random_weights(kw):
    from numerics.san import SANConfig

    cfg = SANConfig(block="attention", n_layer=3, n_head=2, d_model=16, ctx=8, **kw)
    model = _perturbed(cfg, 3)
    th = get("san.bottleneck")
    assert th.hypotheses(model).ok is True
    fast = th.evaluator("fast")(model)
    assert fast["ok"] and fast["residual"] <= fast["bound"]
    exact = th.evaluator("exact")(model, token=7)
    assert exact["equal"] is True and exact["monomials"] == 8
    c = fast["scalars"]
    if kw.get("norm") == "none":
        assert torch.allclose(torch.as_tensor(c), torch.ones_like(torch.as_tensor(c)))   # a fixed linear map
    else:
        assert c.std(0).max() > 0                     # the scalars move with the token


class TanhLinear(torch.nn.Linear):
    def forward(self, x):
        return torch.tanh(3 * super().forward(x))


def test_lemma_check_detects_a_nonlinear_block():
    from numerics.san import SANConfig
    from numerics.san.bottleneck import bottleneck_exact, bottleneck_residual

    cfg = SANConfig(block="attention", n_layer=2, n_head=2, d_model=16, ctx=8)
    model = _perturbed(cfg, 4)
    attn = model.blocks[1].attn
    bent = TanhLinear(16, 16, bias=False)             # the output projection made nonlinear
    bent.weight = attn.o.weight
    attn.o = bent
    assert not bottleneck_residual(model)["ok"]
    std = _perturbed(SANConfig(block="standard", n_layer=1, n_head=2, d_model=16, ctx=8), 0)
    with pytest.raises(ValueError, match="feed-forward"):
        bottleneck_exact(std)


# -- issue 26 item 3: SAN titles in words, equality conditions and statements as LaTeX math --------------
@pytest.mark.parametrize("th", [t for t in __import__("theory").theorems() if t.id.startswith("san.")],
                         ids=lambda t: t.id)
def test_san_titles_are_words_and_equality_conditions_are_math(th):
    import re

    from matplotlib.mathtext import MathTextParser

    from verification.paper.latex import ascii_math

    assert not re.search(r"[<>=^_\\|]|\bdelta\b|\bprod\b", th.title) and len(th.title) <= 70, th.title
    assert th.equality_tex, f"{th.id}: no equality_tex (the paper would print ASCII)"
    words = "".join(p for k, p in enumerate(th.equality_tex.split("$")) if k % 2 == 0)
    assert "\\" not in words and not re.search(r"\bprod\b|\bh_0\b|[A-Za-z]_[A-Za-z0-9{]", words), (th.id, words)
    assert ascii_math(latex_block(th)) == [] and "_{ctx SAN}" not in statement_latex(th), latex_block(th)
    for k, piece in enumerate(th.equality_tex.split("$")):
        if k % 2:
            MathTextParser("path").parse(f"${piece}$")          # valid math, as the paper prints it


def test_the_san_equality_check_catches_ascii_words():
    import re

    planted = "always: the model equals h_0 prod_l (I + c_l M_l)"      # the old, ASCII condition
    assert re.search(r"\bprod\b|\bh_0\b|[A-Za-z]_[A-Za-z0-9{]", planted)
