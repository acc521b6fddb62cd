"""Pictures of schedules (matplotlib, an optional extra: ``pip install polykrnl[plot]``).

The last stage of the pipeline: it may import every other one, none imports it.
"""

from polykrnl.viz.plots import domain_slice, plot_domain, plot_transformation
from polykrnl.viz.pto import (
    buffer_usage,
    plot_buffers,
    plot_tiles,
    plot_timeline,
    tile_windows,
)

__all__ = [
    "buffer_usage",
    "domain_slice",
    "plot_buffers",
    "plot_domain",
    "plot_tiles",
    "plot_timeline",
    "plot_transformation",
    "tile_windows",
]
