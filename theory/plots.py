"""Plots of the claim measurements: rates, bounds, frequencies.

The functions take result objects from :mod:`theory.rates`, compute nothing, draw on a given
``ax`` (or a new figure) and return the axes. Matplotlib is imported inside the functions, so
``import theory`` never loads it; without a display the Agg backend is selected. Figure scripts
in ``figures/`` save with :func:`save_figure`, under ``figures/out/`` with the claim ID in the
file name.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_rate", "plot_bound", "plot_frequency", "save_figure", "new_axes", "import_matplotlib",
           "figure_directory"]

#: where :func:`save_figure` writes when no directory is passed (``figures/out`` outside :func:`figure_directory`)
_DIRECTORY: contextvars.ContextVar[str] = contextvars.ContextVar("theory_figure_directory", default="figures/out")


@contextlib.contextmanager
def figure_directory(directory: str | os.PathLike):
    """Within the block, :func:`save_figure` called without ``directory`` writes under ``directory``.

    ``theory reproduce`` draws a figure at the paper preset this way, without overwriting the one the checks
    drew under ``figures/out/``.
    """
    token = _DIRECTORY.set(os.fspath(directory))
    try:
        yield Path(directory)
    finally:
        _DIRECTORY.reset(token)

FIGSIZE = (5.0, 3.6)
DPI = 150
_STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "lines.linewidth": 1.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def import_matplotlib():
    """Import matplotlib, selecting Agg when no display is available and pyplot is not loaded; returns the module."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - matplotlib is a dependency
        raise ImportError("theory.plots needs matplotlib: pip install matplotlib") from exc
    headless = not (
        sys.platform in ("darwin", "win32") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    if headless and "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND"):
        matplotlib.use("Agg")
    return matplotlib


STYLE = _STYLE  # the rc settings of every figure of the toolkit, for checks that draw their own panels


def subplots(ncols: int = 1, figsize: tuple[float, float] = FIGSIZE, nrows: int = 1):
    """A figure with a grid of axes in the module's style (constrained layout, Agg when headless).

    Returns ``(matplotlib, fig, axes)``: the matplotlib module (for colour maps, tickers and
    ``rc_context(STYLE)``), the figure, and the axes as a 1-D array when ``nrows == 1``, else 2-D.
    """
    mpl = import_matplotlib()
    import matplotlib.pyplot as plt

    with mpl.rc_context(_STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=figsize, layout="constrained", squeeze=False)
    return mpl, fig, (axes[0] if nrows == 1 else axes)


def new_axes(figsize: tuple[float, float] = FIGSIZE):
    """A new figure with one axes, in the module's style; returns the axes."""
    mpl = import_matplotlib()
    import matplotlib.pyplot as plt

    with mpl.rc_context(_STYLE):
        fig = plt.figure(figsize=figsize, layout="constrained")
        return fig.add_subplot()


def _finish(ax, xlabel: str, ylabel: str, title: str | None) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", color="0.85", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(frameon=False)


def _integer_ticks(value: float, _pos: Any = None) -> str:
    return f"{int(round(value))}" if value >= 1 and float(value).is_integer() else f"{value:g}"


