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
    z: Series | None = None
    arrows: tuple[Series, Series] | None = None

    def to_json(self) -> dict:
        doc = {"output": self.output, "kind": self.kind, "x": None if self.x is None else self.x.name,
               "y": [{"name": s.name, "shape": list(s.values.shape)} for s in self.ys]}
        if self.z is not None:
            doc["z"] = {"name": self.z.name, "shape": list(self.z.values.shape)}
            doc["arrows"] = None if self.arrows is None else [s.name for s in self.arrows]
        return doc


@dataclass
class Style:
    """How a file is drawn: --title, --xlabel, --ylabel, --logy, --dpi and --size (inches, width by height)."""
    title: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None
    logy: bool = False
    dpi: int = 100
    size: tuple[float, float] = (7.0, 4.5)


MAX_PIXELS = 50_000_000     # --size times --dpi: a larger picture is a usage error (matplotlib's own limit is 2**23 a side)


def parse_size(text: str | None) -> tuple[float, float]:
    """--size WxH in inches (``8x5``, ``6.5x4``)."""
    if text is None:
        return Style.size
    width, sep, height = text.lower().partition("x")
    try:
        size = (float(width), float(height)) if sep else None
    except ValueError:
        size = None
    if size is None or not all(0.5 <= v <= 100 for v in size):
        raise UsageError(f"--size {text}: give WIDTHxHEIGHT in inches, each from 0.5 to 100 (for example 8x5)")
    return size


MAX_TITLE = 1000        # characters of --title: a longer one cannot be read on a plot (and took minutes to lay out)


