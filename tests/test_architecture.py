"""The house rules, checked on the source: no import cycles, no underscore imports across modules,
theory/ imports nothing from numerics/ or verification/, numerics/ nothing from verification/, nothing
imports attnbounds/ (the public entry, on top of the three), a
module holds one concept (it says which in its docstring, and no sliver of another module stands
alone), every family has the same roles and the same entry points, no family imports another."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("theory", "numerics", "verification", "attnbounds")


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def imports(path: Path, name: str, known: dict) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) for every import of a project module in ``path``,
    function-level imports included (a lazy import is still an edge)."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.split(".")[0] in PACKAGES]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                mod = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] not in PACKAGES:
                continue
            names = [a.name for a in node.names]
            subs = [n for n in names if f"{mod}.{n}" in known]    # "from pkg import module"
            out += [(f"{mod}.{n}", []) for n in subs]
            rest = [n for n in names if n not in subs]
            if rest or not subs:
                out.append((mod, rest))
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    g = {}
    for name, path in known.items():
        edges = set()
        for mod, _ in imports(path, name, known):
            while mod and mod not in known:
                mod = mod.rpartition(".")[0]
            if mod and mod != name:
                edges.add(mod)
        g[name] = edges
    return g


def find_cycle(g: dict[str, set[str]]):
    color, stack = {}, []

    def visit(u):
        color[u] = 1
        stack.append(u)
        for v in sorted(g.get(u, ())):
            if color.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in color:
                c = visit(v)
                if c:
                    return c
        stack.pop()
        color[u] = 2
        return None

    for u in sorted(g):
        if u not in color:
            c = visit(u)
            if c:
                return c
    return None


def test_no_import_cycles():
    g = graph()
    # a package __init__ that re-exports its own submodules is not a cycle through them
    g = {u: {v for v in vs if not (u.startswith(v + ".") and v == u.rpartition(".")[0])} for u, vs in g.items()}
    cycle = find_cycle(g)
    assert cycle is None, " -> ".join(cycle)


def test_cycle_finder_can_fail():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_layers_and_private_names():
    known = modules()
    bad = []
    for name, path in known.items():
        for mod, names in imports(path, name, known):
            layer, target = name.split(".")[0], mod.split(".")[0]
            if layer == "theory" and target != "theory":
                bad.append(f"{name} imports {mod} (theory/ imports nothing from numerics/ or verification/)")
            if layer == "numerics" and target == "verification":
                bad.append(f"{name} imports {mod} (numerics/ never imports verification/)")
            if layer != "attnbounds" and target == "attnbounds":
                bad.append(f"{name} imports {mod} (attnbounds/ is the public entry: nothing inside imports it)")
            if mod.rpartition(".")[2].startswith("_") and not mod.endswith("__init__"):
                bad.append(f"{name} imports the private module {mod}")
            bad += [f"{name} imports the private name {mod}.{n}" for n in names
                    if n.startswith("_") and n != "__version__"]
    assert not bad, "\n".join(bad)


# -- modules by concept: a module holds one concept a reader looks for, named in its docstring; a
# short module that only one sibling reads is a sliver of that sibling's idea (merge it there) --
SLIVER_LINES = 60


def slivers(known: dict, g: dict[str, set[str]]) -> list[str]:
    """Modules under :data:`SLIVER_LINES` lines (not a package ``__init__``, not a family's role
    module: those have fixed places) whose only reader, apart from their own package's
    ``__init__``, is one module of the same folder."""
    readers: dict[str, set[str]] = {m: set() for m in known}
    for u, vs in g.items():
        for v in vs:
            if v in readers:
                readers[v].add(u)
    out = []
    for name, path in known.items():
        if path is None or path.name == "__init__.py" or name.rpartition(".")[2] in ("checks", "report", "paper", "command"):
            continue
        n = len(path.read_text().splitlines())
        package = name.rpartition(".")[0]
        rs = readers[name] - {package}
        if n < SLIVER_LINES and len(rs) == 1 and next(iter(rs)).rpartition(".")[0] == package:
            out.append(f"{name} ({n} lines) is read by {next(iter(rs))} only: one idea in two files (merge it there)")
    return sorted(out)


def undocumented(known: dict) -> list[str]:
    """Modules without a docstring saying what they hold (an empty package marker is exempt)."""
    bad = []
    for name, path in known.items():
        body = ast.parse(path.read_text()).body
        if not body and path.name == "__init__.py":
            continue
        if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str) and body[0].value.value.strip()):
            bad.append(f"{name}: no docstring saying what it holds")
    return bad


def test_every_module_says_what_it_holds():
    bad = undocumented(modules())
    assert not bad, "\n".join(bad)


def test_the_docstring_check_can_fail(tmp_path):
    (tmp_path / "said.py").write_text('"""The plan."""\nX = 1\n')
    (tmp_path / "mute.py").write_text("import os\nX = 1\n")
    (tmp_path / "blank.py").write_text('"""  """\n')
    known = {"a.said": tmp_path / "said.py", "a.mute": tmp_path / "mute.py", "a.blank": tmp_path / "blank.py"}
    assert undocumented(known) == ["a.mute: no docstring saying what it holds",
                                   "a.blank: no docstring saying what it holds"]


def test_no_sliver_modules():
    bad = slivers(modules(), graph())
    assert not bad, "\n".join(bad)


def test_the_sliver_check_can_fail(tmp_path):
    (tmp_path / "plan.py").write_text('"""A plan."""\nX = 1\n')
    (tmp_path / "big.py").write_text('"""A big module."""\n' + "Y = 2\n" * 80)
    known = {"verification.fam.checks.plan": tmp_path / "plan.py", "verification.fam.checks.sweep": tmp_path / "big.py",
             "verification.fam.checks.search": tmp_path / "big.py", "verification.fam.checks": None}
    g = {"verification.fam.checks.sweep": {"verification.fam.checks.plan"}, "verification.fam.checks.plan": set(),
         "verification.fam.checks": {"verification.fam.checks.plan"}, "verification.fam.checks.search": set()}
    assert slivers(known, g) == ["verification.fam.checks.plan (2 lines) is read by verification.fam.checks.sweep "
                                 "only: one idea in two files (merge it there)"]
    g["verification.fam.checks.search"] = {"verification.fam.checks.plan"}       # a second reader: a shared piece
    assert slivers(known, g) == []


# -- the shape of a family (issue "One shape for every family, one check per theorem, a CLI that
# starts at once"); the families and their roles are read from the one table, verification.commands --

NUMERICS_FAMILIES = ("dobrushin", "rank", "poincare", "san", "modalities", "smt")


def test_every_family_package_has_the_four_roles_and_nothing_else():
    """``verification/<family>/`` holds ``__init__.py`` and exactly the roles ``checks``, ``report``,
    ``paper``, ``command`` (each a module or a subpackage), and its ``__init__`` is a docstring only:
    no import (the CLI imports ``<family>.command``, the paper builder ``<family>.paper``), no SECTION.
    (Written with the reshape of the families; it fails while a family is not yet reshaped.)"""
    from verification.commands import FAMILIES, ROLES

    bad = []
    for package in FAMILIES.values():
        folder = ROOT.joinpath(*package.split("."))
        found = set()
        for entry in folder.iterdir():
            if entry.name in ("__init__.py", "__pycache__"):
                continue
            if entry.is_dir() and not (entry / "__init__.py").is_file():
                bad.append(f"{package}: {entry.name}/ is a folder but not a package")
            found.add(entry.stem if entry.suffix == ".py" else entry.name)
        if found != set(ROLES):
            extra, missing = sorted(found - set(ROLES)), sorted(set(ROLES) - found)
            bad.append(f"{package}: " + "; ".join(([f"not a role: {', '.join(extra)}"] if extra else [])
                                                 + ([f"missing: {', '.join(missing)}"] if missing else [])))
        body = ast.parse((folder / "__init__.py").read_text()).body
        if not body or not (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                            and isinstance(body[0].value.value, str)):
            bad.append(f"{package}/__init__.py: no docstring naming its roles")
        if any(not isinstance(node, ast.Expr) for node in body):
            bad.append(f"{package}/__init__.py: holds more than its docstring (imports, SECTION, ...)")
    assert not bad, "\n".join(bad)


# the command line of each family's subcommand that runs the main job's quick plan (its --full: the full plan)
VERIFY_ARGV = {"dobrushin": ["dobrushin"], "rank": ["rank"], "poincare": ["poincare"], "modalities": ["modalities"],
               "san": ["san"], "prove": ["prove"], "stress": None, "trained": None}


def test_every_family_exposes_the_same_entry_points():
    """The names of :data:`verification.family.ENTRY_POINTS` in every role of every family, the
    plan's methods, and the shared signatures of ``run`` and ``report``."""
    import inspect
    from importlib import import_module

    from verification.commands import FAMILIES
    from verification.family import ENTRY_POINTS, PLAN_METHODS
    from verification.plan import Plan, RunResult

    bad = []
    for section, package in FAMILIES.items():
        for role, names in ENTRY_POINTS.items():
            module = import_module(f"{package}.{role}")
            bad += [f"{package}.{role} has no {n}" for n in names if not hasattr(module, n)]
        checks, report = import_module(f"{package}.checks"), import_module(f"{package}.report")
        bad += [f"{package}.checks.Plan has no {m}" for m in PLAN_METHODS if not hasattr(getattr(checks, "Plan", None), m)]
        if list(inspect.signature(checks.run).parameters) != ["plan", "store", "executor", "console"]:
            bad.append(f"{package}.checks.run{inspect.signature(checks.run)}: not run(plan, store, executor, console)")
        if list(inspect.signature(report.report).parameters) != ["store", "plan", "out_dir", "console"]:
            bad.append(f"{package}.report.report{inspect.signature(report.report)}: not report(store, plan, out_dir, console)")
        if not (isinstance(getattr(checks, "FULL_SCALES", None), str) and checks.FULL_SCALES.strip()):
            bad.append(f"{package}.checks.FULL_SCALES: not a sentence saying what --full scales")
        paper = import_module(f"{package}.paper")
        for fn in ("paper_part", "needs"):
            if list(inspect.signature(getattr(paper, fn)).parameters) != ["store", "plan"]:
                bad.append(f"{package}.paper.{fn}{inspect.signature(getattr(paper, fn))}: not {fn}(store, plan)")
        if inspect.signature(checks.run).return_annotation not in ("RunResult", RunResult):
            bad.append(f"{package}.checks.run: does not return a RunResult")
        plan = checks.Plan.for_verify(0, False)
        if not isinstance(plan, Plan):
            bad.append(f"{package}.checks.Plan: not of the protocol verification.plan.Plan")
        elif not (isinstance(plan.command(), str) and plan.command().startswith("attnbounds ")
                  and isinstance(plan.provenance(), dict) and plan.provenance().get("seed") == 0):
            bad.append(f"{package}.checks.Plan: command() or provenance() not a command line and a dict with the seed")
    assert not bad, "\n".join(bad)


