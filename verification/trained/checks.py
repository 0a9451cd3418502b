"""Trained transformers: how often Theorem D1's equality holds, and how tight rollout is, per layer,
on the embedded text models and any model folder (``attnbounds rollout``).

Each (model, input) is measured by :func:`verification.measure.attention.instance_records` (D1 per
head and head-averaged on every token set, the rollout chain, comparison bounds). One results-store
chunk per (model, input text): a rerun resumes. Reports: verification.trained.report.

Random baselines at matched size (docs/theory.md §2): for every input and token set, the c-th input
with n kept tokens gets :data:`BASELINE_PER_INPUT` fresh random n x n matrices of each family of
:data:`BASELINE_FAMILIES` (Dirichlet(1) rows; softmax of Gaussian logits at T = 0.25, 1, 4, a fixed
range, not fitted to the model), D1 decided exactly on each; one chunk per (family, n, c) in the
seed's baseline campaign, shared by every model (:func:`run_baselines`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from verification import campaign
from verification.measure.attention import campaign_name, chunk_key, input_records, verdict_of
from verification.store import Record

FULL_SCALES = ("every model on 300 inputs at up to 512 tokens (quick: MiniLM 120, SmolLM2 12 and Gemma 3 12 inputs "
               "of the English corpus, AntiBERTy 24 antibody V genes, at up to 128 tokens), with their matched-n random "
               "baselines")


@dataclass(frozen=True)
class ModelRun:
    """One model measured on one corpus: an embedded name or a path (``--model``), the corpus
    (``--texts``; None: the default), its first ``limit`` inputs, truncated at ``max_tokens``."""

    model: str
    texts: Optional[str] = None
    limit: Optional[int] = None
    max_tokens: Optional[int] = None
    allow_pickle: bool = False

    def load(self) -> tuple[Any, Any]:
        """The model (cached in-process by :func:`numerics.sources.models.load_model`) and the corpus."""
        from numerics.sources.corpus import load_corpus
        from numerics.sources.models import MAX_TOKENS, load_model

        model = load_model(self.model, allow_pickle=self.allow_pickle,
                           max_tokens=MAX_TOKENS if self.max_tokens is None else self.max_tokens)
        return model, load_corpus(self.texts, limit=self.limit)


@dataclass(frozen=True)
class Plan:
    """The models a run measures (:class:`ModelRun`, in order) and the seed of their random baselines."""

    models: tuple[ModelRun, ...]
    seed: int = 0

    @classmethod
    def for_verify(cls, seed: int, full: bool) -> "Plan":
        """Every embedded model, each on the main job's inputs (:data:`verification.measure.text.QUICK`,
        or :data:`~verification.measure.text.FULL` for every model) of its corpus
        (:func:`verification.measure.text.texts_of`)."""
        from verification.measure.text import FULL, QUICK, texts_of

        return cls(tuple(ModelRun(name, texts_of(name), **(FULL if full else quick)) for name, quick in QUICK.items()),
                   seed)

    @classmethod
    def from_args(cls, args: Any) -> "Plan":
        """``attnbounds rollout [--model] [--texts] [--limit] [--max-tokens] [--allow-pickle] [--full]``:
        one model (on its own corpus when it has one and ``--texts`` is not given: AntiBERTy reads antibody
        V genes); with ``--full`` the full plan's inputs unless ``--limit`` / ``--max-tokens`` say otherwise."""
        from verification.measure.text import FULL, texts_of

        base = FULL if args.full else {}
        texts = args.texts if args.texts is not None else texts_of(args.model)   # antiberty: its antibody corpus
        return cls((ModelRun(args.model, texts, args.limit if args.limit is not None else base.get("limit"),
                             args.max_tokens if args.max_tokens is not None else base.get("max_tokens"),
                             args.allow_pickle),), args.seed)

    def campaigns(self) -> tuple[str, ...]:
        """The baseline campaign, then each model's measurement: its name ends in the weights'
        fingerprint, so the model is loaded (cached) to name it."""
        return (baseline_campaign(self.seed),) + tuple(measured(m)[0] for m in self.models)


def measured(run: ModelRun) -> tuple[str, Any, set]:
    """The campaign of ``run``, its loaded model, and the (id, sha) keys of its inputs."""
    model, corpus = run.load()
    return campaign_name(model, corpus.name), model, {(t.id, t.sha) for t in corpus.inputs}


