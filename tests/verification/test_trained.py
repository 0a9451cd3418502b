"""Trained-model measurements: verdicts equal the exact definition on the extracted matrices."""
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from rich.console import Console

from numerics.sources.corpus import Corpus, TextInput
from numerics.sources.models import load_model
from numerics.stochastic import restrict, submatrix
from verification.trained.checks import (campaign_name, chunk_key, input_records, run_campaign,
                                  variants)
from verification.report.stats import wilson
from verification.trained.report import report_model

pytestmark = pytest.mark.models
TEXTS = ["Attention is all you need.", "A cat sat on the mat, quietly."]
T0 = f"t0#{TextInput(id='t0', text=TEXTS[0], source='test').sha}"  # records are keyed by id and text hash


def exact_rows(M):
    """Float matrix -> exact rationals, rows renormalised exactly (the docs/theory.md §2 convention)."""
    rows = [[Fraction(float(x)) for x in r] for r in M]
    return [[x / sum(r) for x in r] for r in rows]


def d1_by_definition(M):
    """(equality, through_first, delta) of Theorem D1 from its definition, in exact arithmetic."""
    A = exact_rows(M)
    n = len(A)
    tv = {(i, j): sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(n) for j in range(i + 1, n)}
    delta = max(tv.values())
    good = [(i, j) for (i, j), d in tv.items() if d == delta and A[i][i] >= A[j][i] and A[j][j] >= A[i][j]]
    return bool(good), any(i == 0 for i, _ in good), delta


def rational_dobrushin(M):
    A = exact_rows(M)
    return max(sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(len(A)) for j in range(i))


@pytest.fixture(scope="module", params=["minilm", "smollm2"])
def measured(request):
    model = load_model(request.param)
    inp = TextInput(id="t0", text=TEXTS[0], source="test")
    enc = model.encode(inp.text)
    A = model.attentions_of(enc).double().numpy()          # (L, H, T, T)
    recs = {r.instance: r for r in input_records(model, inp)}
    return model, enc, A, recs


def test_layer_and_head_verdicts_equal_the_exact_definition(measured):
    model, enc, A, recs = measured
    L, H, T, _ = A.shape
    vs = variants(enc.special.numpy(), model.causal)
    assert [v.name for v in vs] == (["all", "content", "nofirst"] if model.causal else ["all", "content"])
    checked = 0
    for v in vs:
        mean = submatrix(A.mean(axis=1), v.keep)           # head average, then the submatrix: the
        heads = submatrix(A, v.keep)                        # model's floats, renormalised exactly below
        for l in range(L):
            key = f"{model.name}|{T0}|{v.name}|L{l}"
            eq, first, delta = d1_by_definition(mean[l])
            r = recs[f"{key}|mean"]
            assert (r.verdict.value == "tight") == eq
            assert r.extra["through_first"] == first
            assert r.extra["delta"] == pytest.approx(float(delta), abs=1e-12)
            half = [[(Fraction(int(i == k)) + a) / 2 for k, a in enumerate(row)] for i, row in enumerate(exact_rows(mean[l]))]
            exact_value = max(sum(abs(a - b) for a, b in zip(half[i], half[j])) / 2
                              for i in range(len(half)) for j in range(i))
            assert r.value == pytest.approx(float(exact_value), abs=1e-12)
            assert (r.slack == 0.0) == eq
            for h in range(H):
                eq_h, first_h, _ = d1_by_definition(heads[l, h])
                rh = recs[f"{key}|H{h}"]
                assert (rh.verdict.value == "tight") == eq_h and rh.extra["through_first"] == first_h
                checked += 1
    assert checked == len(vs) * L * H


def test_content_restriction_and_causal_structure(measured):
    model, enc, A, recs = measured
    special = enc.special.numpy()
    content = ~special
    sub = restrict(A, content)
    n = int(content.sum())
    assert sub.shape == A.shape[:2] + (n, n)
    assert np.allclose(sub.sum(-1), 1.0, atol=1e-12, rtol=0)
    i, j = np.flatnonzero(content)[:2]                      # entries keep their ratios within a row
    assert sub[0, 0, 0, 1] * A[0, 0, i, i] == pytest.approx(sub[0, 0, 0, 0] * A[0, 0, i, j], rel=1e-12)
    r = recs[f"{model.name}|{T0}|content|L0|mean"]
    assert r.provenance["n"] == n and r.provenance["T"] == len(enc.ids)
    assert r.provenance["quantised"] == model.quantised
    if model.causal:  # corollary: first row one-hot in every variant, so pairs (0, j) are self-dominant
        for v in ("all", "content", "nofirst"):
            for l in range(A.shape[0]):
                rr = recs[f"{model.name}|{T0}|{v}|L{l}|mean"]
                if rr.extra["pair"][0] == 0:
                    assert rr.verdict.value == "tight" and rr.extra["through_first"]


def test_rollout_records_match_an_independent_product(measured):
    model, enc, A, recs = measured
    M = restrict(A.mean(axis=1), np.ones(A.shape[-1], dtype=bool))  # rows renormalised in float64
    R = np.eye(M.shape[-1])
    prod = 1.0
    for l in range(M.shape[0]):
        Ahat = (np.eye(M.shape[-1]) + M[l]) / 2
        R = Ahat @ R
        prod *= float(rational_dobrushin(Ahat))
        r = recs[f"{model.name}|{T0}|all|L{l}|rollout"]
        dR = max(0.5 * np.abs(R[i] - R[j]).sum() for i in range(len(R)) for j in range(i))
        assert r.value == pytest.approx(dR, rel=1e-9, abs=1e-12)
        assert r.bound == pytest.approx(prod, rel=1e-9)
        assert r.value <= r.bound + 1e-12
    assert recs[f"{model.name}|{T0}|all|L0|rollout"].verdict.value == "tight"  # R_1 = Ahat_1


