"""Source text -> AST, with positions on every node.

The grammar is grammar/tdf.lark (LALR, with a Python-style indenter and soft keywords): the whole
language, Python's forms and TDF's statements in any mix. fastparse.py, a hand-written parser, parses
every program, giving the AST Lark's parser for the grammar would give and, where the program is not one,
the syntax error as tapecli words Lark's (syntaxerrors.py, which runs the grammar's LALR tables over the
program). spellings.py then makes TensorFlow's spellings of TDF's statements those statements.

``TAPECLI_PARSER=compare`` (for tests): every program the parser takes also goes through the LALR tables,
an internal error where they do not take it.
"""
from __future__ import annotations

import os

from tapecli.frontend import ast, spellings
from tapecli.errors import TdfSyntaxError
from tapecli.recursion import recursion_limit


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
    with deep_recursion():
        body, python = _parse_body(text)
    return ast.Program(body, source=source, filename=filename, python=python, line=1, column=1)


def deep_recursion():
    """Parsing and running recurse with the program's nesting: allow it (the nesting limits and
    --max-depth bound it, and a RecursionError that remains is reported as the program's). The limit is
    this one whatever the caller's, so that a program meets the same limits in every process."""
    return recursion_limit(DEEP_RECURSION)


DEEP_RECURSION = 50_000


def _parse_body(text: str) -> tuple[list, bool]:
    """The statements, with TensorFlow's spellings of TDF's statements made those statements, and
    whether the program is written as TensorFlow Python (spellings.py)."""
    from tapecli.frontend import fastparse
    body = fastparse.parse(text)
    if os.environ.get("TAPECLI_PARSER") == "compare":
        from tapecli.frontend import lalr
        if lalr.first_failure(text) is not None:
            raise AssertionError("fastparse.py took a program the grammar's LALR tables do not")
    spelling = spellings.Spelling()
    return spellings.rewrite(body, spelling), spelling.tensorflow
