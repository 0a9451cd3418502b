"""The embedded models as the paper names them, read from each model's source
(:class:`numerics.sources.embedded.Display`: the word of their macros, ``\\MiniLMInputs``; their names
and titles in tables and figures, legends, what they are, their weights' precision), and the notes
every table of their attention carries."""
from __future__ import annotations

from numerics.sources.embedded import EMBEDDED

_SHOWN = {k: s.display for k, s in EMBEDDED.items() if s.display is not None}
MODELS = {k: d.word for k, d in _SHOWN.items()}                          # -> macro word
NAMES = {k: (d.name, d.extra) for k, d in _SHOWN.items()}                # (the model's name, what its title adds)
TITLES = {k: d.title for k, d in _SHOWN.items()}
LEGEND = {k: d.legend for k, d in _SHOWN.items()}
SHORT = {k: d.short for k, d in _SHOWN.items()}
ARCHITECTURES = {k: (d.architecture, d.attention) for k, d in _SHOWN.items()}   # the cross-model table
QUANTISATION = {k: d.quantisation for k, d in _SHOWN.items()}


def notes_of(name: str) -> tuple[str, ...]:
    """What every table of ``name``'s attention must say (:attr:`numerics.sources.models.ModelSource.notes`)."""
    return EMBEDDED[name].notes if name in EMBEDDED else ()
