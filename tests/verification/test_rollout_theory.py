"""``attnbounds rollout --theory FILE.py --check ID``: a user's statement decided on every attention
head of a model (verification.trained.checks.heads.run_check), its symbols bound to what the model computes
(A: a head's attention, L: its pre-softmax scores, X: its layer's input; B: the next layer's attention),
on a tiny random BERT (:func:`verification.testing.fakes.tiny_bert`, 2 layers x 2 heads), a tiny random
Llama decoder (causal, 2 layers x 4 heads), a tiny pre-norm ONNX image model, MiniLM (one input) and
three short texts."""
from __future__ import annotations

import csv
import sqlite3
from fractions import Fraction

import numpy as np
import pytest

from verification.cli import main
from verification.testing.fakes import TOKENIZER, tiny_bert

pytestmark = pytest.mark.models

LAYERS, HEADS = 2, 2
TEXTS = ["The cat sat on the mat.", "A dog barked at the moon tonight.", "Colourless green ideas sleep furiously."]
THEORY = '''
from theory import Theorem, register
from theory.expr import A, B, C, I, delta, exp, logits, n, parameter, ptp, softmax, spread, tokens
L, X = logits("L"), tokens("X")
register(Theorem(id="rolltest.square", title="delta(A^2) <= delta(A)^2", category="proved",
                 statement=delta(A**2) <= delta(A)**2))
register(Theorem(id="rolltest.wrong", title="a false bound", category="conjecture",
                 statement=delta(A) <= delta(A**2)))
register(Theorem(id="rolltest.claimed", title="a false bound filed as proved", category="proved",
                 statement=delta(A) <= delta(A**2)))
register(Theorem(id="rolltest.ab", title="two layers", category="proved",
                 statement=delta(B * A) <= delta(A) * delta(B)))
register(Theorem(id="rolltest.abwrong", title="two layers, false", category="conjecture",
                 statement=delta(A) * delta(B) <= delta(B * A)))
register(Theorem(id="rolltest.abc", title="three layers", category="proved",
                 statement=delta(C * B * A) <= delta(A) * delta(B) * delta(C)))
register(Theorem(id="rolltest.ge", title="the false bound, written with >=", category="conjecture",
                 statement=delta(A**2) >= delta(A)))
register(Theorem(id="rolltest.soft", title="softmax contraction", category="proved",
                 statement=delta(softmax(L)) <= 1 - exp(-ptp(L))))
register(Theorem(id="rolltest.softwrong", title="softmax contraction, too strong", category="conjecture",
                 statement=delta(softmax(L)) <= 1 - exp(-ptp(L) / 8)))
register(Theorem(id="rolltest.causal", title="causal softmax contraction", category="proved",
                 statement=delta(softmax(L, mask="causal")) <= 1 - exp(-ptp(L)) / n))
register(Theorem(id="rolltest.causalwrong", title="causal softmax, the bidirectional bound", category="conjecture",
                 statement=delta(softmax(L, mask="causal")) <= 1 - exp(-ptp(L))))
register(Theorem(id="rolltest.tok", title="oscillation contraction", category="proved",
                 statement=spread(A * X) <= delta(A) * spread(X)))
register(Theorem(id="rolltest.tokwrong", title="oscillation grows", category="conjecture",
                 statement=spread(X) <= spread(A * X)))
register(Theorem(id="rolltest.where", title="where the logits are constant", category="proved",
                 statement=delta(softmax(L)) <= 1 - exp(-ptp(L)), where=[ptp(L) <= 0]))
alpha = parameter("alpha", 0, 1)
register(Theorem(id="rolltest.param", title="a parameter", category="proved",
                 statement=delta(alpha * I + (1 - alpha) * A) <= 1))
'''


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """The model folder, the texts file and the theory file (outside every test's working folder);
    the theory's ids leave the registry afterwards."""
    from theory.plugins import unload_files

    d = tmp_path_factory.mktemp("rollout_theory")
    folder = tiny_bert(d / "bert")
    texts = d / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n")
    theory = d / "my_bounds.py"
    theory.write_text(THEORY)
    yield {"model": str(folder), "texts": str(texts), "theory": str(theory)}
    unload_files()


