"""The public entry ``import attnbounds``: it re-exports the vocabulary, Theorem and register, decide,
the Hypothesis strategies and the store readers; importing it (or numerics, or verification) loads
nothing heavy and changes nothing in the process, while the command line and ``pin_numerics()`` pin;
``decide`` on one instance (exact or floats) and on a batch; the strategies draw instances that
satisfy the hypotheses; and a researcher's own property test, as docs/api.md writes it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings

import attnbounds
from attnbounds import (A, Eq, I, Result, Results, decide, delta, exp, instances, logit_matrices, logits,
                        parameter, parameter_values, ptp, softmax, spread, stochastic, stochastic_matrices, tokens)
from numerics.pins import PINS
from theory.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[1]
alpha = parameter("alpha", 0, 1)
L, X, D = logits("L"), tokens("X"), stochastic("D")
LAZY = delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A)      # a lazy walk contracts
SOFTMAX = delta(softmax(L)) <= 1 - exp(-ptp(L))                                  # softmax rows overlap
OSCILLATION = spread(softmax(L) * X) <= delta(softmax(L)) * spread(X)             # the token states' spread
D1 = delta((I + A) / 2) <= (1 + delta(A)) / 2


def first(strategy, condition, tries=500):
    """The first example of ``strategy`` that satisfies ``condition`` (no shrinking: fast)."""
    return find(strategy, condition, settings=settings(max_examples=tries, database=None, phases=(Phase.generate,)))


# -- a researcher's own property tests: exactly what docs/api.md shows -----------------------------
@given(instances(LAZY))
def test_lazy_walk_bound_is_never_violated(inst):
    assert decide(LAZY, **inst).verdict != "violated"


@given(instances(SOFTMAX))
def test_softmax_bound_is_never_violated(inst):
    assert decide(SOFTMAX, **inst).verdict != "violated"


@settings(max_examples=30)
@given(instances(OSCILLATION))
def test_oscillation_bound_is_never_violated(inst):
    assert decide(OSCILLATION, **inst).verdict != "violated"


def test_the_property_test_of_docs_api_runs():
    """docs/api.md's property test of one's own, run as written (fewer examples: the two above run it in full)."""
    text = (ROOT / "docs" / "api.md").read_text()
    block = text[text.index("## `attnbounds`"):]
    block = block[block.index("```python\n") + len("```python\n"):]
    block = block[:block.index("```")]
    space: dict = {}
    exec(compile(block, "docs/api.md", "exec"), space)
    tests = [fn for name, fn in space.items() if name.startswith("test_")]
    assert len(tests) == 2
    for fn in tests:
        settings(max_examples=10)(fn)()


def test_the_strategies_find_a_counterexample_to_a_false_bound():
    """The same pattern can fail: half the softmax bound is violated, and the strategies find an
    instance that shows it, which decide confirms exactly."""
    false = delta(softmax(L)) <= (1 - exp(-ptp(L))) / 2
    inst = first(instances(false), lambda i: decide(false, **i).verdict == "violated")
    r = decide(false, **inst)
    assert r.verdict == "violated" and r.lhs is not None


# -- the public entry ----------------------------------------------------------------------------------
def test_the_entry_reexports_the_vocabulary_and_the_rest():
    import theory.expr as vocabulary
    from theory.registry import Theorem, register
    from verification import results

    for name in vocabulary.__all__:
        assert getattr(attnbounds, name) is getattr(vocabulary, name), name
    assert attnbounds.Theorem is Theorem and attnbounds.register is register
    assert attnbounds.campaigns is results.campaigns and attnbounds.campaign_frame is results.campaign_frame
    assert attnbounds.strategies.instances is instances
    assert set(vocabulary.__all__) | {"decide", "instances", "campaigns", "pin_numerics"} <= set(attnbounds.__all__)
    space: dict = {}
    exec("from attnbounds import *", space)
    assert space["decide"] is decide and space["softmax"] is softmax
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        attnbounds.nonsense


CLEAN = {k: v for k, v in os.environ.items()
         if k not in PINS and k not in ("ATTNBOUNDS_NATIVE_KERNELS", "OMP_WAIT_POLICY")}
CLEAN["ATEN_CPU_CAPABILITY"] = "avx2"          # what a user's shell asked for: importing must leave it


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=CLEAN, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


REPORT = ("import json, os, sys\n"
          "def report(**more):\n"
          "    env = {k: os.environ.get(k) for k in %r + ['OMP_WAIT_POLICY']}\n"
          "    heavy = [m for m in ('torch', 'numpy', 'numba', 'sympy', 'pandas', 'hypothesis') if m in sys.modules]\n"
          "    print(json.dumps(dict(env=env, heavy=heavy, **more)))\n" % sorted(PINS))


def test_importing_changes_nothing_in_the_process():
    """``import attnbounds`` (and numerics, verification) loads nothing heavy and leaves the pinned
    variables and torch's thread count as they were; using decide does not pin either."""
    baseline = _run(REPORT + "import torch\nreport(threads=torch.get_num_threads())")
    got = _run(REPORT + "import attnbounds, numerics, verification\nlight = dict(heavy=[m for m in "
               "('torch', 'numpy', 'numba', 'sympy', 'pandas', 'hypothesis') if m in sys.modules], "
               "env={k: os.environ.get(k) for k in %r})\n"
               "import verification.stress.checks, torch\n"
               "from attnbounds import A, I, delta, decide\n"
               "v = decide(delta((I + A) / 2) <= (1 + delta(A)) / 2, A=[[1, 0], [0, 1]]).verdict\n"
               "from verification.provenance import versions\n"
               "report(threads=torch.get_num_threads(), verdict=v, kernels=versions()['kernels'], light=light)"
               % (sorted(PINS) + ["OMP_WAIT_POLICY"]))
    assert got["light"]["heavy"] == [], f"import attnbounds loads {got['light']['heavy']}"
    assert got["light"]["env"] == got["env"] == baseline["env"] and baseline["env"]["ATEN_CPU_CAPABILITY"] == "avx2"
    assert got["threads"] == baseline["threads"], (got, baseline)
    assert got["verdict"] == "tight" and got["kernels"] == "unpinned (numerics.pins)"


