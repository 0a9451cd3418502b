"""The modalities family's part of the paper: its tables (those of
:func:`verification.modalities.report.tables.parts`, the same for every output), figures and
macros, read from the store only. The sentences that compare (a model's share against the random
range at its n, against its initialisation, against MiniLM at matched n and as-is, and with depth)
are written here from the findings (:func:`verification.modalities.findings.findings`: the stored
numbers and their seed-level tests, :mod:`verification.modalities.findings.comparisons`), never
typed in the prose: each word beside the
interval that decides it, simultaneous at the level ``\\ModLevel`` (percent) over the
``\\ModComparisons`` comparisons of the run (Bonferroni). The part is built
from the modalities plan (``paper_part(store, plan)``, ``needs(store, plan)``: its preset, seed and
models; every command it names is ``plan.command()``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from theory.errors import InvalidInput
from verification.modalities.checks import Plan, campaign_prefix
from verification.modalities.findings import findings
from verification.modalities.findings.stages import final, initial
from verification.modalities.report.tables import parts
from verification.report.part import Figure, MissingCampaign, Need, Part, complete


LABELS = {"vit": "ViT", "vit-reg": "ViT with registers", "ft-cancer": "FT-Transformer (breast cancer)",
          "ft-wine": "FT-Transformer (wine)"}


def check_plan(plan: Plan) -> None:
    """``attnbounds paper --from "modalities ..."``: the paper's section compares every model, so a
    plan of some of them (``--models``) is refused; any preset and seed are read."""
    from numerics.modalities.presets import MODELS

    if plan.models and set(plan.models) != set(MODELS):
        raise InvalidInput(f"the paper's modalities section shows every model ({', '.join(MODELS)}), not only "
                           f"{', '.join(plan.models)} (drop --models)")


def needs(store: Any, plan: Plan) -> list[Need]:
    """What :func:`paper_part` reads of ``plan``, as :func:`verification.modalities.checks.run`
    plans it, nothing trained: every measured checkpoint (named up to its weights' fingerprint, the
    newest of a (model, seed, epoch) as the stages read it; one chunk per block of test examples),
    the random baselines at the models' token counts, the text rows as-is (the trained main job's
    campaigns) and, once MiniLM's campaign is complete, MiniLM cut to each token count T (its
    first inputs with at least T tokens, as stored by that campaign)."""
    from types import SimpleNamespace

    from numerics.modalities.presets import PRESETS
    from verification.modalities.checks import (TEXT_MODEL, baseline_campaign, baseline_chunks, chosen_texts,
                                                planned, text_campaign, text_lengths)
    from verification.modalities.findings.stages import TEXT_MODELS
    from verification.measure.attention import chunk_key
    from verification.measure.text import main_inputs, model_need, trained_command

    p, cmd, full, seed = PRESETS[plan.preset], plan.command(), plan.full, plan.seed
    trained = trained_command(seed, full)          # the text rows: the trained main job's campaigns
    checkpoints = planned(plan.preset, seed, plan.models)
    out = [Need("modalities", c.campaign, c.chunks, cmd, prefix=True, pick="newest") for c in checkpoints]
    sizes = {c.tokens for c in checkpoints} | {c.content for c in checkpoints}
    out.append(Need("modalities", baseline_campaign(seed, p.baseline_count),
                    frozenset(c.key for c in baseline_chunks(sorted(sizes), p.baseline_count, seed)), cmd))
    out += [replace(model_need(m, full, trained), family="modalities") for m in TEXT_MODELS]
    text = model_need(TEXT_MODEL, full, trained)
    camp = complete(store, text)
    if camp is None:
        return out                         # the inputs cut to T follow MiniLM's stored token counts
    tokens = {r["chunk"]: int(r["provenance"]["T"]) for r in store.records(camp, theorem="dobrushin.product")
              if r["chunk"] in text.chunks}
    fits = SimpleNamespace(fits=lambda t, T: tokens.get(chunk_key(t), 0) >= T)    # MatchedText.fits, as stored
    for T in text_lengths(checkpoints):
        chosen = chosen_texts(fits, main_inputs(TEXT_MODEL, full), T, p.text_inputs)
        out.append(Need("modalities", text_campaign(TEXT_MODEL, "", T, p.text_inputs),
                        frozenset(chunk_key(t) for t in chosen), cmd, prefix=True))
    return out


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables, figures and macros of the modalities family for ``plan`` (the main job's: the quick
    preset, ``--full`` the paper preset; any preset, ``tiny`` in tests): :func:`plan_part`."""
    return plan_part(store, plan)


