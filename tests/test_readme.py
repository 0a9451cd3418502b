"""The README's five-line example and the transformers example of docs/examples.md run as written
(the documented path from a model to verdicts), and docs/benchmarks.md holds the last `make bench` table."""
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EXAMPLES = ROOT / "docs" / "examples.md"
BENCHMARKS = ROOT / "docs" / "benchmarks.md"


def example_block(marker: str, doc: Path = README) -> str:
    m = re.search(rf"<!-- example: {marker} -->\s*```python\n(.*?)```", doc.read_text(), re.S)
    assert m, f"{doc.name} has no python block after <!-- example: {marker} -->"
    return m.group(1)


def test_five_line_example_checks_d1(capsys):
    from numerics.dobrushin import factor_slack

    code = example_block("quick")
    assert len(code.strip().splitlines()) <= 5, "the README's example is five lines"
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)                    # noqa: S102 - our own README
    A, d1 = ns["A"], ns["d1"]
    assert A.shape == (1000, 4, 4) and d1.equality.shape == d1.slack.shape == (1000,)
    assert (d1.slack >= 0).all() and ((d1.slack == 0) == d1.equality).all()   # D1 holds; tight iff slack 0
    assert 0 < d1.equality.mean() < 1                               # equality has positive probability
    assert np.array_equal(factor_slack(A), d1.slack)
    delta, holds, share = capsys.readouterr().out.split()
    assert holds == "True" and 0 < float(delta) <= 1 and float(share) == d1.equality.mean()


@pytest.mark.models
def test_transformers_example_gives_verdicts():
    from theory.verdicts import Verdict

    ns: dict = {}
    exec(compile(example_block("transformers", EXAMPLES), "docs/examples.md", "exec"), ns)   # noqa: S102
    rt, d1, out = ns["rt"], ns["d1"], ns["out"]
    L = len(out.attentions)
    assert L == 6 and rt.chain.shape == (1, L) and d1.equality.shape == (L, 1)
    assert all(isinstance(v, Verdict) for v in rt.chain.ravel())
    assert rt.chain[0, 0] == Verdict.TIGHT                    # R_1 = Ahat_1: the chain starts tight
    # the tuple is taken as layers: the same verdicts as the stacked (batch, layers, heads, T, T) array
    stacked = np.stack([a.numpy() for a in out.attentions], axis=1)
    again = ns["rollout_tightness"](stacked)
    assert [v.value for v in again.chain.ravel()] == [v.value for v in rt.chain.ravel()]


def test_a_tuple_of_layers_with_different_shapes_is_a_clear_error():
    from numerics.dobrushin import rollout

    a = np.full((1, 2, 3, 3), 1 / 3)
    b = np.full((1, 2, 4, 4), 1 / 4)
    with pytest.raises(ValueError, match="layer 1 has shape"):
        rollout((a, b))
    assert rollout((a, a)).shape == (1, 2, 3, 3)


def test_benchmark_table_is_the_last_make_bench_run():
    """docs/benchmarks.md's benchmark table is, line for line, the one `make bench` last wrote
    (tests/bench/README-table.md: machine, load, date, every row with its target met or missed);
    the README links that page and holds no copy of its own to go stale."""
    table = (ROOT / "tests" / "bench" / "README-table.md").read_text().strip()
    assert table.startswith("Measured by `make bench`") and "| benchmark |" in table
    assert table in BENCHMARKS.read_text(), "docs/benchmarks.md's table differs from tests/bench/README-table.md"
    readme = README.read_text()
    assert "](docs/benchmarks.md)" in readme and "| benchmark |" not in readme
