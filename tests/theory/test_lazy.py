"""Proposition D1a (docs/theory.md §1): delta(alpha I + (1 - alpha) A) <= alpha + (1 - alpha) delta(A)
for every real square A and alpha in (0, 1), with equality iff D1's condition, unchanged. Checked
exactly (Fractions, no tolerance) on random real matrices full of ties at several alpha, against the
suite's D1 checker on stochastic matrices through the registered statement, and by a stress sweep
whose equality condition must agree with every exact verdict."""
import json
import random
from fractions import Fraction

import numpy as np
import pytest

from theory.dobrushin import d1_condition_exact, derive_lazy_closed_form, lazy_condition

ALPHAS = (Fraction(1, 100), Fraction(1, 7), Fraction(1, 2), Fraction(2, 3), Fraction(99, 100))


def delta_exact(M):
    """Independent reference: 1/2 max_{i,j} ||M_i - M_j||_1 on exact rows (0 for one row)."""
    return max((sum(abs(a - b) for a, b in zip(r, s)) for r in M for s in M), default=Fraction(0)) / 2


def lazy(M, alpha):
    return [[alpha * (i == k) + (1 - alpha) * x for k, x in enumerate(row)] for i, row in enumerate(M)]


def real_matrices(count, seed=0):
    """Random real square matrices, n = 2..5, small integer or half-integer entries of both signs
    (many ties: equality and strictness both frequent)."""
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randint(2, 5)
        yield [[Fraction(rng.randint(-4, 4), rng.choice((1, 2))) for _ in range(n)] for _ in range(n)]


def one_sided(M):
    """A wrong condition (self-dominance of the first row of the pair only): must disagree somewhere."""
    D = delta_exact(M)
    n = len(M)
    return any(delta_exact([M[i], M[j]]) == D and M[i][i] >= M[j][i]
               for i in range(n) for j in range(n) if i != j)


def test_the_closed_form_holds_in_every_sign_case():
    assert derive_lazy_closed_form() == {k: 0 for k in derive_lazy_closed_form()}
    assert len(derive_lazy_closed_form()) == 9


@pytest.mark.parametrize("alpha", ALPHAS)
def test_bound_and_condition_on_real_matrices_exactly(alpha):
    tight = strict = wrong = 0
    for M in real_matrices(400, seed=int(alpha.denominator)):
        lhs, rhs = delta_exact(lazy(M, alpha)), alpha + (1 - alpha) * delta_exact(M)
        assert lhs <= rhs, (M, alpha, lhs, rhs)
        assert (lhs == rhs) == d1_condition_exact(M), (M, alpha, lhs, rhs)
        tight += lhs == rhs
        strict += lhs < rhs
        wrong += one_sided(M) != (lhs == rhs)
    assert tight > 50 and strict > 50, (tight, strict)       # both outcomes are exercised
    assert wrong > 0, "the one-sided condition must be caught on some instance"


def test_the_verdict_does_not_depend_on_alpha():
    for M in real_matrices(300, seed=7):
        said = {delta_exact(lazy(M, a)) == a + (1 - a) * delta_exact(M) for a in ALPHAS}
        assert len(said) == 1, M


def test_at_one_half_it_is_d1_on_stochastic_matrices():
    from numerics.dobrushin import factor_equality

    rng = np.random.default_rng(3)
    A = rng.dirichlet(np.ones(4), size=(200, 4))
    A[:, 0, :] = [1, 0, 0, 0]                      # half of them causal-like in row 0: more equalities
    A[100:] = rng.dirichlet(np.ones(4), size=(100, 4))
    exact = [[[Fraction(float(x)) for x in row] for row in a] for a in A]
    exact = [[[x / sum(row) for x in row] for row in M] for M in exact]
    ours = [delta_exact(lazy(M, Fraction(1, 2))) == (1 + delta_exact(M)) / 2 for M in exact]
    assert ours == list(factor_equality(A)) and 0 < sum(ours) < len(ours)


