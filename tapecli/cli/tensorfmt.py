"""Tensors for people: NumPy's printout (aligned columns, one precision, ``...`` elisions of the middle rows and
columns) fitted into a width and a handful of lines, and a one-line summary (min/max/mean, norm, NaN count).

Only the table renderer uses this; ``--json`` writes every element as before.
"""
from __future__ import annotations

import numpy as np

MAX_LINES = 6           # the most lines one entry takes: the elided array and its summary
MAX_LINES_ND = 16       # the same for a tensor of three or more dimensions (its nested brackets need room)
PRECISIONS = (4, 3, 2)
SUMMARY_FROM = 4        # tensors of more elements than this get the summary line


def _g(x: float) -> str:
    return np.format_float_positional(x, precision=4, unique=True, fractional=False, trim="-") \
        if 1e-4 <= abs(x) < 1e5 or x == 0 else f"{x:.4g}"


def summary(arr: np.ndarray, shape_and_dtype: bool = True) -> str:
    """``[4, 16] float32  min -0.5 max 2  mean 0.25  norm 3.1  NaN 0`` (statistics over the finite elements)."""
    head = f"{list(arr.shape)} {arr.dtype}  " if shape_and_dtype else ""
    if arr.dtype.kind not in "fiub" or arr.size == 0:
        return head.rstrip()
    if arr.dtype.kind == "b":
        return f"{head}True {int(arr.sum())} of {arr.size}"
    nan = count = 0
    low, high, total, squares = np.inf, -np.inf, 0.0, 0.0
    flat = arr.reshape(-1)
    for start in range(0, flat.size, _BLOCK):        # in blocks: the float64 copies stay small
        a = flat[start:start + _BLOCK].astype(np.float64)
        nan += int(np.isnan(a).sum())
        finite = a[np.isfinite(a)]
        if finite.size:
            count += finite.size
            low, high = min(low, finite.min()), max(high, finite.max())
            total += finite.sum()
            squares += np.dot(finite, finite)
    if count == 0:
        return f"{head}NaN {nan}"
    stats = (f"min {_g(low)}  max {_g(high)}  mean {_g(total / count)}  "
             f"norm {_g(float(np.sqrt(squares)))}  NaN {nan}")
    return head + stats


_BLOCK = 1 << 20        # elements of a tensor summarised at a time


def _wrap_words(text: str, width: int) -> list[str]:
    """``text`` broken at double spaces (between statistics) into lines of at most ``width``."""
    lines: list[str] = []
    for part in text.split("  "):
        if lines and len(lines[-1]) + 2 + len(part) <= width:
            lines[-1] += "  " + part
        else:
            lines.append(part)
    return lines


def format_array(arr: np.ndarray, width: int = 80, full: bool = False, shape_and_dtype: bool = True) -> str:
    """``arr`` as NumPy prints it, within ``width`` columns and (unless ``full``) ``MAX_LINES`` lines
    counting the summary that follows it; a scalar as its shortest text."""
    body, stats = array_parts(arr, width, full, shape_and_dtype)
    return "\n".join([body, *stats])


def array_parts(arr: np.ndarray, width: int = 80, full: bool = False,
                shape_and_dtype: bool = True) -> tuple[str, list[str]]:
    """What format_array prints, as the elements' printout and the summary's lines (none for a few elements)."""
    if arr.ndim == 0:
        return str(arr[()]), []
    width = max(width, 16)
    stats = _wrap_words(summary(arr, shape_and_dtype), width)
    if full:
        return _full(arr, width), stats
    room = max(1, (MAX_LINES if arr.ndim <= 2 else MAX_LINES_ND) - len(stats))
    body = _fitted(arr, width, room)
    if body is None and arr.ndim > 2:
        body = _first_block(arr, width, room)
    if body is None:            # no NumPy layout fits: the first and last elements, flattened
        body = _flat(arr, width)
    if arr.size <= SUMMARY_FROM:
        return body, []         # a few numbers: they say it all
    return body, stats


