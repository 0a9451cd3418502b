"""A fingerprint of the float computations that feed published numbers, to catch a machine or an
environment that changes them (issue: the same findings on every machine).

:func:`compute` runs, on fixed inputs, a small piece of each kind of float work the main job does and
hashes the bits of what comes out (SHA-256, first 16 hex digits each):

    san-sdpa, san-explicit   12 AdamW steps of a tiny byte-level decoder (numerics.san.train) along
                             each numerical path: torch's ATen kernels, MKL's GEMM; the weights' bytes
    rank-fit                 a softmax-kernel fit by scipy's Levenberg-Marquardt (numerics.rank.fits):
                             numpy's ufuncs and OpenBLAS; the fitted W's bytes
    float-test               the float D1 tests of every implementation and precision
                             (numerics.dobrushin.float_tests: numba-compiled sums) on 64 random
                             float32 softmax matrices of size 24, and their float64 deltas' bytes
    numpy-ufuncs             exp, log, tanh, sum and a matrix product of numpy on fixed float32 and
                             float64 arrays (the SIMD variants numpy dispatches at run time)

``python -m numerics.fingerprint`` prints the fingerprint as JSON (``--pins`` adds
:func:`numerics.pins.state`). The test (tests/numerics/test_fingerprint.py) computes it in
subprocesses whose environments ask for other instruction sets (``ATEN_CPU_CAPABILITY``,
``MKL_CBWR``, ``NUMBA_CPU_NAME``, ``NPY_DISABLE_CPU_FEATURES``, thread counts): every one must be
bit-identical to the committed value, because :mod:`numerics.pins` wins over the environment; and
with the pins off (``ATTNBOUNDS_NATIVE_KERNELS=1``) two of them must differ, which shows that the
test can see a kernel change.
"""
from __future__ import annotations

import hashlib
import json
import sys

COMPONENTS = ("san-sdpa", "san-explicit", "rank-fit", "float-test", "numpy-ufuncs")


def _h(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.hexdigest()[:16]


def _san(kernel: str) -> str:
    import torch

    from numerics.san import Data, SANConfig, TrainConfig, train

    cfg = SANConfig(block="standard", n_layer=2, n_head=2, d_model=16, ctx=16, qk_norm=True)
    tc = TrainConfig(steps=12, batch=8, lr=1e-2, warmup=2, seed=0, kernel=kernel, fractions=(1.0,))
    model = train(cfg, tc, Data(ctx=16, n_facts=8)).model
    state = model.state_dict()
    return _h(*(k.encode() + state[k].detach().to(torch.float32).contiguous().numpy().tobytes()
                for k in sorted(state)))


def _rank() -> str:
    import numpy as np

    from numerics.rank.fits import fit_softmax_kernel

    rng = np.random.default_rng(7)
    d, T, B = 4, 6, 8
    X = rng.standard_normal((B, T, d))
    W = rng.standard_normal((d, d)) / d
    W_V = rng.standard_normal((d, d))
    S = X @ W @ X.transpose(0, 2, 1) / 2.0
    E = np.exp(S - S.max(-1, keepdims=True))
    Y = (E / E.sum(-1, keepdims=True)) @ X @ W_V + 1e-3 * rng.standard_normal((B, T, d))
    fit = fit_softmax_kernel(X, Y, W_V, beta=1.0, W_init=np.zeros((d, d)), starts=2, seed=1, max_nfev=60)
    return _h(np.ascontiguousarray(fit["W_hat"]).tobytes())


def _float_test() -> str:
    import numpy as np

    from numerics.dobrushin.float_tests import all_verdicts, delta_l1

    rng = np.random.default_rng(11)
    S = rng.standard_normal((64, 24, 24)).astype(np.float32) * np.float32(3)
    E = np.exp(S - S.max(-1, keepdims=True))
    A = (E / E.sum(-1, keepdims=True)).astype(np.float32)
    parts = [A.tobytes(), delta_l1(A.astype(np.float64)).tobytes(), delta_l1(A).tobytes()]
    for dtype, by in sorted(all_verdicts(A).items()):
        for name, v in sorted(by.items()):
            parts.append(f"{dtype}:{name}:".encode() + ",".join(v.reshape(-1).tolist()).encode())
    return _h(*parts)


def _numpy() -> str:
    import numpy as np

    rng = np.random.default_rng(3)
    parts = []
    for dt in (np.float32, np.float64):
        x = (rng.standard_normal(4099) * 4).astype(dt)
        M = rng.standard_normal((67, 67)).astype(dt)
        parts += [np.exp(x).tobytes(), np.log(np.abs(x) + dt(1)).tobytes(), np.tanh(x).tobytes(),
                  np.asarray(x.sum()).tobytes(), (M @ M).tobytes()]
    return _h(*parts)


def compute() -> dict[str, str]:
    """The fingerprint: component name -> 16 hex digits of SHA-256 (see the module docstring)."""
    return {"san-sdpa": _san("sdpa"), "san-explicit": _san("explicit"), "rank-fit": _rank(),
            "float-test": _float_test(), "numpy-ufuncs": _numpy()}


def main(argv: list[str]) -> int:
    """Print the fingerprint as JSON, the process pinned first (:func:`numerics.pins.pin`, before
    torch, numpy's BLAS or numba load: this module imports them only inside :func:`compute`)."""
    from numerics import pins

    pins.pin()
    out: dict = {"fingerprint": compute()}
    if "--pins" in argv:
        out["pins"] = pins.state()
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
