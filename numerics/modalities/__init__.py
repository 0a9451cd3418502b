"""Beyond text: small vision and tabular transformers trained here, as attention sources.

- :mod:`numerics.modalities.data`: scikit-learn's bundled sets (``load_digits`` 8x8 images,
  ``load_breast_cancer``, ``load_wine``), deterministic stratified splits, test examples with ids
  and content hashes.
- :mod:`numerics.modalities.networks`: a ViT (2x2 patches, CLS, pre-norm blocks, optional register
  tokens) and an FT-Transformer (one token per feature, CLS), both returning their attention
  probabilities ``(B, L, H, T, T)``.
- :mod:`numerics.modalities.presets`: the models and the presets ``tiny`` / ``quick`` / ``paper``.
- :mod:`numerics.modalities.training`: deterministic CPU training, safetensors checkpoints at a few
  fractions of training (0 = initialisation), resumable.
- :mod:`numerics.modalities.source`: a checkpoint as an :class:`numerics.sources.AttentionSource`
  whose instances the trained-model pipeline measures unchanged.
- :mod:`numerics.modalities.text`: a text model (MiniLM) with its inputs cut to a given token count,
  to compare text with these models at matched n.
"""
from importlib import import_module
from typing import Any

# public name -> its module, imported on first use (PEP 562): listing presets loads no torch
_WHERE = {"DATASETS": "data", "Dataset": "data", "TestItem": "data", "load_dataset": "data",
          "NetConfig": "networks", "build": "networks",
          "MODELS": "presets", "PRESETS": "presets", "ModelSpec": "presets", "Preset": "presets",
          "spec_config": "presets", "CheckpointSource": "source", "load_checkpoint": "source",
          "Checkpoint": "training", "train": "training", "MatchedText": "text", "content_length": "text"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(f"numerics.modalities.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'numerics.modalities' has no attribute {name!r}")


__all__ = ["Checkpoint", "CheckpointSource", "DATASETS", "Dataset", "MODELS", "MatchedText", "ModelSpec", "NetConfig",
           "PRESETS", "Preset", "TestItem", "build", "content_length", "load_checkpoint", "load_dataset", "spec_config",
           "train"]
