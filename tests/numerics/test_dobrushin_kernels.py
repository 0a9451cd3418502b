"""The fast paths of the Dobrushin kernels: exact float decisions on tie-heavy input, the float32
level and the candidate-row exact path of factor_check, device-side validation, the Triton kernel
(through Triton's interpreter on the CPU)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from numerics.dobrushin import dobrushin, dobrushin_torch, factor_check, torch_path
from verification.testing import reference as ref


def _perm_pairs(sigma):
    """Theorem D1 on a permutation matrix by its condition: every pair has disjoint supports
    (d = 1); (i, j) is self-dominant iff sigma(i) != j and sigma(j) != i."""
    n = len(sigma)
    good = [(i, j) for i in range(n) for j in range(i + 1, n) if sigma[i] != j and sigma[j] != i]
    return bool(good), any(i == 0 for i, _ in good), any(i != 0 for i, _ in good)


@pytest.mark.parametrize("n", [2, 3, 256])
def test_tie_heavy_inputs_are_decided_by_the_float_pass(n):
    """Identity, uniform and permutation matrices: every pair ties, the floats are exact (dyadic
    grid / disjoint supports), so no exact path runs and the verdicts are the definition's."""
    rng = np.random.default_rng(n)
    sigma = rng.permutation(n)
    for A, want_delta, want in [(np.eye(n), 1.0, (True, True, n > 2)),
                                (np.full((n, n), 1.0 / n) if n != 3 else np.full((4, 4), 0.25), 0.0, (True, True, n != 2)),
                                (np.eye(n)[sigma], 1.0, _perm_pairs(sigma))]:
        fc = factor_check(A)
        assert not fc.exact and float(fc.delta) == want_delta
        assert (bool(fc.equality), bool(fc.through_first), bool(fc.through_other)) == want
        if A.shape[0] <= 4:
            assert ref.factor_pairs(A) == want


def test_uniform_non_dyadic_ties_use_row_classes():
    """1/7 is not dyadic: the exact path runs, but equal rows form one class (overlap exactly 1),
    so it does no per-pair integer work; verdict as the definition (every pair a maximiser)."""
    A = np.full((300, 300), 1 / 300)
    fc = factor_check(A)
    assert fc.exact and fc.equality and fc.through_first and fc.through_other
    small = np.full((7, 7), 1 / 7)
    assert (bool(factor_check(small).equality), True, True) == ref.factor_pairs(small)


def _hard_softmax(rng, n, temp, dtype):
    """Softmax rows at low temperature: near-one-hot rows with tiny (not zero) off-peak entries,
    the trained-attention pattern that ties many pairs near d = 1."""
    logits = rng.standard_normal((n, n)) / temp
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(dtype)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7), st.sampled_from([0.02, 0.05, 0.3, 1.0]), st.sampled_from([np.float32, np.float64]),
       st.integers(0, 2 ** 32 - 1))
def test_float32_level_and_refined_exact_path_equal_definition(n, temp, dtype, seed):
    rng = np.random.default_rng(seed)
    A = _hard_softmax(rng, n, temp, dtype)
    if rng.random() < 0.3:
        A[1] = A[0]                                  # a repeated row: every pair with it ties
    fc = factor_check(A)
    assert (bool(fc.equality), bool(fc.through_first), bool(fc.through_other)) == ref.factor_pairs(A)
    exact = ref.factor_slack(A)
    assert (float(fc.slack) == 0.0) == (exact == 0)
    if exact > 0:
        assert float(fc.slack) == pytest.approx(float(exact), rel=0.07)


def test_near_one_hot_head_is_settled_without_integer_overlaps(monkeypatch):
    """79 near-one-hot rows (entries down to 1e-40, none zero): thousands of pairs tie within the
    float64 bound at d ~ 1; the overlap-relative filter leaves one candidate, so no pair overlap is
    computed with integers."""
    from numerics.dobrushin import certify

    rng = np.random.default_rng(3)
    A = _hard_softmax(rng, 96, 0.01, np.float32)
    calls = []
    monkeypatch.setattr(certify.ExactRows, "overlap", lambda self, i, j: calls.append((i, j)) or 1 / 0)
    fc = factor_check(A)
    assert not calls
    batch = factor_check(np.stack([A, A.T.copy() / A.T.sum(-1, keepdims=True)]).astype(np.float32))
    assert bool(batch.equality[0]) == bool(fc.equality)


