"""Vision and tabular transformers trained here: D1 equality per layer, measured by the
trained-model pipeline unchanged.

Plan: for each model of :data:`numerics.modalities.MODELS` at a preset, train (resuming from its
safetensors checkpoints), then for each kept checkpoint (epoch 0 = the initialisation baseline)
measure the first ``preset.test_limit`` test examples with
:func:`verification.measure.attention.instance_records`: D1's exact verdict on the head-averaged
attention and on every head, for all tokens and for content tokens (patches / features; CLS and
registers dropped, rows renormalised exactly), slack, the pair attaining delta, and the rollout
chain (D2) per layer. Nothing is measured twice and nothing is re-implemented here.

One campaign per checkpoint, named by preset, seed, model, epoch and the weights' fingerprint:
other weights are another campaign, never a resume. One chunk per block of test examples. Every
model is trained at ``preset.seeds`` seeds (``seed, seed + 1, ...``: each seed its own split,
initial weights and batch order), so a share has a spread across seeds; the base seed is measured
at every kept checkpoint, the others at initialisation and after training.

Beside the models, at the same token counts n (all tokens, and content tokens):

- random baselines (:func:`run_baselines`, :mod:`verification.measure.baselines`, its layout
  :data:`~verification.measure.baselines.MODALITIES`): ``preset.baseline_count`` matrices per family of
  :data:`verification.measure.baselines.FAMILIES` (Dirichlet rows; softmax of Gaussian logits at
  T = 0.25, 1, 4) and per n, drawn by :mod:`numerics.sources.random` and checked by the one batched
  check of Theorem D1 (:func:`numerics.dobrushin.batch.check_factor`: float filter, exact
  certification of the undecided); one chunk per (family, n);
- the text encoder at matched n (:func:`run_text`): the trained main job's MiniLM inputs
  (:func:`verification.measure.text.main_inputs`) with at least T tokens, the first
  ``preset.text_inputs`` of them cut to exactly T tokens (:class:`numerics.modalities.MatchedText`),
  measured by the same :func:`verification.measure.attention.instance_records`; one campaign per T.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from theory.errors import InvalidInput
from verification import campaign
from verification.measure import baselines
from verification.measure.baselines import MODALITIES
from verification.plan import RunResult, recording
from verification.store import Record

VERSION = "v1"
PREFIX = f"modalities-{VERSION}"

TEXT_MODEL = "minilm"
TEXT_SPECIAL = 2                 # MiniLM's special tokens in a cut input: [CLS] and [SEP]


@dataclass(frozen=True)
class Measured:
    """One measured checkpoint."""

    model: str
    epoch: int
    step: int
    accuracy: float
    campaign: str
    path: Path
    seed: int = 0
    tokens: int = 0          # all tokens of the model's inputs
    content: int = 0         # content tokens (CLS and registers dropped)


def campaign_prefix(preset: str, seed: int) -> str:
    return f"{PREFIX}:{preset}:s{seed}:"


def campaign_name(preset: str, seed: int, model: str, epoch: int, fingerprint: str) -> str:
    return f"{campaign_prefix(preset, seed)}{model}:e{epoch:04d}:w{fingerprint}"


def block_records(path: str, indices: Sequence[int], comparison: bool = True) -> list[Record]:
    """Every record of the test examples ``indices`` on the checkpoint at ``path`` (one chunk)."""
    from numerics.modalities import load_checkpoint
    from verification.measure.attention import instance_records

    src = load_checkpoint(path)
    items = src.data.items()
    insts = src.instances([items[i] for i in indices])
    return [r for inst in insts for r in instance_records(inst, comparison)]


def example_blocks(items: Sequence[Any], size: int) -> list[tuple[str, Sequence[Any]]]:
    """The blocks of ``size`` test examples, each with its chunk key (positions and content hash)."""
    out = []
    for start in range(0, len(items), size):
        block = items[start:start + size]
        h = hashlib.sha256("".join(it.sha for it in block).encode()).hexdigest()[:8]
        out.append((f"test{start}-{start + len(block) - 1}#{h}", block))
    return out


def chunks_of(path: Path, items: Sequence[Any], size: int) -> list[campaign.Chunk]:
    return [campaign.Chunk(key, block_records, (str(path), tuple(it.index for it in block)))
            for key, block in example_blocks(items, size)]


def measured_epochs(preset: Any, kind: str, s: int, seed: int) -> tuple[int, ...]:
    """The kept checkpoints measured at training seed ``s`` of a run of base seed ``seed``: every one
    at the base seed; the initialisation and the trained model at the others (what the seed table reads)."""
    epochs = preset.checkpoint_epochs(kind)
    return epochs if s == seed else tuple(e for e in epochs if e in (0, epochs[-1]))


@dataclass(frozen=True)
class Planned:
    """A checkpoint campaign :func:`run_plan` measures, known without training: its name up to the
    weights' fingerprint, its chunk keys, and the network's token counts (all, content)."""

    campaign: str
    chunks: frozenset
    tokens: int
    content: int


def planned(preset_name: str, seed: int, models: Optional[Sequence[str]] = None) -> list[Planned]:
    """Every checkpoint campaign :func:`run_plan` measures (:class:`Planned`), known without training."""
    from numerics.modalities import MODELS, PRESETS, load_dataset, spec_config

    preset = PRESETS[preset_name]
    out = []
    for s in preset.seed_list(seed):
        for name in models or tuple(MODELS):
            spec = MODELS[name]
            data = load_dataset(spec.dataset, s)
            cfg = spec_config(spec, preset, data.n_classes, data.x_train.shape[1])     # as train() builds it
            keys = frozenset(k for k, _ in example_blocks(data.items(preset.test_limit), preset.chunk))
            out += [Planned(campaign_name(preset.name, s, spec.name, e, ""), keys, cfg.tokens, cfg.tokens - cfg.n_special)
                    for e in measured_epochs(preset, spec.kind, s, seed)]
    return out


def run_plan(store: Any, preset_name: str, seed: int, root: Path, console: Any = None,
             models: Optional[Sequence[str]] = None, executor: Any = None) -> list[Measured]:
    """Train (resuming) and measure every checkpoint of every model at every seed of the preset
    (``preset.seed_list(seed)``); return what was measured."""
    from numerics.modalities import MODELS, PRESETS, load_checkpoint, train

    preset = PRESETS[preset_name]
    out: list[Measured] = []
    for s in preset.seed_list(seed):
        for name in models or tuple(MODELS):
            spec = MODELS[name]
            kept = train(spec, preset, s, Path(root), console)
            for ck in kept:
                if ck.epoch not in measured_epochs(preset, spec.kind, s, seed):
                    continue       # other seeds: initialisation and the trained model (what the seed table reads)
                src = load_checkpoint(ck.path)
                items = src.data.items(preset.test_limit)
                name_c = campaign_name(preset.name, s, spec.name, ck.epoch, ck.fingerprint)
                campaign.run(store, name_c, chunks_of(ck.path, items, preset.chunk), executor=executor,
                             console=console, description=f"{spec.name} seed {s} epoch {ck.epoch}: measuring",
                             progress=console is not None)
                cfg = src.config
                out.append(Measured(spec.name, ck.epoch, ck.step, ck.accuracy, name_c, ck.path, s, cfg.tokens,
                                    cfg.tokens - cfg.n_special))
    return out


# -- random baselines at the models' token counts -----------------------------------------------------

def baseline_campaign(seed: int, count: int) -> str:
    """The random baselines of one seed and sample size (every n in one campaign, a chunk per (family, n))."""
    return MODALITIES.campaign(seed, count)


def run_baselines(store: Any, sizes: Sequence[int], count: int, seed: int, console: Any = None) -> str:
    """Check every (family, n) sample of ``sizes`` the store lacks; the campaign's name."""
    return baselines.run_baselines(store, MODALITIES, baselines.size_samples(sizes), count, seed, console,
                                   description="random baselines at the models' n", progress=console is not None)


