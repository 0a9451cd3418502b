"""The house rules, checked on the source: no import cycles, no underscore imports across modules,
theory/ imports nothing from numerics/ or verification/, numerics/ nothing from verification/, no
flat folder over eight modules, modules under 400 lines."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("theory", "numerics", "verification")


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
            if mod.rpartition(".")[2].startswith("_") and not mod.endswith("__init__"):
                bad.append(f"{name} imports the private module {mod}")
            bad += [f"{name} imports the private name {mod}.{n}" for n in names
                    if n.startswith("_") and n != "__version__"]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("pkg", PACKAGES)
def test_folders_stay_small_and_modules_short(pkg):
    for folder in [ROOT / pkg] + [p for p in (ROOT / pkg).rglob("*") if p.is_dir() and p.name != "__pycache__"]:
        mods = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        assert len(mods) <= 8, f"{folder.relative_to(ROOT)} holds {len(mods)} modules: make a package"
        for p in mods:
            n = len(p.read_text().splitlines())
            assert n <= 400, f"{p.relative_to(ROOT)} has {n} lines (split it by concept)"
