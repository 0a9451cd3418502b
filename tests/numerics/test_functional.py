"""The functional checks' measurements (numerics.sources.functional, numerics.sources.saliency) on tiny
synthetic models with known answers: a decoder that predicts nothing has loss log V per token and its
unigram baseline the hand-computed one; a decoder that predicts the next token has loss near 0; a
masked-LM head that always says one residue scores that residue's frequency; the halves of a text
repeated twice have cosine 1; a saliency graph that sees only pixel values has the same contrast on
the photograph and its shuffled copy. And the refusals: a weights file without a masked-LM head, a
graph without the saliency output, a constant map, a corpus too short to split."""
import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from numerics.sources import functional as F
from numerics.sources.corpus import TextInput
from numerics.sources.loaded import Encoded
from theory.errors import InvalidInput

LETTERS = "abcdefgh"
BOS, MASK = 0, 1                                    # the special tokens of the toy vocabulary
VOCAB = 2 + len(LETTERS)


class Tokenizer:
    """One token per letter (ids 2..9), spaces dropped; ``<s>`` (0) first with special tokens."""

    mask_token_id = MASK

    def __call__(self, text, add_special_tokens=True):
        def ids(t):
            return ([BOS] if add_special_tokens else []) + [2 + LETTERS.index(c) for c in t if c != " "]
        return {"input_ids": [ids(t) for t in text] if isinstance(text, list) else ids(text)}


class Module(torch.nn.Module):
    """``last_hidden_state`` = ``rule(ids)``; the input embedding is the identity (V x V)."""

    def __init__(self, rule):
        super().__init__()
        self.rule = rule
        self.emb = torch.nn.Embedding(VOCAB, VOCAB)
        with torch.no_grad():
            self.emb.weight.copy_(torch.eye(VOCAB))

    def get_input_embeddings(self):
        return self.emb

    def forward(self, input_ids, attention_mask):
        return SimpleNamespace(last_hidden_state=self.rule(input_ids[0])[None])


@dataclass
class Model:
    rule: object
    causal: bool = True
    name: str = "toy"
    template: object = None
    source: str = ""
    special_ids: frozenset = frozenset({BOS, MASK})
    config: object = field(default_factory=lambda: SimpleNamespace(final_logit_softcapping=None, hidden_act="gelu",
                                                                     layer_norm_eps=1e-12))

    def __post_init__(self):
        self.tokenizer = Tokenizer()
        self.module = Module(self.rule)

    def encode(self, text):
        ids = torch.tensor(self.tokenizer(text)["input_ids"])
        return Encoded(ids=ids, special=torch.tensor([int(i) in self.special_ids for i in ids]), truncated=False,
                       n_tokens_full=len(ids))


def texts(*words):
    return [TextInput(f"t:{k}", w, "toy") for k, w in enumerate(words)]


def test_a_decoder_that_predicts_nothing_has_loss_log_v_and_the_hand_computed_unigram():
    model = Model(lambda ids: torch.zeros(len(ids), VOCAB))
    scored, fit = texts("abca", "bb"), texts("aab", "c")
    got = F.decoder_loss(model, scored, fit)
    counts = np.ones(VOCAB)
    for i in (2, 2, 3, 4):                     # a a b c
        counts[i] += 1
    logp = np.log(counts / counts.sum())
    assert got.model == pytest.approx((math.log(VOCAB), math.log(VOCAB)), rel=1e-12)
    assert got.reference == pytest.approx((-np.mean(logp[[2, 3, 4, 2]]), -np.mean(logp[[3, 3]])), rel=1e-12)
    assert got.units == (4, 2) and got.better == "lower"
    assert all(d < 0 for d in got.improvement)             # worse than the unigram: a negative improvement


def test_a_decoder_that_predicts_the_next_token_beats_its_unigram():
    nxt = {2: 3, 3: 4, 4: 2}          # a -> b -> c -> a, after <s> comes a
    def rule(ids):
        out = torch.zeros(len(ids), VOCAB)
        for p, i in enumerate(ids.tolist()):
            out[p, nxt.get(i, 2)] = 60.0
        return out
    got = F.decoder_loss(Model(rule), texts("abcabc", "abca"), texts("aabbcc"))
    assert max(got.model) < 1e-20 and min(got.improvement) > 1.0


