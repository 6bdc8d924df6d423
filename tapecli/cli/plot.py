"""`tapecli plot`: draw values a program binds (tensors, gradients) with matplotlib into a PNG/SVG/PDF file,
or with plotext in the terminal. Both come with the ``plot`` extra; matplotlib is imported here only, and draws
on a figure of its own (no pyplot, so no interactive backend).

Every check on the names and shapes is made before anything is drawn, and a file is written under a temporary
name and renamed, so a bad request leaves no half-written file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from tapecli.errors import UsageError

FORMATS = ("png", "svg", "pdf")
INSTALL = "pip install 'tapecli[plot]'"


@dataclass
class Series:
    name: str
    values: np.ndarray


@dataclass
class Drawing:
    """What `plot` drew: the run's result (for its output and warnings), the file written or the text for
    the terminal."""
    result: object
    x: Series | None
    ys: list[Series]
    output: str | None = None
    text: str | None = None
    kind: str = "lines"

    def to_json(self) -> dict:
        return {"output": self.output, "kind": self.kind, "x": None if self.x is None else self.x.name,
                "y": [{"name": s.name, "shape": list(s.values.shape)} for s in self.ys]}


MAX_TITLE = 1000        # characters of --title: a longer one cannot be read on a plot (and took minutes to lay out)


def check_request(ys: list[str] | None, output: str | None, title: str | None = None) -> str | None:
    """The output format (None: the terminal); a UsageError for a request that cannot be drawn at all."""
    if not ys:
        raise UsageError("plot needs at least one --y NAME (a value the program binds)")
    if title is not None and len(title) > MAX_TITLE:
        raise UsageError(f"--title is {len(title):,} characters long; a plot's title may have at most {MAX_TITLE:,}")
    if output is None:
        _require("plotext", "drawing in the terminal")
        return None
    ext = os.path.splitext(output)[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise UsageError(f"-o {output}: the file must end in .png, .svg or .pdf")
    from tapecli.tools.outfile import target
    target(output, "-o")        # a regular file or a new path in a folder that exists (checked again on writing)
    _require("matplotlib", f"writing .{ext} files")
    if title is not None:
        _check_math_text(title)
    return ext


def _check_math_text(title: str) -> None:
    """matplotlib reads text between two $ signs as math: a title it cannot parse is a usage error (said
    before the program runs), not a failure halfway through drawing."""
    from matplotlib.mathtext import MathTextParser
    from matplotlib.text import Text
    try:
        text, math = Text(text=title)._preprocess_math(title)
    except AttributeError:          # (a matplotlib without that method: drawing will tell)
        return
    if not math:
        return
    try:
        MathTextParser("path").parse(text, 72)
    except ValueError as e:
        reason = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise UsageError(f"--title {title!r}: matplotlib cannot parse the math text between its $ signs ({reason}); "
                         f"write \\$ for a dollar sign") from None


def _literal(text: str) -> str:
    """A name drawn by matplotlib as written: a $ in it is not the start of math text."""
    return text.replace("$", r"\$")


def _require(module: str, what: str) -> None:
    import importlib
    try:
        importlib.import_module(module)
    except ImportError:
        raise UsageError(f"{what} needs {module}, which is not installed: {INSTALL}") from None


# ----------------------------------------------------------------- values

def bound_values(result) -> dict[str, object]:
    """Every name a `--y` may give: the program's top-level names, then the gradient entries' names
    (``grads[1]``, ``g["w"]``, ``d(y)/d(x)`` with --of/--wrt) that are not top-level names already."""
    from tapecli import api
    from tapecli.cli.render import _is_value
    names = {k: v for k, v in result.scope.vars.items() if _is_value(v)}
    for entry in api.request_entries(result.implicit or result.requests, lambda v: v):
        if entry["name"] is not None and entry["name"] not in names:
            names[entry["name"]] = entry["value"] if entry["value"] is not None else NoGradient(entry.get("why"))
    return names


class NoGradient:
    """A gradient entry that is None, and why."""

    def __init__(self, why: str | None):
        self.why = why


def lookup(name: str, values: dict[str, object], what: str) -> Series:
    if name not in values:
        shown = ", ".join(values) or "none"
        raise UsageError(f"{what} {name}: the program binds no value of that name; the names it binds: {shown}")
    return Series(name, to_array(values[name], f"{what} {name}"))


def to_array(value, what: str) -> np.ndarray:
    """A float64 array for a tensor, a variable, a number or a (nested) list of them; a UsageError for
    anything else (None, a string, a function, a ragged list)."""
    from tapecli.cli.tensorfmt import as_array
    arr = as_array(value)
    if arr is None and isinstance(value, (int, float)) and not isinstance(value, bool):
        arr = np.asarray(value)
    if arr is None and isinstance(value, list):
        parts = [to_array(v, what) for v in value]
        if len({p.shape for p in parts}) > 1:
            raise UsageError(f"{what} is a ragged list (elements of shapes "
                             f"{', '.join(str(list(s)) for s in dict.fromkeys(p.shape for p in parts))}); "
                             f"plot needs a rectangular value")
        arr = np.stack(parts) if parts else np.zeros(0)
    if isinstance(value, NoGradient):
        raise UsageError(f"{what} is None, not numbers" + (f": {value.why}" if value.why else ""))
    if arr is None:
        from tapecli.cli.render import type_json
        kind = "None" if value is None else f"a {type_json(value)['kind']}"
        raise UsageError(f"{what} is {kind}, not numbers; plot draws tensors and gradients")
    if arr.dtype.kind not in "fiub":
        raise UsageError(f"{what} holds {arr.dtype} values, not numbers")
    _weigh(arr.size, 8, what)           # its float64 copy
    return arr.astype(np.float64)


def series(result, x: str | None, ys: list[str], logy: bool) -> tuple[Series | None, list[Series], str]:
    """The checked --x and --y values and the kind of plot: ``lines`` or ``heatmap``."""
    values = bound_values(result)
    xs = lookup(x, values, "--x") if x is not None else None
    found = [lookup(name, values, "--y") for name in ys]
    for s in ([xs] if xs else []) + found:
        if s.values.ndim > 2 or (s is xs and s.values.ndim != 1):
            raise UsageError(f"{'--x' if s is xs else '--y'} {s.name} has shape {list(s.values.shape)}; plot draws "
                             f"1-D values as lines{'' if s is xs else ' and a 2-D --y (without --x) as a heat map'}")
    if any(s.values.ndim == 2 for s in found):
        if xs is not None or len(found) > 1:
            two = next(s for s in found if s.values.ndim == 2)
            raise UsageError(f"--y {two.name} has shape {list(two.values.shape)}: a 2-D value is drawn alone as a "
                             f"heat map, without --x or other --y values")
        if logy:
            raise UsageError("--logy is for line plots, not a heat map")
        if found[0].values.size == 0:
            raise UsageError(f"--y {found[0].name} is empty: nothing to draw")
        return xs, found, "heatmap"
    for s in found:
        if s.values.ndim == 0:
            raise UsageError(f"--y {s.name} is a scalar; plot draws 1-D values (for example over a --set grid)")
        if xs is not None and s.values.shape != xs.values.shape:
            raise UsageError(f"--x {xs.name} has shape {list(xs.values.shape)} but --y {s.name} has shape "
                             f"{list(s.values.shape)}; they must have the same length")
        if s.values.size == 0:
            raise UsageError(f"--y {s.name} is empty: nothing to draw")
        if logy and not np.any(np.isfinite(s.values) & (s.values > 0)):
            raise UsageError(f"--logy: --y {s.name} has no positive value, and a logarithmic axis shows only "
                             f"positive values; draw it without --logy")
    return xs, found, "lines"


# ------------------------------------------------------------------ files

def draw(result, filename: str, x: str | None, ys: list[str], output: str | None, title: str | None,
         logy: bool, color: bool | None) -> Drawing:
    xs, found, kind = series(result, x, ys, logy)
    # what drawing needs besides the values, weighed before any of it is made
    each = (FILE_POINT_BYTES if output is not None else PREPARE_POINT_BYTES) if kind == "lines" else CELL_BYTES
    _weigh(sum(s.values.size for s in found), each, f"a plot of {kind}")
    heading = _title(title, filename)
    drawing = Drawing(result, xs, found, output=output, kind=kind)
    if output is None:
        drawing.text = terminal_plot(xs, found, kind, heading, logy, color)
    else:
        write_file(xs, found, kind, _title(title, _literal(filename or "<stdin>")), logy, output)
    return drawing


def _title(title: str | None, filename: str) -> str:
    name = os.path.basename(filename) if filename and filename != "<stdin>" else "<stdin>"
    return f"{title} ({name})" if title else name


def figure(xs: Series | None, ys: list[Series], kind: str, heading: str, logy: bool):
    """A matplotlib Figure (not pyplot's: no backend is chosen) with the plot drawn, labelled and titled."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7.0, 4.5), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    if kind == "heatmap":
        s = ys[0]
        image = ax.imshow(s.values, aspect="auto", cmap="viridis", interpolation="nearest")
        fig.colorbar(image, ax=ax, label=_literal(s.name))
        ax.set_xlabel("column (axis 1)")
        ax.set_ylabel("row (axis 0)")
    else:
        for s in ys:
            x = xs.values if xs is not None else np.arange(s.values.size)
            ax.plot(x, s.values, label=_literal(s.name), linewidth=1.8)
        ax.set_xlabel(_literal(xs.name) if xs is not None else "index")
        ax.set_ylabel(_literal(ys[0].name) if len(ys) == 1 else "value")
        if logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend()
    ax.set_title(heading)
    return fig


def write_file(xs, ys, kind, heading, logy, output) -> None:
    """Draw into ``output`` (through a symlink; never onto a device or a FIFO): a temporary file beside it,
    renamed when complete (tools/outfile.py)."""
    import matplotlib
    from tapecli.tools import outfile
    ext = os.path.splitext(output)[1].lower().lstrip(".")
    metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[ext]

    def fill(f):
        # fixed ids, and every point of a curve kept (no simplification): the same bytes for the same data
        with matplotlib.rc_context({"svg.hashsalt": "tapecli", "path.simplify": False}):
            figure(xs, ys, kind, heading, logy).savefig(f, format=ext, metadata=metadata)
    outfile.write_with(output, fill, "-o")


# --------------------------------------------------------------- terminal

def terminal_size() -> tuple[int, int]:
    """COLUMNS and LINES where set, else the terminal's (stdout, then stderr), else 80 x 24."""
    size = None
    for fd in (1, 2, 0):
        try:
            size = os.get_terminal_size(fd)
            break
        except (AttributeError, ValueError, OSError):
            pass
    cols, lines = (size.columns, size.lines) if size else (80, 24)
    cols, lines = _env_size("COLUMNS", cols), _env_size("LINES", lines)
    return min(max(cols, 20), MAX_COLUMNS), min(max(lines, 8), MAX_LINES)


# The largest terminal plot: plotext keeps several objects per character cell, and 200,000 x 200,000 cells
# ended in std::bad_alloc (an abort). Wider or taller terminals get a plot of this size.
MAX_COLUMNS, MAX_LINES = 500, 200


def _env_size(name: str, default: int) -> int:
    """COLUMNS or LINES as a number of characters, as curses reads them; anything else (``²``, ``-3``, ``80x``)
    is ignored, as a shell ignores it."""
    text = os.environ.get(name, "").strip()
    if text.isascii() and text.isdigit() and len(text) < 10:
        return int(text)
    return default


def terminal_plot(xs, ys, kind, heading, logy, color: bool | None) -> str:
    """The plot as text (ANSI colors only if ``color``, or None and stdout is a terminal), sized to the terminal."""
    import sys
    import plotext
    cols, lines = terminal_size()
    if color is None:
        color = bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty()
    f = plotext.figure
    f.clear()
    if kind == "heatmap":
        if not color:
            return _ascii_heatmap(ys[0], heading, cols, lines - 1)
        v = ys[0].values
        rows, width = min(v.shape[0], lines - 4), min(v.shape[1], cols - 10)     # (a cell a character at most)
        v = v[np.ix_(np.arange(rows) * v.shape[0] // rows, np.arange(width) * v.shape[1] // width)]
        f.draw(f.heatmap(np.nan_to_num(v).tolist(), map="viridis", fill=True))
        f.label(f"{ys[0].name}: rows (axis 0) by columns (axis 1)", axis="x")
    else:
        shown = []
        for s in ys:
            x = xs.values if xs is not None else np.arange(s.values.size, dtype=np.float64)
            keep = np.isfinite(x) & np.isfinite(s.values) & ((s.values > 0) if logy else True)
            shown.append(_thin(x[keep], s.values[keep], cols, lines, logy))
        _weigh(sum(px.size for px, _ in shown), TERMINAL_POINT_BYTES, "a terminal plot")
        for i, (s, (px, py)) in enumerate(zip(ys, shown)):
            # without colors, each line has a character of its own
            marker = {} if color else {"marker": _MARKERS[i % len(_MARKERS)]}
            f.draw(f.signal(px.tolist(), py.tolist(), **marker).label(s.name))
        f.label(xs.name if xs is not None else "index", axis="x")
        f.label(ys[0].name if len(ys) == 1 else "value", axis="y")
        if logy:
            f.ruler("y").scale("log")
    f.title(heading)
    f.plot_size(cols, lines - 1)             # a line left for the prompt
    return f.build().string(colorless=not color).rstrip("\n")


_MARKERS = ("*", "o", "+", "x", "#", "@")

# What drawing a point costs, at most, in memory: plotext keeps Python objects per point (about 1.6 kB each
# were measured: a million points took 1.7 GB and 42 s); matplotlib's paths and renderers 170-240 bytes.
TERMINAL_POINT_BYTES = 2000
FILE_POINT_BYTES = 400
PREPARE_POINT_BYTES = 128       # the terminal's masks, copies and grid cells (_thin) per point
CELL_BYTES = 64                 # a heat map's copies per element (both outputs resample it)


def _weigh(points: int, each: int, what: str) -> None:
    """The points of a plot weighed against the memory cap before anything is drawn (a LimitError over it)."""
    from tapecli.runtime.limits import admit
    if points:
        admit(points, each, f"{what} ({points:,} points)")


def _thin(x: np.ndarray, y: np.ndarray, cols: int, lines: int, logy: bool) -> tuple[np.ndarray, np.ndarray]:
    """The points a terminal can tell apart: on a grid finer than the finest marker (braille, 2 x 4 dots a
    character), the first point of each cell it occupies, and the points at the ends of both axes (so the axes
    have the same ranges). A terminal plot is drawn point by point as markers, so this draws the same cells as
    every point would, at a cost bound by the terminal's size rather than the data's."""
    width, height = 2 * cols, 4 * lines
    if x.size <= width * height // 4:
        return x, y

    def cells(v, k):
        lo, hi = v.min(), v.max()
        if not hi > lo:
            return np.zeros(v.size, dtype=np.int64)
        scaled = (v / 2 - lo / 2) / (hi / 2 - lo / 2)       # (halves: no overflow at the ends of float64)
        return np.minimum((scaled * k).astype(np.int64), k - 1)

    cell = cells(x, width) * height + cells(np.log10(y) if logy else y, height)
    first = np.unique(cell, return_index=True)[1]
    ends = [int(np.argmin(x)), int(np.argmax(x)), int(np.argmin(y)), int(np.argmax(y))]
    keep = np.unique(np.concatenate([first, np.asarray(ends, dtype=first.dtype)]))
    return x[keep], y[keep]
_RAMP = " .:-=+*#%@"


def _ascii_heatmap(s: Series, heading: str, cols: int, lines: int) -> str:
    """A heat map without colors: each cell one character of a ten-step ramp, the matrix resampled to fit."""
    v = s.values
    rows = max(1, min(v.shape[0], lines - 3))
    width = max(1, min(v.shape[1], cols - 2))
    r_idx = (np.arange(rows) * v.shape[0] // rows)
    c_idx = (np.arange(width) * v.shape[1] // width)
    cells = v[np.ix_(r_idx, c_idx)]
    finite = cells[np.isfinite(cells)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    scale = (cells - lo) / (hi - lo) if hi > lo else np.zeros_like(cells)
    steps = np.clip((np.nan_to_num(scale) * (len(_RAMP) - 1)).round().astype(int), 0, len(_RAMP) - 1)
    out = [heading, "+" + "-" * width + "+"]
    out += ["|" + "".join(_RAMP[k] for k in row) + "|" for row in steps]
    out.append("+" + "-" * width + "+")
    out.append(f"{s.name} {list(v.shape)}: '{_RAMP[0]}' {lo:.4g} ... '{_RAMP[-1]}' {hi:.4g}")
    return "\n".join(out)
