"""How each theorem is stress-tested: its :class:`TheoremSpec` (the kind of instance, default cells,
the families its hypotheses admit), the built-in ones in :data:`THEOREMS`, and for a registered
statement over :mod:`theory.expr` (a user's) a spec derived from the statement (:func:`spec_of`).

>>> spec_of("dobrushin.rollout").stored_as, per_instance(spec_of("dobrushin.product"))
('dobrushin.product', 2)
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Optional

from theory.errors import InvalidInput


@dataclass(frozen=True)
class TheoremSpec:
    """How a theorem is stress-tested: which instances (``kind``), default cells."""

    kind: str                      # "factor": one matrix A per instance; "product": a pair (P, Q);
    families: tuple[str, ...]      # "rollout": a stack of L layers A_1..A_L
    sizes: tuple[int, ...]
    allowed: Optional[tuple[str, ...]] = None   # families the theorem's hypotheses admit (None: any)
    layers: tuple[int, ...] = ()   # "rollout": default layer counts L
    stored_as: Optional[str] = None   # the registered theorem its records are verdicts of (None: itself)
    matrices: tuple[str, ...] = ()    # "expr": the matrices of a statement over theory.expr, per instance
    statement: str = ""               # "expr": the statement as sympy prints it (named in the campaign)
    law: Any = None                   # "expr": what one instance holds (verification.stress.checks.draws.Law)
    dims: tuple[int, ...] = ()        # "expr" with a tokens matrix: default widths d
    small: bool = False               # "expr" beyond the delta-only vocabulary: chunks of chunk_size(n) / SMALL


THEOREMS: dict[str, TheoremSpec] = {
    # D1's default cells are the continuous families of the Dobrushin campaign at every size up to 64:
    # the main job's sweep measures the share of tight random matrices per family and n from them
    "dobrushin.factor": TheoremSpec("factor", ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4"),
                                    (2, 3, 4, 5, 8, 16, 32, 64)),
    "dobrushin.factor.causal": TheoremSpec("factor", ("causal",), (4, 16), allowed=("causal",)),
    "dobrushin.product": TheoremSpec("product", ("dirichlet", "softmax-T1"), (4, 16)),
    # causal pairs: D2's equality against the causal condition (the guided search's scorer,
    # verification.stress.checks.search.causal_score; a sweep checks D2 on causal pairs)
    "dobrushin.product.causal": TheoremSpec("product", ("causal",), (3, 4), allowed=("causal",)),
    # the rollout chain: Theorem D2 at every step R_l = Ahat_l R_{l-1}, Ahat_l = (I + A_l)/2
    "dobrushin.rollout": TheoremSpec("rollout", ("dirichlet", "softmax-T1"), (4, 16), layers=(2, 4, 12),
                                     stored_as="dobrushin.product"),
}
# a statement over theory.expr (a user's theorem, --theory FILE.py): its default sizes (its default
# families: verification.stress.checks.draws.default_families)
EXPR_SIZES = (2, 3, 4, 8)
SMALL = 10                     # a statement beyond the delta-only vocabulary: chunks 10x smaller (exact and
                               # certified arithmetic decide many of its instances one at a time)


def spec_of(theorem: str) -> TheoremSpec:
    """How ``theorem`` is stress-tested: its entry of :data:`THEOREMS`, or, for a registered
    theorem whose statement is over :mod:`theory.expr` (a user's, ``--theory FILE.py``), a spec
    derived from it: kind "expr", every symbol of the statement drawn per instance
    (:mod:`verification.stress.checks.draws`), default cells its default families x :data:`EXPR_SIZES`
    (x :data:`~verification.stress.checks.draws.DIMS` with a tokens matrix), families restricted by its
    ``assume``. The statement's text (what names the campaign) carries everything that changes the
    draws or the verdicts: the hypotheses, each parameter's interval, ``where=``. InvalidInput for any
    other id, with the ids that have one."""
    if theorem in THEOREMS:
        return THEOREMS[theorem]
    from theory import registry

    th = registry.REGISTRY.get(theorem)
    if th is None:
        registry.load_all()
        th = registry.REGISTRY.get(theorem)
    if th is None or not th.is_expr:
        why = "no theorem of that id is registered" if th is None else "its statement is not over theory.expr"
        raise InvalidInput(f"no stress sampler for {theorem!r} ({why}); stress takes {', '.join(THEOREMS)} or a "
                           "theorem over theory.expr (A, B, C, I, delta) registered by --theory FILE.py")
    from numerics.expr import compile_statement
    from verification.stress.checks.draws import DIMS, Law, default_families

    assume = tuple(sorted(th.assume))
    compiled = compile_statement(th.statement, th.assume, th.where)
    law = Law.of(compiled)
    text = f"{th.statement}" + (f" [{', '.join(assume)}]" if assume else "")
    if compiled.params:
        text += " [" + ", ".join(f"{p} in [{lo}, {hi}]" for p, lo, hi in compiled.params) + "]"
    if th.where:
        text += " [where " + ", ".join(map(str, th.where)) + "]"
    if th.equality_condition is not None:           # another condition: another campaign (its tallies differ)
        import inspect

        try:
            code = inspect.getsource(th.equality_condition)
        except (OSError, TypeError):
            code = repr(th.equality_condition)
        text += f" [equality condition {hashlib.sha256(code.encode()).hexdigest()[:8]}]"
    return TheoremSpec("expr", default_families(law), EXPR_SIZES, matrices=compiled.matrices, statement=text,
                       law=law, dims=DIMS if law.tokens else (), small=not compiled.legacy)


def per_instance(spec: TheoremSpec) -> int:
    """Matrices drawn per instance: 2 for a pair (D2), one per matrix of a statement, else 1."""
    return 2 if spec.kind == "product" else max(1, len(spec.matrices))


def tokens_axis(spec: TheoremSpec) -> bool:
    """Whether the spec's cells run over d (a statement with a tokens matrix)."""
    return spec.kind == "expr" and bool(spec.law is not None and spec.law.tokens)
