"""Stored records of the modalities campaigns -> one :class:`Stage` per (model, seed, checkpoint):
per-layer D1 equality counts, per-head counts, slacks, the D2 chain, the pair attaining delta where
equality fails, and the token count n of each token set. The text encoder and decoder rows as-is
come from the ``trained`` main job's campaigns (``attnbounds verify --only trained``; at the
matching quick / full settings, its inputs only) when the store holds them; otherwise they are
omitted and a note says so. Reads only the store (never recomputes).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from verification.modalities.checks import campaign_prefix
from verification.report.part import MissingCampaign
from verification.stats import wilson

TEXT_MODELS = {"minilm": "text encoder (MiniLM-L6)", "smollm2": "text decoder (SmolLM2-135M, 4-bit)"}
VARIANTS = ("all", "content")


@dataclass
class Stage:
    """One model at one checkpoint (or a text model), aggregated over its measured inputs."""

    model: str
    family: str
    campaign: str
    epoch: Optional[int] = None
    step: Optional[int] = None
    fraction: Optional[float] = None
    accuracy: Optional[float] = None
    weights: str = ""
    inputs: set = field(default_factory=set)
    tight: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))     # (variant, l) -> [k, n]
    heads: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))     # (variant, l) -> [k, n]
    slack: dict = field(default_factory=lambda: defaultdict(list))               # (variant, l) -> slacks
    chain: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))     # (variant, l) -> [k, n]
    fail_pairs: dict = field(default_factory=lambda: defaultdict(Counter))       # l -> pair kind counts
    sizes: dict = field(default_factory=dict)                                    # variant -> tokens n
    per_input: dict = field(default_factory=lambda: defaultdict(list))          # (variant, input) -> tight per layer
    seed: Optional[int] = None
    correct: int = 0
    created: float = 0.0          # newest record (picks the latest weights when several were measured)

    @property
    def layers(self) -> list[int]:
        return sorted({l for (_, l) in self.tight})

    @property
    def trained(self) -> bool:
        return self.epoch is None or self.epoch > 0

    @property
    def label(self) -> str:
        if self.epoch is None:
            return self.family
        stage = "init" if self.epoch == 0 else f"epoch {self.epoch}"
        return f"{self.model} {stage}"

    def share(self, variant: str, layer: int) -> Optional[float]:
        k, n = self.tight.get((variant, layer), (0, 0))
        return k / n if n else None

    def cell(self, variant: str, layer: int) -> str:
        k, n = self.tight.get((variant, layer), (0, 0))
        if not n:
            return "-"
        lo, hi = wilson(k, n)
        return f"{k}/{n} = {k / n:.2f} [{lo:.2f}, {hi:.2f}]"

    def input_shares(self, variant: str) -> list[float]:
        """Per input (sorted by id): the share of layers with D1 equality (head-averaged attention)."""
        return [sum(t) / len(t) for (v, _), t in sorted(self.per_input.items()) if v == variant and t]

    def mean_share(self, variant: str) -> Optional[float]:
        xs = [self.share(variant, l) for l in self.layers]
        xs = [x for x in xs if x is not None]
        return sum(xs) / len(xs) if xs else None


def pair_kind(pair: Any, n_special: Optional[int], registers: int, token: str) -> Optional[str]:
    """Which tokens carry the pair attaining delta (all-token variant): CLS, register or content."""
    if n_special is None or not pair or min(pair) < 0:
        return None

    def kind(i: int) -> str:
        return "CLS" if i == 0 else ("register" if i < n_special else token)
    return "-".join(sorted(kind(int(i)) for i in pair))


def add_record(st: Stage, r: dict) -> None:
    p = r["provenance"]
    v, l = p["variant"], p["layer"]
    st.inputs.add((p["input"], p.get("text_sha")))
    if p.get("n") is not None:
        st.sizes[v] = int(p["n"])
    if r["theorem"] == "dobrushin.product":
        c = st.chain[(v, l)]
        c[0] += r["verdict"] == "tight"
        c[1] += 1
        return
    tight = r["verdict"] == "tight"
    if p.get("head") is not None:
        c = st.heads[(v, l)]
    else:
        c = st.tight[(v, l)]
        st.per_input[(v, (p["input"], p.get("text_sha")))].append(tight)
        st.slack[(v, l)].append(r["slack"])
        if v == "all" and not tight:
            k = pair_kind(r["extra"].get("pair"), p.get("n_special"), int(p.get("registers") or 0),
                          p.get("token_kind", "content"))
            if k:
                st.fail_pairs[l][k] += 1
        if v == "all" and l == 0 and p.get("correct"):
            st.correct += 1
    c[0] += tight
    c[1] += 1


def stages_from(records: Iterable[dict]) -> dict[str, Stage]:
    """Group records by campaign into stages (provenance gives model, epoch, accuracy)."""
    out: dict[str, Stage] = {}
    for r in records:
        c = r["campaign"]
        if c not in out:
            p = r["provenance"]
            if "epoch" in p:
                out[c] = Stage(model=p["model"], family=p["family"], campaign=c, epoch=int(p["epoch"]),
                               step=int(p["step"]), fraction=float(p["fraction"]),
                               accuracy=float(p["test_accuracy"]), weights=p.get("weights", ""),
                               seed=int(p["seed"]) if "seed" in p else None)
            else:
                name = str(p["model"])
                out[c] = Stage(model=name, family=TEXT_MODELS.get(name, name), campaign=c)
        out[c].created = max(out[c].created, r["created"])
        add_record(out[c], r)
    return out


def modality_stages(store: Any, plan: Any, campaigns: Optional[list[str]] = None,
                    every_seed: bool = False) -> list[Stage]:
    """The stages of ``plan`` (:class:`verification.modalities.checks.Plan`: its preset, its base
    seed or, ``every_seed``, each seed of the preset; its models, None: all). ``campaigns``: exactly
    these (what a run just measured); None: every stored campaign of the preset, the newest per
    (model, seed, epoch) when several weights were measured (e.g. checkpoints trained again
    elsewhere)."""
    from numerics.modalities.presets import PRESETS

    if campaigns is not None:
        recs: Iterable[dict] = (r for c in campaigns for r in store.records(campaign=c))
    else:
        seeds = PRESETS[plan.preset].seed_list(plan.seed) if every_seed else (plan.seed,)
        recs = (r for s in seeds for r in store.records(campaign=campaign_prefix(plan.preset, s), prefix=True))
    found = {c: st for c, st in stages_from(recs).items() if not plan.models or st.model in plan.models}
    best: dict[tuple, Stage] = {}
    for st in found.values():
        key = (st.model, st.seed, st.epoch)
        if key not in best or st.created > best[key].created:
            best[key] = st
    order = {"vit": 0, "vit-reg": 1, "ft-cancer": 2, "ft-wine": 3}
    return sorted(best.values(), key=lambda s: (order.get(s.model, 9), s.model, s.seed or 0, s.epoch))


def text_stages(store: Any, plan: Any) -> tuple[list[Stage], str]:
    """The text encoder / decoder stages from the ``trained`` main job's campaigns at the quick
    settings (``plan.full``, the paper preset: full), its inputs only
    (:func:`verification.measure.text.find_campaign`: never another corpus, token limit or a user's
    longer run), and a note naming what was used or missing."""
    from verification.measure.text import find_campaign, model_need, rollout_command, trained_command

    out, notes = [], []
    for name, family in TEXT_MODELS.items():
        try:
            camp, recs = find_campaign(store, model_need(name, plan.full, trained_command(plan.seed, plan.full)))
        except MissingCampaign as exc:
            notes.append(f"{family}: no stored campaign {exc.campaign} (run `{rollout_command(name, plan.full)}`), "
                         "omitted")
            continue
        st = stages_from(recs)[camp]
        out.append(st)
        notes.append(f"{family}: campaign {st.campaign}, {len(st.inputs)} inputs")
    return out, "; ".join(notes)


def final(stages: list[Stage], model: str) -> Optional[Stage]:
    ms = [s for s in stages if s.model == model and s.epoch is not None]
    return max(ms, key=lambda s: s.epoch) if ms else None


def initial(stages: list[Stage], model: str) -> Optional[Stage]:
    return next((s for s in stages if s.model == model and s.epoch == 0), None)

