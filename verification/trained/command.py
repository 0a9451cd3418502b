"""The ``attnbounds rollout`` subcommand and the ``trained`` section of the main job."""
from __future__ import annotations

import argparse
import time
from typing import Any, Optional


def measure_and_report(model_name: str, store: Any, out_dir: Any, console: Any,
                       texts: Optional[str] = None, limit: Optional[int] = None,
                       max_tokens: Optional[int] = None, allow_pickle: bool = False,
                       seed: int = 0) -> dict:
    """Load, measure (resuming), and write the tables and figures of one model."""
    from numerics.sources.corpus import load_corpus
    from numerics.sources.models import MAX_TOKENS, load_model
    from verification.trained.checks import run_campaign
    from verification.trained.report import report_model

    t0 = time.perf_counter()
    model = load_model(model_name, allow_pickle=allow_pickle,
                       max_tokens=MAX_TOKENS if max_tokens is None else max_tokens)
    corpus = load_corpus(texts, limit=limit)
    for note in corpus.notes:
        console.print(f"[dim]corpus: {note}[/dim]")
    campaign = run_campaign(model, corpus, store, console)
    keys = {(t.id, t.sha) for t in corpus.inputs}
    t1 = time.perf_counter()
    baselines = measure_baselines(store, campaign, keys, seed, console)
    console.print(f"[dim]{model.name}: random baselines at matched n in {time.perf_counter() - t1:.1f} s[/dim]")
    paths = report_model(store, campaign, model, out_dir, console, keys, seed=seed, baselines=baselines)
    console.print(f"[dim]{model.name}: {len(keys)} inputs in {time.perf_counter() - t0:.1f} s[/dim]")
    return paths


def measure_baselines(store: Any, campaign: str, keys: Optional[set], seed: int = 0, console: Any = None) -> str:
    """The random matrices of the same token counts as the inputs ``keys`` of ``campaign`` (every
    token set), D1 checked on each (resumed); the baseline campaign's name."""
    from verification.trained.checks import baseline_slots, run_baselines
    from verification.trained.report import collect, sizes_of

    return run_baselines(store, baseline_slots(sizes_of(collect(store, campaign, keys))), seed, console)


def _cmd_rollout(args: argparse.Namespace) -> int:
    from pathlib import Path

    from verification.options import make_console
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
    p.add_argument("--model", default="minilm", help="minilm | smollm2 | a checkpoint folder | a weights file "
                   "(.safetensors, .safetensors.index.json, .gguf; the file named is the one loaded, with "
                   "its folder's config.json and tokenizer)")
    p.add_argument("--texts", default=None, help="corpus: text file (lines or blank-line blocks) or JSONL "
                   "with a 'text' field (default: pydoc topics, stdlib docstrings and package licenses, interleaved)")
    p.add_argument("--limit", type=positive_int, default=None, help="first N inputs only (N >= 1)")
    p.add_argument("--max-tokens", type=int_at_least(2), default=None,
                   help="truncate inputs here (>= 2; default 512)")
    p.add_argument("--allow-pickle", action="store_true",
                   help="load pickled weights (*.bin/*.pt) with torch.load(weights_only=True)")
    p.set_defaults(func=_cmd_rollout)


def verify_section(ctx: Any) -> None:
    """Quick sample of both embedded models (full: 300 inputs each at 512 tokens)."""
    from verification.measure.text import FULL, QUICK

    for name, quick in QUICK.items():
        opts = FULL if ctx.full else quick
        ctx.console.rule(f"trained transformers: {name}")
        measure_and_report(name, ctx.store, ctx.out_dir, ctx.console, seed=ctx.seed, **opts)

