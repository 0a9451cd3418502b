"""House rules of the findings stage (issue 61), checked on the source: no module over
:data:`MAX_LINES` lines; no report or paper module parses a number out of a string (no
``split("/")``, ``split(" (")``, no regular expression) or imports scipy; statistics only in
:mod:`verification.stats`; one table of verdict codes (:class:`theory.verdicts.Code`); every
family has a ``findings`` role with ``findings(store, plan)``. Each check is shown able to fail."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("theory", "numerics", "verification", "attnbounds")
MAX_LINES = 450


def sources(*packages: str) -> dict[str, Path]:
    return {str(p.relative_to(ROOT)): p for pkg in packages for p in sorted((ROOT / pkg).rglob("*.py"))}


def long_modules(paths: dict[str, Path]) -> list[str]:
    return [f"{name}: {n} lines" for name, path in paths.items()
            if (n := len(path.read_text().splitlines())) > MAX_LINES]


def test_no_module_is_over_the_line_limit():
    assert long_modules(sources(*PACKAGES)) == []


def test_the_line_limit_check_can_fail(tmp_path):
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules({"big.py": tmp_path / "big.py"}) == [f"big.py: {MAX_LINES + 1} lines"]


def rendering_modules() -> dict[str, Path]:
    """The modules that render findings: every family's ``report`` and ``paper`` (module or
    subpackage) and the shared ``verification/report/``."""
    from verification.commands import FAMILIES

    out = sources("verification/report")
    for package in FAMILIES.values():
        folder = ROOT.joinpath(*package.split("."))
        for role in ("report", "paper"):
            out.update({str(p.relative_to(ROOT)): p for p in sorted((folder / role).rglob("*.py"))}
                       if (folder / role).is_dir() else
                       {str((folder / f"{role}.py").relative_to(ROOT)): folder / f"{role}.py"})
    return out


PARSE_BACK = (re.compile(r"""\.split\(\s*["'](?:/| \()["']"""), re.compile(r"^\s*(?:import re\b|from re import)", re.M),
              re.compile(r"\b(?:re|_re)\.(?:search|match|fullmatch|findall|finditer|sub)\("))


def parses_back(paths: dict[str, Path]) -> list[str]:
    """Lines of ``paths`` that split a formatted string on "/" or " (", or run a regular expression."""
    bad = []
    for name, path in paths.items():
        text = path.read_text()
        for pattern in PARSE_BACK:
            for m in pattern.finditer(text):
                bad.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0).strip()}")
    return bad


def test_no_report_or_paper_module_parses_a_number_back():
    assert parses_back(rendering_modules()) == []


def test_the_parse_back_check_can_fail(tmp_path):
    (tmp_path / "paper.py").write_text('k, n = map(int, cell.split("/"))\nv = cell.split(" (")[0]\n'
                                       'import re\nm = re.search(r"\\d+", cell)\n')
    assert len(parses_back({"paper.py": tmp_path / "paper.py"})) == 4


