"""The modalities family: measurement plumbing on planted attention with known D1 verdicts, the
tiny preset end to end (train, measure, resume, report, paper part), and bad input."""
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from rich.console import Console

from numerics.modalities import MODELS, PRESETS, NetConfig, load_dataset
from numerics.modalities.source import CheckpointSource
from verification import campaign
from verification.cli import main
from verification.modalities.paper import paper_part
from verification.modalities.checks import campaign_name
from verification.modalities.command import measure_and_report
from verification.modalities.paper import preset_part
from verification.modalities.report import modality_stages, pair_kind
from verification.report.part import MissingCampaign
from verification.trained.checks import instance_records

SECTIONS = Path(__file__).resolve().parents[2] / "paper" / "sections"
# Planted attention, T = 4 tokens, token 0 = CLS. Known verdicts of Theorem D1 (head mean = the
# matrix: both heads carry it):
#   layer 0: CLS attends to itself, features cycle among themselves. All tokens: the pair (CLS, j)
#            attains delta = 1 and is mutually self-dominant -> equality. Content tokens (rows
#            renormalised): every maximising pair fails self-dominance -> strict.
#   layer 1: the identity -> equality on all and content tokens.
#   layer 2: a cyclic matrix whose maximising pairs (0,2), (1,3) are not self-dominant -> strict.
PLANTED = np.array([
    [[1, 0, 0, 0], [0, .1, .8, .1], [0, .1, .1, .8], [0, .8, .1, .1]],
    np.eye(4),
    [[.05, .6, .3, .05], [.05, .05, .6, .3], [.3, .05, .05, .6], [.6, .3, .05, .05]],
])
KNOWN = {("all", 0): True, ("content", 0): False, ("all", 1): True, ("content", 1): True, ("all", 2): False}


def exact_d1(M):
    """D1's equality from its definition, exact rationals, rows renormalised exactly."""
    A = [[Fraction(float(x)) for x in r] for r in M]
    A = [[x / sum(r) for x in r] for r in A]
    n = len(A)
    tv = {(i, j): sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(n) for j in range(i + 1, n)}
    delta = max(tv.values())
    return any(d == delta and A[i][i] >= A[j][i] and A[j][j] >= A[i][j] for (i, j), d in tv.items())


class Planted(torch.nn.Module):
    def forward(self, x, attention=False):
        A = torch.tensor(PLANTED, dtype=torch.float32)[:, None].expand(3, 2, 4, 4)    # (L, H, T, T)
        return torch.zeros(len(x), 3), A[None].expand(len(x), 3, 2, 4, 4)


def planted_source():
    cfg = NetConfig(kind="ft", n_inputs=3, n_classes=3, dim=4, depth=3, heads=2)
    meta = dict(model="planted", family="planted", dataset="wine", seed=0, epoch=1, step=7, fraction=1.0,
                accuracy=0.5, path="planted.safetensors", preset='{"preset": "tiny"}', data_sha="x")
    return CheckpointSource(name="planted@e1", fingerprint="f" * 16, net=Planted(), config=cfg,
                            data=load_dataset("wine", 0), meta=meta)


def test_planted_attention_gets_its_known_verdicts_through_the_pipeline(store):
    src = planted_source()
    items = src.data.items(3)
    name = campaign_name("tiny", 0, "planted", 1, src.fingerprint)
    chunk = campaign.Chunk("all", lambda: [r for i in src.instances(items) for r in instance_records(i)])
    campaign.run(store, name, [chunk], progress=False)
    recs = {r["instance"]: r for r in store.records(campaign=name)}
    for (v, l), eq in KNOWN.items():
        keep = np.ones(4, bool) if v == "all" else np.array([False, True, True, True])
        assert exact_d1(PLANTED[l][np.ix_(keep, keep)]) == eq            # the planted truth, by definition
        for it in items:
            r = recs[f"planted@e1|{it.id}#{it.sha}|{v}|L{l}|mean"]
            assert (r["verdict"] == "tight") == eq, (v, l)
            assert all((recs[f"planted@e1|{it.id}#{it.sha}|{v}|L{l}|H{h}"]["verdict"] == "tight") == eq
                       for h in range(2))
    r = recs[f"planted@e1|{items[0].id}#{items[0].sha}|all|L2|mean"]
    assert r["slack"] > 0 and r["provenance"]["test_accuracy"] == 0.5 and r["provenance"]["n_special"] == 1
    (st,) = modality_stages(store, "tiny", 0)
    assert (st.model, st.epoch, st.accuracy, len(st.inputs)) == ("planted", 1, 0.5, 3)
    for (v, l), eq in KNOWN.items():
        assert st.share(v, l) == (1.0 if eq else 0.0)
        assert st.heads[(v, l)] == [6 if eq else 0, 6]
    assert sum(st.fail_pairs[2].values()) == 3 and not st.fail_pairs[0]
    assert set(st.fail_pairs[2]) <= {"CLS-feature", "feature-feature"}