def test_pin_numerics_pins_the_process():
    got = _run(REPORT + "import attnbounds\nsaid = attnbounds.pin_numerics()\nimport torch\n"
               "report(threads=torch.get_num_threads(), said=said)")
    assert got["said"] == "pinned" and got["threads"] == 1, got
    assert got["env"] == {**PINS, "OMP_WAIT_POLICY": "PASSIVE"}


def test_the_command_line_pins_and_importing_it_does_not():
    got = _run(REPORT + "import contextlib, io\nfrom verification.cli import main\n"
               "before = {k: os.environ.get(k) for k in ('ATEN_CPU_CAPABILITY', 'OMP_NUM_THREADS')}\n"
               "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(['theorems'])\n"
               "report(before=before, code=code)")
    assert got["before"] == {"ATEN_CPU_CAPABILITY": "avx2", "OMP_NUM_THREADS": None}, got
    assert got["code"] == 0 and got["env"] == {**PINS, "OMP_WAIT_POLICY": "PASSIVE"}, got


def test_a_joining_pinned_process_pins_the_workers(monkeypatch):
    from verification.executors import pin_workers

    class Client:
        ran: list = []

        def run(self, fn):
            self.ran.append(fn)

    from numerics import pins

    pin_workers(Client())
    assert Client.ran == [pins.pin]                  # the suite runs pinned (tests/conftest.py)
    monkeypatch.setenv("ATTNBOUNDS_NATIVE_KERNELS", "1")
    pin_workers(Client())
    assert Client.ran == [pins.pin]                  # a native process leaves the workers as they are


