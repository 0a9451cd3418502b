"""Trained transformers: how often Theorem D1's equality holds, and how tight rollout is, per layer,
on the embedded text models and any model folder, and on the vision transformer DINOv2 and any ONNX
export, on images (``attnbounds rollout --model dinov2 [--images DIR|FILE,...]``).

Each (model, input) is measured by :func:`verification.measure.attention.instance_records` (D1 per
head and head-averaged on every token set, the rollout chain, comparison bounds). One results-store
chunk per (model, input text or image): a rerun resumes. Reports: verification.trained.report.

Random baselines at matched size (docs/theory.md §2, :mod:`verification.measure.baselines`): for
every input and token set, the c-th input with n kept tokens gets :data:`BASELINE_PER_INPUT` fresh
random n x n matrices of each family of :data:`verification.measure.baselines.FAMILIES`
(Dirichlet(1) rows; softmax of Gaussian logits at T = 0.25, 1, 4, a fixed range, not fitted to the
model), D1 decided exactly on each; one chunk per (family, n, c) in the seed's baseline campaign,
shared by every model (:func:`measure_baselines`).

A user's statement checked on every attention head (``attnbounds rollout --theory FILE.py --check
ID``): a registered theorem over :mod:`theory.expr` without a parameter (a model gives no value for
one: refused in one line). For every input, layer l and head h, its matrix symbols are bound to what
the model computes on the input's tokens (all of them), each value the model's float32, widened
exactly (:meth:`numerics.sources.models.LoadedModel.states`, :mod:`numerics.sources.states`):

- a stochastic symbol (``A``, ``stochastic("D")``): the head's attention probabilities, each row
  standing for itself divided by its exact sum (the floats the suite's D1 measurement reads,
  :func:`verification.measure.attention.instance_records`);
- a logits symbol (``logits("L")``): the head's pre-softmax scores as the model scales and masks
  them (what transformers' eager attention passes to ``softmax``; an ONNX file's Softmax input). A
  bidirectional model masks nothing: the head's attention is ``softmax(L)``. A causal model's mask
  is made explicit: the entries above the diagonal are bound to 0 and the head's attention is
  ``softmax(L, mask="causal")`` (a statement about ``softmax(L)`` there speaks of the matrix with
  zeros above the diagonal). Any other mask is refused;
- a tokens symbol (``tokens("X")``): the layer's input hidden states, n x d with d the model's
  width, the same on every head of the layer;
- the sizes ``n`` (the input's tokens) and ``d`` from these values.

The rollout chain: the k-th symbol of each kind, in the statement's order (A, B, C, then by name),
is bound at layer l + k - 1, on the same head index h: ``delta(B * A) <= delta(A) * delta(B)`` is
checked with A the attention of head h at layer l and B that of head h at layer l + 1, for every
first layer l with a chain inside the model (L - 1 rows of the table for a chain of two); a chain
longer than the model is refused in one line, and so is a symbol a model cannot bind (an ONNX
file whose layer inputs are not found: its reason), naming the model and the symbol.
:func:`numerics.expr.decide` gives each (layer, head) a certified verdict (holds / tight / violated
/ not-applicable / undecided; a head outside the theorem's ``assume`` or ``where=`` is
not-applicable; undecided where no exact or certified method decided within its budget, never
counted as holds or tight).

One campaign per (model, corpus, theorem), named by :func:`campaign_of` (the theorem id and a digest
of its statement and hypotheses: an edited statement is another campaign, never a resume), one chunk
per input text (:func:`verification.measure.attention.chunk_key`). A chunk stores its verdict counts
per layer as its summary (keyed by the theorem id) and one record per violated head (its layer, head,
and for a chain its ``layers``): for a *proved* or *sanity* theorem a ``violated`` verdict (a proved
theorem's stops the run loudly: the campaign runner's :class:`~theory.verdicts.ViolationError`), for
a conjecture a ``refuted`` outcome (a finding, stored and reported). Each record carries the float
sides with their rigorous error bounds (the enclosure the verdict was certified from, or the exact
path's) and its ``margin`` rhs - lhs: exact (``p/q``, with the exact sides ``lhs``, ``rhs``) for a
statement whose sides are rational (:func:`rational_program`) on a small head (:data:`EXACT_SIDES_MAX_N`
tokens, :data:`EXACT_SIDES_MAX_WORK` for a product with tokens: the rational sides of a product of two
128 x 128 matrices take a minute), else the certified enclosure ``mid +/- radius`` of the float sides
(``margin_exact`` false: an exponential of a nonzero rational is irrational, and its exact sides on a
head of 30 tokens take seconds), all as the statement writes them, with its ``relation``
(:func:`as_written`).

>>> statement_digest("mine.square", "delta(A**2) <= delta(A)**2")
'1b08141f6fa7'
>>> first, second = layer_counts(np.array([0, 1, 2, 3, 4, 0], dtype=np.int8), 2)   # 2 layers of 3 heads
>>> first, second["not-applicable"], second["undecided"]
({'holds': 1, 'tight': 1, 'violated': 1, 'not-applicable': 0, 'undecided': 0}, 1, 1)
"""
from __future__ import annotations

