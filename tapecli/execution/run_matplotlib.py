"""A run's own ``matplotlib`` and ``matplotlib.pyplot``: stand-ins that draw nothing, so that a script that plots
as it trains (``plt.plot(losses)``, ``fig, axes = plt.subplots(2, 2)``, ``plt.savefig("loss.png")``) goes on and
prints what CPython prints with the Agg backend, which writes nothing to standard output. The real matplotlib is
never imported (it reads and writes font caches and configuration files): its first import in a run warns once
that no figure is drawn, shown or saved.

What a program reads of the results is matplotlib's where it is known without drawing: ``subplots`` gives a
Figure and an Axes or a NumPy array of them shaped as matplotlib's ``squeeze`` shapes it, ``plot`` a list of one
Line2D per line (``line, = ax.plot(x, y)``), ``hist`` NumPy's counts and edges as matplotlib computes them, a
Figure and an Axes print as matplotlib's (``Figure(640x480)``, ``Axes(0.125,0.11;0.775x0.77)``, ``<Axes:
title={'center': 'loss'}>``), a Text as matplotlib's. Any other attribute of a stand-in is a callable that takes
any arguments and gives a stand-in, which takes any attribute, subscript or ``with`` in turn, iterates as empty
and prints as ``<matplotlib stand-in NAME>``. A stand-in never calls or iterates what a program passes it
(``hist`` reads its data as NumPy, through the run's weighed NumPy), and holds only stand-ins, numbers and the
program's own arguments: nothing of tapecli is reachable from it (its private names are the guard's to refuse)."""
from __future__ import annotations

import numbers
import types

import numpy as np

from tapecli.execution.modules import MATPLOTLIB_SUBMODULES
from tapecli.runtime.limits import admit_bytes
from tapecli.runtime.numpy_gate import weighed

WARNING = "matplotlib: tapecli draws no figures (plots are neither shown nor saved; the program goes on)"
# A stand-in's bytes, weighed before many are made at once (subplots' grid, a histogram's bars).
_STAND_IN_BYTES = 1_000
# matplotlib's defaults that these stand-ins read (rcParams), and a few that scripts read or set.
_DEFAULTS = {"figure.figsize": [6.4, 4.8], "figure.dpi": 100.0, "figure.subplot.left": 0.125,
             "figure.subplot.right": 0.9, "figure.subplot.bottom": 0.11, "figure.subplot.top": 0.88,
             "figure.subplot.wspace": 0.2, "figure.subplot.hspace": 0.2, "hist.bins": 10, "font.size": 10.0,
             "lines.linewidth": 1.5, "lines.markersize": 6.0, "axes.grid": False, "axes.titlesize": "large",
             "axes.labelsize": "medium", "legend.fontsize": "medium", "image.cmap": "viridis",
             "savefig.dpi": "figure", "savefig.format": "png", "backend": "Agg", "interactive": False,
             "font.family": ["sans-serif"], "text.usetex": False}


def _defaults() -> dict:
    """A run's own copy of the defaults (their lists too: a program may change them in place)."""
    return {key: list(value) if isinstance(value, list) else value for key, value in _DEFAULTS.items()}


def make(name: str, warn, modules) -> types.ModuleType:
    """The run's ``matplotlib`` (``name``), its ``matplotlib.pyplot`` or another of its modules (the stand-ins of
    the classes of its that a program names, any other name a stand-in: modules.MATPLOTLIB_SUBMODULES);
    ``warn(message)`` gives the run's warning once, ``modules`` the run's other stand-ins (pyplot shares
    matplotlib's rcParams)."""
    warn(WARNING)
    if name == "matplotlib":
        return _matplotlib(modules)
    if name == "matplotlib.pyplot":
        return _pyplot(modules.module("matplotlib").rcParams)
    names = {"figure": {"Figure": Figure}, "axes": {"Axes": Axes}, "lines": {"Line2D": Line2D},
             "patches": {"Rectangle": Rectangle}, "text": {"Text": Text, "Annotation": Annotation},
             "style": {"use": _Style().use, "context": _Style().context, "available": []}}
    return _module(name, f"tapecli's stand-in of {name}: it draws nothing.", names.get(name.split(".", 1)[1], {}))