# -- decide ----------------------------------------------------------------------------------------------
def test_decide_one_exact_instance():
    r = decide(LAZY, A=[[1, 0], ["1/3", "2/3"]], alpha="1/2")
    assert isinstance(r, Result) and r.verdict == "tight" and r.exact and r.path == "exact"
    assert r.lhs == r.rhs == Fraction(1, 2) + Fraction(1, 2) * Fraction(2, 3)
    assert decide(LAZY, A=[[0, 1], ["1/3", "2/3"]], alpha="1/4").rhs == Fraction(1, 2)
    r = decide(SOFTMAX, L=[[0, "1/2"], [1, 1]])
    assert r.verdict == "holds" and r.exact and not isinstance(r.lhs, Fraction)   # an exact exponential quotient
    assert decide(SOFTMAX, L=[[3, 3], [3, 3]]).verdict == "tight"
    assert decide(Eq(delta(A), 1), A=[[1, 0], [0, 1]]).verdict == "tight"
    assert decide(Eq(delta(A), 1), A=[[1, 0], [1, 0]]).verdict == "violated"
    assert "holds: lhs 1/2 <= rhs 1" == str(decide(D1, A=[[0, 1, 0], [0, 0, 1], [1, 0, 0]]))


def test_decide_one_float_instance_gives_certified_sides():
    from flint import arb

    from attnbounds.decision import compiled_for
    from numerics.expr.certified import sides
    from numerics.expr.values import Ball

    Ls = np.random.default_rng(1).standard_normal((5, 5))
    r = decide(SOFTMAX, L=Ls)
    assert r.verdict == "holds" and r.path == "floats" and not r.exact and isinstance(r.lhs, Ball)
    exact_lhs, exact_rhs = sides(compiled_for(SOFTMAX), {"L": Ls})
    for ball, value in ((r.lhs, exact_lhs), (r.rhs, exact_rhs)):         # the balls contain the exact sides
        assert ball.arb(200).contains(value.arb(200) if not isinstance(value, Fraction) else arb(str(value)))
    tie = decide(D1, A=np.array([[0.5, 0.5], [0.25, 0.75]]))           # a tie: only exact arithmetic says tight
    assert tie.verdict == "tight" and tie.path == "exact" and tie.lhs == tie.rhs == Fraction(5, 8)
    rows = decide(D1, A=[[0.5, 0.5], [0.25, 0.75]])                    # rows of floats: the same floats
    assert (rows.verdict, rows.lhs) == ("tight", Fraction(5, 8))


def test_decide_a_batch_agrees_with_numerics_and_with_one_instance_at_a_time():
    from numerics.expr import compile_statement
    from numerics.expr import decide as batch_decide

    mats = np.random.default_rng(2).dirichlet(np.ones(3), size=(6, 3))
    mats[0] = np.eye(3)
    alphas = [0, "1/2", 1, 0.25, Fraction(1, 3), 0.75]
    R = decide(LAZY, A=mats, alpha=alphas)
    assert isinstance(R, Results) and len(R) == 6
    codes = batch_decide(compile_statement(LAZY), {"A": mats, "alpha": alphas}).codes
    assert R.verdicts == tuple(("holds", "tight", "violated", "not-applicable", "undecided")[c] for c in codes)
    assert R.verdicts == tuple(decide(LAZY, A=m, alpha=a).verdict for m, a in zip(mats, alphas))
    assert R.verdict == ("tight" if "tight" in R.verdicts else "holds") and sum(R.counts().values()) == 6
    exact = decide(LAZY, A=[[[1, 0], [0, 1]], [["1/2", "1/2"], [0, 1]]], alpha="1/2")     # exact batch, one alpha
    assert exact.verdicts == ("tight", "tight") and exact.exact.all()
    assert decide(LAZY, A=mats, alpha=0).verdicts == decide(LAZY, A=mats, alpha=[0] * 6).verdicts


