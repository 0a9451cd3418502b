"""verification.stats: the paired statistics against scipy's own tests and known values, and
each shown to catch a planted bug (z instead of t, Holm off, TOST replaced by one one-sided test)."""
import math

import numpy as np
import pytest
from scipy import stats

from verification.stats import holm, mde, paired_t, tost, tost_mde, wilson


def test_paired_t_uses_t_with_pairs_minus_one_df():
    d = [0.3, 0.1]
    r = paired_t(d)
    assert r["df"] == 1
    assert r["q"] == pytest.approx(12.7062, abs=1e-4)           # t_{0.975, 1}, not z = 1.96
    lo, hi = r["interval"]
    ref = stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert (lo, hi) == pytest.approx((ref.low, ref.high))
    z_half = 1.959963984540054 * np.std(d, ddof=1) / math.sqrt(2)  # the planted bug: a z interval
    assert hi - r["mean"] > 6 * z_half
    assert r["p_two"] == pytest.approx(stats.ttest_1samp(d, 0).pvalue)
    assert paired_t([0.5])["interval"] == (-math.inf, math.inf) and paired_t([0.5])["p_two"] == 1.0


def test_holm_against_hand_worked_and_against_no_correction():
    p = [0.01, 0.04, 0.03, 0.005]
    adj = holm(p)
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])      # 4*0.005, 3*0.01, max(2*0.03, .03), ...
    assert sum(a < 0.05 for a in adj) == 2 < sum(v < 0.05 for v in p) == 4    # "Holm off" would pass all four
    assert all(a >= v for a, v in zip(adj, p))
    assert holm([]) == [] and holm([0.2]) == [0.2]


def test_tost_is_two_sided_equivalence_not_one_sided():
    rng = np.random.default_rng(0)
    far_below = list(rng.normal(-0.5, 0.01, 6))             # clearly outside the margin, below
    one_sided = stats.ttest_1samp(far_below, 0.02, alternative="less").pvalue
    assert one_sided < 1e-6                                   # a one-sided test would "show" equivalence
    r = tost(far_below, margin=0.02)
    assert r["p"] > 0.99 and r["p_outside"] < 1e-6           # TOST does not, and the opposite holds
    near = list(rng.normal(0.0, 0.002, 6))
    e = tost(near, margin=0.02)
    assert e["p"] < 0.05 and -0.02 < e["interval"][0] < e["interval"][1] < 0.02
    with pytest.raises(ValueError, match="margin"):
        tost(near, 0.0)


def test_mde_matches_power_and_shrinks_with_pairs():
    assert mde(1.0, 10) == pytest.approx(0.9962, abs=2e-3)    # paired t, alpha 0.05, power 0.8 (G*Power: 0.996)
    d = mde(0.05, 4)
    nc = d * math.sqrt(4) / 0.05
    q = stats.t.ppf(0.975, 3)
    assert stats.nct.sf(q, 3, nc) + stats.nct.cdf(-q, 3, nc) == pytest.approx(0.8, abs=1e-6)
    assert mde(0.05, 8) < mde(0.05, 4) < mde(0.05, 2) and mde(0.05, 1) == math.inf
    assert mde(0.05, 4) > 0.05 * (1.96 + 0.84) / 2           # the z approximation understates it
    assert tost_mde(0.05, 6) > 0 and tost_mde(0.05, 1) == math.inf


def test_agreement_is_supported_at_most_alpha_of_the_time_at_the_margin():
    """A planted null of equivalence: the true difference sits at the margin. TOST supports
    agreement at most alpha of the time (here 8 units, df = 7, as the Langevin rate's chain groups)."""
    from verification.stats import agreement

    rng = np.random.default_rng(1)
    runs, units, sd, margin = 4000, 8, 1.0, 0.9
    hits = sum(agreement(list(rng.normal(margin, sd, units)), 0.0, margin)["outcome"] == "supported"
               for _ in range(runs))
    lo, hi = wilson(hits, runs)
    assert lo <= 0.05 and hi < 0.065, (hits, runs)


