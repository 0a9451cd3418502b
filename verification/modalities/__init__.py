"""Beyond text: how often Theorem D1's equality holds in small vision (ViT, ViT with registers)
and tabular (FT-Transformer) transformers trained here on scikit-learn's bundled data sets.

checks (train -> checkpoints -> the trained-model records, one campaign per checkpoint), findings
(the plan's stored chunks -> typed per-checkpoint shares, seed-level spreads and decided comparisons),
report (the findings -> tables and figures; and the files of the command line), paper
(``paper_part``: the same findings -> tables, figures, macros), command (the CLI subcommand ``modalities`` and the
main-job section ``modalities``). The models: :mod:`numerics.modalities`.
"""