import argparse
import hashlib
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from theory.errors import InvalidInput

from verification import campaign
from verification.measure import baselines
from verification.measure.attention import campaign_name, check_instance, chunk_key, input_records
from verification.measure.baselines import TRAINED
from verification.plan import RunResult, recording

FULL_SCALES = ("every text model on 300 inputs at up to 512 tokens and DINOv2 on all 19 bundled photographs (quick: "
               "MiniLM 120, SmolLM2 6 and Gemma 3 6 inputs of the English corpus, AntiBERTy 48 antibody V genes, "
               "at up to 128 tokens, DINOv2 4 photographs at 257 tokens), with their matched-n random baselines")


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
    # the corpus once read (load): the command plans, runs and reports from the same inputs, read once
    _corpus: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def reads_images(self) -> bool:
        """An image model (``dinov2``, ``FILE.onnx``: :func:`numerics.sources.onnx_attention.is_onnx`)."""
        from numerics.sources.onnx_attention import is_onnx

        return is_onnx(self.model)

    def corpus(self) -> Any:
        """The inputs (texts, or images for an image model: :mod:`numerics.sources.images`), read on
        the first call and kept: planning, measuring and reporting one run read them once; ``--texts``
        with an image model or ``--images`` with a text model is refused."""
        from numerics.sources.corpus import load_corpus
        from numerics.sources.images import load_images

        if "corpus" in self._corpus:
            return self._corpus["corpus"]
        if self.reads_images:
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

    def load(self) -> tuple[Any, Any]:
        """The model (cached in-process by :func:`numerics.sources.models.load_model`, which checks a
        folder's files, configuration and tokenizer before it reads the weights) and the corpus
        (:meth:`corpus`, read once). A model path's own refusals that need no reading (no such path,
        a pickle, an ``auto_map``: :func:`~numerics.sources.models.check_files`) come first, then the
        corpus (a bad ``--texts`` / ``--images`` is refused before a model is loaded), then the model."""
        from numerics.sources.models import MAX_TOKENS, check_files, load_model

        check_files(self.model, self.allow_pickle)      # a bad path, pickle or auto_map: before any reading
        corpus = self.corpus()
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
        """Every embedded model, each on the main job's inputs (:data:`verification.measure.text.QUICK`,
        or :data:`~verification.measure.text.FULL` for every model) of its corpus
        (:func:`verification.measure.text.texts_of`)."""
        from verification.measure.text import QUICK, settings, texts_of

        return cls(tuple(ModelRun(name, texts_of(name), **settings(name, full)) for name in QUICK), seed, full)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds rollout [--model] [--texts] [--limit] [--max-tokens] [--allow-pickle] [--full]
        [--theory FILE.py --check ID ...]``: one model (on its own corpus when it has one and ``--texts`` is
        not given: AntiBERTy reads antibody V genes); with ``--full`` the full plan's inputs unless
        ``--limit`` / ``--max-tokens`` say otherwise; each ``--check`` a statement decided on every
        head (:func:`run_check`)."""
        from verification.measure.text import FULL, FULL_OF, texts_of

        base = FULL_OF.get(args.model, FULL) if args.full else {}
        texts = args.texts if args.texts is not None else texts_of(args.model)   # antiberty: its antibody corpus
        return cls((ModelRun(args.model, texts, args.limit if args.limit is not None else base.get("limit"),
                             args.max_tokens if args.max_tokens is not None else base.get("max_tokens"),
                             args.allow_pickle, getattr(args, "images", None)),), args.seed, bool(args.full),
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
            if m.reads_images and m.texts is not None:
                raise InvalidInput(f"--texts {m.texts!r}: model {m.model!r} reads images, not texts")
            if not m.reads_images and m.images is not None:
                raise InvalidInput(f"--images {m.images!r}: model {m.model!r} reads texts, not images")

    def is_main(self) -> bool:
        """Whether this is the main job's plan (``attnbounds verify --only trained [--full]``)."""
        return self == Plan.for_verify(self.seed, self.full)

    def campaigns(self) -> tuple[str, ...]:
        """The baseline campaign, then each model's measurement: its name ends in the weights'
        fingerprint, so the model is loaded (cached) to name it."""
        out = (baseline_campaign(self.seed),) + tuple(measured(m)[0] for m in self.models)
        for m in self.models if self.checks else ():
            model, corpus = m.load()
            out += tuple(campaign_of(model, corpus.name, c) for c in self.checks)
        return out

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
                                        m.images) + tail for m in self.models)

    def provenance(self) -> dict[str, Any]:
        """Seed, preset (quick / full), the models (a folder or file by its name only, never a path
        of this machine), their corpora, input limits and token limits, and the baseline campaign."""
        from pathlib import Path

        from numerics.sources.images import DEFAULT_NAME as BUNDLED_PHOTOS

        def named(x: Optional[str], default: str) -> str:
            return default if x is None else Path(x).name

        def each(values: Any) -> str:
            return ", ".join(str(v) for v in values)
        return {"seed": self.seed, "preset": "full" if self.full else "quick",
                "models": each(named(m.model, "") for m in self.models),
                "corpora": each(named(m.images, BUNDLED_PHOTOS) if m.reads_images else named(m.texts, "default")
                                for m in self.models),
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
    refused first."""
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


def measured(run: ModelRun) -> tuple[str, Any, set]:
    """The campaign of ``run``, its loaded model, and the (id, sha) keys of its inputs."""
    model, corpus = run.load()
    return campaign_name(model, corpus.name), model, {(t.id, t.sha) for t in corpus.inputs}


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """Every model of ``plan`` on its inputs (resumed, one chunk per input), then the random
    baselines at the token counts measured (resumed), model by model; serially. What ran: a
    :class:`verification.plan.RunResult`."""
    import time

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
            keys = {(t.id, t.sha) for t in corpus.inputs}
            t1 = time.perf_counter()
            measure_baselines(store, name, keys, plan.seed, console)
            if console is not None:
                console.print(f"[dim]{model.name}: {len(keys)} inputs measured in {t1 - t0:.1f} s, random baselines "
                              f"at matched n in {time.perf_counter() - t1:.1f} s[/dim]")
            for theorem_id in plan.checks:      # --check: a user's statement on every head
                run_check(model, corpus, store, theorem_id, console)
    return result


def measure_baselines(store: Any, campaign: str, keys: Optional[set], seed: int = 0, console: Any = None) -> str:
    """The random matrices of the same token counts as the inputs ``keys`` of ``campaign`` (every
    token set), D1 checked on each (resumed); the baseline campaign's name."""
    slots = baselines.baseline_slots(stored_sizes(store, campaign, keys))
    return baselines.run_baselines(store, TRAINED, baselines.slot_samples(slots), BASELINE_PER_INPUT, seed, console)


def stored_sizes(store: Any, campaign: str, inputs: Optional[set]) -> dict:
    """``{variant: {(input, text hash): kept tokens n}}`` of the inputs ``inputs`` (None: all) of
    ``campaign``, read from their layer-0 head-mean records (as
    :func:`verification.trained.report.sizes_of` reads them for the tables)."""
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
    chunks = [campaign.Chunk(chunk_key(t), measure_input, (model, t, comparison, True, True)) for t in corpus.inputs]
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


# -- a user's statement on every head (``--check``; see the module docstring) ------------------------

CHECK_VERSION = "v1"      # bump when what a --check chunk stores changes
EXACT_SIDES_MAX_N = 32    # violated heads with at most this many tokens carry their exact sides ...
EXACT_SIDES_MAX_WORK = EXACT_SIDES_MAX_N ** 3   # ... when n * n * max(n, d) is at most this (A * X: n x n x d)
VERDICT_NAMES = ("holds", "tight", "violated", "not-applicable", "undecided")   # numerics.expr.decide's codes 0..4
CHECK_METHOD = "numerics.expr.decide on the head's float32 attention, rows renormalised exactly"
KIND_WORDS = {"stochastic": "the head's attention", "logits": "the head's pre-softmax scores",
              "tokens": "the layer's input hidden states"}


@dataclass(frozen=True)
class Binding:
    """What each matrix symbol of a statement is bound to on a model (module docstring): ``symbols``
    ((name, kind, offset), ...), the k-th symbol of each kind (in the statement's order: A, B, C, then
    by name) at offset k - 1 from the chain's first layer; ``chain`` the number of consecutive layers.

    >>> from theory.expr import A, B, delta, logits, softmax, tokens, spread
    >>> from numerics.expr import compile_statement
    >>> b = binding_of(compile_statement(delta(B * A) <= delta(A) * delta(B)))
    >>> b.symbols, b.chain
    ((('A', 'stochastic', 0), ('B', 'stochastic', 1)), 2)
    >>> print(binding_of(compile_statement(spread(softmax(logits("L")) * tokens("X")) <= spread(tokens("X")))).words())
    L: the head's pre-softmax scores at layer l; X: the layer's input hidden states at layer l
    """

    symbols: tuple
    chain: int

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in ("stochastic", "logits", "tokens") if any(kind == k for _, kind, _ in self.symbols))

    def words(self) -> str:
        """Each symbol and what it is bound to, for a table's caption."""
        return "; ".join(f"{name}: {KIND_WORDS[kind]} at layer l{f' + {off}' if off else ''}"
                         for name, kind, off in self.symbols)


