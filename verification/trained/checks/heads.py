"""A user's statement checked on every attention head of a trained model (``attnbounds rollout
--theory FILE.py --check ID``): the statement compiled, its symbols bound to what the model
computes, a certified verdict per (layer, head), one chunk per input.

A user's statement checked on every attention head (``attnbounds rollout --theory FILE.py --check
ID``): a registered theorem over :mod:`theory.expr` without a parameter (a model gives no value for
one: refused in one line). For every input, layer l and head h, its matrix symbols are bound to what
the model computes on the input's tokens (all of them), each value the model's float32, widened
exactly (:meth:`numerics.sources.models.LoadedModel.states`, :mod:`numerics.sources.states`):

- a stochastic symbol (``A``, ``stochastic("D")``): the head's attention probabilities, each row
  standing for itself divided by its exact sum (the floats the suite's D1 measurement reads,
  :func:`verification.measure.attention.instance_records`);
- a logits symbol (``logits("L")``): the head's pre-softmax scores as the model scales and masks
  them (what transformers' eager attention passes to ``softmax``; an ONNX file's Softmax input). A
  bidirectional model masks nothing: the head's attention is ``softmax(L)``. A causal model's mask
  is made explicit: the entries above the diagonal are bound to 0 and the head's attention is
  ``softmax(L, mask="causal")`` (a statement about ``softmax(L)`` there speaks of the matrix with
  zeros above the diagonal). Any other mask is refused;
- a tokens symbol (``tokens("X")``): the layer's input hidden states, n x d with d the model's
  width, the same on every head of the layer;
- the sizes ``n`` (the input's tokens) and ``d`` from these values.

The rollout chain: the k-th symbol of each kind, in the statement's order (A, B, C, then by name),
is bound at layer l + k - 1, on the same head index h: ``delta(B * A) <= delta(A) * delta(B)`` is
checked with A the attention of head h at layer l and B that of head h at layer l + 1, for every
first layer l with a chain inside the model (L - 1 rows of the table for a chain of two); a chain
longer than the model is refused in one line, and so is a symbol a model cannot bind (an ONNX
file whose layer inputs are not found: its reason), naming the model and the symbol.
:func:`numerics.expr.decide` gives each (layer, head) a certified verdict (holds / tight / violated
/ not-applicable / undecided; a head outside the theorem's ``assume`` or ``where=`` is
not-applicable; undecided where no exact or certified method decided within its budget, never
counted as holds or tight).

One campaign per (model, corpus, theorem), named by :func:`campaign_of` (the theorem id and a digest
of its statement and hypotheses: an edited statement is another campaign, never a resume), one chunk
per input text (:func:`verification.measure.attention.chunk_key`). A chunk stores its verdict counts
per layer as its summary (keyed by the theorem id) and one record per violated head (its layer, head,
and for a chain its ``layers``): for a *proved* or *sanity* theorem a ``violated`` verdict (a proved
theorem's stops the run loudly: the campaign runner's :class:`~theory.verdicts.ViolationError`), for
a conjecture a ``refuted`` outcome (a finding, stored and reported). Each record carries the float
sides with their rigorous error bounds (the enclosure the verdict was certified from, or the exact
path's) and its ``margin`` rhs - lhs: exact (``p/q``, with the exact sides ``lhs``, ``rhs``) for a
statement whose sides are rational (:func:`rational_program`) on a small head (:data:`EXACT_SIDES_MAX_N`
tokens, :data:`EXACT_SIDES_MAX_WORK` for a product with tokens: the rational sides of a product of two
128 x 128 matrices take a minute), else the certified enclosure ``mid +/- radius`` of the float sides
(``margin_exact`` false: an exponential of a nonzero rational is irrational, and its exact sides on a
head of 30 tokens take seconds), all as the statement writes them, with its ``relation``
(:func:`as_written`).

>>> statement_digest("mine.square", "delta(A**2) <= delta(A)**2")
'1b08141f6fa7'
>>> first, second = layer_counts(np.array([0, 1, 2, 3, 4, 0], dtype=np.int8), 2)   # 2 layers of 3 heads
>>> first, second["not-applicable"], second["undecided"]
({'holds': 1, 'tight': 1, 'violated': 1, 'not-applicable': 0, 'undecided': 0}, 1, 1)
"""
from __future__ import annotations

