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
from numerics.san.config import MATCH_KINDS, SANConfig, flops_per_token, matched, params  # noqa: F401
from numerics.san.data import Data  # noqa: F401
from numerics.san.model import Decoder, build  # noqa: F401
from numerics.san.train import (TrainConfig, TrainResult, checkpoint_steps, evaluate,  # noqa: F401
                                load_checkpoint, train)