def binding_of(compiled: Any) -> Binding:
    """The :class:`Binding` of a compiled statement."""
    seen: dict = {}
    symbols = []
    for name in compiled.matrices:
        kind = compiled.role(name)
        symbols.append((name, kind, seen.get(kind, 0)))
        seen[kind] = seen.get(kind, 0) + 1
    return Binding(tuple(symbols), max(seen.values(), default=1))


def compiled_of(th: Any) -> Any:
    """The theorem's statement compiled with its hypotheses (``assume``, ``where``)."""
    from numerics.expr import compile_statement

    return compile_statement(th.statement, th.assume, th.where)


def checkable(theorem_id: str) -> Any:
    """The registered theorem ``theorem_id`` if rollout can check it on each head (a statement over
    :mod:`theory.expr` without a parameter); else InvalidInput, one line saying why."""
    from theory import registry

    registry.load_all()
    th = registry.REGISTRY.get(theorem_id)
    if th is None:
        known = ", ".join(sorted(k for k, t in registry.REGISTRY.items() if t.is_expr)) or "none"
        raise InvalidInput(f"{theorem_id!r}: no such theorem (register it in a file given with --theory FILE.py; "
                           f"statements over theory.expr registered now: {known})")
    if not th.is_expr:
        raise InvalidInput(f"{theorem_id}: its statement is not over theory.expr; rollout checks statements over "
                           "theory.expr (A and any stochastic symbol, logits, tokens) on each head")
    params = [name for name, _, _ in compiled_of(th).params]
    if params:
        raise InvalidInput(f"{theorem_id}: the statement has the parameter {', '.join(params)}, and a model gives "
                           "no value for a parameter; rollout checks statements whose symbols a model computes "
                           "(stochastic: attention, logits: pre-softmax scores, tokens: layer inputs); write a "
                           "value in its place, or check it with attnbounds stress")
    return th


