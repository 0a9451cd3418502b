"""Beyond text: how often Theorem D1's equality holds in small vision (ViT, ViT with registers)
and tabular (FT-Transformer) transformers trained here on scikit-learn's bundled data sets.

checks (train -> checkpoints -> the trained-model records, one campaign per checkpoint), report
(stored records -> per-layer statistics and their tables), paper (``paper_part``: tables, figures,
macros; and the files of the command line), command (the CLI subcommand ``modalities`` and the
main-job section ``modalities``). The models: :mod:`numerics.modalities`.
"""
