"""Shared fixtures: fresh mpmath precision per test, a temporary results store."""
import numerics  # noqa: F401  (applies the thread policy before torch loads: numerics.device)
import mpmath
import pytest


@pytest.fixture(autouse=True)
def _reset_mpmath_precision():
    mp_prec, iv_prec = mpmath.mp.prec, mpmath.iv.prec
    yield
    mpmath.mp.prec, mpmath.iv.prec = mp_prec, iv_prec


@pytest.fixture
def store(tmp_path):
    from verification.store import ResultStore

    s = ResultStore(tmp_path / "results.db")
    yield s
    s.close()


@pytest.fixture
def small_stress_section(monkeypatch):
    """The stress paper part reads exactly the main job's plans: make them small for a test.
    Returns a function of the rollout layer counts giving the plans by theorem."""
    def make(layers=(2,)):
        from verification.stress.checks import section
        from verification.stress.checks.plan import StressPlan

        plans = {"dobrushin.factor": StressPlan("dobrushin.factor", ("dirichlet",), (3,), instances=10_000),
                 "dobrushin.rollout": StressPlan("dobrushin.rollout", ("dirichlet",), (3,), instances=10,
                                                 layers=layers)}
        monkeypatch.setattr(section, "section_plan", lambda theorem, seed, full: plans[theorem])
        monkeypatch.setattr(section, "search_chunks", lambda full: {"n3/b40"})
        monkeypatch.setitem(section.BUDGET, False, 40)
        return plans
    return make


# Hypothesis: no per-example deadline (first calls JIT-compile numba kernels); a CI-sized budget;
# derandomized, so that `make test` draws the same examples on every machine and every run (an
# outcome that flips between two runs is not a result); the "thorough" profile explores at random.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("default", deadline=None, max_examples=60, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", deadline=None, max_examples=1000,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("default")