def seed_or_full_parameters(path: Path) -> list[str]:
    """Public functions (module level or methods) of ``path`` with a parameter named seed or full."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            names = {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
            if names & {"seed", "full"}:
                out.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{node.lineno} "
                           f"{node.name}({', '.join(sorted(names & {'seed', 'full'}))})")
    return out


def test_no_public_function_of_a_familys_report_or_paper_rebuilds_the_plan():
    """A family's report and paper take the plan they are given (verification.plan), never (seed,
    full) to rebuild it: no public function there has a parameter named seed or full."""
    from verification.commands import FAMILIES

    bad = []
    for package in FAMILIES.values():
        folder = ROOT.joinpath(*package.split("."))
        for role in ("report", "paper"):
            paths = [folder / f"{role}.py"] if (folder / f"{role}.py").is_file() else sorted((folder / role).rglob("*.py"))
            for path in paths:
                bad += seed_or_full_parameters(path)
    assert not bad, "\n".join(bad)


def test_the_seed_or_full_check_can_fail(tmp_path):
    planted = tmp_path / "p.py"
    planted.write_text("def part(store, seed=0, full=False):\n    pass\n\ndef _private(seed):\n    pass\n\n"
                       "class P:\n    def needs(self, store, *, full):\n        pass\n")
    assert [b.split(" ", 1)[1] for b in seed_or_full_parameters(planted)] == ["part(full, seed)", "needs(full)"]


@pytest.mark.parametrize("section", sorted(VERIFY_ARGV))
def test_quick_and_full_mean_the_main_jobs_plans(section, tmp_path):
    """Everywhere, ``--full`` is the plan of ``attnbounds verify --full`` and no ``--full`` the main
    job's quick plan: the family's own command line plans the same campaigns as its main-job section
    (stress and trained: their commands run one sweep / one model, checked by their own tests)."""
    from verification.cli import build_parser
    from verification.family import role

    Plan = role(section, "checks").Plan
    quick, full = Plan.for_verify(0, False), Plan.for_verify(0, True)
    assert type(quick) is Plan and quick != full
    argv = VERIFY_ARGV[section]
    if argv is None:
        return
    common = ["--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")]
    for extra, want in (([], quick), (["--full"], full)):
        got = Plan.from_args(build_parser(argv).parse_args(argv + common + extra))
        assert got.campaigns() == want.campaigns(), (section, extra)


def test_the_stress_and_rollout_commands_plan_the_main_jobs_pieces(tmp_path):
    """``attnbounds stress`` runs one sweep, ``attnbounds rollout`` one model: with the main job's
    sizes they plan exactly its sweep and its model run (``rollout --full``: the full plan's inputs)."""
    from verification.cli import build_parser
    from verification.family import role

    def plan(section, argv):
        args = build_parser(argv).parse_args(argv + ["--db", str(tmp_path / "r.db")])
        return role(section, "checks").Plan.from_args(args)

    for full, n in ((False, "320000"), (True, "1600000")):
        main = role("stress", "checks").Plan.for_verify(0, full)
        assert plan("stress", ["stress", "dobrushin.factor", "--instances", n]).sweeps == main.sweeps[:1]
    quick, full = (role("trained", "checks").Plan.for_verify(0, f).models[0] for f in (False, True))
    assert plan("trained", ["rollout", "--limit", "120", "--max-tokens", "128"]).models == (quick,)
    assert plan("trained", ["rollout", "--full"]).models == (full,)


def test_every_numerics_family_exports_a_public_api():
    """``numerics/<family>/__init__.py`` declares its public API: a non-empty ``__all__`` whose
    names all resolve. (Written with the reshape; it fails while a package is not yet reshaped.)"""
    from importlib import import_module

    bad = []
    for name in NUMERICS_FAMILIES:
        module = import_module(f"numerics.{name}")
        public = getattr(module, "__all__", None)
        if not public:
            bad.append(f"numerics.{name}: no __all__ (or an empty one)")
            continue
        missing = [n for n in public if not hasattr(module, n)]
        if missing:
            bad.append(f"numerics.{name}.__all__ names what it does not define: {', '.join(missing)}")
    assert not bad, "\n".join(bad)


def cli_imports(path: Path, name: str, known: dict) -> list[str]:
    """The imports of ``verification.cli`` in ``path``: statements (function-level included) and
    ``import_module("verification.cli...")`` calls."""
    out = [mod for mod, _ in imports(path, name, known) if mod == "verification.cli" or mod.startswith("verification.cli.")]
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "import_module"
                and node.args and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).startswith("verification.cli")):
            out.append(node.args[0].value)
    return out