def test_a_prediction_off_by_two_standard_errors_is_not_supported():
    """The rule it replaces called a prediction inside estimate +- 3 se support: a prediction off by
    2 se (and outside the margin) is never supported by agreement, and refuted when that is shown."""
    from verification.stats import agreement

    rng = np.random.default_rng(2)
    units = 8
    out = []
    for _ in range(500):
        x = rng.normal(0.0, 1.0, units)
        se = x.std(ddof=1) / np.sqrt(units)
        x = x - x.mean() + 2 * se                          # the estimate: exactly 2 se from the prediction
        old = abs(x.mean()) <= 3 * se
        new = agreement(list(x), 0.0, margin=1.5 * se)["outcome"]
        assert old and new != "supported"
        out.append(new)
    assert set(out) <= {"inconclusive", "refuted"}
    r = agreement(list(rng.normal(0.0, 0.01, 8)), 0.0, margin=0.05)
    assert r["outcome"] == "supported" and r["df"] == 7 and r["mde"] < 0.05
    assert r["interval"][0] < r["estimate"] < r["interval"][1]


def test_identical_or_rounding_level_differences_decide_nothing(monkeypatch):
    """A planted tie: identical per-seed values (exactly, and up to rounding: 0.1 + 0.2 against 0.3)
    have no spread; a t test on them would give p ~ 1e-32 from an sd of ~1e-17. They are not applicable
    (p = 1), and the planted bug (the floor off) decides them."""
    from verification import stats as S

    for d in ([0.005] * 4, [(0.1 + 0.2) - 0.3, 0.0, 5.551115123125783e-17, 0.0], [3.21 - 3.0] * 6):
        r = S.paired_t(d)
        assert r["no_variation"] and not r["applicable"] and r["p_two"] == 1.0, d
        assert S.tost(d, 0.02)["p"] == 1.0
    assert S.exact_sd([0.1 + 0.2] * 3) == 0.0 and np.std([0.1 + 0.2] * 3, ddof=1) >= 0.0
    r = S.paired_t([0.005, 0.005, 0.0051])          # real spread: tested as before
    assert r["applicable"] and r["p_two"] < 0.05
    monkeypatch.setattr("verification.stats.paired.SD_FLOOR", -1.0)   # planted bug: no floor
    assert S.paired_t([0.005, 0.005, 0.0051 - 1e-4 + 1e-16])["p_two"] < 1e-6


def test_tost_mde_at_the_decision_level_has_the_stated_power():
    """The SAN decision doubles TOST's p-value (either direction may be decided); its MDE is TOST's at
    that doubled level, alpha / 2 per test: a true difference of 0 with that margin passes about 80% of
    the time (simulated), and the MDE at alpha (the old, undoubled one) passes clearly less often."""
    from verification.stats import tost, tost_mde

    rng = np.random.default_rng(0)
    n, sd, alpha = 8, 1.0, 0.05
    right, wrong = tost_mde(sd, n, alpha / 2), tost_mde(sd, n, alpha)
    draws = rng.normal(0.0, sd, size=(4000, n))

    def power(margin):
        return np.mean([min(1.0, 2 * min(e["p"], e["p_outside"])) < alpha
                        for e in (tost(list(d), margin) for d in draws)])

    p_right, p_wrong = power(right), power(wrong)
    assert 0.74 <= p_right <= 0.88, p_right
    assert p_wrong < p_right - 0.08, (p_wrong, p_right)


# -- one interval for every share (issue 62, item 5) ------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from theory.errors import InvalidInput  # noqa: E402
from verification.stats import design_effect, median_interval  # noqa: E402
from verification.stats.spread import median_rank  # noqa: E402


def wilson_bounds_monotone(n: int, deff: float = 1.0) -> bool:
    """Both Wilson bounds non-decreasing in k = 0..n at fixed n (and design effect)."""
    b = [wilson(k, n, deff=deff) for k in range(n + 1)]
    return all(b[k][0] <= b[k + 1][0] and b[k][1] <= b[k + 1][1] for k in range(n))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.floats(1.0, 200.0))
def test_wilson_bounds_increase_with_the_count_at_every_n(n, deff):
    assert wilson_bounds_monotone(n, deff)


