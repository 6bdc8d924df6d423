"""Rendering: Rich tables and table cells for people, and the JSON documents of tapecli/documents.py (re-exported
here). Rich is imported lazily, and not at all for a plain table on a stdout that is not a terminal."""
from __future__ import annotations

import json
import os
import sys

import numpy as np

from tapecli import api
from tapecli.documents import (SCHEMA, _is_value, dumps, error_doc, escape_controls,  # noqa: F401 (re-exported)
                               format_error, request_entries, requests_doc, requests_of, run_doc, terminal_text,
                               type_json, warning_line, watched_doc)
from tapecli.interpreter.jsonvalue import _weak_default, tensor_json, to_json  # noqa: F401 (re-exported)
from tapecli.runtime.values import Tensor, Variable


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


def _console(stderr: bool = False, color: bool | None = None):
    from rich.console import Console
    return Console(stderr=stderr, no_color=color is False, highlight=False, soft_wrap=True)


def print_table(title: str, columns: list[str], rows: list[list[str]], color: bool | None = None) -> None:
    """The table for people; control characters in its text (a program's strings and names) shown as
    ``cat -v`` shows them (escape_controls), a cell's newlines kept (a tensor's rows)."""
    title, columns = escape_controls(title), [escape_controls(c) for c in columns]
    rows = [[escape_controls(c, newlines=True) for c in row] for row in rows]
    plain = plain_table(title, columns, rows) if color is not True else None
    if plain is not None:
        sys.stdout.write(plain)
        return
    from rich.table import Table
    table = Table(title=title, title_justify="left", show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    from rich.text import Text
    for row in rows:
        table.add_row(*map(Text, row))        # cells are plain text: NumPy's "[nan ...]" is no markup tag
    _console(color=color).print(table)


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


def value_width(columns: list[str], rows: list[list[str]], value_column: int) -> int:
    """The columns left in the console for ``value_column`` once the other columns and the borders are laid out."""
    others = sum(max([len(col)] + [len(row[i]) for row in rows]) + 3
                 for i, col in enumerate(columns) if i != value_column)
    return max(24, _console_width() - others - 4)


def value_table(values: dict, full: bool = False) -> tuple[list[str], list[list[str]]]:
    """The columns and rows of `run`'s table of the names a program bound: a value too large to write
    (an integer of over 4,300 digits) is the error of its name."""
    from tapecli.errors import LimitError
    rows = []
    for name, value in values.items():
        t = type_json(value)
        rows.append([name, t["kind"], t.get("dtype", ""), str(t.get("shape", "")), ""])
    columns = ["name", "kind", "dtype", "shape", "value"]
    width = value_width(columns, rows, 4)
    for row, (name, value) in zip(rows, values.items()):
        try:
            row[4] = format_cell(value, width=width, full=full) if _is_value(value) else ""
        except LimitError as e:
            raise e.about(name) from None
    return columns, rows


def print_requests(title: str, requests, color: bool | None = None, full: bool = False) -> None:
    columns = ["name", "line", "tape", "target", "source", "value", "dtype", "shape"]
    rows, values = [], []
    for entry in api.request_entries(requests, lambda v: v):      # values stay Tensors here
        value = entry["value"]
        values.append(value)
        rows.append([str(entry["name"]), str(entry["line"] or ""), str(entry["tape"]), str(entry["target"]),
                     str(entry["source"]) + (f", {entry['source2']}" if "source2" in entry else ""),
                     "" if value is not None else f"None  ({entry['why']})",
                     str(entry["dtype"] or ""), str(entry["shape"] if entry["shape"] is not None else "")])
    width = value_width(columns, rows, 5)
    for row, value in zip(rows, values):
        if value is None:
            continue
        row[5] = format_cell(value, width=width, full=full)
    print_table(title, columns, rows, color)


def short_json(value, limit: int = 60) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
