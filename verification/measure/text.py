"""The main job's text-model campaigns, which the trained family runs and the modalities family
reads (MiniLM cut to the token counts of the vision and tabular models): their settings, the
inputs measured, the campaign names up to the model's fingerprint, and the lookup in the store.

The campaign of a model is found by its settings (``trained-v2:<model>:pydoc+doc+lic:
max<T>:r0.5:mean:w<fingerprint>``, T = 128 quick, 512 full), and only the chunks of the main job's
inputs are read (the first 210 / 60 inputs of the default three-source corpus quick, 300 full:
:func:`main_inputs`); when several fingerprints were measured, the one with the most of those
inputs (:func:`verification.report.part.resolve`).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from numerics.sources.corpus import DEFAULT_NAME
from verification.measure.attention import FUSION, RESIDUAL, VERSION, chunk_key
from verification.report.part import MissingCampaign, Need, resolve

# quick: 70 inputs per source for MiniLM (the model whose D1 shares the prose quotes), 20 per source for
# SmolLM2 (causal: its D1 verdicts are tight by construction; 30 layers cost more per input)
QUICK = {"minilm": dict(limit=210, max_tokens=128), "smollm2": dict(limit=60, max_tokens=128)}
FULL = dict(limit=300, max_tokens=512)   # every model, `attnbounds verify --full`
FULL_TOKENS = FULL["max_tokens"]
CORPUS = DEFAULT_NAME                                        # the default corpus (numerics.sources.corpus)


def command(seed: int, full: bool) -> str:
    return f"attnbounds verify --only trained --seed {seed}" + (" --full" if full else "")


def campaign_prefix(name: str, full: bool) -> str:
    tokens = FULL_TOKENS if full else QUICK[name]["max_tokens"]
    return f"trained-{VERSION}:{name}:{CORPUS}:max{tokens}:r{RESIDUAL}:{FUSION}:w"


def rollout_command(name: str, full: bool) -> str:
    """The ``attnbounds rollout`` run that measures exactly the main job's inputs of ``name``."""
    s = FULL if full else QUICK[name]
    return f"attnbounds rollout --model {name} --limit {s['limit']} --max-tokens {s['max_tokens']}"


def main_inputs(name: str, full: bool) -> list:
    """The texts the main job measures for ``name`` (:class:`numerics.sources.corpus.TextInput`)."""
    return list(_default_inputs(FULL["limit"] if full else QUICK[name]["limit"]))


@lru_cache(maxsize=8)
def _default_inputs(limit: int) -> tuple:
    from numerics.sources.corpus import load_corpus

    return tuple(load_corpus(None, limit=limit).inputs)


def model_need(name: str, full: bool, seed: int) -> Need:
    """The main job's campaign of ``name``: its name up to the fingerprint, one chunk per main-job
    input text (:func:`verification.measure.attention.chunk_key`); of several fingerprints the one
    with the most of those chunks (:func:`verification.report.part.resolve`)."""
    return Need("trained", campaign_prefix(name, full), frozenset(chunk_key(t) for t in main_inputs(name, full)),
                command(seed, full), prefix=True)


def find_campaign(store: Any, name: str, full: bool, seed: int) -> tuple[str, list[dict]]:
    """The stored campaign of ``name`` at the quick / full settings (:func:`model_need`) and its
    records of the main job's inputs only."""
    need = model_need(name, full, seed)
    camp, _ = resolve(store, need)
    records = [] if camp is None else [r for r in store.records(camp) if r["chunk"] in need.chunks]
    if not records:
        raise MissingCampaign(need.shown(), command(seed, full))
    return camp, records
