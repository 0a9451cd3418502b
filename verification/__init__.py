"""Does it hold on this instance, and how tight: verdicts, campaigns, store, reports, CLI."""

import numerics  # noqa: F401,E402  (the pins of numerics.pins, before anything here loads numpy, torch or numba)
