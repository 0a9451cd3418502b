"""The documentation lives in the repository and cannot drift from the code."""
import ast
import dataclasses
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_readme_link_leaves_the_repository():
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            assert "://" not in target and not target.startswith(".."), (doc.name, target)
            assert (doc.parent / target.split("#")[0]).exists(), (doc.name, target)
        assert "../shared" not in text, doc.name


def test_theorem_list_is_generated_from_the_registry():
    from verification.paper.typeset import theorems_markdown

    assert (ROOT / "docs" / "theorems.md").read_text() == theorems_markdown(), \
        "docs/theorems.md is stale: attnbounds theorems --markdown > docs/theorems.md"


def test_api_reference_covers_every_public_name_and_field():
    import numerics.dobrushin as D

    api = (ROOT / "docs" / "api.md").read_text()
    missing = [n for n in D.__all__ if f"`{n}" not in api]
    for cls in (D.FactorCheck, D.RolloutTightness):
        missing += [f"{cls.__name__}.{f.name}" for f in dataclasses.fields(cls) if f"`{f.name}`" not in api]
    assert not missing, missing
    glossary = api[api.index("## Glossary"):]
    for term in ("content tokens", "only via token 0", "Ahat", "chain", "slack", "certified"):
        assert term in glossary, term


# -- references in docstrings and comments -------------------------------------------------------
SCANNED = ("theory", "numerics", "verification", "attnbounds")
# a path ending in .py/.md (``docs/theory.md``, ``numerics/kernels.py``, ``THEORY.md``, ``../x.md``);
# a bare lower-case ``name.md`` is a file name pattern (``<table>.md``), not a reference, and is not checked
FILE_REF = re.compile(r"(?<![\w./<>*$-])((?:\.\./)*(?:[\w-]+/)*[\w-]+\.(?:py|md))(?![\w-]|\.\w)")
# a dotted module path, optionally with an attribute (``numerics.kernels.pair_scan``,
# ``numerics.dobrushin:factor_slack``, ``theory.registry``)
MODULE_REF = re.compile(r"(?<![\w./-])((?:numerics|verification|theory)(?:\.\w+)+)(?::(\w+))?")
# files outside this repository that docstrings name on purpose: the name as written -> where it lives
EXTERNAL = {"vit_rollout.py": "github.com/jacobgil/vit-explain",
            "FILE.py": "a placeholder: the user's theory file for --theory (docs/examples/my_bounds.py is one)",
            "commands/__init__.py": "pip, pip/_internal/commands/__init__.py"}
# a numbered section after a Markdown file: ``docs/theory.md §3``, ``docs/theory.md, section 1``
SECTION_REF = re.compile(r",? *(?:§ *|section |s\.)(\d+)")


def repository_files() -> set[str]:
    """Paths (relative to the root, '/'-separated) of the files in the repository: tracked or not yet
    added, never ignored (``git ls-files``); without git, the files under the root minus the usual
    build and cache folders."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split("\n")
        files = {f for f in out if f and (ROOT / f).exists()}
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    skip = {".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache", "build", "dist"}
    return {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts)}


def docs_and_comments(source: str) -> list[tuple[int, str]]:
    """(first line, text) of every docstring (module, class, function) and every comment of ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.append((first.lineno, first.value.value))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
    return out


def module_names(path: Path) -> set[str]:
    """Names a module defines or imports at its top level (what ``module.name`` may refer to). With a
    module-level ``__getattr__`` (lazy exports), also every identifier-like string constant in it
    (the table of names it answers)."""
    names = set()
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    if "__getattr__" in names:
        names |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and n.value.isidentifier()}
    return names