def rollout(setup, db, out, *checks):
    argv = ["rollout", "--model", setup["model"], "--texts", setup["texts"], "--theory", setup["theory"],
            "--db", str(db), "--out", str(out)]
    for c in checks:
        argv += ["--check", c]
    return main(argv)


def table(out, theorem_id):
    (path,) = (out / "tables").glob(f"trained-check-{theorem_id.replace('.', '_')}-*.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {r["layer"]: {k: (v if k in ("layer", "tight share [95% Wilson]") else int(v)) for k, v in r.items()}
            for r in rows}


def check_records(db, theorem_id):
    from verification.store import ResultStore

    with ResultStore(db) as s:
        return list(s.records(theorem=theorem_id))


def marks(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return sorted(con.execute("SELECT campaign, chunk, created, digest FROM chunks").fetchall())


def exact_rows(A):
    """The float rows as exact rationals, each divided by its exact sum."""
    out = []
    for row in A:
        r = [Fraction(float(x)) for x in row]
        s = sum(r)
        out.append([x / s for x in r])
    return out


def delta_by_definition(M):
    n = len(M)
    return max((sum(abs(a - b) for a, b in zip(M[i], M[j])) / 2 for i in range(n) for j in range(n)),
               default=Fraction(0))


def square(M):
    n = len(M)
    return [[sum(M[i][k] * M[k][j] for k in range(n)) for j in range(n)] for i in range(n)]


def test_counts_add_up_and_the_false_conjecture_is_refuted_on_stored_heads(setup, tmp_path):
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.square", "rolltest.wrong") == 0
    total = LAYERS * HEADS * len(TEXTS)
    for tid in ("rolltest.square", "rolltest.wrong"):
        t = table(out, tid)
        assert set(t) == {"0", "1", "all"}
        for row in t.values():
            assert row["heads checked"] == row["holds"] + row["tight"] + row["violated"] + row["not-applicable"]
        assert sum(t[str(l)]["heads checked"] for l in range(LAYERS)) == t["all"]["heads checked"] == total
        assert all(t[str(l)]["heads checked"] == HEADS * len(TEXTS) for l in range(LAYERS))
    true, false = table(out, "rolltest.square"), table(out, "rolltest.wrong")
    assert true["all"]["violated"] == 0 and not check_records(db, "rolltest.square")
    # delta(A) > 0 on every head of a random model, and then delta(A^2) <= delta(A)^2 < delta(A)
    assert false["all"]["violated"] == total
    recs = check_records(db, "rolltest.wrong")
    assert len(recs) == false["all"]["violated"]
    assert {(r["provenance"]["input"], r["provenance"]["layer"], r["provenance"]["head"]) for r in recs} == \
        {(f"texts.txt:{k + 1}", l, h) for k in range(len(TEXTS)) for l in range(LAYERS) for h in range(HEADS)}
    assert all(r["verdict"] == "refuted" for r in recs)       # a conjecture's counterexample: an outcome
    md = next((out / "tables").glob("trained-check-rolltest_wrong-*.md")).read_text()
    assert "rolltest.wrong" in md and "my_bounds.py" in md and "delta(A) <= delta(A**2)" in md
    assert str(tmp_path) not in md                               # the theory file by its name only

    # the stored sides, against an independent exact computation on the model's own floats
    from numerics.sources.corpus import load_corpus
    from numerics.sources.models import load_model

    model, corpus = load_model(setup["model"]), load_corpus(setup["texts"])
    by_id = {t.id: t for t in corpus.inputs}
    for r in recs[:3]:
        p = r["provenance"]
        A = model.instance(by_id[p["input"]]).attention[p["layer"], p["head"]]
        M = exact_rows(A)
        lhs, rhs = Fraction(r["extra"]["lhs"]), Fraction(r["extra"]["rhs"])
        assert (lhs, rhs) == (delta_by_definition(M), delta_by_definition(square(M)))
        assert lhs > rhs and p["n"] == len(M)


def test_a_ge_statement_keeps_its_sides_as_written(setup, tmp_path):
    """delta(A^2) >= delta(A): a refuted head's record says lhs = delta(A^2), relation >=, rhs = delta(A)
    (exact and float sides alike), not the normal form delta(A) <= delta(A^2) it is decided as."""
    from numerics.sources.corpus import load_corpus
    from numerics.sources.models import load_model

    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.ge") == 0
    recs = check_records(db, "rolltest.ge")
    assert len(recs) == LAYERS * HEADS * len(TEXTS)
    model, corpus = load_model(setup["model"]), load_corpus(setup["texts"])
    by_id = {t.id: t for t in corpus.inputs}
    for r in recs[:3]:
        p, e = r["provenance"], r["extra"]
        M = exact_rows(model.instance(by_id[p["input"]]).attention[p["layer"], p["head"]])
        assert e["relation"] == ">=" and (Fraction(e["lhs"]), Fraction(e["rhs"])) == \
            (delta_by_definition(square(M)), delta_by_definition(M))
        assert e["lhs_float"] < e["rhs_float"] and abs(e["lhs_float"] - float(Fraction(e["lhs"]))) <= e["err"][0]


def test_the_built_in_d1_checked_this_way_agrees_with_the_d1_records(setup, tmp_path):
    """dobrushin.factor is a statement over A too: decided per head by numerics.expr, its per-layer
    verdicts are those of the suite's own D1 records (numerics.dobrushin.factor_check) on all tokens."""
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "dobrushin.factor") == 0
    t = table(out, "dobrushin.factor")
    d1 = [r for r in check_records(db, "dobrushin.factor") if r["campaign"].startswith("trained-v")
          and r["provenance"]["variant"] == "all" and r["provenance"]["head"] is not None]
    assert len(d1) == LAYERS * HEADS * len(TEXTS)
    for l in range(LAYERS):
        tight = sum(r["verdict"] == "tight" for r in d1 if r["provenance"]["layer"] == l)
        holds = sum(r["verdict"] == "holds" for r in d1 if r["provenance"]["layer"] == l)
        assert (t[str(l)]["tight"], t[str(l)]["holds"], t[str(l)]["violated"]) == (tight, holds, 0)
    assert 0 < t["all"]["tight"] < t["all"]["heads checked"]       # both verdicts occur: the comparison can fail


