"""The numerical pins: what every published float depends on, set once, before torch, numba or a
BLAS loads, so that the same seed gives the same bits on any x86-64 CPU.

Float results depend on summation order, and compiled or vectorised kernels choose it by the
instruction set of the machine they run on: ATen dispatches its vectorised CPU kernels by AVX2 /
AVX-512, MKL and OpenBLAS pick their kernels by CPU, numba compiles for the host, and reductions
split by thread count. :data:`PINS` fixes each of these; :func:`apply` writes them into the
environment, *over* what the environment asked for (the pin wins: a published number must not
change with a variable left in a shell). Pinning is explicit: importing a package of this project
(``numerics``, ``verification``, ``attnbounds``) changes nothing in the process; :func:`pin` (the
pins and the thread policy of :mod:`numerics.device`) is called by the command line
(:func:`verification.cli.main`, so the main job ``attnbounds verify`` too), by the test suite
(conftest.py, tests/conftest.py) and by ``python -m numerics.fingerprint``, each before anything loads torch,
numpy or numba; a library user who wants the published bits calls ``attnbounds.pin_numerics()``
first. A process started by a pinned one (spawned workers, Dask's local cluster) inherits them:

    ATEN_CPU_CAPABILITY=default      ATen's kernels without AVX2 / AVX-512 dispatch
    MKL_CBWR=COMPATIBLE              MKL's conditional numerical reproducibility, SSE2 code paths
                                     (the one branch MKL makes reproducible on non-Intel CPUs too)
    ONEDNN_MAX_CPU_ISA=SSE41         oneDNN (torch's mkldnn kernels) without AVX dispatch
    MKL_NUM_THREADS, OMP_NUM_THREADS,
    OPENBLAS_NUM_THREADS=1           one BLAS / intra-op thread: reductions split one way
    OPENBLAS_CORETYPE=Nehalem        numpy's OpenBLAS kernels for a baseline x86-64 core (SSE4.2)
    NPY_DISABLE_CPU_FEATURES=...     numpy's ufuncs (exp, log, sums) at their x86-64-v2 baseline, not
                                     the AVX2 / AVX-512 variants numpy dispatches to at run time
    NUMBA_CPU_NAME=generic,
    NUMBA_CPU_FEATURES=""            numba compiles for a generic x86-64 CPU, not the host

The float-test kernels are compiled without fast-math as well (:mod:`numerics.dobrushin.float_tests`:
a sum is evaluated in the order it is written). Every torch computation that feeds a result runs on
one intra-op thread (:func:`numerics.device.single_thread`: SAN and modalities training, the forward
passes of the pretrained models and of the SAN models), because numba's OpenMP layer, once started,
sets the process's OpenMP thread count to the machine's core count. The ONNX vision model (DINOv2-S) is read by onnx's reference evaluator (numpy, so pinned here), not
by onnxruntime, whose MLAS kernels are picked by CPU with no setting to cap them
(:mod:`numerics.sources.onnx_attention`).
Measured cost on this project's 2-core machine: SAN training about 2x slower than the host's AVX-512
kernels (8.3 s against 4.2 s for 300 steps of the quick reference; the avx2 cap alone costs nothing,
MKL's COMPATIBLE branch is the cost), the main job's ``make run`` within its 10 minutes.

``ATTNBOUNDS_NATIVE_KERNELS=1`` turns the pins off (the host's fastest kernels, for exploration):
the provenance then says ``native``, and the results are not the published ones. A process that
never pinned (a library user's script) computes with the host's kernels too, and says ``unpinned``.

:func:`summary` is what the provenance records (:func:`verification.provenance.versions`) and
:func:`state` what the fingerprint prints: the pins in force (read from the environment, so a
process that inherited them counts as pinned) and, where torch is loaded, the capability ATen
actually dispatches to.

>>> sorted(PINS)[:2]
['ATEN_CPU_CAPABILITY', 'MKL_CBWR']
"""
from __future__ import annotations

import os
import sys

NATIVE_VARIABLE = "ATTNBOUNDS_NATIVE_KERNELS"
PINS: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "MKL_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OPENBLAS_CORETYPE": "Nehalem",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    "NUMBA_CPU_NAME": "generic",
    "NUMBA_CPU_FEATURES": "",
}
# what reads each pin: a pin applied after its reader loaded may not take effect
READERS = {"ATEN_CPU_CAPABILITY": "torch", "MKL_CBWR": "torch", "ONEDNN_MAX_CPU_ISA": "torch", "MKL_NUM_THREADS": "torch",
           "OMP_NUM_THREADS": "torch", "OPENBLAS_NUM_THREADS": "numpy", "OPENBLAS_CORETYPE": "numpy",
           "NPY_DISABLE_CPU_FEATURES": "numpy", "NUMBA_CPU_NAME": "numba", "NUMBA_CPU_FEATURES": "numba"}
_late: list[str] = []      # pins whose reader was already loaded when they were applied


def native() -> bool:
    """Whether the user turned the pins off (``ATTNBOUNDS_NATIVE_KERNELS`` set to 1, true or yes)."""
    return os.environ.get(NATIVE_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def apply() -> None:
    """Write :data:`PINS` into the environment over any value there (unless :func:`native`), and
    note each pin whose reader (torch, numpy, numba) was loaded before: too late to be sure."""
    if native():
        return
    for name, value in PINS.items():
        if READERS[name] in sys.modules and os.environ.get(name) != value and name not in _late:
            _late.append(name)
        os.environ[name] = value


def pin() -> None:
    """Pin this process: :func:`apply` and the thread policy (:func:`numerics.device.apply_thread_policy`).
    Call it before anything loads torch, numpy or numba; a pin applied later is named by :func:`summary`."""
    from numerics.device import apply_thread_policy

    apply()
    apply_thread_policy()


def pinned() -> bool:
    """Whether every pin is in force in this process's environment (applied here, or inherited from
    the process that started this one), and the pins are not turned off."""
    return not native() and all(os.environ.get(k) == v for k, v in PINS.items())


def summary() -> str:
    """``pinned``, ``native`` or ``unpinned``: the word every stored record's versions carry; a pin
    applied after its library loaded (:func:`pin` called after numpy was imported) is named.

    >>> summary().split(",")[0] in ("pinned", "native", "unpinned")
    True
    """
    if native():
        return "native"
    if not pinned():
        return "unpinned"
    return "pinned" + (", applied late: " + " ".join(_late) if _late else "")


def state() -> str:
    """One line for the fingerprint: ``pinned`` with the settings, ``native`` or ``unpinned``; with torch loaded,
    the capability ATen dispatches to and its intra-op threads; a pin applied too late is named."""
    if native():
        head = f"native ({NATIVE_VARIABLE}=1: the host's kernels, not pinned)"
    elif not pinned():
        head = "unpinned (the host's kernels: nothing in this process called numerics.pins.pin)"
    else:
        head = "pinned " + " ".join(f"{k}={v!r}" if v == "" else f"{k}={v}" for k, v in PINS.items())
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "backends") and hasattr(torch.backends, "cpu"):
        head += f"; torch dispatches {torch.backends.cpu.get_cpu_capability()}"
    if _late:
        head += "; applied after its library loaded: " + ", ".join(_late)
    return head