def is_paper_module(name: str) -> bool:
    """verification/paper/ and every family's paper role (``verification.<family>.paper[...]``)."""
    parts = name.split(".")
    return parts[:2] == ["verification", "paper"] or (len(parts) >= 3 and parts[0] == "verification"
                                                       and parts[2] == "paper")


def test_the_paper_never_imports_the_cli():
    known = modules()
    bad = [f"{name} imports {mod}" for name, path in known.items() if is_paper_module(name)
           for mod in cli_imports(path, name, known)]
    assert [n for n in known if is_paper_module(n)], "no paper module found: the test would pass vacuously"
    assert not bad, "\n".join(bad)


def reaches(g: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        u = todo.pop()
        if u == goal:
            return True
        if u not in seen:
            seen.add(u)
            todo += sorted(g.get(u, ()))
    return False


def back_edges(g: dict[str, set[str]]) -> list[str]:
    """Modules that import a package containing them whose ``__init__`` imports them back (a cycle
    that :func:`test_no_import_cycles` does not see, as it drops a package's edges to its own
    submodules): ``theory.registry`` importing ``theory`` to load the families was one."""
    return sorted(f"{u} imports its own package {v}, whose __init__ imports {u}" for u, vs in g.items()
                  for v in vs if u.startswith(v + ".") and reaches(g, v, u))


def test_no_module_imports_back_into_its_own_package():
    bad = back_edges(graph())
    assert not bad, "\n".join(bad)


def test_the_shape_checks_can_fail(tmp_path):
    """The checkers above on sources that break each rule."""
    (tmp_path / "paper.py").write_text("import verification.cli\nfrom importlib import import_module\n"
                                       "def f():\n    import_module('verification.cli')\n")
    (tmp_path / "registry.py").write_text("def load():\n    from theory import load_all\n")
    known = {"verification.toy.paper": tmp_path / "paper.py", "verification.cli": None,
             "theory": None, "theory.registry": tmp_path / "registry.py"}
    assert is_paper_module("verification.toy.paper") and is_paper_module("verification.paper.build")
    assert not is_paper_module("verification.toy.report")
    assert cli_imports(tmp_path / "paper.py", "verification.toy.paper", known) == ["verification.cli"] * 2
    assert [m for m, _ in imports(tmp_path / "registry.py", "theory.registry", known)] == ["theory"]
    assert back_edges({"theory": {"theory.registry"}, "theory.registry": {"theory"}}) == [
        "theory.registry imports its own package theory, whose __init__ imports theory.registry"]
    assert back_edges({"numerics": {"numerics.device"}, "numerics.device": set(), "numerics.x": {"numerics"}}) == []


# -- one owner for each piece: a family never imports another family's modules; what several
# families use lives in numerics/ (the theorem's own numerics: numerics.dobrushin owns the D1/D2
# check every family runs) or in a shared package of verification/ (campaign, store, executors,
# options, report, paper, measure: the attention measurement and the text-model campaigns) --
def cross_family_edges(g: dict[str, set[str]]) -> set[tuple[str, str, str, str]]:
    """(importer, imported, importer's family, imported's family) for every import of one
    verification family's module by another family's."""
    from verification.commands import FAMILIES

    def family(mod: str):
        return next((pkg for pkg in FAMILIES.values() if mod == pkg or mod.startswith(pkg + ".")), None)

    out = set()
    for u, vs in g.items():
        for v in vs:
            fu, fv = family(u), family(v)
            if fu and fv and fu != fv:
                out.add((u, v, fu, fv))
    return out


def test_no_family_imports_another_family():
    bad = sorted(f"{u} imports {v} (a family imports no other family: shared code lives in numerics/ or in "
                 f"verification's shared packages, e.g. verification.measure)" for u, v, _, _ in cross_family_edges(graph()))
    assert not bad, "\n".join(bad)


def test_the_cross_family_check_can_fail():
    g = {"verification.dobrushin.checks": {"verification.stress.checks.sweep", "numerics.dobrushin.batch"},
         "verification.stress.checks.sweep": {"verification.campaign"}}
    assert cross_family_edges(g) == {("verification.dobrushin.checks", "verification.stress.checks.sweep",
                                      "verification.dobrushin", "verification.stress")}


def shared_constants(sources: dict[str, str], names: tuple = ("ALPHA",)) -> dict[str, list[str]]:
    """Module-level assignments of each of ``names`` (a shared constant: one owner) -> the modules
    that assign it."""
    out: dict[str, list[str]] = {n: [] for n in names}
    for mod, text in sources.items():
        for node in ast.parse(text).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id in out:
                    out[t.id].append(mod)
    return out


def test_the_significance_level_is_defined_once():
    found = shared_constants({m: p.read_text() for m, p in modules().items()})
    assert found == {"ALPHA": ["theory.verdicts"]}


def test_the_one_owner_check_can_fail():
    found = shared_constants({"a": "ALPHA = 0.05\n", "b": "x = 1\nALPHA: float = 0.05\n", "c": "def f():\n    ALPHA = 1\n"})
    assert found == {"ALPHA": ["a", "b"]}