def run(plan: Plan, store: Any, executor: Any = None, console: Any = None) -> None:
    """Every model of ``plan`` on its inputs (resumed, one chunk per input), then the random
    baselines at the token counts measured (resumed), model by model; serially."""
    import time

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
            console.print(f"[dim]{model.name}: {len(keys)} inputs measured in {t1 - t0:.1f} s, random baselines at "
                          f"matched n in {time.perf_counter() - t1:.1f} s[/dim]")


def measure_baselines(store: Any, campaign: str, keys: Optional[set], seed: int = 0, console: Any = None) -> str:
    """The random matrices of the same token counts as the inputs ``keys`` of ``campaign`` (every
    token set), D1 checked on each (resumed); the baseline campaign's name."""
    return run_baselines(store, baseline_slots(stored_sizes(store, campaign, keys)), seed, console)


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
    chunks = [campaign.Chunk(chunk_key(t), input_records, (model, t, comparison, True)) for t in corpus.inputs]
    campaign.run(store, name, chunks, console=console, description=f"{model.name}: measuring")
    return name


# -- matched-n random baselines (docs/theory.md §2: random baselines beside each trained share) ------

BASELINE_FAMILIES = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4")
BASELINE_PER_INPUT = 10          # random matrices per (family, model input, token set)
BASELINE_VERSION = "v1"
BASELINE_CHUNK_OFFSET = 1_000_000  # baseline chunks draw from generators the Dobrushin campaign never uses


def baseline_campaign(seed: int) -> str:
    """One campaign of random baselines per seed, shared by every model: a chunk is (family, n, c),
    the c-th random sample of size n (resumed whenever another model or input asks for it)."""
    return f"trained-baseline-{BASELINE_VERSION}-seed{seed}-m{BASELINE_PER_INPUT}"


def baseline_slots(sizes: dict) -> dict:
    """``{variant: {input key: n}}`` -> ``{variant: {input key: (n, c)}}``: the c-th input (in sorted
    key order) of its variant with ``n`` kept tokens gets the random sample (n, c), so inputs of the
    same size never share random matrices (the pooled share is then a share of independent draws)."""
    out: dict = {}
    for v, by in sizes.items():
        seen: dict = {}
        out[v] = {}
        for key in sorted(by):
            n = int(by[key])
            out[v][key] = (n, seen.get(n, 0))
            seen[n] = seen.get(n, 0) + 1
    return out


def baseline_chunk_key(family: str, n: int, c: int) -> str:
    return f"{family}/n{n}/c{c}"


def baseline_chunk(family: str, n: int, c: int, count: int, seed: int) -> list[Record]:
    """``count`` random n x n matrices of ``family`` (:mod:`numerics.sources.random`), D1 decided
    exactly on each (:func:`numerics.dobrushin.factor_check`): one record per matrix."""
    from numerics.dobrushin import factor_check
    from numerics.sources.random import GENERATOR, generator, sample

    A = sample(family, n, count, generator(seed, family, n, BASELINE_CHUNK_OFFSET + c))
    fc = factor_check(A)
    prov = dict(generator=GENERATOR, chunk_offset=BASELINE_CHUNK_OFFSET, seed=seed, family=family, n=n, c=c)
    return [Record("dobrushin.factor", f"{baseline_chunk_key(family, n, c)}/i{k}", verdict_of(fc.equality[k]),
                   slack=float(fc.slack[k]), value=(1 + float(fc.delta[k])) / 2 - float(fc.slack[k]),
                   bound=(1 + float(fc.delta[k])) / 2,
                   provenance=dict(prov, index=k),
                   extra=dict(exact=bool(fc.exact[k]), through_first=bool(fc.through_first[k])))
            for k in range(count)]


def run_baselines(store: Any, slots: dict, seed: int, console: Any = None) -> str:
    """Draw and check every random sample that ``slots`` (:func:`baseline_slots`) asks for and the
    store lacks; return the campaign name."""
    name = baseline_campaign(seed)
    campaign.run(store, name, baseline_chunks(slots, seed), console=console, description="random baselines at matched n")
    return name


def baseline_chunks(slots: dict, seed: int) -> list[campaign.Chunk]:
    """One chunk per (family, n, c) that ``slots`` (:func:`baseline_slots`) asks for (nothing run)."""
    wanted = sorted({nc for by in slots.values() for nc in by.values()})
    return [campaign.Chunk(baseline_chunk_key(f, n, c), baseline_chunk, (f, n, c, BASELINE_PER_INPUT, seed))
            for f in BASELINE_FAMILIES for n, c in wanted if n >= 2]