import argparse
import hashlib
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from theory.errors import InvalidInput

from verification import campaign
from verification.measure.attention import check_instance, chunk_key


CHECK_VERSION = "v1"      # bump when what a --check chunk stores changes
EXACT_SIDES_MAX_N = 32    # violated heads with at most this many tokens carry their exact sides ...
EXACT_SIDES_MAX_WORK = EXACT_SIDES_MAX_N ** 3   # ... when n * n * max(n, d) is at most this (A * X: n x n x d)
VERDICT_NAMES = ("holds", "tight", "violated", "not-applicable", "undecided")   # numerics.expr.decide's codes 0..4
CHECK_METHOD = "numerics.expr.decide on the head's float32 attention, rows renormalised exactly"
KIND_WORDS = {"stochastic": "the head's attention", "logits": "the head's pre-softmax scores",
              "tokens": "the layer's input hidden states"}


@dataclass(frozen=True)
class Binding:
    """What each matrix symbol of a statement is bound to on a model (module docstring): ``symbols``
    ((name, kind, offset), ...), the k-th symbol of each kind (in the statement's order: A, B, C, then
    by name) at offset k - 1 from the chain's first layer; ``chain`` the number of consecutive layers.

    >>> from theory.expr import A, B, delta, logits, softmax, tokens, spread
    >>> from numerics.expr import compile_statement
    >>> b = binding_of(compile_statement(delta(B * A) <= delta(A) * delta(B)))
    >>> b.symbols, b.chain
    ((('A', 'stochastic', 0), ('B', 'stochastic', 1)), 2)
    >>> print(binding_of(compile_statement(spread(softmax(logits("L")) * tokens("X")) <= spread(tokens("X")))).words())
    L: the head's pre-softmax scores at layer l; X: the layer's input hidden states at layer l
    """

    symbols: tuple
    chain: int

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in ("stochastic", "logits", "tokens") if any(kind == k for _, kind, _ in self.symbols))

    def words(self) -> str:
        """Each symbol and what it is bound to, for a table's caption."""
        return "; ".join(f"{name}: {KIND_WORDS[kind]} at layer l{f' + {off}' if off else ''}"
                         for name, kind, off in self.symbols)


def binding_of(compiled: Any) -> Binding:
    """The :class:`Binding` of a compiled statement."""
    seen: dict = {}
    symbols = []
    for name in compiled.matrices:
        kind = compiled.role(name)
        symbols.append((name, kind, seen.get(kind, 0)))
        seen[kind] = seen.get(kind, 0) + 1
    return Binding(tuple(symbols), max(seen.values(), default=1))


def compiled_of(th: Any) -> Any:
    """The theorem's statement compiled with its hypotheses (``assume``, ``where``)."""
    from numerics.expr import compile_statement

    return compile_statement(th.statement, th.assume, th.where)


def checkable(theorem_id: str) -> Any:
    """The registered theorem ``theorem_id`` if rollout can check it on each head (a statement over
    :mod:`theory.expr` without a parameter); else InvalidInput, one line saying why."""
    from theory import registry

    registry.load_all()
    th = registry.REGISTRY.get(theorem_id)
    if th is None:
        known = ", ".join(sorted(k for k, t in registry.REGISTRY.items() if t.is_expr)) or "none"
        raise InvalidInput(f"{theorem_id!r}: no such theorem (register it in a file given with --theory FILE.py; "
                           f"statements over theory.expr registered now: {known})")
    if not th.is_expr:
        raise InvalidInput(f"{theorem_id}: its statement is not over theory.expr; rollout checks statements over "
                           "theory.expr (A and any stochastic symbol, logits, tokens) on each head")
    params = [name for name, _, _ in compiled_of(th).params]
    if params:
        raise InvalidInput(f"{theorem_id}: the statement has the parameter {', '.join(params)}, and a model gives "
                           "no value for a parameter; rollout checks statements whose symbols a model computes "
                           "(stochastic: attention, logits: pre-softmax scores, tokens: layer inputs); write a "
                           "value in its place, or check it with attnbounds stress")
    return th


