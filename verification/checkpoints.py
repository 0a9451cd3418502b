"""Where the families that train models (``modalities``, ``san``) keep their checkpoints, checked
before any work.

A family that trains writes safetensors checkpoints under a folder of its own (``--checkpoints``,
``ATTNBOUNDS_CHECKPOINTS`` or ``<out>/checkpoints``), creating it when the first model is trained.
A path that cannot become a folder (a file in the way, a folder this user cannot write) would
otherwise surface only then: after the command opened (and so created) its results store, or, on a
worker, as an ``OSError`` traceback. :func:`check_checkpoint_folder` proves it usable without
creating anything, as :func:`verification.options.check_out_dir` does for ``--out`` and
:func:`verification.store.check_writable` for ``--db``; the command calls it while building its plan,
before the store is opened, so a refused command creates nothing (docs/reliability.md).

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> f = pathlib.Path(tempfile.mkstemp(dir=root)[1])                # a file in the way
>>> check_checkpoint_folder(root / "ck" / "san", "--out")       # not there yet: it can be made
>>> try:
...     check_checkpoint_folder(f / "san", "--out")
... except ValueError as exc:
...     print(str(exc).replace(str(f), "ROOT/f"))
--out: the checkpoint folder 'ROOT/f/san' cannot be made: 'ROOT/f' is not a folder
"""
from __future__ import annotations

import os
from pathlib import Path

from theory.errors import InvalidInput


def check_checkpoint_folder(path: str | os.PathLike, option: str) -> None:
    """``path`` is a folder, or can be made one: the nearest part of it that exists (itself
    included) is a folder this user can write. ``option`` names where the path came from
    (``--checkpoints``, ``ATTNBOUNDS_CHECKPOINTS``, ``--out``); its missing names can be made there
    (:func:`verification.options.unmakeable`). Nothing is left behind."""
    from verification.options import unmakeable

    path = Path(path)
    try:
        nearest = next((p for p in (path, *path.parents) if p.exists() or p.is_symlink()), Path(os.getcwd()))
    except OSError as exc:                  # a name too long to look up, say
        raise InvalidInput(f"{option}: the checkpoint folder {str(path)!r} cannot be made "
                           f"({exc.strerror or exc})") from None
    if not nearest.is_dir():
        raise InvalidInput(f"{option}: the checkpoint folder {str(path)!r} cannot be made: "
                           f"{str(nearest)!r} is not a folder")
    if not os.access(nearest, os.W_OK | os.X_OK):
        raise InvalidInput(f"{option}: the checkpoint folder {str(path)!r} cannot be written "
                           f"({str(nearest)!r}: permission denied)")
    why = unmakeable(path, nearest)
    if why is not None:
        raise InvalidInput(f"{option}: the checkpoint folder {str(path)!r} cannot be made ({why})")
