"""Nesting limits: the error for brackets or blocks nested too deep.

Deep brackets or blocks would otherwise end in a RecursionError inside the parser; here they are a
SyntaxError naming the line, with CPython's own limits (200 nested brackets, 100 levels of
indentation), so a program Python takes is not refused for its nesting. The tokenizer (tokens.py) stops at the
limits before the parser runs; this module then words the error, and checks a program that is not one first.
"""
from __future__ import annotations

import re

from tapecli.errors import TdfSyntaxError
from tapecli.frontend.tokens import MAX_BLOCKS, MAX_BRACKETS

# What matters to nesting: strings and comments (skipped), brackets, and line starts with their indentation.
_TOKEN = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|#[^\n]*'
                    r'|[(\[{]|[)\]}]|\n[ \t]*')


def check_nesting(text: str) -> None:
    """A TdfSyntaxError where the brackets or blocks of ``text`` nest past a limit."""
    depth, levels, line, line_start = 0, [0], 1, 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first in "([{":
            depth += 1
            if depth > MAX_BRACKETS:
                raise TdfSyntaxError(f"too many nested brackets (more than {MAX_BRACKETS})",
                                     hint="split the expression with intermediate names",
                                     line=line, column=match.start() - line_start + 1)
        elif first in ")]}":
            depth = max(depth - 1, 0)
        elif first == "\n":
            line += 1
            line_start = match.start() + 1
            following = text[match.end():match.end() + 1]
            if depth or following in ("", "\n", "\r", "#"):
                continue
            width = len(token) - 1
            if width > levels[-1]:
                levels.append(width)
                if len(levels) > MAX_BLOCKS + 1:
                    raise TdfSyntaxError(f"too many levels of indentation (more than {MAX_BLOCKS})",
                                         hint="move the inner blocks into functions", line=line, column=width + 1)
            else:
                while width < levels[-1]:
                    levels.pop()
        elif first in "\"'":
            line_start_offset = token.rfind("\n")
            if line_start_offset >= 0:             # a triple-quoted string over several lines
                line += token.count("\n")
                line_start = match.start() + line_start_offset + 1


def never_closed(text: str) -> list[tuple[str, int]]:
    """The brackets of ``text`` that no bracket after them closes (strings and comments skipped), outermost first,
    each with its offset: what a syntax error after one of them is about (CPython's "'(' was never closed")."""
    stack: list[tuple[str, int]] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "([{":
            stack.append((token, match.start()))
        elif token in ")]}" and stack:
            stack.pop()
    return stack