def plot_rate(
    fit: Any,
    ax: Any = None,
    *,
    expected_slope: float | None = None,
    label: str | None = None,
    xlabel: str = "N",
    ylabel: str = "error",
    title: str | None = None,
    color: Any = None,
    expected_label: str | None = None,
):
    """Log-log plot of a :class:`~theory.rates.RateFit`: points, fitted line, predicted slope.

    Every point (all seeds) is drawn; dropped points (at the floor) as open markers. The fitted
    line is labelled ``fit: slope -1.01 [-1.03, -0.99]``; with ``expected_slope`` a dashed guide
    of that slope, drawn above every kept point (its height carries no meaning, only its slope),
    is labelled ``guide: slope -1, predicted``. Several fits can share one ``ax``, each in its own colour.

    Parameters
    ----------
    fit : RateFit
    ax : matplotlib Axes, optional
        Drawn on a new figure when omitted.
    expected_slope : float, optional
        Predicted slope for the guide line.
    label : str, optional
        Legend label of the points (e.g. ``"Euler"``).
    xlabel, ylabel, title : str, optional
    color : matplotlib colour, optional
        Defaults to the next colour of the axes' cycle.
    expected_label : str, optional
        Legend label of the guide, e.g. ``"slope -3, proved rate (faster is allowed)"`` where the
        claim bounds the rate; defaults to ``"slope <expected_slope>, predicted"``; prefixed with
        ``"guide: "``.

    Returns
    -------
    matplotlib Axes
    """
    mpl = import_matplotlib()
    grid = np.asarray(fit.grid, dtype=float)
    errors = np.atleast_2d(np.asarray(fit.errors, dtype=float))
    x = np.broadcast_to(grid, errors.shape)
    visible = np.isfinite(errors) & (errors > 0)
    kept = getattr(fit, "kept", None)
    if kept is None:
        kept = visible & ~np.isin(x, np.asarray(fit.dropped, dtype=float))
    kept = np.atleast_2d(np.asarray(kept, dtype=bool)) & visible
    if not kept.any():
        raise ValueError("theory.plots.plot_rate: the fit has no kept point to draw")
    with mpl.rc_context(_STYLE):
        if ax is None:
            ax = new_axes()
        many = errors.shape[0] > 3
        (points,) = ax.plot(x[kept], errors[kept], "o", ms=4 if many else 5, alpha=0.55 if many else 0.9,
                            color=color, label=label or "measured", zorder=3)
        color = points.get_color()
        dropped = visible & ~kept
        if dropped.any():
            ax.plot(x[dropped], errors[dropped], "o", ms=5, mfc="none", mec=color, label="dropped (floor)", zorder=3)
        xk, yk = np.log(x[kept]), np.log(errors[kept])
        xs = np.geomspace(x[kept].min(), x[kept].max(), 64)
        low, high = fit.ci
        ax.plot(xs, np.exp(fit.intercept) * xs**fit.slope, "-", color=color,
                label=f"fit: slope {fit.slope:.2f} [{low:.2f}, {high:.2f}]")
        if expected_slope is not None:
            # a slope guide, not a bound on the values: drawn above every kept point (shifted by a
            # constant factor), so that it never hides under the fitted line and no point sits
            # "above" it; only its slope is compared with the fit
            centre_x = np.exp(xk.mean())
            shape = (x[kept] / centre_x) ** expected_slope
            level = 2.0 * float(np.max(errors[kept] / shape))
            darker = 0.55 * np.asarray(mpl.colors.to_rgb(color))
            text = expected_label or f"slope {expected_slope:g}, predicted"
            if not text.startswith("guide"):
                text = f"guide: {text}"
            ax.plot(xs, level * (xs / centre_x) ** expected_slope, "--", color=darker, lw=1.2, zorder=4,
                    label=text)
        ax.set_xscale("log", base=2 if _powers_of_two(grid) else 10)
        ax.set_yscale("log")
        if _powers_of_two(grid):
            ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(_integer_ticks))
        _finish(ax, xlabel, ylabel, title)
    return ax


def _powers_of_two(grid: np.ndarray) -> bool:
    logs = np.log2(grid)
    return bool(np.all(np.abs(logs - np.round(logs)) < 1e-12) and np.all(grid >= 1))


