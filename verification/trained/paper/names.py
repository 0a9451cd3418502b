"""The embedded models as the paper names them: the word of their macros (``\\MiniLMInputs``), their
names and titles in tables and figures, legends, what they are (architecture, attention,
weights), and the notes every table of their attention carries."""
from __future__ import annotations

MODELS = {"minilm": "MiniLM", "smollm2": "SmolLM2", "gemma3": "Gemma", "antiberty": "AntiBERTy", "dinov2": "DINOvTwo"}  # -> macro word
NAMES = {"minilm": ("all-MiniLM-L6-v2", ""), "smollm2": ("SmolLM2-135M-Instruct", "4-bit GGUF"),
         "gemma3": ("Gemma 3 270M", "4-bit GGUF"), "antiberty": ("AntiBERTy", ""),
         "dinov2": ("DINOv2-S", "ONNX, saliency fine-tune")}      # (the model's name, what its title adds)
TITLES = {k: name + (f" ({extra})" if extra else "") for k, (name, extra) in NAMES.items()}
LEGEND = {"minilm": "MiniLM", "smollm2": "SmolLM2", "gemma3": "Gemma 3", "antiberty": "AntiBERTy", "dinov2": "DINOv2-S"}
SHORT = {"minilm": "all-MiniLM-L6-v2", "smollm2": "SmolLM2-135M (4-bit)", "gemma3": "Gemma 3 270M (4-bit)",
         "antiberty": "AntiBERTy", "dinov2": "DINOv2-S"}
# what the cross-model table says of each embedded model (numerics.sources.models holds the files)
ARCHITECTURES = {"minilm": ("BERT encoder", "bidirectional"), "smollm2": ("Llama decoder", "causal, grouped-query"),
                 "gemma3": ("Gemma 3 decoder", "causal, grouped-query, sliding window 512 + global every 6th layer"),
                 "antiberty": ("BERT encoder (antibody sequences)", "bidirectional"),
                 "dinov2": ("ViT encoder (images, patch 14)", "bidirectional")}
QUANTISATION = {"minilm": "float32", "smollm2": "GGUF Q4_1", "gemma3": "GGUF Q4_K_M", "antiberty": "float32",
                "dinov2": "float32 (ONNX)"}


def notes_of(name: str) -> tuple[str, ...]:
    """What every table of ``name``'s attention must say (:attr:`numerics.sources.models.ModelSource.notes`)."""
    from numerics.sources.models import EMBEDDED

    return EMBEDDED[name].notes if name in EMBEDDED else ()
