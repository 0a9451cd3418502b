"""Every query of every true statement (each half of an iff, each case of a split) can fail: its
mutation (``Statement.mutation``: a condition too weak or too strong, an inequality flipped) comes back
``sat`` from z3, and the model satisfies the mutation's exact predicate (Fractions, no tolerance).
A statement without a mutation, a query without one, or a mutated query that stays ``unsat`` fails here."""
import pytest

from numerics.smt import SPLIT, STATEMENTS, decide, fractions
from numerics.smt.causal import STATEMENTS as CAUSAL_D2
from numerics.smt.exhaustive import EXHAUSTIVE

TRUE = {k: s for k, s in {**STATEMENTS, **SPLIT, **EXHAUSTIVE, **CAUSAL_D2}.items() if not s.wrong}


def test_every_statement_that_prove_runs_is_covered_here():
    from verification.prove.checks import ALL

    assert {k for k, s in ALL.items() if not s.wrong} == set(TRUE)


def mutated_queries() -> list:
    out = []
    for key, st in sorted(TRUE.items()):
        m = st.mutation
        if m is None:
            out.append(pytest.param(key, None, id=f"{key}:NO-MUTATION"))
            continue
        out += [pytest.param(key, i, id=f"{key}:{label}") for i, (label, _, _) in enumerate(st.build(m.at))]
    return out


def test_every_true_statement_has_a_mutation_of_each_of_its_queries():
    for key, st in TRUE.items():
        assert st.mutation is not None, f"{key} has no mutation: its queries are not shown able to fail"
        labels = [q[0] for q in st.build(st.mutation.at)]
        assert labels and labels == [q[0] for q in st.mutation.build(st.mutation.at)], key


@pytest.mark.parametrize("key,index", mutated_queries())
def test_each_mutated_query_is_refuted_with_an_exactly_confirmed_counterexample(key, index):
    st = TRUE[key]
    assert st.mutation is not None, f"{key} has no mutation"
    m = st.mutation
    label, constraints, mats = m.build(m.at)[index]
    r = decide(st, m.at, timeout=60, build=lambda: [(label, constraints, mats)])
    assert r.status == "counterexample" and r.label == label, (key, label, r)
    assert r.counterexample, f"{key} {label}: the model is not rational ({r.reason})"
    assert m.fails(label, fractions(r.counterexample)) is True, (key, label, r.counterexample)
    assert r.cvc5 in ("counterexample", "undecided")        # never unsat: that would be a disagreement


def test_a_mutation_that_cannot_fail_is_caught():
    """The planted bug of the issue: the condition replaced by True in d1.iff.split's "only-if"
    makes that query unsat whatever the condition; its mutation then stays unsat (caught here)."""
    import z3

    st = SPLIT["d1.iff.split"]
    label, c, mats = st.mutation.build((3,))[1]
    assert label == "only-if"
    # the query with "Not(condition)" replaced by "Not(True)", as the planted bug does
    planted = [x for x in c if not (z3.is_not(x))] + [z3.Not(z3.BoolVal(True))]
    assert decide(st, (3,), timeout=60, build=lambda: [(label, planted, mats)]).status == "proved"
    assert decide(st, (3,), timeout=60, build=lambda: [(label, c, mats)]).status == "counterexample"