def bindable(model: Any, theorem_id: str) -> Binding:
    """The binding of ``theorem_id`` on ``model``, or InvalidInput in one line naming the model and
    the symbol it cannot bind (a kind the model cannot read: its ``unbound`` reason; a chain longer
    than the model's layers)."""
    from theory import get

    b = binding_of(compiled_of(get(theorem_id)))
    kinds = getattr(model, "symbol_kinds", ("stochastic",))
    for name, kind, _ in b.symbols:
        if kind not in kinds:
            why = getattr(model, "unbound", {}).get(kind, "it reads attention probabilities only")
            raise InvalidInput(f"--check {theorem_id}: model {model.name} cannot bind {name} (a {kind} symbol, "
                               f"{KIND_WORDS[kind]}): {why}")
    layers = int(model.layers)
    if b.chain > layers:
        names = ", ".join(f"{name} at layer l + {off}" for name, _, off in b.symbols if off)
        raise InvalidInput(f"--check {theorem_id}: a chain of {b.chain} consecutive layers ({names}) on model "
                           f"{model.name}, which has {layers} layer{'s' if layers > 1 else ''}")
    return b


def theorem_arg(text: str) -> str:
    """``--check THEOREM_ID`` (argparse type): the id, if :func:`checkable`."""
    try:
        return checkable(text).id
    except InvalidInput as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


theorem_arg.__name__ = "theorem id"


def statement_digest(theorem_id: str, statement: str, assume: tuple = (), where: tuple = ()) -> str:
    """12 hex digits of sha256 over the id and the statement's text (and its ``assume`` / ``where``
    hypotheses, when it has any): in the campaign name."""
    text = f"{theorem_id}\n{statement}"
    if assume:
        text += f"\nassume={','.join(assume)}"
    if where:
        text += "\nwhere=" + "; ".join(str(w) for w in where)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def digest_of(theorem_id: str) -> str:
    from theory import get

    th = get(theorem_id)
    return statement_digest(theorem_id, str(th.statement), tuple(th.assume), tuple(th.where))


def campaign_of(model: Any, corpus_name: str, theorem_id: str) -> str:
    """The campaign of ``theorem_id`` on ``model``'s attention heads over the corpus ``corpus_name``:
    the theorem id, its statement's digest, and what names the model's own campaign (its name, the
    corpus, the token limit, the weights' fingerprint)."""
    return (f"trained-check-{CHECK_VERSION}:{theorem_id}:{digest_of(theorem_id)}:{model.name}:{corpus_name}"
            f":max{model.max_tokens}:w{model.fingerprint}")


def head_batch(attention: np.ndarray) -> np.ndarray:
    """(L, H, T, T) float64 attention as the (L*H, T, T) batch :func:`numerics.expr.decide` reads:
    float32 when the values are float32 (the model's own floats, widened exactly: narrowed back
    exactly, and validated at float32's row-sum tolerance), else as they are."""
    L, H, T, _ = attention.shape
    heads = attention.reshape(L * H, T, T)
    narrow = heads.astype(np.float32)
    return narrow if np.array_equal(narrow, heads) else heads


def layer_counts(codes: np.ndarray, layers: int) -> list[dict[str, int]]:
    """Verdict counts per layer of the (L*H,) codes, layer-major."""
    per = np.asarray(codes).reshape(layers, -1)
    return [{name: int((row == k).sum()) for k, name in enumerate(VERDICT_NAMES)} for row in per]


def _float(x: Any) -> Optional[float]:
    x = float(x)
    return x if math.isfinite(x) else None


def as_written(compiled: Any, extra: dict) -> dict:
    """The sides of a head's record (exact ``lhs``/``rhs``, floats ``lhs_float``/``rhs_float`` and their
    error bounds ``err``) and its ``relation`` as the statement writes them (a ``>=`` statement's left
    side is ``lhs``); the record's ``value``/``bound``/``slack`` keep the bound's normal form (value <= bound)."""
    floats = compiled.as_written(extra["lhs_float"], extra["rhs_float"])
    errs = compiled.as_written(*extra["err"])
    exact = compiled.as_written(extra["lhs"], extra["rhs"])
    return dict(lhs=exact["lhs"], rhs=exact["rhs"], relation=exact["relation"], lhs_float=floats["lhs"],
                rhs_float=floats["rhs"], err=[errs["lhs"], errs["rhs"]])