def bindable(model: Any, theorem_id: str) -> Binding:
    """The binding of ``theorem_id`` on ``model``, or InvalidInput in one line naming the model and
    the symbol it cannot bind (a kind the model cannot read: its ``unbound`` reason; a chain longer
    than the model's layers)."""
    from theory import get

    b = binding_of(compiled_of(get(theorem_id)))
    kinds = getattr(model, "symbol_kinds", ("stochastic",))
    for name, kind, _ in b.symbols:
        if kind not in kinds:
            why = getattr(model, "unbound", {}).get(kind, "it reads attention probabilities only")
            raise InvalidInput(f"--check {theorem_id}: model {model.name} cannot bind {name} (a {kind} symbol, "
                               f"{KIND_WORDS[kind]}): {why}")
    layers = int(model.layers)
    if b.chain > layers:
        names = ", ".join(f"{name} at layer l + {off}" for name, _, off in b.symbols if off)
        raise InvalidInput(f"--check {theorem_id}: a chain of {b.chain} consecutive layers ({names}) on model "
                           f"{model.name}, which has {layers} layer{'s' if layers > 1 else ''}")
    return b


def theorem_arg(text: str) -> str:
    """``--check THEOREM_ID`` (argparse type): the id, if :func:`checkable`."""
    try:
        return checkable(text).id
    except InvalidInput as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


