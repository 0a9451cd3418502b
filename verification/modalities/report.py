"""Stored records of the modalities campaigns -> per-(model, checkpoint, layer) statistics, their
tables (:func:`parts`: each defined once, for the files and the paper alike) and figures, and the
files of the command line and the main job (:func:`write_report`: Markdown, CSV, PNG, PDF).

Reads only the store (never recomputes). The text encoder and decoder rows come from the
``trained`` main job's campaigns (``attnbounds verify --only trained``; at the matching quick / full
settings, its inputs only) when the store holds them; otherwise they are omitted and the caption
says so.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from verification.modalities.checks import campaign_prefix
from verification.report.aggregate import median
from verification.report.part import MissingCampaign
from verification.report.stats import wilson
from verification.report.tables import Table, print_table

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
                               accuracy=float(p["test_accuracy"]), weights=p.get("weights", ""))
            else:
                name = str(p["model"])
                out[c] = Stage(model=name, family=TEXT_MODELS.get(name, name), campaign=c)
        out[c].created = max(out[c].created, r["created"])
        add_record(out[c], r)
    return out


def modality_stages(store: Any, preset: str, seed: int, campaigns: Optional[list[str]] = None) -> list[Stage]:
    """The stages of one preset and seed. ``campaigns``: exactly these (what a run just measured);
    None: every stored campaign of the preset, the newest per (model, epoch) when several
    weights were measured (e.g. checkpoints trained again elsewhere)."""
    if campaigns is not None:
        recs = (r for c in campaigns for r in store.records(campaign=c))
    else:
        recs = store.records(campaign=campaign_prefix(preset, seed), prefix=True)
    found = stages_from(recs)
    best: dict[tuple, Stage] = {}
    for st in found.values():
        key = (st.model, st.epoch)
        if key not in best or st.created > best[key].created:
            best[key] = st
    order = {"vit": 0, "vit-reg": 1, "ft-cancer": 2, "ft-wine": 3}
    return sorted(best.values(), key=lambda s: (order.get(s.model, 9), s.model, s.epoch))


def text_stages(store: Any, full: bool = False, seed: int = 0) -> tuple[list[Stage], str]:
    """The text encoder / decoder stages from the ``trained`` main job's campaigns at the quick
    (``full``: full) settings, its inputs only (:func:`verification.trained.paper.find_campaign`:
    never another corpus, token limit or a user's longer run), and a note naming what was used or
    missing."""
    from verification.trained.paper import find_campaign, rollout_command

    out, notes = [], []
    for name, family in TEXT_MODELS.items():
        try:
            camp, recs = find_campaign(store, name, full, seed)
        except MissingCampaign as exc:
            notes.append(f"{family}: no stored campaign {exc.campaign} (run `{rollout_command(name, full)}`), "
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


def side_by_side(stages: list[Stage], texts: list[Stage]) -> tuple[list, list]:
    """Rows = layers; one column per (model, init / trained) and per text model; each cell the
    share of inputs with D1 equality, all tokens / content tokens."""
    cols_st: list[Stage] = []
    for m in dict.fromkeys(s.model for s in stages):
        cols_st += [s for s in (initial(stages, m), final(stages, m)) if s is not None]
    cols_st += texts
    cols = ["layer"]
    for s in cols_st:
        acc = "" if s.accuracy is None else f", acc {s.accuracy:.3f}"
        cols.append(f"{s.label} (n={len(s.inputs)}{acc})")
    depth = max((len(s.layers) for s in cols_st), default=0)
    rows = []
    for l in range(depth):
        row: list = [l]
        for s in cols_st:
            a, c = s.share("all", l), s.share("content", l)
            row.append("-" if a is None else f"{a:.2f} / {'-' if c is None else f'{c:.2f}'}")
        rows.append(row)
    return rows, cols


def detail(stages: list[Stage]) -> tuple[list, list]:
    """Long table: model, checkpoint, accuracy, layer, shares with Wilson intervals, per-head
    share, median slack, D2 chain share, which tokens carry delta's pair where equality fails."""
    cols = ["model", "epoch", "step", "test acc", "layer", "D1 tight, all tokens", "D1 tight, content tokens",
            "head share (all)", "head share (content)", "median slack (content)", "D2 chain tight (all)",
            "pair attaining delta where D1 fails (all)"]
    rows = []
    for s in stages:
        for l in s.layers:
            hk = {v: s.heads.get((v, l), [0, 0]) for v in VARIANTS}
            ch = s.chain.get(("all", l), [0, 0])
            fails = ", ".join(f"{k} {n}" for k, n in sorted(s.fail_pairs.get(l, Counter()).items(),
                                                             key=lambda kv: (-kv[1], kv[0]))) or "-"
            rows.append([s.model, s.epoch, s.step, s.accuracy, l, s.cell("all", l), s.cell("content", l),
                         *(round(hk[v][0] / hk[v][1], 4) if hk[v][1] else None for v in VARIANTS),
                         median(s.slack.get(("content", l), [])),
                         f"{ch[0]}/{ch[1]}" if ch[1] else "-", fails])
    return rows, cols


def training(stages: list[Stage]) -> tuple[list, list]:
    """Per model and checkpoint: accuracy and the layer-averaged shares."""
    cols = ["model", "epoch", "step", "fraction", "test acc", "inputs", "mean share all", "mean share content",
            "first layer all / content", "last layer all / content"]
    rows = []
    for s in stages:
        ls = s.layers
        f = lambda l: " / ".join("-" if x is None else f"{x:.2f}" for x in (s.share("all", l), s.share("content", l)))  # noqa: E731
        rows.append([s.model, s.epoch, s.step, s.fraction, s.accuracy, len(s.inputs), s.mean_share("all"),
                     s.mean_share("content"), f(ls[0]) if ls else "-", f(ls[-1]) if ls else "-"])
    return rows, cols


def provenance(preset: str, seed: int, stages: list[Stage], note: str = "") -> str:
    fps = ", ".join(f"{s.model}@e{s.epoch}={s.weights}" for s in stages if s.epoch is not None)
    return (f"campaigns {campaign_prefix(preset, seed)}*; preset {preset}; seed {seed}; data: scikit-learn "
            f"bundled sets, stratified 75/25 split (seed {seed}); weights sha256 {fps}; D1 verdicts exact "
            f"(rational), head mean, content = CLS and registers dropped with exact row renormalisation"
            + (f"; text rows: {note}" if note else ""))


COLOURS = {"vit": "C0", "vit-reg": "C1", "ft-cancer": "C2", "ft-wine": "C3", "minilm": "0.35", "smollm2": "0.65"}
CAPTIONS = {
    "modalities_share": "Share of test inputs where Theorem D1 holds with equality (exact), per layer, "
                        "head-averaged attention, all tokens / content tokens (CLS and registers dropped, rows "
                        "renormalised exactly); each model at initialisation and after training (test accuracy "
                        "in the header), text models beside them.",
    "modalities_detail": "Per model, checkpoint and layer: D1 equality shares with 95% Wilson intervals, per-head "
                         "shares, median slack, rollout chain (D2) tightness, and which tokens carry the pair "
                         "attaining delta where equality fails.",
    "modalities_training": "How the share moves during training: layer-averaged D1 equality shares and test "
                           "accuracy at each kept checkpoint (epoch 0: initialisation).",
}


def relative(s: Stage) -> list[float]:
    """Layer l (0-based) of L layers at relative depth (l + 1) / L: models of any depth side by side."""
    return [(l + 1) / len(s.layers) for l in s.layers]


def depth_figure(stages: list[Stage], texts: list[Stage], variant: str) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            for s, style in ((initial(stages, m), ":"), (final(stages, m), "-")):
                if s is None:
                    continue
                acc = "" if s.accuracy is None else f" (acc {s.accuracy:.2f})"
                ax.plot(relative(s), [s.share(variant, l) for l in s.layers], style, marker="o",
                        color=COLOURS.get(m), label=f"{s.label}{acc}")
        for s in texts:
            ax.plot(relative(s), [s.share(variant, l) for l in s.layers], "--", marker=".",
                    color=COLOURS.get(s.model), label=s.family)
        ax.set_xlabel("relative depth (layer / number of layers)")
        ax.set_ylabel(f"share with D1 equality ({variant} tokens)")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return draw


def training_figure(stages: list[Stage]) -> Callable[[Any], None]:
    def draw(ax: Any) -> None:
        for m in dict.fromkeys(s.model for s in stages):
            ss = [s for s in stages if s.model == m]
            steps = [s.step for s in ss]
            ax.plot(steps, [s.mean_share("content") for s in ss], "-", marker="o", color=COLOURS.get(m),
                    label=f"{m}: D1 share (content, layer mean)")
            ax.plot(steps, [s.mean_share("all") for s in ss], ":", marker=".", color=COLOURS.get(m),
                    label=f"{m}: D1 share (all tokens)")
            ax.plot(steps, [s.accuracy for s in ss], "--", marker="x", color=COLOURS.get(m), alpha=0.6,
                    label=f"{m}: test accuracy")
        ax.set_xlabel("training step")
        ax.set_ylabel("share / accuracy")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return draw


def command(preset: str, seed: int) -> str:
    return f"attnbounds modalities --preset {preset} --seed {seed}"


def parts(stages: list[Stage], texts: list[Stage], note: str, preset: str, seed: int) -> tuple[list, list, str]:
    """(tables, each defined once as a :class:`verification.report.tables.Table` for every output,
    figures as (name, draw, caption), provenance)."""
    prov = provenance(preset, seed, stages, note)
    sbs = CAPTIONS["modalities_share"] + ("" if len(texts) == 2 else f" Text rows: {note}.")
    made = dict(campaigns=tuple(s.campaign for s in stages + texts), command=command(preset, seed))
    tables = [Table.from_rows(name, *rows_cols, cap, prov, **made)
              for name, rows_cols, cap in (("modalities_share", side_by_side(stages, texts), sbs),
                                           ("modalities_detail", detail(stages), CAPTIONS["modalities_detail"]),
                                           ("modalities_training", training(stages), CAPTIONS["modalities_training"]))]
    figures = [(f"modalities_share_vs_depth_{v}", depth_figure(stages, texts, v),
                f"D1 equality share vs relative depth ({v} tokens): dotted = initialisation, solid = trained, dashed = "
                "text models (when stored).") for v in ("content", "all")]
    figures.append(("modalities_share_vs_step", training_figure(stages),
                    "D1 equality share (layer mean) and test accuracy vs training step."))
    return tables, figures, prov


def load(store: Any, preset: str, seed: int, campaigns: Optional[list[str]] = None) -> tuple[list, list, str]:
    stages = modality_stages(store, preset, seed, campaigns)
    if not stages:
        raise MissingCampaign(f"{campaign_prefix(preset, seed)}*", command(preset, seed))
    texts, note = text_stages(store, preset == "paper", seed)
    return stages, texts, note


def write_report(store: Any, preset: str, seed: int, out_dir: Path, console: Any,
                 campaigns: Optional[list[str]] = None) -> dict:
    """Write the tables and figures under ``out_dir`` and print the side-by-side table."""
    from verification.report.aggregate import pyplot
    from verification.report.figures import save_figure

    stages, texts, note = load(store, preset, seed, campaigns)
    tables, figures, prov = parts(stages, texts, note, preset, seed)
    written: dict = {}
    for t in tables:
        written[t.name] = t.write(Path(out_dir) / "tables")
        if t.name != "modalities_detail":
            print_table(console, t.rows(), t.columns(), t.caption)
    plt = pyplot()
    for name, draw, cap in figures:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        draw(ax)
        ax.set_title(cap, fontsize=7, wrap=True)
        fig.tight_layout()
        written[name] = save_figure(fig, Path(out_dir) / "figures", name, prov)
        plt.close(fig)
    if len(texts) < 2:
        console.print(f"[dim]text rows: {note}[/dim]")
    return written
