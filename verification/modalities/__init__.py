"""Beyond text: how often Theorem D1's equality holds in small vision (ViT, ViT with registers)
and tabular (FT-Transformer) transformers trained here on scikit-learn's bundled data sets.

checks (train -> checkpoints -> the trained-model records, one campaign per checkpoint), report
(stored records -> per-layer statistics), paper (tables, figures, macros; files), command (CLI
``modalities`` + main-job section ``modalities``). The models: :mod:`numerics.modalities`.
"""
from verification.modalities.command import SECTION, register, verify_section  # noqa: F401
from verification.modalities.paper import paper_part  # noqa: F401
