"""The command line's figures, in one style: ``figure`` gives a matplotlib figure and its axes
(the Agg backend: no display needed), ``save`` writes it. Every ``--plot`` of the package draws
with these, so that the demos' and the tools' figures read alike: the reference or the command
in black, each run in the colour cycle's order, bounds and limits dashed grey, a light grid, the
units in every axis label."""
from __future__ import annotations

from pathlib import Path

#: the style: matplotlib rcParams every figure is drawn with
STYLE = {
    "figure.dpi": 110, "savefig.dpi": 110, "font.size": 9, "axes.titlesize": 10,
    "axes.labelsize": 9, "legend.fontsize": 8, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "axes.grid": True, "grid.linewidth": 0.3, "grid.alpha": 0.6, "lines.linewidth": 1.1,
    "axes.spines.top": False, "axes.spines.right": False, "legend.frameon": False,
}
#: how a reference, a limit and a bound are drawn (``ax.plot(..., **REFERENCE)``)
REFERENCE = {"color": "k", "lw": 1.3}
LIMIT = {"color": "0.45", "ls": "--", "lw": 0.9}


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'robodyn_ros[plot]' "
                         "(or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure(rows=1, cols=1, *, size=None, title=None, **options):
    """(figure, axes) in the package's style: ``axes`` always a 2-D array (rows x cols);
    ``size`` in inches (default 4.6 x 2.6 per panel); ``options`` go to ``plt.subplots``."""
    plt = _pyplot()
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(rows, cols, squeeze=False,
                                 figsize=size or (4.6 * cols, 2.6 * rows + 0.6), **options)
    if title:
        fig.suptitle(title)
    return fig, axes


def save(fig, path) -> Path:
    """Write ``fig`` to ``path`` (PNG, PDF, SVG, ...: by its suffix), its folder made, and close
    it; the path."""
    plt = _pyplot()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(STYLE):
        fig.tight_layout()
        fig.savefig(path)
    plt.close(fig)
    return path