def _module(name: str, doc: str, names: dict) -> types.ModuleType:
    """A stand-in module holding ``names``, any other public name of it a stand-in."""
    module = types.ModuleType(name, doc)
    for key, value in names.items():
        if isinstance(value, types.FunctionType):
            value.__module__, value.__qualname__ = name, key
        setattr(module, key, value)

    def __getattr__(attr: str):
        if attr.startswith("_"):
            raise AttributeError(f"module '{name}' has no attribute '{attr}'")
        return _Anything(attr)
    module.__getattr__ = __getattr__
    return module


def _matplotlib(modules) -> types.ModuleType:
    rc = RcParams(_defaults())

    def use(backend, *, force=True):
        """Accepted: the stand-in draws with no backend."""

    def get_backend():
        return rc.get("backend", "Agg")

    def rc_(group, **kwargs):
        for key, value in kwargs.items():
            rc[f"{group}.{key}"] = value

    def rcdefaults():
        rc.clear()
        rc.update(_defaults())

    def interactive(b):
        rc["interactive"] = bool(b)

    module = _module("matplotlib", "tapecli's stand-in of matplotlib: it draws nothing.", {
        "use": use, "get_backend": get_backend, "rc": rc_, "rcdefaults": rcdefaults, "rcParams": rc,
        "rcParamsDefault": RcParams(_defaults()), "rc_context": lambda *args, **kwargs: _Anything("rc_context"),
        "is_interactive": lambda: bool(rc.get("interactive")), "interactive": interactive})
    looked_up = module.__getattr__

    def __getattr__(attr: str):
        if attr in MATPLOTLIB_SUBMODULES or attr == "pyplot":      # (``import matplotlib.pyplot`` binds it)
            return modules.module(f"matplotlib.{attr}")
        return looked_up(attr)
    module.__getattr__ = __getattr__
    return module


class RcParams(dict):
    """matplotlib's rcParams as a dict of the run's own: what a program sets is kept for the run (the size and
    resolution of the figures it makes after) and changes nothing else."""


class _StandIn:
    """What every stand-in answers: any public attribute is a callable stand-in (an unknown method takes any
    arguments), ``with`` gives itself, and iterating gives nothing."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return _Anything(name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Anything(_StandIn):
    """The stand-in of what matplotlib would give (an unknown method, its result, a colormap, a locator)."""

    def __init__(self, name: str = ""):
        self._name = name

    def __call__(self, *args, **kwargs):
        return _Anything(self._name)

    def __getitem__(self, key):
        return _Anything(self._name)

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __repr__(self):
        return f"<matplotlib stand-in {self._name}>" if self._name else "<matplotlib stand-in>"


class _Style(_StandIn):
    """pyplot's ``style``: a style is accepted and changes nothing drawn."""

    @property
    def available(self):
        return []

    def use(self, style):
        return None

    def context(self, style, after_reset=False):
        return _Anything("context")


class Artist(_StandIn):
    def __init__(self, *args, label="", **kwargs):
        self._label = label if isinstance(label, str) else ""

    def get_label(self):
        return self._label

    def set_label(self, label):
        self._label = str(label) if label is not None else ""

    def remove(self):
        pass


class Line2D(Artist):
    def __str__(self):
        return f"Line2D({self._label})"


class Text(Artist):
    def __init__(self, x=0, y=0, text="", *args, **kwargs):
        super().__init__()
        self._x, self._y, self._text = x, y, "" if text is None else str(text)

    def get_text(self):
        return self._text

    def set_text(self, text):
        self._text = "" if text is None else str(text)

    def __repr__(self):
        return f"Text({self._x}, {self._y}, {self._text!r})"


class Annotation(Text):
    def __init__(self, text, xy, *args, **kwargs):
        super().__init__(*(xy if isinstance(xy, tuple) and len(xy) == 2 else (0, 0)), text)

    def __str__(self):
        x, y = (v if isinstance(v, numbers.Real) else 0 for v in (self._x, self._y))
        return f"Annotation({x:g}, {y:g}, {self._text!r})"


class Legend(Artist):
    def __str__(self):
        return "Legend"


class AxesImage(Artist):
    def __init__(self, shape=None, *args, label="", **kwargs):
        super().__init__(label=label)
        self._shape = shape if _cell(shape, len(shape) if type(shape) is tuple else 0) else None

    def __str__(self):
        return f"AxesImage(shape={self._shape})"


