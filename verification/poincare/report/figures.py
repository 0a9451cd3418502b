"""Figures of the Poincare campaign (paper/figures, PNG + PDF), drawn from the rows of
:func:`verification.poincare.report.tables.bounds_table` (stored records only): C_P against lambda
and against beta with the bounds, one file per family.
"""
from __future__ import annotations

from pathlib import Path

from verification.report.figures import save_figure


def constant_figures(rows: list[list], fig_dir: Path, prov: str) -> list[Path]:
    """``poincare_<family>.png`` / ``.pdf``: C_P and its bounds against lambda and against beta."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    written = []
    fams = sorted({r[0] for r in rows})
    for fam in fams:
        mine = [r for r in rows if r[0] == fam]
        betas, lams = sorted({r[1] for r in mine}), sorted({r[2] for r in mine})
        if len(betas) * len(lams) < 2:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, (xs_name, fixed_name, xi, fi, fixed) in zip(
                axes, (("lambda", "beta", 2, 1, betas[len(betas) // 2]), ("beta", "lambda", 1, 2, lams[len(lams) // 2]))):
            sel = sorted((r for r in mine if r[fi] == fixed), key=lambda r: r[xi])
            x = [r[xi] for r in sel]
            C = [r[3] for r in sel]
            ax.plot(x, C, "ko-", label="C_P (estimate)")
            ax.plot(x, [r[5] for r in sel], "k:", label="1/(beta lambda)")
            for col, lab, sty in ((6, "Bakry-Emery", "b^--"), (9, "Holley-Stroock", "rs--")):
                pts = [(xx, r[col]) for xx, r in zip(x, sel) if r[col] is not None and r[col] < 1e6 * max(C)]
                if pts:
                    ax.plot(*zip(*pts), sty, label=lab)
            for col, lab, sty in ((12, "Var theta (lower)", "gv-."), (13, "quadratic (lower)", "c.-.")):
                pts = [(xx, r[col] * r[3]) for xx, r in zip(x, sel) if r[col] is not None]
                if pts:
                    ax.plot(*zip(*pts), sty, label=lab)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xs_name)
            ax.set_title(f"{fam}: {fixed_name} = {fixed:g}")
            ax.legend(fontsize=7)
        fig.suptitle(f"Poincare constant and bounds ({fam}); HS omitted where > 1e6 C_P", fontsize=9)
        fig.subplots_adjust(bottom=0.2)
        written += save_figure(fig, fig_dir, f"poincare_{fam}", prov)
        plt.close(fig)
    return written
