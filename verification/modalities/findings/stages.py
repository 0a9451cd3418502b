"""Stored records of the modalities campaigns -> one frozen :class:`Stage` per (model, seed,
checkpoint): per-layer D1 equality shares, per-head shares, slacks, the D2 chain, the pair attaining
delta where equality fails, and the token count n of each token set. The text encoder and decoder
as-is come from the ``trained`` main job's campaigns (``attnbounds verify --only trained``; at the
matching quick / full settings, its inputs only) when the store holds them (:class:`TextSource`
says which campaign, or which is missing). Each campaign is read through its verified chunks only.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from verification.findings import Share
from verification.report.part import MissingCampaign

TEXT_MODELS = {"minilm": "text encoder (MiniLM-L6)", "smollm2": "text decoder (SmolLM2-135M, 4-bit)"}
VARIANTS = ("all", "content")
ORDER = {"vit": 0, "vit-reg": 1, "ft-cancer": 2, "ft-wine": 3}


@dataclass(frozen=True)
class Stage:
    """One model at one checkpoint (or a text model), aggregated over its measured inputs: per
    (variant, layer) the Wilson share of inputs with D1 equality (``tight``, head-averaged), of heads
    (``heads``) and of rollout chains (``chain``), the slacks, per layer the counts of the token kinds
    carrying the pair that attains delta where equality fails (all tokens), per variant the token
    count n and each input's share of layers with equality (``input_shares``, inputs in id order)."""

    model: str
    family: str
    campaign: str
    epoch: Optional[int] = None
    step: Optional[int] = None
    fraction: Optional[float] = None
    accuracy: Optional[float] = None
    weights: str = ""
    seed: Optional[int] = None
    inputs: frozenset = frozenset()
    tight: Mapping[tuple, Share] = field(default_factory=dict)
    heads: Mapping[tuple, Share] = field(default_factory=dict)
    chain: Mapping[tuple, Share] = field(default_factory=dict)
    slack: Mapping[tuple, tuple] = field(default_factory=dict)
    fail_pairs: Mapping[int, Mapping[str, int]] = field(default_factory=dict)
    sizes: Mapping[str, int] = field(default_factory=dict)
    input_shares: Mapping[str, tuple] = field(default_factory=dict)
    created: float = 0.0          # newest record

    @property
    def layers(self) -> list[int]:
        return sorted({l for (_, l) in self.tight})

    @property
    def trained(self) -> bool:
        return self.epoch is None or self.epoch > 0

    def share(self, variant: str, layer: int) -> Optional[float]:
        s = self.tight.get((variant, layer))
        return s.value if s is not None and s.n else None

    def mean_share(self, variant: str) -> Optional[float]:
        xs = [self.share(variant, l) for l in self.layers]
        xs = [x for x in xs if x is not None]
        return sum(xs) / len(xs) if xs else None

    def fails(self) -> Counter:
        """The token kinds of the pairs attaining delta where equality fails, over every layer."""
        out: Counter = Counter()
        for c in self.fail_pairs.values():
            out.update(c)
        return out


@dataclass(frozen=True)
class TextSource:
    """Where a text model's stage as-is comes from: its stored ``campaign`` and number of inputs, or
    (``campaign`` None) the campaign it lacks (``missing``) and the command that stores it."""

    model: str
    family: str
    campaign: Optional[str] = None
    inputs: int = 0
    missing: str = ""
    command: str = ""


def pair_kind(pair: Any, n_special: Optional[int], registers: int, token: str) -> Optional[str]:
    """Which tokens carry the pair attaining delta (all-token variant): CLS, register or content."""
    if n_special is None or not pair or min(pair) < 0:
        return None

    def kind(i: int) -> str:
        return "CLS" if i == 0 else ("register" if i < n_special else token)
    return "-".join(sorted(kind(int(i)) for i in pair))