def baseline_chunks(sizes: Sequence[int], count: int, seed: int) -> list[campaign.Chunk]:
    """One chunk per (family, n) of ``sizes`` (nothing run)."""
    return baselines.baseline_chunks(MODALITIES, baselines.size_samples(sizes), count, seed)


# -- the text encoder at the models' token counts ----------------------------------------------------

def text_campaign(model: str, fingerprint: str, T: int, limit: int) -> str:
    """One campaign per (text model, weights, T, number of inputs): another preset's input count is
    another campaign, so a report reads exactly the inputs its preset chose."""
    return f"{text_prefix(model)}T{T}:k{limit}:w{fingerprint}"


def text_prefix(model: str) -> str:
    return f"{PREFIX}-text:{model}:"


def text_campaign_of(name: str) -> tuple[int, int]:
    """(T, number of inputs) of a :func:`text_campaign` name.

    >>> text_campaign_of(text_campaign("minilm", "ab12", 17, 4))
    (17, 4)
    """
    _, _, T, k = name.split(":")[:4]
    return int(T[1:]), int(k[1:])


def text_lengths(measured: Sequence[Measured]) -> list[int]:
    """The token counts T at which the text encoder is measured: each model's all-token count, and
    the count whose content tokens match the model's (``content + TEXT_SPECIAL``)."""
    return sorted({m.tokens for m in measured} | {m.content + TEXT_SPECIAL for m in measured})


