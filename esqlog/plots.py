"""Plots for people: NDCG against q, one small panel per corpus.

Why small multiples: one panel with every corpus and size drew 17 lines in 10 recycled colours,
half of them under the legend. Here a panel holds one corpus; its lines (sizes, analyzers, query
styles) each get a colour of their own, and the legend sits outside the axes, so no data hides.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from esqlog.atomic import atomic_write

Curve = Sequence[tuple[float, float]]
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
           "#666666")  # ColorBrewer Dark2: distinct on screen and in greyscale print


def plot_q_sweep(
    panels: Mapping[str, Mapping[str, Curve]],
    predicted: Mapping[str, Mapping[str, float]],
    path: str | Path,
    metric: str = "NDCG@10",
    title: str | None = None,
) -> Path:
    """PNG of ``metric`` against q: one panel per key of ``panels`` (a corpus), one line per
    inner key (a size), a star at each line's predicted q.

    The star sits on the curve (linear interpolation at the predicted q), so the gap between
    it and the curve's peak is the cost of trusting the label-free predictor. A panel with
    more lines than the palette has colours is refused rather than drawn with a reused colour.
    Uses the Agg canvas directly, never pyplot, so no display or global state is touched.
    """
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    shown = {name: {k: v for k, v in lines.items() if v} for name, lines in panels.items()}
    shown = {name: lines for name, lines in shown.items() if lines}
    for name, lines in shown.items():
        if len(lines) > len(PALETTE):
            raise ValueError(f"panel {name!r} has {len(lines)} lines; at most {len(PALETTE)} "
                             "keep a colour each: split it into more panels")
    count = max(1, len(shown))
    cols = min(3, count)
    rows = math.ceil(count / cols)
    fig = Figure(figsize=(4.2 * cols, 3.4 * rows + 0.6), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    for ax, (name, lines) in zip(axes.flat, shown.items(), strict=False):
        for colour, (label, points) in zip(PALETTE, lines.items(), strict=False):
            qs, values = zip(*sorted(points), strict=True)
            ax.plot(qs, values, color=colour, linewidth=1.6, label=label)
            q_hat = predicted.get(name, {}).get(label)
            if q_hat is not None:
                ax.plot([q_hat], [float(np.interp(q_hat, qs, values))], marker="*",
                        markersize=12, color=colour, markeredgecolor="black", linestyle="none")
        ax.set_title(name)
        ax.set_xlabel("q  (1 = native BM25)")
        ax.set_ylabel(metric)
        ax.set_xlim(-0.02, 1.02)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
                  frameon=False, borderaxespad=0.0)
    heading = f"{metric} against q; star: the q calibrate predicts"
    fig.suptitle(f"{title}\n{heading}" if title else heading)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return atomic_write(path, buffer.getvalue(), "plot file")  # one line if unwritable


#: one system's point in one panel: (system, mean, interval low, interval high)
SystemPoint = tuple[str, float, float, float]


def plot_systems(panels: Mapping[str, Sequence[SystemPoint]], path: str | Path,
                 title: str) -> Path:
    """PNG with one small panel per metric: each system's mean as a dot with its 95%
    interval, and native's mean as a dashed line to read gains against.

    The interval of a system is native's mean plus the paired-bootstrap interval of its
    difference to native: the uncertainty that matters is of the gain, not of each mean
    (query difficulty varies far more than systems do). A system keeps its colour in every
    panel; more systems than the palette has colours are refused, never recycled.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    systems = list(dict.fromkeys(s for points in panels.values() for s, *_ in points))
    if len(systems) > len(PALETTE):
        raise ValueError(f"{len(systems)} systems; at most {len(PALETTE)} keep a colour each")
    colours = dict(zip(systems, PALETTE, strict=False))
    count = max(1, len(panels))
    cols = min(2, count)
    rows = math.ceil(count / cols)
    fig = Figure(figsize=(5.2 * cols, 0.45 * len(systems) * rows + 1.4 * rows + 0.6), dpi=110,
                 layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (metric, points) in zip(axes.flat, panels.items(), strict=False):
        order = [p for s in systems for p in points if p[0] == s]
        for y, (name, mean, low, high) in enumerate(order):
            ax.errorbar([mean], [y], xerr=[[mean - low], [high - mean]], fmt="o",
                        color=colours[name], capsize=4, markersize=7, linewidth=1.6)
            if name == "native":
                ax.axvline(mean, color=colours[name], linestyle="--", linewidth=1.0)
        ax.set_yticks(range(len(order)), [p[0] for p in order])
        ax.invert_yaxis()
        ax.set_title(metric)
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(f"{title}\nmean per system, 95% paired-bootstrap interval of the gain over "
                 "native (dashed)")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return atomic_write(path, buffer.getvalue(), "plot file")
