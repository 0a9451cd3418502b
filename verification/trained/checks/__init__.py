"""Trained transformers: how often Theorem D1's equality holds, and how tight rollout is, per layer,
on the embedded text models and any model folder, on the vision transformer DINOv2 and any ONNX
export, on images (``attnbounds rollout --model dinov2 [--images DIR|FILE,...]``), and on Whisper-base's
encoder and decoder self-attention, on speech (``attnbounds rollout --model whisper-base [--audio FILE]``:
two model runs, ``whisper-base-encoder`` and ``whisper-base-decoder``, with the transcript as a
functional check; its cross-attention is not square, D1 does not apply).

Each (model, input) is measured by :func:`verification.measure.attention.instance_records` (D1 per
head and head-averaged on every token set, the rollout chain, comparison bounds). One results-store
chunk per (model, input text or image): a rerun resumes. Reports: verification.trained.report.

Random baselines at matched size (docs/theory.md §2, :mod:`verification.measure.baselines`): for
every input and token set, the c-th input with n kept tokens gets :data:`BASELINE_PER_INPUT` fresh
random n x n matrices of each family of :data:`verification.measure.baselines.FAMILIES`
(Dirichlet(1) rows; softmax of Gaussian logits at T = 0.25, 1, 4, a fixed range, not fitted to the
model), D1 decided exactly on each; one chunk per (family, n, c) in the seed's baseline campaign,
shared by every model (:func:`measure_baselines`).

A user's statement checked on every head (``--check``): :mod:`verification.trained.checks.heads`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from theory.errors import InvalidInput

from verification import campaign
from verification.measure import baselines
from verification.measure.attention import campaign_name, check_instance, chunk_key, input_records
from verification.measure.baselines import TRAINED
from verification.plan import RunResult, recording
from verification.trained.checks.heads import bindable, campaign_of, run_check

FULL_SCALES = ("every text model on 300 inputs at up to 512 tokens and DINOv2 on all 19 bundled photographs (quick: "
               "MiniLM 120, SmolLM2 6 and Gemma 3 6 inputs of the English corpus, AntiBERTy 48 antibody V genes, "
               "at up to 128 tokens, DINOv2 4 photographs at 257 tokens), with their matched-n random baselines, and "
               "adds the two larger decoders, Qwen2.5-Coder 0.5B and 1.5B, on 18 and 15 inputs at up to 512 tokens "
               "(their packages: `make setup-full`; the full plan refuses up front without them)")


@dataclass(frozen=True)
class ModelRun:
    """One model measured on one corpus: an embedded name or a path (``--model``), the corpus
    (``--texts``; None: the default), its first ``limit`` inputs, truncated at ``max_tokens``."""

    model: str
    texts: Optional[str] = None
    limit: Optional[int] = None
    max_tokens: Optional[int] = None
    allow_pickle: bool = False
    images: Optional[str] = None      # --images DIR|FILE[,FILE...] of an image model (None: the bundled photographs)
    audio: Optional[str] = None       # --audio DIR|FILE[,FILE...] of a speech model (None: the bundled recording)
    # the corpus once read (load): the command plans, runs and reports from the same inputs, read once
    _corpus: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def reads_images(self) -> bool:
        """An image model (``dinov2``, ``FILE.onnx``: :func:`numerics.sources.onnx_attention.is_onnx`)."""
        from numerics.sources.onnx_attention import is_onnx

        return is_onnx(self.model)

    @property
    def reads_audio(self) -> bool:
        """A speech model (``whisper-base-encoder``, ``whisper-base-decoder``: :mod:`numerics.sources.whisper`)."""
        from numerics.sources.models import WHISPER_STREAMS

        return self.model in WHISPER_STREAMS

    def corpus(self) -> Any:
        """The inputs (texts, or images for an image model: :mod:`numerics.sources.images`), read on
        the first call and kept: planning, measuring and reporting one run read them once; ``--texts``
        with an image model or ``--images`` with a text model is refused."""
        from numerics.sources.corpus import load_corpus
        from numerics.sources.images import load_images

        if "corpus" in self._corpus:
            return self._corpus["corpus"]
        self.check_inputs()
        if self.reads_audio:
            from numerics.sources.audio import load_audio

            corpus = load_audio(self.audio, limit=self.limit)
        elif self.reads_images:
            if self.texts is not None:
                raise InvalidInput(f"--texts {self.texts!r}: model {self.model!r} reads images, not texts "
                                   "(give --images DIR|FILE[,FILE...], or nothing for the bundled photographs)")
            corpus = load_images(self.images, limit=self.limit)
        else:
            if self.images is not None:
                raise InvalidInput(f"--images {self.images!r}: model {self.model!r} reads texts, not images "
                                   "(--images is for dinov2 and FILE.onnx; give --texts for a text model)")
            corpus = load_corpus(self.texts, limit=self.limit)
        self._corpus["corpus"] = corpus
        return corpus

    def check_inputs(self) -> None:
        """``--texts``, ``--images`` and ``--audio`` each for its kind of model only (InvalidInput)."""
        kind = "audio" if self.reads_audio else "images" if self.reads_images else "texts"
        given = {"texts": self.texts, "images": self.images, "audio": self.audio}
        reads = {"texts": "texts", "images": "images (dinov2, FILE.onnx)", "audio": "speech (whisper-base)"}
        for opt, value in given.items():
            if value is not None and opt != kind:
                raise InvalidInput(f"--{opt} {value!r}: model {self.model!r} reads {reads[kind]}, not {opt} "
                                   f"(--{opt} is for models that read {reads[opt]})")

    def load(self) -> tuple[Any, Any]:
        """The model (cached in-process by :func:`numerics.sources.models.load_model`, which checks a
        folder's files, configuration and tokenizer before it reads the weights) and the corpus
        (:meth:`corpus`, read once). A model path's own refusals that need no reading (no such path,
        a pickle, an ``auto_map``: :func:`~numerics.sources.models.check_files`) come first, then the
        corpus (a bad ``--texts`` / ``--images`` is refused before a model is loaded), then the model."""
        from numerics.sources.models import MAX_TOKENS, check_files, load_model

        check_files(self.model, self.allow_pickle)      # a bad path, pickle or auto_map: before any reading
        corpus = self.corpus()
        if self.reads_audio:                            # its own token limits (1500 encoder, 448 decoder positions)
            from numerics.sources.models import load_whisper

            return load_whisper(self.model, self.max_tokens), corpus
        model = load_model(self.model, allow_pickle=self.allow_pickle,
                           max_tokens=MAX_TOKENS if self.max_tokens is None else self.max_tokens)
        return model, corpus


@dataclass(frozen=True)
class Plan:
    """The models a run measures (:class:`ModelRun`, in order), the seed of their random baselines,
    whether it is the ``--full`` plan (:class:`verification.plan.Plan`), and the user's statements
    (``--check``, from the ``--theory`` files) checked on every head of every model.

    >>> quick = Plan.for_verify(0, False)
    >>> quick.command(), [m.model for m in quick.models]
    ('attnbounds verify --only trained --seed 0', ['minilm', 'smollm2', 'gemma3', 'antiberty', 'dinov2'])
    >>> Plan((ModelRun("dinov2", None, 1, images="cat.png"),)).command()
    'attnbounds rollout --model dinov2 --images cat.png --limit 1'
    >>> Plan((ModelRun("minilm", None, 40, 128),), 2).command()
    'attnbounds rollout --model minilm --limit 40 --max-tokens 128 --seed 2'
    """

    models: tuple[ModelRun, ...]
    seed: int = 0
    full: bool = False
    checks: tuple[str, ...] = ()      # --check: statements decided on every head (run_check)
    theories: tuple[str, ...] = ()    # --theory: the files that register them (for command())

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        """Every embedded model of the main job (:func:`verification.measure.text.main_models`: the larger
        decoders with ``full`` only), each on the main job's inputs (:data:`verification.measure.text.QUICK`,
        or :data:`~verification.measure.text.FULL_OF` / :data:`~verification.measure.text.FULL`) of its corpus
        (:func:`verification.measure.text.texts_of`)."""
        from verification.measure.text import main_models, settings, texts_of

        return cls(tuple(ModelRun(name, texts_of(name), **settings(name, full)) for name in main_models(full)), seed,
                   full)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds rollout [--model] [--texts] [--limit] [--max-tokens] [--allow-pickle] [--full]
        [--theory FILE.py --check ID ...]``: one model (on its own corpus when it has one and ``--texts`` is
        not given: AntiBERTy reads antibody V genes); with ``--full`` the full plan's inputs unless
        ``--limit`` / ``--max-tokens`` say otherwise; each ``--check`` a statement decided on every
        head (:func:`run_check`)."""
        from verification.measure.text import FULL, FULL_OF, texts_of

        from numerics.sources.models import WHISPER, WHISPER_STREAMS

        names = tuple(WHISPER_STREAMS) if args.model == WHISPER else (args.model,)   # Whisper: both streams
        runs = []
        for name in names:
            base = FULL_OF.get(name, FULL) if args.full else {}
            texts = args.texts if args.texts is not None else texts_of(name)   # antiberty: its antibody corpus
            runs.append(ModelRun(name, texts, args.limit if args.limit is not None else base.get("limit"),
                                 args.max_tokens if args.max_tokens is not None else base.get("max_tokens"),
                                 args.allow_pickle, getattr(args, "images", None), getattr(args, "audio", None)))
        return cls(tuple(runs), args.seed, bool(args.full),
                   tuple(dict.fromkeys(getattr(args, "check", None) or ())),
                   tuple(getattr(args, "theory", None) or ()) if getattr(args, "check", None) else ())

    def check(self) -> None:
        """Every model run's settings against what loading it requires, nothing loaded: ``limit``
        a positive integer (the corpus readers), ``max_tokens`` an integer >= 2 (D1 needs two tokens;
        :func:`numerics.sources.models.load_model`), texts for a text model and images for an image
        model; InvalidInput naming the first that fails. (What only loading can tell, a folder without
        a tokenizer or an image model's fixed token count, is refused by :func:`prepare` before the
        store is opened.)"""
        for m in self.models:
            if m.limit is not None and (isinstance(m.limit, bool) or not isinstance(m.limit, int) or m.limit < 1):
                raise InvalidInput(f"--limit {m.limit!r} for model {m.model!r}: must be a positive integer")
            if m.max_tokens is not None and (isinstance(m.max_tokens, bool) or not isinstance(m.max_tokens, int)
                                             or m.max_tokens < 2):
                raise InvalidInput(f"--max-tokens {m.max_tokens!r} for model {m.model!r}: must be an integer >= 2 "
                                   "(D1 needs two tokens)")
            m.check_inputs()

    def check_installed(self) -> None:
        """The packages of every embedded model of the plan are installed (located, nothing imported or
        read): InvalidInput naming the missing ones and the command that installs them (``make setup``;
        ``make setup-full`` for the full plan's larger decoders), which ``attnbounds verify`` and
        ``rollout`` raise before their store is opened (:func:`numerics.sources.embedded.require_installed`)."""
        from numerics.sources.embedded import require_installed
        from numerics.sources.models import WHISPER, WHISPER_STREAMS

        require_installed(WHISPER if m.model in WHISPER_STREAMS else m.model for m in self.models)

    def is_main(self) -> bool:
        """Whether this is the main job's plan (``attnbounds verify --only trained [--full]``)."""
        return self == Plan.for_verify(self.seed, self.full)

    def campaigns(self) -> tuple[str, ...]:
        """The baseline campaign, then each model's measurement: its name ends in the weights'
        fingerprint, so the model is loaded (cached) to name it."""
        runs = self.measured()
        return (baseline_campaign(self.seed),) + tuple(r.campaign for r in runs) + \
            tuple(c for r in runs for c in r.checks.values())

    def measured(self) -> tuple["Measured", ...]:
        """Each model run as measured (:func:`measured`), with the campaigns of the ``--check`` statements."""
        return tuple(measured(m, self.checks) for m in self.models)

    def command(self) -> str:
        """The main job's plan: ``attnbounds verify --only trained --seed S [--full]``; any other:
        the ``attnbounds rollout`` line of each model (joined by ``&&``), which plans it again."""
        from verification.measure.text import rollout_line, trained_command

        if self.is_main():
            return trained_command(self.seed, self.full)
        import shlex

        tail = "".join(f" --theory {shlex.quote(f)}" for f in self.theories)
        tail += "".join(f" --check {shlex.quote(c)}" for c in self.checks)
        return " && ".join(rollout_line(m.model, m.texts, m.limit, m.max_tokens, m.allow_pickle, self.seed, self.full,
                                        m.images, m.audio) + tail for m in self.models)

    def provenance(self) -> dict[str, Any]:
        """Seed, preset (quick / full), the models (a folder or file by its name only, never a path
        of this machine), their corpora, input limits and token limits, and the baseline campaign."""
        from pathlib import Path

        from numerics.sources.audio import DEFAULT_NAME as BUNDLED_SPEECH
        from numerics.sources.images import DEFAULT_NAME as BUNDLED_PHOTOS

        def named(x: Optional[str], default: str) -> str:
            return default if x is None else Path(x).name

        def each(values: Any) -> str:
            return ", ".join(str(v) for v in values)
        return {"seed": self.seed, "preset": "full" if self.full else "quick",
                "models": each(named(m.model, "") for m in self.models),
                "corpora": each(named(m.audio, BUNDLED_SPEECH) if m.reads_audio else named(m.images, BUNDLED_PHOTOS)
                                if m.reads_images else named(m.texts, "default") for m in self.models),
                "inputs": each("all" if m.limit is None else m.limit for m in self.models),
                "max tokens": each("default" if m.max_tokens is None else m.max_tokens for m in self.models),
                "baselines": baseline_campaign(self.seed),
                **({"checks": each(self.checks)} if self.checks else {})}


