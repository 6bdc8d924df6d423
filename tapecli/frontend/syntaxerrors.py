"""Syntax errors as tapecli words them: the message ("unexpected 'x'; expected ..."), a hint matched by the
LALR parser's state against example programs, a bracket never closed, a misspelled keyword, the line and column.

fastparse.py parses valid programs; where it stops, ``check`` runs grammar/tdf.lark's LALR automaton
(lalr.py) over the program to find the first syntax error, as Lark's parser meets it. The tests word Lark's own
failures with ``syntax_error`` too and compare (tests/frontend/lark_oracle.py).
"""
from __future__ import annotations

from tapecli.errors import TdfSyntaxError, closest
from tapecli.frontend import lalr
from tapecli.frontend.lalr import Failure
from tapecli.frontend.softkeywords import SOFT_KEYWORDS


def check(text: str) -> None:
    """Raise the first syntax error of ``text`` (which ends with a newline); return if the grammar takes it."""
    failure = lalr.first_failure(text)
    if failure is not None:
        raise syntax_error(failure, text, _example_failures())


_NEVER_CLOSED = "an opening bracket is never closed"
_HINTS = {
    "a block needs ':' at the end of its first line": [
        "if x > 0\n    y = 1\n", "tape t\n    y = 1\n", "def f(x)\n    return x\n",
        "while x < 3\n    x = x + 1\n", "for i in range(3)\n    y = i\n"],
    "the block after ':' must be indented": [
        "if x > 0:\ny = 1\n", "tape t:\ny = x\n", "def f(x):\nreturn x\n"],
    _NEVER_CLOSED: ["y = (x + 1\n", "y = [1, 2\n", "y = f(x\n", "y = (x +\n",
                    "y = [1,\n", "y = f(x,\n"],
    "'=' binds a name; compare with '=='": ["if x = 1:\n    y = 1\n", "expect x = 1\n"],
    "two expressions need an operator between them": ["y = x x\n", "y = 2 x\n"],
}

# Each example also counts after an earlier statement and inside a block: LALR's state (the stack's depth and
# top, which the hint compares) differs there from the state at the start of a file.
EXAMPLES = [(hint, example) for hint, examples in _HINTS.items()
            for example in examples + ["x = 1\n" + e for e in examples]
            + ["if x:\n" + "".join("    " + line + "\n" for line in e.splitlines()) for e in examples]]

_examples: list | None = None


def _example_failures() -> list:
    """(hint, where its example fails) for each example, through lalr.py (once per process)."""
    global _examples
    if _examples is None:
        _examples = [(hint, lalr.first_failure(example)) for hint, example in EXAMPLES]
    return _examples


_TOKEN_WORDS = {"_NEWLINE": "end of line", "_INDENT": "an indented block", "_DEDENT": "end of block",
                "$END": "end of file", "NAME": "a name", "NUMBER": "a number", "STRING": "a string"}


def _describe(expected) -> str:
    words = sorted({_TOKEN_WORDS.get(t, None) or _literal(t) for t in expected})
    return ", ".join(w for w in words if w)


def _literal(terminal: str) -> str:
    from tapecli.frontend.lalr_tables import LITERALS
    return f"'{LITERALS[terminal]}'" if terminal in LITERALS else terminal


def _hint(failure: Failure, examples: list) -> str | None:
    """The hint whose examples fail in the same parser state, on the same kind of token if one does."""
    fallback = None
    for hint, other in examples:
        if other is None or other.kind not in ("token", "character") or other.state != failure.state:
            continue
        if other.token_type == failure.token_type:
            return hint
        fallback = fallback or hint
    return fallback


