"""Theorems from outside the package: a Python file given with ``--theory FILE.py`` (such as
docs/examples/my_bounds.py) and the modules installed packages declare in the
``attnbounds.theories`` entry-point group (docs/your-theorem.md).

A theory file is the user's own code (as a conftest.py is): it runs with the privileges of whoever
runs the command, once per process, and what it registers (:func:`theory.register`) is what it
brings. Anything it raises (``sys.exit`` included), a file that is not there, or one that registers
nothing, is one line naming the file (and the line) as InvalidInput; a Ctrl-C while it runs leaves
nothing of it registered:

    load_file(path)          run a theory file; its theorems, in registration order
    load_entry_points()      import every module of the entry-point group (once per process)
    unload_files()           forget every theory file loaded (their theorems leave the registry)
    source(theorem_id)       where a theorem came from: "built-in", the file, or "entry point NAME"
    user_exit(exc)           the one line for a SystemExit a loaded file's function raised, else None
    theory_files(argv)       the values of every --theory in a command line (before it is parsed)

An entry point names a module (``mypkg.bounds``) or a function to call (``mypkg.bounds:load``):

    [project.entry-points."attnbounds.theories"]
    my-bounds = "mypkg.bounds"
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

from theory.errors import InvalidInput

GROUP = "attnbounds.theories"           # theory.registry.GROUP (this module stays light: no sympy at import)
_FILES: dict[str, tuple[str, list]] = {}  # resolved path -> (content digest, theorem ids)


def _where(exc: BaseException, path: Path) -> str:
    """``line N`` of the innermost frame in ``path`` (a SyntaxError's own line), or ''."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"line {exc.lineno}: "
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f"line {frames[-1].lineno}: " if frames else ""


def exited(exc: SystemExit) -> str:
    """``calls sys.exit(CODE)``: what a :class:`SystemExit` raised by a user's code says."""
    return f"calls sys.exit({exc.code!r})" if exc.code is not None else "calls sys.exit()"


def user_exit(exc: SystemExit) -> str | None:
    """Where a :class:`SystemExit` raised while a command runs comes from, when a loaded theory file
    raised it (an ``equality_condition`` that calls ``sys.exit``): ``--theory FILE: line N: calls
    sys.exit(0) ...`` for one line on stderr; None when no theory file is in its traceback."""
    files = {Path(f) for f in _FILES}
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) in files]
    if not frames:
        return None
    f = frames[-1]
    return (f"--theory {f.filename}: line {f.lineno}: {exited(exc)} in {f.name}() while the command runs; "
            "a theory file's functions return their value")


def source(theorem_id: str) -> str:
    """Where ``theorem_id`` was registered (:func:`theory.registry.source`)."""
    from theory.registry import source as where

    return where(theorem_id)


def load_entry_points() -> list:
    """:func:`theory.registry.load_entry_points`."""
    from theory.registry import load_entry_points as load

    return load()


def load_file(path: str | Path) -> list:
    """Run the theory file ``path`` (once per process and content: a second call returns the same
    theorems; a changed file replaces what it registered before) and return its theorems."""
    from theory import registry
    from theory.registry import SOURCES, registered_during

    registry.load_all()                 # the built-ins first: an id of theirs is refused, not replaced
    p = Path(path).expanduser()
    if not p.exists():
        raise InvalidInput(f"--theory {path}: no such file")
    if not p.is_file():
        raise InvalidInput(f"--theory {path}: not a file (a theory is one Python file, e.g. my_bounds.py)")
    if p.suffix != ".py":
        raise InvalidInput(f"--theory {path}: not a Python file (.py)")
    p = p.resolve()
    try:
        text = p.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"--theory {path}: cannot be read ({exc.strerror or exc})") from None
    digest = hashlib.sha256(text).hexdigest()
    old = _FILES.get(str(p))
    if old is not None and old[0] == digest:
        return [registry.REGISTRY[k] for k in old[1] if k in registry.REGISTRY]
    if old is not None:                 # the file changed: what it registered before goes
        for k in old[1]:
            registry.REGISTRY.pop(k, None)
            SOURCES.pop(k, None)
    name = f"attnbounds_theory_{hashlib.sha256(str(p).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, p)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    before = set(registry.REGISTRY)

    def undo() -> None:                 # a file that fails registers nothing, not the theorems before the error
        sys.modules.pop(name, None)
        for k in [k for k in registry.REGISTRY if k not in before]:
            registry.REGISTRY.pop(k)

    try:
        found = registered_during(lambda: spec.loader.exec_module(module), str(p))
    except InvalidInput as exc:
        undo()
        raise InvalidInput(f"--theory {path}: {exc}") from None
    except Exception as exc:            # the user's code: any error is theirs, said in one line
        undo()
        msg = str(exc).splitlines()[0] if str(exc) else ""
        raise InvalidInput(f"--theory {path}: {_where(exc, p)}{type(exc).__name__}: {msg}".rstrip(": ")) from None
    except SystemExit as exc:           # sys.exit() in the file: never a silent end of the command
        undo()
        raise InvalidInput(f"--theory {path}: {_where(exc, p)}{exited(exc)} while it loads; a theory file "
                           "registers theorems and returns") from None
    except BaseException:               # Ctrl-C while it runs: nothing of it stays registered
        undo()
        raise
    if not found:
        raise InvalidInput(f"--theory {path}: registers no theorem (call theory.register(Theorem(id=..., title=..., "
                           "category=..., statement=...)); see docs/your-theorem.md)")
    for th in found:
        SOURCES[th.id] = str(path)
    _FILES[str(p)] = (digest, [th.id for th in found])
    return found


def unload_files() -> list[str]:
    """Forget every theory file this process loaded: their theorems leave the registry (a test, or a
    session that edits its file under another name, starts clean); the ids removed."""
    from theory.registry import REGISTRY, SOURCES

    gone = [k for _, ids in _FILES.values() for k in ids]
    for k in gone:
        REGISTRY.pop(k, None)
        SOURCES.pop(k, None)
    for path in list(_FILES):
        sys.modules.pop(f"attnbounds_theory_{hashlib.sha256(path.encode()).hexdigest()[:12]}", None)
    _FILES.clear()
    return gone


def theory_files(argv: Sequence[str]) -> list[str]:
    """The values of every ``--theory FILE`` / ``--theory=FILE`` in ``argv``, in order.

    >>> theory_files(["stress", "x.y", "--theory", "docs/examples/my_bounds.py", "--theory=my_bounds.py"])
    ['docs/examples/my_bounds.py', 'my_bounds.py']
    """
    out, it = [], iter(range(len(argv)))
    for i in it:
        a = argv[i]
        if a == "--":
            break
        if a == "--theory" and i + 1 < len(argv):
            out.append(argv[i + 1])
            next(it, None)
        elif a.startswith("--theory="):
            out.append(a.split("=", 1)[1])
    return out
