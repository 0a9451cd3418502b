"""docs/your-theorem.md, run: every ``$ attnbounds`` line of the page, in order, in an empty folder
holding a copy of docs/examples/, must exit 0; the JSON lines say what the page says they say (a
true bound never violated, a false one refuted with an exact counterexample, proved at n = 2), and
the document the last command writes holds the statement, the table and the counterexample."""
import json
import re
import shlex
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "your-theorem.md"


def commands() -> list[str]:
    blocks = re.findall(r"```console\n(.*?)```", PAGE.read_text(), re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ attnbounds ")]


def test_the_page_names_its_commands_and_its_example():
    got = [shlex.split(c)[1] for c in commands()]
    assert got == ["theorems", "stress", "stress", "stress", "prove", "rollout", "paper"]
    assert "docs/examples/my_bounds.py" in PAGE.read_text()
    example = (ROOT / "docs" / "examples" / "my_bounds.py").read_text()
    for theorem in ("mine.square", "mine.d1", "mine.convex", "mine.guess"):     # the page's ids exist
        assert f'id="{theorem}"' in example


def test_every_command_of_the_page_runs(tmp_path, monkeypatch, capsys):
    from theory.plugins import unload_files
    from verification.cli import main

    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "docs" / "examples")
    monkeypatch.chdir(tmp_path)
    outputs = {}
    try:
        for line in commands():
            argv = shlex.split(line)[1:]
            rc = main(argv)
            out = capsys.readouterr().out
            assert rc == 0, f"{line}: exit {rc}\n{out[-2000:]}"
            if "--json" in argv:
                outputs[(argv[0], argv[1], "--search" in argv)] = json.loads(out.strip().splitlines()[-1])
    finally:
        unload_files()
    square = outputs[("stress", "mine.square", False)]
    assert square["verdicts"]["violated"] == 0 and square["counterexample"] is None and square["instances"] == 40_000
    guess = outputs[("stress", "mine.guess", False)]
    assert guess["verdicts"]["violated"] > 0
    for rows in guess["counterexample"].values():
        assert all(sum(Fraction(x) for x in row) == 1 for row in rows)
    assert outputs[("stress", "mine.guess", True)]["counterexample"] is not None
    proof = outputs[("prove", "mine.square", False)]
    assert [(r["n"], r["outcome"]) for r in proof["results"]] == [(2, "proved")]
    doc = (tmp_path / "my-doc" / "own.md").read_text()
    assert r"\delta\left(A B\right)" in doc and "simplest kept counterexample" in doc and "| sparse | 3 |" in doc


@pytest.mark.parametrize("link", ["docs/your-theorem.md"])
def test_the_readme_points_there_first(link):
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## How to add a theorem"):]
    section = section[:section.index("\n## ", 3)] if "\n## " in section[3:] else section
    first = re.search(r"\]\(([^)]+)\)", section)
    assert first is not None and first.group(1) == link