def _full(arr: np.ndarray, width: int) -> str:
    """Every element, as ``np.array2string(arr, threshold=sys.maxsize, max_line_width=width, separator=" ")``
    prints them, in time linear in the elements: NumPy builds that text by appending to one growing string
    (10,000 elements took 0.15 s, 40,000 took 6 s). The elements are formatted by NumPy's own function for
    the array; the lines are laid out here, by NumPy's rules (``_formatArray``)."""
    fmt = _format_function(arr)
    if fmt is None or arr.size == 0:
        import sys
        return np.array2string(arr, threshold=sys.maxsize, max_line_width=width, separator=" ")
    ndim, lead, n = arr.ndim, arr.shape[:-1], arr.shape[-1]
    hanging = " " * ndim                      # a continuation line's indent (NumPy's hanging indent)
    elem_width = width - ndim                 # each enclosing bracket leaves one column for its "]"
    rows = arr.reshape(-1, n)
    index = [0] * len(lead)                   # the row's index along the leading axes
    out: list[str] = []
    for r in range(rows.shape[0]):
        opens = closes = 1                    # the brackets the row opens and closes: its own and the axes'
        for j in range(len(index) - 1, -1, -1):     # it starts (ends), innermost first
            if index[j] != 0:
                break
            opens += 1
        for j in range(len(index) - 1, -1, -1):
            if index[j] != lead[j] - 1:
                break
            closes += 1
        lines, line = [], hanging
        for i, x in enumerate(rows[r]):
            word = fmt(x)
            if len(line) + len(word) > elem_width and len(line) > ndim:
                lines.append(line.rstrip())
                line = hanging
            line += word if i == n - 1 else word + " "
        lines.append(line)
        lines[0] = " " * (ndim - opens) + "[" * opens + lines[0][ndim:]
        out.append("\n".join(lines) + "]" * closes)
        if r < rows.shape[0] - 1:
            out.append("\n" * closes)
            for j in range(len(index) - 1, -1, -1):       # the next row's index
                index[j] += 1
                if index[j] < lead[j]:
                    break
                index[j] = 0
    return "".join(out)


def _format_function(arr: np.ndarray):
    """NumPy's function formatting one element of ``arr`` as its printout does (the same precision, padding
    and notation for all); None where this NumPy has no such function to ask."""
    try:
        try:
            from numpy._core import arrayprint
        except ImportError:             # NumPy 1
            from numpy.core import arrayprint
        options = arrayprint.format_options.get() if hasattr(arrayprint, "format_options") \
            else arrayprint._format_options
        return arrayprint._get_format_function(arr, **options)
    except (ImportError, AttributeError, TypeError):
        return None


def _fitted(arr: np.ndarray, width: int, room: int) -> str | None:
    """The most complete NumPy printout of ``arr`` whose lines fit ``width`` and number at most ``room``."""
    edges = [None] + list(range(3, 0, -1))          # None: every element
    for precision in PRECISIONS:
        for edge in edges:
            if edge is None:
                if arr.size > 1000:
                    continue
                text = np.array2string(arr, threshold=arr.size + 1, max_line_width=10**6, precision=precision,
                                       separator=" ", suppress_small=True)
            else:
                text = np.array2string(arr, threshold=0, edgeitems=edge, max_line_width=10**6, precision=precision,
                                       separator=" ", suppress_small=True)
            if arr.ndim > 2:      # the brackets show the blocks: no blank lines between them
                text = "\n".join(line for line in text.splitlines() if line.strip())
            lines = text.splitlines()
            if len(lines) <= room and max(len(line) for line in lines) <= width:
                return text
    return None


def _first_block(arr: np.ndarray, width: int, room: int) -> str | None:
    """A tensor of three or more dimensions too large to show its edges whole: its first 2-D block, fitted,
    inside the brackets of the leading axes, each of which ends in ``...`` for the blocks not shown::

        [[[[ 0.  1. ...  5.]
           ...
           [24. 25. ... 29.]]
          ...]
         ...]
    """
    lead = arr.ndim - 2
    block = _fitted(arr[(0,) * lead], width - lead, room - lead)
    if block is None:
        return None
    lines = block.splitlines()
    out = ["[" * lead + lines[0]] + [" " * lead + line for line in lines[1:]]
    out += [" " * depth + "...]" for depth in range(lead, 0, -1)]
    return "\n".join(out)


def _flat(arr: np.ndarray, width: int) -> str:
    flat = arr.reshape(-1)
    for edge in (3, 2, 1):
        text = np.array2string(flat, threshold=0, edgeitems=edge, max_line_width=10**6, precision=3, separator=" ")
        if len(text) <= width:
            return text
    return np.array2string(flat[:1], precision=3) + " ..."