def prepare(plan: Plan, first_input: bool = False) -> None:
    """Load every corpus and model of ``plan`` (the models stay cached in-process for :func:`run`):
    what is wrong with them (an absent or empty ``--texts``, an absent ``--model``, a pickle, an
    ``auto_map``, a folder without a tokenizer, a weight of the wrong dtype) is refused here, before
    the command opens (and so creates) its store. ``first_input`` (a store not made yet): each model's
    first input is measured too and its attention checked
    (:func:`verification.measure.attention.check_instance`: NaN, a row with no mass on its token set),
    and what the ``--check`` statements bind read on it (:meth:`~numerics.sources.models.LoadedModel.states`:
    a mask that is not causal), so that a model refused on it is refused before a store exists; the
    run reuses that attention. A ``--check`` whose symbol the model cannot bind (:func:`bindable`) is
    refused first; before anything, every embedded model's packages (:meth:`Plan.check_installed`)."""
    plan.check_installed()
    for m in plan.models:
        model, corpus = m.load()
        bindings = {c: bindable(model, c) for c in plan.checks}      # a symbol the model cannot bind: refused
        if first_input and corpus.inputs:
            inst = model.instance(corpus.inputs[0])
            check_instance(inst)
            _MEASURED[(model.name, model.fingerprint, inst.input, inst.sha)] = inst
            kinds = tuple(sorted({k for b in bindings.values() for k in b.kinds} - {"stochastic"}))
            if kinds:      # the scores and layer inputs read on the first input (a mask refused now)
                model.states(corpus.inputs[0], kinds)


