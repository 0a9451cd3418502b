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
"""
from numerics.modalities.data import DATASETS, Dataset, TestItem, load_dataset  # noqa: F401
from numerics.modalities.networks import NetConfig, build  # noqa: F401
from numerics.modalities.presets import MODELS, PRESETS, ModelSpec, Preset, spec_config  # noqa: F401
from numerics.modalities.source import CheckpointSource, load_checkpoint  # noqa: F401
from numerics.modalities.training import Checkpoint, train  # noqa: F401
