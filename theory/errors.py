"""The one exception type for bad input.

Everything that validates what a user gave (an argument, an environment variable, a matrix, a
model folder, a text file, a results store) raises :class:`InvalidInput`, a ``ValueError``
subclass (as hypothesis's ``InvalidArgument`` and scikit-learn's parameter validation do), with
one message style: *what* is wrong and *where* (which option, row, file, tensor), e.g.
``P: row 1 sums to 0.9, not 1 (tolerance 1e-09) at batch index (1, 2)``.

``attnbounds`` (:func:`verification.cli.main`) catches this type only: it prints the message as
one line and exits with status 2. Any other exception, a ``ValueError`` or ``KeyError`` raised by
a bug included, is a traceback and exit status 1, so that a bug is never reported as the user's
mistake.

>>> issubclass(InvalidInput, ValueError)
True
"""
from __future__ import annotations

__all__ = ["InvalidInput"]


class InvalidInput(ValueError):
    """Bad input: the message names what is wrong and where (see the module docstring)."""