def plan_part(store: Any, plan: Plan, require_text: bool = True) -> Part:
    """The paper part of ``plan``. The prose compares with the text models: ``require_text`` makes
    their missing campaigns a :class:`MissingCampaign` too."""
    import pandas as pd

    from numerics.modalities.presets import PRESETS
    from verification.modalities.checks import TEXT_MODEL
    from verification.modalities.checks import text_prefix as mod_text_prefix
    from verification.modalities.findings.stages import TEXT_MODELS
    from verification.measure.text import campaign_prefix as text_prefix
    from verification.measure.text import rollout_command

    full, preset = plan.full, plan.preset    # the text rows: the trained main job at the same settings
    try:
        data = findings(store, plan)
    except MissingCampaign:
        data = None
    errors = [] if data else [MissingCampaign(f"{campaign_prefix(preset, plan.seed)}*", plan.command())]
    if require_text:                       # every missing campaign named, each with its command
        have = {s.model for s in data.texts} if data else set()
        errors += [MissingCampaign(f"{text_prefix(m, full)}<fingerprint>", rollout_command(m, full))
                   for m in TEXT_MODELS if m not in have]
        if data and not any(s.text is not None for s in data.summaries):
            errors.append(MissingCampaign(f"{mod_text_prefix(TEXT_MODEL)}T<n>:k{PRESETS[preset].text_inputs}:*",
                                          plan.command()))
    if errors:
        raise MissingCampaign.combine(errors)
    stages, texts = data.stages, data.texts
    tables, figures, prov = parts(data)
    part = Part(family="modalities", commands=[plan.command()])
    for t in tables:                       # the LaTeX view: pandas' dtypes, as inferred from the cells
        part.tables.append(replace(t, frame=pd.DataFrame(t.rows(), columns=t.columns())))
    for name, draw, cap in figures:
        part.figures.append(Figure(name, draw, cap, prov))
    seed_macros(part, data.summaries)
    r2 = lambda x: None if x is None else round(float(x), 2)  # noqa: E731
    for m in dict.fromkeys(s.model for s in stages):
        for tag, s in (("Init", initial(stages, m)), ("Trained", final(stages, m))):
            if s is None:
                continue
            part.macro(round(s.accuracy, 3), "Mod", m, tag, "acc", "seed")
            for v in ("all", "content"):
                part.macro(r2(s.mean_share(v)), "Mod", m, tag, v, "mean share", "seed")
                for l in s.layers:
                    part.macro(r2(s.share(v, l)), "Mod", m, tag, v, "layer", l)
                part.macro(r2(s.share(v, s.layers[0])), "Mod", m, tag, v, "first layer")
                part.macro(r2(s.share(v, s.layers[-1])), "Mod", m, tag, v, "last layer")
        last = final(stages, m)
        shares = [(last.share("content", l), l) for l in last.layers]
        top = max(shares, key=lambda x: (x[0], -x[1]))
        part.macro(r2(top[0]), "Mod", m, "Trained content max layer share")
        part.macro(top[1] + 1, "Mod", m, "Trained content max layer depth")
        fails = last.fails()
        if fails:
            kind, k = max(fails.items(), key=lambda kv: (kv[1], kv[0]))
            part.macro(kind, "Mod", m, "Trained fail pair")
            part.macro(r2(k / sum(fails.values())), "Mod", m, "Trained fail pair share")
        part.macro(len(last.inputs), "Mod", m, "inputs")
        part.macro(last.epoch, "Mod", m, "epochs")
        part.macro(last.step, "Mod", m, "steps")
        part.macro(len(last.layers), "Mod", m, "layers")
    for s in texts:
        part.macro(len(s.inputs), "Mod", s.model, "inputs")
        for v in ("all", "content"):
            part.macro(r2(s.mean_share(v)), "Mod", s.model, v, "mean share")
            part.macro(r2(s.share(v, s.layers[0])), "Mod", s.model, v, "first layer")
            part.macro(r2(s.share(v, s.layers[-1])), "Mod", s.model, v, "last layer")
    later = [s.chain[(v, l)] for s in stages for v in ("all", "content") for l in s.layers if l > 0
             if (v, l) in s.chain]
    part.macro(sum(c.k for c in later), "Mod", "chain tight after first layer")
    part.macro(sum(c.n for c in later), "Mod", "chain checks after first layer")
    part.macro(preset, "Mod", "preset")
    part.macro(plan.seed, "Mod", "first seed")
    learned = {s.model: (s.init_accuracy.mean, s.accuracy.mean) for s in data.summaries}
    causal = [s.mean_share("all") for s in texts if s.model == "smollm2"]
    prose_guards(part, learned, max(len(final(stages, m).layers) for m in dict.fromkeys(s.model for s in stages)),
                 causal[0] if causal else None)
    return part


