"""CSV tables are plain CSV (issue 48, item 7): a header and the rows, no comment lines, so that
``pandas.read_csv(path)`` reads every table the renderer writes as it is; the caption and the
provenance line are in the Markdown file of the same name beside it."""
from __future__ import annotations

import math

import pandas as pd
import pytest

import verification.report.tables as tables
from verification.cli import main
from verification.report.tables import Table, write_table

# cells a CSV reader trips on: commas, quotes, a newline, a leading '#', None, a bool, big and tiny floats
COLUMNS = ["family", "n", "share, of tight", "slack", "note", "ok"]
ROWS = [["dirichlet", 2, 0.25, 1.5e-12, "a, b; and \"quoted\"", True],
        ["softmax-T0.25", 64, None, -3.0, "# not a comment", False],
        ["causal", 3, 1.0, 12345678.5, "two\nlines", True]]
CAPTION = "Shares of tight matrices, per family and n (D1, equality)"
PROVENANCE = "campaign stress.dobrushin.factor-v2-seed0-cellsa19b5fab, seed 0, chunks 32"


def same_cell(read, stored) -> bool:
    """A cell pandas read back equals the stored one (None is a missing value; numbers compare
    as numbers, since a column with a missing value is read as floats)."""
    if stored is None:
        return isinstance(read, float) and math.isnan(read)
    if isinstance(stored, bool):
        return bool(read) is stored
    if isinstance(stored, (int, float)):
        return float(read) == float(stored)
    return read == stored


def assert_reads_back(path, rows, columns) -> None:
    frame = pd.read_csv(path)                      # plain: no skiprows, no comment character
    assert list(frame.columns) == list(columns)
    assert frame.shape == (len(rows), len(columns))
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            assert same_cell(frame.iat[r, c], cell), (path.name, r, columns[c], frame.iat[r, c], cell)


def test_a_table_reads_back_with_pandas_as_it_was_written(tmp_path):
    paths = write_table(ROWS, COLUMNS, "stress-factor", CAPTION, PROVENANCE, tmp_path)
    assert_reads_back(paths["csv"], ROWS, COLUMNS)
    text = paths["csv"].read_text()
    assert not text.startswith("#") and CAPTION not in text and PROVENANCE not in text
    md = paths["md"].read_text()                   # caption and provenance: beside it, in the Markdown
    assert md.startswith(f"**{CAPTION}**") and f"_Provenance: {PROVENANCE}; " in md and "numpy" in md


def test_a_table_object_writes_the_same_csv_as_its_rows(tmp_path):
    t = Table.from_rows("demo", ROWS, COLUMNS, CAPTION, PROVENANCE)
    paths = t.write(tmp_path)
    assert_reads_back(paths["csv"], t.rows(), t.columns())
    view = t.select(["n", "family"], name="demo-view")
    assert_reads_back(view.write(tmp_path)["csv"], view.rows(), ["n", "family"])


def test_the_check_fails_on_the_old_commented_csv(tmp_path):
    """The planted case: the former layout (``# caption`` and ``# provenance`` lines above the
    header, both with commas) is not read back: a ParserError, or a frame whose header is the
    caption, for the same rows."""
    paths = write_table(ROWS, COLUMNS, "stress-factor", CAPTION, PROVENANCE, tmp_path)
    old = tmp_path / "old.csv"
    old.write_text(f"# {CAPTION}\n# provenance: {PROVENANCE}; numpy 2.0\n" + paths["csv"].read_text())
    with pytest.raises((AssertionError, pd.errors.ParserError)):
        assert_reads_back(old, ROWS, COLUMNS)
    stress_like = tmp_path / "stress-factor-old.csv"    # the reported failure: more fields below than above
    stress_like.write_text("# D1 on random matrices\n# provenance: campaign c, seed 0, numpy 2.0\n"
                           "family,n,instances,tight\ndirichlet,2,10000,0.5\n")
    with pytest.raises(pd.errors.ParserError):
        pd.read_csv(stress_like)


def test_every_csv_a_command_writes_reads_with_pandas(tmp_path, monkeypatch, capsys):
    """A stress run's tables, through the one renderer: each CSV it writes reads with
    ``pandas.read_csv`` and holds the rows the report handed to the renderer."""
    written = {}
    real = tables.write_table

    def recording(rows, columns, name, *args, **kw):
        written[name] = ([list(r) for r in rows], list(columns))
        return real(rows, columns, name, *args, **kw)

    monkeypatch.setattr(tables, "write_table", recording)
    out = tmp_path / "out"
    assert main(["stress", "dobrushin.factor", "--family", "dirichlet", "--sizes", "3", "--instances", "10000",
                 "--db", str(tmp_path / "s.db"), "--out", str(out)]) == 0
    capsys.readouterr()
    csvs = sorted((out / "tables").glob("*.csv"))
    assert csvs and {p.stem for p in csvs} == set(written)
    for path in csvs:
        rows, columns = written[path.stem]
        assert_reads_back(path, rows, columns)
        assert (path.with_suffix(".md")).read_text().count("_Provenance: ") == 1
