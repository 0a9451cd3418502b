"""Stand-ins the tests share: attention instances under the embedded models' names (loading the 4-bit
GGUFs takes minutes), a one-section toy paper (its hand-written source and its family's part), a
tiny BERT model folder, and what a test reads of a store file (its chunk count, a digest of its
content) without opening it through the suite.

>>> inst = causal_standin(T=4, L=2, H=1)
>>> inst.attention.shape, bool((inst.attention.sum(-1) == 1).all() or True)
((2, 1, 4, 4), True)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from verification.paper.toy import TOY_MAIN, TOY_PAPER  # noqa: F401  (the tests import them from here)


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


def functional_standin(model: str, fingerprint: str, store: Any, improvement: float = 1.0) -> str:
    """Store a stand-in functional check of the main job's ``model`` (its measurement and origin made
    up: every origin field named ``stand-in``) under the functional campaign of the weights
    ``fingerprint`` at the quick plan's token limit; its campaign's name."""
    from verification.measure.text import settings
    from verification.store import outcome_record
    from verification.trained.checks import functional

    camp = functional.campaign_prefix(model, settings(model, False)["max_tokens"]) + fingerprint
    keys = ("distribution", "upstream", "revision", "base", "variant", "file", "format", "quantisation", "defaults",
            "tokenizer", "sha256")
    rec = outcome_record(functional.THEOREM, model, "supported" if improvement > 0 else "refuted", improvement,
                         (improvement - 0.5, improvement + 0.5), "paired t over 3 inputs (df = 2), 95%", value=2.0,
                         bound=2.0 + improvement,
                         provenance=dict(model=model, fingerprint=fingerprint, corpus="stand-in",
                                         kind=functional.KIND[model], seed=0, inputs=["a", "b", "c"], fit_inputs=3,
                                         max_tokens=settings(model, False)["max_tokens"],
                                         origin={k: "stand-in" for k in keys}),
                         extra=dict(metric="stand-in", better="lower", baseline="stand-in", model_values=[2.0] * 3,
                                    baseline_values=[2.0 + improvement] * 3, units=[1] * 3, df=2, sd=0.1, p=0.01,
                                    seconds=0.0, cpu_seconds=0.0))
    store.write_chunk(camp, functional.CHUNK, [rec])
    return camp


# the tokenizer files of the embedded MiniLM that a model folder copies to be complete
TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")


def tiny_bert(folder: Any, tokenizer: bool = True, pickled: bool = False) -> Any:
    """A 2-layer BERT (random weights, seed 0) saved in ``folder`` (a pathlib.Path), with MiniLM's
    tokenizer files when ``tokenizer``; its weights as a pickle (``pytorch_model.bin``) when ``pickled``."""
    import torch
    from transformers import BertConfig, BertModel

    from numerics.atomic import copy_file

    from numerics.sources.embedded import embedded_path

    cfg = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    model = BertModel(cfg)
    if pickled:
        folder.mkdir(parents=True)
        cfg.save_pretrained(folder)
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
    else:
        model.save_pretrained(folder)
    if tokenizer:
        for name in TOKENIZER:
            copy_file(embedded_path("minilm")[0] / name, folder / name)
    return folder


def chunks_in(db: Any) -> int:
    """Chunk marks in the store file ``db`` (0 while it does not exist or cannot be read yet), read
    with SQLite read-only: what a test watching a running command counts."""
    import sqlite3
    from pathlib import Path

    if not Path(db).exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    except sqlite3.Error:
        return 0


def store_content(db: Any) -> str:
    """A digest of what the store file ``db`` holds (summaries, records, chunk marks; no times or
    versions): two stores with the same content have the same digest."""
    import hashlib
    import sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        rows = [con.execute("SELECT campaign, chunk, theorem, body FROM summaries ORDER BY 1, 2, 3").fetchall(),
                con.execute("SELECT campaign, chunk, theorem, instance, verdict, slack, value, bound, extra "
                            "FROM records ORDER BY 1, 2, 3, 4").fetchall(),
                con.execute("SELECT campaign, chunk, n FROM chunks ORDER BY 1, 2").fetchall()]
    return hashlib.sha256(repr(rows).encode()).hexdigest()
