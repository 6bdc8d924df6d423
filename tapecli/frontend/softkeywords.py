"""TDF's statement words are soft keywords: a keyword only where it begins a statement whose shape
follows (docs/spec/LANGUAGE.md §11), else an ordinary name — `var x = 1` declares, `var = 1` binds a
name called var, `tape.watch(x)` calls a method of a tape named tape.

The one rule, used on every token stream (tokens.py's for fastparse.py, lalr.py's on the error path, and the
tests' Lark oracle's postlexer):
each token is given as its kind: "NAME", "NUMBER", "STRING", or its text for anything else.
"""
from __future__ import annotations

# word -> what must follow it: a name, or the start of an expression
SOFT_KEYWORDS = {"var": "name", "const": "name", "tape": "name", "reset": "name", "stop_recording": "name",
                 "expect_error": "name", "watch": "expression", "expect": "expression"}

# Where a statement begins: after these (":" only outside brackets, where it ends a block's first line).
STATEMENT_ENDS = frozenset(("NEWLINE", "INDENT", "DEDENT", ";", ":"))

EXPRESSION_START = frozenset(("NAME", "NUMBER", "STRING", "(", "[", "{", "+", "-", "~", "not", "lambda", "True",
                              "False", "None", "...", "await"))
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def is_keyword(word: str, following) -> bool:
    """Whether ``word``, beginning a statement, is its keyword; ``following(k)`` is the kind of the
    k-th token after it (k = 1, 2, ...), None past the end."""
    wants = SOFT_KEYWORDS[word]
    after = following(1)
    if wants == "expression":
        return after in EXPRESSION_START
    if word == "var" and after == "(":       # var(trainable=False) x = ...: a name after the options
        depth, k = 0, 1
        while True:
            kind = following(k)
            if kind is None:
                return False
            if kind in _OPEN:
                depth += 1
            elif kind in _CLOSE:
                depth -= 1
                if depth == 0:
                    return following(k + 1) == "NAME"
            k += 1
    return after == "NAME"
