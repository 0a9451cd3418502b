"""Theorem D1 and the rollout chain on one attention instance of a trained model: the measurement
every family that measures a model's attention makes (trained text models, the vision and tabular
models of :mod:`verification.modalities`, the SAN decoders), owned here.

For each instance: the attention probabilities ``(L, H, T, T)`` (float32 from the model,
widened to float64), and for each *variant* of the token set

    all       every position
    content   special tokens (CLS/SEP/BOS/EOS/pad/chat markers) dropped       (docs/theory.md §2)
    nofirst   the first position dropped (causal models: the attention sink)

the head-averaged A_l = mean_h A_lh (then the variant's submatrix) and every head A_lh (its
submatrix) are checked:

- ``dobrushin.factor`` (Theorem D1): delta, exact equality verdict (tight / holds), slack, and
  whether equality comes through a pair containing the first token (§1 corollary) or another;
- ``dobrushin.product`` per layer of the rollout (residual 0.5, mean fusion): delta(R_l) against
  prod delta(Ahat), D2's chain verdict, prod (1 + delta(A))/2 and both ratios;
- comparison bounds (numerics.dobrushin.contraction): Birkhoff's tanh(Diam/4) of A_l, and for T <= 128 the
  head mean of the per-head softmax-logit bounds (a bound on delta(A_l) by convexity).

Causal models: every variant keeps a one-hot first row, and then D1's equality is forced (delta(A)
= max_j (1 - A_j0) is attained by a pair (0, j), since d_ij <= 1 - min(A_i0, A_j0)); their
verdicts are all ``tight`` through the first token by construction, not by training.

What float arithmetic gets wrong (``float_tests=True``, the trained text models): beside every exact
D1 verdict on all tokens (the token set ``all``), the verdicts of three float implementations of the
test at tolerance 0 (:mod:`numerics.dobrushin.float_tests`), each in float32 and in float64, on the
attention as stored (float32 heads, their float64 head mean): ``as-stored`` (both sides computed from
the stored floats), ``renormalised`` (rows divided by their sum in that precision first) and
``condition`` (D1's equality condition, float argmax pair and self-dominance margins). The two ==
tests say ``tight`` when the sides are equal, ``holds`` when the left is smaller, ``violated`` when it
is larger (an apparent violation that exact arithmetic rules out); the condition says ``tight`` or
``holds``. Stored in ``extra`` under :func:`float_key` (``"float32"`` / ``"float64"``: renormalised,
the keys of v3; ``"float32 as-stored"``, ``"float64 condition"``, ...), and beside each the floats it
decides by under :func:`float_values_key` (:func:`numerics.dobrushin.float_tests.values`: the two
sides of an == test, the condition's slack, delta, margin, rival and second distance), from which a
report applies any tolerance (:func:`numerics.dobrushin.float_tests.at_tolerance`) and finds the
verdicts within rounding of a tie (:func:`numerics.dobrushin.float_tests.near_tie`) without
recomputing.

Exactness: the rational matrix of a D1 verdict is the model's own floats (the float64 head mean,
or a head's float32 values) on the kept tokens, each row divided by its exact sum
(``factor_check(..., renormalise=True)``): no float renormalisation stands between the model and
the verdict. The rollout chain takes the kept submatrices renormalised in float64 as its rational
matrices (the D2 verdicts are exact for those).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from numerics.stochastic import submatrix
from theory.verdicts import Verdict
from verification.store import Record

VERSION = "v6"   # bump when a record's computation changes (v2: D1 certified on the exact renormalisation of the
                 # floats; v3: the text models' records carry the float32 / float64 tolerance-0 verdicts; v4: of
                 # three float implementations, as-stored, renormalised and condition; v5: the head mean's
                 # controls on all tokens: columns permuted, off-diagonal shuffled, every pair self-dominant,
                 # the kind of the maximising pair; v6: beside each float verdict the floats it decides by,
                 # for the tolerance sweep and the verdicts within rounding of a tie: float_values_key)
CONTROL_SEED = 0  # the controls' draws: numerics.dobrushin.controls.control_rng(CONTROL_SEED, input hash, stream)
RESIDUAL, FUSION = 0.5, "mean"
SOFTMAX_BOUND_MAX_T = 128        # per-head comparison bounds cost O(T^3) per head


@dataclass(frozen=True)
class Variant:
    name: str
    keep: np.ndarray   # (T,) bool, positions kept


def variants(special: np.ndarray, causal: bool) -> list[Variant]:
    """The token sets measured for one input; ``special``: (T,) bool."""
    T = special.shape[0]
    out = [Variant("all", np.ones(T, dtype=bool)), Variant("content", ~special)]
    if causal:
        nofirst = np.ones(T, dtype=bool)
        nofirst[0] = False
        out.append(Variant("nofirst", nofirst))
    return out


OUTSIDE = {"all": "no token at all (the row sums to 0)", "content": "special tokens only",
           "nofirst": "the first token only"}      # where a row's mass lies when a token set keeps none of it


def check_instance(inst: Any, token_sets: Optional[tuple[str, ...]] = None) -> None:
    """Refuse attention that D1 cannot be measured on, in one line naming the model, the input, the
    layer, the head and the row (:class:`~theory.errors.InvalidInput`): an entry that is not finite
    (NaN from an ONNX file) or negative, or a row of a token set (:func:`variants`; ``token_sets``:
    those only, None: every one) with no mass on the set's own tokens (a content token that puts all
    its attention on special tokens), which no renormalisation can make a probability row. A token set
    of fewer than two tokens is not measured (:func:`measure_variant`) and not asked.

    >>> from numerics.sources import AttentionInstance
    >>> A = np.full((1, 2, 3, 3), 1 / 3); A[0, 1, 2] = [1.0, 0.0, 0.0]
    >>> check_instance(AttentionInstance("m", "text:0", "ab", A, np.array([True, False, False]), False))
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: model m, input text:0: layer 0, head 1, row 2 puts all its attention on special tokens only, so its attention on the content tokens cannot be renormalised; D1 is not measured on it
    """
    from theory.errors import InvalidInput

    A = np.asarray(inst.attention)
    where = f"model {inst.model}, input {inst.input}"
    bad = ~np.isfinite(A)
    if bad.any():
        l, h, i, j = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidInput(f"{where}: layer {l}, head {h}, row {i}, column {j}: attention {A[l, h, i, j]} is not "
                           f"finite ({int(bad.sum())} such entries); D1 is not measured on it")
    neg = A < 0
    if neg.any():
        l, h, i, j = (int(v) for v in np.argwhere(neg)[0])
        raise InvalidInput(f"{where}: layer {l}, head {h}, row {i}, column {j}: attention {A[l, h, i, j]!r} is "
                           "negative, not a probability; D1 is not measured on it")
    for var in variants(np.asarray(inst.special, dtype=bool), bool(inst.causal)):
        if (token_sets is not None and var.name not in token_sets) or int(var.keep.sum()) < 2:
            continue
        idx = np.flatnonzero(var.keep)
        mass = A[..., idx, :][..., idx].sum(axis=-1)           # (L, H, n): each kept row's mass on the set
        empty = ~(mass > 0)
        if empty.any():
            l, h, r = (int(v) for v in np.argwhere(empty)[0])
            title = VARIANT_NAMES.get(var.name, var.name)
            raise InvalidInput(f"{where}: layer {l}, head {h}, row {int(idx[r])} puts all its attention on "
                               f"{OUTSIDE.get(var.name, 'tokens outside the ' + title)}, so its attention on the {title} "
                               "cannot be renormalised; D1 is not measured on it")


VARIANT_NAMES = {"all": "tokens", "content": "content tokens", "nofirst": "tokens after the first"}


def verdict_of(eq: bool) -> Verdict:
    return Verdict.TIGHT if eq else Verdict.HOLDS


def _jsonable(v: Any) -> Any:
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v) if np.isfinite(v) else None
    if isinstance(v, Verdict):
        return v.value
    return v


def float_key(dtype: str, implementation: str) -> str:
    """The ``extra`` key of one float test's verdict: ``dtype`` alone for ``renormalised`` (the keys
    the records had before the other implementations), else ``"<dtype> <implementation>"``.

    >>> float_key("float32", "renormalised"), float_key("float64", "as-stored")
    ('float32', 'float64 as-stored')
    """
    return dtype if implementation == "renormalised" else f"{dtype} {implementation}"


def float_values_key(dtype: str, implementation: str) -> str:
    """The ``extra`` key of the floats one float test decides by (``{name: value}``, a value None where
    the quantity does not exist): ``"<dtype> <implementation> values"``.

    >>> float_values_key("float32", "renormalised")
    'float32 renormalised values'
    """
    return f"{dtype} {implementation} values"


def float_values(A: np.ndarray, dtype: str, implementation: str) -> dict:
    """:func:`numerics.dobrushin.float_tests.values` of ``A`` (..., n, n): ``{name: (...) float64}``."""
    from numerics.dobrushin.float_tests import values

    return {k: np.asarray(v, dtype=np.float64) for k, v in values(A, dtype, implementation).items()}


def _stored(vals: dict, at: tuple) -> dict:
    """One matrix's floats of :func:`float_values` as JSON numbers (float32 values exactly; None: nan)."""
    return {k: (float(v[at]) if np.isfinite(v[at]) else None) for k, v in vals.items()}