theorem_arg.__name__ = "theorem id"


def statement_digest(theorem_id: str, statement: str, assume: tuple = (), where: tuple = ()) -> str:
    """12 hex digits of sha256 over the id and the statement's text (and its ``assume`` / ``where``
    hypotheses, when it has any): in the campaign name."""
    text = f"{theorem_id}\n{statement}"
    if assume:
        text += f"\nassume={','.join(assume)}"
    if where:
        text += "\nwhere=" + "; ".join(str(w) for w in where)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def digest_of(theorem_id: str) -> str:
    from theory import get

    th = get(theorem_id)
    return statement_digest(theorem_id, str(th.statement), tuple(th.assume), tuple(th.where))


def campaign_of(model: Any, corpus_name: str, theorem_id: str) -> str:
    """The campaign of ``theorem_id`` on ``model``'s attention heads over the corpus ``corpus_name``:
    the theorem id, its statement's digest, and what names the model's own campaign (its name, the
    corpus, the token limit, the weights' fingerprint)."""
    return (f"trained-check-{CHECK_VERSION}:{theorem_id}:{digest_of(theorem_id)}:{model.name}:{corpus_name}"
            f":max{model.max_tokens}:w{model.fingerprint}")


def head_batch(attention: np.ndarray) -> np.ndarray:
    """(L, H, T, T) float64 attention as the (L*H, T, T) batch :func:`numerics.expr.decide` reads:
    float32 when the values are float32 (the model's own floats, widened exactly: narrowed back
    exactly, and validated at float32's row-sum tolerance), else as they are."""
    L, H, T, _ = attention.shape
    heads = attention.reshape(L * H, T, T)
    narrow = heads.astype(np.float32)
    return narrow if np.array_equal(narrow, heads) else heads


def layer_counts(codes: np.ndarray, layers: int) -> list[dict[str, int]]:
    """Verdict counts per layer of the (L*H,) codes, layer-major."""
    per = np.asarray(codes).reshape(layers, -1)
    return [{name: int((row == k).sum()) for k, name in enumerate(VERDICT_NAMES)} for row in per]


def _float(x: Any) -> Optional[float]:
    x = float(x)
    return x if math.isfinite(x) else None


def as_written(compiled: Any, extra: dict) -> dict:
    """The sides of a head's record (exact ``lhs``/``rhs``, floats ``lhs_float``/``rhs_float`` and their
    error bounds ``err``) and its ``relation`` as the statement writes them (a ``>=`` statement's left
    side is ``lhs``); the record's ``value``/``bound``/``slack`` keep the bound's normal form (value <= bound)."""
    floats = compiled.as_written(extra["lhs_float"], extra["rhs_float"])
    errs = compiled.as_written(*extra["err"])
    exact = compiled.as_written(extra["lhs"], extra["rhs"])
    return dict(lhs=exact["lhs"], rhs=exact["rhs"], relation=exact["relation"], lhs_float=floats["lhs"],
                rhs_float=floats["rhs"], err=[errs["lhs"], errs["rhs"]])


