"""The dashboard's plots, drawn on the server with matplotlib as SVG documents.

Served as images of their own (``<img>`` with a text alternative, the figures
also in a table beside them), so the page's content security policy stays
strict and nothing is fetched from a CDN. Each function takes plain figures
and returns SVG text; drawing takes tens of milliseconds, so the routes that
serve them cache by the figures drawn.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache

import matplotlib

matplotlib.use("svg")  # no display, no GUI toolkit: SVG text only
from matplotlib import dates, ticker  # noqa: E402 - after choosing the back end
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

#: Colours that keep a 4.5:1 contrast on white, and differ in more than hue (line styles too).
INK = "#1f4f99"
LINE = "#9a3412"
GREY = "#4b5563"
matplotlib.rcParams.update(
    {
        "svg.fonttype": "none",  # text stays text: smaller files, searchable, readable by tools
        "svg.hashsalt": "hitforge",  # the same figures give the same bytes (caching, tests)
        "font.size": 10,
        "axes.edgecolor": GREY,
        "axes.labelcolor": "#111827",
        "xtick.color": GREY,
        "ytick.color": GREY,
    }
)


def _svg(fig: Figure) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight")
    return out.getvalue()


def _figure() -> tuple[Figure, Axes]:
    fig = Figure(figsize=(7.2, 2.6), dpi=100)
    ax: Axes = fig.add_subplot()
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", color="#e5e7eb", linewidth=0.8)
    ax.set_axisbelow(True)
    return fig, ax


@lru_cache(maxsize=256)
def line_over_time(
    when: tuple[datetime, ...], values: tuple[float, ...], label: str, thresholds: tuple[float, ...] = ()
) -> str:
    """A line of ``values`` (0..100 %) over ``when``, with dashed threshold lines."""
    fig, ax = _figure()
    ax.plot(
        dates.date2num(list(when)), values, color=INK, marker="o", markersize=3, linewidth=1.6, label=label
    )
    for t in thresholds:
        ax.axhline(t, color=LINE, linestyle="--", linewidth=1.2, label=f"threshold {t:g}%")
    ax.set_ylim(0, 100)
    ax.set_ylabel("%")
    ax.legend(loc="lower right", frameon=False)
    ax.xaxis_date()
    fig.autofmt_xdate()
    return _svg(fig)


@lru_cache(maxsize=256)
def bars_over_time(starts: tuple[datetime, ...], counts: tuple[int, ...], label: str) -> str:
    """Counts per hour as bars (submissions per hour)."""
    fig, ax = _figure()
    if starts:
        width = 0.9 / 24  # days: an hour's bar, with a gap
        ax.bar(dates.date2num(list(starts)), counts, width=width, align="edge", color=INK)
    ax.set_ylabel(label)
    ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.set_ylim(bottom=0)
    ax.xaxis_date()
    fig.autofmt_xdate()
    return _svg(fig)


@lru_cache(maxsize=256)
def histogram(values: tuple[float, ...], threshold: float | None, xlabel: str) -> str:
    """How many workers fall in each tenth of 0..100 %, with the threshold as a dashed line."""
    fig, ax = _figure()
    ax.hist(values, bins=list(range(0, 101, 10)), color=INK, edgecolor="white")
    if threshold is not None:
        ax.axvline(threshold, color=LINE, linestyle="--", linewidth=1.4, label=f"threshold {threshold:g}%")
        ax.legend(loc="upper left", frameon=False)
    ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("workers")
    ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    return _svg(fig)


def histogram_counts(values: Sequence[float]) -> list[tuple[str, int]]:
    """The histogram's figures as a table: ("0-9%", n) ... ("90-100%", n)."""
    counts = [0] * 10
    for v in values:
        counts[min(9, max(0, int(v // 10)))] += 1
    return [(f"{10 * i}-{10 * i + 9 if i < 9 else 100}%", n) for i, n in enumerate(counts)]
