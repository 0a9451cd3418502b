"""numerics.smt.exhaustive: the symmetry-free case splits of D1's and D2's bounds cover every pair,
column set and sign pattern, prove the bounds at the smallest sizes, agree with the split encodings
there, can fail (strict variants refuted), and a disagreement with the split is reported."""
import pytest

from numerics.smt import exhaustive as X
from numerics.smt.solve import SmtResult, decide


def test_the_cases_are_every_pair_every_column_set_and_every_sign_pattern():
    assert len(X.subsets(3)) == 8 and X.subsets(2) == [(), (0,), (1,), (0, 1)]
    # pairs x 2^p x (3^m patterns less the 2 (2^m - 1) no zero-sum vector has)
    assert len(X.d2_bound_cases((3, 2, 2))) == 3 * 4 * (9 - 6)
    from itertools import product
    zero_sum = {tuple((x > 0) - (x < 0) for x in v) for v in product(range(-2, 3), repeat=3) if sum(v) == 0}
    assert set(X.sign_patterns(3)) == zero_sum                       # exactly the patterns a zero-sum vector has
    assert len(X.d1_bound_cases((4,))) == 6 * 16                    # pairs x 2^n
    labels = {label for label, _, _ in X.d2_bound_cases((2, 2, 2))}
    assert "(0,1) T={0, 1} signs +-" in labels and "(0,1) T={} signs 00" in labels
    assert "(0,1) T={} signs ++" not in labels and set(X.cases("d2", (2, 2, 2))) == labels


@pytest.mark.parametrize("key,dims", [("d1.bound.exhaustive", (3,)), ("d2.bound.exhaustive", (2, 2, 2))])
def test_exhaustive_and_split_encodings_agree_at_the_smallest_size(key, dims):
    r = X.compare(key, dims, timeout=60)
    assert r["status"]["exhaustive"]["z3"] == "proved" and r["status"]["split"]["z3"] == "proved", r
    assert r["agree"]["z3"] is True and r["agree"]["cvc5"] in (True, None)
    assert r["exhaustive"].queries == len(X.EXHAUSTIVE[key].build(dims))


@pytest.mark.parametrize("key", ["d1.bound.exhaustive.wrong", "d2.bound.exhaustive.wrong"])
def test_the_strict_variants_come_back_with_a_confirmed_counterexample(key):
    st = X.EXHAUSTIVE[key]
    r = decide(st, st.at, timeout=60)
    assert st.wrong and r.status == "counterexample" and r.confirmed is True, r


def test_a_disagreement_with_the_split_encoding_is_reported(monkeypatch):
    import numerics.smt.split as S

    def planted(st, dims, timeout=60.0):             # a split encoding that (wrongly) finds a counterexample
        return SmtResult(st.key, tuple(dims), "counterexample", 0.0)
    monkeypatch.setattr(S, "decide_split", planted)
    r = X.compare("d1.bound.exhaustive", (2,), timeout=30)
    assert r["agree"]["z3"] is False