@pytest.mark.parametrize("bad,pattern", [
    (torch.tensor([[[0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5], [0.25, 0.5]]]), "row 1 sums to 0.75"),
    (torch.tensor([[0.5, float("nan")], [0.5, 0.5]]), "non-finite entry nan at row 0, column 1"),
    (torch.tensor([[0.5, 0.5], [0.5, 0.5], [2.0, -1.0]]), "negative entry -1.0 at row 2, column 1"),
    (torch.zeros((3, 0, 2)), "empty matrix"),
    (torch.zeros((0, 2, 2)), "empty batch"),
])
def test_device_validation_matches_the_cpu_path_word_for_word(bad, pattern):
    with pytest.raises(ValueError, match=pattern) as cpu:
        dobrushin(bad)
    with pytest.raises(ValueError, match=pattern) as dev:
        torch_path.validate_torch(bad, "P")
    assert str(cpu.value) == str(dev.value)


def test_device_validation_rows_near_the_tolerance_are_judged_by_the_cpu_sum(monkeypatch):
    """Rows whose float64 sum lies within rounding of the tolerance are re-checked on the host with
    the CPU kernel: accept/refuse and the reported sum agree with the CPU path. Row 3 of matrix 2 is
    scaled to sum 1 + 1e-9 + k ulp, right at float64's 1e-9 tolerance: the sweep over k must send
    the row to the host every time and must see both verdicts."""
    from numerics import kernels as K

    base = np.random.default_rng(0).dirichlet(np.ones(50), size=(4, 6))      # 4 matrices of 6 x 50
    verdicts = set()
    for k in (-4, -2, -1, 0, 1, 2, 4):
        P = base.copy()
        P[2, 3] *= 1 + 1e-9 + k * 2.0 ** -52
        T = torch.from_numpy(P)
        try:
            dobrushin(T)
            cpu = None
        except ValueError as e:
            cpu = str(e)
        host = []
        with monkeypatch.context() as m:
            m.setattr(K, "check_stochastic", lambda rows, tol, real=K.check_stochastic: host.append(rows.shape)
                      or real(rows, tol))
            try:
                torch_path.validate_torch(T, "P")
                dev = None
            except ValueError as e:
                dev = str(e)
        assert host == [(1, 1, 50)], (k, host)          # only the near-tolerance row went to the host
        assert cpu == dev, k
        verdicts.add(cpu is None)
    assert verdicts == {True, False}                    # the band holds rows on both sides


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
def test_dobrushin_torch_is_one_batched_call(dtype, monkeypatch):
    """Under the default budget the whole batch is one torch.cdist call (no loop over matrices)."""
    P = torch.from_numpy(np.random.default_rng(1).dirichlet(np.ones(9), size=(5, 4, 9))).to(dtype)
    calls = []
    real = torch.cdist
    monkeypatch.setattr(torch, "cdist", lambda *a, **k: calls.append(a[0].shape) or real(*a, **k))
    got = dobrushin_torch(P)
    assert len(calls) == 1 and got.shape == (5, 4)
    np.testing.assert_allclose(got.double().numpy(), dobrushin(P).double().numpy(), atol=1e-6)


TRITON_SCRIPT = textwrap.dedent("""
    import os, sys
    os.environ["TRITON_INTERPRET"] = "1"
    import numpy as np, torch
    from numerics.dobrushin import triton_kernel as TK, dobrushin
    rng = np.random.default_rng(7)
    worst = 0.0
    for B, n, m, blocks in [(3, 5, 7, (8, 8, 8)), (1, 11, 6, (4, 8, 4))]:        # ragged blocks in i, j, k
        for dt, tol in ((np.float64, 1e-14), (np.float32, 2e-6)):
            P = rng.dirichlet(np.full(m, 0.4), size=(B, n)).astype(dt)
            P[:, n // 2] = P[:, 0]
            got = TK.dobrushin_triton(torch.from_numpy(P), *blocks)
            assert got.dtype == torch.from_numpy(P).dtype and got.shape == (B,)
            err = np.abs(got.numpy() - dobrushin(P)).max()
            assert err <= tol, (B, n, m, dt, err)
    print("ok")
""")