def float_verdicts(A: np.ndarray, dtype: str, implementation: str = "renormalised") -> np.ndarray:
    """Theorem D1 tested in floats at tolerance 0 on ``A`` (..., n, n) in ``dtype`` ("float32" or
    "float64") by one of :data:`numerics.dobrushin.float_tests.IMPLEMENTATIONS` (default: rows
    renormalised in that precision, then delta(A) and delta((I + A)/2) by the compiled kernel of
    :func:`numerics.dobrushin.dobrushin` in that precision): "tight" / "holds" / "violated". Shape (...)."""
    from numerics.dobrushin.float_tests import verdicts

    return verdicts(A, dtype, implementation)


def measure_controls(sub_mean: np.ndarray, special: np.ndarray, pair: np.ndarray, sha: str,
                     seed: int = CONTROL_SEED) -> dict:
    """The controls of one input's head means ``sub_mean`` (L, n, n) (the floats as they are; special:
    (n,) bool; ``pair``: (L, 2) a maximising pair of each layer), :mod:`numerics.dobrushin.controls`:
    D1's exact verdict with the columns permuted (one permutation for the input) and with each row's
    off-diagonal entries shuffled (per row and layer), whether every pair is mutually self-dominant,
    and the kind of the maximising pair. ``{name: (L,) array}``."""
    from numerics.dobrushin import factor_check
    from numerics.dobrushin.controls import (STREAM_COLUMNS, STREAM_OFFDIAGONAL, column_permutation, control_rng,
                                             every_pair_self_dominant, pair_kind, permute_columns,
                                             shuffle_offdiagonal)

    n = sub_mean.shape[-1]
    sigma = column_permutation(n, control_rng(seed, sha, STREAM_COLUMNS))
    cols = factor_check(permute_columns(sub_mean, sigma), renormalise=True)
    offd = factor_check(shuffle_offdiagonal(sub_mean, control_rng(seed, sha, STREAM_OFFDIAGONAL)), renormalise=True)
    return dict(columns=cols.equality, offdiagonal=offd.equality, every_pair=every_pair_self_dominant(sub_mean),
                kind=np.array([pair_kind(p, special) for p in pair]), fixed_points=int(np.sum(sigma == np.arange(n))))


