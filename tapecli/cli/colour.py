"""Colour for people on a terminal: ANSI styles around the words of a message that matter (an error's kind,
its carets, `warning:`, `hint:`, check's PASS/FAIL/SKIP, lint's codes), as a layer over the text: with colour
off the text is exactly what it was, and with it on the same characters wrapped in SGR sequences.

Colour is on where the stream is a terminal, unless ``--no-color``, ``NO_COLOR`` (any value but empty,
https://no-color.org) or ``TERM=dumb`` says otherwise; ``FORCE_COLOR`` (any value but empty) turns it on
where the stream is not a terminal (as Rich, which draws the tables, reads it). Nothing here imports Rich.
"""
from __future__ import annotations

import os
import re
from typing import Callable

Paint = Callable[[str, str], str]

# role -> SGR parameters
STYLES = {"error": "1;31", "caret": "1;31", "warning": "1;35", "hint": "1;36", "gutter": "34",
          "pass": "32", "fail": "1;31", "skip": "33", "code": "1;35"}


def enabled(stream, flag: bool | None = None) -> bool:
    """Whether text for ``stream`` is coloured; ``flag`` False is --no-color."""
    env = os.environ
    if flag is False or env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def painter(stream, flag: bool | None = None) -> Paint | None:
    """``paint(role, text)`` for ``stream``, or None where it gets no colour."""
    return paint if enabled(stream, flag) else None


def paint(role: str, text: str) -> str:
    return f"\x1b[{STYLES[role]}m{text}\x1b[0m" if text else text


_EXCERPT = re.compile(r"( *\d+ )(\|)( .*)?")
_CARETS = re.compile(r"( *)(\|)( *)(\^+)")


def error_text(text: str, kind: str | None, colour: Paint | None) -> str:
    """An error as format_error writes it (after the warnings gathered before it), coloured: the warnings'
    ``warning:``, the error's kind (the first ``: KIND: `` after them), the source excerpt's gutter and carets,
    ``hint:``."""
    if colour is None:
        return text
    lines = text.split("\n")
    out = list(lines)
    header = kind is None
    for i, line in enumerate(lines):
        at = line.find(f": {kind}: ") if not header else -1
        warned = line.find(": warning: ") if not header else -1
        if warned >= 0 and (at < 0 or warned < at):
            out[i] = warning_text(line, colour)
        elif at >= 0:
            out[i] = line[:at + 2] + colour("error", kind) + line[at + 2 + len(kind):]
            header = True
        elif (match := _CARETS.fullmatch(line)) and i and _EXCERPT.fullmatch(lines[i - 1]):
            out[i] = match[1] + colour("gutter", match[2]) + match[3] + colour("caret", match[4])
        elif (match := _EXCERPT.fullmatch(line)) and i + 1 < len(lines) and _CARETS.fullmatch(lines[i + 1]):
            out[i] = match[1] + colour("gutter", match[2]) + (match[3] or "")
        elif header and line.startswith("hint: "):
            out[i] = colour("hint", "hint:") + line[5:]
    return "\n".join(out)


def warning_text(line: str, colour: Paint | None) -> str:
    """A run's warning (``file:line: warning: message``) with ``warning:`` coloured."""
    if colour is None or ": warning: " not in line:
        return line
    at = line.index(": warning: ") + 2
    return line[:at] + colour("warning", "warning:") + line[at + 8:]


def word(role: str, text: str, colour: Paint | None) -> str:
    """``text`` in ``role``'s colour, or as it is."""
    return colour(role, text) if colour is not None else text
