"""Issue 50: a theorem over theory.expr needs only id, title, category and statement (the rest is
derived), a theory file is loaded once and fails in one line, and an installed package's theories
come in through the attnbounds.theories entry-point group."""
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest

from theory import REGISTRY, Theorem
from theory.errors import InvalidInput
from theory.expr import A, B, I, delta


def test_a_theorem_over_the_vocabulary_derives_the_rest():
    th = Theorem(id="t.derived", title="t", category="proved", statement=delta(A * B) <= delta(A) * delta(B),
                 assume=("causal",))
    assert th.is_expr and th.matrices == ("A", "B")
    ok = {"A": np.eye(2), "B": np.array([[1.0, 0.0], [0.5, 0.5]])}
    assert th.hypotheses(ok)
    assert "above the diagonal" in th.hypotheses({**ok, "B": np.full((2, 2), 0.5)}).reason
    assert "row 1 sums to" in th.hypotheses({**ok, "A": np.array([[1.0, 0.0], [0.5, 0.6]])}).reason
    assert "no matrix B" in th.hypotheses({"A": np.eye(2)}).reason
    w = th.witness()                                  # an exact instance where the bound is an equality
    from numerics.expr import compile_statement, exact_sides

    lhs, rhs = exact_sides(compile_statement(th.statement), w)
    assert lhs == rhs and all(isinstance(x, Fraction) for row in w["A"] for x in row)
    assert th.evaluator("exact") is exact_sides


def test_a_strict_bound_has_no_witness_and_other_statements_need_their_parts():
    import sympy as sp

    strict = Theorem(id="t.strict", title="t", category="conjecture", statement=delta((I + A) / 2) < 2)
    with pytest.raises(LookupError, match="no witness"):
        strict.witness()
    with pytest.raises(ValueError, match="needs hypotheses and witness"):
        Theorem(id="t.other", title="t", category="proved", statement=sp.Symbol("x") <= 1)
    with pytest.raises(InvalidInput, match="rows sum to 2"):
        Theorem(id="t.bad", title="t", category="proved", statement=delta(A + B) <= 1)
    with pytest.raises(InvalidInput, match="assume='banded'"):
        Theorem(id="t.assume", title="t", category="proved", statement=delta(A) <= 1, assume=("banded",))
    with pytest.raises(InvalidInput, match="causal and positive, which exclude each other"):
        Theorem(id="t.assume2", title="t", category="proved", statement=delta(A) <= 1, assume=("causal", "positive"))


def test_a_theory_file_loads_once_and_its_errors_are_one_line(tmp_path):
    from theory.plugins import load_file, source, unload_files

    path = tmp_path / "f.py"
    path.write_text("from theory import Theorem, register\nfrom theory.expr import A, delta\n"
                    "register(Theorem(id='tf.one', title='t', category='proved', statement=delta(A) <= 1))\n")
    try:
        (th,) = load_file(path)
        assert load_file(path) == [th] and REGISTRY["tf.one"] is th and source("tf.one") == str(path)
        path.write_text(path.read_text().replace("<= 1", "<= 2"))              # edited: replaced, not doubled
        (th2,) = load_file(path)
        assert th2 is not th and REGISTRY["tf.one"] is th2
        bad = tmp_path / "g.py"
        bad.write_text("from theory import Theorem, register\nfrom theory.expr import A, delta\n"
                       "register(Theorem(id='tf.two', title='t', category='proved', statement=delta(A) <= 1))\n"
                       "raise RuntimeError('late')\n")
        with pytest.raises(InvalidInput, match=r"g\.py: line 4: RuntimeError: late"):
            load_file(bad)
        assert "tf.two" not in REGISTRY                 # a failing file registers nothing
        clash = tmp_path / "h.py"
        clash.write_text("from theory import Theorem, register\nfrom theory.expr import A, delta\n"
                         "register(Theorem(id='dobrushin.factor', title='t', category='proved', "
                         "statement=delta(A) <= 1))\n")
        with pytest.raises(InvalidInput, match="registered twice"):
            load_file(clash)
        (tmp_path / "x.txt").write_text("")
        with pytest.raises(InvalidInput, match="not a Python file"):
            load_file(tmp_path / "x.txt")
        with pytest.raises(InvalidInput, match="not a file"):
            load_file(tmp_path)
    finally:
        unload_files()
    assert "tf.one" not in REGISTRY


def test_an_installed_package_brings_its_theories_through_entry_points(tmp_path, monkeypatch):
    from theory import registry

    pkg = tmp_path / "site"
    (pkg / "ep_bounds").mkdir(parents=True)
    (pkg / "ep_bounds" / "__init__.py").write_text(textwrap.dedent("""
        from theory import Theorem, register
        from theory.expr import A, delta
        register(Theorem(id="ep.square", title="t", category="proved", statement=delta(A**2) <= delta(A)**2))
    """))
    dist = pkg / "ep_bounds-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-bounds\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[attnbounds.theories]\nmy-bounds = ep_bounds\n")
    monkeypatch.syspath_prepend(str(pkg))
    monkeypatch.setattr(registry, "_ENTRY_POINTS_LOADED", [False])
    try:
        found = registry.load_entry_points()
        assert [t.id for t in found] == ["ep.square"]
        assert registry.source("ep.square") == "entry point my-bounds"
        assert registry.load_entry_points() == []                 # once per process
    finally:
        REGISTRY.pop("ep.square", None)
        registry.SOURCES.pop("ep.square", None)
        sys.modules.pop("ep_bounds", None)


def test_sys_exit_or_ctrl_c_in_a_theory_file_leaves_nothing_registered(tmp_path):
    """sys.exit while a file loads is the user's error in one line naming the file and the line (it
    was a silent end of the command, exit 0); a Ctrl-C while it loads goes up as KeyboardInterrupt
    (the CLI's one line and 130), and what the file registered before it is gone either way."""
    from theory.plugins import load_file, unload_files, user_exit

    head = ("import sys\nfrom theory import Theorem, register\nfrom theory.expr import A, delta\n"
            "register(Theorem(id='tf.{0}', title='t', category='proved', statement=delta(A) <= 1))\n")
    exits = tmp_path / "exits.py"
    exits.write_text(head.format("exits") + "sys.exit(2)\n")
    stops = tmp_path / "stops.py"
    stops.write_text(head.format("stops") + "raise KeyboardInterrupt\n")
    try:
        with pytest.raises(InvalidInput, match=r"exits\.py: line 5: calls sys\.exit\(2\) while it loads"):
            load_file(exits)
        with pytest.raises(KeyboardInterrupt):
            load_file(stops)
        assert "tf.exits" not in REGISTRY and "tf.stops" not in REGISTRY
        assert user_exit(SystemExit(0)) is None          # not raised by a theory file: not the user's
    finally:
        unload_files()