def broken_references(rel: str, source: str, files: set[str]) -> list[tuple[int, str]]:
    """(line, reference) for each file or module named in a docstring or comment of ``source``
    (the file ``rel`` of the repository) that does not exist in ``files``."""
    here = rel.rpartition("/")[0]
    basenames = {f.rpartition("/")[2] for f in files}
    bad = []
    for line0, text in docs_and_comments(source):
        for m in FILE_REF.finditer(text):
            ref = m.group(1)
            if ref in EXTERNAL or (ref.endswith(".md") and "/" not in ref and not ref[:-3].isupper()):
                continue
            if "/" in ref:
                ok = not ref.startswith("../") and (ref in files or f"{here}/{ref}" in files)
            else:
                ok = ref in basenames
            section = SECTION_REF.match(text, m.end()) if ok and ref.endswith(".md") else None
            if section and ref in files:                   # the numbered section must exist there
                ok = re.search(rf"^#+ *{section.group(1)}\.", (ROOT / ref).read_text(), re.M) is not None
                ref += section.group(0)
            if not ok:
                bad.append((line0 + text[:m.start()].count("\n"), ref))
        for m in MODULE_REF.finditer(text):
            dotted, attr = m.group(1), m.group(2)
            if dotted.endswith((".py", ".md")):
                continue                                   # a file name: FILE_REF's business
            parts = dotted.split(".")
            k = len(parts)                                 # the longest prefix that is a module
            while k and not ({"/".join(parts[:k]) + ".py", "/".join(parts[:k]) + "/__init__.py"} & files):
                k -= 1
            rest = parts[k:] + ([attr] if attr else [])
            ok = k > 0
            if ok and rest:
                mod = "/".join(parts[:k])
                mod = mod + ".py" if mod + ".py" in files else mod + "/__init__.py"
                names = module_names(ROOT / mod)
                ok = rest[0] in names
            if not ok:
                bad.append((line0 + text[:m.start()].count("\n"), m.group(0)))
    return bad


def test_every_file_and_module_named_in_a_docstring_or_comment_exists():
    """Docstrings and comments of theory/, numerics/, verification/ name only files and modules of
    this repository (``docs/theory.md``, never ``THEORY.md``; ``numerics.rank.gd``, never a module
    that was renamed away)."""
    files = repository_files()
    bad = []
    for rel in sorted(f for f in files if f.endswith(".py") and f.split("/")[0] in SCANNED):
        bad += [f"{rel}:{line}: {ref}" for line, ref in broken_references(rel, (ROOT / rel).read_text(), files)]
    assert not bad, "references to files or modules that do not exist:\n" + "\n".join(bad)


def test_the_reference_check_finds_planted_bad_references():
    """The scan above can fail: planted references to missing files and modules are found, with
    their lines, and the existing ones next to them are not."""
    source = '''"""Module docstring (THEORY.md section 3; docs/theory.md §3; docs/theory.md, section 9).

See numerics/losses.py and numerics/rank/gd.py, README.md, ../shared/DESIGN.md.
"""
# numerics.rank_gd.learned_rank is gone; numerics.rank.gd.learned_rank is not


def f():
    """Calls numerics.kernels.pair_scan and numerics.kernels.no_such_kernel, theory.registry,
    theory.nowhere, verification.store, verification/testing/reference.py, numerics.dobrushin:factor_slack,
    numerics.dobrushin:no_such, tiles.py, vit_rollout.py, missing_module.py, <name>.md, test_*.py,
    table.md, MISSING.md, paper/findings.md.j2."""
'''
    got = broken_references("numerics/planted.py", source, repository_files())
    assert sorted(got) == [(1, "THEORY.md"), (1, "docs/theory.md, section 9"), (3, "../shared/DESIGN.md"),
                           (3, "numerics/losses.py"), (5, "numerics.rank_gd.learned_rank"),
                           (9, "numerics.kernels.no_such_kernel"), (10, "theory.nowhere"),
                           (11, "missing_module.py"), (11, "numerics.dobrushin:no_such"), (12, "MISSING.md")], got


