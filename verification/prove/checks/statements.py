"""The statements the SMT campaign proves: the built-in Dobrushin statements (:data:`ALL`: the
true ones :data:`TRUE` and the deliberately wrong variants :data:`WRONG`), a user's registered
theorem over :mod:`theory.expr` as one statement of its own (:func:`user_statement`), and the
premises a statement relies on (:func:`with_premises`, :func:`depth`): a statement whose queries use
a bound runs where that bound is proved at its size, by either encoding.
"""
from __future__ import annotations

from typing import Optional

from numerics.smt import SPLIT, STATEMENTS, Statement
from numerics.smt.causal import STATEMENTS as CAUSAL_D2
from numerics.smt.exhaustive import EXHAUSTIVE
from numerics.smt.user import UserStatement
from theory.errors import InvalidInput

TRUE = ("d1.bound", "d1.bound.split", "d1.bound.exhaustive", "d1.iff", "d1.iff.split", "causal", "d2.bound",
        "d2.bound.split", "d2.bound.exhaustive", "d2.iff", "d2.iff.split", "chain", "causal.d2", "causal.d2.lemma")
ALL = {**STATEMENTS, **SPLIT, **EXHAUSTIVE, **CAUSAL_D2}
WRONG = tuple(k for k, s in ALL.items() if s.wrong)


BUILTIN_THEOREMS = frozenset(s.theorem for s in ALL.values())
_USER: dict = {}


def user_statement(theorem_id: str) -> Optional[UserStatement]:
    """The SMT statement of a registered theorem over theory.expr that is not a built-in prove
    statement or theorem (a user's), else None; built once per registered statement."""
    if theorem_id in ALL or theorem_id in BUILTIN_THEOREMS:
        return None
    from theory import registry

    th = registry.REGISTRY.get(theorem_id)
    if th is None or not th.is_expr:
        return None
    key = (theorem_id, th.statement, tuple(th.assume), tuple(th.where))
    if key not in _USER:
        from numerics.smt.user import statement_for

        _USER[key] = statement_for(theorem_id, th.statement, tuple(th.assume), where=tuple(th.where))
    return _USER[key]


def is_user(key: str) -> bool:
    return user_statement(key) is not None


def statement(key: str) -> Statement:
    """The built-in statement ``key`` (:data:`ALL`) or a user theorem's (:func:`user_statement`)."""
    if key in ALL:
        return ALL[key]
    st = user_statement(key)
    if st is None:
        raise KeyError(key)
    return st


def premise_at(key: str, dims: tuple) -> dict[str, list]:
    """Each premise of ``key`` (a base statement key) -> the dims where it must be proved."""
    st = statement(key)
    return {p: list(st.premise_dims(tuple(dims), statement(p).kind)) for p in st.needs}


def premise_keys(key: str) -> tuple[str, ...]:
    """The keys that satisfy the premises of ``key``: either encoding of each statement it needs."""
    return tuple(k for p in statement(key).needs for k in (p, f"{p}.split") if k in ALL)


def select(names: tuple[str, ...]) -> tuple[str, ...]:
    """Statement keys for THEOREM_IDs and/or statement keys (all when empty), with the premises of
    each (the split encoding of a needed bound, unless an encoding of it is already asked) first;
    unknown: InvalidInput."""
    if not names:
        return TRUE + WRONG
    out = []
    for name in names:
        if is_user(name):
            out.append(name)
            continue
        keys = [k for k in TRUE + WRONG if ALL[k].theorem == name] if name not in ALL else [name]
        if not keys:
            known = sorted({s.theorem for s in ALL.values()})
            raise InvalidInput(f"unknown theorem or statement {name!r}; theorems: {', '.join(known)}; "
                             f"statements: {', '.join(TRUE + WRONG)}")
        out += keys
    return with_premises(tuple(out))


def with_premises(keys: tuple[str, ...]) -> tuple[str, ...]:
    """``keys`` with, first, an encoding of every statement they need (the split one, which reaches
    further, unless an encoding of it is among ``keys``)."""
    out = list(dict.fromkeys(keys))
    todo = list(out)
    while todo:                                    # premises of premises too (causal.d2.lemma -> causal -> d1.bound)
        key = todo.pop()
        if not statement(key).wrong:
            for p in statement(key).needs:
                if p not in out and f"{p}.split" not in out:
                    out.insert(0, f"{p}.split" if f"{p}.split" in ALL else p)
                    todo.append(out[0])
    return tuple(out)


def depth(key: str) -> int:
    """0 for a statement that needs nothing (or a wrong variant), else 1 + the deepest premise."""
    st = statement(key)
    return 0 if st.wrong or not st.needs else 1 + max(depth(p) for p in st.needs)

