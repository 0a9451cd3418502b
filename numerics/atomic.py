"""Atomic file writes: the one way attnbounds writes a file (tables, figures, macros, the README's
findings block, checkpoints, copies of the hand-written paper).

A file is written to a temporary file in its own folder and renamed over the target with
:func:`os.replace`, so a reader (or a run killed with ``kill -9`` at any moment) sees the old
file or the new one, never an empty or truncated one. The temporary name is hidden and easy to
recognise, ``.<name>.attnbounds-tmp-<pid>-<hex>``: it does not end with the target's suffix, so
no ``*.tex`` / ``*.png`` / ``step*.safetensors`` pattern picks it up. One left behind by a killed
run is removed by the next write into the same folder (when its process is gone).

``atomic_path(path)`` is the general form (yields the temporary path for a writer that wants a
file name: matplotlib's ``savefig`` (give ``format=``), safetensors' ``save_file``);
:func:`write_text`, :func:`write_bytes`, :func:`copy_file` and :func:`copy_tree` are built on it.
This module lives in :mod:`numerics` because :mod:`numerics` never imports :mod:`verification`
and the training code writes checkpoints.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = write_text(d / "a.tex", "x\\n")
>>> sorted(p.name for p in d.iterdir()), (d / "a.tex").read_text()
(['a.tex'], 'x\\n')
>>> is_temp(temp_path(d / "a.tex"))
True
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

MARK = ".attnbounds-tmp-"
TEMP_NAME = re.compile(r"^\.(?P<target>.+)" + re.escape(MARK) + r"(?P<pid>\d+)-[0-9a-f]+$")


def temp_path(path: str | os.PathLike) -> Path:
    """A fresh temporary name beside ``path`` (same folder, so that the rename is atomic)."""
    path = Path(path)
    return path.with_name(f".{path.name}{MARK}{os.getpid()}-{secrets.token_hex(4)}")


def is_temp(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a temporary file of :func:`atomic_path` (finished or abandoned)."""
    return TEMP_NAME.match(Path(path).name) is not None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:          # EPERM: someone else's live process
        return True
    return True


_swept: set[Path] = set()


def sweep(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files in ``folder`` left by writers that are gone (killed runs);
    return them. Another live process's temporary files are left alone."""
    folder = Path(folder)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        m = TEMP_NAME.match(e.name)
        if m and not _alive(int(m.group("pid"))):
            try:
                os.unlink(e.path)
                removed.append(Path(e.path))
            except OSError:
                pass
    return removed


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends normally, the file written
    there replaces ``path`` in one rename (keeping the old file's permission bits). When the block
    raises, the temporary file is removed and ``path`` is left as it was."""
    path = Path(path)
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    key = folder.resolve()
    if key not in _swept:                  # once per folder and process: leftovers of killed runs
        sweep(folder)
        _swept.add(key)
    tmp = temp_path(path)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(errno.ENOENT, "the writer wrote nothing", str(tmp))
        try:
            shutil.copymode(path, tmp)
        except OSError:
            pass                           # no old file: the umask's default mode
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; return ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "xb") as fh:
            fh.write(data)
    return path


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8",
               newline: Optional[str] = None) -> Path:
    """Write ``text`` to ``path`` atomically (``newline`` as for :func:`open`); return ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "x", encoding=encoding, newline=newline) as fh:
            fh.write(text)
    return path


def copy_file(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Copy ``src`` (contents and metadata, as :func:`shutil.copy2`) to ``dst`` atomically."""
    dst = Path(dst)
    with atomic_path(dst) as tmp:
        shutil.copy2(src, tmp)
    return dst


def copy_tree(src: str | os.PathLike, dst: str | os.PathLike) -> list[Path]:
    """Copy every file under ``src`` to the same place under ``dst``, each atomically (existing
    files under ``dst`` that ``src`` lacks are kept); temporary files are not copied."""
    src, dst = Path(src), Path(dst)
    out = []
    for root, dirs, files in os.walk(src):
        dirs.sort()
        rel = Path(root).relative_to(src)
        for name in sorted(files):
            if not TEMP_NAME.match(name):
                out.append(copy_file(Path(root) / name, dst / rel / name))
    return out