PUBLISHED_LAYERS = 12      # the published vision and tabular transformers: ViT-B's 12 layers and more


def prose_guards(part: Part, learned: dict, layers: int, causal_share: Any) -> None:
    """The conditions of the ``\\Guard{Mod...}`` sentences of ``paper/sections/modalities.tex``, from
    the stored numbers: every model ends above its initial test accuracy (``learned``: model ->
    (initial, trained) mean accuracy), the models are shallower than the published ones, and the
    decoder is tight on every input and layer (the causal corollary)."""
    worst = min(learned.items(), key=lambda kv: kv[1][1] - kv[1][0]) if learned else None
    part.guard(bool(learned) and all(t > i for i, t in learned.values()), "Mod", "models learned",
               detail="no model" if worst is None else
               f"{worst[0]}: test accuracy {worst[1][0]:.3f} at initialisation, {worst[1][1]:.3f} trained")
    part.guard(layers < PUBLISHED_LAYERS, "Mod", "shallower than published",
               detail=f"{layers} layers here, {PUBLISHED_LAYERS} in the smallest published model")
    part.guard(causal_share is not None and causal_share == 1, "Mod", "decoder causal corollary",
               detail=f"SmolLM2's layer-averaged share on all tokens is {causal_share}")


def fmt2(x: float) -> str:
    return f"{x:.2f}"


def mde_note(s: Any, name: str) -> str:
    """``"; MDE 0.12"`` where a comparison separated nothing (a failure to reject says how large a
    difference it could have seen), else ``""``: it closes the parenthesis after the reference."""
    import math

    mde = s.mdes.get(name, math.nan)
    separated = s.words[name] not in ("not separable from", "shows no detectable trend")
    return "" if separated or not math.isfinite(mde) else f"; MDE {fmt2(mde)}"


def seed_macros(part: Part, summaries: list) -> None:
    """Across seeds: each model's mean share, interval and accuracy, its random range at n, MiniLM at
    matched n, and the sentences written from the words; every seed-level interval, and each
    difference beside its word, at the run's simultaneous level (``\\ModLevel`` percent over
    ``\\ModComparisons`` comparisons, Bonferroni: the level that decides the word)."""
    from verification.modalities.report.seeds import difference

    r2 = lambda x: round(float(x), 2)  # noqa: E731
    matched, asis, init, depth = [], [], [], []
    level = summaries[0].level if summaries else None
    part.macro("-" if level is None else f"{100 * level:.1f}", "Mod", "level")
    part.macro(summaries[0].comparisons if summaries else 0, "Mod", "comparisons")
    # "inside the random range": each one-sided test of its TOST at alpha / (2 m), in percent
    part.macro("-" if level is None else f"{100 * (1 - level) / 2:.2g}", "Mod", "tost level")
    for s in summaries:
        m, v, tag = s.model, s.variant, ("Trained", "Init")
        part.macro(len(s.seeds), "Mod", m, "seeds")
        part.macro(", ".join(map(str, s.seeds)), "Mod", m, "seed list")
        part.macro(s.n, "Mod", m, v, "n")
        for t, sp in zip(tag, (s.trained, s.init)):
            part.macro(r2(sp.mean), "Mod", m, t, v, "mean share")
            if sp.df:
                part.macro(r2(max(0.0, sp.lo)), "Mod", m, t, v, "mean share low")   # a share: its interval within [0, 1]
                part.macro(r2(min(1.0, sp.hi)), "Mod", m, t, v, "mean share high")
        part.macro(round(s.accuracy.mean, 3), "Mod", m, "Trained acc")
        part.macro(round(s.init_accuracy.mean, 3), "Mod", m, "Init acc")
        rng = s.random_range
        if rng:
            part.macro(r2(rng[0]), "Mod", m, v, "random low")
            part.macro(r2(rng[1]), "Mod", m, v, "random high")
            part.macro(s.words["random"], "Mod", m, v, "vs random")
        if s.text is not None:
            part.macro(r2(s.text.mean), "Mod", m, v, "text matched share")
            part.macro(s.words["text"], "Mod", m, v, "vs text matched")
        if v != "content":
            continue
        label = LABELS.get(m, m)
        mean = (f"{fmt2(s.trained.mean)} [{fmt2(max(0.0, s.trained.lo))}, {fmt2(min(1.0, s.trained.hi))}] over "   # within [0, 1]
                f"{len(s.seeds)} seeds")
        if rng:
            tost = "; TOST" if s.words["random"] == "inside" else ""
            text = (f"{label}: {mean}, {s.words['random']} the random range at n = {s.n} ({fmt2(rng[0])}-"
                    f"{fmt2(rng[1])}; difference {difference(s, 'random')}{tost}{mde_note(s, 'random')})")
            if s.text is not None:
                text += (f", {s.words['text']} MiniLM cut to {s.n} content tokens ({fmt2(s.text.mean)}, "
                         f"{s.text_inputs} inputs; difference {difference(s, 'text')}{mde_note(s, 'text')})")
            matched.append(text)
        if s.asis is not None:
            asis.append(f"{label}: {fmt2(s.trained.mean)}, {s.words['asis']} MiniLM as-is ({fmt2(s.asis.mean)}; "
                        f"difference {difference(s, 'asis')}{mde_note(s, 'asis')})")
        init.append(f"{label}: trained share {s.words['init']} the share at initialisation ({fmt2(s.init.mean)}; "
                    f"change {difference(s, 'init')}{mde_note(s, 'init')})")
        depth.append(f"{label}: the share {s.words['depth']} with depth (last minus first layer "
                     f"{difference(s, 'depth')}{mde_note(s, 'depth')})")
    for name, items in (("matched", matched), ("as is", asis), ("init", init), ("depth", depth)):
        part.macro("; ".join(items) if items else "no model measured", "Mod", name, "sentence")
    matched_words = [s.words.get("text") for s in summaries if s.variant == "content"]
    part.macro(sum(w == "lower than" for w in matched_words), "Mod", "below text matched count")
    words = [s.words.get("asis") for s in summaries if s.variant == "content"]
    part.macro(sum(w == "lower than" for w in words), "Mod", "below text as is count")
    part.macro(len(words), "Mod", "models count")
    part.macro(summary_sentence(summaries), "Mod", "summary sentence")


