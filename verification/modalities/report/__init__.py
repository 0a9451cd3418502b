"""The modalities family's report: stored records -> statistics, tables and figures (never recomputed).

    stages    records -> per-(model, seed, checkpoint, layer) shares; the text rows as-is
    seeds     across seeds: mean, spread, t intervals; random baselines and text at matched n
    figures   share against depth and against the training step
    tables    every table defined once (:func:`verification.modalities.report.tables.parts`) and the
              files of the command line and the main job
"""
