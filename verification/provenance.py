"""Provenance attached to every stored record and every reported figure."""
from __future__ import annotations

import platform
import sys
from functools import lru_cache
from importlib import metadata

_PACKAGES = ("attnbounds", "numpy", "torch", "scipy", "sympy", "mpmath", "numba", "transformers", "gguf", "onnxruntime")


@lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    """Versions of Python and of the packages a result depends on."""
    from numerics import pins

    out = {"python": platform.python_version(), "platform": f"{sys.platform}-{platform.machine()}",
           "kernels": f"{pins.summary()} (numerics.pins)"}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def versions_line() -> str:
    v = versions()
    keys = ("attnbounds", "python", "numpy", "torch", "sympy", "mpmath", "numba", "kernels")
    return ", ".join(f"{k} {v[k]}" for k in keys)