def text_records(matched: Any, text_input: Any, T: int) -> list[Record]:
    """The D1 records of the head-averaged attention of one text cut to T tokens, per layer and token
    set (what the comparison reads; the per-head and rollout records of the same measurement are
    not stored, which keeps the store small)."""
    from verification.measure.attention import instance_records

    return [r for r in instance_records(matched.instance(text_input, T), comparison=False)
            if r.theorem == "dobrushin.factor" and r.provenance.get("head") is None]


def chosen_texts(matched: Any, inputs: Sequence[Any], T: int, limit: int) -> list:
    """The first ``limit`` inputs with at least T tokens (in the corpus's order)."""
    out = []
    for t in inputs:
        if len(out) >= limit:
            break
        if matched.fits(t, T):
            out.append(t)
    return out


def run_text(store: Any, matched: Any, inputs: Sequence[Any], lengths: Sequence[int], limit: int,
             console: Any = None) -> dict[int, str]:
    """Measure the text encoder at each T of ``lengths`` (resuming); ``{T: campaign}``."""
    from verification.measure.attention import chunk_key

    out = {}
    for T in lengths:
        name = text_campaign(matched.name, matched.fingerprint, T, limit)
        chunks = [campaign.Chunk(chunk_key(t), text_records, (matched, t, T))
                  for t in chosen_texts(matched, inputs, T, limit)]
        campaign.run(store, name, chunks, console=console, description=f"{matched.name} at T = {T}",
                     progress=console is not None)
        out[T] = name
    return out


# -- the family's plan (verification.family) -------------------------------------------------------

FULL_SCALES = ("the paper preset instead of the quick one: larger models trained longer, more seeds, more test "
               "examples and random baselines (numerics.modalities.presets)")


def checkpoint_root(out_dir: str | Path, checkpoints: Optional[str | Path] = None) -> Path:
    """Where checkpoints go: ``checkpoints`` when given, else ``ATTNBOUNDS_CHECKPOINTS``, else
    ``<out_dir>/checkpoints`` (the family adds ``modalities/``)."""
    import os

    if checkpoints is not None:
        return Path(checkpoints)
    env = os.environ.get("ATTNBOUNDS_CHECKPOINTS")
    return Path(env) if env else Path(out_dir) / "checkpoints"