STORE_TOTALS = (1, 4, 6, 12, 40, 48, 108, 120, 180, 336, 384, 540, 720, 1620, 1800, 3456, 5400, 6912, 9360, 18720,
                120000)
"""The totals the main job's quick tables print (read from /work/base/store.db's paper build, issue 62): inputs
per model (4 DINOv2-S photographs, 6 decoder inputs, 48 AntiBERTy, 120 MiniLM), head means (48 ... 720),
float-test verdicts (336 ... 9360), D1 verdicts (1620 ... 18720), the causal-D2 check's pairs (120000)."""


@pytest.mark.parametrize("n", STORE_TOTALS)
def test_wilson_is_monotone_at_the_totals_of_the_stores_tables(n):
    """At every total the main job's tables print the bounds at k = 0 are the bounds of the formula,
    no other rule, and both increase with k."""
    ks = range(n + 1) if n <= 10000 else list(range(0, 50)) + list(range(n - 50, n + 1))
    b = [wilson(k, n) for k in ks]
    assert all(x[0] <= y[0] and x[1] <= y[1] for x, y in zip(b, b[1:]))
    z = 1.959963984540054
    assert wilson(0, n) == (0.0, pytest.approx(z * z / (n + z * z)))         # the formula's own end
    assert wilson(n, n) == (pytest.approx(n / (n + z * z)), 1.0)


def test_a_nonmonotone_interval_is_caught():
    """The planted bug of issue 62: 0 of n given the Wilson interval of the inputs (a different rule)."""
    def planted(k, n):
        return wilson(0, 120) if k == 0 else wilson(k, n)
    b = [planted(k, 9360) for k in range(3)]
    assert not all(x[1] <= y[1] for x, y in zip(b, b[1:]))
    assert wilson_bounds_monotone(9360)


def test_wilson_refuses_bad_counts():
    for k, n in ((3, 2), (-1, 5)):
        with pytest.raises(InvalidInput):
            wilson(k, n)
    with pytest.raises(InvalidInput):
        wilson(1, 5, deff=0.5)
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_design_effect_counts_alike_clusters_as_one_trial_each():
    assert design_effect([5, 0, 5, 0, 5, 0], [5] * 6) == pytest.approx(5.0 * 6 / 5)   # cluster size, C/(C-1)
    assert design_effect([0] * 6, [5] * 6) == design_effect([5] * 6, [5] * 6) == 1.0
    assert design_effect([3], [5]) == 5.0                                        # one cluster: one trial
    with pytest.raises(InvalidInput):
        design_effect([1, 2], [2])


@pytest.mark.parametrize("n", range(1, 60))
def test_median_rank_has_the_exact_binomial_coverage(n):
    j = median_rank(n)
    cover = (lambda i: 1 - 2 * stats.binom.cdf(i - 1, n, 0.5))
    if j == 0:
        assert cover(1) < 0.95 and n <= 5
    else:
        assert cover(j) >= 0.95 and (j + 1 > (n + 1) // 2 or cover(j + 1) < 0.95)


def test_median_interval_is_order_statistics_not_a_bootstrap():
    x = list(np.random.default_rng(4).normal(size=30))
    m, (lo, hi) = median_interval(x)
    s = sorted(x)
    j = median_rank(30)
    assert m == pytest.approx(np.median(x)) and (lo, hi) == (s[j - 1], s[30 - j])
    assert median_interval(x) == median_interval(list(reversed(x)))       # no resampling, no seed
    m4, band = median_interval([0.1, 0.4, 0.2, 0.3])                      # 4 inputs: no 95% interval exists
    assert m4 == pytest.approx(0.25) and all(math.isnan(b) for b in band)
    assert median_interval([None, 2.0])[0] == 2.0 and median_interval([])[0] is None


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5000), st.data(), st.floats(1.0, 100.0))
def test_a_design_effect_only_widens_the_wilson_interval(n, data, deff):
    """Fewer effective trials never narrow the interval: a clustered share's interval contains the one of
    its verdicts counted as independent (the docstrings' "never narrower")."""
    k = data.draw(st.integers(0, n))
    (lo, hi), (clo, chi) = wilson(k, n), wilson(k, n, deff=deff)
    assert clo <= lo + 1e-15 and chi >= hi - 1e-15