def test_restrict_rejects_rows_without_mass():
    A = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])  # row 1 lives on token 0 only
    with pytest.raises(ValueError, match="row 0"):
        restrict(A, np.array([False, True, True]))


def test_wilson_interval_known_values():
    lo, hi = wilson(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    assert wilson(0, 4)[0] == 0.0 and wilson(4, 4)[1] == 1.0


def test_campaign_resumes_and_reports(store, tmp_path):
    model = load_model("minilm", max_tokens=32)
    corpus = Corpus(name="tiny", inputs=[TextInput(id=f"t{k}", text=t, source="test") for k, t in enumerate(TEXTS)])
    console = Console(file=open(tmp_path / "log.txt", "w"), width=200)
    camp = run_campaign(model, corpus, store, console)
    assert camp == campaign_name(model, "tiny")
    n = store.count(camp)
    assert store.done_chunks(camp) == {chunk_key(t) for t in corpus.inputs} and n == 2 * 2 * 6 * (1 + 12 + 1)
    run_campaign(model, corpus, store, console)       # resume: nothing recomputed or added
    assert store.count(camp) == n
    edited = Corpus(name="tiny", inputs=[corpus.inputs[0], TextInput(id="t1", text="Edited text.", source="test")])
    run_campaign(model, edited, store, console)       # same id, new text: measured and stored beside it
    assert len(store.done_chunks(camp)) == 3 and store.count(camp) > n
    shas = {r["provenance"]["text_sha"] for r in store.records(campaign=camp) if r["provenance"]["input"] == "t1"}
    assert shas == {corpus.inputs[1].sha, edited.inputs[1].sha}
    written = report_model(store, camp, model, tmp_path, console, {(t.id, t.sha) for t in edited.inputs})
    md = Path(written["d1"]["md"]).read_text()
    assert "2 inputs" in md and "| 0 |" in md
    assert all(Path(p).exists() for p in written["figures"])


def test_cli_rollout_runs_and_bad_corpora_are_clear(tmp_path, capsys):
    from verification.cli import main

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n")
    args = ["--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")]
    assert main(["rollout", "--model", "minilm", "--texts", str(texts), "--max-tokens", "32"] + args) == 0
    assert (tmp_path / "out" / "tables" / "trained_d1_minilm.md").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"body": 1}\n')
    assert main(["rollout", "--model", "minilm", "--texts", str(bad)] + args) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 9))
@settings(max_examples=40)
def test_causal_attention_forces_d1_equality_through_the_first_token(seed, n):
    """Why every causal verdict is tight: row 0 is e_0, so d_0j = 1 - A_j0, and for any pair
    overlap(i, j) >= min(A_i0, A_j0), i.e. d_ij <= max(d_0i, d_0j): delta(A) is always attained
    by a pair (0, j), which is mutually self-dominant (A_00 = 1 >= A_j0, A_jj >= A_0j = 0)."""
    from numerics.dobrushin import factor_check

    rng = np.random.default_rng(seed)
    A = np.tril(rng.dirichlet(np.ones(n), size=n) ** 3)     # spiky rows, causal mask
    A = A / A.sum(axis=-1, keepdims=True)
    fc = factor_check(A)
    eq, first, delta = d1_by_definition(A)
    assert eq and first and bool(fc.equality) and bool(fc.through_first)
    assert delta == max(1 - Fraction(float(x)) / sum(Fraction(float(y)) for y in A[j]) for j, x in enumerate(A[:, 0]))


def test_two_model_folders_of_the_same_name_do_not_collide(tmp_path):
    """`--model a/model` and `--model b/model` (different files) write separate tables, named by
    a model id with a content hash, and no caption, footer or table carries a path of this machine."""
    import shutil

    from numerics.sources.models import embedded_path
    from verification.cli import main

    src = embedded_path("minilm")[0]
    dirs = []
    for k, tweak in enumerate(("", " ")):
        d = tmp_path / f"run{k}" / "model"
        d.mkdir(parents=True)
        for f in src.iterdir():
            if f.is_file():
                (d / f.name).symlink_to(f) if f.suffix == ".safetensors" else shutil.copy(f, d / f.name)
        (d / "config.json").write_text((d / "config.json").read_text() + tweak)  # other bytes, same model
        dirs.append(d)
    texts = tmp_path / "t.txt"
    texts.write_text("The cat sat on the mat.\n")
    out = tmp_path / "out"
    for d in dirs:
        assert main(["rollout", "--model", str(d), "--texts", str(texts), "--max-tokens", "16",
                     "--db", str(tmp_path / "r.db"), "--out", str(out)]) == 0
    d1 = sorted(p.name for p in (out / "tables").glob("trained_d1_*.md"))
    assert len(d1) == 2 and all(n.startswith("trained_d1_model_") for n in d1), d1
    for p in list((out / "tables").iterdir()) + list((out / "figures").iterdir()):
        body = p.read_bytes()
        assert str(tmp_path).encode() not in body and str(src).encode() not in body, p.name