@dataclass(frozen=True)
class Plan:
    """A preset (tiny, quick, paper) at a base seed, its models (None: all), where its checkpoints
    go (None: :func:`checkpoint_root` of the working folder, or of the job's ``--out`` through
    :meth:`at`), and the text model cut to the models' token counts (an embedded name, an object
    with the :class:`numerics.modalities.MatchedText` interface, or None: not measured). The
    ``--full`` plan is the paper preset (:attr:`full`); :class:`verification.plan.Plan`.

    >>> Plan.for_verify(0, False).command(), Plan.for_verify(2, True).full
    ('attnbounds modalities --preset quick --seed 0', True)
    >>> Plan("tiny", 1, ("vit", "ft-wine")).command()
    'attnbounds modalities --preset tiny --seed 1 --models vit,ft-wine'
    """

    preset: str = "quick"
    seed: int = 0
    models: Optional[tuple[str, ...]] = None
    checkpoints: Optional[Path] = None
    text: Any = TEXT_MODEL

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        return cls("paper" if full else "quick", seed)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds modalities [--preset | --full] [--models] [--checkpoints]``."""
        import os

        from verification.checkpoints import check_checkpoint_folder

        ckpt = checkpoint_root(args.out, args.checkpoints)
        # before the store is opened: a checkpoint folder that cannot be made is refused creating nothing
        check_checkpoint_folder(ckpt / "modalities", "--checkpoints" if args.checkpoints is not None else
                                "ATTNBOUNDS_CHECKPOINTS" if os.environ.get("ATTNBOUNDS_CHECKPOINTS") else "--out")
        plan = cls("paper" if args.full else args.preset, args.seed, args.models, ckpt)
        plan.check()
        return plan

    @property
    def full(self) -> bool:
        """Whether this is the plan of ``attnbounds verify --full`` (the paper preset)."""
        return self.preset == "paper"

    def command(self) -> str:
        """``attnbounds modalities --preset P --seed S [--models ...]``: where the checkpoints go is
        not in it (the campaigns are named by the weights' fingerprints, wherever they are kept), nor a
        text model given in Python (the command measures MiniLM)."""
        return (f"attnbounds modalities --preset {self.preset} --seed {self.seed}"
                + (f" --models {','.join(self.models)}" if self.models else ""))

    def provenance(self) -> dict[str, Any]:
        """Seed, preset, the training seeds, the models and the text model at matched n."""
        from numerics.modalities.presets import MODELS, PRESETS

        text = self.text if self.text is None or isinstance(self.text, str) else getattr(self.text, "name", "given")
        return {"seed": self.seed, "preset": self.preset,
                "seeds": ", ".join(map(str, PRESETS[self.preset].seed_list(self.seed))),
                "models": ", ".join(self.models or tuple(MODELS)), "text": "none" if text is None else text}

    def check(self) -> None:
        """Every checkpoint's network against what building it requires (:func:`planned`: the
        configuration :func:`numerics.modalities.train` builds, from each model's data set at each
        training seed), and the preset's training and measuring settings, nothing trained:
        InvalidInput naming the first that fails."""
        import math

        from numerics.modalities.presets import MODELS, PRESETS

        if self.preset not in PRESETS:
            raise InvalidInput(f"--preset {self.preset!r}: one of {', '.join(PRESETS)}")
        for name in self.models or ():
            if name not in MODELS:
                raise InvalidInput(f"--models: unknown model {name!r}; known: {', '.join(MODELS)}")
        p = PRESETS[self.preset]

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise InvalidInput(f"modalities preset {p.name!r}: {what}")

        for name in ("epochs", "tab_epochs", "batch", "chunk", "seeds", "baseline_count", "text_inputs"):
            v = getattr(p, name)
            need(not isinstance(v, bool) and isinstance(v, int) and v >= 1, f"{name} = {v!r}: must be an integer >= 1")
        for name in ("test_limit", "train_limit"):
            v = getattr(p, name)
            need(v is None or (not isinstance(v, bool) and isinstance(v, int) and v >= 1),
                 f"{name} = {v!r}: must be None or an integer >= 1")
        need(math.isfinite(p.lr) and p.lr > 0, f"lr = {p.lr!r}: must be finite and > 0")
        need(bool(p.fractions) and all(0 <= f <= 1 for f in p.fractions),
             f"fractions = {p.fractions!r}: checkpoints are kept at fractions of training in [0, 1]")
        planned(self.preset, self.seed, self.models)       # every network's configuration, as train() builds it

    def at(self, out_dir: str | Path) -> "Plan":
        """This plan with its checkpoints under the job's ``out_dir`` (unless it names a folder)."""
        from dataclasses import replace

        return self if self.checkpoints is not None else replace(self, checkpoints=checkpoint_root(out_dir))

    def campaigns(self) -> tuple[str, ...]:
        """The checkpoint campaigns (up to the weights' fingerprint) and the baseline campaign."""
        from numerics.modalities.presets import PRESETS

        return tuple(dict.fromkeys(c.campaign for c in planned(self.preset, self.seed, self.models))) + (
            baseline_campaign(self.seed, PRESETS[self.preset].baseline_count),)


