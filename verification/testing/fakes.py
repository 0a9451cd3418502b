"""Stand-ins the tests share: attention instances under the embedded models' names (loading the 4-bit
GGUFs takes minutes), and a one-section toy paper (its hand-written source and its family's part).

>>> inst = causal_standin(T=4, L=2, H=1)
>>> inst.attention.shape, bool((inst.attention.sum(-1) == 1).all() or True)
((2, 1, 4, 4), True)
"""
from __future__ import annotations

from typing import Any

import numpy as np

# main.tex of a toy paper: the generated macros and theorems, one section `sections/toy.tex`
TOY_MAIN = r"""\documentclass{article}
\usepackage{amsmath,amssymb,amsthm,booktabs,graphicx,adjustbox}
\newtheorem{theorem}{Theorem}\newtheorem{proposition}{Proposition}\newtheorem{conjecture}{Conjecture}
\input{generated/macros}
\begin{document}
\input{generated/theorems}
\input{sections/toy}
\label{attn:main-end}
\appendix\label{attn:appendix-start}
\input{generated/appendix}
\label{attn:end}
\end{document}
"""


TOY_PAPER = r"""\documentclass[11pt]{article}
\usepackage[margin=2.5cm]{geometry}
\usepackage{amsmath,amssymb,amsthm,booktabs,graphicx}
\usepackage[hidelinks]{hyperref}
\newtheorem{theorem}{Theorem}\newtheorem{proposition}{Proposition}\newtheorem{conjecture}{Conjecture}
\input{generated/macros}
\begin{document}
A \BuildKind{} build. \input{generated/theorems}
\input{sections/toy}
\label{attn:main-end}
BIBLIOGRAPHY
\appendix\label{attn:appendix-start}
\input{generated/appendix}
\label{attn:end}
\end{document}
"""
"""A toy paper at the real one's page geometry, with hyperref and the labels the page checks read
(``BIBLIOGRAPHY``: where a test puts its citations and bibliography, or nothing)."""


def toy_part(store: Any, plan: Any = None, n: int = 1) -> Any:
    """A toy family's paper part (``paper_part(store, plan)``; a toy has no plan: None) read from the store's ``toy-campaign``: its count as a macro, ``n``
    tables of its records and ``n`` figures (dense sine curves: files of some size, for kill tests)."""
    import pandas as pd

    from verification.report.part import Figure, MissingCampaign, Part, Table

    rows = list(store.records("toy-campaign"))
    if not rows:
        raise MissingCampaign("toy-campaign", "attnbounds toy")
    part = Part("toy", commands=["attnbounds toy --seed 0"])
    part.macro(len(rows), "toy", "count")
    frame = pd.DataFrame({"instance": [r["instance"] for r in rows], "verdict": [r["verdict"] for r in rows]})
    x = np.linspace(0.0, 1.0, 4000)
    for k in range(n):
        part.tables.append(Table(f"toy-table-{k}", frame, f"toy table {k}", "seed 0"))
        part.figures.append(Figure(f"toy-figure-{k}", lambda ax, k=k: ax.plot(x, np.sin((k + 1) * 40 * x), lw=0.3),
                                   f"toy figure {k}", "seed 0"))
    return part


def causal_standin(T: int = 6, L: int = 3, H: int = 2, seed: int = 0, model: str = "smollm2",
                   causal: bool = True) -> Any:
    """An attention instance named like the main job's first input of ``model`` (the paper reads the
    main job's inputs only): softmax rows of random logits, lower-triangular when ``causal`` (the
    decoders SmolLM2 and Gemma 3), full otherwise (a stand-in for an encoder, AntiBERTy); (L, H, T, T),
    token 0 special."""
    from numerics.sources import AttentionInstance
    from verification.measure.text import main_inputs

    first = main_inputs(model, False)[0]
    rng = np.random.default_rng(seed)
    mask = np.where(np.tri(T, dtype=bool), 0.0, -np.inf) if causal else np.zeros((T, T))
    logits = rng.standard_normal((L, H, T, T)) + mask
    A = np.exp(logits - logits.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    special = np.zeros(T, dtype=bool)
    special[0] = True
    prov = dict(model=model, quantised=model in ("smollm2", "gemma3"), causal=causal, input=first.id,
                source="test", text_sha=first.sha, T=T, truncated=False, tokens_full=T)
    return AttentionInstance(model=model, input=first.id, sha=first.sha, attention=A, special=special,
                             causal=causal, provenance=prov)