class Colorbar(_StandIn):
    pass


class PathCollection(Artist):
    pass


class FillBetweenPolyCollection(Artist):
    pass


class LineCollection(Artist):
    pass


class Rectangle(Artist):
    pass


class Container(tuple):
    """matplotlib's containers are tuples of their artists (``for bar in bars:``)."""

    def __new__(cls, artists, label=None):
        return super().__new__(cls, artists)

    def __init__(self, artists, label=None):
        self._label = label if isinstance(label, str) else None

    def get_label(self):
        return self._label

    def __repr__(self):
        return f"<{type(self).__name__} object of {len(self)} artists>"

    def __getattr__(self, name: str):
        return _StandIn.__getattr__(self, name)

    def remove(self):
        pass

    @property
    def patches(self):
        return list(self)


class BarContainer(Container):
    pass


class ErrorbarContainer(Container):
    pass


for _cls, _module_name in ((Line2D, "lines"), (Text, "text"), (Annotation, "text"), (Legend, "legend"),
                           (AxesImage, "image"), (Colorbar, "colorbar"), (PathCollection, "collections"),
                           (FillBetweenPolyCollection, "collections"), (LineCollection, "collections"),
                           (Rectangle, "patches"), (Artist, "artist"), (BarContainer, "container"),
                           (ErrorbarContainer, "container"), (Container, "container"), (RcParams, "")):
    _cls.__module__ = f"matplotlib.{_module_name}".rstrip(".")


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _pair(value):
    """Two numbers given as a tuple or list, as floats (a figure's size), else None."""
    if type(value) in (tuple, list) and len(value) == 2 and all(_real(v) for v in value):
        return float(value[0]), float(value[1])
    return None


