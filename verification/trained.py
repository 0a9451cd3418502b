"""Trained transformers: how often Theorem D1's equality holds, and how tight rollout is, per layer.

For each (model, input): the attention probabilities ``(L, H, T, T)`` (float32 from the model,
widened to float64), and for each *variant* of the token set

    all       every position
    content   special tokens (CLS/SEP/BOS/EOS/pad/chat markers) dropped       (THEORY.md §2)
    nofirst   the first position dropped (causal models: the attention sink)

the head-averaged A_l = mean_h A_lh (then the variant's submatrix, rows renormalised in float64)
and every head A_lh (submatrix, renormalised) are checked:

- ``dobrushin.factor`` (Theorem D1): delta, exact equality verdict (tight / holds), slack, and
  whether equality comes through a pair containing the first token (§1 corollary) or another;
- ``dobrushin.product`` per layer of the rollout (residual 0.5, mean fusion): delta(R_l) against
  prod delta(Ahat), D2's chain verdict, prod (1 + delta(A))/2 and both ratios;
- comparison bounds (numerics.contraction): Birkhoff's tanh(Diam/4) of A_l, and for T <= 128 the
  head mean of the per-head softmax-logit bounds (a bound on delta(A_l) by convexity).

Causal models: every variant keeps a one-hot first row, and then D1's equality is forced (delta(A)
= max_j (1 - A_j0) is attained by a pair (0, j), since d_ij <= 1 - min(A_i0, A_j0)); their
verdicts are all ``tight`` through the first token by construction, not by training.

Exactness: the rational matrix of a verdict is the float64 array checked (head mean, or
submatrix renormalised in float64), rows renormalised exactly by numerics.dobrushin.
One results-store chunk per (model, input): a rerun resumes. Reports: verification.trained_report.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

# torch's OpenMP threads spin after each op and starve numba's parallel kernels on few cores (6x
# slower here); must be set before torch loads. Importing this module (the CLI does so first) sets it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from theory.verdicts import Verdict  # noqa: E402
from verification.store import Record  # noqa: E402

SECTION = "trained"
RESIDUAL, FUSION = 0.5, "mean"
SOFTMAX_BOUND_MAX_T = 128        # per-head comparison bounds cost O(T^3) per head
QUANTISED_NOTE = ("4-bit quantised weights (GGUF Q4_1, dequantised to float32): this is the "
                  "quantised model's attention")


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


def restrict(A: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Submatrix on ``keep`` with rows renormalised to 1 in float64: (..., T, T) -> (..., n, n).
    A row whose kept mass is zero cannot be renormalised: ValueError naming it."""
    sub = np.asarray(A, dtype=np.float64)[..., keep, :][..., :, keep]
    mass = sub.sum(axis=-1, keepdims=True)
    if np.any(mass <= 0):
        idx = tuple(int(v) for v in np.argwhere(mass[..., 0] <= 0)[0])
        raise ValueError(f"restricted attention row {idx[-1]} (index {idx}) has no mass on the kept tokens")
    return sub / mass


def _verdict(eq: bool) -> Verdict:
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


def measure_variant(A_heads: np.ndarray, keep: np.ndarray, comparison: bool) -> Optional[dict]:
    """All measurements of one variant. ``A_heads``: (L, H, T, T) float64. None if fewer than
    two tokens are kept (D1 needs n >= 2)."""
    from numerics.contraction import birkhoff, softmax_bound_from_probabilities
    from numerics.dobrushin import factor_check
    from numerics.rollout import rollout_tightness

    n = int(keep.sum())
    if n < 2:
        return None
    A_mean = restrict(A_heads.mean(axis=1), keep)         # (L, n, n)
    A_h = restrict(A_heads, keep)                          # (L, H, n, n)
    mean, heads = factor_check(A_mean), factor_check(A_h)
    roll = rollout_tightness(A_mean, residual=RESIDUAL, fused=True)
    out = dict(n=n, mean=mean, heads=heads, roll=roll, birkhoff=None, softmax=None)
    if comparison:
        out["birkhoff"] = birkhoff(A_mean)                                   # (L,)
        if n <= SOFTMAX_BOUND_MAX_T:
            out["softmax"] = softmax_bound_from_probabilities(A_h).mean(axis=1)  # (L,)
    return out


