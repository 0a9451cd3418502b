"""Measurements that more than one family makes, owned here rather than by one of them: Theorem D1
and the rollout chain on a model's attention instance (:mod:`verification.measure.attention`), the
random baselines at a model's token counts (:mod:`verification.measure.baselines`: their chunks,
record layouts, reading and shares), and the main job's text-model campaigns: their settings,
inputs, names, lookup in the store and command lines (:mod:`verification.measure.text`). The
trained, modalities and SAN families use them; no family imports another family's modules.
"""