def measure_variant(A_heads: np.ndarray, keep: np.ndarray, comparison: bool,
                    float_tests: bool = False, controls: Optional[tuple] = None) -> Optional[dict]:
    """All measurements of one variant. ``A_heads``: (L, H, T, T) float64. None if fewer than
    two tokens are kept (D1 needs n >= 2). ``controls``: (special (T,) bool, input hash) to measure
    the head mean's controls (:func:`measure_controls`)."""
    from numerics.dobrushin.contraction import birkhoff, softmax_bound_from_probabilities
    from numerics.dobrushin import factor_check
    from numerics.dobrushin.rollout import rollout_tightness

    n = int(keep.sum())
    if n < 2:
        return None
    sub_mean = submatrix(A_heads.mean(axis=1), keep)      # (L, n, n), the floats as they are
    sub_h = submatrix(A_heads, keep)                       # (L, H, n, n)
    mean = factor_check(sub_mean, renormalise=True)        # certified for the exact renormalisation
    heads = factor_check(sub_h, renormalise=True)
    A_mean = sub_mean / sub_mean.sum(axis=-1, keepdims=True)  # float64 renormalised: rollout, comparisons
    A_h = sub_h / sub_h.sum(axis=-1, keepdims=True)
    roll = rollout_tightness(A_mean, residual=RESIDUAL, fused=True)
    out = dict(n=n, mean=mean, heads=heads, roll=roll, birkhoff=None, softmax=None, floats=None, float_values=None,
               controls=None)
    if controls is not None:
        special, sha = controls
        out["controls"] = measure_controls(sub_mean, np.asarray(special)[keep], np.asarray(mean.pair), sha)
    if float_tests:      # the stored floats (float32 heads, float64 head mean): {extra key: (mean, heads)}
        from numerics.dobrushin.float_tests import DTYPES, IMPLEMENTATIONS

        out["floats"] = {float_key(dt, name): (float_verdicts(sub_mean, dt, name), float_verdicts(sub_h, dt, name))
                         for dt in DTYPES for name in IMPLEMENTATIONS}
        out["float_values"] = {float_values_key(dt, name): (float_values(sub_mean, dt, name),
                                                            float_values(sub_h, dt, name))
                               for dt in DTYPES for name in IMPLEMENTATIONS}
    if comparison:
        out["birkhoff"] = birkhoff(A_mean)                                   # (L,)
        if n <= SOFTMAX_BOUND_MAX_T:
            out["softmax"] = softmax_bound_from_probabilities(A_h).mean(axis=1)  # (L,)
    return out