def imports_of(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            out.add(node.module or "")
    return out


def test_no_report_or_paper_module_imports_scipy():
    bad = [name for name, path in {**rendering_modules(), **sources("verification/paper")}.items()
           if any(m.split(".")[0] == "scipy" for m in imports_of(path))]
    assert bad == []


def test_statistics_only_in_verification_stats():
    """Under verification/, scipy's statistics and the Wilson interval only in verification/stats:
    every decision of a check or a findings stage goes through it."""
    bad = [name for name, path in sources("verification").items()
           if not name.startswith("verification/stats") and
           (any(m.startswith("scipy.stats") or m == "scipy" and "stats" in path.read_text() for m in imports_of(path))
            or re.search(r"^def wilson\(", path.read_text(), re.M))]
    assert bad == []


CODE_TABLE = re.compile(r"^\s*(?:HOLDS|TIGHT|VIOLATED|UNDECIDED|NOT_APPLICABLE)\b[^=\n]*=\s*\(?\s*\d", re.M)


def code_tables(paths: dict[str, Path]) -> list[str]:
    return [name for name, path in paths.items() if CODE_TABLE.search(path.read_text())]


def test_one_verdict_code_table():
    """Integer verdict codes are defined once, by :class:`theory.verdicts.Code`."""
    paths = sources(*PACKAGES)
    assert code_tables({k: v for k, v in paths.items() if k != "theory/verdicts.py"}) == []
    assert code_tables({"theory/verdicts.py": paths["theory/verdicts.py"]}) == ["theory/verdicts.py"]


def test_the_code_table_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text("HOLDS, TIGHT, VIOLATED, UNDECIDED = 0, 1, 2, 3\n")
    assert code_tables({"m.py": tmp_path / "m.py"}) == ["m.py"]


def test_every_family_has_findings():
    """``verification.<family>.findings.findings(store, plan)`` exists for every family."""
    import inspect
    from importlib import import_module

    from verification.commands import FAMILIES

    for package in FAMILIES.values():
        fn = getattr(import_module(f"{package}.findings"), "findings")
        assert list(inspect.signature(fn).parameters)[:2] == ["store", "plan"], package


LAYOUT_ROW = re.compile(r"^\| `verification/(\w+)/` \| (.*) \|$", re.M)
SUBPACKAGE = re.compile(r"`(\w+)/` \{([^}]*)\}")


def documented_layout(text: str) -> dict[str, dict[str, set[str]]]:
    """family -> role -> the modules of its subpackage, from docs/architecture.md's layout table."""
    out = {}
    for family, cell in LAYOUT_ROW.findall(text):
        out[family] = {role: {m.strip() for m in mods.split(";")[0].split(",") if m.strip()}
                       for role, mods in SUBPACKAGE.findall(cell)}
    return out


def actual_layout() -> dict[str, dict[str, set[str]]]:
    from verification.commands import FAMILIES

    out = {}
    for package in FAMILIES.values():
        folder = ROOT.joinpath(*package.split("."))
        out[folder.name] = {d.name: {p.stem for p in d.glob("*.py") if p.stem != "__init__"}
                            for d in sorted(folder.iterdir()) if d.is_dir() and (d / "__init__.py").is_file()}
    return out


def test_the_documented_layout_is_the_layout():
    """docs/architecture.md's table of subpackages names every family and, per subpackage, its modules."""
    assert documented_layout((ROOT / "docs" / "architecture.md").read_text()) == actual_layout()


def test_the_layout_check_can_fail():
    doc = documented_layout("| `verification/rank/` | `checks/` {linear, attention; the plan in `__init__`} |")
    assert doc == {"rank": {"checks": {"linear", "attention"}}} != {"rank": actual_layout()["rank"]}


LATEX = re.compile(r"\\[A-Za-z]{2,}|\$[^$\n]*[\\^_{][^$\n]*\$")
LATEX_ALLOWED = ("verification/paper/",)


def latex_strings(paths: dict[str, Path]) -> list[str]:
    """String literals (docstrings aside) of ``paths`` that hold LaTeX: a command (two letters or
    more after a backslash) or inline math with a backslash, a sub- or superscript or a brace."""
    bad = []
    for name, path in paths.items():
        tree = ast.parse(path.read_text())
        docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        bad += [f"{name}:{n.lineno}: {n.value[:60]!r}" for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs and LATEX.search(n.value)]
    return bad


def test_only_the_paper_holds_latex():
    """Under verification/, LaTeX (captions' math, symbols, TeX documents) only in verification/paper/."""
    paths = {k: v for k, v in sources("verification").items() if not k.startswith(LATEX_ALLOWED)}
    assert latex_strings(paths) == []


def test_the_latex_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text('"""A docstring may say $\\\\delta(A)$."""\nCAPTION = "median $\\\\delta(R_l)$"\n'
                                   'PATTERN = r"^n(?P<n>\\\\d+)$"\n')
    assert [b.split(":")[1] for b in latex_strings({"m.py": tmp_path / "m.py"})] == ["2"]


def test_one_matplotlib_entry_point():
    """Figures get pyplot from :func:`verification.report.aggregate.pyplot` (the headless backend,
    chosen once); no other module selects a backend or imports matplotlib.pyplot."""
    bad = [name for name, path in sources(*PACKAGES).items() if name != "verification/report/aggregate.py"
           and ("matplotlib.pyplot" in imports_of(path) or "matplotlib.use(" in path.read_text())]
    assert bad == []
