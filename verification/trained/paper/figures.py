"""The two cross-model figures of the trained section, as data and as drawings: ``trained-depth`` (the
share of inputs with D1 equality on head-averaged attention against relative depth, with its Wilson
interval per point) and ``trained-chain-ratio`` (the median over inputs of the D2 chain ratio by depth,
with its order-statistic band).

Each figure is a tuple of :class:`Panel` built from the findings (:func:`depth_panels`,
:func:`chain_panels`: every model of the findings in exactly one panel, the values and intervals the
findings hold, nothing recomputed) and drawn by :func:`draw_panels`. ``trained-depth`` puts the models
whose every share is forced by the causal corollary (:meth:`verification.findings.Share.forced_share`)
in a narrow panel of their own, marked as a check, apart from the measured models;
``trained-chain-ratio`` puts the bidirectional encoders and the causal decoders in two panels (their
depths differ by a factor of three). Within a panel the models are shifted apart along x
(:attr:`Panel.shift`) and each has its own marker and colour, the same in both figures, so that no
model's points sit on another's (all-MiniLM-L6-v2's chain ratios lie within a marker's height of two
other encoders' at the first layers; DINOv2-S's shares are 1 at every layer, like the decoders').
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from verification.trained.paper.names import LEGEND

MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">")
DEPTH_SHIFT = 0.022        # relative depth: the shift between neighbouring models of a panel
CHAIN_SHIFT = 0.02         # of the panel's largest depth


@dataclass(frozen=True)
class Curve:
    """One model's points: ``xs`` where they belong (before the panel's shift), ``ys`` the values,
    ``lo``/``hi`` their 95% interval (nan where there is none: forced, or too few inputs); ``forced``:
    every value forced by a theorem (a check, not a measurement); ``style`` its colour and marker
    index (its place in the findings, the same in every figure); ``inputs``: how many it is over."""

    name: str
    label: str
    causal: bool
    xs: tuple
    ys: tuple
    lo: tuple
    hi: tuple
    inputs: int
    style: int
    forced: bool = False

    @property
    def has_interval(self) -> tuple:
        """Per point, whether it has an interval."""
        return tuple(not (math.isnan(a) or math.isnan(b)) for a, b in zip(self.lo, self.hi))


@dataclass(frozen=True)
class Panel:
    """One panel: its title, its models and the shift between neighbouring models along x; ``by_model``:
    each model at its own x (its place in the panel, named on the axis), every point of it there (for
    forced values, which are the same at every depth)."""

    title: str
    curves: tuple
    shift: float
    by_model: bool = False

    def plotted_xs(self, i: int) -> tuple:
        """The x positions of curve ``i`` as drawn: centred shifts, ``shift`` apart (``by_model``: ``i``)."""
        if self.by_model:
            return (float(i),) * len(self.curves[i].xs)
        off = (i - (len(self.curves) - 1) / 2) * self.shift
        return tuple(x + off for x in self.curves[i].xs)


def depth_panels(found: Any) -> tuple:
    """``trained-depth``: per model, the share of inputs with D1 equality (head mean, all tokens) at each
    layer against l / (L - 1) with its Wilson interval (the findings' :class:`~verification.findings.Share`);
    the models whose every share is forced (causal) in their own panel, without intervals."""
    measured, forced = [], []
    for i, (name, m) in enumerate(found.models.items()):
        f = m.findings
        layers = f.sets["all"].layers
        shares = [d.tight for d in layers.values()]
        curve = Curve(name, LEGEND.get(name, name), f.causal, tuple(l / max(f.layers - 1, 1) for l in layers),
                      tuple(s.value for s in shares), tuple(s.lo for s in shares), tuple(s.hi for s in shares),
                      f.inputs, i, forced=bool(shares) and all(s.forced for s in shares))
        (forced if curve.forced else measured).append(curve)
    panels = [Panel("bidirectional:\nmeasured", tuple(measured), DEPTH_SHIFT)]
    if forced:
        panels.append(Panel("causal:\nforced", tuple(forced), 0.0, by_model=True))
    return tuple(panels)


def chain_panels(found: Any) -> tuple:
    """``trained-chain-ratio``: per model, the median over inputs of delta(R_l) / prod delta(Ahat_k) at
    each depth l = 1, ..., L with its order-statistic band (nan ends where the findings have none: under
    six inputs); the bidirectional models in one panel, the causal ones in another."""
    panels: dict = {False: [], True: []}
    for i, (name, m) in enumerate(found.models.items()):
        f = m.findings
        pts = [(l + 1, e) for l, r in f.rollout.items() if (e := r.ratio) is not None]
        panels[bool(f.causal)].append(Curve(name, LEGEND.get(name, name), f.causal, tuple(x for x, _ in pts),
                                            tuple(e.value for _, e in pts), tuple(e.lo for _, e in pts),
                                            tuple(e.hi for _, e in pts), f.inputs, i))
    return tuple(Panel(title, tuple(panels[causal]), CHAIN_SHIFT * max(max(c.xs, default=1) for c in panels[causal]))
                 for causal, title in ((False, "bidirectional"), (True, "causal")) if panels[causal])


def _curve(ax: Any, panel: Panel, i: int) -> None:
    c = panel.curves[i]
    xs, color, marker = panel.plotted_xs(i), f"C{c.style % 10}", MARKERS[c.style % len(MARKERS)]
    fewer = sum(len(d.xs) > len(c.xs) for d in panel.curves)       # the curve with fewest points on top
    ax.plot(xs, c.ys, "" if panel.by_model else "--" if c.causal else "-", color=color, marker=marker,
            ms=5 if panel.by_model else 3, lw=1, mfc="none" if c.forced else color,
            label=None if panel.by_model else c.label, zorder=3 + fewer)
    has = c.has_interval
    if not any(has):
        return
    x = [a for a, h in zip(xs, has) if h]
    lo = [a for a, h in zip(c.lo, has) if h]
    hi = [a for a, h in zip(c.hi, has) if h]
    y = [a for a, h in zip(c.ys, has) if h]
    ax.errorbar(x, y, yerr=[[b - a for a, b in zip(lo, y)], [b - a for a, b in zip(y, hi)]], fmt="none",
                ecolor=color, elinewidth=0.7, capsize=1.5, alpha=0.75, zorder=2)


def draw_panels(panels: tuple, xlabel: str, ylabel: str, log: bool = False, widths: tuple = (),
                ylim: tuple = (), xfrom: Optional[float] = None):
    """A ``draw(ax)`` of the panels side by side (``widths``: their relative widths), sharing the y axis
    (log scale with ``log``; limits ``ylim``; x from ``xfrom`` where given), each titled, each model with
    its interval as a whisker, one legend under the panels."""
    def draw(ax: Any) -> None:
        axes, ws = [ax], widths or (1.0,) * len(panels)
        if len(panels) > 1:
            from mpl_toolkits.axes_grid1 import make_axes_locatable

            divider = make_axes_locatable(ax)
            for w in ws[1:len(panels)]:
                axes.append(divider.append_axes("right", size=f"{100 * w / ws[0]:.0f}%", pad=0.08, sharey=ax))
        for a, panel in zip(axes, panels):
            for i in range(len(panel.curves)):
                _curve(a, panel, i)
            a.set_title(panel.title)
            if panel.by_model:                   # each model named under its marker, inside the panel
                a.set_xlim(-0.6, len(panel.curves) - 0.4)
                a.set_xticks([])
                for i, c in enumerate(panel.curves):
                    a.text(i, 0.9, c.label, rotation=90, ha="center", va="top", fontsize="small",
                           transform=a.get_xaxis_transform())
            if log:
                a.set_yscale("log")
            if ylim:
                a.set_ylim(*ylim)
            if xfrom is not None and not panel.by_model:
                a.set_xlim(left=xfrom)
            if a is not ax:
                a.tick_params(labelleft=False)
        shared = [w for w, p in zip(ws, panels) if not p.by_model]    # the panels with an x axis of depths
        ax.set_xlabel(xlabel, x=0.5 * sum(shared) / ws[0])               # centred under them
        ax.set_ylabel(ylabel)
        handles = [h for a in axes for h in a.get_legend_handles_labels()[0]]
        labels = [t for a in axes for t in a.get_legend_handles_labels()[1]]
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(-0.1, -0.3), ncol=2, frameon=False,
                  fontsize="small", handlelength=2.2, columnspacing=1.0)   # below: never over data
    return draw