_MEASURED: dict = {}      # the attention prepare() measured, (model, fingerprint, input, sha) -> instance, used once


def measure_input(model: Any, text_input: Any, comparison: bool = True, float_tests: bool = False,
                  controls: bool = False) -> list:
    """A rollout chunk: :func:`verification.measure.attention.input_records`, with the attention
    :func:`prepare` already measured for this (model, input) when it did."""
    from verification.measure.attention import instance_records

    inst = _MEASURED.pop((model.name, model.fingerprint, text_input.id, text_input.sha), None)
    if inst is None:
        return input_records(model, text_input, comparison, float_tests, controls)
    return instance_records(inst, comparison, float_tests, controls)


@dataclass(frozen=True)
class Measured:
    """One model run as its campaigns name it: the campaign, the loaded model, the corpus's name,
    the (id, sha) keys of its inputs, and the campaign of each ``--check`` statement ({theorem id: name})."""

    campaign: str
    model: Any
    corpus: str
    inputs: frozenset
    checks: dict


def measured(run: ModelRun, checks: tuple = ()) -> Measured:
    """The :class:`Measured` of ``run`` (the model loaded, cached in-process: its fingerprint ends the
    campaign's name) and of the statements ``checks`` on it."""
    model, corpus = run.load()
    return Measured(campaign_name(model, corpus.name), model, corpus.name,
                    frozenset((t.id, t.sha) for t in corpus.inputs),
                    {c: campaign_of(model, corpus.name, c) for c in checks})


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """Every model of ``plan`` on its inputs (resumed, one chunk per input), then the random
    baselines at the token counts measured (resumed), model by model, in this process: a model is
    loaded once and its inputs run against it, so an ``executor`` (which would ship the model to
    every chunk) is refused. What ran: a :class:`verification.plan.RunResult`."""
    import time

    if executor is not None:
        raise InvalidInput("trained transformers run in this process (each model loaded once); "
                           "they take no executor (--workers, --scheduler)")

    with recording("trained") as result:
        for m in plan.models:
            if console is not None:
                console.rule(f"trained transformers: {m.model}")
            t0 = time.perf_counter()
            model, corpus = m.load()
            for note in corpus.notes:
                if console is not None:
                    console.print(f"[dim]corpus: {note}[/dim]")
            name = run_campaign(model, corpus, store, console)
            if console is not None and hasattr(model, "functional") and model.causal:   # Whisper's decoder: transcripts
                for t in corpus.inputs:
                    console.print(functional_line(model, t), markup=False, highlight=False, soft_wrap=True)
            keys = {(t.id, t.sha) for t in corpus.inputs}
            t1 = time.perf_counter()
            measure_baselines(store, name, keys, plan.seed, console)
            if console is not None:
                console.print(f"[dim]{model.name}: {len(keys)} inputs measured in {t1 - t0:.1f} s, random baselines "
                              f"at matched n in {time.perf_counter() - t1:.1f} s[/dim]")
            for theorem_id in plan.checks:      # --check: a user's statement on every head
                run_check(model, corpus, store, theorem_id, console)
    return result


