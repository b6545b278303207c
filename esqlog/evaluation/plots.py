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
PALETTE = (
    "#1b9e77",
    "#d95f02",
    "#7570b3",
    "#e7298a",
    "#66a61e",
    "#e6ab02",
    "#a6761d",
    "#666666",
)  # ColorBrewer Dark2: distinct on screen and in greyscale print


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
            raise ValueError(
                f"panel {name!r} has {len(lines)} lines; at most {len(PALETTE)} "
                "keep a colour each: split it into more panels"
            )
    count = max(1, len(shown))
    cols = min(3, count)
    rows = math.ceil(count / cols)
    fig = Figure(figsize=(4.2 * cols, 3.4 * rows + 0.6), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[len(shown) :]:
        ax.set_visible(False)
    for ax, (name, lines) in zip(axes.flat, shown.items(), strict=False):
        for colour, (label, points) in zip(PALETTE, lines.items(), strict=False):
            qs, values = zip(*sorted(points), strict=True)
            ax.plot(qs, values, color=colour, linewidth=1.6, label=label)
            q_hat = predicted.get(name, {}).get(label)
            if q_hat is not None:
                ax.plot(
                    [q_hat],
                    [float(np.interp(q_hat, qs, values))],
                    marker="*",
                    markersize=12,
                    color=colour,
                    markeredgecolor="black",
                    linestyle="none",
                )
        ax.set_title(name)
        ax.set_xlabel("q  (1 = native BM25)")
        ax.set_ylabel(metric)
        ax.set_xlim(-0.02, 1.02)
        ax.grid(True, alpha=0.3)
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="small",
            frameon=False,
            borderaxespad=0.0,
        )
    heading = f"{metric} against q; star: the q calibrate predicts"
    fig.suptitle(f"{title}\n{heading}" if title else heading)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return atomic_write(path, buffer.getvalue(), "plot file")  # one line if unwritable


#: one system's point in one panel: (system, mean, interval low, interval high)
SystemPoint = tuple[str, float, float, float]


def plot_systems(panels: Mapping[str, Sequence[SystemPoint]], path: str | Path, title: str) -> Path:
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
    fig = Figure(
        figsize=(5.2 * cols, 0.45 * len(systems) * rows + 1.4 * rows + 0.6),
        dpi=110,
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, (metric, points) in zip(axes.flat, panels.items(), strict=False):
        order = [p for s in systems for p in points if p[0] == s]
        for y, (name, mean, low, high) in enumerate(order):
            ax.errorbar(
                [mean],
                [y],
                xerr=[[mean - low], [high - mean]],
                fmt="o",
                color=colours[name],
                capsize=4,
                markersize=7,
                linewidth=1.6,
            )
            if name == "native":
                ax.axvline(mean, color=colours[name], linestyle="--", linewidth=1.0)
        ax.set_yticks(range(len(order)), [p[0] for p in order])
        ax.invert_yaxis()
        ax.set_title(metric)
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(
        f"{title}\nmean per system, 95% paired-bootstrap interval of the gain over native (dashed)"
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return atomic_write(path, buffer.getvalue(), "plot file")


#: one system's recall curve: (budget in tokens, mean, interval low, interval high) per budget
BudgetCurve = Sequence[tuple[int, float, float, float]]


def plot_budget_recall(
    panels: Mapping[str, Mapping[str, BudgetCurve]],
    path: str | Path,
    title: str,
    marks: Mapping[str, Sequence[tuple[int, float]]] | None = None,
) -> Path:
    """PNG of Recall@B against the token budget B: one small panel per corpus and query set
    (rows: query sets, in the order the keys ``corpus | query set`` first name them), one
    colour per system in every panel, its 95% interval as a band.

    The budget axis is logarithmic (budgets double), the legend sits under the panels so it
    hides no data, and ``marks`` (panel name -> (budget, recall) points, e.g. the paper's
    figures on the corpus it measured) are drawn as grey ticks for reference. More systems
    than the palette has colours are refused.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    systems = list(dict.fromkeys(s for lines in panels.values() for s in lines))
    if len(systems) > len(PALETTE):
        raise ValueError(f"{len(systems)} systems; at most {len(PALETTE)} keep a colour each")
    colours = dict(zip(systems, PALETTE, strict=False))
    names = list(panels)
    styles = list(dict.fromkeys(n.partition(" | ")[2] for n in names))
    corpora = list(dict.fromkeys(n.partition(" | ")[0] for n in names))
    rows, cols = max(1, len(styles)), max(1, len(corpora))
    fig = Figure(
        figsize=(max(3.3 * cols + 0.4, 9.0), 2.9 * rows + 1.5), dpi=110, layout="constrained"
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    for ax in axes.flat:
        ax.set_visible(False)
    for name, lines in panels.items():
        corpus, _, style = name.partition(" | ")
        ax = axes[styles.index(style)][corpora.index(corpus)]
        ax.set_visible(True)
        for system, curve in lines.items():
            budgets, means, lows, highs = zip(*sorted(curve), strict=True)
            ax.fill_between(budgets, lows, highs, color=colours[system], alpha=0.18, linewidth=0)
            ax.plot(
                budgets,
                means,
                color=colours[system],
                marker="o",
                markersize=3.5,
                linewidth=1.6,
                label=system,
            )
        for budget, value in (marks or {}).get(name, ()):
            ax.plot(
                [budget],
                [value],
                marker="_",
                markersize=14,
                color="#444444",
                linestyle="none",
                label="paper, CSN Go 8K (BM25, q-log)",
            )
        ax.set_xscale("log", base=2)
        budget_ticks = sorted({b for curve in lines.values() for b, *_ in curve})
        ax.set_xticks(
            budget_ticks, [f"{b // 1000}K" if b >= 1000 else str(b) for b in budget_ticks]
        )
        ax.set_ylim(0.0, 1.0)
        ax.set_title(name.replace(" | ", ", "), fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("token budget (o200k_base)")
        ax.set_ylabel("Recall@B")
        ax.tick_params(labelbottom=True, labelleft=True)
    handles, labels = [], []
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
    fig.suptitle(
        f"{title}\nshare of queries whose gold chunk is in search_code's answer; "
        "band: 95% bootstrap interval"
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return atomic_write(path, buffer.getvalue(), "plot file")