def check_request(ys: list[str] | None, output: str | None, style: Style, reads=()) -> str | None:
    """The output format (None: the terminal); a UsageError for a request that cannot be drawn at all (or an
    ``output`` that is one of the files the command reads, ``reads``)."""
    if not ys:
        raise UsageError("plot needs at least one --y NAME (a value the program binds)")
    for option, text in (("--title", style.title), ("--xlabel", style.xlabel), ("--ylabel", style.ylabel)):
        if text is not None and len(text) > MAX_TITLE:
            raise UsageError(f"{option} is {len(text):,} characters long; a plot's text may have at most "
                             f"{MAX_TITLE:,}")
    if not 10 <= style.dpi <= 2000:
        raise UsageError(f"--dpi {style.dpi}: give a number from 10 to 2000")
    pixels = style.size[0] * style.size[1] * style.dpi ** 2
    if pixels > MAX_PIXELS:
        raise UsageError(f"--size {style.size[0]:g}x{style.size[1]:g} at --dpi {style.dpi} is {pixels:,.0f} pixels; "
                         f"at most {MAX_PIXELS:,}")
    if output is None:
        _require("plotext", "drawing in the terminal")
        return None
    ext = os.path.splitext(output)[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise UsageError(f"-o {output}: the file must end in .png, .svg or .pdf")
    from tapecli.tools.outfile import target
    target(output, "-o", reads)     # a regular file or a new path in a folder that exists, not an input (checked
                                    # again on writing)
    _require("matplotlib", f"writing .{ext} files")
    for option, text in (("--title", style.title), ("--xlabel", style.xlabel), ("--ylabel", style.ylabel)):
        if text is not None:
            _check_math_text(text, option)
    return ext


def _check_math_text(title: str, option: str = "--title") -> None:
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
        raise UsageError(f"{option} {title!r}: matplotlib cannot parse the math text between its $ signs ({reason}); "
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

def bound_values(result, more_requests=()) -> dict[str, object]:
    """Every name a `--y` may give: the program's top-level names, then the gradient entries' names
    (``grads[1]``, ``g["w"]``, ``d(y)/d(x)`` with --of/--wrt, and ``more_requests``: the hessians'
    ``d2(y)/d(x)2``) that are not top-level names already."""
    from tapecli import api
    from tapecli.cli.render import _is_value
    names = {k: v for k, v in result.scope.vars.items() if _is_value(v)}
    for entry in api.request_entries(list(result.implicit or result.requests) + list(more_requests), lambda v: v):
        if entry["name"] is not None and entry["name"] not in names:
            names[entry["name"]] = entry["value"] if entry["value"] is not None else NoGradient(entry.get("why"))
    return names


def run_values(source: str, filename: str, options, sweep: list[str] | None, wanted: list[str | None]):
    """Run the program (or, with --sweep, run it at each point) and return (what has its output and
    warnings, the values by name). The hessians' entries ``d2(T)/d(S)2`` are computed when a name asks for
    them; at a sweep's points, each value is stacked along a new first axis (the gradient entries too, when
    a name is one)."""
    from tapecli.tools import sweep as s
    hessian = options.of is not None and any(name and name.startswith("d2(") for name in wanted)
    if not sweep:
        from tapecli.api import run_source
        result = run_source(source, filename, options)
        return result, bound_values(result, s.hessians(result, options) if hessian else ())
    from types import SimpleNamespace
    from tapecli.tools.diff import json_array
    sweeps = s.load_sweeps(sweep, options.limits)
    doc = s.sweep_doc("run", source, filename, options, sweeps)
    docs = [doc]
    values = dict(doc["values"])
    if any(name and name not in values for name in wanted):          # a gradient entry's name
        docs.append(s.sweep_doc("hessian" if hessian else "grad", source, filename, options, sweeps))
        key = "hessians" if hessian else "gradients"
        values.update({e["name"]: e["value"] for e in docs[-1][key] if e["name"] and e["name"] not in values})
    for d in docs:
        if d.get("errors"):
            from tapecli.errors import ERROR_KINDS, TdfError
            e = d["errors"][0]
            raise ERROR_KINDS.get(e["kind"], TdfError)(
                f"at sweep point {e['point']} (of {len(d['errors'])} that failed): {e['message']}",
                line=e["line"], column=e["column"])
    arrays = {name: json_array(v) for name, v in values.items()}
    return SimpleNamespace(output=doc["output"], warnings=doc["warnings"]), \
        {name: arr if arr is not None else values[name] for name, arr in arrays.items()}


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
    from tapecli.cli.render import as_array
    arr = value if isinstance(value, np.ndarray) else as_array(value)
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


def series(values: dict, x: str | None, ys: list[str], logy: bool) -> tuple[Series | None, list[Series], str]:
    """The checked --x and --y values and the kind of plot: ``lines`` or ``heatmap``. A square --y of an --x's
    length that is diagonal (the hessian of an elementwise function) is drawn as its diagonal, a line."""
    xs = lookup(x, values, "--x") if x is not None else None
    found = [_diagonal(lookup(name, values, "--y"), xs) for name in ys]
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


def _diagonal(s: Series, xs: Series | None) -> Series:
    v = s.values
    if xs is None or v.ndim != 2 or v.shape != (xs.values.size,) * 2 or xs.values.ndim != 1:
        return s
    if np.count_nonzero(v - np.diag(np.diag(v))):
        raise UsageError(f"--y {s.name} is a {list(v.shape)} matrix with nonzero entries off its diagonal: only a "
                         f"diagonal one (an elementwise function's hessian) is drawn against --x, as its diagonal; "
                         f"draw it alone as a heat map")
    return Series(s.name, np.diag(v).copy())


def surface(values: dict, x: str | None, ys: list[str], z: str, arrows: list[str] | None):
    """The checked coordinates (--x, the one --y: 1-D axes or 2-D grids of --z's shape), the 2-D --z and the
    arrows (two values of --z's shape) of a contour plot."""
    if x is None or len(ys) != 1:
        raise UsageError(f"--z {z} is drawn over --x X and one --y Y, its coordinates (1-D axes or 2-D grids)")
    zs = lookup(z, values, "--z")
    if zs.values.ndim != 2 or min(zs.values.shape) < 2:
        raise UsageError(f"--z {z} has shape {list(zs.values.shape)}; a contour plot needs a 2-D value of at least "
                         f"2 x 2")
    rows, cols = zs.values.shape
    coords = []
    for option, name, length in (("--x", x, cols), ("--y", ys[0], rows)):
        c = lookup(name, values, option)
        if c.values.shape not in ((length,), zs.values.shape):
            raise UsageError(f"{option} {name} has shape {list(c.values.shape)}; as --z {z}'s coordinate it must have "
                             f"shape [{length}] or {list(zs.values.shape)}")
        coords.append(c)
    field = None
    if arrows:
        field = tuple(lookup(name, values, "--arrows") for name in arrows)
        for s in field:
            if s.values.shape != zs.values.shape:
                raise UsageError(f"--arrows {s.name} has shape {list(s.values.shape)}; arrows need --z's shape "
                                 f"{list(zs.values.shape)}")
    return coords[0], coords[1], zs, field


def arrow_names(arrows: str | None, z: str | None, of: str | None, wrt: str | None, x: str | None,
                ys: list[str]) -> list[str] | None:
    """--arrows U,V; without it, a contour plot of --of Z over --wrt X,Y draws d(Z)/d(X), d(Z)/d(Y)."""
    if arrows is not None:
        names = [n.strip() for n in arrows.split(",")]
        if len(names) != 2 or not all(names):
            raise UsageError(f"--arrows {arrows}: give two names, U,V (the arrows' x and y components)")
        return names
    wrt_names = [w.strip() for w in (wrt or "").split(",")]
    if z is not None and of == z and len(ys) == 1 and x is not None and set(wrt_names) >= {x, ys[0]}:
        return [f"d({z})/d({x})", f"d({z})/d({ys[0]})"]
    return None


# ------------------------------------------------------------------ files

def draw(result, values: dict, filename: str, x: str | None, ys: list[str], output: str | None, style: Style,
         color: bool | None, z: str | None = None, arrows: list[str] | None = None) -> Drawing:
    """Check the request against the values a run (or a sweep) bound, then draw into ``output`` or, without
    it, as text for the terminal. ``result`` has the run's output and warnings."""
    if z is not None:
        xs, yc, zs, field = surface(values, x, ys, z, arrows)
        found, kind = [yc], "contour"
        _weigh(zs.values.size * (3 if field else 1), CELL_BYTES, "a contour plot")
    else:
        xs, found, kind = series(values, x, ys, style.logy)
        zs = field = None
        # what drawing needs besides the values, weighed before any of it is made
        each = (FILE_POINT_BYTES if output is not None else PREPARE_POINT_BYTES) if kind == "lines" else CELL_BYTES
        _weigh(sum(s.values.size for s in found), each, f"a plot of {kind}")
    drawing = Drawing(result, xs, found, output=output, kind=kind, z=zs, arrows=field)
    if output is None:
        shown, shown_kind = ([zs], "heatmap") if zs is not None else (found, kind)   # (the terminal: z's heat map)
        drawing.text = terminal_plot(xs, shown, shown_kind, _title(style.title, filename), style.logy, color)
    else:
        write_file(drawing, _title(style.title, _literal(filename or "<stdin>")), style, output)
    return drawing


def _title(title: str | None, filename: str) -> str:
    name = os.path.basename(filename) if filename and filename != "<stdin>" else "<stdin>"
    return f"{title} ({name})" if title else name


def figure(d: Drawing, heading: str, style: Style):
    """A matplotlib Figure (not pyplot's: no backend is chosen) with the plot drawn, labelled and titled."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=style.size, dpi=style.dpi, layout="constrained")
    ax = fig.add_subplot()
    xs, ys = d.x, d.ys
    if d.kind == "heatmap":
        labels = _heatmap(fig, ax, ys[0])
    elif d.kind == "contour":
        labels = _contour(fig, ax, d)
    else:
        for s in ys:
            x = xs.values if xs is not None else np.arange(s.values.size)
            ax.plot(x, s.values, label=_literal(s.name), linewidth=1.8)
        labels = (_literal(xs.name) if xs is not None else "index",
                  _literal(ys[0].name) if len(ys) == 1 else "value")
        if style.logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend()
    ax.set_xlabel(style.xlabel if style.xlabel is not None else labels[0])
    ax.set_ylabel(style.ylabel if style.ylabel is not None else labels[1])
    ax.set_title(heading)
    return fig


def _heatmap(fig, ax, s: Series) -> tuple[str, str]:
    """A matrix cell by cell, rows down: a signed one in a diverging colormap centred on 0 (blue below, red
    above, white at 0), any other in viridis; ticks on whole rows and columns."""
    from matplotlib.ticker import MaxNLocator
    v = s.values
    finite = v[np.isfinite(v)]
    signed = finite.size and finite.min() < 0 < finite.max()
    if signed:
        bound = float(np.abs(finite).max())
        image = ax.imshow(v, aspect="auto", cmap="RdBu_r", vmin=-bound, vmax=bound, interpolation="nearest")
    else:
        image = ax.imshow(v, aspect="auto", cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=ax, label=_literal(s.name))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    return "column (axis 1)", "row (axis 0)"


def _contour(fig, ax, d: Drawing) -> tuple[str, str]:
    """--z over its coordinates as filled contours with their lines, and the arrows of the gradient field
    (at most ARROWS a side, evenly picked, so that they stay readable)."""
    z = d.z.values
    gx, gy = _grid(d.x.values, d.ys[0].values, z.shape)
    filled = ax.contourf(gx, gy, z, levels=16, cmap="viridis")
    ax.contour(gx, gy, z, levels=filled.levels, colors="black", linewidths=0.4, alpha=0.5)
    fig.colorbar(filled, ax=ax, label=_literal(d.z.name))
    if d.arrows is not None:
        step = (-(-z.shape[0] // ARROWS), -(-z.shape[1] // ARROWS))
        pick = (slice(None, None, step[0]), slice(None, None, step[1]))
        u, v = d.arrows[0].values[pick], d.arrows[1].values[pick]
        ax.quiver(gx[pick], gy[pick], u, v, color="white", edgecolor="black", linewidth=0.3, angles="xy",
                  label=_literal(f"({d.arrows[0].name}, {d.arrows[1].name})"))
        ax.legend(loc="upper right", framealpha=0.8)
    ax.set_aspect("auto")
    return _literal(d.x.name), _literal(d.ys[0].name)


ARROWS = 16


def _grid(x: np.ndarray, y: np.ndarray, shape) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates as 2-D grids of ``shape`` (1-D axes spread as np.meshgrid spreads them)."""
    if x.ndim == 1:
        x = np.broadcast_to(x[None, :], shape)
    if y.ndim == 1:
        y = np.broadcast_to(y[:, None], shape)
    return x, y


def write_file(d: Drawing, heading: str, style: Style, output: str) -> None:
    """Draw into ``output`` (through a symlink; never onto a device or a FIFO): a temporary file beside it,
    renamed when complete (tools/outfile.py)."""
    import matplotlib
    from tapecli.tools import outfile
    ext = os.path.splitext(output)[1].lower().lstrip(".")
    metadata = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[ext]

    def fill(f):
        # fixed ids, and every point of a curve kept (no simplification): the same bytes for the same data
        with matplotlib.rc_context({"svg.hashsalt": "tapecli", "path.simplify": False}):
            figure(d, heading, style).savefig(f, format=ext, metadata=metadata)
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
    """The plot as text (ANSI colors only if ``color``, or None and stdout gets colour: cli/colour.py), sized to
    the terminal."""
    import sys
    import plotext
    from tapecli.cli.colour import enabled
    cols, lines = terminal_size()
    if color is None:
        color = enabled(sys.stdout)
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
