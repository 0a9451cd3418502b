"""The ``attnbounds rollout`` subcommand and the ``trained`` section of the main job: the family's
one shape (:mod:`verification.family`: :class:`verification.trained.checks.Plan`, its ``run``,
the report's ``report``)."""
from __future__ import annotations

import argparse
from typing import Any, Optional


def measure_and_report(model_name: str, store: Any, out_dir: Any, console: Any,
                       texts: Optional[str] = None, limit: Optional[int] = None,
                       max_tokens: Optional[int] = None, allow_pickle: bool = False,
                       seed: int = 0, images: Optional[str] = None) -> dict:
    """Load, measure (resuming), and write the tables and figures of one model (``images``: an image
    model's ``--images``)."""
    from verification.trained import checks, report

    plan = checks.Plan((checks.ModelRun(model_name, texts, limit, max_tokens, allow_pickle, images),), seed)
    checks.run(plan, store, console=console)
    return next(iter(report.report(store, plan, out_dir, console).values()))


def _cmd_rollout(args: argparse.Namespace) -> int:
    """``attnbounds rollout``: the plan, every corpus and model of it loaded (and refused, when it
    is bad input) before the store is opened, and on a store not made yet each model's first input
    measured and its attention checked too, so a refused command creates no store and no folder
    (docs/reliability.md); then run into ``--db`` and report under ``--out``."""
    from pathlib import Path

    from verification.options import make_console
    from verification.store import ResultStore
    from verification.trained import checks, report

    plan = checks.Plan.from_args(args)
    checks.prepare(plan, first_input=args.db == ":memory:" or not Path(args.db).exists())
    console = make_console()
    with ResultStore(args.db) as store:
        checks.run(plan, store, console=console)
        report.report(store, plan, Path(args.out), console)
    return 0


def theorem_arg(text: str) -> str:
    """``--check THEOREM_ID``: :func:`verification.trained.checks.heads.theorem_arg` (loaded when used)."""
    from verification.trained.checks.heads import theorem_arg as check

    return check(text)


theorem_arg.__name__ = "theorem id"


def register(subparsers: Any) -> None:
    from verification.options import add_common, add_theory, int_at_least, positive_int

    p = subparsers.add_parser("rollout", help="D1 equality shares and rollout tightness on a trained model")
    add_common(p)
    p.add_argument("--model", default="minilm", help="minilm | smollm2 | gemma3 | antiberty | dinov2 (a vision "
                   "transformer, on images) | whisper-base (speech: encoder and decoder self-attention, "
                   "whisper-base-encoder / whisper-base-decoder for one) | a checkpoint folder | a weights file (.safetensors, "
                   ".safetensors.index.json, .gguf; the file named is the one loaded, with its folder's config.json "
                   "and tokenizer) | an ONNX image model (FILE.onnx: its Softmax outputs are read as attention)")
    p.add_argument("--texts", default=None, help="corpus: text file (lines or blank-line blocks) or JSONL "
                   "with a 'text' field, or antibody-v-genes (human germline V genes, for antiberty) (default: pydoc topics, "
                   "stdlib docstrings and package licenses, interleaved)")
    p.add_argument("--images", default=None, metavar="DIR|FILE[,FILE...]",
                   help="inputs of an image model (dinov2, FILE.onnx): a folder of .png/.jpg files or a "
                        "comma-separated list of files (default: 19 photographs bundled with scikit-image and "
                        "scikit-learn)")
    p.add_argument("--audio", default=None, metavar="DIR|FILE[,FILE...]",
                   help="inputs of a speech model (whisper-base): a folder of .wav files or a comma-separated list "
                        "of PCM WAV files, resampled to 16 kHz and cut at 30 s (default: beckett.wav, shipped by "
                        "useful-moonshine-onnx)")
    p.add_argument("--limit", type=positive_int, default=None, help="first N inputs only (N >= 1)")
    p.add_argument("--max-tokens", type=int_at_least(2), default=None,
                   help="truncate inputs here (>= 2; default 512; Whisper: the decoder's positions, default 448, "
                        "its encoder's 1500 fixed)")
    p.add_argument("--allow-pickle", action="store_true",
                   help="load pickled weights (*.bin/*.pt) with torch.load(weights_only=True): plain tensors only, "
                        "a pickle that would run code is still refused")
    p.add_argument("--full", action="store_true", help="the inputs of `attnbounds verify --full`: 150 at up to "
                                                       "512 tokens (the causal decoders SmolLM2 and Gemma 3: 30; "
                                                       "unless --limit or --max-tokens say otherwise)")
    add_theory(p)
    p.add_argument("--check", action="append", default=[], type=theorem_arg, metavar="THEOREM_ID",
                   help="also decide this registered statement (theory.expr; e.g. from --theory) on every head of "
                        "every layer and input, certified: a stochastic symbol is the head's attention (a second one "
                        "the next layer's), a logits symbol its pre-softmax scores (a causal model's masked entries "
                        "0: softmax(L, mask=\"causal\")), a tokens symbol the layer's input hidden states; a table "
                        "per statement (trained-check-<id>-<model>); repeatable; a violation of a proved one stops "
                        "the run")
    p.set_defaults(func=_cmd_rollout)


def verify_section(ctx: Any) -> None:
    """The embedded models on the main job's inputs (full: 150 inputs each at 512 tokens, the causal
    decoders 30, the Qwen2.5-Coder models 12 and 6; DINOv2 every bundled photograph)."""
    from verification import family

    family.verify(ctx, "trained")