def plot_bound(
    result_or_arrays: Any,
    ax: Any = None,
    *,
    ratio_max: float = 1.0,
    xlabel: str = "RHS",
    ylabel: str = "LHS",
    title: str | None = None,
    label: str | None = None,
    color: Any = None,
):
    """Plot a bound ``LHS <= ratio_max * RHS``: LHS against RHS, or the ratio per instance.

    Parameters
    ----------
    result_or_arrays : BoundResult, (lhs, rhs) pair, or 1-D array of ratios
        A :class:`~theory.rates.BoundResult` carrying ``lhs`` and ``rhs`` (as made by
        ``bound_ratio`` and ``BoundTracker``) or the two arrays: drawn as a scatter with the line
        ``LHS = ratio_max * RHS`` (log-log when all values are positive) and the worst instance
        ringed. A 1-D array of ratios is drawn against the instance index with the level
        ``ratio_max``.
    ax : matplotlib Axes, optional
    ratio_max : float, optional
        The allowed ratio (1 for the bound as printed).
    xlabel, ylabel, title, label : str, optional
    color : matplotlib colour, optional

    Returns
    -------
    matplotlib Axes
    """
    mpl = import_matplotlib()
    obj = result_or_arrays
    if hasattr(obj, "ratio"):
        if obj.lhs is None or obj.rhs is None:
            raise ValueError("theory.plots.plot_bound: the BoundResult has no per-instance lhs/rhs; pass (lhs, rhs)")
        pair = (obj.lhs, obj.rhs)
    elif isinstance(obj, tuple) and len(obj) == 2:
        pair = obj
    else:
        pair = None
    with mpl.rc_context(_STYLE):
        if ax is None:
            ax = new_axes()
        if pair is None:
            ratios = np.ravel(np.asarray(obj, dtype=float))
            (pts,) = ax.plot(np.arange(ratios.size), ratios, "o", ms=3.5, alpha=0.7, color=color,
                             label=label or "LHS / RHS per instance")
            ax.axhline(ratio_max, color="0.2", ls="--", lw=1, label=f"bound: ratio {ratio_max:g}")
            i = int(np.nanargmax(ratios))
            ax.plot([i], [ratios[i]], "o", ms=9, mfc="none", mec="C3", label=f"worst: ratio {ratios[i]:.3g}")
            _finish(ax, "instance" if xlabel == "RHS" else xlabel, "LHS / RHS" if ylabel == "LHS" else ylabel, title)
            return ax
        lhs, rhs = (np.ravel(np.asarray(a, dtype=float)) for a in pair)
        if lhs.shape != rhs.shape or lhs.size == 0:
            raise ValueError("theory.plots.plot_bound: lhs and rhs must be non-empty arrays of one shape")
        ax.plot(rhs, lhs, "o", ms=3.5, alpha=0.7, color=color, label=label or "instances")
        positive = np.all(lhs > 0) and np.all(rhs > 0)
        lo, hi = np.nanmin(rhs), np.nanmax(rhs)
        xs = np.geomspace(lo, hi, 64) if positive and lo < hi else np.linspace(lo, hi if hi > lo else lo + 1, 64)
        line = "LHS = RHS" if ratio_max == 1 else f"LHS = {ratio_max:g}·RHS"
        ax.plot(xs, ratio_max * xs, "--", color="0.2", lw=1, label=line)
        ratios = lhs / rhs
        i = int(np.nanargmax(ratios)) if np.isfinite(ratios).any() else 0
        ax.plot([rhs[i]], [lhs[i]], "o", ms=9, mfc="none", mec="C3", label=f"worst: ratio {ratios[i]:.3g}")
        if positive:
            ax.set_xscale("log")
            ax.set_yscale("log")
        _finish(ax, xlabel, ylabel, title)
    return ax


