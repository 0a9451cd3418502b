"""Provenance attached to every stored record and every reported figure: the versions of Python and
of the packages a result depends on (the solvers z3 and cvc5, python-flint's ball arithmetic, onnx and
onnxruntime, which read the image model, among them), the kernel pins, and the machine (CPU model,
logical CPUs this process may use, memory): :func:`versions`. The proof assistant's versions (Coq and
mathcomp, which ``make proofs`` uses and no record depends on) are read by :func:`prover_versions`."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from functools import lru_cache
from importlib import metadata

_PACKAGES = ("attnbounds", "numpy", "torch", "scipy", "sympy", "mpmath", "numba", "transformers", "gguf", "onnxruntime",
             "onnx", "z3-solver", "cvc5", "python-flint")


def machine() -> str:
    """The CPU model (``/proc/cpuinfo``'s model name, else :func:`platform.processor`), the logical
    CPUs this process may run on, and the memory (``/proc/meminfo``), in one line."""
    model, memory = "", ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
        with open("/proc/meminfo", encoding="utf-8") as fh:
            kb = next((int(line.split()[1]) for line in fh if line.startswith("MemTotal:")), 0)
            memory = f", {kb / 2 ** 20:.0f} GiB memory" if kb else ""
    except (OSError, ValueError):
        pass
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)
    return f"{model or platform.processor() or platform.machine()}, {cpus} logical CPUs{memory}"


@lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    """Versions of Python and of the packages a result depends on, and the machine."""
    from numerics import pins

    out = {"python": platform.python_version(), "platform": f"{sys.platform}-{platform.machine()}",
           "kernels": f"{pins.summary()} (numerics.pins)", "machine": machine()}
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


def _run(*args: str) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


@lru_cache(maxsize=1)
def prover_versions() -> dict[str, str]:
    """``{"Coq": ..., "mathcomp": ...}`` as installed here, read now: ``coqc --version``'s version and
    the installed mathcomp package's (dpkg's ``libcoq-mathcomp-ssreflect``, else opam's
    ``coq-mathcomp-ssreflect``); "absent" where the tool is not installed, "unknown" where its
    version cannot be read."""
    coq = _run("coqc", "--version") if shutil.which("coqc") else None
    word = next((w.rstrip(",") for w in (coq or "").split() if w[:1].isdigit()), "unknown")
    out = {"Coq": "absent" if coq is None else word}
    comp = ""
    if shutil.which("dpkg-query"):
        comp = _run("dpkg-query", "-W", "-f", "${Version}", "libcoq-mathcomp-ssreflect").split("-")[0]
    if not comp and shutil.which("opam"):
        comp = _run("opam", "show", "-f", "version", "coq-mathcomp-ssreflect")
    out["mathcomp"] = comp or ("absent" if coq is None else "unknown")
    return out
