"""The token stream fastparse.py reads: Lark's lexer for grammar/tdf.lark, then its indenter and
the soft keywords (softkeywords.py). Written by hand (one regular expression) so that a small run starts in no
time; where the program is not made of the grammar's tokens (a character no terminal matches, a tab in
indentation, a dedent to no open block) it gives up, and syntaxerrors.py finds and words the error.
"""
from __future__ import annotations

import re

from tapecli.frontend.softkeywords import SOFT_KEYWORDS, is_keyword

# nesting.py's limits (CPython's): deeper brackets or blocks are a TooDeep here, then nesting.py's error. Not
# imported from there: that module, and its regular expression, load only for a program that nests too deep or
# is not one.
MAX_BRACKETS = 200
MAX_BLOCKS = 100

# Python's keywords: never names (Lark's basic lexer makes them keywords wherever they are).
KEYWORDS = frozenset((
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"))

_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_AUGOPS = frozenset(("+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", "<<=", ">>="))   # AUGOP


class GiveUp(Exception):
    """Not a program the grammar takes: syntaxerrors.py says why."""


class TooDeep(GiveUp):
    """Brackets or blocks nested past nesting.py's limits: it words the error (before the parser would recurse
    that deep)."""


class Tok:
    __slots__ = ("type", "value", "line", "column", "end_line", "end_column", "start", "end")

    def __init__(self, type_, value, line, column, end_line, end_column, start, end):
        self.type, self.value = type_, value
        self.line, self.column, self.end_line, self.end_column = line, column, end_line, end_column
        self.start, self.end = start, end

    def borrow(self, type_):
        return Tok(type_, "", self.line, self.column, self.end_line, self.end_column, self.start, self.end)


# The grammar's terminals as Lark's lexer takes them (the longest match; strings before names so that
# f"..." is a string), each after the spaces before it; a backslash that continues the line is skipped. Anything
# else (``bad``) is a character no terminal matches.
_TOKEN = re.compile(
    r"[ \t\f]*(?:"
    r"(?P<nl>(?:\r?\n[\t ]*|\#[^\n]*)+)"
    r"""|(?P<string>(?:[rRbBuUfF]|[rR][bBfF]|[bBfF][rR])?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''"""
    r"""|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))"""
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<number>(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+"
    r"|(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?)[jJ]?)"
    # (the three-character operators first; then any of the fourteen that take "=" after them, with it)
    r"|(?P<op>\*\*=?|//=?|>>=?|<<=?|\.\.\.|->|[-+*/%@&|^<>=!~]=|[-+*/%@<>=()\[\]{},:.;~&|^])"
    r"|(?P<continuation>\\[\t \f]*\r?\n)"
    r"|(?P<bad>[\s\S]))")
_KINDS = {"NL": "NEWLINE", "INDENT": "INDENT", "DEDENT": "DEDENT", "NAME": "NAME", "NUMBER": "NUMBER",
          "STRING": "STRING"}
_TYPES = {"number": "NUMBER", "string": "STRING"}


def tokens(text: str) -> list[Tok]:
    """Lark's token stream after the indenter and the soft keywords: NL/INDENT/DEDENT as _NEWLINE/_INDENT/
    _DEDENT, a soft keyword that begins its statement typed as itself, then EOF."""
    out: list[Tok] = []
    line, line_start = 1, 0
    paren, levels = 0, [0]
    soft: list[int] = []                      # where a soft keyword begins a statement (softkeywords.py decides)
    starts = True
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        pos, end = m.start(kind), m.end()
        value = m.group(kind)
        column = pos - line_start + 1
        if kind == "continuation":
            line, line_start = line + 1, end
            continue
        if kind == "nl" or kind == "string":
            newlines = value.count("\n")
            end_line = line + newlines
            tok = Tok(kind, value, line, column, end_line, end - (pos + value.rindex("\n") + 1 if newlines
                                                                  else line_start) + 1, pos, end)
            if newlines:
                line, line_start = end_line, pos + value.rindex("\n") + 1
        else:
            tok = Tok(kind, value, line, column, line, end - line_start + 1, pos, end)
        if kind == "nl":
            if paren:
                continue
            tok.type = "NL"
            out.append(tok)
            indent = value.rpartition("\n")[2]
            if "\t" in indent or "\n" not in value:
                raise GiveUp
            width = len(indent)
            if width > levels[-1]:
                levels.append(width)
                if len(levels) > MAX_BLOCKS + 1:
                    raise TooDeep
                out.append(tok.borrow("INDENT"))
            else:
                while width < levels[-1]:
                    levels.pop()
                    out.append(tok.borrow("DEDENT"))
                if width != levels[-1]:
                    raise GiveUp
            starts = True
            continue
        if kind == "name":
            if value in KEYWORDS:
                tok.type = value
            else:
                tok.type = "NAME"
                if starts and value in SOFT_KEYWORDS:
                    soft.append(len(out))
        elif kind == "op":
            tok.type = "AUGOP" if value in _AUGOPS else value
            if value in _OPEN:
                paren += 1
                if paren > MAX_BRACKETS:
                    raise TooDeep
            elif value in _CLOSE:
                paren -= 1
                if paren < 0:
                    raise GiveUp
        elif kind == "bad":
            raise GiveUp
        else:
            tok.type = _TYPES[kind]
        starts = value == ";" or (value == ":" and not paren)
        out.append(tok)
    if not out:
        raise GiveUp
    last = out[-1]
    while len(levels) > 1:
        levels.pop()
        out.append(last.borrow("DEDENT"))
    out.append(last.borrow("EOF"))
    for i in soft:
        if is_keyword(out[i].value, lambda k: _kind(out[i + k]) if i + k < len(out) else None):
            out[i].type = out[i].value
    return out


def _kind(tok: Tok) -> str | None:
    return None if tok.type == "EOF" else _KINDS.get(tok.type) or tok.value