def symbol_values(binding: Binding, heads: np.ndarray, states: dict, layer: int) -> dict:
    """``{symbol: (H, rows, cols)}``: the values of every symbol on the H heads of the chain that starts
    at ``layer``: ``heads`` (L, H, T, T) the attention (:func:`head_batch`'s floats), ``states`` what
    the model read besides (:meth:`numerics.sources.models.LoadedModel.states`: ``logits`` (L, H, T, T),
    ``tokens`` (L, T, d), the same on every head of a layer)."""
    H = heads.shape[1]
    out = {}
    for name, kind, off in binding.symbols:
        if kind == "stochastic":
            out[name] = heads[layer + off]
        elif kind == "logits":
            out[name] = states["logits"][layer + off]
        else:
            X = states["tokens"][layer + off]
            out[name] = np.broadcast_to(X, (H,) + X.shape)
    return out


IRRATIONAL = frozenset({"softmax", "exp", "log", "tanh", "rpow", "slem", "norm_fro"})   # nodes of irrational value


def rational_program(compiled: Any) -> bool:
    """Whether every node of ``compiled`` is rational on rational values (no softmax, exp, log, tanh,
    root, eigenvalue, Frobenius norm): then a head's sides are exact rationals.

    >>> from theory.expr import A, delta, exp, logits, ptp, softmax
    >>> from numerics.expr import compile_statement
    >>> L = logits("L")
    >>> rational_program(compile_statement(delta(A**2) <= delta(A)))
    True
    >>> rational_program(compile_statement(delta(softmax(L)) <= 1 - exp(-ptp(L))))
    False
    """
    return not any(node.op in IRRATIONAL or (node.op == "fn" and node.name in IRRATIONAL) for node in compiled.nodes)


def exact_record_sides(compiled: Any, values: dict, n: int, d: int) -> Optional[dict]:
    """The exact sides of one violated head (``values``: {symbol: one matrix}) when they are rational
    (:func:`rational_program`) and cheap (:data:`EXACT_SIDES_MAX_N`, :data:`EXACT_SIDES_MAX_WORK`):
    ``lhs``, ``rhs`` and the ``margin`` rhs - lhs as ``p/q``, and ``slack`` the margin rounded once;
    else None."""
    from numerics.expr import exact_sides

    if not rational_program(compiled) or n > EXACT_SIDES_MAX_N or n * n * max(n, d) > EXACT_SIDES_MAX_WORK:
        return None
    lhs, rhs = exact_sides(compiled, values)
    return dict(lhs=str(lhs), rhs=str(rhs), margin=str(rhs - lhs), slack=float(rhs - lhs))


def certified_margin(lhs: float, rhs: float, err: Any) -> Optional[str]:
    """rhs - lhs as a certified enclosure ``mid +/- radius`` from the float sides and their rigorous
    error bounds ``err`` (the subtraction's rounding included), both floats written exactly (repr);
    None where a side is not finite.

    >>> certified_margin(0.5, 0.25, [1e-17, 2e-17])
    '-0.25 +/- 5.775557561562896e-17'
    """
    if lhs is None or rhs is None or not all(e is not None and math.isfinite(e) for e in err):
        return None
    mid = rhs - lhs
    rad = (err[0] + err[1] + abs(mid) * 2.0 ** -53) * (1 + 2.0 ** -50)
    return f"{mid!r} +/- {rad!r}"


