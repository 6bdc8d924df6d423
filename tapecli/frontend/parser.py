"""Source text -> AST, with positions on every node.

The grammar is grammar/tdf.lark (LALR, with a Python-style indenter and soft keywords): the whole
language, Python's forms and TDF's statements in any mix. A valid program is parsed by fastparse.py,
a hand-written parser that gives the same AST as Lark and starts in no time; a program it does not
take (every syntax error, and a few rare constructs) goes to larkparse.py, which parses it with Lark
and reports syntax errors with hints. spellings.py then makes TensorFlow's spellings of TDF's
statements those statements.

``TAPECLI_PARSER`` (for tests): ``standalone`` sends every program to larkparse.py, ``lark``
too and has it use the Lark library itself; ``compare`` parses with both parsers and fails
(an internal error) where fastparse.py's AST differs from Lark's.
"""
from __future__ import annotations

import os

from tapecli.frontend import ast, spellings
from tapecli.frontend.nesting import top_level_lines
from tapecli.errors import TdfSyntaxError
from tapecli.recursion import recursion_limit
from tapecli.frontend.grammar import grammar_text  # noqa: F401 (part of the parser's API)

def _check_first_line(text: str) -> None:
    """The first statement must start at column 1 (the indenter only sees indentation after a newline)."""
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip(" \t")
        if stripped and not stripped.startswith("#"):
            if stripped != line:
                raise TdfSyntaxError("unexpected indentation", hint="the first statement starts at column 1",
                                     line=number, column=1)
            return


def universal_newlines(text: str) -> str:
    """Line ends as Python reads a file in text mode: \r\n and a lone \r become \n."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def parse(source: str, filename: str = "<input>") -> ast.Program:
    if source.startswith("\ufeff"):
        source = source[1:]                  # a UTF-8 byte order mark
    source = universal_newlines(source)
    text = source if source.endswith("\n") else source + "\n"
    _check_first_line(text)
    starts = top_level_lines(text)
    with deep_recursion():
        body, python = _parse_body(text, starts)
    return ast.Program(body, source=source, filename=filename, python=python, line=1, column=1)


def deep_recursion():
    """Parsing and running recurse with the program's nesting: allow it (the nesting limits and
    --max-depth bound it, and a RecursionError that remains is reported as the program's). The limit is
    this one whatever the caller's, so that a program meets the same limits in every process."""
    return recursion_limit(DEEP_RECURSION)


DEEP_RECURSION = 50_000


def _parse_body(text: str, starts: list[int]) -> tuple[list, bool]:
    """The statements, with TensorFlow's spellings of TDF's statements made those statements, and
    whether the program is written as TensorFlow Python (spellings.py)."""
    mode = os.environ.get("TAPECLI_PARSER", "")
    body = None
    if mode in ("", "compare"):
        from tapecli.frontend import fastparse
        body, stop_line, too_deep = fastparse.parse_until(text)
        if too_deep:
            raise TdfSyntaxError("this expression nests too deeply", hint="split it with intermediate names",
                                 line=stop_line, column=1)
    if body is None or mode == "compare":
        from tapecli.frontend import larkparse
        if body is None and mode == "" and len(text) > _WINDOW_FROM:
            _report_from_window(text, starts, stop_line)
        try:
            reference = larkparse.parse_body(text)
        except Exception:
            if body is not None:
                raise AssertionError("fastparse took a program that Lark rejects") from None
            raise
        if body is not None and body != reference:
            raise AssertionError("fastparse and Lark parse this program differently")
        body = reference
    spelling = spellings.Spelling()
    return spellings.rewrite(body, spelling), spelling.tensorflow


# Lark takes seconds on a program of megabytes: above this size an error is looked for in a window of
# statements around the line where the fast parser stopped, and Lark parses the whole text only if
# the window does not show it.
_WINDOW_FROM = 64 * 1024
_WINDOW_AFTER = 3       # top-level statements after the stop
_WINDOW_LINES = 200     # and at most this many lines


def _report_from_window(text: str, starts: list[int], stop_line: int) -> None:
    """Raise the syntax error of the statements around ``stop_line`` if they show one."""
    from tapecli.frontend import larkparse
    before = [line for line in starts if line <= stop_line]
    after = [line for line in starts if line > stop_line][:_WINDOW_AFTER]
    if not before:
        return
    lines = text.split("\n")
    first = before[-1]
    last = min(after[-1] if len(after) == _WINDOW_AFTER else len(lines), stop_line + _WINDOW_LINES)
    window = "\n".join(lines[first - 1:last - 1]) + "\n"
    try:
        larkparse.parse_body(window)
    except TdfSyntaxError as e:
        # An error on the window's last line may come from where the window was cut.
        if e.line is not None and (last >= len(lines) or e.line + first - 1 < last - 1):
            e.line += first - 1
            raise
