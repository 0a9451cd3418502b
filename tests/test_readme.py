"""The README's transformers example runs as written (the documented path from a model to verdicts)."""
import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_block(marker: str) -> str:
    m = re.search(rf"<!-- example: {marker} -->\s*```python\n(.*?)```", README.read_text(), re.S)
    assert m, f"README has no python block after <!-- example: {marker} -->"
    return m.group(1)


@pytest.mark.models
def test_transformers_example_gives_verdicts():
    from theory.verdicts import Verdict

    ns: dict = {}
    exec(compile(readme_block("transformers"), "README.md", "exec"), ns)   # noqa: S102 - our own README
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
    """The README's benchmark table is, line for line, the one `make bench` last wrote
    (tests/bench/README-table.md: machine, load, date, every row with its target met or missed)."""
    table = (README.parent / "tests" / "bench" / "README-table.md").read_text().strip()
    assert table.startswith("Measured by `make bench`") and "| benchmark |" in table
    assert table in README.read_text(), "README's benchmark table differs from tests/bench/README-table.md"