def test_the_registered_statement_gives_d1s_verdicts_at_every_alpha():
    """The registered Proposition D1a decided by the suite's exact machinery (attnbounds.decide) on
    stochastic float matrices: tight exactly where the D1 checker (numerics.dobrushin.factor_equality)
    says D1 is tight, at every alpha in (0, 1); always tight at alpha = 0 and 1."""
    from attnbounds import decide
    from numerics.dobrushin import factor_equality

    rng = np.random.default_rng(1)
    A = np.concatenate([rng.dirichlet(np.ones(3), size=(60, 3)), rng.dirichlet(np.full(4, 0.3), size=(60, 4))[:, :3, :3]])
    A = A / A.sum(axis=-1, keepdims=True)
    d1 = factor_equality(A)
    assert 0 < d1.sum() < len(d1)
    for alpha in ALPHAS + (Fraction(1, 2**16), Fraction(2**16 - 1, 2**16)):
        r = decide("dobrushin.factor.lazy", A=A, alpha=alpha)
        assert "violated" not in r.verdicts and "undecided" not in r.verdicts
        assert [v == "tight" for v in r.verdicts] == list(d1), alpha
    for alpha in (0, 1):
        assert set(decide("dobrushin.factor.lazy", A=A, alpha=alpha).verdicts) == {"tight"}


def test_the_condition_at_the_end_points_and_for_one_row():
    swap = [[0, 1], [1, 0]]                        # delta = 1, the pair is not self-dominant: strict inside
    assert not d1_condition_exact(swap) and d1_condition_exact([[1, 0], [0, 1]]) and d1_condition_exact([[0, 1], [0, 1]])
    assert not lazy_condition({"A": swap, "alpha": Fraction(1, 3)})
    assert delta_exact(lazy(swap, Fraction(1, 3))) == Fraction(1, 3) < 1
    assert lazy_condition({"A": swap, "alpha": Fraction(0)}) and lazy_condition({"A": swap, "alpha": Fraction(1)})
    one = [[Fraction(1)]]
    assert lazy_condition({"A": one, "alpha": Fraction(0)})
    assert not lazy_condition({"A": one, "alpha": Fraction(1)}) and not lazy_condition({"A": one, "alpha": Fraction(1, 2)})
    assert delta_exact(lazy(one, Fraction(1))) < 1                       # n = 1, alpha = 1: strict
    with pytest.raises(ValueError, match="square"):
        d1_condition_exact([[1, 0, 0], [0, 1, 0]])


def test_the_registry_entry():
    from theory import get

    th = get("dobrushin.factor.lazy")
    assert th.label == "Proposition D1a" and th.category == "proved" and th.is_expr
    assert th.equality_condition is lazy_condition
    assert {"lazy.v:lazy_bound_any", "lazy.v:lazy_equality_any"} <= set(th.formal)


def test_a_stress_sweep_agrees_with_the_condition_at_many_alpha(tmp_path, capsys):
    """The stress sweep draws alpha per instance (0 and 1 with probability 1/8 each, else j/2^16) and
    decides every instance exactly; the equality condition must agree with every exact verdict."""
    from verification.cli import main
    from verification.stress.checks.draws import draw_values
    from verification.stress.checks.expr import spec_part

    law = spec_part("dobrushin.factor.lazy")["law"]
    alphas = draw_values(law, "dirichlet", 3, None, 0, 0, "counter", 1000)["alpha"]
    assert 0 in alphas and 1 in alphas and len(set(alphas)) > 500
    argv = ["stress", "dobrushin.factor.lazy", "--families", "sparse,dirichlet", "--sizes", "3", "--instances", "10",
            "--json", "--db", str(tmp_path / "s.db"), "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert got["instances"] == 2000 and got["verdicts"]["violated"] == got["verdicts"]["undecided"] == 0
    cond = got["equality_condition"]
    assert cond["checked"] == 2000 and cond["tight_said"] == got["verdicts"]["tight"] > 0
    assert cond["tight_missed"] == cond["said_not_tight"] == 0
