"""The notation of the modalities family's tables and captions (``verification/modalities/report/``)."""

DELTA_A_L = r"$\delta(A_l)$"