def syntax_error(failure: Failure, source: str, examples: list) -> TdfSyntaxError:
    """The error for ``failure``, the first failure of a parse of ``source``; ``examples``: (hint, the failure of
    its example program) for each of EXAMPLES, failed by the same parser."""
    if failure.kind == "tab":
        return TdfSyntaxError("a tab in indentation", hint="indent with spaces only", line=failure.line,
                              column=failure.column)
    if failure.kind == "dedent":
        return TdfSyntaxError("this line's indentation matches no enclosing block",
                              hint="indent it like a line of the block it belongs to", line=_dedent_line(source),
                              column=1)
    if failure.kind == "character":
        char = source[failure.pos] if failure.pos < len(source) else ""
        return TdfSyntaxError(f"unexpected character {char!r}", line=_positive(failure.line),
                              column=_positive(failure.column))
    hint = _hint(failure, examples)
    tok = failure.token
    if tok.type == "$END":
        message = "unexpected end of file"
    elif tok.type in ("_NEWLINE", "_DEDENT"):
        message = "unexpected end of line"
    elif tok.type == "_INDENT":
        message = "unexpected indentation"
    else:
        message = f"unexpected {tok.value!r}"
    expected = failure.accepts or failure.expected
    if expected and len(expected) <= 8:
        message += f"; expected {_describe(expected)}"
    line, column = tok.line, tok.column
    if tok.type in ("_NEWLINE", "_DEDENT", "$END"):
        # Point just past the last real character of the line that was cut short.
        end = len(source) if tok.type == "$END" else tok.start_pos
        prev = source[:end].rstrip() if end is not None else ""
        if prev:
            line = prev.count("\n") + 1
            column = len(prev.split("\n")[-1].split("#")[0].rstrip()) + 1
    unclosed = _unclosed_bracket(tok, source)
    if unclosed is not None:
        return unclosed
    if hint == _NEVER_CLOSED:       # (its examples' state, where a later bracket closes it)
        hint = None
    hint = _misspelled_keyword(tok, source) or hint
    return TdfSyntaxError(message, hint=hint, line=_positive(line), column=_positive(column))


def _positive(n):
    return n if n and n > 0 else None


_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _unclosed_bracket(token, source: str) -> TdfSyntaxError | None:
    """The error at the bracket itself where the parser stopped after a bracket that is never closed, at the end
    of the file or on a later line than the bracket's (as CPython 3.10+ reports it): ``this ( is never closed``."""
    from tapecli.frontend.nesting import never_closed
    at_end = token.type == "$END"
    offset = len(source) if at_end else token.start_pos
    if offset is None:
        return None
    before = [(bracket, at) for bracket, at in never_closed(source) if at < offset]
    if not before:
        return None
    bracket, at = before[-1]
    line = source.count("\n", 0, at) + 1
    if not at_end and (token.line or 0) <= line:
        return None
    column = at - (source.rfind("\n", 0, at) + 1) + 1
    return TdfSyntaxError(f"this {bracket} is never closed", hint=f"close it with {_CLOSERS[bracket]}", line=line,
                          column=column)


# The words a statement may begin with before a name: a misspelling of one (`tap t:`) is a syntax error there.
_STATEMENT_WORDS = sorted({*SOFT_KEYWORDS, "def", "class", "for", "while", "if", "elif", "return", "import", "from",
                           "with", "assert", "raise", "del", "global", "nonlocal", "yield", "lambda", "print"})


def _misspelled_keyword(token, source: str) -> str | None:
    """``did you mean tape?`` where the statement's first word, followed by the token the parser stopped at,
    is close to one of _STATEMENT_WORDS."""
    if token.type != "NAME" or token.start_pos is None:
        return None
    start = source.rfind("\n", 0, token.start_pos) + 1
    words = source[start:token.start_pos].split()
    if len(words) != 1 or not words[0].isidentifier() or words[0] in _STATEMENT_WORDS:
        return None
    close = closest(words[0], _STATEMENT_WORDS, cutoff=0.75)
    return f"did you mean {close}?" if close else None


def _dedent_line(text: str) -> int | None:
    """The first line whose indentation is not one of the open block levels."""
    levels = [0]
    depth = 0
    for number, raw in enumerate(text.split("\n"), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or depth > 0:
            depth += raw.count("(") + raw.count("[") + raw.count("{") - raw.count(")") - raw.count("]") - raw.count("}")
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if indent > levels[-1]:
            levels.append(indent)
        else:
            while indent < levels[-1]:
                levels.pop()
            if indent != levels[-1]:
                return number
        depth += raw.count("(") + raw.count("[") + raw.count("{") - raw.count(")") - raw.count("]") - raw.count("}")
    return None
