"""Rendering: Rich tables and table cells for people, and the JSON documents of tapecli/documents.py (re-exported
here, imported on first use: a table needs none). Rich is imported lazily, and not at all for a plain table on a
stdout that is not a terminal."""
from __future__ import annotations

import os
import sys

import numpy as np

from tapecli import api
from tapecli.errors import escape_controls
from tapecli.interpreter.jsonvalue import _weak_default, tensor_json, to_json  # noqa: F401 (re-exported)
from tapecli.runtime.values import Tensor, Variable

_DOCUMENTS = frozenset(("SCHEMA", "_is_value", "dumps", "error_doc", "format_error", "request_entries", "requests_doc",
                        "run_doc", "terminal_text", "type_json", "warning_line", "watched_doc"))


def __getattr__(name: str):
    """documents.py's names, re-exported."""
    if name in _DOCUMENTS:
        from tapecli import documents
        return getattr(documents, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def format_cell(value, limit: int = 6, width: int | None = None, full: bool = False) -> str:
    """A value for a table cell; a tensor as NumPy prints it, elided to fit ``width`` (tensorfmt.py)."""
    if value is None:
        return "None"
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, Tensor):
        arr = _weak_default(value) if value.weak else value.value
        if arr.ndim == 0:
            return str(to_json(value))
        if width is not None:
            from tapecli.cli.tensorfmt import format_array
            return format_array(arr, width, full=full, shape_and_dtype=False)
        return np.array2string(arr, threshold=limit * 4, edgeitems=limit // 2, separator=", ", precision=6)
    if isinstance(value, (list, dict)):
        return _bounded_format(value, CELL_CHARS)
    from tapecli.interpreter.conversions import format_value as program_format
    return program_format(value)


CELL_CHARS = 1000       # most characters of a list or dict in a table cell


def _bounded_format(value, budget: int) -> str:
    """print()'s text of a list or dict, cut at ``budget`` characters (…) and built no further: a list
    holding itself 26 levels deep would otherwise be 2**26 leaves of text. Iterative, so depth is no limit."""
    from tapecli.interpreter.conversions import format_value as program_format
    out, size = [], 0
    stack = [(iter([("", value)]), "")]         # (iterator of (separator, item), closing bracket)
    while stack and size <= budget:
        items, closing = stack[-1]
        entry = next(items, None)
        if entry is None:
            stack.pop()
            text = closing
        else:
            separator, item = entry
            if isinstance(item, list):
                stack.append((((", " if i else "", v) for i, v in enumerate(item)), "]"))
                text = separator + "["
            elif isinstance(item, dict):
                pairs = (((", " if i else "") + f'"{k}": ', v) for i, (k, v) in enumerate(item.items()))
                stack.append((pairs, "}"))
                text = separator + "{"
            else:
                text = separator + program_format(item)
        out.append(text[:budget + 1 - size])
        size += len(out[-1])
    text = "".join(out)
    return text if size <= budget else text[:budget - 1] + "…"


def program_output(line: str, stream) -> str:
    """A line the program printed, for ``stream``: its own characters where that is a pipe or a file (the
    program's data, as CPython would write it), its control characters shown as ``cat -v`` shows them where
    it is a terminal (docs/commands.md)."""
    isatty = getattr(stream, "isatty", None)
    return escape_controls(line, newlines=True) if isatty is not None and isatty() else line


def _console(stderr: bool = False, color: bool | None = None):
    """Rich's console; ``color`` False (--no-color, NO_COLOR): no styles at all, bold included."""
    from rich.console import Console
    return Console(stderr=stderr, no_color=color is False, highlight=False, soft_wrap=True,
                   **({"color_system": None} if color is False else {}))


def print_table(title: str, columns: list[str], rows: list[list], color: bool | None = None,
                drop: tuple[str, ...] = (), wrap: tuple[str, ...] = ()) -> None:
    """A table fitted to the console's width (fit_table): the columns in ``drop`` left out, in that order (the
    empty ones first), while the rest does not fit; the cells of the columns in ``wrap`` broken at spaces, a
    tensor's cell (TensorCell) laid out for its column; and where even that does not fit, one block per row.
    Control characters in its text (a program's strings and names) are shown as ``cat -v`` shows them
    (escape_controls), a cell's newlines kept (a tensor's rows)."""
    title, columns = escape_controls(title), [escape_controls(c) for c in columns]
    rows = [[escape_controls(c, newlines=True) if isinstance(c, str) else c for c in row] for row in rows]
    width = _console_width()
    title_lines = _wrap_title(title, width) if title else []
    fitted = fit_table(columns, rows, width, drop, wrap)
    if fitted is None:
        sys.stdout.write(blocks(title_lines, columns, rows, width))
        return
    columns, rows = fitted
    if len(title_lines) > 1:        # Rich would print a long title on one line: it is broken here, at spaces
        sys.stdout.write("\n".join(title_lines) + "\n")
        title = ""
    plain = plain_table(title, columns, rows) if color is not True else None
    if plain is not None:
        sys.stdout.write(plain)
        return
    from rich.table import Table
    table = Table(title=title or None, title_justify="left", show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    from rich.text import Text
    for row in rows:
        table.add_row(*map(Text, row))        # cells are plain text: NumPy's "[nan ...]" is no markup tag
    _console(color=color).print(table)


class TensorCell:
    """A tensor's cell: NumPy's printout laid out for the width its column gets (tensorfmt.py)."""
    FLOOR = 24          # the least width for a tensor whose own lines elide it anyway

    def __init__(self, arr: np.ndarray, full: bool = False):
        self.arr, self.full, self._parts = arr, full, {}

    def parts(self, width: int) -> tuple[str, list[str]]:
        if width not in self._parts:
            from tapecli.cli.tensorfmt import array_parts
            self._parts[width] = array_parts(self.arr, width, full=self.full, shape_and_dtype=False)
        return self._parts[width]

    def text(self, width: int) -> str:
        body, stats = self.parts(width)
        return "\n".join([body, *stats])

    def fits(self, width: int, own: int) -> bool:
        """Whether ``width`` columns show it as its own lines (``own`` columns) do, or, where those elide it
        anyway (or --full breaks its rows), whether there is room enough for a useful part."""
        body, _ = self.parts(width)
        whole, _ = self.parts(own)
        if max(len(line) for line in body.split("\n")) > width:
            return False
        return body == whole or ((self.full or "..." in whole) and width >= min(self.FLOOR, own))


def _text_lines(cell) -> list[str]:
    return cell.split("\n") if isinstance(cell, str) else []


def _wrap_text(text: str, width: int) -> str:
    """``text`` with each line broken at spaces into lines of at most ``width``; a word longer than that
    stays whole on its own line (never broken inside a name or a number)."""
    out = []
    for line in text.split("\n"):
        current = ""
        for word in line.split(" "):
            if current and len(current) + 1 + len(word) > width:
                out.append(current.rstrip())
                current = word
            else:
                current = f"{current} {word}" if current else word
        out.append(current.rstrip())
    return "\n".join(out)


def _wrap_title(title: str, width: int) -> list[str]:
    """A title broken at spaces, and a path too long for a line after one of its slashes."""
    out = []
    for line in _wrap_text(title, width).split("\n"):
        while len(line) > width and "/" in line[1:width]:
            cut = line.rindex("/", 1, width) + 1
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return out


def fit_table(columns: list[str], rows: list[list], width: int, drop=(), wrap=()):
    """(columns, rows of text) of a table no wider than ``width``: the columns in ``drop`` left out in turn (the
    empty ones first) until the rest fits with its whole words; None where nothing fits."""
    empty = [c for c in drop if c in columns and all(row[columns.index(c)] == "" for row in rows)]
    order = empty + [c for c in drop if c in columns and c not in empty]
    for k in range(len(order) + 1):
        keep = [i for i, c in enumerate(columns) if c not in order[:k]]
        laid = _lay_out(columns, rows, keep, width, wrap)
        if laid is not None:
            return [columns[i] for i in keep], laid
    return None


def _lay_out(columns, rows, keep, width, wrap):
    """The rows' text with only the ``keep`` columns, fitted to ``width``; None where they do not fit."""
    flexible = [i for i in keep if columns[i] in wrap or any(isinstance(row[i], TensorCell) for row in rows)]
    fixed = [i for i in keep if i not in flexible]
    room = width - 3 * len(keep) - 1 - sum(max([len(columns[i])] + [len(line) for row in rows
                                                                    for line in _text_lines(row[i])])
                                          for i in fixed)
    widths = {}
    tensor_columns = [i for i in flexible if any(isinstance(row[i], TensorCell) for row in rows)]
    for i in flexible:         # the least width of a column of words: its longest word, or 20 where its text is longer
        lines = [line for row in rows for line in _text_lines(row[i])]
        longest_word = max([len(columns[i])] + [len(w) for line in lines for w in line.split(" ")])
        widths[i] = max(longest_word, min(20, max([len(columns[i])] + [len(line) for line in lines])))
    if room < sum(widths.values()):
        return None
    spare = room - sum(widths.values())
    own = width - 4                     # a tensor's own lines: in a block, indented by four
    for i in tensor_columns:            # a tensor's column gets all there is (others then take what it leaves)
        avail = widths[i] + spare
        cells = [row[i] for row in rows if isinstance(row[i], TensorCell)]
        if not all(cell.fits(avail, own) for cell in cells):
            return None
        words = [len(line) for row in rows for line in _text_lines(row[i])]     # its cells of text
        used = max([widths[i], min(avail, max(words, default=0))]
                   + [len(line) for cell in cells for line in cell.text(avail).split("\n")])
        spare -= used - widths[i]
        widths[i] = used
    natural = {i: max([len(columns[i])] + [len(line) for row in rows for line in _text_lines(row[i])])
               for i in flexible if i not in tensor_columns}
    while spare > 0:                    # the columns of words share what is left, up to their longest lines
        needy = [i for i in natural if widths[i] < natural[i]]
        if not needy:
            break
        for i in needy:
            give = min(natural[i] - widths[i], max(1, spare // len(needy)), spare)
            widths[i] += give
            spare -= give
    out = []
    for row in rows:
        cells = []
        for i in keep:
            cell = row[i]
            if isinstance(cell, TensorCell):
                cell = cell.text(widths[i])
            elif i in widths:
                cell = _wrap_text(cell, widths[i])
            cells.append(cell)
        out.append(cells)
    return out


def blocks(title_lines: list[str], columns: list[str], rows: list[list], width: int) -> str:
    """The table as one block per row, for a console too narrow for its columns: the first cell on a line of its
    own, the others as ``column: text`` pairs, a long or multi-line text below its column, indented::

        d2(f)/d(x)2
          tape: (implicit)  target: f  source: x
          dtype: float32  shape: []  value: 4.0
    """
    out = list(title_lines)
    for row in rows:
        out.append("")
        head = row[0].text(width) if isinstance(row[0], TensorCell) else row[0]
        out.append(head)
        pending = ""
        for col, cell in zip(columns[1:], row[1:]):
            text = cell.text(width - 4) if isinstance(cell, TensorCell) else cell
            if text == "":
                continue
            pair = f"{col}: {text}"
            if "\n" not in text and len(pair) <= width - 2:
                if pending and len(pending) + 2 + len(pair) > width - 2:
                    out.append("  " + pending)
                    pending = ""
                pending = f"{pending}  {pair}" if pending else pair
                continue
            if pending:
                out.append("  " + pending)
                pending = ""
            out.append(f"  {col}:")
            text = text if isinstance(cell, TensorCell) else _wrap_text(text, width - 4)
            out.extend("    " + line for line in text.split("\n"))
        if pending:
            out.append("  " + pending)
    return "\n".join(out).lstrip("\n") + "\n"


_HEAVY_HEAD = ("┏━┳┓", "┃ ┃┃", "┡━╇┩", "│ ││", "└─┴┘")      # Rich's default box, row by row


def plain_table(title: str, columns: list[str], rows: list[list[str]]) -> str | None:
    """The text Rich prints for this table when stdout is not a terminal, made without importing Rich
    (its import takes longer than a small run); None where Rich would do more than lay out plain cells:
    a terminal (styles), non-ASCII or markup-like text, a table wider than the console, no UTF-8."""
    if os.name == "nt" or not _plain_console():
        return None
    cells = [title, *columns, *(line for row in rows for c in row for line in _cell_lines(c))]
    for text in cells:
        if not (text.isascii() and text.isprintable()) or text != text.rstrip() or _markup_like(text):
            return None
    if any(text != text.lstrip() for text in [title, *columns, *(c for row in rows for c in row)]):
        return None
    widths = [max([len(col)] + [len(line) for row in rows for line in _cell_lines(row[i])])
              for i, col in enumerate(columns)]
    if sum(widths) + 3 * len(widths) + 1 > _console_width() or any(len(row) != len(columns) for row in rows):
        return None

    def rule(chars):
        left, fill, mid, right = chars
        return left + mid.join(fill * (w + 2) for w in widths) + right

    def line(chars, texts):
        left, _, mid, right = chars
        return left + mid.join(f" {t.ljust(w)} " for t, w in zip(texts, widths)) + right

    out = [title] if title else []
    out += [rule(_HEAVY_HEAD[0]), line(_HEAVY_HEAD[1], columns), rule(_HEAVY_HEAD[2])]
    for row in rows:                # a multi-line cell (a tensor) makes its row that many lines high
        cell_lines = [_cell_lines(c) for c in row]
        for k in range(max(len(c) for c in cell_lines)):
            out.append(line(_HEAVY_HEAD[3], [c[k] if k < len(c) else "" for c in cell_lines]))
    out.append(rule(_HEAVY_HEAD[4]))
    return "\n".join(out) + "\n"


def _cell_lines(text: str) -> list[str]:
    return text.split("\n") if "\n" in text else [text]


def _markup_like(text: str) -> bool:
    """Whether Rich might read ``text`` as more than plain text: a markup tag ``[a...]``, an emoji code
    ``:name:`` (two colons with no space between), an escape."""
    if "\\" in text:
        return True
    i = text.find("[")
    while i >= 0:
        if i + 1 < len(text) and (text[i + 1].isalpha() or text[i + 1] in "#/@"):
            return True
        i = text.find("[", i + 1)
    i = text.find(":")
    while i >= 0:
        j = text.find(":", i + 1)
        if j < 0:
            return False
        if not any(c.isspace() for c in text[i + 1:j]):
            return True
        i = j
    return False


def _plain_console() -> bool:
    """Rich would see no terminal (so no styles) and a UTF-8 stdout."""
    env = os.environ
    if env.get("TTY_COMPATIBLE") == "1" or (env.get("TTY_COMPATIBLE") != "0" and (env.get("FORCE_COLOR")
                                                                               or sys.stdout.isatty())):
        return False
    return (getattr(sys.stdout, "encoding", None) or "utf-8").lower().startswith("utf")


def _console_width() -> int:
    """Rich's console width: a terminal's on stdin, stdout or stderr, else 80; COLUMNS wins."""
    width = None
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
            break
        except (AttributeError, ValueError, OSError):
            pass
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or 80


def as_array(value) -> np.ndarray | None:
    """The NumPy array a Tensor or Variable holds (a weak tensor in its default dtype), or a NumPy array of numbers
    or bools itself (a program's that CPython ran); None otherwise."""
    if type(value) is np.ndarray:
        return value if value.dtype.kind in "biuf" else None
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, Tensor):
        return _weak_default(value) if value.weak else value.value
    return None


def value_cell(value, full: bool = False):
    """A value's table cell: a TensorCell for a tensor of one or more dimensions (laid out for its column's
    width), else its text."""
    arr = as_array(value)
    if arr is not None and arr.ndim > 0:
        return TensorCell(arr, full)
    return format_cell(value)


def value_table(values: dict, full: bool = False) -> tuple[list[str], list[list]]:
    """The columns and rows of `run`'s table of the names a program bound: a value too large to write
    (an integer of over 4,300 digits) is the error of its name."""
    from tapecli.documents import _is_value, type_json
    from tapecli.errors import LimitError
    rows = []
    for name, value in values.items():
        t = type_json(value)
        try:
            cell = value_cell(value, full=full) if _is_value(value) else ""
        except LimitError as e:
            raise e.about(name) from None
        rows.append([name, t["kind"], t.get("dtype", ""), str(t.get("shape", "")), cell])
    return ["name", "kind", "dtype", "shape", "value"], rows


def print_requests(title: str, requests, color: bool | None = None, full: bool = False) -> None:
    columns = ["name", "line", "tape", "target", "source", "value", "dtype", "shape"]
    rows = []
    for entry in api.request_entries(requests, lambda v: v):      # values stay Tensors here
        value = entry["value"]
        rows.append([str(entry["name"]), str(entry["line"] or ""), str(entry["tape"]), str(entry["target"]),
                     str(entry["source"]) + (f", {entry['source2']}" if "source2" in entry else ""),
                     value_cell(value, full) if value is not None else f"None  ({entry['why']})",
                     str(entry["dtype"] or ""), str(entry["shape"] if entry["shape"] is not None else "")])
    print_table(title, columns, rows, color, drop=("line", "tape", "shape", "dtype"), wrap=("value",))


def short_json(value, limit: int = 60) -> str:
    import json     # (at first use: the tables of a plain run need none)
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