def input_records(model: Any, text_input: Any, comparison: bool = True, float_tests: bool = False,
                  controls: bool = False) -> list[Record]:
    """Every record of one (model, input): ``model`` is an attention source
    (:class:`numerics.sources.AttentionSource`), ``text_input`` one of its inputs."""
    return instance_records(model.instance(text_input), comparison, float_tests, controls)


def instance_records(inst: Any, comparison: bool = True, float_tests: bool = False,
                     controls: bool = False) -> list[Record]:
    """Every record of one :class:`numerics.sources.AttentionInstance` (see the module docstring);
    ``controls``: the head mean's controls on all tokens (:func:`measure_controls`), in the extra of
    its records (``control_columns``, ``control_offdiagonal``: "tight" / "holds"; ``every_pair_self_dominant``;
    ``pair_kind``) with the seed and generator in the provenance."""
    check_instance(inst)                                    # NaN, a row with no mass on its token set: named
    A_heads = inst.attention                                # (L, H, T, T) float64
    base = dict(inst.provenance, residual=RESIDUAL, head_fusion=FUSION)
    records: list[Record] = []
    for var in variants(inst.special, inst.causal):
        ctl = (inst.special, inst.sha) if controls and var.name == "all" else None
        m = measure_variant(A_heads, var.keep, comparison and var.name == "all", float_tests and var.name == "all", ctl)
        if m is None:
            continue
        prov = dict(base, variant=var.name, n=m["n"])
        if m["controls"] is not None:
            from numerics.dobrushin.controls import GENERATOR

            mprov = dict(prov, control_seed=CONTROL_SEED, control_generator=GENERATOR,
                         control_fixed_points=m["controls"]["fixed_points"])
        else:
            mprov = prov
        mean, heads, roll = m["mean"], m["heads"], m["roll"]
        for l in range(A_heads.shape[0]):
            key = f"{inst.model}|{inst.input}#{inst.sha}|{var.name}|L{l}"
            bound = (1 + float(mean.delta[l])) / 2
            extra = dict(delta=mean.delta[l], through_first=mean.through_first[l],
                         through_other=mean.through_other[l], exact=mean.exact[l],
                         pair=[int(v) for v in mean.pair[l]],
                         birkhoff=None if m["birkhoff"] is None else m["birkhoff"][l],
                         softmax_bound=None if m["softmax"] is None else m["softmax"][l])
            fl, fv = m["floats"], m["float_values"]
            if fl is not None:
                extra.update({key: str(v[0][l]) for key, v in fl.items()})
                extra.update({key: _stored(v[0], (l,)) for key, v in fv.items()})
            ct = m["controls"]
            if ct is not None:
                extra.update(control_columns=verdict_of(ct["columns"][l]).value,
                             control_offdiagonal=verdict_of(ct["offdiagonal"][l]).value,
                             every_pair_self_dominant=bool(ct["every_pair"][l]), pair_kind=str(ct["kind"][l]))
            records.append(Record(
                theorem="dobrushin.factor", instance=f"{key}|mean", verdict=verdict_of(mean.equality[l]),
                slack=float(mean.slack[l]), value=bound - float(mean.slack[l]), bound=bound,
                provenance=dict(mprov, layer=l, head=None),
                extra={k: _jsonable(v) for k, v in extra.items()}))
            for h in range(A_heads.shape[1]):
                hb = (1 + float(heads.delta[l, h])) / 2
                records.append(Record(
                    theorem="dobrushin.factor", instance=f"{key}|H{h}", verdict=verdict_of(heads.equality[l, h]),
                    slack=float(heads.slack[l, h]), value=hb - float(heads.slack[l, h]), bound=hb,
                    provenance=dict(prov, layer=l, head=h),
                    extra={k: _jsonable(v) for k, v in dict(
                        delta=heads.delta[l, h], through_first=heads.through_first[l, h],
                        through_other=heads.through_other[l, h], exact=heads.exact[l, h],
                        **({key: str(v[1][l, h]) for key, v in fl.items()} if fl else {}),
                        **({key: _stored(v[1], (l, h)) for key, v in fv.items()} if fl else {})).items()}))
            records.append(Record(
                theorem="dobrushin.product", instance=f"{key}|rollout", verdict=Verdict(roll.chain[l]),
                slack=float(roll.prod_delta_Ahat[l] - roll.delta_R[l]), value=float(roll.delta_R[l]),
                bound=float(roll.prod_delta_Ahat[l]), provenance=dict(prov, layer=l, head=None),
                extra={k: _jsonable(v) for k, v in dict(
                    prod_factor_bound=roll.prod_factor_bound[l], ratio_R=roll.ratio_R[l],
                    ratio_factor=roll.ratio_factor[l], d2_step=roll.d2[l], d1=roll.d1[l],
                    delta_Ahat=roll.delta_Ahat[l], error_R=roll.error_R[l]).items()}))
    return records


def campaign_name(model: Any, corpus_name: str) -> str:
    """The campaign of one model: its name, its fingerprint (hash of weights, configuration,
    tokenizer and settings) and the rollout settings. Other weights under the same name or path
    are another campaign, never a resume."""
    return (f"trained-{VERSION}:{model.name}:{corpus_name}:max{model.max_tokens}:r{RESIDUAL}:{FUSION}"
            f":w{model.fingerprint}")


def chunk_key(text_input: Any) -> str:
    """One store chunk per input *text*: id plus text hash. Records are keyed the same way, so
    another text under the same id (another file of the same name, an edited line) is measured
    and stored beside it, and a report reads only the records of the texts it was given."""
    return f"{text_input.id}#{text_input.sha}"
