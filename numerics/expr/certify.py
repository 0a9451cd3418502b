"""Equalities certified in exact integer arithmetic on a float-certified branch, batched.

A statement built from sums and rational multiples of deltas of affine matrices (delta((I + A)/2),
delta((A + B)/2), Max, Min, products by constants) is, near an instance, an affine function of the
exact input entries once three discrete choices are fixed: which pair (p, q) attains each delta,
the sign of each M_pk - M_qk, and which argument attains each Max/Min. Where the float values
settle every choice beyond their rigorous error bounds (:mod:`numerics.expr.floats`): a unique
float maximiser more than 2 eps above the runner-up, every |difference| above twice its entries'
error (or both entries structurally 0), a Max/Min argument apart from the others (or the tied
ones with identical forms), rhs - lhs at the exact point is the affine form

    F(x) = (c_0 + sum c_lik x_lik) / D    (integers c, held as int64 with a static overflow guard)

and F is identically 0 on the face of the inputs (every row of every input a probability vector
on its own support, which is exact: float zeros are exact zeros) iff on each row the coefficients
over the support are one number lambda_li and c_0 + sum lambda_li = 0. Then lhs = rhs exactly: a
tight instance, certified by exact integer arithmetic on the coefficients. A delta whose argument
has two rows with disjoint supports (a structural fact: boolean products of the inputs' zero
patterns) is exactly 1, a constant form, products included.

Everything else (no form: a product of two non-constant deltas, a power, a division, a choice the
floats do not settle; or F not identically 0) is left to the rational evaluator
(:mod:`numerics.expr.exact`). This path only ever says "tight"; it never decides holds or violated.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import numpy as np

from numerics import kernels as K
from numerics.expr.floats import SAFE, Inputs, Trace
from numerics.expr.program import Compiled, Node
from numerics.stochastic import UNIT_ROUNDOFF as U

LIMIT = 2 ** 62          # largest |numerator| a form may reach (int64 with room for the final sums)


@dataclass
class Form:
    """Per instance of a sub-batch: value = (const + sum_l sum_e <c_e, row r_e of X_l>) / den where
    ``ok``. ``rows[l]`` lists the entries (r_e (b,) row indices, c_e (b, n) int64 coefficients) of
    leaf l: a delta touches two rows, so a form stays a few rows wide, never (b, n, n)."""

    den: int
    const: np.ndarray        # (b,) int64
    rows: dict               # leaf name -> [(r (b,) int64, c (b, n) int64), ...]
    ok: np.ndarray           # (b,) bool
    bound: int               # static bound on every |numerator| (entries summed over equal rows included)

    def constant(self) -> np.ndarray:
        out = np.ones(len(self.ok), dtype=bool)
        for entries in self.rows.values():
            for _, c in entries:
                out &= ~c.any(axis=1)
        return out

    def width(self) -> int:
        return max((len(e) for e in self.rows.values()), default=0)


def none(b: int) -> Form:
    return Form(1, np.zeros(b, dtype=np.int64), {}, np.zeros(b, dtype=bool), 0)


def constant(c: Fraction, b: int) -> Form:
    if abs(c.numerator) >= LIMIT:
        return none(b)
    return Form(c.denominator, np.full(b, c.numerator, dtype=np.int64), {}, np.ones(b, dtype=bool), abs(c.numerator))


def combine(c0: Fraction, terms: list[tuple[Fraction, Form]], b: int) -> Form:
    """c0 + sum_i c_i f_i over the least common denominator."""
    den = lcm(c0.denominator, *(c.denominator * f.den for c, f in terms))
    k0 = c0.numerator * (den // c0.denominator)
    mult = [c.numerator * (den // (c.denominator * f.den)) for c, f in terms]
    bound = abs(k0) + sum(abs(m) * f.bound for m, (_, f) in zip(mult, terms))
    if bound >= LIMIT or max(map(abs, mult), default=0) >= LIMIT:
        return none(b)
    const, rows, ok = np.full(b, k0, dtype=np.int64), {}, np.ones(b, dtype=bool)
    for m, (_, f) in zip(mult, terms):
        const += m * f.const
        for name, entries in f.rows.items():
            rows.setdefault(name, []).extend((r, m * c) for r, c in entries)
        ok &= f.ok
    return Form(den, const, rows, ok, bound)


def product(f: Form, g: Form, b: int) -> Form:
    """f g where one of them is constant at the instance (else no form there): f_0 g + g_0 f - f_0 g_0
    has f_0 g's rows where f is constant and g_0 f's where g is."""
    bound = f.bound * g.bound
    if bound >= LIMIT or f.den * g.den >= LIMIT:
        return none(b)
    rows: dict = {}
    for name, entries in g.rows.items():
        rows.setdefault(name, []).extend((r, f.const[:, None] * c) for r, c in entries)
    for name, entries in f.rows.items():
        rows.setdefault(name, []).extend((r, g.const[:, None] * c) for r, c in entries)
    return Form(f.den * g.den, f.const * g.const, rows, f.ok & g.ok & (f.constant() | g.constant()), bound)


def dense(f: Form, n: int) -> dict:
    """{leaf: (b, n, n) int64} of a form (its rows summed)."""
    b, ar = len(f.ok), np.arange(len(f.ok))
    out = {}
    for name, entries in f.rows.items():
        d = np.zeros((b, n, n), dtype=np.int64)
        for r, c in entries:
            d[ar, r] += c
        out[name] = d
    return out


def extreme(op: str, forms: list[Form], vals: list[np.ndarray], errs: list[np.ndarray], b: int, n: int) -> Form:
    """Max or Min: the argument the floats single out, or tied arguments with identical forms."""
    den = lcm(*(f.den for f in forms))
    mult = [den // f.den for f in forms]
    bound = max(m * f.bound for m, f in zip(mult, forms))
    if bound >= LIMIT or max(mult) >= LIMIT:
        return none(b)
    v, e = np.array(vals), np.array(errs) * SAFE                           # (k, b)
    with np.errstate(invalid="ignore"):
        if op == "max":
            pick, cand = np.argmax(v, axis=0), v + e >= np.max(v - e, axis=0)
        else:
            pick, cand = np.argmin(v, axis=0), v - e <= np.min(v + e, axis=0)
    finite = np.isfinite(v).all(axis=0) & np.isfinite(e).all(axis=0)
    denses = [dense(f, n) for f in forms]
    names = sorted(set().union(*denses))
    zero = np.zeros((b, n, n), dtype=np.int64)
    const = np.array([m * f.const for m, f in zip(mult, forms)])            # (k, b)
    coef = {nm: np.array([m * d.get(nm, zero) for m, d in zip(mult, denses)]) for nm in names}   # (k, b, n, n)
    ar = np.arange(b)
    ok = finite & np.array([f.ok for f in forms])[pick, ar]
    for k, f in enumerate(forms):
        same = f.ok & (const[k] == const[pick, ar])
        for nm in names:
            same &= (coef[nm][k] == coef[nm][pick, ar]).reshape(b, -1).all(axis=1)
        ok &= ~(cand[k] & (pick != k)) | same
    rows = {nm: [(np.full(b, i), c[pick, ar][:, i, :]) for i in range(n)] for nm, c in coef.items()}
    return Form(den, const[pick, ar], rows, ok, bound)


def support(node: int, nodes: tuple, data: dict, memo: dict) -> np.ndarray:
    """(b, n, n) bool: where the exact value of matrix ``node`` is nonzero (its entries are
    nonnegative combinations, so this is exact: sums are unions, products boolean products)."""
    if node in memo:
        return memo[node]
    nd = nodes[node]
    if nd.op == "leaf":
        out = data[nd.name] != 0
    elif nd.op == "lin":
        out = None
        for a in nd.args:
            s = support(a, nodes, data, memo)
            out = s.copy() if out is None else out | s
        n = next(iter(data.values())).shape[-1]
        if out is None:
            out = np.zeros((len(next(iter(data.values()))), n, n), dtype=bool)
        if nd.const:
            out = out | np.eye(n, dtype=bool)
    else:
        factors = list(nd.args) if nd.op == "mmul" else [nd.args[0]] * nd.power
        out = support(factors[0], nodes, data, memo)
        for a in factors[1:]:
            out = np.matmul(out.astype(np.float32), support(a, nodes, data, memo).astype(np.float32)) > 0
    memo[node] = out
    return out


def disjoint_rows(S: np.ndarray) -> np.ndarray:
    """(b,) bool: some two rows of S (b, n, n) have disjoint supports."""
    f = S.astype(np.float32)
    overlap = np.matmul(f, f.transpose(0, 2, 1))
    i, j = np.triu_indices(S.shape[1], 1)
    return (overlap[:, i, j] == 0).any(axis=1)


def delta_form(node: Node, M: np.ndarray, e_m: np.ndarray, eps: np.ndarray, row: callable, supp: callable) -> Form:
    """The form of delta(M) on the sub-batch: 1 where two rows of M have disjoint supports; else, for
    an affine M = c_I I + sum_l c_l X_l, 1/2 sum_k s_k (M_pk - M_qk) at the certified maximiser
    (p, q) with certified signs s_k. ``row(name, r)``: rows r (b,) of input ``name``, (b, n);
    ``supp(sel)``: M's exact support on the sub-batch's instances ``sel``."""
    b, n = M.shape[0], M.shape[1]
    if n == 1:
        return constant(Fraction(0), b)
    st = K.pair_scan(np.ascontiguousarray(M), False)
    best, second = st[:, K.BEST], st[:, K.SECOND]
    near = np.flatnonzero(best >= 1 - 2 * eps * SAFE)
    one = np.zeros(b, dtype=bool)
    if len(near):
        one[near] = disjoint_rows(supp(near))
    if node.affine is None:
        return Form(1, one.astype(np.int64), {}, one, 1)
    eye, terms = node.affine
    D = lcm(eye.denominator, *(c.denominator for _, c in terms))
    k_eye, ks = int(eye * D), [(name, int(c * D)) for name, c in terms]
    ar = np.arange(b)
    p, q = st[:, K.BEST_I].astype(np.int64), st[:, K.BEST_J].astype(np.int64)
    diff = M[ar, p, :] - M[ar, q, :]                                          # (b, n)
    sure = (np.abs(diff) > (2 * e_m[:, None] * SAFE + 2 * U * np.abs(diff))) | (e_m[:, None] == 0)
    cols = np.arange(n)
    on_p, on_q = (k_eye != 0) & (cols[None, :] == p[:, None]), (k_eye != 0) & (cols[None, :] == q[:, None])
    for name, _ in ks:
        on_p, on_q = on_p | (row(name, p) != 0), on_q | (row(name, q) != 0)
    zero = ~on_p & ~on_q                                                      # both entries exactly 0
    twins = np.ones(b, dtype=bool)            # rows p and q of every input equal as floats: equal exactly,
    for name, _ in ks:                        # so M_pk - M_qk = c_I (delta_pk - delta_qk) exactly
        twins &= (row(name, p) == row(name, q)).all(axis=1)
    zero |= twins[:, None] & (cols[None, :] != p[:, None]) & (cols[None, :] != q[:, None])
    sign = np.where(zero, 0, np.sign(diff)).astype(np.int64)
    ok = one | (((best - second) > 2 * eps * SAFE) & (sure | zero).all(axis=1))
    sign[one] = 0
    const = np.where(one, 2 * D, k_eye * (sign[ar, p] - sign[ar, q]))
    rows = {name: [(p, k * sign), (q, -k * sign)] for name, k in ks}
    bound = max([2 * D, 2 * abs(k_eye)] + [abs(k) for _, k in ks])
    return Form(2 * D, const.astype(np.int64), rows, ok, bound)


def certify(compiled: Compiled, inp: Inputs, tr: Trace, lo: int, idx: np.ndarray) -> np.ndarray:
    """(len(idx),) bool: instances ``lo + idx`` of ``inp`` (``tr`` their chunk's trace, starting at
    ``lo``) where lhs = rhs is certified as above; False means "not certified", never "not tight"."""
    b, n = len(idx), inp.n
    nodes, at = compiled.nodes, lo + idx

    def row(name: str, r: np.ndarray) -> np.ndarray:
        return inp.data[name][at, r]

    forms: list = [None] * len(nodes)
    for k, node in enumerate(nodes):
        if node.matrix:
            continue
        if node.op == "const":
            forms[k] = constant(node.const, b)
        elif node.op == "delta":
            a, memo = node.args[0], {}
            def supp(sel: np.ndarray, a: int = a, memo: dict = memo) -> np.ndarray:
                return support(a, nodes, {nm: X[at[sel]] for nm, X in inp.data.items()}, memo)
            forms[k] = delta_form(node, tr.value[a][idx], tr.err[a][idx], tr.err[k][idx], row, supp)
        elif node.op == "lin":
            forms[k] = combine(node.const, [(c, forms[a]) for a, c in zip(node.args, node.coefs)], b)
        elif node.op == "mul" or (node.op == "pow" and node.power > 0):
            args = node.args if node.op == "mul" else node.args * node.power
            f = forms[args[0]]
            for a in args[1:]:
                f = product(f, forms[a], b)
            forms[k] = f
        elif node.op in ("max", "min"):
            forms[k] = extreme(node.op, [forms[a] for a in node.args], [tr.value[a][idx] for a in node.args],
                               [tr.err[a][idx] for a in node.args], b, n)
        else:
            forms[k] = none(b)
    F = combine(Fraction(0), [(Fraction(1), forms[compiled.rhs]), (Fraction(-1), forms[compiled.lhs])], b)
    return F.ok & vanishes(F, row)


def vanishes(F: Form, row: callable) -> np.ndarray:
    """(b,) bool: F is identically 0 on the inputs' face: on every touched row of every input the
    coefficients over the row's support are one number lambda, and const + sum lambda = 0 (rows
    no entry touches have lambda = 0). Entries on the same row are summed first."""
    b = len(F.ok)
    if F.bound * (sum(len(e) for e in F.rows.values()) + 1) >= 2 ** 63:
        return np.zeros(b, dtype=bool)
    total, flat = F.const.copy(), np.ones(b, dtype=bool)
    big = np.iinfo(np.int64)
    for name, entries in F.rows.items():
        r = np.stack([e[0] for e in entries], axis=1)                             # (b, R)
        c = np.stack([e[1] for e in entries], axis=1)                             # (b, R, n)
        same = r[:, :, None] == r[:, None, :]                                     # (b, R, R)
        summed = np.einsum("bij,bjn->bin", same.astype(np.int64), c)             # row totals, per slot
        first = ~np.tril(same, -1).any(axis=2)                                    # slot is its row's first
        on = np.stack([row(name, r[:, e]) != 0 for e in range(r.shape[1])], axis=1)
        hi = np.where(on, summed, big.min).max(axis=-1)
        low = np.where(on, summed, big.max).min(axis=-1)                          # (b, R)
        flat &= (hi == low).all(axis=1)
        total += np.where(first & flat[:, None], hi, 0).sum(axis=1)
    return flat & (total == 0)
