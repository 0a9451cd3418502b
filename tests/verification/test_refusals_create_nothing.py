"""A refused command creates nothing (docs/reliability.md; issue 48, item 2): what a command can check
before it opens its store is checked first, so a refusal is one line, exit status 2, and leaves no
store, no store folder, no ``tables/`` or ``figures/`` behind. Run through the CLI's ``main`` in a
fresh folder, with ``--db`` in a folder that does not exist yet.

Also (item 4): a model whose tokenizer turns every input into special tokens is measured on all
tokens only, and the report says so in one line instead of writing an empty content-token table and
an empty figure panel."""
import json
import shutil

import pytest
import torch

from verification.cli import main
from verification.testing.fakes import TOKENIZER, tiny_bert  # noqa: F401



def left_behind(work):
    """Every path under the working folder ``work`` (where --db and --out point)."""
    return sorted(str(p.relative_to(work)) for p in work.rglob("*"))


def refused(argv, tmp_path, monkeypatch, capsys, *names):
    """Run ``attnbounds argv --db work/sub/r.db --out work/out`` from ``work``: exit 2, one line on
    stderr naming ``names``, nothing left in ``work``."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    rc = main(list(argv) + ["--db", str(work / "sub" / "r.db"), "--out", str(work / "out")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, (rc, err)
    assert len(lines) == 1 and "Traceback" not in err, err
    for name in names:
        assert name in lines[0], (name, lines[0])
    assert left_behind(work) == [], left_behind(work)
    return lines[0]


def test_the_leftover_check_can_fail(tmp_path):
    """The planted case: a store opened in the working folder is seen (with its folder)."""
    from verification.store import ResultStore

    work = tmp_path / "work"
    work.mkdir()
    with ResultStore(str(work / "sub" / "r.db")):
        pass
    assert "sub" in left_behind(work) and "sub/r.db" in left_behind(work)


@pytest.fixture
def texts(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("The cat sat on the mat.\n")
    return str(f)


def test_rollout_with_an_absent_model(tmp_path, monkeypatch, capsys, texts):
    refused(["rollout", "--model", str(tmp_path / "ABSENT"), "--texts", texts], tmp_path, monkeypatch, capsys,
            "ABSENT", "no such file or folder")


def test_rollout_with_absent_or_empty_texts(tmp_path, monkeypatch, capsys):
    refused(["rollout", "--texts", str(tmp_path / "ABSENT.txt")], tmp_path, monkeypatch, capsys,
            "ABSENT.txt", "does not exist")
    (tmp_path / "empty.txt").write_text("\n  \n")
    shutil.rmtree(tmp_path / "work")
    refused(["rollout", "--texts", str(tmp_path / "empty.txt")], tmp_path, monkeypatch, capsys,
            "empty.txt", "no non-empty input")


@pytest.mark.models
def test_rollout_with_a_pickle_not_opted_in(tmp_path, monkeypatch, capsys, texts):
    folder = tiny_bert(tmp_path / "pickled", pickled=True)
    refused(["rollout", "--model", str(folder), "--texts", texts], tmp_path, monkeypatch, capsys,
            "pytorch_model.bin", "--allow-pickle")


@pytest.mark.models
def test_rollout_with_a_pickle_that_would_run_code(tmp_path, monkeypatch, capsys, texts):
    import os

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    folder = tiny_bert(tmp_path / "evil", pickled=True)
    torch.save({"x": Evil()}, folder / "pytorch_model.bin")
    line = refused(["rollout", "--model", str(folder), "--texts", texts, "--allow-pickle"], tmp_path, monkeypatch,
                   capsys, "pytorch_model.bin", "run code")
    assert "weights_only=False" not in line and not (tmp_path / "pwned").exists()


@pytest.mark.models
def test_rollout_with_an_auto_map(tmp_path, monkeypatch, capsys, texts):
    folder = tiny_bert(tmp_path / "code")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["auto_map"] = {"AutoModel": "evil.EvilModel"}
    (folder / "config.json").write_text(json.dumps(cfg))
    refused(["rollout", "--model", str(folder), "--texts", texts], tmp_path, monkeypatch, capsys,
            "auto_map", "config.json")


@pytest.mark.models
def test_rollout_with_a_folder_without_a_tokenizer(tmp_path, monkeypatch, capsys, texts):
    folder = tiny_bert(tmp_path / "bare", tokenizer=False)
    refused(["rollout", "--model", str(folder), "--texts", texts], tmp_path, monkeypatch, capsys,
            "no tokenizer", "vocab.txt", "tokenizer.json", str(folder))


@pytest.mark.models
def test_rollout_with_an_integer_weight(tmp_path, monkeypatch, capsys, texts):
    from safetensors.torch import load_file, save_file

    folder = tiny_bert(tmp_path / "int")
    sd = load_file(str(folder / "model.safetensors"))
    name = "encoder.layer.0.attention.self.query.weight"
    sd[name] = (sd[name] * 100).to(torch.int32)
    save_file(sd, str(folder / "model.safetensors"), metadata={"format": "pt"})
    refused(["rollout", "--model", str(folder), "--texts", texts], tmp_path, monkeypatch, capsys,
            "model.safetensors", name, "int32", "float32")


def test_san_device_cuda_without_a_device(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    refused(["san", "--preset", "tiny", "--device", "cuda"], tmp_path, monkeypatch, capsys, "--device cuda")


@pytest.mark.parametrize("command", ["san", "modalities"])
def test_a_checkpoint_folder_that_cannot_be_made(tmp_path, monkeypatch, capsys, command):
    """``<out>/checkpoints`` is a file (before: san's workers raised NotADirectoryError, a traceback,
    after the store was created)."""
    blocker = tmp_path / "out-file"
    blocker.write_text("x")
    monkeypatch.delenv("ATTNBOUNDS_CHECKPOINTS", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "out").mkdir()
    shutil.copy(blocker, work / "out" / "checkpoints")
    rc = main([command, "--preset", "tiny", "--db", str(work / "sub" / "r.db"), "--out", str(work / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "--out" in err and "checkpoints" in err and "is not a folder" in err, err
    assert left_behind(work) == ["out", "out/checkpoints"]       # what the test put there, nothing else


def test_modalities_checkpoints_under_a_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "afile").write_text("x")
    refused(["modalities", "--preset", "tiny", "--checkpoints", str(tmp_path / "afile" / "ck")], tmp_path,
            monkeypatch, capsys, "--checkpoints", "afile", "is not a folder")
    shutil.rmtree(tmp_path / "work")
    monkeypatch.setenv("ATTNBOUNDS_CHECKPOINTS", str(tmp_path / "afile" / "ck"))
    refused(["modalities", "--preset", "tiny"], tmp_path, monkeypatch, capsys, "ATTNBOUNDS_CHECKPOINTS", "afile")


# -- a token set with no tokens left ---------------------------------------------------------------
@pytest.mark.models
def test_no_content_tokens_is_said_in_one_line_and_draws_no_empty_panel(tmp_path, monkeypatch, capsys):
    """A vocabulary with one content token that no input uses: every word is [UNK] (special), so
    no input keeps two content tokens. The report says so on the console and in the D1 caption,
    writes no heads-content table, and the heatmap has one panel (all tokens), never an empty one."""
    from verification.trained.report import figures as report

    folder = tiny_bert(tmp_path / "unk")
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nzzz\n")
    texts = tmp_path / "t.txt"
    texts.write_text("The cat sat on the mat.\nA dog barked twice.\n")
    panels = {}
    real = report.save_figure

    def spy(fig, fig_dir, name, prov):
        panels[name.split("_")[1]] = [ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>"]
        return real(fig, fig_dir, name, prov)

    monkeypatch.setattr(report, "save_figure", spy)
    out = tmp_path / "out"
    rc = main(["rollout", "--model", str(folder), "--texts", str(texts), "--db", str(tmp_path / "r.db"),
               "--out", str(out)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    said = [ln for ln in captured.out.splitlines() if ln.startswith("unk-") and "content tokens: none of the 2 inputs" in ln]
    assert len(said) == 1, captured.out          # its own line (the D1 caption repeats it, below)
    assert panels["heatmap"] == ["all tokens"], panels
    tables = {p.name for p in (out / "tables").iterdir()}
    assert not any(n.startswith("trained-heads-content-") for n in tables), tables
    d1 = next((out / "tables").glob("trained-d1-*.md")).read_text()
    assert "Note: content tokens: none of the 2 inputs" in d1 and "content tokens" not in d1.split("\n\n", 1)[1]


@pytest.mark.models
def test_content_tokens_present_keep_their_table_and_panel(tmp_path, monkeypatch, capsys):
    """The control: MiniLM's own vocabulary gives content tokens, a heads-content table and two panels."""
    from verification.trained.report import figures as report

    folder = tiny_bert(tmp_path / "ok")
    texts = tmp_path / "t.txt"
    texts.write_text("The cat sat on the mat.\nA dog barked twice.\n")
    panels = {}
    real = report.save_figure

    def spy(fig, fig_dir, name, prov):
        panels[name.split("_")[1]] = [ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>"]
        return real(fig, fig_dir, name, prov)

    monkeypatch.setattr(report, "save_figure", spy)
    out = tmp_path / "out"
    assert main(["rollout", "--model", str(folder), "--texts", str(texts), "--db", str(tmp_path / "r.db"),
                 "--out", str(out)]) == 0
    assert "none of the" not in capsys.readouterr().out
    assert panels["heatmap"] == ["all tokens", "content tokens"], panels
    assert any(p.name.startswith("trained-heads-content-") for p in (out / "tables").iterdir())
