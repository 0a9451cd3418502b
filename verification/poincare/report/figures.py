"""Figures of the Poincare campaign (PNG + PDF), drawn from the family's findings (the instances
of :class:`verification.poincare.findings.Findings`): C_P against lambda and against beta with the
bounds, one file per family.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from verification.poincare.findings import Instance
from verification.report.aggregate import pyplot
from verification.report.figures import save_figure


def constant_figures(instances: Sequence[Instance], fig_dir: Path, prov: str) -> list[Path]:
    """``poincare_<family>.png`` / ``.pdf``: C_P and its bounds against lambda and against beta."""
    plt = pyplot()
    fig_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for fam in sorted({i.family for i in instances}):
        mine = [i for i in instances if i.family == fam]
        betas, lams = sorted({i.beta for i in mine}), sorted({i.lam for i in mine})
        if len(betas) * len(lams) < 2:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, (xs_name, fixed_name, xs, fixed_of, fixed) in zip(
                axes, (("lambda", "beta", lambda i: i.lam, lambda i: i.beta, betas[len(betas) // 2]),
                       ("beta", "lambda", lambda i: i.beta, lambda i: i.lam, lams[len(lams) // 2]))):
            sel = sorted((i for i in mine if fixed_of(i) == fixed), key=xs)
            x = [xs(i) for i in sel]
            C = [i.C_P for i in sel]
            ax.plot(x, C, "ko-", label="C_P (estimate)")
            ax.plot(x, [i.gaussian_C for i in sel], "k:", label="1/(beta lambda)")
            for bound, lab, sty in ((lambda i: i.be and i.be.bound, "Bakry-Emery", "b^--"),
                                    (lambda i: i.hs and i.hs.bound, "Holley-Stroock", "rs--")):
                pts = [(xx, bound(i)) for xx, i in zip(x, sel) if bound(i) is not None and bound(i) < 1e6 * max(C)]
                if pts:
                    ax.plot(*zip(*pts), sty, label=lab)
            for ratio, lab, sty in ((lambda i: i.var_ratio, "Var theta (lower)", "gv-."),
                                    (lambda i: i.quad_ratio, "quadratic (lower)", "c.-.")):
                pts = [(xx, ratio(i) * i.C_P) for xx, i in zip(x, sel) if ratio(i) is not None]
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
