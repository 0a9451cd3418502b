"""Every figure carries its provenance and is reproducible byte for byte."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

from verification.report.figures import save_figure  # noqa: E402


def _fig():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2, 3], [3, 1, 2])
    return fig


def test_provenance_is_stamped_and_files_are_deterministic(tmp_path):
    paths = [save_figure(_fig(), tmp_path / d, "f", "campaign c; seed 7") for d in ("a", "b")]
    png, pdf = paths[0]
    assert "campaign c; seed 7" in Image.open(png).info["Description"]
    assert "numpy" in Image.open(png).info["Description"]          # versions ride along
    assert b"campaign c; seed 7" in pdf.read_bytes()
    assert png.read_bytes() == paths[1][0].read_bytes()
    assert pdf.read_bytes() == paths[1][1].read_bytes()
    plt.close("all")


def test_provenance_stays_out_of_the_plot_area(tmp_path):
    """The provenance is metadata only: nothing is drawn on the figure (the old footer overprinted
    the x-axis label)."""
    fig = _fig()
    save_figure(fig, tmp_path, "f", "campaign c; seed 7")
    assert fig.texts == []
    plt.close("all")


def test_overlaps_finds_a_planted_footer_and_passes_a_clean_figure():
    from verification.report.figures import COLUMN, overlaps, style

    with plt.rc_context(style()):
        fig, ax = plt.subplots(figsize=COLUMN)
        ax.plot([1, 2, 3], [3, 1, 2])
        ax.set_xlabel("n (tokens)")
        ax.set_ylabel("share")
        ax.legend(["a"])
        assert overlaps(fig) == []
        # the old provenance footer, drawn where it used to overprint the x-axis label
        fig.text(0.5, 0.01, "campaign dobrushin.random; seed 0; numpy 2.0", ha="center", fontsize=5)
        found = overlaps(fig)
        assert any("x-axis label" in f and "campaign dobrushin" in f for f in found), found
        plt.close(fig)
        fig, ax = plt.subplots(figsize=COLUMN)
        ax.plot([1, 2, 3], [3, 1, 2])
        ax.set_ylabel("share")
        ax.text(-0.2, 0.5, "a label on the tick labels", transform=ax.transAxes)   # over the y tick labels
        assert any("tick label" in f for f in overlaps(fig))
        plt.close(fig)


DRAW = """
import sys, warnings
{first}
from verification.report.aggregate import pyplot
from verification.report.figures import save_figure
fig, ax = pyplot().subplots()
ax.plot([1, 2], [2, 1])
save_figure(fig, sys.argv[1], "f", "campaign c")
warnings.warn("the suite's own warning")
"""


def _draw_in_a_fresh_process(tmp_path, first=""):
    """Draw and save a figure in a new interpreter whose MPLCONFIGDIR cannot be made (a path under a
    file): matplotlib then falls back to a temporary folder and logs a warning about it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "a-file").write_text("")
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path / "a-file" / "mpl"))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", DRAW.format(first=first), str(tmp_path / "figs")], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "figs" / "f.png").is_file()
    return proc.stderr


def test_matplotlibs_log_stays_off_the_terminal_and_the_suites_warnings_do_not(tmp_path):
    err = _draw_in_a_fresh_process(tmp_path)
    assert "Matplotlib" not in err and "mkdir" not in err, err
    assert "the suite's own warning" in err            # only matplotlib's log is quieted


def test_the_check_sees_matplotlibs_log_when_the_figure_module_is_not_first(tmp_path):
    """The planted case: pyplot imported before :mod:`verification.report.figures` (the order the
    SAN report had) prints matplotlib's warning on stderr; and a user who configures logging still
    gets it from the figure module's processes."""
    err = _draw_in_a_fresh_process(tmp_path, first="import matplotlib.pyplot")
    assert "Matplotlib created a temporary cache directory" in err
    err = _draw_in_a_fresh_process(tmp_path, first="import logging; logging.basicConfig()")
    assert "Matplotlib created a temporary cache directory" in err


def test_every_figure_module_imports_the_figure_module_before_pyplot():
    """Each module that draws a figure imports :mod:`verification.report.figures` (or the report's
    pyplot entry point, which is imported after it) before it first imports matplotlib's pyplot."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "verification"
    late = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        mpl = re.search(r"^\s*import matplotlib\.pyplot|^\s*plt = (_plt|pyplot)\(\)", text, re.M)
        if mpl is None or path.name == "aggregate.py":
            continue
        fig = re.search(r"^\s*from verification\.report\.figures import", text, re.M)
        if fig is None or fig.start() > mpl.start():
            late.append(str(path.relative_to(root.parent)))
    assert not late, f"pyplot imported before verification.report.figures in {late}"