def test_hypotheses_and_theorems():
    from theory.registry import Theorem

    causal = [[1, 0], ["1/2", "1/2"]]
    assert decide(D1, A=[[0, 1], [1, 0]], assume=("causal",)).verdict == "not-applicable"
    assert decide(D1, A=np.array([[0.0, 1.0], [1.0, 0.0]]), assume=("causal",)).verdict == "not-applicable"
    assert decide(D1, A=causal, assume=("causal",)).verdict == "tight"
    assert decide(SOFTMAX, L=[[0, 1], [1, 0]], assume=("causal",)).verdict == "holds"   # no matrix to constrain
    assert decide(SOFTMAX, L=np.eye(2), assume=("causal",)).verdict == "holds"
    assert decide(SOFTMAX, L=[[0, 5], [0, 0]], where=[ptp(L) <= 2]).verdict == "not-applicable"
    th = Theorem(id="mine.lazy", title="lazy walk", category="conjecture", statement=LAZY, assume=("causal",))
    assert decide(th, A=[[0, 1], [1, 0]], alpha=0).verdict == "not-applicable"
    assert decide(th, A=causal, alpha=0).verdict == "tight"
    assert decide("dobrushin.factor", A=causal).verdict == "tight"


@pytest.mark.parametrize("values, message", [
    ({"A": [[1, 0], [0, 1]]}, "decide: no alpha= given (the statement's symbols: A, alpha)"),
    ({"A": [[1, 0], [0, 1]], "alpha": 0, "beta": 1}, "decide: beta= is not a symbol of the statement (its symbols: A, alpha)"),
    ({"B": [[1, 0], [0, 1]], "alpha": 0}, "decide: no A= given (the statement's symbols: A, alpha); B= is not one of them"),
    ({"A": [[1, 0], [0, 1]], "alpha": 2}, "alpha: 2 is outside the parameter's interval [0, 1]"),
    ({"A": [[1, 0], [0, "1/2"]], "alpha": 0}, "A: row 1 sums to 1/2, not exactly 1"),
    ({"A": 3, "alpha": 0}, "decide: A= must be a matrix"),
])
def test_bad_values_are_one_line(values, message):
    with pytest.raises(InvalidInput) as err:
        decide(LAZY, **values)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_one_matrix_beside_a_batch_is_refused():
    with pytest.raises(InvalidInput, match="D is one matrix but A is a batch"):
        decide(delta(A * D) <= delta(A) * delta(D), A=np.eye(2)[None], D=np.eye(2))
    with pytest.raises(InvalidInput, match="no theorem 'no.such' is registered"):
        decide("no.such", A=np.eye(2))
    with pytest.raises(InvalidInput, match="assume= and where= take a sequence"):
        decide(D1, A=np.eye(2), assume="causal")


# -- the strategies --------------------------------------------------------------------------------
@pytest.mark.parametrize("assume", [(), ("causal",), ("positive",), ("doubly-stochastic",), ("symmetric",),
                                    ("positive", "doubly-stochastic"), ("positive", "symmetric")])
def test_stochastic_matrices_satisfy_their_hypotheses(assume):
    from numerics.expr.decide import assumed

    @settings(max_examples=40)
    @given(stochastic_matrices(assume=assume))
    def check(M):
        assert M.ndim == 2 and M.shape[0] == M.shape[1] and (M >= 0).all()
        assert np.allclose(M.sum(axis=1), 1)
        assert assumed({"A": M[None]}, assume).all()
    check()


def test_logits_parameters_and_refusals():
    grid = first(logit_matrices(3, grid=True), lambda M: any(Fraction(v).denominator == 3 for r in M for v in r))
    assert all(isinstance(v, Fraction) for r in grid for v in r)
    sym = first(logit_matrices(3, symmetric=True), lambda M: np.asarray(M, dtype=float).std() > 0)
    assert (np.asarray(sym, dtype=object) == np.asarray(sym, dtype=object).T).all()
    assert first(parameter_values(alpha), lambda a: a == 1) == 1
    assert first(parameter_values("1/3", "1/2"), lambda a: a == Fraction(1, 3)) == Fraction(1, 3)
    inside = first(parameter_values(0, 1), lambda a: 0 < a < 1)
    assert 0 < inside < 1
    with pytest.raises(InvalidInput, match="exclude each other"):
        stochastic_matrices(assume=("causal", "positive"))
    with pytest.raises(InvalidInput, match="empty"):
        parameter_values(1, 0)
    inst = first(instances(OSCILLATION, n=3, d=2), lambda i: True)
    assert sorted(inst) == ["L", "X"] and np.asarray(inst["X"]).shape == (3, 2)
