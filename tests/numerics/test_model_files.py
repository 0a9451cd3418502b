"""The weights file a user names is the one loaded and hashed (issue 33, items 2 and 5): another file
of the folder, a folder holding one differently named file, a sharded index, an opted-in pickle,
base-model prefixes, and weights with NaN/inf refused naming the file and the tensor."""
import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from numerics.sources.models import embedded_path, load_model
from theory.errors import InvalidInput

pytestmark = pytest.mark.models
TEXT = "The quick brown fox jumps over the lazy dog."
QUERY = "encoder.layer.0.attention.self.query.weight"


@pytest.fixture(scope="module")
def minilm_weights():
    folder, _ = embedded_path("minilm")
    return load_file(str(folder / "model.safetensors"))


def config_folder(dst, with_weights=True):
    """A copy of the embedded MiniLM folder (configuration and tokenizer; its model.safetensors
    symlinked when ``with_weights``)."""
    src, _ = embedded_path("minilm")
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and f.suffix != ".safetensors":
            shutil.copy(f, dst / f.name)
    if with_weights:
        (dst / "model.safetensors").symlink_to(src / "model.safetensors")
    return dst


def scaled(sd, factor=3.0):
    out = dict(sd)
    out[QUERY] = sd[QUERY] * factor        # other layer-0 queries: other layer-0 attention
    return out


def load(path, **kw):
    return load_model(path, max_tokens=16, cache=False, **kw)


def test_a_named_weights_file_is_loaded_and_hashed(tmp_path, minilm_weights):
    d = config_folder(tmp_path / "model")
    save_file(scaled(minilm_weights), str(d / "other.safetensors"))
    base, other, named_default = load(d), load(d / "other.safetensors"), load(d / "model.safetensors")
    assert not torch.equal(base.attentions(TEXT)[0], other.attentions(TEXT)[0])
    assert torch.equal(base.attentions(TEXT)[5], load("minilm").attentions(TEXT)[5])
    assert other.fingerprint != base.fingerprint
    assert other.name.endswith(other.fingerprint[:8]) and "other" in other.name
    assert other.source.endswith("other.safetensors")
    # naming the folder's own model.safetensors is the folder; a file lying beside it changes nothing
    assert named_default.fingerprint == base.fingerprint and named_default.name == base.name
    assert base.fingerprint == load("minilm").fingerprint


def test_a_folder_with_one_differently_named_file_loads_it(tmp_path, minilm_weights):
    d = config_folder(tmp_path / "v2", with_weights=False)
    save_file(scaled(minilm_weights), str(d / "weights-v2.safetensors"))
    m = load(d)
    assert m.source.endswith("weights-v2.safetensors")
    ref = config_folder(tmp_path / "ref")
    save_file(scaled(minilm_weights), str(ref / "other.safetensors"))
    assert torch.equal(m.attentions(TEXT), load(ref / "other.safetensors").attentions(TEXT))

    save_file(minilm_weights, str(d / "weights-v1.safetensors"))
    with pytest.raises(InvalidInput, match="several weight files.*weights-v1.safetensors, "
                                           "weights-v2.safetensors.*name the one"):
        load(d)