# -- the README is a map of the docs/ pages ------------------------------------------------------
README_MAX_LINES = 151           # a map of at most 150 lines (what it is, the two commands, an example, the command table, where things are); the findings and the detail live in docs/


def readme_docs_links() -> set[str]:
    """The docs/ pages (``docs/x.md``) the README links, anchors dropped."""
    return {t.split("#")[0] for t in re.findall(r"\]\((docs/[^)\s]+)\)", (ROOT / "README.md").read_text())}


def test_readme_is_a_short_map():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to a docs/ page"


def test_readme_links_every_docs_page_and_only_existing_ones():
    linked = readme_docs_links()
    missing = sorted(t for t in linked if not (ROOT / t).is_file())
    assert not missing, f"README links docs pages that do not exist: {missing}"
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    unlinked = sorted(pages - linked)
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_readme_command_table_lists_every_subcommand():
    from verification.commands import COMMANDS

    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Command line"):]
    listed = re.findall(r"^\| `attnbounds (\w+)", table, re.M)
    assert listed == list(COMMANDS), f"README's command table {listed} != verification.commands.COMMANDS"


def test_the_findings_page_keeps_the_generated_findings_block():
    """`attnbounds paper --readme docs/findings.md` rewrites what lies between the markers: both are
    on the findings page, once each and in order, and the README links the page and holds no block."""
    from verification.paper.build import BEGIN, END

    text = (ROOT / "docs" / "findings.md").read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and text.index(BEGIN) < text.index(END)
    readme = (ROOT / "README.md").read_text()
    assert BEGIN not in readme and END not in readme and "](docs/findings.md)" in readme


def test_readme_sections_named_elsewhere_exist():
    """A README section that code, the Makefile or CI names in quotes (the README, then the section's
    title in double quotes) is still a heading of the README, not moved away to a docs/ page."""
    headings = [h.strip().lower() for h in re.findall(r"^#+ (.*)$", (ROOT / "README.md").read_text(), re.M)]
    pattern = re.compile(r"README(?:\.md)?(?:'s)?,? \"([^\"]+)\"")
    files = [f for f in repository_files() if f in ("Makefile", ".ci/run")
             or (f.endswith(".py") and f.split("/")[0] in (*SCANNED, "tests") and f != "tests/test_docs.py")]
    named = {(f, m.group(1)) for f in files for m in pattern.finditer((ROOT / f).read_text())}
    assert named, "expected code to name README sections (Makefile, .ci/run, theory/verdicts.py)"
    gone = sorted((f, s) for f, s in named if not any(h.startswith(s.lower()) for h in headings))
    assert not gone, f"README sections named elsewhere that the README no longer has: {gone}"


def test_the_docs_name_the_subcommands_that_take_the_common_options():
    """README and docs/reliability.md say which subcommands take ``--db``, ``--out`` and ``--seed``
    ("every subcommand but `theorems`"): true of the parser, and ``paper``'s ``--db`` help says it
    only reads the store (never that re-running resumes)."""
    import argparse

    from verification.cli import build_parser
    from verification.commands import COMMANDS

    def options(name):
        sub = next(a for a in build_parser([name])._actions if isinstance(a, argparse._SubParsersAction))
        return {o: a.help for a in sub.choices[name]._actions for o in a.option_strings}

    helps = {name: options(name) for name in COMMANDS}
    without = sorted(n for n, o in helps.items() if not {"--db", "--out", "--seed"} <= set(o))
    for doc in ("README.md", "docs/reliability.md"):
        text = " ".join((ROOT / doc).read_text().split())
        said = re.search(r"Every subcommand but ((?:`\w+`(?:, | and )?)+)", text)
        assert said, f"{doc}: no 'Every subcommand but ...' sentence"
        assert sorted(re.findall(r"`(\w+)`", said.group(1))) == without, doc
    assert "read-only" in helps["paper"]["--db"] and "resumes" not in helps["paper"]["--db"]
    assert "resumes" in helps["stress"]["--db"]