def test_a_head_that_always_says_one_residue_scores_its_frequency(tmp_path):
    from safetensors.torch import save_file

    d = VOCAB
    head = {k: torch.zeros(d, d) for k in (F.HEAD[0], F.HEAD[4])}
    head.update({F.HEAD[1]: torch.zeros(d), F.HEAD[2]: torch.ones(d), F.HEAD[3]: torch.zeros(d),
                 F.HEAD[5]: torch.zeros(d)})
    head[F.HEAD[5]][2] = 10.0                    # always "a"
    save_file(head, str(tmp_path / "model.safetensors"))
    model = Model(lambda ids: torch.zeros(len(ids), VOCAB), causal=False, source=str(tmp_path / "model.safetensors"))
    scored = texts("aaaaaaaaaa", "abababababababababab")
    got = F.masked_accuracy(model, scored, texts("aaab"), seed=0)
    assert got.model == got.reference                       # the head and the baseline both say "a"
    assert got.model[0] == 1.0 and got.units == (2, 3)      # 15% of 10 and of 20 residues masked
    save_file({F.HEAD[0]: torch.zeros(d, d)}, str(tmp_path / "nohead.safetensors"))
    with pytest.raises(InvalidInput, match="no masked-language-model head"):
        F.masked_accuracy(Model(model.rule, causal=False, source=str(tmp_path / "nohead.safetensors")), scored,
                          texts("aaab"))


def test_halves_of_a_repeated_text_have_cosine_one_and_the_pairing_is_a_derangement():
    model = Model(lambda ids: torch.nn.functional.one_hot(ids, VOCAB).double(), causal=False)
    got = F.pair_similarity(model, texts("abc abc", "def def", "gh gh"), seed=3)
    assert got.model == pytest.approx((1.0, 1.0, 1.0))
    assert max(got.reference) < 0.5 and min(got.improvement) > 0.5
    for n in (2, 3, 7):
        p = F.derangement(n, seed=1)
        assert sorted(p) == list(range(n)) and all(i != j for i, j in enumerate(p))
        assert p == F.derangement(n, seed=1)
    with pytest.raises(InvalidInput, match="causal"):
        F.pair_similarity(Model(model.rule), texts("ab ab", "cd cd"))


def test_split_texts_scores_long_inputs_and_fits_on_the_rest():
    corpus = texts("a b", "a b c d", "a b c d e", "a", "a b c d e f", "x y z w")
    scored, fit = F.split_texts(corpus, 2, min_words=4)
    assert [t.id for t in scored] == ["t:1", "t:2"] and [t.id for t in fit] == ["t:3", "t:4", "t:5"]
    with pytest.raises(InvalidInput, match="two inputs"):
        F.split_texts(corpus, 2, min_words=10)


def saliency_graph(path, output="output_importance", constant=False):
    """A (1, 3, 28, 28) -> (1, 1, 28, 28) graph: the mean over the channels (or 0 times it)."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1)]
    if constant:
        nodes += [helper.make_node("Mul", ["m", "zero"], ["m0"])]
    nodes += [helper.make_node("Identity", ["m0" if constant else "m"], [output])]
    graph = helper.make_graph(nodes, "toy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 28, 28])],
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, [1, 1, 28, 28])],
                              [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])] if constant else [])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return str(path)


def test_a_graph_that_sees_only_pixel_values_has_the_same_contrast_when_shuffled(tmp_path):
    from numerics.sources import saliency as S

    x = np.random.default_rng(0).random((1, 3, 28, 28)).astype(np.float32)
    perm = [2, 0, 3, 1]
    shuffled = S.shuffle_patches(x, perm)
    assert np.array_equal(shuffled[:, :, :14, :14], x[:, :, 14:, :14])       # patch 0 is patch 2 (row-major)
    assert np.array_equal(S.shuffle_patches(shuffled, list(np.argsort(perm))), x)
    images = [SimpleNamespace(id=f"img{k}") for k in range(3)]
    model = SimpleNamespace(name="toy", source=saliency_graph(tmp_path / "s.onnx"),
                            pixels=lambda item: np.random.default_rng(int(item.id[-1])).random((1, 3, 28, 28)).astype(
                                np.float32))
    got = S.saliency_contrast(model, images, seed=0)
    assert got.model == pytest.approx(got.reference, rel=1e-5) and got.units == (784,) * 3
    with pytest.raises(InvalidInput, match="no output 'output_importance'"):
        S.saliency_contrast(SimpleNamespace(**{**vars(model), "source": saliency_graph(tmp_path / "o.onnx", "heat")}),
                            images)
    with pytest.raises(InvalidInput, match="constant"):
        S.saliency_contrast(SimpleNamespace(**{**vars(model), "source": saliency_graph(tmp_path / "c.onnx",
                                                                                       constant=True)}), images)
