"""The functional check of each embedded model of the main job (the claim ``trained.functional``,
:mod:`theory.trained`): before its attention is read, the checkpoint is shown to do what it was
published to do, beside a trivial baseline, and where its files come from is recorded.

One campaign per model, ``trained-functional-v1:<model>:max<T>:w<fingerprint>`` (the model's
fingerprint and token limit: another checkpoint or limit is another campaign), one chunk
(:data:`CHUNK`), one outcome record: the instance is the model's name, ``value`` the model's mean
metric, ``bound`` the baseline's, the statistic the mean per-input improvement over the baseline
with its paired t interval over the inputs (:func:`verification.stats.paired_t`, df = inputs - 1)
and the outcome (:func:`verification.stats.interval_outcome` against 0: supported above, refuted
below, inconclusive when it holds 0 or the differences do not vary). Its ``extra`` holds every
input's values and the seconds the check took (wall clock and CPU); its provenance the inputs and the model's origin
(:func:`numerics.sources.upstream.origin`: package, upstream, revision, format, quantisation,
library defaults, tokenizer).

What each model is checked on (:data:`KIND`, the measurements :mod:`numerics.sources.functional`
and :mod:`numerics.sources.saliency`): the decoders SmolLM2 and Gemma 3, loss per token on the
first :data:`TEXTS` English corpus inputs of 40 words or more (12, each cut at 64 tokens) against a
unigram model fitted on every later input; AntiBERTy, masked-token accuracy on the first :data:`SEQUENCES` antibody V genes
against the most frequent residue of the others; all-MiniLM-L6-v2, whose weights hold no
masked-language-model head, the cosine of the two halves of each of the first 24 such texts against
halves of two texts; DINOv2-S, the contrast of its saliency map on every bundled photograph
against the photograph with its patches shuffled. Whisper-base, not in the main job, has its own
check (the transcript of its bundled recording: :mod:`numerics.sources.whisper`). The CPU each check
takes (the models already loaded) is in its record and printed when it runs.
"""
from __future__ import annotations

import time
from typing import Any

from verification import campaign
from verification.store import outcome_record

VERSION = "v1"
CHUNK = "check"
TEXTS = {"minilm": 24, "smollm2": 12, "gemma3": 12, "qwen2.5-coder-0.5b": 12, "qwen2.5-coder-1.5b": 12}   # English texts scored per text model (a decoder's forward
                     # pass on one thread costs 1-1.5 s at 64 tokens: 12 keep each check well under a minute)
SEQUENCES = 48       # antibody V genes scored (the quick plan's AntiBERTy inputs); the other 269 fit the baseline
KIND = {"minilm": "sentence", "smollm2": "decoder", "gemma3": "decoder", "antiberty": "masked", "dinov2": "saliency",
        "qwen2.5-coder-0.5b": "decoder", "qwen2.5-coder-1.5b": "decoder"}   # the last two: the full settings only
THEOREM = "trained.functional"


def applies(name: str) -> bool:
    """Whether the model ``name`` has a functional check here (an embedded model of :data:`KIND`)."""
    return name in KIND


def campaign_prefix(name: str, max_tokens: int) -> str:
    """The campaign's name up to the fingerprint (what the paper looks the campaign up by).

    >>> campaign_prefix("gemma3", 128)
    'trained-functional-v1:gemma3:max128:w'
    """
    return f"trained-functional-{VERSION}:{name}:max{max_tokens}:w"


def campaign_name(model: Any) -> str:
    return campaign_prefix(model.name, int(model.max_tokens)) + model.fingerprint


def inputs_of(name: str) -> tuple[list, list, str]:
    """(scored inputs, the baseline's fitting inputs, the corpus's name) of the model ``name``."""
    from numerics.sources.corpus import ANTIBODY_NAME, load_corpus
    from numerics.sources.functional import split_texts
    from numerics.sources.images import load_images

    kind = KIND[name]
    if kind == "saliency":
        corpus = load_images(None)
        return list(corpus.inputs), [], corpus.name
    if kind == "masked":
        corpus = load_corpus(ANTIBODY_NAME)
        return list(corpus.inputs[:SEQUENCES]), list(corpus.inputs[SEQUENCES:]), corpus.name
    corpus = load_corpus(None)
    scored, fit = split_texts(corpus.inputs, TEXTS[name])
    return scored, fit, corpus.name


def measure(name: str, model: Any, seed: int = 0) -> Any:
    """The :class:`numerics.sources.functional.Paired` measurements of ``model`` (embedded ``name``)."""
    from numerics.sources import functional

    scored, fit, _ = inputs_of(name)
    kind = KIND[name]
    if kind == "saliency":
        from numerics.sources.saliency import saliency_contrast

        return saliency_contrast(model, scored, seed)
    if kind == "masked":
        return functional.masked_accuracy(model, scored, fit, seed)
    if kind == "sentence":
        return functional.pair_similarity(model, scored, seed)
    return functional.decoder_loss(model, scored, fit)


def decide(paired: Any) -> tuple[str, dict]:
    """(outcome, the paired t of :func:`verification.stats.paired_t`) of the per-input improvements."""
    from verification.stats import interval_outcome, paired_t

    t = paired_t(paired.improvement)
    lo, hi = t["interval"]
    return (interval_outcome(lo, hi, 0.0) if t["applicable"] else "inconclusive"), t


def check_records(name: str, model: Any, seed: int = 0) -> list:
    """The chunk: the measurements, the origin and the decision as one outcome record (module docstring)."""
    from numerics.sources.upstream import origin

    t0, c0 = time.perf_counter(), time.process_time()
    paired = measure(name, model, seed)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    outcome, t = decide(paired)
    n = len(paired.model)
    _, fit, corpus = inputs_of(name)
    mean = lambda xs: sum(xs) / len(xs)          # noqa: E731
    return [outcome_record(
        THEOREM, name, outcome, t["mean"], t["interval"], f"paired t over {n} inputs (df = {n - 1}), 95%",
        value=mean(paired.model), bound=mean(paired.reference),
        provenance=dict(model=name, fingerprint=model.fingerprint, corpus=corpus, kind=KIND[name], seed=seed,
                        inputs=list(paired.inputs), fit_inputs=len(fit), max_tokens=int(model.max_tokens),
                        origin=origin(name, model)),
        extra=dict(metric=paired.metric, better=paired.better, baseline=paired.baseline, model_values=list(paired.model),
                   baseline_values=list(paired.reference), units=list(paired.units), df=t["df"], sd=t["sd"],
                   p=t["p_greater"], seconds=round(seconds, 1), cpu_seconds=round(cpu, 1)))]


def run(name: str, model: Any, store: Any, seed: int = 0, console: Any = None) -> str:
    """The functional check of ``model`` (embedded ``name``), resumed: nothing is measured when the
    store holds it. Its campaign's name."""
    camp = campaign_name(model)
    campaign.run(store, camp, [campaign.Chunk(CHUNK, check_records, (name, model, seed))], console=console,
                 description=f"{model.name}: functional check", progress=False)
    if console is not None:
        for r in store.records(camp):
            x = r["extra"]
            lo, hi = x["interval"]
            console.print(f"[dim]{model.name}: functional check, {x['metric']} {r['value']:.4g} against "
                          f"{r['bound']:.4g} ({x['baseline']}): improvement {x['statistic']:.4g} [{lo:.4g}, "
                          f"{hi:.4g}], {r['verdict']} ({x['seconds']} s, {x['cpu_seconds']} s of CPU)[/dim]")
    return camp