def functional_line(model: Any, item: Any) -> str:
    """One line of a speech model's functional check on ``item``: its transcript, and the word
    errors against the recording's reference words when known."""
    f = model.functional(item)
    out = f"{model.name}: functional check, {item.id} ({f['audio_seconds']} s): transcript {f['transcript']!r}"
    if not f["transcript_complete"]:
        out += " (cut at the token limit)"
    if f["reference"] is None:
        return out + "; no reference transcript for this recording"
    return out + f"; {f['word_errors']} word errors in {f['reference_words']} reference words ({f['reference']!r})"


def measure_baselines(store: Any, campaign: str, keys: Optional[set], seed: int = 0, console: Any = None) -> str:
    """The random matrices of the same token counts as the inputs ``keys`` of ``campaign`` (every
    token set), D1 checked on each (resumed); the baseline campaign's name."""
    slots = baselines.baseline_slots(stored_sizes(store, campaign, keys))
    return baselines.run_baselines(store, TRAINED, baselines.slot_samples(slots), BASELINE_PER_INPUT, seed, console)


def stored_sizes(store: Any, campaign: str, inputs: Optional[set]) -> dict:
    """``{variant: {(input, text hash): kept tokens n}}`` of the inputs ``inputs`` (None: all) of
    ``campaign``, read from their layer-0 head-mean records (as
    :func:`verification.trained.findings.records.sizes_of` reads them for the tables)."""
    out: dict = {}
    for r in store.records(campaign=campaign):
        p = r["provenance"]
        if inputs is not None and (p["input"], p["text_sha"]) not in inputs:
            continue
        if r["theorem"] != "dobrushin.product" and p.get("head") is None and p["layer"] == 0:
            out.setdefault(p["variant"], {})[(p["input"], p["text_sha"])] = int(p["n"])
    return out