def test_a_sharded_index_loads_its_shards_and_stays_in_its_folder(tmp_path, minilm_weights):
    d = config_folder(tmp_path / "sharded", with_weights=False)
    sd = scaled(minilm_weights)
    keys = sorted(sd)
    halves = {"part-1.safetensors": keys[: len(keys) // 2], "part-2.safetensors": keys[len(keys) // 2:]}
    for name, ks in halves.items():
        save_file({k: sd[k] for k in ks}, str(d / name))
    index = {"metadata": {}, "weight_map": {k: name for name, ks in halves.items() for k in ks}}
    (d / "w.safetensors.index.json").write_text(json.dumps(index))
    ref = config_folder(tmp_path / "ref")
    save_file(sd, str(ref / "other.safetensors"))
    want = load(ref / "other.safetensors").attentions(TEXT)
    m = load(d / "w.safetensors.index.json")
    assert torch.equal(m.attentions(TEXT), want)
    assert torch.equal(load(d).attentions(TEXT), want)          # the folder's only index

    index["weight_map"][keys[0]] = "../outside.safetensors"
    (d / "w.safetensors.index.json").write_text(json.dumps(index))
    save_file({keys[0]: sd[keys[0]]}, str(tmp_path / "outside.safetensors"))
    with pytest.raises(InvalidInput, match="outside.safetensors.*outside the folder"):
        load(d / "w.safetensors.index.json")


def test_prefixed_keys_load_and_missing_tensors_are_refused(tmp_path, minilm_weights):
    d = config_folder(tmp_path / "m")
    sd = {f"bert.{k}": v for k, v in scaled(minilm_weights).items()}
    sd["cls.predictions.bias"] = torch.zeros(4)              # a task head the base model does not hold
    save_file(sd, str(d / "prefixed.safetensors"))
    save_file(scaled(minilm_weights), str(d / "plain.safetensors"))
    assert torch.equal(load(d / "prefixed.safetensors").attentions(TEXT),
                       load(d / "plain.safetensors").attentions(TEXT))

    partial = {k: v for k, v in minilm_weights.items() if k != QUERY}
    save_file(partial, str(d / "partial.safetensors"))
    with pytest.raises(InvalidInput, match=f"partial.safetensors.*not in the weights.*{QUERY}"):
        load(d / "partial.safetensors")


def test_a_named_pickle_is_the_one_loaded_when_opted_in(tmp_path, minilm_weights):
    d = config_folder(tmp_path / "p")
    torch.save(scaled(minilm_weights), d / "alt.bin")
    save_file(scaled(minilm_weights), str(d / "other.safetensors"))
    with pytest.raises(InvalidInput, match="refusing pickled weights.*alt.bin"):
        load(d / "alt.bin")
    m = load(d / "alt.bin", allow_pickle=True)
    assert m.source.endswith("alt.bin")
    assert torch.equal(m.attentions(TEXT), load(d / "other.safetensors").attentions(TEXT))


@pytest.mark.parametrize("file", ["x.safetensors", "model.safetensors"])
def test_non_finite_weights_name_the_file_and_the_tensor(tmp_path, minilm_weights, file):
    d = config_folder(tmp_path / "nan", with_weights=False)
    bad = dict(minilm_weights)
    q = bad[QUERY].clone()
    q[0, 0], q[1, 1], q[2, 2] = float("nan"), float("inf"), float("-inf")
    bad[QUERY] = q
    save_file(bad, str(d / file))
    for path in (d / file, d):
        with pytest.raises(InvalidInput, match=rf"{file}'?: tensor '{QUERY}' has 3 non-finite entries "
                                               r"\(NaN or inf\)"):
            load(path)


def test_rollout_cli_loads_the_named_file(tmp_path, minilm_weights, capsys):
    from verification.cli import main

    d = config_folder(tmp_path / "model")
    save_file(scaled(minilm_weights), str(d / "other.safetensors"))
    bad = dict(minilm_weights)
    bad[QUERY] = bad[QUERY].clone()
    bad[QUERY][3, 4] = float("nan")
    save_file(bad, str(d / "nan.safetensors"))
    texts = tmp_path / "t.txt"
    texts.write_text("The cat sat on the mat.\n")
    out, db = tmp_path / "out", str(tmp_path / "r.db")
    ids = []
    for model in (d, d / "other.safetensors"):
        assert main(["rollout", "--model", str(model), "--texts", str(texts), "--limit", "1",
                     "--max-tokens", "16", "--db", db, "--out", str(out)]) == 0
        ids.append(load(model).name)
    assert ids[0] != ids[1] and "other" in ids[1]
    tables = sorted(p.name for p in (out / "tables").glob("trained-d1-*.md"))
    assert len(tables) == 2 and any("other" in t for t in tables), tables
    capsys.readouterr()
    rc = main(["rollout", "--model", str(d / "nan.safetensors"), "--texts", str(texts), "--limit", "1",
               "--max-tokens", "16", "--db", db, "--out", str(out)])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert "nan.safetensors" in err and QUERY in err and "1 non-finite entry" in err and "batch" not in err


def test_the_folder_default_is_loaded_whatever_config_json_points_at(tmp_path, minilm_weights):
    """transformers would follow a ``transformers_weights`` entry of config.json to another file; the
    file resolved (and hashed) is the one loaded all the same."""
    d = config_folder(tmp_path / "model")
    save_file(scaled(minilm_weights), str(d / "other.safetensors"))
    cfg = json.loads((d / "config.json").read_text())
    cfg["transformers_weights"] = "other.safetensors"
    (d / "config.json").write_text(json.dumps(cfg))
    assert load(d).source.endswith("model.safetensors")
    assert torch.equal(load(d).attentions(TEXT), load("minilm").attentions(TEXT))


def test_finite_weights_whose_attention_is_nan_are_refused_at_load_naming_layer_and_head(tmp_path, minilm_weights):
    """Finite weights can still overflow: queries and keys scaled by 1e20 make layer 0's scores
    infinite and its attention NaN. The load's probe input shows it, so the model is refused before
    any store exists, in one line naming the file, the layer and the head."""
    d = config_folder(tmp_path / "model", with_weights=False)
    key = QUERY.replace("query", "key")
    save_file({**scaled(minilm_weights, 1e20), key: minilm_weights[key] * 1e20}, str(d / "model.safetensors"))
    with pytest.raises(InvalidInput, match=r"attention on a probe input .* is not finite: layer 0, head 0") as err:
        load(d)
    assert str(d) in str(err.value) and "\n" not in str(err.value)
