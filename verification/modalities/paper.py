"""The modalities family's part of the paper: its tables (those of :func:`verification.modalities.
report.parts`, the same for every output), figures and macros, read from the store only.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from verification.modalities.checks import campaign_prefix
from verification.modalities.report import (TEXT_MODELS, command, final, initial, modality_stages, parts,
                                            text_stages)
from verification.report.part import Figure, MissingCampaign, Part

def paper_part(store: Any, seed: int = 0, full: bool = False) -> Part:
    """Tables, figures and macros of the modalities family (quick preset; ``full``: paper preset)."""
    return preset_part(store, "paper" if full else "quick", seed)


def preset_part(store: Any, preset: str, seed: int = 0, require_text: bool = True) -> Part:
    """The paper part of any preset (``tiny`` in tests). The prose compares with the text models:
    ``require_text`` makes their missing campaigns a :class:`MissingCampaign` too."""
    import pandas as pd

    from verification.trained.paper import campaign_prefix as text_prefix
    from verification.trained.paper import rollout_command

    full = preset == "paper"                # the text rows: the trained main job at the same settings
    stages = modality_stages(store, preset, seed)
    texts, note = text_stages(store, full, seed)
    errors = [] if stages else [MissingCampaign(f"{campaign_prefix(preset, seed)}*", command(preset, seed))]
    if require_text:                       # every missing campaign named, each with its command
        errors += [MissingCampaign(f"{text_prefix(m, full)}<fingerprint>", rollout_command(m, full))
                   for m in TEXT_MODELS if m not in {s.model for s in texts}]
    if errors:
        raise MissingCampaign.combine(errors)
    tables, figures, prov = parts(stages, texts, note, preset, seed)
    part = Part(family="modalities", commands=[command(preset, seed)])
    for t in tables:                       # the LaTeX view: pandas' dtypes, as inferred from the cells
        part.tables.append(replace(t, frame=pd.DataFrame(t.rows(), columns=t.columns())))
    for name, draw, cap in figures:
        part.figures.append(Figure(name, draw, cap, prov))
    r2 = lambda x: None if x is None else round(float(x), 2)  # noqa: E731
    for m in dict.fromkeys(s.model for s in stages):
        for tag, s in (("Init", initial(stages, m)), ("Trained", final(stages, m))):
            if s is None:
                continue
            part.macro(round(s.accuracy, 3), "Mod", m, tag, "acc")
            for v in ("all", "content"):
                part.macro(r2(s.mean_share(v)), "Mod", m, tag, v, "mean share")
                for l in s.layers:
                    part.macro(r2(s.share(v, l)), "Mod", m, tag, v, "layer", l)
                part.macro(r2(s.share(v, s.layers[0])), "Mod", m, tag, v, "first layer")
                part.macro(r2(s.share(v, s.layers[-1])), "Mod", m, tag, v, "last layer")
        last = final(stages, m)
        shares = [(last.share("content", l), l) for l in last.layers]
        top = max(shares, key=lambda x: (x[0], -x[1]))
        part.macro(r2(top[0]), "Mod", m, "Trained content max layer share")
        part.macro(top[1] + 1, "Mod", m, "Trained content max layer depth")
        fails = Counter()
        for c in last.fail_pairs.values():
            fails.update(c)
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
    later = [s.chain.get((v, l), [0, 0]) for s in stages for v in ("all", "content") for l in s.layers if l > 0]
    part.macro(sum(k for k, _ in later), "Mod", "chain tight after first layer")
    part.macro(sum(n for _, n in later), "Mod", "chain checks after first layer")
    part.macro(preset, "Mod", "preset")
    return part