def measured_campaigns(store: Any, plan: Plan) -> list[str]:
    """The stored checkpoint campaigns of ``plan``: per planned name, the one of its weights'
    fingerprints written last (as the paper's stages read them)."""
    out = []
    for c in planned(plan.preset, plan.seed, plan.models):
        found = store.campaigns(c.campaign)
        if found:
            out.append(max(found, key=lambda c: found[c]))
    return out


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> RunResult:
    """Train (resuming) at every seed of the preset, measure (resuming), check the random baselines
    and the text encoder at the models' token counts; what ran (what was measured, checkpoint by
    checkpoint: :func:`run_plan`)."""
    import time

    from numerics.modalities.presets import PRESETS

    p = PRESETS[plan.preset]
    root = (plan.checkpoints if plan.checkpoints is not None else checkpoint_root(".")) / "modalities"
    with recording("modalities") as result:
        t0 = time.perf_counter()
        measured = run_plan(store, plan.preset, plan.seed, root, console, plan.models, executor)
        t1 = time.perf_counter()
        sizes = {m.tokens for m in measured} | {m.content for m in measured}
        run_baselines(store, sorted(sizes), p.baseline_count, plan.seed, console)
        t2 = time.perf_counter()
        measure_text(store, plan, measured, console)
    if console is not None:
        console.print(f"[dim]modalities ({plan.preset}): {len(measured)} checkpoints over seeds "
                      f"{list(p.seed_list(plan.seed))} in {t1 - t0:.1f} s, random baselines at n = {sorted(sizes)} in "
                      f"{t2 - t1:.1f} s, text at matched n in {time.perf_counter() - t2:.1f} s; checkpoints under "
                      f"{root}[/dim]")
    return result


def measure_text(store: Any, plan: Plan, measured: Sequence[Measured], console: Any) -> list[str]:
    """The text encoder cut to each model's token count (:func:`run_text`) on the trained main
    job's inputs; the campaigns measured."""
    from numerics.modalities.presets import PRESETS
    from numerics.modalities.text import MatchedText
    from verification.measure.text import FULL, QUICK, main_inputs

    text = plan.text
    if text is None:
        return []
    full = plan.full
    if isinstance(text, str):
        from numerics.sources.models import load_model

        # the trained main job's token limit: the model is loaded once per process (cached)
        tokens = (FULL if full else QUICK[text])["max_tokens"]
        text = MatchedText(load_model(text, max_tokens=tokens))
    inputs = main_inputs("minilm", full)
    return list(run_text(store, text, inputs, text_lengths(measured), PRESETS[plan.preset].text_inputs,
                         console).values())
