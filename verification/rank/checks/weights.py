"""Effective ranks of the per-head circuits of the embedded trained models (from the factors).

For every layer and head: the QK kernel W_Q^h W_K^h^T and the OV circuit W_V^h W_O^h, their energy
(0.9, 0.99) and entropy effective ranks against the head dimension, and the sanity verdict of
``rank.weights.head_rank``: rank = dh certified (tight) when both factors have full column rank,
decided exactly (rank modulo a prime of the integers the floats represent: a nonzero minor mod p is
nonzero over the rationals); otherwise undecided. The effective ranks and the factor conditioning
are float estimates. smollm2 is the 4-bit GGUF model
dequantised by transformers: its numbers are those of the quantised weights (said in every table).
Tables and the figure: :mod:`verification.rank.report.weights`.
"""
from __future__ import annotations

from typing import Any

from numerics.rank import weights as RW
from theory.verdicts import Verdict
from verification import campaign
from verification.store import Record

MODELS = ("minilm", "smollm2")
VERSION = "v2"  # bump when a chunk's computation changes (head rank: certified by exact rank mod p)


def model_chunk(name: str) -> list[Record]:
    from numerics.sources.models import load_model

    m = load_model(name)
    sp = RW.head_spectra(m.module, m.config)
    dh = sp["qk"].shape[-1]
    out = []
    for circuit in ("qk", "ov"):
        er = RW.effective_ranks(sp[circuit])
        full = sp[f"full_{circuit}"]
        L, H = sp[circuit].shape[:2]
        for layer in range(L):
            for head in range(H):
                s = sp[circuit][layer, head]
                out.append(Record("rank.weights.head_rank", f"{name}/{circuit}/L{layer}/H{head}",
                                  Verdict.TIGHT if full[layer, head] else Verdict.UNDECIDED,
                                  slack=0.0 if full[layer, head] else None, value=float(er["energy_0.99"][layer, head]),
                                  bound=float(dh), backend="exact-mod-p", dtype="float64",
                                  provenance={"model": name, "quantised": bool(m.quantised), "fingerprint": m.fingerprint,
                                              "layer": layer, "head": head, "circuit": circuit, "head_dim": dh},
                                  extra={"energy_0.9": int(er["energy_0.9"][layer, head]),
                                         "entropy": float(er["entropy"][layer, head]),
                                         "factor_cond": float(sp[f"cond_{circuit}"][layer, head]),
                                         "sigma_top": float(s[0]), "sigma_min": float(s[-1])}))
    return out


CAMPAIGN = f"rank.weights-{VERSION}"


def weights_chunks(models: tuple[str, ...] = MODELS) -> list[campaign.Chunk]:
    """One chunk per model of :data:`CAMPAIGN` (nothing run)."""
    return [campaign.Chunk(name, model_chunk, (name,)) for name in models]


def run_weights(store: Any, models: tuple[str, ...] = MODELS, console: Any = None, executor: Any = None) -> None:
    campaign.run(store, CAMPAIGN, weights_chunks(models), console=console, executor=executor)
