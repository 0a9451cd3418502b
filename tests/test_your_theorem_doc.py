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
    assert got == ["theorems", "theorems", "stress", "stress", "stress", "stress", "prove", "prove", "stress", "stress",
                   "stress", "prove", "rollout", "paper"]
    assert "docs/examples/my_bounds.py" in PAGE.read_text()
    example = (ROOT / "docs" / "examples" / "my_bounds.py").read_text()
    for theorem in ("mine.square", "mine.d1", "mine.convex", "mine.guess"):     # the page's ids exist
        assert f'id="{theorem}"' in example
    attention = (ROOT / "docs" / "examples" / "attention_bounds.py").read_text()
    for line in commands():
        theorem = shlex.split(line)[2]
        if theorem.startswith("att."):
            assert f'id="{theorem}"' in attention, theorem
    for snippet in re.findall(r'register\(Theorem\(id="(att\.[a-z.]+)", \.\.\.', PAGE.read_text()):
        assert f'id="{snippet}"' in attention, snippet      # the page's excerpt names ids the file has


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
    attention_outputs(outputs)
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
    assert r"\delta\left(A B\right)" in doc and "simplest kept counterexample" in doc and "| hard | 3 |" in doc
    assert "Hypotheses: $A$ and $B$ are row-stochastic" in doc and "40,000 instances checked" in doc
    # section 6: the counterexample's instance regenerated through regenerate(..., theory=FILE), in a
    # process where the theory file is not loaded
    from numerics.expr import exact_matrix
    from verification.results import campaign_frame
    from verification.stress.checks.plan import regenerate

    frame = campaign_frame(tmp_path / "my.db", guess["campaign"], records=True)
    row = frame[[c == guess["counterexample"] for c in frame["counterexample"]]].iloc[0]
    try:
        m = regenerate(guess["campaign"], row["chunk"], int(row["index"]), theory="docs/examples/my_bounds.py")
    finally:
        unload_files()
    exact = {k: [[str(x) for x in r] for r in exact_matrix(v, k).rows()] for k, v in m.items()}
    assert exact == guess["counterexample"]


def attention_outputs(outputs: dict) -> None:
    """The section on logits, tokens and parameters: the true softmax bound never violated with every
    instance decided, each false variant refuted by a counterexample whose every symbol is exact and
    which violates it exactly (re-checked here from the JSON alone), the residual bound proved at n = 2
    and its guess refuted with the parameter's value."""
    from numerics.expr import compare, compile_statement, sides
    from theory import get
    from theory.plugins import load_file, unload_files

    load_file(ROOT / "docs" / "examples" / "attention_bounds.py")
    try:
        _recheck(outputs, get, compile_statement, sides, compare)
    finally:
        unload_files()


def _recheck(outputs: dict, get, compile_statement, sides, compare) -> None:

    true = outputs[("stress", "att.softmax", False)]
    assert true["verdicts"]["violated"] == 0 and true["counterexample"] is None
    assert true["verdicts"]["undecided"] <= true["instances"] // 10
    for theorem, symbols in (("att.softmax.half", {"L"}), ("att.tokens.half", {"A", "X"}),
                             ("att.lazy.guess", {"A", "alpha"})):
        cex = outputs[("stress", theorem, False)]["counterexample"]
        assert set(cex) == symbols, (theorem, cex)
        c = compile_statement(get(theorem).statement)
        exact = {k: ([[Fraction(x) for x in row] for row in v] if isinstance(v, list) else Fraction(v))
                 for k, v in cex.items()}
        lhs, rhs = sides(c, exact)                    # the exact rationals of the JSON, nothing else
        assert compare(lhs, rhs) == 1, (theorem, cex)         # lhs > rhs exactly: the bound fails there
    proof = outputs[("prove", "att.lazy", False)]
    assert [(r["n"], r["outcome"]) for r in proof["results"]] == [(2, "proved")]
    (refuted,) = outputs[("prove", "att.lazy.guess", False)]["results"]
    assert refuted["outcome"] == "counterexample" and "alpha" in refuted["counterexample"]


def test_the_random_families_are_defined_on_the_page_and_in_stress_help(capsys, monkeypatch):
    """Each family's one-line definition (numerics.sources.random.FAMILY_TEXT) is on the page and at the
    end of `attnbounds stress --help`; no command of the page draws sparse only where it is one-hot."""
    from numerics.sources.random import DIMS_TEXT, FAMILY_TEXT, PARAMETER_TEXT, REAL, STOCHASTIC
    from verification.cli import main

    named = {"softmax-T": "softmax-T<T>", "gauss-": "gauss-<s>"}
    assert {next((v for k, v in named.items() if f.startswith(k)), f) for f in STOCHASTIC + REAL} == set(FAMILY_TEXT)
    page = " ".join(PAGE.read_text().split())
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["stress", "--help"]) == 0
    helped = " ".join(capsys.readouterr().out.split())
    for family, text in FAMILY_TEXT.items():
        assert f"| `{family}` | {text} |" in page, family
        assert f"{family} {text}" in helped, family
    for name, text in (("parameter", PARAMETER_TEXT), ("d", DIMS_TEXT)):     # how parameters and d are drawn
        assert text in page and f"{name} {text}" in helped, name
    assert "at n <= 4 one column, so sparse is hard" in FAMILY_TEXT["sparse"]
    for line in commands():
        argv = shlex.split(line)
        if "--families" in argv and "sparse" in argv[argv.index("--families") + 1].split(","):
            assert max(int(n) for n in argv[argv.index("--sizes") + 1].split(",")) > 4, line


def test_a_sweep_says_when_sparse_is_hard():
    from verification.stress.checks.plan import StressPlan
    from verification.stress.command import sparse_note

    assert "the law of hard" in sparse_note(StressPlan("dobrushin.factor", ("sparse",), (3, 4, 8), 1))
    assert sparse_note(StressPlan("dobrushin.factor", ("sparse",), (8,), 1)) is None
    assert sparse_note(StressPlan("dobrushin.factor", ("dirichlet",), (3,), 1)) is None


@pytest.mark.parametrize("link", ["docs/your-theorem.md"])
def test_the_readme_points_there_first(link):
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## How to add a theorem"):]
    section = section[:section.index("\n## ", 3)] if "\n## " in section[3:] else section
    first = re.search(r"\]\(([^)]+)\)", section)
    assert first is not None and first.group(1) == link