def head_checks(model: Any, text_input: Any, theorem_id: str, digest: str) -> Any:
    """The chunk of one input: ``theorem_id`` decided on every head of ``model`` on ``text_input``
    (see the module docstring); ``digest``: the statement's, as the campaign was named with (a
    statement changed since is refused: it would be stored under the old name)."""
    from numerics.expr import decide
    from theory import get
    from theory.verdicts import Outcome, Verdict, vocabulary
    from verification.store import Record, outcome_record

    th = get(theorem_id)
    if digest_of(theorem_id) != digest:
        raise InvalidInput(f"{theorem_id}: its statement changed while the run was planned")
    compiled = compiled_of(th)
    binding = bindable(model, theorem_id)
    extra_kinds = tuple(k for k in binding.kinds if k != "stochastic")
    inst, states = model.states(text_input, extra_kinds) if extra_kinds else (model.instance(text_input), {})
    check_instance(inst, ("all",))          # NaN: refused naming the model, input, layer and head
    L, H, T, _ = inst.attention.shape
    heads = head_batch(inst.attention).reshape(L, H, T, T)
    dim = int(states["tokens"].shape[-1]) if "tokens" in states else 0
    starts = L - binding.chain + 1          # the chains' first layers
    codes = np.zeros((starts, H), dtype=np.int8)
    decisions, per_layer = [], []
    for l in range(starts):
        values = symbol_values(binding, heads, states, l)
        d = decide(compiled, values, assume=th.assume)
        codes[l] = d.codes
        decisions.append(d)
        per_layer.append(values)
    summary = {"statement": str(th.statement), "n": int(T), "heads": int(H),
               "layers": layer_counts(codes.reshape(-1), starts),
               "exact": int(sum(d.exact.sum() for d in decisions)),
               "rational": int(sum(d.rational.sum() for d in decisions))}
    if binding.kinds != ("stochastic",) or binding.chain > 1:
        summary.update(binding=binding.words(), chain=binding.chain)
    if dim:
        summary["d"] = dim
    outcomes = vocabulary(th.category) is Outcome
    method = CHECK_METHOD if binding.symbols == (("A", "stochastic", 0),) else \
        f"numerics.expr.decide on the model's float32 values ({binding.words()}), attention rows renormalised exactly"
    records = []
    for l, h in zip(*np.nonzero(codes == 2)):
        l, h = int(l), int(h)
        d = decisions[l]
        lhs, rhs = _float(d.lhs[h]), _float(d.rhs[h])
        slack = None if lhs is None or rhs is None else rhs - lhs
        extra = dict(lhs_float=lhs, rhs_float=rhs, err=[_float(e) for e in d.err[h]], equal=bool(d.equal[h]),
                     strict=bool(compiled.strict), path="rational" if d.rational[h] else
                     ("certificate" if d.exact[h] else "float"), lhs=None, rhs=None)
        one = {name: np.asarray(v[h]) for name, v in per_layer[l].items()}
        got = exact_record_sides(compiled, one, int(T), dim)
        if got is not None:
            extra.update(lhs=got["lhs"], rhs=got["rhs"], margin=got["margin"], margin_exact=True)
            lhs, rhs, slack = float(Fraction(got["lhs"])), float(Fraction(got["rhs"])), got["slack"]
        else:
            extra.update(margin=certified_margin(lhs, rhs, extra["err"]), margin_exact=False)
        extra.update(as_written(compiled, extra))
        prov = dict(inst.provenance, variant="all", n=int(T), layer=l, head=h, statement=str(th.statement))
        if binding.chain > 1:
            prov["layers"] = list(range(l, l + binding.chain))
        instance = f"{inst.model}|{inst.input}#{inst.sha}|all|L{l}|H{h}"
        sides = dict(slack=slack, value=lhs, bound=rhs, provenance=prov)
        if outcomes:
            records.append(outcome_record(theorem_id, instance, "refuted", 0.0 if sides["slack"] is None
                                          else -sides["slack"], None, method, extra=extra, **sides))
        else:
            records.append(Record(theorem_id, instance, Verdict.VIOLATED, extra=extra, **sides))
    return campaign.ChunkResult(records, {theorem_id: summary})


def run_check(model: Any, corpus: Any, store: Any, theorem_id: str, console: Any = None) -> Any:
    """``theorem_id`` on every head of every input of ``corpus`` not yet stored (resume); the
    :class:`~verification.campaign.CampaignResult` (a proved theorem's violation: ViolationError,
    after its chunk is stored)."""
    name, digest = campaign_of(model, corpus.name, theorem_id), digest_of(theorem_id)
    chunks = [campaign.Chunk(chunk_key(t), head_checks, (model, t, theorem_id, digest)) for t in corpus.inputs]
    return campaign.run(store, name, chunks, console=console, description=f"{model.name}: checking {theorem_id}")
