"""The pins win over the environment: the fingerprint of the float work behind published numbers
(numerics.fingerprint) is bit-identical whatever instruction sets, BLAS branch or thread count the
environment asks for, equal to the committed value, and different when the pins are off and the
environment asks for other kernels (so this test can fail)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = json.loads((Path(__file__).parent / "data" / "fingerprint.json").read_text())

# environments that ask for other kernels than the pins: each must be overruled
ASKS = {
    "as-is": {},
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO", "NUMBA_CPU_NAME": "host",
               "NPY_DISABLE_CPU_FEATURES": "", "OPENBLAS_CORETYPE": "SkylakeX", "OMP_NUM_THREADS": "2",
               "ONEDNN_MAX_CPU_ISA": "ALL"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "NUMBA_CPU_NAME": "generic",
             "NPY_DISABLE_CPU_FEATURES": "X86_V4", "OPENBLAS_CORETYPE": "Haswell", "MKL_NUM_THREADS": "2"},
}


def fingerprint(env_extra: dict, native: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ATTNBOUNDS_NATIVE_KERNELS"}
    env.update(env_extra)
    if native:
        env["ATTNBOUNDS_NATIVE_KERNELS"] = "1"
    out = subprocess.run([sys.executable, "-m", "numerics.fingerprint", "--pins"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("ask", sorted(ASKS))
def test_pinned_fingerprint_is_the_committed_one(ask):
    got = fingerprint(ASKS[ask])
    assert got["pins"].startswith("pinned"), got["pins"]
    assert "DEFAULT" in got["pins"], f"torch dispatches another capability: {got['pins']}"
    assert got["fingerprint"] == COMMITTED["fingerprint"], (
        f"environment {ask!r}: the pinned fingerprint differs from the committed one in "
        f"{sorted(k for k in got['fingerprint'] if got['fingerprint'][k] != COMMITTED['fingerprint'].get(k))} "
        f"(recorded with {COMMITTED['recorded_with']}); pins: {got['pins']}")


def test_native_kernels_change_the_fingerprint():
    """With the pins off, torch's AVX2 and DEFAULT kernels give other SAN weights: the fingerprint
    sees a kernel change (needs an x86-64 CPU with AVX2, as every CI machine here has)."""
    default = fingerprint({"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}, native=True)
    avx2 = fingerprint({"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"}, native=True)
    assert default["pins"].startswith("native") and "AVX2" in avx2["pins"], (default["pins"], avx2["pins"])
    differ = [k for k in default["fingerprint"] if default["fingerprint"][k] != avx2["fingerprint"][k]]
    assert {"san-sdpa", "san-explicit"} & set(differ), (default, avx2)


def test_importing_pins_nothing_and_pinning_first_or_late_is_said():
    """Importing a verification module (which loads numpy through the theory registry) pins nothing:
    the versions every record carries say unpinned. :func:`numerics.pins.pin` before numpy loads
    pins; after theory's registry loaded numpy, in a script of one's own, the pins numpy reads were
    applied too late, and the versions say so."""
    from numerics.pins import PINS

    code = "import sys, {first}\n{pin}from verification.provenance import versions\nprint(versions()['kernels'])"
    pin = "from numerics import pins\npins.pin()\n"
    env = {k: v for k, v in os.environ.items() if k != "ATTNBOUNDS_NATIVE_KERNELS" and k not in PINS}
    said = {}
    for first, then in (("verification.stress.checks", ""), ("numerics", pin), ("theory.registry", pin)):
        out = subprocess.run([sys.executable, "-c", code.format(first=first, pin=then)], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        said[first] = out.stdout.strip().splitlines()[-1]
    assert said["verification.stress.checks"] == "unpinned (numerics.pins)"
    assert said["numerics"] == "pinned (numerics.pins)"
    assert said["theory.registry"].startswith("pinned, applied late:") and "NPY_DISABLE_CPU_FEATURES" in said["theory.registry"]