def test_triton_kernel_matches_numpy_path_in_the_interpreter():
    """The fused Triton kernel, run by Triton's interpreter on CPU tensors (a subprocess, so that
    TRITON_INTERPRET=1 is set before Triton loads), equals the compiled CPU kernel, ragged blocks included."""
    pytest.importorskip("triton", reason="Triton is not installed (its interpreter runs the GPU kernel's test)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=root)
    res = subprocess.run([sys.executable, "-c", TRITON_SCRIPT], cwd=root, env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-2000:]


def _scan_by_definition(A):
    """pair_scan's fields of one square matrix A, by brute force over the pairs (eps = 0)."""
    from numerics import kernels as K

    n = len(A)
    st = np.full(K.NSTAT, -1e300)
    st[[K.ZERO_ANY, K.ZERO_FIRST, K.ZERO_OTHER]] = 0.0
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    d = {(i, j): 0.5 * np.abs(A[i] - A[j]).sum() for i, j in pairs}
    st[K.BEST] = max(d.values())
    st[K.BEST_I], st[K.BEST_J] = min(p for p in pairs if d[p] == st[K.BEST])      # row-major first
    st[K.SECOND] = max([d[p] for p in pairs if p != tuple(st[[K.BEST_I, K.BEST_J]])], default=-1e300)
    for i, j in pairs:
        x, y = A[i, i] - A[j, i], A[j, j] - A[i, j]
        st[K.PENALISED] = max(st[K.PENALISED], d[i, j] - max(-x, 0) - max(-y, 0))
        if x >= 0 and y >= 0:
            k = K.TOP_FIRST if i == 0 else K.TOP_OTHER
            st[k] = max(st[k], d[i, j])
        if np.minimum(A[i], A[j]).sum() == 0:
            st[K.ZERO_ANY] = 1.0
            if A[j, i] == 0 and A[i, j] == 0:
                st[K.ZERO_FIRST if i == 0 else K.ZERO_OTHER] = 1.0
    return st


@pytest.mark.parametrize("n", [2, 3, 9, 17])
@pytest.mark.parametrize("batch", [1, 64])          # per row block (merged) and per matrix
def test_pair_scan_fields_are_what_their_names_say(n, batch):
    """Each named field of pair_scan's statistics equals its definition, on dyadic matrices (every
    float exact, ties everywhere: tie-breaking and the merge of row blocks are checked too)."""
    from numerics import kernels as K

    rng = np.random.default_rng(n)
    counts = rng.multinomial(8, np.ones(n) / n, size=(batch, n)) * (rng.random((batch, n, n)) < 0.7)
    counts[..., 0] += 8 - counts.sum(-1)                      # each row: eighths summing to 1
    P = np.ascontiguousarray(counts / 8.0)
    got = K.pair_scan(P, True)
    assert got.shape == (batch, K.NSTAT)
    tops = [K.TOP_FIRST, K.TOP_OTHER]
    for b in range(batch):
        want = _scan_by_definition(P[b])
        rest = [k for k in range(K.NSTAT) if k not in tops]
        np.testing.assert_array_equal(got[b, rest], want[rest], err_msg=f"matrix {b}")
        for k in tops:        # exact at or above BEST - 4 eps (eps = 0 here), only below it otherwise
            if want[k] >= want[K.BEST]:
                assert got[b, k] == want[k], (b, k)
            else:
                assert got[b, k] < want[K.BEST], (b, k)


@pytest.mark.parametrize("n", [2, 3, 9, 17])
@pytest.mark.parametrize("batch", [1, 64])
def test_pair_scan_direct_half_is_delta_of_the_lazy_matrix(n, batch):
    """direct=True: the statistics are unchanged and HALF is delta((I + P)/2) computed from its own
    entries (against the brute-force l1 definition on dyadic matrices, where every float is exact)."""
    from numerics import kernels as K

    rng = np.random.default_rng(100 + n)
    counts = rng.multinomial(16, np.ones(n) / n, size=(batch, n))
    P = np.ascontiguousarray(counts / 16.0)
    got = K.pair_scan(P, True, direct=True)
    assert got.shape == (batch, K.NSTAT + 1)
    np.testing.assert_array_equal(got[:, :K.NSTAT], K.pair_scan(P, True))
    H = (np.eye(n) + P) / 2
    want = [max(0.5 * np.abs(h[i] - h[j]).sum() for i in range(n) for j in range(i + 1, n)) for h in H]
    np.testing.assert_array_equal(got[:, K.HALF], want)
    with pytest.raises(ValueError, match="square"):
        K.pair_scan(P, False, direct=True)


def test_pair_scan_is_safe_from_concurrent_threads():
    """pair_scan reuses its two-phase buffers per Python thread (numerics.kernels.scan._workspace):
    callers in several threads at once (Dask's threaded workers) get exactly the serial answers."""
    from concurrent.futures import ThreadPoolExecutor

    from numerics import kernels as K

    rng = np.random.default_rng(3)
    batches = [np.ascontiguousarray(rng.dirichlet(np.ones(n), size=(64, n))) for n in (5, 16, 16, 40, 64, 9, 16, 33)]
    want = [K.pair_scan(P, True, direct=True) for P in batches]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(5):
            got = list(pool.map(lambda P: K.pair_scan(P, True, direct=True), batches))
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