def symbol_values(binding: Binding, heads: np.ndarray, states: dict, layer: int) -> dict:
    """``{symbol: (H, rows, cols)}``: the values of every symbol on the H heads of the chain that starts
    at ``layer``: ``heads`` (L, H, T, T) the attention (:func:`head_batch`'s floats), ``states`` what
    the model read besides (:meth:`numerics.sources.models.LoadedModel.states`: ``logits`` (L, H, T, T),
    ``tokens`` (L, T, d), the same on every head of a layer)."""
    H = heads.shape[1]
    out = {}
    for name, kind, off in binding.symbols:
        if kind == "stochastic":
            out[name] = heads[layer + off]
        elif kind == "logits":
            out[name] = states["logits"][layer + off]
        else:
            X = states["tokens"][layer + off]
            out[name] = np.broadcast_to(X, (H,) + X.shape)
    return out


IRRATIONAL = frozenset({"softmax", "exp", "log", "tanh", "rpow", "slem", "norm_fro"})   # nodes of irrational value


def rational_program(compiled: Any) -> bool:
    """Whether every node of ``compiled`` is rational on rational values (no softmax, exp, log, tanh,
    root, eigenvalue, Frobenius norm): then a head's sides are exact rationals.

    >>> from theory.expr import A, delta, exp, logits, ptp, softmax
    >>> from numerics.expr import compile_statement
    >>> L = logits("L")
    >>> rational_program(compile_statement(delta(A**2) <= delta(A)))
    True
    >>> rational_program(compile_statement(delta(softmax(L)) <= 1 - exp(-ptp(L))))
    False
    """
    return not any(node.op in IRRATIONAL or (node.op == "fn" and node.name in IRRATIONAL) for node in compiled.nodes)


def exact_record_sides(compiled: Any, values: dict, n: int, d: int) -> Optional[dict]:
    """The exact sides of one violated head (``values``: {symbol: one matrix}) when they are rational
    (:func:`rational_program`) and cheap (:data:`EXACT_SIDES_MAX_N`, :data:`EXACT_SIDES_MAX_WORK`):
    ``lhs``, ``rhs`` and the ``margin`` rhs - lhs as ``p/q``, and ``slack`` the margin rounded once;
    else None."""
    from numerics.expr import exact_sides

    if not rational_program(compiled) or n > EXACT_SIDES_MAX_N or n * n * max(n, d) > EXACT_SIDES_MAX_WORK:
        return None
    lhs, rhs = exact_sides(compiled, values)
    return dict(lhs=str(lhs), rhs=str(rhs), margin=str(rhs - lhs), slack=float(rhs - lhs))


def certified_margin(lhs: float, rhs: float, err: Any) -> Optional[str]:
    """rhs - lhs as a certified enclosure ``mid +/- radius`` from the float sides and their rigorous
    error bounds ``err`` (the subtraction's rounding included), both floats written exactly (repr);
    None where a side is not finite.

    >>> certified_margin(0.5, 0.25, [1e-17, 2e-17])
    '-0.25 +/- 5.775557561562896e-17'
    """
    if lhs is None or rhs is None or not all(e is not None and math.isfinite(e) for e in err):
        return None
    mid = rhs - lhs
    rad = (err[0] + err[1] + abs(mid) * 2.0 ** -53) * (1 + 2.0 ** -50)
    return f"{mid!r} +/- {rad!r}"