def plot_frequency(
    result: Any,
    ax: Any = None,
    *,
    delta: float | None = None,
    label: str | None = None,
    title: str | None = None,
    color: Any = None,
):
    """Plot a violation frequency with its Clopper-Pearson interval against δ.

    Each call adds one row (the frequency and its interval as a horizontal error bar), so
    several statements or settings can share one ``ax``; the dotted line marks δ.

    Parameters
    ----------
    result : FrequencyResult
    ax : matplotlib Axes, optional
    delta : float, optional
        Defaults to ``result.delta``.
    label : str, optional
        Row label; defaults to ``n = <runs>``.
    title : str, optional
    color : matplotlib colour, optional

    Returns
    -------
    matplotlib Axes
    """
    mpl = import_matplotlib()
    delta = result.delta if delta is None else delta
    with mpl.rc_context(_STYLE):
        if ax is None:
            ax = new_axes(figsize=(FIGSIZE[0], 2.4))
        row = sum(isinstance(c, mpl.container.ErrorbarContainer) for c in ax.containers)
        low, high = result.ci
        err = [[max(result.freq - low, 0.0)], [max(high - result.freq, 0.0)]]
        ax.errorbar([result.freq], [row], xerr=err, fmt="o", capsize=4, color=color,
                    label=f"{int(round(100 * result.level))}% CI ({result.violations}/{result.runs})")
        labels = [t.get_text() for t in ax.get_yticklabels()][:row] if row else []
        labels = (labels + [""] * row)[:row] + [label or f"n = {result.runs}"]
        ax.set_yticks(range(row + 1), labels)
        ax.set_ylim(-0.6, row + 0.6)
        if delta is not None and not any(line.get_gid() == "theory-delta" for line in ax.lines):
            ax.axvline(delta, color="C3", ls=":", lw=1.5, label=f"δ = {delta:g}", gid="theory-delta")
        right = max(high, delta or 0.0, result.freq)
        ax.set_xlim(0, max(ax.get_xlim()[1] if row else 0, 1.25 * right if right > 0 else 0.05))
        _finish(ax, "violation frequency", "", title)
    return ax


def _title_with_claim(fig: Any, claim_id: str) -> None:
    """Put the claim ID into the figure's title when no title carries it yet."""
    paper, local = claim_id.split("/", 1)
    base = f"{paper}/{local.split('/')[0]}"
    suptitle = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    titles = [suptitle] + [ax.get_title(loc) for ax in fig.axes for loc in ("center", "left", "right")]
    if any(base in t for t in titles):
        return
    text = f"{claim_id}: {suptitle}" if suptitle else claim_id
    size = fig._suptitle.get_fontsize() if suptitle else 10
    fig.suptitle(text, fontsize=size)


def save_figure(fig: Any, claim_id: str, directory: str | os.PathLike | None = None) -> str:
    """Save a figure as ``<directory>/<claim id, '/' as '__'>.png`` at 150 dpi and close it.

    A figure none of whose titles names the claim gets the claim ID as its (super)title, so that
    every saved figure says which claim it shows.

    Parameters
    ----------
    fig : matplotlib Figure or Axes
    claim_id : str
        A claim ID (validated), e.g. ``"resnet-node/prop-3"``.
    directory : path, optional
        Created if needed; by default ``figures/out`` (or the folder of an enclosing :func:`figure_directory`).

    Returns
    -------
    str
        The path written, e.g. ``"figures/out/resnet-node__prop-3.png"`` (posix separators).
    """
    from theory.claims import parse_claim_id

    parse_claim_id(claim_id)
    import_matplotlib()
    if not hasattr(fig, "savefig"):  # an Axes
        fig = getattr(fig, "figure", fig)
    if not hasattr(fig, "savefig"):
        raise ValueError(f"`fig` of theory.plots.save_figure must be a matplotlib Figure or Axes; got {fig!r}")
    _title_with_claim(fig, claim_id)
    directory = _DIRECTORY.get() if directory is None else directory
    Path(directory).mkdir(parents=True, exist_ok=True)
    path = Path(directory, claim_id.replace("/", "__") + ".png").as_posix()
    fig.savefig(path, dpi=DPI)
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return path


def to_gallery(path: str | os.PathLike, gallery: str | os.PathLike = "figures/gallery") -> str | None:
    """Copy a figure into the committed gallery, only when ``THEORY_GALLERY=1`` is set.

    ``theory plots`` writes under figures/out/ alone; ``theory plots --gallery`` (and
    ``make figures``) set the variable to refresh the figures shown in the README.

    Returns
    -------
    str or None
        The gallery path written, or None when the variable is not set.
    """
    if os.environ.get("THEORY_GALLERY") != "1":
        return None
    import shutil

    target = Path(gallery) / Path(path).name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, target)
    return target.as_posix()
