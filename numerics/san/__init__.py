"""Attention-only transformers (SANs) at small scale: models, data, training, measurements.

    SANConfig, matched, params, flops_per_token     numerics.san.config
    Decoder, build                                  numerics.san.model (nanoGPT-style, plain torch)
    Data                                            numerics.san.data (pydoc bytes + two probes)
    TrainConfig, train, evaluate, load_checkpoint   numerics.san.train (deterministic, resumable)
    layer_spectra, model_ranks                      numerics.san.spectra (rank family's estimators)
    bottleneck_residual, bottleneck_exact           numerics.san.bottleneck (the lemma on weights)
    decide, decide_exact, noise_floor               numerics.san.claims (outcomes against noise)
    SANSource                                       numerics.san.source (an AttentionSource)
"""
from numerics.san.bottleneck import bottleneck_exact, bottleneck_residual
from numerics.san.claims import decide, decide_exact, noise_floor
from numerics.san.config import MATCH_KINDS, SANConfig, flops_per_token, matched, params
from numerics.san.data import Data
from numerics.san.model import Decoder, build
from numerics.san.source import SANSource
from numerics.san.spectra import layer_spectra, model_ranks
from numerics.san.train import TrainConfig, TrainResult, checkpoint_steps, evaluate, load_checkpoint, train

__all__ = ["Data", "Decoder", "MATCH_KINDS", "SANConfig", "SANSource", "TrainConfig", "TrainResult",
           "bottleneck_exact", "bottleneck_residual", "build", "checkpoint_steps", "decide", "decide_exact",
           "evaluate", "flops_per_token", "layer_spectra", "load_checkpoint", "matched", "model_ranks",
           "noise_floor", "params", "train"]
