"""Cost curves for ``benchmarks/run.py --scaling``: sizes, growth exponents, superlinear flags, the plot.

A workload's time grows as size ** k; k is fitted by least squares on log(time) against
log(size). Small sizes are dominated by fixed costs (parsing, dispatch), which flatten the fit,
so the exponent is also fitted on the largest three sizes (the "large end"), and that one is
compared with the exponent of the work itself: elementwise and the loops do work linear in their
size, the jacobian quadratic (n x n), the MLP cubic in its width (the batch is as wide as the
layers). A large-end exponent more than TOLERANCE above the work's is flagged as superlinear in
the work. The same is done for the peak memory against the memory the results need.
"""
from __future__ import annotations

import math

TOLERANCE = 0.15

# workload -> (what the size counts, sizes, exponent of the work, exponent of the memory the results need)
# The sizes are capped for a 2-core machine with 24 GB: 1e8 float32 elements (0.4 GB per array), width
# and n up to 3000 (the MLP's 8 matmuls of 3000^3 take seconds each), loops up to 1e5 steps (tapecli's
# interpreter takes seconds per 1e5 steps; 1e6 would take minutes per run).
CURVES = {
    "elementwise": ("elements", [10 ** e for e in range(3, 9)], 1, 1),
    "mlp": ("width", [10, 30, 100, 300, 1000, 3000], 3, 2),
    "jacobian": ("n", [10, 30, 100, 300, 1000, 3000], 2, 2),
    "scalar_loop": ("steps", [10 ** e for e in range(2, 6)], 1, 1),
    "loop": ("steps", [10 ** e for e in range(2, 6)], 1, 0),
}
QUICK_CURVES = {
    "elementwise": [10 ** e for e in range(3, 7)],
    "mlp": [10, 30, 100, 300],
    "jacobian": [10, 30, 100, 300],
    "scalar_loop": [10 ** e for e in range(2, 5)],
    "loop": [10 ** e for e in range(2, 5)],
}
LARGE_END = 3


def fit_exponent(sizes, values) -> float:
    """The slope k of the least-squares line through (log size, log value): value ~ size ** k."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if v > 0]
    if len(points) < 2:
        raise ValueError("an exponent needs at least two positive values")
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        raise ValueError("an exponent needs at least two different sizes")
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def large_end_exponent(sizes, values) -> float:
    """The exponent fitted on the largest LARGE_END sizes (all of them when there are fewer)."""
    return fit_exponent(sizes[-LARGE_END:], values[-LARGE_END:])


def superlinear(exponent: float, work_exponent: float, tolerance: float = TOLERANCE) -> bool:
    """True when the cost grows faster than the work by more than ``tolerance`` in the exponent."""
    return exponent > work_exponent + tolerance


def plot(curves: dict, path) -> None:
    """Draw time (and peak memory) against size, log-log, one panel per workload, into ``path`` (PNG).
    ``curves``: {workload: {"what": ..., "sizes": [...], "tapecli": [s], "numpy": [s], "peak_bytes": [...]}}."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 3.8), squeeze=False)
    for ax, (workload, curve) in zip(axes[0], curves.items()):
        ax.loglog(curve["sizes"], curve["tapecli"], "o-", label="tapecli")
        ax.loglog(curve["sizes"], curve["numpy"], "s--", label="NumPy by hand")
        ax.set_title(workload)
        ax.set_xlabel(curve["what"])
        ax.set_ylabel("seconds (median)")
        memory = [b for b in curve["peak_bytes"] if b]
        if memory:
            twin = ax.twinx()
            twin.loglog(curve["sizes"][-len(memory):], memory, "^:", color="grey", label="tapecli peak memory")
            twin.set_ylabel("peak bytes")
        ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