def test_what_a_model_cannot_bind_is_refused_in_one_line_and_creates_nothing(setup, tmp_path, monkeypatch, capsys):
    """A parameter (no model gives it a value), a chain of three layers on a two-layer model, an unknown
    id: one line each, naming the theorem (and the model and the symbols), exit 2, nothing written."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    name = setup["model"].rsplit("/", 1)[-1]
    for bad, words in (("rolltest.param", ("rolltest.param", "parameter alpha", "attnbounds stress")),
                       ("rolltest.abc", ("rolltest.abc", "chain of 3", "B at layer l + 1", "C at layer l + 2",
                                         f"model {name}-", "2 layers")),
                       ("rolltest.nope", ("rolltest.nope", "no such theorem", "--theory"))):
        rc = rollout(setup, work / "sub" / "r.db", work / "out", "rolltest.square", bad)
        err = capsys.readouterr().err
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
        assert all(w in lines[0] for w in ("--check",) + words), lines[0]
        assert list(work.rglob("*")) == []


def test_a_rerun_resumes_and_computes_nothing(setup, tmp_path, monkeypatch):
    from verification.trained.checks import heads as checks

    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.wrong") == 0
    before = marks(db)
    assert sum(c.startswith("trained-check-") for c, *_ in before) == len(TEXTS)

    def never(*args, **kw):
        raise AssertionError("a stored chunk was computed again")

    monkeypatch.setattr(checks, "head_checks", never)
    assert rollout(setup, db, out, "rolltest.wrong") == 0
    assert marks(db) == before
    assert table(out, "rolltest.wrong")["all"]["violated"] == LAYERS * HEADS * len(TEXTS)
    # the planted case: a chunk deleted is computed again, so the patched function is reached
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM chunks WHERE campaign LIKE 'trained-check-%' AND chunk LIKE 'texts.txt:1#%'")
    with pytest.raises(AssertionError, match="computed again"):
        rollout(setup, db, out, "rolltest.wrong")


def test_a_violated_proved_statement_stops_loudly_after_storing_its_chunk(setup, tmp_path):
    from theory.verdicts import ViolationError

    db, out = tmp_path / "r.db", tmp_path / "out"
    with pytest.raises(ViolationError, match="rolltest.claimed"):
        rollout(setup, db, out, "rolltest.claimed")
    recs = check_records(db, "rolltest.claimed")
    assert recs and all(r["verdict"] == "violated" and r["slack"] < 0 for r in recs)
    assert {r["provenance"]["input"] for r in recs} == {"texts.txt:1"}      # stopped after the first chunk
    assert not list((out / "tables").glob("trained-check-rolltest_claimed-*"))   # it stopped: no table


def test_the_campaign_changes_with_the_statement_and_the_plan_replans(setup):
    import shlex

    from theory.plugins import load_file
    from verification.cli import build_parser
    from verification.trained.checks import Plan
    from verification.trained.checks.heads import statement_digest

    load_file(setup["theory"])          # as the command line does before it is read (another test may unload it)
    assert statement_digest("x.y", "delta(A) <= 1") != statement_digest("x.y", "delta(A) <= 1/2")
    assert statement_digest("x.y", "delta(A) <= 1") != statement_digest("x.z", "delta(A) <= 1")
    assert statement_digest("x.y", "delta(A) <= 1", ("causal",)) != statement_digest("x.y", "delta(A) <= 1")
    assert statement_digest("x.y", "delta(A) <= 1", (), ("ptp(L) <= 1",)) != statement_digest("x.y", "delta(A) <= 1")
    words = ["rollout", "--model", setup["model"], "--theory", setup["theory"], "--check", "rolltest.wrong",
             "--check", "rolltest.square", "--db", ":memory:"]
    plan = Plan.from_args(build_parser(words).parse_args(words))
    assert plan.checks == ("rolltest.wrong", "rolltest.square") and plan.provenance()["checks"]
    again = shlex.split(plan.command())[1:] + ["--db", ":memory:"]
    assert Plan.from_args(build_parser(again).parse_args(again)) == plan
    plain = Plan.from_args(build_parser(words[:3] + ["--db", ":memory:"]).parse_args(words[:3] + ["--db", ":memory:"]))
    assert plain.checks == () and "--check" not in plain.command() and "checks" not in plain.provenance()


# -- what the symbols are bound to: logits, tokens, a chain; a decoder, an ONNX file, MiniLM -----------

def tiny_llama(folder):
    """A 2-layer Llama decoder (random weights, seed 0; 4 query heads over 2 key/value heads) saved in
    ``folder``, with MiniLM's tokenizer files: causal, so its scores carry transformers' causal mask."""
    import torch
    from transformers import LlamaConfig, LlamaModel

    from numerics.atomic import copy_file
    from numerics.sources.embedded import embedded_path

    cfg = LlamaConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    LlamaModel(cfg).save_pretrained(folder)
    for name in TOKENIZER:
        copy_file(embedded_path("minilm")[0] / name, folder / name)
    return folder


def tiny_prenorm_onnx(path, residual=True):
    """A one-layer pre-norm image transformer over the 16 pixels of a 4 x 4 image: x (1, 16, 3) the
    pixels, h = LayerNorm(x), P = Softmax(h Wq (h Wk)^T) (1, 1, 16, 16), out = x + P h Wv (without
    ``residual``: out = P h Wv, so x is read by the normalisation only)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    w = {k: rng.standard_normal((3, 3 if k == "wv" else 2)).astype(np.float32) for k in ("wq", "wk", "wv")}
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()] + [
        numpy_helper.from_array(np.array([1, 3, 16], dtype=np.int64), "cn"),
        numpy_helper.from_array(np.array([1, 1, 16, 16], dtype=np.int64), "att"),
        numpy_helper.from_array(np.array([1, 16, 16], dtype=np.int64), "p3"),
        numpy_helper.from_array(np.ones(3, dtype=np.float32), "gamma"),
        numpy_helper.from_array(np.zeros(3, dtype=np.float32), "beta")]
    nodes = [helper.make_node("Reshape", ["image", "cn"], ["x_cn"]),
             helper.make_node("Transpose", ["x_cn"], ["x"], perm=[0, 2, 1]),
             helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["h"], axis=-1),
             helper.make_node("MatMul", ["h", "wq"], ["q"]),
             helper.make_node("MatMul", ["h", "wk"], ["k"]),
             helper.make_node("MatMul", ["h", "wv"], ["v"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s0"]),
             helper.make_node("Reshape", ["s0", "att"], ["s"]),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("Reshape", ["p", "p3"], ["pm"]),
             helper.make_node("MatMul", ["pm", "v"], ["o"])]
    nodes.append(helper.make_node("Add", ["x", "o"], ["out"]) if residual else helper.make_node("Identity", ["o"], ["out"]))
    graph = helper.make_graph(nodes, "prenorm", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def tiny_mistral(folder, window=3):
    """A 2-layer Mistral decoder (random weights, seed 0) attending within a sliding window of ``window``
    tokens, with MiniLM's tokenizer files: on longer inputs it masks entries below the diagonal too."""
    import torch
    from transformers import MistralConfig, MistralModel

    from numerics.atomic import copy_file
    from numerics.sources.embedded import embedded_path

    cfg = MistralConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        num_key_value_heads=1, intermediate_size=64, max_position_embeddings=64, sliding_window=window)
    torch.manual_seed(0)
    MistralModel(cfg).save_pretrained(folder)
    for name in TOKENIZER:
        copy_file(embedded_path("minilm")[0] / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def decoder(tmp_path_factory):
    return str(tiny_llama(tmp_path_factory.mktemp("rollout_llama") / "llama"))


def spread_by_definition(M):
    return max(max(col) - min(col) for col in zip(*M))


def product(P, Q):
    return [[sum(P[i][k] * Q[k][j] for k in range(len(Q))) for j in range(len(Q[0]))] for i in range(len(P))]


def exact_floats(X):
    return [[Fraction(float(x)) for x in row] for row in X]


def states_of(model_path, texts_path, input_id, kinds=("logits", "tokens")):
    from numerics.sources.corpus import load_corpus
    from numerics.sources.models import load_model

    corpus = load_corpus(texts_path)
    return load_model(model_path).states(next(t for t in corpus.inputs if t.id == input_id), kinds)


def test_a_logits_and_a_tokens_statement_on_every_head_and_false_variants_with_exact_margins(setup, tmp_path):
    """L bound to each head's scores, X to each layer's input: the true bounds hold on every head;
    their false variants are violated on heads named by layer and head, each with its margin rhs - lhs:
    exact for the rational spread statement (equal to the definition on the bound values), a
    certified enclosure for the exponential one (containing the value computed at 60 digits)."""
    import mpmath

    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.soft", "rolltest.tok", "rolltest.softwrong", "rolltest.tokwrong",
                   "rolltest.where") == 0
    total = LAYERS * HEADS * len(TEXTS)
    assert table(out, "rolltest.where")["all"]["not-applicable"] == total      # where= ptp(L) <= 0: no head
    for tid in ("rolltest.soft", "rolltest.tok"):
        t = table(out, tid)
        assert t["all"]["heads checked"] == total and t["all"]["violated"] == 0 and t["all"]["undecided"] == 0
        assert t["all"]["holds"] + t["all"]["tight"] == total and not check_records(db, tid)
    md = next((out / "tables").glob("trained-check-rolltest_soft-*.md")).read_text()
    assert "L: the head's pre-softmax scores of layer l" in md and "(nothing masked)" in md
    md = next((out / "tables").glob("trained-check-rolltest_tok-*.md")).read_text()
    assert "X: the layer's input hidden states of layer l" in md

    tok = check_records(db, "rolltest.tokwrong")
    assert len(tok) == table(out, "rolltest.tokwrong")["all"]["violated"] > 0
    for r in tok[:2]:
        p, e = r["provenance"], r["extra"]
        inst, st = states_of(setup["model"], setup["texts"], p["input"])
        A = exact_rows(inst.attention[p["layer"], p["head"]])
        X = exact_floats(st["tokens"][p["layer"]])
        lhs, rhs = spread_by_definition(X), spread_by_definition(product(A, X))
        assert e["margin_exact"] and Fraction(e["margin"]) == rhs - lhs < 0
        assert (Fraction(e["lhs"]), Fraction(e["rhs"])) == (lhs, rhs) and r["verdict"] == "refuted"
        assert "X: the layer's input hidden states at layer l" in e["method"]

    soft = check_records(db, "rolltest.softwrong")
    assert len(soft) == table(out, "rolltest.softwrong")["all"]["violated"] > 0
    mpmath.mp.dps = 60
    for r in soft[:2]:
        p, e = r["provenance"], r["extra"]
        inst, st = states_of(setup["model"], setup["texts"], p["input"], ("logits",))
        Lh = [[mpmath.mpf(float(x)) for x in row] for row in st["logits"][p["layer"], p["head"]]]
        P = [[mpmath.exp(x) / mpmath.fsum(mpmath.exp(y) for y in row) for x in row] for row in Lh]
        delta = max(mpmath.fsum(abs(a - b) for a, b in zip(P[i], P[j])) / 2 for i in range(len(P)) for j in range(len(P)))
        flat = [x for row in Lh for x in row]
        margin = 1 - mpmath.exp(-(max(flat) - min(flat)) / 8) - delta
        mid, rad = (float(v) for v in e["margin"].split(" +/- "))
        assert not e["margin_exact"] and e["lhs"] is None and abs(margin - mid) <= rad and margin < 0
        assert (p["layer"], p["head"]) in {(l, h) for l in range(LAYERS) for h in range(HEADS)}


def test_the_scores_give_the_attention_and_the_layer_inputs_are_what_each_layer_reads(setup, decoder):
    """softmax(L) (a decoder: softmax(L, mask="causal"), L's masked entries 0) is the model's attention
    up to float rounding, on the tiny BERT and the tiny Llama; X is what each layer module receives."""
    import torch

    from numerics.sources.corpus import TextInput
    from numerics.sources.models import load_model
    from numerics.sources.states import softmax_rows

    text = TextInput(id="t", text=TEXTS[1], source="test")
    for path, causal in ((setup["model"], False), (decoder, True)):
        model = load_model(path)
        inst, st = model.states(text)
        L = st["logits"]
        assert model.causal == causal and L.shape == inst.attention.shape
        assert np.abs(softmax_rows(L, causal) - inst.attention).max() < 1e-6
        upper = np.triu(np.ones(L.shape[-2:], dtype=bool), 1)
        assert (L[..., upper] == 0).all() == causal and np.isfinite(L).all()
        seen = []
        layers = [m for m in model.module.modules() if type(m).__name__ in ("BertLayer", "LlamaDecoderLayer")]
        hooks = [m.register_forward_pre_hook(lambda m, args, kw: seen.append((args[0] if args else kw["hidden_states"])
                                                                             [0].double().numpy()), with_kwargs=True)
                 for m in layers]
        try:
            with torch.no_grad():
                ids = model.encode(text.text).ids[None]
                model.module(input_ids=ids, attention_mask=torch.ones_like(ids))
        finally:
            for h in hooks:
                h.remove()
        assert len(seen) == LAYERS and all(np.array_equal(x, X) for x, X in zip(seen, st["tokens"]))


def test_a_decoder_binds_its_causal_mask_explicitly(setup, decoder, tmp_path):
    """On a causal model the bound L has 0 above the diagonal and the head's attention is
    softmax(L, mask="causal"): the causal bound holds on every head; the bidirectional bound written
    for the causal softmax is violated on heads named by layer and head."""
    db, out = tmp_path / "r.db", tmp_path / "out"
    argv = ["rollout", "--model", decoder, "--texts", setup["texts"], "--theory", setup["theory"], "--limit", "2",
            "--db", str(db), "--out", str(out), "--check", "rolltest.causal", "--check", "rolltest.causalwrong"]
    assert main(argv) == 0
    true, false = table(out, "rolltest.causal"), table(out, "rolltest.causalwrong")
    total = LAYERS * 4 * 2
    assert true["all"]["heads checked"] == false["all"]["heads checked"] == total
    assert true["all"]["violated"] == 0 and true["all"]["holds"] + true["all"]["tight"] == total
    recs = check_records(db, "rolltest.causalwrong")
    assert 0 < len(recs) == false["all"]["violated"]
    assert all(r["provenance"]["head"] in range(4) and r["provenance"]["layer"] in range(LAYERS) and
               float(r["extra"]["margin"].split(" +/- ")[0]) < 0 for r in recs)
    md = next((out / "tables").glob("trained-check-rolltest_causal-*.md")).read_text()
    assert 'the entries above the diagonal 0, the attention softmax(L, mask="causal")' in md


def test_a_chain_binds_consecutive_layers_on_the_same_head(setup, tmp_path):
    """delta(B A) <= delta(A) delta(B), A at layer l and B at layer l + 1 (head h in both): one row per
    first layer; its false converse is violated where the product contracts strictly, each record's
    exact sides those of the definition on the two layers' heads."""
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.ab", "rolltest.abwrong") == 0
    true, false = table(out, "rolltest.ab"), table(out, "rolltest.abwrong")
    assert set(true) == set(false) == {"0", "all"}                 # a chain of 2 on 2 layers: first layer 0 only
    assert true["all"]["heads checked"] == HEADS * len(TEXTS) and true["all"]["violated"] == 0
    recs = check_records(db, "rolltest.abwrong")
    assert 0 < len(recs) == false["all"]["violated"]
    from numerics.sources.corpus import load_corpus
    from numerics.sources.models import load_model

    model, corpus = load_model(setup["model"]), load_corpus(setup["texts"])
    by_id = {t.id: t for t in corpus.inputs}
    for r in recs[:2]:
        p, e = r["provenance"], r["extra"]
        att = model.instance(by_id[p["input"]]).attention
        assert p["layers"] == [0, 1] and p["layer"] == 0
        A, B = exact_rows(att[0, p["head"]]), exact_rows(att[1, p["head"]])
        lhs, rhs = delta_by_definition(A) * delta_by_definition(B), delta_by_definition(product(B, A))
        assert (Fraction(e["lhs"]), Fraction(e["rhs"])) == (lhs, rhs) and Fraction(e["margin"]) == rhs - lhs < 0


def test_an_onnx_file_binds_its_softmax_inputs_and_its_pre_norm_layer_inputs(setup, tmp_path, monkeypatch, capsys):
    """A pre-norm ONNX layer: L is its Softmax input, X the value its normalisation and its residual Add
    read (here the pixels); both statements hold on its head. Without the residual Add the layer input
    is not found: a tokens statement is refused in one line naming the model and the symbol, and
    creates nothing."""
    import skimage

    from numerics.sources.images import load_images
    from numerics.sources.onnx_attention import load_onnx
    from numerics.sources.states import softmax_rows

    photo = str(skimage.data_dir) + "/chelsea.png"
    good = tiny_prenorm_onnx(tmp_path / "prenorm.onnx")
    model = load_onnx(good, cache=False)
    assert model.symbol_kinds == ("stochastic", "logits", "tokens") and model.layer_inputs == ("x",)
    image = load_images(photo).inputs[0]
    inst, st = model.states(image)
    assert np.abs(softmax_rows(st["logits"], False) - inst.attention).max() < 1e-6
    assert np.array_equal(st["tokens"][0], model.pixels(image).reshape(3, 16).T)
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert main(["rollout", "--model", str(good), "--images", photo, "--theory", setup["theory"], "--db", str(db),
                 "--out", str(out), "--check", "rolltest.soft", "--check", "rolltest.tok"]) == 0
    for tid in ("rolltest.soft", "rolltest.tok"):
        assert table(out, tid)["all"]["heads checked"] == 1 and table(out, tid)["all"]["violated"] == 0

    bad = tiny_prenorm_onnx(tmp_path / "noresidual.onnx", residual=False)
    assert "tokens" not in load_onnx(bad, cache=False).symbol_kinds
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    rc = main(["rollout", "--model", str(bad), "--images", photo, "--theory", setup["theory"], "--db",
               str(work / "sub" / "r.db"), "--out", str(work / "out"), "--check", "rolltest.tok"])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert all(w in lines[0] for w in ("--check rolltest.tok", "model noresidual-", "cannot bind X",
                                       "tokens symbol", "no layer input found for layer 0")), lines[0]
    assert list(work.rglob("*")) == []


def test_undecided_heads_are_counted_apart(setup, tmp_path, monkeypatch):
    """A head that decide leaves undecided (code 4) is its own column of the table, counted in the heads
    checked, never as holds or tight, and said in the caption."""
    import numerics.expr as nx

    real = nx.decide

    def some_undecided(compiled, values, assume=()):
        d = real(compiled, values, assume)
        d.codes[:1] = 4
        return d

    monkeypatch.setattr(nx, "decide", some_undecided)
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.soft") == 0
    t = table(out, "rolltest.soft")
    assert [t[str(l)]["undecided"] for l in range(LAYERS)] == [len(TEXTS)] * LAYERS
    assert t["all"]["heads checked"] == LAYERS * HEADS * len(TEXTS)
    assert t["all"]["holds"] + t["all"]["tight"] == LAYERS * HEADS * len(TEXTS) - LAYERS * len(TEXTS)
    md = next((out / "tables").glob("trained-check-rolltest_soft-*.md")).read_text()
    assert f"{LAYERS * len(TEXTS)} heads are undecided" in md


def test_minilm_every_head_of_every_layer(setup):
    """MiniLM (6 layers x 12 heads) on one input: the softmax and the oscillation bounds hold on every
    head with L its scores and X its layer's 384-wide input; the false oscillation bound is violated
    on heads named by layer and head."""
    from numerics.sources.corpus import TextInput
    from numerics.sources.models import load_model
    from theory.plugins import load_file
    from verification.trained.checks.heads import digest_of, head_checks

    load_file(setup["theory"])
    model = load_model("minilm", max_tokens=12)
    text = TextInput(id="t", text=TEXTS[0], source="test")
    for tid, violated in (("rolltest.soft", False), ("rolltest.tok", False), ("rolltest.tokwrong", True)):
        got = head_checks(model, text, tid, digest_of(tid))
        s = got.summaries[tid]
        assert len(s["layers"]) == 6 and all(sum(c.values()) == 12 for c in s["layers"])
        assert (sum(c["violated"] for c in s["layers"]) > 0) == violated
        assert len(got) == sum(c["violated"] for c in s["layers"])
        assert all(r.provenance["layer"] in range(6) and r.provenance["head"] in range(12) for r in got)
        if tid == "rolltest.tok":
            assert s["d"] == 384 and s["n"] == len(model.encode(text.text).ids) > 2


def test_a_mask_other_than_causal_is_refused_in_one_line_and_creates_nothing(setup, tmp_path, monkeypatch, capsys):
    """A sliding window shorter than the input masks entries below the diagonal: binding L there is
    refused before anything is written, naming the model, the input, the layer, head and entry; a
    statement without L still runs on it. Scores whose softmax is not the attention are refused too."""
    from numerics.sources.states import logits_bound
    from theory.errors import InvalidInput

    folder = tiny_mistral(tmp_path / "mistral")
    capsys.readouterr()                                                # transformers' progress bar while saving
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = ["rollout", "--model", str(folder), "--texts", setup["texts"], "--theory", setup["theory"], "--limit", "1",
            "--db", str(work / "sub" / "r.db"), "--out", str(work / "out"), "--check", "rolltest.causal"]
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert all(w in lines[0] for w in ("model mistral-", "input texts.txt:1", "layer 0, head 0, row 3, column 0",
                                       "a sliding window", 'softmax(L, mask="causal")')), lines[0]
    assert list(work.rglob("*")) == []
    assert main(argv[:-1] + ["rolltest.square"]) == 0                  # over A alone: nothing to bind but attention

    A = np.array([[[[1.0, 0.0], [0.5, 0.5]]]])
    with pytest.raises(InvalidInput, match="the scores read are not those of the attention .layer 0, head 0, row 1"):
        logits_bound(np.array([[[[0.0, -3.4e38], [0.0, 1.0]]]], dtype=np.float32), A, True, "model m, input t")
    assert logits_bound(np.array([[[[2.0, -3.4e38], [1.0, 1.0]]]], dtype=np.float32), A, True, "m")[0, 0, 0, 1] == 0