class Figure(_StandIn):
    def __init__(self, figsize=None, dpi=None, *args, **kwargs):
        self._size = _pair(figsize) or tuple(_DEFAULTS["figure.figsize"])
        self.dpi = float(dpi) if _real(dpi) else 100.0
        self._params = {key: _DEFAULTS[f"figure.subplot.{key}"]
                        for key in ("left", "right", "bottom", "top", "wspace", "hspace")}
        self._bins = _DEFAULTS["hist.bins"]
        self._axes: list[Axes] = []
        self._current: Axes | None = None
        self._texts: list[Text] = []
        self.number = None

    @classmethod
    def _of(cls, rc: RcParams, figsize, dpi, number) -> Figure:
        """pyplot's figure: its size, resolution and grid from the run's rcParams where the call gives none."""
        made = cls(figsize if figsize is not None else rc.get("figure.figsize"),
                   dpi if dpi is not None else rc.get("figure.dpi"))
        for key in made._params:
            value = rc.get(f"figure.subplot.{key}")
            if _real(value):
                made._params[key] = float(value)
        bins = rc.get("hist.bins")
        made._bins = bins if isinstance(bins, (int, str)) else made._bins
        made.number = number
        return made

    @property
    def axes(self):
        return list(self._axes)

    def __str__(self):
        width, height = (v * self.dpi for v in self._size) if _real(self.dpi) else self._size
        return f"Figure({width:g}x{height:g})"

    def __repr__(self):
        width, height = (v * self.dpi for v in self._size) if _real(self.dpi) else self._size
        return f"<Figure size {width:g}x{height:g} with {len(self._axes)} Axes>"

    def _add(self, axes: Axes) -> Axes:
        self._axes.append(axes)
        self._current = axes
        return axes

    def gca(self):
        return self._current if self._current is not None else self.add_subplot(1, 1, 1)

    def sca(self, axes):
        self._current = axes
        return axes

    def add_subplot(self, *args, **kwargs):
        if args and isinstance(args[0], Axes):
            return self._add(args[0])
        if len(args) == 1 and isinstance(args[0], int) and 111 <= args[0] <= 999:
            args = tuple(int(c) for c in str(args[0]))
        nrows, ncols, index = (args + (1, 1, 1)[len(args):]) if len(args) <= 3 else args[:3]
        _grid(nrows, ncols)
        first, last = index if isinstance(index, tuple) and len(index) == 2 else (index, index)
        if not all(isinstance(i, int) and 1 <= i <= nrows * ncols for i in (first, last)):
            raise ValueError(f"num must be an integer with 1 <= num <= {nrows * ncols}, not {index!r}")
        rows = sorted({(first - 1) // ncols, (last - 1) // ncols})
        cols = sorted({(first - 1) % ncols, (last - 1) % ncols})
        return self._add(Axes(self, (nrows, ncols, rows[0], rows[-1], cols[0], cols[-1])))

    def add_axes(self, rect=None, *args, **kwargs):
        if isinstance(rect, Axes):
            return self._add(rect)
        bounds = tuple(rect) if isinstance(rect, (tuple, list)) and len(rect) == 4 and all(
            _real(v) for v in rect) else None
        return self._add(Axes(self, None, bounds))

    def subplots(self, nrows=1, ncols=1, *, sharex=False, sharey=False, squeeze=True, **kwargs):
        _grid(nrows, ncols)
        admit_bytes(nrows * ncols, nrows * ncols * _STAND_IN_BYTES, "subplots()'s grid of Axes")
        grid = np.empty((nrows, ncols), dtype=object)
        for row in range(nrows):
            for col in range(ncols):
                grid[row, col] = self._add(Axes(self, (nrows, ncols, row, row, col, col)))
        if squeeze:
            return grid.item() if grid.size == 1 else grid.squeeze()
        return grid

    def subplots_adjust(self, left=None, bottom=None, right=None, top=None, wspace=None, hspace=None):
        for key, value in (("left", left), ("bottom", bottom), ("right", right), ("top", top),
                           ("wspace", wspace), ("hspace", hspace)):
            if _real(value):
                self._params[key] = float(value)

    def suptitle(self, t, *args, **kwargs):
        text = Text(kwargs.get("x", 0.5), kwargs.get("y", 0.98), t)
        self._texts.append(text)
        return text

    def text(self, x, y, s, *args, **kwargs):
        return Text(x, y, s)

    def legend(self, *args, **kwargs):
        return Legend()

    def colorbar(self, *args, **kwargs):
        return Colorbar()

    def get_size_inches(self):
        return np.array(self._size)

    def set_size_inches(self, w, h=None, forward=True):
        self._size = _pair((w, h) if h is not None else w) or self._size

    def get_dpi(self):
        return self.dpi

    def set_dpi(self, value):
        self.dpi = value

    def clear(self, keep_observers=False):
        self._axes.clear()
        self._texts.clear()
        self._current = None

    clf = clear

    def _none(self, *args, **kwargs):
        return None

    savefig = show = tight_layout = draw = align_labels = _none

    def delaxes(self, axes):
        if axes in self._axes:
            self._axes.remove(axes)
        if self._current is axes:
            self._current = self._axes[-1] if self._axes else None


def _cell(value, length: int = 6) -> bool:
    return type(value) is tuple and len(value) == length and all(_real(v) for v in value)


def _grid(nrows, ncols) -> None:
    for what, n in (("rows", nrows), ("columns", ncols)):
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ValueError(f"Number of {what} must be a positive integer, not {n!r}")


class Axes(_StandIn):
    def __init__(self, fig: Figure, cell=None, bounds=None):
        if not isinstance(fig, Figure):     # (its figure's own methods are called on it: a Figure alone)
            raise TypeError(f"an Axes belongs to a Figure, not {type(fig).__name__}")
        self._figure = fig
        self._cell = cell if _cell(cell) else None      # (rows, columns, first and last row and column of its grid)
        self._bounds = bounds if _cell(bounds, 4) else None       # (add_axes's rectangle)
        self._reset()

    @property
    def figure(self):
        return self._figure

    def _reset(self):
        self._titles = {"left": "", "center": "", "right": ""}
        self._xlabel = self._ylabel = self._label = ""
        self._children = 0
        self._limits: dict = {}         # (the x and y limits the program set)
        self._handles: list = []        # (what a legend may show, in order: artists, then containers)
        self._containers: list = []

    def _position(self):
        if self._cell is None:
            return self._bounds
        nrows, ncols, row0, row1, col0, col1 = self._cell
        p = self.figure._params
        cell_h = (p["top"] - p["bottom"]) / (nrows + p["hspace"] * (nrows - 1))
        cell_w = (p["right"] - p["left"]) / (ncols + p["wspace"] * (ncols - 1))
        top = p["top"] - row0 * cell_h * (1 + p["hspace"])
        bottom = p["top"] - row1 * cell_h * (1 + p["hspace"]) - cell_h
        left = p["left"] + col0 * cell_w * (1 + p["wspace"])
        right = p["left"] + col1 * cell_w * (1 + p["wspace"]) + cell_w
        return left, bottom, right - left, top - bottom

    def __str__(self):
        bounds = self._position()
        if bounds is None:
            return "Axes(?)"
        return "Axes({0:g},{1:g};{2:g}x{3:g})".format(*bounds)

    def __repr__(self):
        fields = [f"label={self._label!r}"] if self._label else []
        titles = {k: v for k, v in self._titles.items() if v}
        if titles:
            fields.append(f"title={titles}")
        fields += [f"{axis}label={text!r}" for axis, text in (("x", self._xlabel), ("y", self._ylabel)) if text]
        return "<Axes: " + ", ".join(fields) + ">"

    def _nameless(self) -> str:
        """The label of a part of a container (a bar): no legend shows it."""
        self._children += 1
        return "_nolegend_"

    def _child(self, label=None) -> str:
        self._children += 1
        return label if isinstance(label, str) else f"_child{self._children - 1}"

    def _keep(self, artist):
        (self._containers if isinstance(artist, Container) else self._handles).append(artist)
        return artist

    def get_legend_handles_labels(self, legend_handler_map=None):
        """The artists with a label not starting with an underscore, and their labels (matplotlib's order)."""
        handles = [a for a in (*self._handles, *self._containers) if a.get_label() and not a.get_label().startswith("_")]
        return handles, [a.get_label() for a in handles]

    def set(self, **kwargs):
        """``ax.set(title=..., xlabel=..., xlim=...)``: each known setter; any other property accepted."""
        setters = {"title": self.set_title, "xlabel": self.set_xlabel, "ylabel": self.set_ylabel,
                   "xlim": self.set_xlim, "ylim": self.set_ylim, "label": self.set_label}
        return [setters[key](value) if key in setters else None for key, value in kwargs.items()]

    def plot(self, *args, **kwargs):
        return [self._keep(Line2D(label=self._child(kwargs.get("label")))) for _ in range(_lines(args))]

    semilogx = semilogy = loglog = step = plot

    def scatter(self, *args, **kwargs):
        return self._keep(PathCollection(label=self._child(kwargs.get("label"))))

    def imshow(self, X, *args, **kwargs):
        shape = X.shape if type(X) is np.ndarray else _nested_shape(X)
        return AxesImage(shape, label=self._child(kwargs.get("label")))

    def bar(self, x, height=None, *args, **kwargs):
        n = len(x) if type(x) in (list, tuple) or type(x) is np.ndarray and x.ndim == 1 else 1
        admit_bytes(n, n * _STAND_IN_BYTES, "bar()'s bars")
        return self._keep(BarContainer([Rectangle(label=self._nameless()) for _ in range(n)], kwargs.get("label")))

    barh = bar

    def hist(self, x, bins=None, range=None, density=False, weights=None, cumulative=False, bottom=None,
             histtype="bar", align="mid", orientation="vertical", rwidth=None, log=False, color=None, label=None,
             stacked=False, **kwargs):
        bins = bins if bins is not None else self.figure._bins
        if isinstance(bins, int) and not isinstance(bins, bool):     # (a bar each, weighed before NumPy counts)
            admit_bytes(bins, bins * _STAND_IN_BYTES, "hist()'s bars")
        tops, edges, count = _histogram(x, bins, range, density, weights, cumulative, stacked)
        admit_bytes(count * (len(edges) - 1), count * (len(edges) - 1) * _STAND_IN_BYTES, "hist()'s bars")
        bars = [BarContainer([Rectangle(label=self._nameless()) for _ in builtins_range(len(edges) - 1)], "_nolegend_")
                for _ in builtins_range(count)]
        labels = [label] if isinstance(label, str) else list(label) if type(label) in (list, tuple) else []
        for container, name in zip(bars, labels):       # (the first bar of each dataset is its legend's entry)
            if container and isinstance(name, str):
                container[0].set_label(name)
                self._keep(container[0])
        return (tops[0], edges, bars[0]) if count == 1 else (tops, edges, bars)

    def errorbar(self, x, y, *args, **kwargs):
        return self._keep(ErrorbarContainer((Line2D(label=self._nameless()), (), (LineCollection(label=self._nameless()),)),
                                            kwargs.get("label")))

    def fill_between(self, *args, **kwargs):
        return self._keep(FillBetweenPolyCollection(label=self._child(kwargs.get("label"))))

    fill_betweenx = fill_between

    def axhline(self, *args, **kwargs):
        return self._keep(Line2D(label=self._child(kwargs.get("label"))))

    axvline = axhline

    def text(self, x, y, s, *args, **kwargs):
        self._child()
        return Text(x, y, s)

    def annotate(self, text, xy, *args, **kwargs):
        self._child()
        return Annotation(text, xy)

    def legend(self, *args, **kwargs):
        return Legend()

    def set_title(self, label, fontdict=None, loc=None, *args, **kwargs):
        loc = loc if loc in self._titles else "center"
        self._titles[loc] = "" if label is None else str(label)
        return Text({"left": 0.0, "center": 0.5, "right": 1.0}[loc], 1.0, label)

    def get_title(self, loc="center"):
        return self._titles.get(loc, "")

    def set_xlabel(self, xlabel, *args, **kwargs):
        self._xlabel = str(xlabel)
        return Text(0.5, 0, xlabel)

    def set_ylabel(self, ylabel, *args, **kwargs):
        self._ylabel = str(ylabel)
        return Text(0, 0.5, ylabel)

    def get_xlabel(self):
        return self._xlabel

    def get_ylabel(self):
        return self._ylabel

    def set_label(self, label):
        self._label = "" if label is None else str(label)

    def get_label(self):
        return self._label

    def set_xlim(self, left=None, right=None, *args, **kwargs):
        self._limits["x"] = _limits(left, right, kwargs, "xmin", "xmax")
        return self._limits["x"]

    def set_ylim(self, bottom=None, top=None, *args, **kwargs):
        self._limits["y"] = _limits(bottom, top, kwargs, "ymin", "ymax")
        return self._limits["y"]

    def _limits_of(self, axis: str):
        """The limits set, (0.0, 1.0) of an Axes with nothing drawn, else two stand-ins (matplotlib's autoscaled
        limits come from the data drawn, which a stand-in never reads)."""
        found = self._limits.get(axis)
        if type(found) is tuple:
            return np.float64(found[0]), np.float64(found[1])       # (as matplotlib reads its view: NumPy's floats)
        if not self._children:
            return np.float64(0.0), np.float64(1.0)
        return _Anything(f"{axis}lim"), _Anything(f"{axis}lim")

    def get_xlim(self):
        return self._limits_of("x")

    def get_ylim(self):
        return self._limits_of("y")

    def twinx(self):
        return self.figure._add(Axes(self.figure, self._cell, self._bounds))

    twiny = twinx

    def get_figure(self, root=None):
        return self.figure

    def clear(self):
        self._reset()

    cla = clear

    def _none(self, *args, **kwargs):
        return None

    grid = set_xscale = set_yscale = set_aspect = tick_params = _none


builtins_range = range


def _limits(low, high, kwargs, low_name, high_name):
    """set_xlim's result: the two limits as floats where the program gave both as numbers, else a stand-in."""
    if isinstance(low, (tuple, list)) and len(low) == 2 and high is None:
        low, high = low
    low, high = kwargs.get(low_name, low), kwargs.get(high_name, high)
    if _real(low) and _real(high):
        return float(low), float(high)
    return _Anything("limits")


def _nested_shape(value):
    """The shape of a list of lists (imshow's data), read of Python's own containers alone."""
    shape = []
    while type(value) in (list, tuple):
        shape.append(len(value))
        if not value:
            break
        value = value[0]
    if type(value) is np.ndarray:
        shape += value.shape
    return tuple(shape) if shape else None


def _columns(value) -> int:
    """How many lines one of plot's x or y arrays draws: a 2-D array's columns."""
    if type(value) is np.ndarray:
        return value.shape[1] if value.ndim == 2 else 1
    if type(value) in (list, tuple) and value and type(value[0]) in (list, tuple, np.ndarray):
        return len(value[0])
    return 1


def _lines(args) -> int:
    """How many Line2D ``plot(*args)`` draws: matplotlib's groups of ``[x], y, [fmt]``, a 2-D y a line a column."""
    args, count = list(args), 0
    while args:
        group, args = args[:2], args[2:]
        if args and isinstance(args[0], str):
            group.append(args.pop(0))
        if group and isinstance(group[-1], str):
            group.pop()
        if group:
            count += max(_columns(value) for value in group)
    return count


def _reshape_2d(x) -> list:
    """matplotlib's datasets of hist's ``x`` (cbook._reshape_2D): a 2-D array's columns, a list's items."""
    if type(x) is not np.ndarray and type(x) not in (list, tuple):
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        x = x.transpose()
        if len(x) == 0:
            return [np.array([])]
        if x.ndim == 1 and np.ndim(x[0]) == 0:
            return [x]
        if x.ndim in (1, 2):
            return [np.reshape(column, -1) for column in x]
        raise ValueError("x must have 2 or fewer dimensions")
    if len(x) == 0:
        return [np.array([])]
    result, flat = [], True
    for item in x:
        if type(item) in (list, tuple, np.ndarray):
            flat = False
        item = np.asanyarray(item)
        if np.ndim(item) > 1:
            raise ValueError("x must have 2 or fewer dimensions")
        result.append(item.reshape(-1))
    return [np.reshape(result, -1)] if flat else result


_histogram_of = weighed("numpy", "histogram", np.histogram)
_edges_of = weighed("numpy", "histogram_bin_edges", np.histogram_bin_edges)


def _histogram(x, bins, bin_range, density, weights, cumulative, stacked):
    """matplotlib's hist counts and edges (Axes.hist): NumPy's histogram of each dataset over the same edges, as
    floats; (counts of each dataset, edges, how many datasets)."""
    if np.isscalar(x):
        x = [x]
    datasets = _reshape_2d(x)
    w = _reshape_2d(weights) if weights is not None else [None] * len(datasets)
    if len(w) != len(datasets):
        raise ValueError("weights should have the same shape as x")
    if bin_range is None:
        low, high = np.inf, -np.inf
        for data in datasets:
            if len(data):
                low, high = min(low, np.nanmin(data)), max(high, np.nanmax(data))
        if low <= high:
            bin_range = (low, high)
    options = {}
    if any(len(data) for data in datasets) and len(datasets) > 1:
        bins = _edges_of(np.concatenate(datasets), bins, bin_range,
                         np.concatenate(w) if weights is not None else None)
    else:
        options["range"] = bin_range
    if density and not stacked:
        options["density"] = True
    tops = []
    for data, weight in zip(datasets, w):
        counts, bins = _histogram_of(data, bins, weights=weight, **options)
        tops.append(counts)
    tops, bins = np.array(tops, float), np.array(bins, float)
    if stacked:
        tops = tops.cumsum(axis=0)
        if density:
            tops = (tops / np.diff(bins)) / tops[-1].sum()
    if cumulative:
        order = slice(None, None, -1) if isinstance(cumulative, numbers.Number) and cumulative < 0 else slice(None)
        tops = ((tops * np.diff(bins)) if density else tops)[:, order].cumsum(axis=1)[:, order]
    return tops, bins, len(datasets)


def _pyplot(rc: RcParams) -> types.ModuleType:
    """The run's pyplot: its figures by number, the current one, and functions of the current Axes."""
    figures: dict = {}
    current: list = [None]

    def figure(num=None, figsize=None, dpi=None, *args, clear=False, **kwargs):
        if isinstance(num, Figure):
            current[0] = num
            return num
        if num is not None and num in figures:
            found = figures[num]
            if clear:
                found.clear()
            current[0] = found
            return found
        number = num if isinstance(num, int) and not isinstance(num, bool) else max(
            (n for n in figures if isinstance(n, int)), default=0) + 1
        made = Figure._of(rc, figsize, dpi, number)
        figures[num if isinstance(num, str) else number] = made
        current[0] = made
        return made

    def gcf():
        return current[0] if current[0] is not None else figure()

    def gca():
        return gcf().gca()

    def sca(axes):
        if isinstance(axes, Axes):
            current[0] = axes.figure
            axes.figure.sca(axes)

    def subplots(nrows=1, ncols=1, *, sharex=False, sharey=False, squeeze=True, width_ratios=None,
                 height_ratios=None, subplot_kw=None, gridspec_kw=None, **fig_kw):
        _grid(nrows, ncols)
        made = figure(**fig_kw)
        return made, made.subplots(nrows, ncols, squeeze=squeeze)

    def subplot(*args, **kwargs):
        return gcf().add_subplot(*args, **kwargs)

    def axes(arg=None, **kwargs):
        return gcf().add_subplot(1, 1, 1) if arg is None else gcf().add_axes(arg)

    def close(fig=None):
        if fig == "all":
            figures.clear()
            current[0] = None
            return
        target = current[0] if fig is None else fig if isinstance(fig, Figure) else figures.get(fig)
        for key, value in list(figures.items()):
            if value is target:
                del figures[key]
        if current[0] is target:
            current[0] = next(reversed(figures.values()), None)

    def get_fignums():
        return sorted(made.number for made in figures.values())

    def fignum_exists(num):
        return num in figures or any(made.number == num for made in figures.values())

    def clf():
        gcf().clear()

    def cla():
        gca().clear()

    def returning_none():
        def none(*args, **kwargs):
            return None
        return none

    def on_axes(method: str):
        def call(*args, **kwargs):
            return getattr(gca(), method)(*args, **kwargs)
        return call

    def on_figure(method: str):
        def call(*args, **kwargs):
            return getattr(gcf(), method)(*args, **kwargs)
        return call

    def title(label, *args, **kwargs):
        return gca().set_title(label, *args, **kwargs)

    def xlim(*args, **kwargs):
        return gca().set_xlim(*args, **kwargs) if args or kwargs else gca().get_xlim()

    def ylim(*args, **kwargs):
        return gca().set_ylim(*args, **kwargs) if args or kwargs else gca().get_ylim()

    def ion():
        rc["interactive"] = True
        return _Anything("ion")

    def ioff():
        rc["interactive"] = False
        return _Anything("ioff")

    names = {
        "figure": figure, "gcf": gcf, "gca": gca, "sca": sca, "subplots": subplots, "subplot": subplot,
        "axes": axes, "close": close, "get_fignums": get_fignums, "fignum_exists": fignum_exists, "clf": clf,
        "cla": cla, "title": title, "xlim": xlim, "ylim": ylim, "ion": ion, "ioff": ioff,
        "isinteractive": lambda: bool(rc.get("interactive")), "rcParams": rc, "Figure": Figure,
        "style": _Style(),
        **{name: returning_none() for name in ("show", "pause", "draw", "grid", "xscale", "yscale", "axis",
                                               "tick_params", "margins", "minorticks_on", "draw_if_interactive",
                                               "rc", "rcdefaults")},
        **{name: on_axes(name) for name in ("plot", "semilogx", "semilogy", "loglog", "step", "scatter", "imshow",
                                            "bar", "barh", "hist", "errorbar", "fill_between", "fill_betweenx",
                                            "axhline", "axvline", "text", "annotate", "legend", "twinx", "twiny")},
        "xlabel": on_axes("set_xlabel"), "ylabel": on_axes("set_ylabel"),
        **{name: on_figure(name) for name in ("suptitle", "colorbar", "figlegend", "figtext")},
    }
    names["tight_layout"], names["subplots_adjust"] = on_figure("tight_layout"), on_figure("subplots_adjust")
    names["savefig"], names["figlegend"], names["figtext"] = on_figure("savefig"), on_figure("legend"), on_figure("text")
    return _module("matplotlib.pyplot", "tapecli's stand-in of matplotlib.pyplot: it draws nothing.", names)


for _cls in (Figure, Axes):
    _cls.__module__ = "matplotlib.figure" if _cls is Figure else "matplotlib.axes._axes"
_Style.__module__ = "matplotlib.style.core"
for _cls in (_StandIn, _Anything):
    _cls.__module__, _cls.__name__, _cls.__qualname__ = "matplotlib", "StandIn", "StandIn"
