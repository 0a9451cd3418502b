"""One table, one name (issue 34): a family's report (``verification/<family>/report*.py``, what a
command and the main job write to ``paper/tables``) and its paper part (``verification/<family>/paper.py`` or ``paper/``,
what ``attnbounds paper`` writes) never give the same result two spellings of one name.

Read from the code, not from a run (a main-job-sized run is what would write them all): every table
name a family's modules can write, i.e. the name argument of each ``Table(...)``,
``Table.from_rows(...)``, ``write_table(...)``, ``.select(..., name=...)`` and of the paper's view
helpers, and every string constant of the form ``<family>-...`` / ``<family>_...`` that is not a
figure's name. A name built by an f-string is evaluated in its module with each theorem id for
``target`` / ``theorem`` (so ``f"stress-{target.replace('.', '-')}"`` gives
``stress-dobrushin-factor``) and ``*`` for any other free variable (``f"trained_d1_{s}"`` gives
``trained_d1_*``). Two different names clash when they are equal once ``_`` is read as ``-`` and a
family's name inside them is dropped (``stress-dobrushin-factor`` vs ``stress-factor``,
``trained_d1_*`` vs ``trained-d1-*``).
"""
from __future__ import annotations

import ast
import copy
import importlib
import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "verification"
# call -> position of its name argument (None: keyword ``name`` only)
TABLE_CALLS = {"Table": 0, "from_rows": 0, "write_table": 2, "select": None, "latex": 1, "_view": 1}
FIGURE_CALLS = {"save_figure": 2, "Figure": 0}
BOUND = ("target", "theorem")        # free variables bound to every stress theorem id


def families() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "paper.py").is_file() or (p / "paper").is_dir())


def report_files(family: str) -> list[Path]:
    d = PACKAGE / family
    return sorted([*d.glob("report*.py"), *(d / "report").glob("*.py")])


def paper_files(family: str) -> list[Path]:
    """The paper role of ``family``: ``paper.py``, or the modules of its subpackage ``paper/``."""
    d = PACKAGE / family
    return [d / "paper.py"] if (d / "paper.py").is_file() else sorted((d / "paper").glob("*.py"))


def paper_names(family: str) -> set[str]:
    return set().union(*(names(p, family) for p in paper_files(family)))


def _call(node: ast.Call) -> str | None:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)


def _arg(node: ast.Call, pos: int | None) -> ast.expr | None:
    for k in node.keywords:
        if k.arg == "name":
            return k.value
    return node.args[pos] if pos is not None and len(node.args) > pos else None


def _values(expr: ast.expr, namespace: dict) -> set[str]:
    """What the name expression ``expr`` can be (see the module docstring); empty when unknown."""
    from verification.stress.checks.plan import THEOREMS

    if isinstance(expr, ast.Constant):
        return {expr.value} if isinstance(expr.value, str) else set()
    if isinstance(expr, ast.IfExp):                  # either branch
        return _values(expr.body, namespace) | _values(expr.orelse, namespace)
    import builtins

    class Bound(ast.NodeTransformer):          # sweep.theorem: a theorem id, as the name theorem is
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            return ast.copy_location(ast.Name(node.attr, ast.Load()), node) if node.attr in BOUND else \
                self.generic_visit(node)

    expr = ast.fix_missing_locations(Bound().visit(copy.deepcopy(expr)))
    free = sorted({n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id not in namespace
                   and not hasattr(builtins, n.id)})
    code = compile(ast.Expression(expr), "<name>", "eval")
    out = set()
    domains = [list(THEOREMS) if v in BOUND else ["*"] for v in free]
    for combo in itertools.product(*domains):
        try:
            out.add(eval(code, dict(namespace), dict(zip(free, combo))))
        except Exception:            # noqa: BLE001  a placeholder that is not a string: one wildcard
            if isinstance(expr, ast.JoinedStr):
                out.add("".join(v.value if isinstance(v, ast.Constant) else "*" for v in expr.values))
    return {v for v in out if isinstance(v, str)}


def names(path: Path, family: str) -> set[str]:
    """The table names ``path`` can write."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    module = importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    tree = ast.parse(path.read_text())
    namespace = vars(module)
    found, figures = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call(node) in TABLE_CALLS:
            arg = _arg(node, TABLE_CALLS[_call(node)])
            if arg is not None:
                found |= _values(arg, namespace)
        if isinstance(node, ast.Call) and _call(node) in FIGURE_CALLS:
            arg = _arg(node, FIGURE_CALLS[_call(node)])
            if arg is not None:
                figures |= _values(arg, namespace)
    pattern = re.compile(rf"{family}[-_][a-z0-9][a-z0-9_-]*")
    pieces = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}   # of f-strings
    constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                 and id(n) not in pieces and pattern.fullmatch(n.value)}
    return {n for n in found | (constants - figures) if n.startswith(f"{family}-") or n.startswith(f"{family}_")}


def canonical(name: str) -> str:
    """``_`` read as ``-``, lower case, and a family's name after the first part dropped."""
    parts = name.lower().replace("_", "-").split("-")
    return "-".join(parts[:1] + [p for p in parts[1:] if p not in FAMILY_WORDS])


FAMILY_WORDS = set(families()) | {"dobrushin"}


def clashes(written: set[str]) -> list[tuple[str, ...]]:
    groups: dict[str, set[str]] = {}
    for n in written:
        groups.setdefault(canonical(n), set()).add(n)
    return sorted(tuple(sorted(g)) for g in groups.values() if len(g) > 1)


def test_canonical_catches_the_two_spellings():
    assert clashes({"trained_d1_*", "trained-d1-*", "trained-heads-*"}) == [("trained-d1-*", "trained_d1_*")]
    assert clashes({"stress-dobrushin-factor", "stress-factor", "stress-factor-slack"}) == \
        [("stress-dobrushin-factor", "stress-factor")]
    assert clashes({"rank-linear-risk", "rank-weights"}) == []


def test_the_collector_sees_both_sides():
    """The collector finds the names of both sides (else the test below would pass vacuously)."""
    stress = set().union(*(names(p, "stress") for p in report_files("stress")))
    assert {"stress-factor", "stress-rollout", "stress-rollout-steps", "stress-product"} <= stress
    assert "stress-rollout" in paper_names("stress")   # stress-factor: the report's
    trained = set().union(*(names(p, "trained") for p in report_files("trained")))
    assert {"trained-d1-*", "trained-heads-*", "trained-sources-*"} <= trained
    assert "trained-d1-*" in paper_names("trained")
    rank = set().union(*(names(p, "rank") for p in report_files("rank")))
    assert {"rank-linear-risk", "rank-weights"} <= rank and "rank_linear" not in rank   # a figure's name


@pytest.mark.parametrize("family", families())
def test_no_table_under_two_names(family):
    report = set().union(*(names(p, family) for p in report_files(family)))
    paper = paper_names(family)
    bad = clashes(report | paper)
    assert not bad, (f"{family}: the same table under two names (keep the paper's, which the sections "
                     f"\\input): {bad}")