def head_checks(model: Any, text_input: Any, theorem_id: str, digest: str) -> Any:
    """The chunk of one input: ``theorem_id`` decided on every head of ``model`` on ``text_input``
    (see the module docstring); ``digest``: the statement's, as the campaign was named with (a
    statement changed since is refused: it would be stored under the old name)."""
    from numerics.expr import decide
    from theory import get
    from theory.verdicts import Outcome, Verdict, vocabulary
    from verification.store import Record, outcome_record

    th = get(theorem_id)
    if digest_of(theorem_id) != digest:
        raise InvalidInput(f"{theorem_id}: its statement changed while the run was planned")
    compiled = compiled_of(th)
    binding = bindable(model, theorem_id)
    extra_kinds = tuple(k for k in binding.kinds if k != "stochastic")
    inst, states = model.states(text_input, extra_kinds) if extra_kinds else (model.instance(text_input), {})
    check_instance(inst, ("all",))          # NaN: refused naming the model, input, layer and head
    L, H, T, _ = inst.attention.shape
    heads = head_batch(inst.attention).reshape(L, H, T, T)
    dim = int(states["tokens"].shape[-1]) if "tokens" in states else 0
    starts = L - binding.chain + 1          # the chains' first layers
    codes = np.zeros((starts, H), dtype=np.int8)
    decisions, per_layer = [], []
    for l in range(starts):
        values = symbol_values(binding, heads, states, l)
        d = decide(compiled, values, assume=th.assume)
        codes[l] = d.codes
        decisions.append(d)
        per_layer.append(values)
    summary = {"statement": str(th.statement), "n": int(T), "heads": int(H),
               "layers": layer_counts(codes.reshape(-1), starts),
               "exact": int(sum(d.exact.sum() for d in decisions)),
               "rational": int(sum(d.rational.sum() for d in decisions))}
    if binding.kinds != ("stochastic",) or binding.chain > 1:
        summary.update(binding=binding.words(), chain=binding.chain)
    if dim:
        summary["d"] = dim
    outcomes = vocabulary(th.category) is Outcome
    method = CHECK_METHOD if binding.symbols == (("A", "stochastic", 0),) else \
        f"numerics.expr.decide on the model's float32 values ({binding.words()}), attention rows renormalised exactly"
    records = []
    for l, h in zip(*np.nonzero(codes == 2)):
        l, h = int(l), int(h)
        d = decisions[l]
        lhs, rhs = _float(d.lhs[h]), _float(d.rhs[h])
        slack = None if lhs is None or rhs is None else rhs - lhs
        extra = dict(lhs_float=lhs, rhs_float=rhs, err=[_float(e) for e in d.err[h]], equal=bool(d.equal[h]),
                     strict=bool(compiled.strict), path="rational" if d.rational[h] else
                     ("certificate" if d.exact[h] else "float"), lhs=None, rhs=None)
        one = {name: np.asarray(v[h]) for name, v in per_layer[l].items()}
        got = exact_record_sides(compiled, one, int(T), dim)
        if got is not None:
            extra.update(lhs=got["lhs"], rhs=got["rhs"], margin=got["margin"], margin_exact=True)
            lhs, rhs, slack = float(Fraction(got["lhs"])), float(Fraction(got["rhs"])), got["slack"]
        else:
            extra.update(margin=certified_margin(lhs, rhs, extra["err"]), margin_exact=False)
        extra.update(as_written(compiled, extra))
        prov = dict(inst.provenance, variant="all", n=int(T), layer=l, head=h, statement=str(th.statement))
        if binding.chain > 1:
            prov["layers"] = list(range(l, l + binding.chain))
        instance = f"{inst.model}|{inst.input}#{inst.sha}|all|L{l}|H{h}"
        sides = dict(slack=slack, value=lhs, bound=rhs, provenance=prov)
        if outcomes:
            records.append(outcome_record(theorem_id, instance, "refuted", 0.0 if sides["slack"] is None
                                          else -sides["slack"], None, method, extra=extra, **sides))
        else:
            records.append(Record(theorem_id, instance, Verdict.VIOLATED, extra=extra, **sides))
    return campaign.ChunkResult(records, {theorem_id: summary})


def run_check(model: Any, corpus: Any, store: Any, theorem_id: str, console: Any = None) -> Any:
    """``theorem_id`` on every head of every input of ``corpus`` not yet stored (resume); the
    :class:`~verification.campaign.CampaignResult` (a proved theorem's violation: ViolationError,
    after its chunk is stored)."""
    name, digest = campaign_of(model, corpus.name, theorem_id), digest_of(theorem_id)
    chunks = [campaign.Chunk(chunk_key(t), head_checks, (model, t, theorem_id, digest)) for t in corpus.inputs]
    return campaign.run(store, name, chunks, console=console, description=f"{model.name}: checking {theorem_id}")