REFERENCES = (("random", "the random range at their own n"), ("init", "their own initialisation"),
              ("text", "MiniLM cut to the same n"), ("depth", "with depth (last layer against first)"))
"""The comparisons the summary sentence counts, with the reference each word is read against."""


def summary_sentence(summaries: list) -> str:
    """One sentence, written from the words of every model on content tokens (each decided by its
    interval at the run's simultaneous level, :func:`verification.modalities.findings.comparisons.decide`): whether the
    models can be told apart from random matrices of their size and from their own initialisation,
    then how many models each word applies to per comparison, and the largest minimum detectable
    effect of a comparison that separated nothing (what these seeds could have seen).

    >>> from types import SimpleNamespace as S
    >>> m = lambda r, i, t: S(variant="content", words={"random": r, "init": i, "text": t, "depth": "shows no detectable trend"},
    ...                       mdes={"random": 0.9, "init": 0.4})
    >>> summary_sentence([m("not separable from", "not separable from", "lower than")] * 2)
    'none of the 2 models can be told apart from random matrices of its size or from its own initialisation: 2 of 2 are not separable from the random range at their own n; 2 of 2 are not separable from their own initialisation; 2 of 2 are lower than MiniLM cut to the same n; 2 of 2 show no detectable trend with depth (last layer against first) (largest minimum detectable effect of a comparison that separated nothing: 0.90)'
    """
    import math
    from collections import Counter

    content = [s for s in summaries if s.variant == "content"]
    if not content:
        return "no model was measured"
    n, same = len(content), ("not separable from", "inside")
    alike = all(s.words.get(k) in same for s in content for k in ("random", "init"))
    head = (f"none of the {n} models can be told apart from random matrices of its size or from its own "
            "initialisation" if alike else f"against random matrices of their size and their own initialisation, "
            f"the {n} models differ")
    parts = []
    for key, ref in REFERENCES:
        counts = Counter(s.words.get(key) for s in content if s.words.get(key))
        for word, k in counts.items():
            verb = "show" if word.startswith("shows ") else "are"
            word = word[len("shows "):] if word.startswith("shows ") else word
            parts.append(f"{k} of {n} {verb} {word} {ref}")
    mdes = [s.mdes.get(k, math.nan) for s in content for k in ("random", "init", "text")
            if s.words.get(k) in ("not separable from",)]
    mdes = [x for x in mdes if math.isfinite(x)]
    tail = f" (largest minimum detectable effect of a comparison that separated nothing: {fmt2(max(mdes))})" if mdes else ""
    return head + ": " + "; ".join(parts) + tail