class _Tally:
    """The counts of one stage while its records are read (made a :class:`Stage` by :meth:`stage`)."""

    def __init__(self, head: dict) -> None:
        self.head = head
        self.inputs: set = set()
        self.tight: dict = defaultdict(lambda: [0, 0])
        self.heads: dict = defaultdict(lambda: [0, 0])
        self.chain: dict = defaultdict(lambda: [0, 0])
        self.slack: dict = defaultdict(list)
        self.fail_pairs: dict = defaultdict(Counter)
        self.sizes: dict = {}
        self.per_input: dict = defaultdict(list)
        self.created = 0.0

    def add(self, r: dict) -> None:
        p = r["provenance"]
        v, l = p["variant"], p["layer"]
        self.created = max(self.created, r["created"])
        self.inputs.add((p["input"], p.get("text_sha")))
        if p.get("n") is not None:
            self.sizes[v] = int(p["n"])
        tight = r["verdict"] == "tight"
        if r["theorem"] == "dobrushin.product":
            c = self.chain[(v, l)]
        elif p.get("head") is not None:
            c = self.heads[(v, l)]
        else:
            c = self.tight[(v, l)]
            self.per_input[(v, (p["input"], p.get("text_sha")))].append(tight)
            self.slack[(v, l)].append(r["slack"])
            if v == "all" and not tight:
                k = pair_kind(r["extra"].get("pair"), p.get("n_special"), int(p.get("registers") or 0),
                              p.get("token_kind", "content"))
                if k:
                    self.fail_pairs[l][k] += 1
        c[0] += tight
        c[1] += 1

    def stage(self) -> Stage:
        shares = lambda d: {key: Share.wilson(k, n) for key, (k, n) in d.items()}  # noqa: E731
        per_input = {v: tuple(sum(t) / len(t) for (w, _), t in sorted(self.per_input.items()) if w == v and t)
                     for v in dict.fromkeys(v for v, _ in self.per_input)}
        return Stage(**self.head, inputs=frozenset(self.inputs), tight=shares(self.tight), heads=shares(self.heads),
                     chain=shares(self.chain), slack={k: tuple(v) for k, v in self.slack.items()},
                     fail_pairs={l: dict(c) for l, c in self.fail_pairs.items()}, sizes=dict(self.sizes),
                     input_shares=per_input, created=self.created)


def stage_head(campaign: str, p: dict) -> dict:
    """A stage's identity from a record's provenance (model, epoch, accuracy; a text model: its name)."""
    if "epoch" in p:
        return dict(model=p["model"], family=p["family"], campaign=campaign, epoch=int(p["epoch"]),
                    step=int(p["step"]), fraction=float(p["fraction"]), accuracy=float(p["test_accuracy"]),
                    weights=p.get("weights", ""), seed=int(p["seed"]) if "seed" in p else None)
    name = str(p["model"])
    return dict(model=name, family=TEXT_MODELS.get(name, name), campaign=campaign)


def stages_from(records: Iterable[dict]) -> dict[str, Stage]:
    """Group records by campaign into stages (provenance gives model, epoch, accuracy)."""
    out: dict[str, _Tally] = {}
    for r in records:
        c = r["campaign"]
        if c not in out:
            out[c] = _Tally(stage_head(c, r["provenance"]))
        out[c].add(r)
    return {c: t.stage() for c, t in out.items()}


def verified_records(store: Any, campaign: str) -> Iterable[dict]:
    """The records of ``campaign`` in its verified chunks (their content matches their marks)."""
    done = store.done_chunks(campaign)
    return (r for r in store.records(campaign=campaign) if r["chunk"] in done)


def modality_stages(store: Any, plan: Any, every_seed: bool = False) -> list[Stage]:
    """The stages of ``plan`` (:class:`verification.modalities.checks.Plan`: its preset, its base
    seed or, ``every_seed``, each seed of the preset; its models, None: all): the checkpoint
    campaigns it plans, per planned name the one of its weights' fingerprints written last
    (:func:`verification.modalities.checks.measured_campaigns`), each through its verified chunks."""
    from verification.modalities.checks import measured_campaigns

    found = stages_from(r for c in measured_campaigns(store, plan) for r in verified_records(store, c))
    keep = [st for st in found.values() if every_seed or st.seed == plan.seed]
    return sorted(keep, key=lambda s: (ORDER.get(s.model, 9), s.model, s.seed or 0, s.epoch))


def text_stages(store: Any, plan: Any) -> tuple[list[Stage], list[TextSource]]:
    """The text encoder / decoder stages from the ``trained`` main job's campaigns at the quick
    settings (``plan.full``, the paper preset: full), its inputs only
    (:func:`verification.measure.text.find_campaign`: never another corpus, token limit or a user's
    longer run), and per text model where its stage came from or what is missing."""
    from verification.measure.text import find_campaign, model_need, rollout_command, trained_command

    out, sources = [], []
    for name, family in TEXT_MODELS.items():
        try:
            camp, recs = find_campaign(store, model_need(name, plan.full, trained_command(plan.seed, plan.full)))
        except MissingCampaign as exc:
            sources.append(TextSource(name, family, missing=exc.campaign, command=rollout_command(name, plan.full)))
            continue
        st = stages_from(recs)[camp]
        out.append(st)
        sources.append(TextSource(name, family, st.campaign, len(st.inputs)))
    return out, sources


def final(stages: Iterable[Stage], model: str) -> Optional[Stage]:
    ms = [s for s in stages if s.model == model and s.epoch is not None]
    return max(ms, key=lambda s: s.epoch) if ms else None


def initial(stages: Iterable[Stage], model: str) -> Optional[Stage]:
    return next((s for s in stages if s.model == model and s.epoch == 0), None)