def input_records(model: Any, text_input: Any, comparison: bool = True) -> list[Record]:
    """Every record of one (model, input) (see the module docstring)."""
    enc = model.encode(text_input.text)
    A_heads = model.attentions_of(enc).double().numpy()     # (L, H, T, T)
    special = enc.special.numpy()
    T = int(A_heads.shape[-1])
    base = dict(model=model.name, quantised=bool(model.quantised), causal=bool(model.causal),
                input=text_input.id, source=text_input.source, text_sha=text_input.sha, T=T,
                truncated=bool(enc.truncated), tokens_full=int(enc.n_tokens_full),
                residual=RESIDUAL, head_fusion=FUSION)
    records: list[Record] = []
    for var in variants(special, model.causal):
        m = measure_variant(A_heads, var.keep, comparison and var.name == "all")
        if m is None:
            continue
        prov = dict(base, variant=var.name, n=m["n"])
        mean, heads, roll = m["mean"], m["heads"], m["roll"]
        for l in range(A_heads.shape[0]):
            key = f"{model.name}|{text_input.id}#{text_input.sha}|{var.name}|L{l}"
            bound = (1 + float(mean.delta[l])) / 2
            extra = dict(delta=mean.delta[l], through_first=mean.through_first[l],
                         through_other=mean.through_other[l], exact=mean.exact[l],
                         pair=[int(v) for v in mean.pair[l]],
                         birkhoff=None if m["birkhoff"] is None else m["birkhoff"][l],
                         softmax_bound=None if m["softmax"] is None else m["softmax"][l])
            records.append(Record(
                theorem="dobrushin.factor", instance=f"{key}|mean", verdict=_verdict(mean.equality[l]),
                slack=float(mean.slack[l]), value=bound - float(mean.slack[l]), bound=bound,
                provenance=dict(prov, layer=l, head=None),
                extra={k: _jsonable(v) for k, v in extra.items()}))
            for h in range(A_heads.shape[1]):
                hb = (1 + float(heads.delta[l, h])) / 2
                records.append(Record(
                    theorem="dobrushin.factor", instance=f"{key}|H{h}", verdict=_verdict(heads.equality[l, h]),
                    slack=float(heads.slack[l, h]), value=hb - float(heads.slack[l, h]), bound=hb,
                    provenance=dict(prov, layer=l, head=h),
                    extra={k: _jsonable(v) for k, v in dict(
                        delta=heads.delta[l, h], through_first=heads.through_first[l, h],
                        through_other=heads.through_other[l, h], exact=heads.exact[l, h]).items()}))
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
    return (f"trained:{model.name}:{corpus_name}:max{model.max_tokens}:r{RESIDUAL}:{FUSION}"
            f":w{model.fingerprint}")


def chunk_key(text_input: Any) -> str:
    """One store chunk per input *text*: id plus text hash. Records are keyed the same way, so
    another text under the same id (another file of the same name, an edited line) is measured
    and stored beside it, and a report reads only the records of the texts it was given."""
    return f"{text_input.id}#{text_input.sha}"


def run_campaign(model: Any, corpus: Any, store: Any, console: Any = None,
                 comparison: bool = True) -> str:
    """Measure every input of ``corpus`` not yet in the store (resume), one chunk per input."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    campaign = campaign_name(model, corpus.name)
    done = store.done_chunks(campaign)
    todo = [t for t in corpus.inputs if chunk_key(t) not in done]  # an edited text is re-measured
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as bar:
        task = bar.add_task(f"{model.name}: {len(corpus.inputs) - len(todo)} stored, measuring",
                            total=len(todo))
        for t in todo:
            store.write_chunk(campaign, chunk_key(t), input_records(model, t, comparison))
            bar.advance(task)
    return campaign


def measure_and_report(model_name: str, store: Any, out_dir: Any, console: Any,
                       texts: Optional[str] = None, limit: Optional[int] = None,
                       max_tokens: Optional[int] = None, allow_pickle: bool = False,
                       seed: int = 0) -> dict:
    """Load, measure (resuming), and write the tables and figures of one model."""
    from numerics.corpus import load_corpus
    from numerics.models import MAX_TOKENS, load_model
    from verification.trained_report import report_model

    t0 = time.perf_counter()
    model = load_model(model_name, allow_pickle=allow_pickle,
                       max_tokens=MAX_TOKENS if max_tokens is None else max_tokens)
    corpus = load_corpus(texts, limit=limit)
    for note in corpus.notes:
        console.print(f"[dim]corpus: {note}[/dim]")
    campaign = run_campaign(model, corpus, store, console)
    keys = {(t.id, t.sha) for t in corpus.inputs}
    paths = report_model(store, campaign, model, out_dir, console, keys, seed=seed)
    console.print(f"[dim]{model.name}: {len(keys)} inputs in {time.perf_counter() - t0:.1f} s[/dim]")
    return paths


# ---------------------------------------------------------------------------------------------
# CLI and main-job section
# ---------------------------------------------------------------------------------------------
def _cmd_rollout(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verification.cli import make_console
    from verification.store import ResultStore

    console = make_console()
    with ResultStore(args.db) as store:
        measure_and_report(args.model, store, Path(args.out), console, texts=args.texts,
                           limit=args.limit, max_tokens=args.max_tokens,
                           allow_pickle=args.allow_pickle, seed=args.seed)
    return 0


def register(subparsers: Any) -> None:
    from verification.options import add_common, int_at_least, positive_int

    p = subparsers.add_parser("rollout", help="D1 equality shares and rollout tightness on a trained model")
    add_common(p)
    p.add_argument("--model", default="minilm", help="minilm | smollm2 | a checkpoint folder | a .gguf file")
    p.add_argument("--texts", default=None, help="corpus: text file (lines or blank-line blocks) or JSONL "
                   "with a 'text' field (default: pydoc_data.topics prose)")
    p.add_argument("--limit", type=positive_int, default=None, help="first N inputs only (N >= 1)")
    p.add_argument("--max-tokens", type=int_at_least(2), default=None,
                   help="truncate inputs here (>= 2; default 512)")
    p.add_argument("--allow-pickle", action="store_true",
                   help="load pickled weights (*.bin/*.pt) with torch.load(weights_only=True)")
    p.set_defaults(func=_cmd_rollout)


QUICK = {"minilm": dict(limit=18, max_tokens=128), "smollm2": dict(limit=12, max_tokens=128)}


def verify_section(ctx: Any) -> None:
    """Quick sample of both embedded models (full: 120 inputs each at 512 tokens)."""
    for name, quick in QUICK.items():
        opts = quick if ctx.quick else dict(limit=120, max_tokens=512)
        ctx.console.rule(f"trained transformers: {name}")
        measure_and_report(name, ctx.store, ctx.out_dir, ctx.console, seed=ctx.seed, **opts)

