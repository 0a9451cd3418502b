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