def test_pair_kind_names_the_tokens():
    assert pair_kind([0, 3], 3, 2, "patch") == "CLS-patch"
    assert pair_kind([4, 2], 3, 2, "patch") == "patch-register"
    assert pair_kind([5, 4], 1, 0, "feature") == "feature-feature"
    assert pair_kind([0, 1], None, 0, "patch") is None


def text_standin(name, causal, T=6, L=2, H=2):
    """Random softmax attention under a text model's name (loading the real models takes minutes), as
    the trained main job's first input (the text rows read the main job's inputs only)."""
    from numerics.sources import AttentionInstance
    from verification.trained.paper import main_inputs

    first = main_inputs(name, False)[0]
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((L, H, T, T)) + (np.where(np.tri(T, dtype=bool), 0.0, -np.inf) if causal else 0)
    A = np.exp(logits - logits.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    special = np.zeros(T, dtype=bool)
    special[[0, -1]] = True
    prov = dict(model=name, input=first.id, text_sha=first.sha, T=T, causal=causal)
    return AttentionInstance(model=name, input=first.id, sha=first.sha, attention=A, special=special,
                             causal=causal, provenance=prov)


def test_tiny_preset_end_to_end_resumes_and_reports(store, tmp_path):
    console = Console(width=200, record=True)
    models = tuple(MODELS)
    out = tmp_path / "out"
    with pytest.raises(MissingCampaign, match="attnbounds modalities --preset quick"):
        paper_part(store)
    paths = measure_and_report(store, "tiny", 0, out, tmp_path / "ck", console, models)
    n = store.count()
    epochs = PRESETS["tiny"].checkpoint_epochs()
    stages = modality_stages(store, "tiny", 0)
    assert [(s.model, s.epoch) for s in stages] == [(m, e) for m in models for e in epochs]
    assert all(len(s.inputs) == PRESETS["tiny"].test_limit for s in stages)
    assert all(0 <= s.accuracy <= 1 for s in stages)
    for name in ("modalities_share", "modalities_detail", "modalities_training"):
        assert paths[name]["md"].is_file() and paths[name]["csv"].is_file()
    assert all(p.is_file() for p in paths["modalities_share_vs_depth_content"] + paths["modalities_share_vs_step"])
    text = (out / "tables" / "modalities_share.md").read_text()
    assert "vit-reg init" in text and "text encoder" in text and "omitted" in text
    created = sorted(r["created"] for r in store.records())
    measure_and_report(store, "tiny", 0, out, tmp_path / "ck", console, models)     # resumes: nothing new
    assert store.count() == n and sorted(r["created"] for r in store.records()) == created
    with pytest.raises(MissingCampaign, match="attnbounds rollout --model minilm"):
        preset_part(store, "tiny", 0)                                   # the prose compares with text
    part = preset_part(store, "tiny", 0, require_text=False)
    assert [t.name for t in part.tables] == ["modalities_share", "modalities_detail", "modalities_training"]
    assert part.commands == ["attnbounds modalities --preset tiny --seed 0"]
    final = stages[2 * len(epochs) - 1]                                 # vit-reg, last checkpoint
    assert part.macros["ModVitRegTrainedAcc"] == round(final.accuracy, 3)
    assert part.macros["ModVitRegTrainedContentLayerOne"] == round(final.share("content", 1), 2)
    from verification.trained.checks import chunk_key
    from verification.trained.paper import campaign_prefix, main_inputs

    for name, causal in (("minilm", False), ("smollm2", True)):          # stand-ins for the text campaigns
        campaign.run(store, campaign_prefix(name, False) + "stand-in", [campaign.Chunk(
            chunk_key(main_inputs(name, False)[0]), lambda n=name, c=causal: instance_records(text_standin(n, c)))],
            progress=False)
    part = preset_part(store, "tiny", 0)
    assert part.macros["ModSmollmTwoAllMeanShare"] == 1.0               # causal: equality is structural
    prose = (SECTIONS / "modalities.tex").read_text()
    cited = set(re.findall(r"\\(Mod[A-Za-z]+)", prose))
    assert cited and cited <= set(part.macros), sorted(cited - set(part.macros))
    assert set(re.findall(r"\\input\{tables/([^}]+)\}", prose)) <= {t.name for t in part.tables}
    assert set(re.findall(r"figures/([^}]+)\.pdf", prose)) <= {f.name for f in part.figures}
    from verification.report.aggregate import pyplot
    fig, ax = pyplot().subplots()
    for f in part.figures:
        f.draw(ax)
    assert ax.lines


def test_bad_arguments_are_one_line_errors(capsys, tmp_path):
    assert main(["modalities", "--preset", "huge", "--db", ":memory:", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--preset" in err and "huge" in err and len(err.strip().splitlines()) == 1
    assert main(["modalities", "--models", "vit,resnet", "--db", ":memory:", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'resnet'" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "file").write_text("x")
    assert main(["modalities", "--checkpoints", str(tmp_path / "file"), "--db", ":memory:",
                 "--out", str(tmp_path)]) == 2
    assert "is not a folder" in capsys.readouterr().err