def run_campaign(model: Any, corpus: Any, store: Any, console: Any = None,
                 comparison: bool = True) -> str:
    """Measure every input of ``corpus`` not yet in the store (resume), one chunk per input text."""
    name = campaign_name(model, corpus.name)
    floats = bool(getattr(model, "float_tests", True))      # Whisper's encoder: a cut block, no float test
    chunks = [campaign.Chunk(chunk_key(t), measure_input, (model, t, comparison, floats, True)) for t in corpus.inputs]
    campaign.run(store, name, chunks, console=console, description=f"{model.name}: measuring")
    return name


# -- matched-n random baselines (docs/theory.md §2; the code: verification.measure.baselines) ---------

BASELINE_PER_INPUT = 10          # random matrices per (family, model input, token set)


def baseline_campaign(seed: int) -> str:
    """One campaign of random baselines per seed, shared by every model: a chunk is (family, n, c),
    the c-th random sample of size n (resumed whenever another model or input asks for it;
    :data:`verification.measure.baselines.TRAINED`)."""
    return TRAINED.campaign(seed, BASELINE_PER_INPUT)


def baseline_chunks(slots: dict, seed: int) -> list[campaign.Chunk]:
    """One chunk per (family, n, c) that ``slots`` (:func:`verification.measure.baselines.baseline_slots`)
    asks for (nothing run)."""
    return baselines.baseline_chunks(TRAINED, baselines.slot_samples(slots), BASELINE_PER_INPUT, seed)
