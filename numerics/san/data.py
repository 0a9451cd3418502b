"""Training data, offline: byte-level prose from ``pydoc_data.topics`` and two synthetic probes.

Prose: the default corpus of :mod:`numerics.sources.corpus` (prose blocks of the Python reference,
in sorted topic order) joined by newlines, as UTF-8 bytes (vocabulary 256); the last
:data:`VAL_SHARE` of the bytes is held out for validation.

Probes, written as bytes too and mixed into training as whole rows (a share ``probe_share`` of each
batch; each row is a run of probe samples, each a retrieval sample with probability ``retrieval_share``, else a recall sample):

- context-grounded retrieval ``<P P P ?c7>``: fresh random key/value pairs, each written as one
  *pair byte* ``P`` (:data:`PAIR_BYTES`: the byte of key ``c`` with value 7; bytes the prose never
  uses), then a query ``?`` with a key letter; the answer (the digit after the key letter) can only
  come from the context. One attention layer can answer it (match the key letter to its pair byte,
  read the value from it); the two-byte form ``<a3 q7 m1 ?q7>`` needs an induction circuit of two
  composed layers, which the main job's reference did not form within its budget (measured on the
  2-core machine, d 32, context 32: 0.05-0.19 against a copy chance of about 0.31 after 1000 steps
  with a quarter of the rows probes, 0.35 after 3000 steps with every row a probe; a plain copy task
  of 8 random letters was not learned in 3000 steps either);
- parametric recall ``[xqz:7]``: a fixed table of facts (three-letter name -> digit, drawn from
  :data:`FACT_SEED`, the same for every run), queried with no context; the answer can only come
  from the weights.

Every batch is a pure function of (data seed, step): two models of a matched pair see the same
rows in the same order, and a resumed run sees what it would have seen.

>>> d = Data(ctx=32, n_facts=8)
>>> x, y = d.batch(seed=0, step=3, batch=4)
>>> x.shape, y.shape, bool((x[:, 1:] == y[:, :-1]).all())
((4, 32), (4, 32), True)
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from theory.errors import InvalidInput

VAL_SHARE = 0.1
FACT_SEED = 20260101
LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
DIGITS = np.frombuffer(b"0123456789", dtype=np.uint8)
KINDS = ("retrieval", "recall")
PAIR_KEYS = np.frombuffer(b"abcdef", dtype=np.uint8)      # the retrieval probe's keys
# the pair byte of key i with value v is PAIR_BYTES[10 * i + v]: 60 bytes of 0xC3-0xFF that the
# prose (UTF-8 of the Python reference) does not use (0xE2 does: it starts the typographic quotes)
PAIR_BYTES = np.array([b for b in range(0xC3, 0x100) if b != 0xE2][: 10 * len(PAIR_KEYS)], dtype=np.uint8)
PAIR_VALUE = {int(b): i % 10 for i, b in enumerate(PAIR_BYTES)}        # pair byte -> its value digit


@lru_cache(maxsize=1)
def prose_bytes() -> bytes:
    from numerics.sources.corpus import pydoc_corpus

    return "\n".join(t.text for t in pydoc_corpus().inputs).encode("utf-8")


def fact_table(n: int) -> list[tuple[bytes, int]]:
    """``n`` distinct three-letter names with a digit each (fixed by :data:`FACT_SEED`)."""
    rng = np.random.default_rng([FACT_SEED, n])
    names: dict[bytes, int] = {}
    while len(names) < n:
        name = bytes(rng.choice(LETTERS, 3))
        names.setdefault(name, int(rng.integers(10)))
    return list(names.items())


TOKENIZER = "minilm"     # the stated tokenizer of bytes per token: all-MiniLM-L6-v2's WordPiece (uncased)


def bytes_per_token(text: bytes, model: str = TOKENIZER) -> dict:
    """Measured bytes per token of ``text`` under an embedded model's ``tokenizer.json`` (loaded
    with the ``tokenizers`` library, no padding, no truncation, no special tokens): the factor that
    turns the suite's nats per byte into nats per token of that tokenizer, so that a loss gap can be
    set beside a paper's nats per token in magnitude (an approximation: another tokenizer, another
    factor). The package folder is located, never imported (numerics.sources.models)."""
    from tokenizers import Tokenizer

    from numerics.sources.models import embedded_path

    folder, _ = embedded_path(model)
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise InvalidInput(f"bytes_per_token: {str(path)!r} does not exist (model {model!r} has no tokenizer.json)")
    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    lines = [l for l in text.decode("utf-8", errors="replace").split("\n") if l.strip()]
    n_tokens = sum(len(e.ids) for e in tok.encode_batch(lines, add_special_tokens=False))
    n_bytes = sum(len(l.encode("utf-8")) for l in lines)
    if n_tokens == 0:
        raise InvalidInput("bytes_per_token: the text has no tokens")
    return dict(bytes_per_token=n_bytes / n_tokens, tokens=n_tokens, bytes=n_bytes, tokenizer=f"{model} tokenizer.json")


def _values(seq) -> list[int]:
    """The value bytes a stretch of a probe row holds: its digits, and the value digit of each pair byte."""
    return [int(b) if b in DIGITS else int(DIGITS[PAIR_VALUE[int(b)]]) for b in seq
            if b in DIGITS or int(b) in PAIR_VALUE]


@dataclass
class Data:
    """Batches and evaluation sets for context ``ctx`` (rows of ctx + 1 bytes)."""

    ctx: int = 64
    probe_share: float = 0.25
    n_facts: int = 32
    n_pairs: int = 3
    retrieval_share: float = 0.5      # the share of probe samples that are retrieval samples
    facts: list = field(init=False)

    def __post_init__(self) -> None:
        if self.ctx < 16:
            raise InvalidInput(f"Data.ctx: probes need a context of at least 16 bytes, got {self.ctx}")
        if not (0 <= self.probe_share <= 1):
            raise InvalidInput(f"Data.probe_share: must lie in [0, 1], got {self.probe_share}")
        if not (0 <= self.retrieval_share <= 1):
            raise InvalidInput(f"Data.retrieval_share: must lie in [0, 1], got {self.retrieval_share}")
        if not (1 <= self.n_pairs <= len(PAIR_KEYS)):
            raise InvalidInput(f"Data.n_pairs: the retrieval probe has {len(PAIR_KEYS)} keys, so 1 to "
                               f"{len(PAIR_KEYS)} pairs, got {self.n_pairs}")
        raw = np.frombuffer(prose_bytes(), dtype=np.uint8)
        cut = int(len(raw) * (1 - VAL_SHARE))
        self.train, self.val = raw[:cut], raw[cut:]
        self.facts = fact_table(self.n_facts)

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256(prose_bytes())
        h.update(repr((self.ctx, self.probe_share, self.n_facts, self.n_pairs, FACT_SEED, "pair-bytes",
                       self.retrieval_share)).encode())
        return h.hexdigest()[:12]

    # -- probe samples: (bytes, index of the answer byte) ------------------------------------------
    def retrieval(self, rng: np.random.Generator) -> tuple[bytes, int]:
        keys = rng.choice(len(PAIR_KEYS), self.n_pairs, replace=False)
        vals = rng.integers(10, size=self.n_pairs)
        q = int(rng.integers(self.n_pairs))
        body = b" ".join(bytes([PAIR_BYTES[10 * k + v]]) for k, v in zip(keys, vals))
        s = b"<" + body + b" ?" + bytes([PAIR_KEYS[keys[q]], DIGITS[vals[q]]]) + b">"
        return s, len(s) - 2

    def recall(self, rng: np.random.Generator, which: int | None = None) -> tuple[bytes, int]:
        name, digit = self.facts[int(rng.integers(len(self.facts))) if which is None else which]
        s = b"[" + name + b":" + str(digit).encode() + b"]"
        return s, len(s) - 2

    def probe_row(self, rng: np.random.Generator, kind: str | None = None,
                  facts: list[int] | None = None) -> tuple[np.ndarray, list[tuple[int, str]]]:
        """A row of ctx + 1 bytes of probe samples and its (answer index, kind) list (answers
        inside the row only)."""
        row, answers, k = b"", [], 0
        while len(row) < self.ctx + 1:
            use = kind or ("retrieval" if rng.random() < self.retrieval_share else "recall")
            if use == "retrieval":
                s, a = self.retrieval(rng)
            else:
                s, a = self.recall(rng, None if facts is None else facts[k % len(facts)])
                k += 1
            if len(row) + a < self.ctx + 1:
                answers.append((len(row) + a, use))
            row += s
        return np.frombuffer(row[: self.ctx + 1], dtype=np.uint8), answers

    # -- training batches ------------------------------------------------------------------------
    def batch(self, seed: int, step: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
        """Inputs and next-byte targets, each (batch, ctx) int64, a pure function of (seed, step)."""
        rng = np.random.default_rng([seed, step])
        rows = np.empty((batch, self.ctx + 1), dtype=np.int64)
        probe = rng.random(batch) < self.probe_share
        starts = rng.integers(0, len(self.train) - self.ctx - 1, batch)
        for b in range(batch):
            rows[b] = self.probe_row(rng)[0] if probe[b] else self.train[starts[b]: starts[b] + self.ctx + 1]
        return rows[:, :-1], rows[:, 1:]

    # -- evaluation sets ----------------------------------------------------------------------------
    def val_rows(self, n: int) -> np.ndarray:
        """``n`` held-out prose windows, evenly spaced, (n, ctx + 1)."""
        starts = np.linspace(0, len(self.val) - self.ctx - 2, n).astype(np.int64)
        return np.stack([self.val[s: s + self.ctx + 1] for s in starts]).astype(np.int64)

    def probe_eval(self, kind: str, n_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Rows of one probe kind (fresh random contexts for retrieval; for recall every fact in
        turn) and a mask (n_rows, ctx) of the target positions that are answers."""
        rng = np.random.default_rng([seed, 1_000_003, KINDS.index(kind)])
        rows = np.empty((n_rows, self.ctx + 1), dtype=np.int64)
        mask = np.zeros((n_rows, self.ctx), dtype=bool)
        order = list(range(len(self.facts)))
        per_row = (self.ctx + 1) // 7 + 1                  # a recall sample is 7 bytes
        for r in range(n_rows):
            facts = [order[(r * per_row + i) % len(order)] for i in range(per_row)]
            rows[r], answers = self.probe_row(rng, kind, facts)
            for a, _ in answers:
                mask[r, a - 1] = True          # the target at input position a - 1 is byte a
        return rows, mask

    def chance(self, kind: str, n_rows: int, seed: int = 0) -> dict:
        """Chance levels of one probe, computed from the evaluation rows themselves
        (:meth:`probe_eval`): ``copy``, the expected accuracy of answering a uniformly drawn value of
        the sample's own context (the digits it holds and the values of its pair bytes; for recall,
        whose sample holds none before the answer, of the row before it; 1/10 where there is none),
        and ``majority``, the accuracy of always giving the
        most frequent answer of these rows.

        >>> c = Data(ctx=32, n_facts=8).chance("retrieval", 8)
        >>> 1 / 3 <= c["copy"] <= 1 and 0.1 <= c["majority"] <= 1
        True
        """
        rows, mask = self.probe_eval(kind, n_rows, seed)
        starts = set(b"<[")
        copy, answers = [], []
        for row, m in zip(rows, mask):
            for t in np.flatnonzero(m):
                a = t + 1                                      # index of the answer byte in the row
                answer = int(row[a])
                start = max((i for i in range(a) if row[i] in starts), default=0)
                digits = _values(row[start:a]) or _values(row[:start])
                copy.append(digits.count(answer) / len(digits) if digits else 1 / len(DIGITS))
                answers.append(answer)
        if not answers:
            return dict(copy=float("nan"), majority=float("nan"), n=0)
        counts = np.bincount(answers, minlength=256)
        return dict(copy=float(np.mean(copy)), majority=float(counts.max() / len(answers)), n=len(answers))
