"""grammar/tdf.lark's LALR(1) automaton run over a program as Lark's parser runs it: where it fails first.

The tables (lalr_tables.py) are the grammar's, computed by Lark's LALR analysis at development time. The
tokens come as Lark's would: its basic lexer (the grammar's terminals, tried in Lark's order; a keyword is a
NAME whose whole text is one), its Python-style indenter, then the soft keywords (softkeywords.py), each a
generator pulled one token at a time, so that a character no terminal matches, a tab in indentation or a
dedent to no block is met where Lark meets it: after the parser's errors on the tokens before it, before those
after it (the soft keywords look a few tokens ahead). Only the error path runs this (and TAPECLI_PARSER=compare):
fastparse.py parses valid programs.
"""
from __future__ import annotations

import re

from tapecli.frontend import lalr_tables as tables
from tapecli.frontend.softkeywords import SOFT_KEYWORDS, STATEMENT_ENDS, is_keyword


class Token:
    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column", "end_pos")

    def __init__(self, type_, value, start_pos=None, line=None, column=None, end_line=None, end_column=None,
                 end_pos=None):
        self.type, self.value, self.start_pos, self.line, self.column = type_, value, start_pos, line, column
        self.end_line, self.end_column, self.end_pos = end_line, end_column, end_pos

    def borrow(self, type_, value) -> Token:
        return Token(type_, value, self.start_pos, self.line, self.column, self.end_line, self.end_column,
                     self.end_pos)


class Failure:
    """Where a parse stopped first. ``kind``: "token" (the parser cannot take ``token``; ``expected``: the
    terminals its state has actions for, ``accepts``: those it can shift after its reductions), "character" (no
    terminal matches at ``pos``), "tab" (a tab in indentation) or "dedent" (a dedent to no open block). ``state``:
    the parser's stack depth and top state there, what a hint's example must share."""
    __slots__ = ("kind", "token", "expected", "accepts", "state", "pos", "line", "column")

    def __init__(self, kind, state=None, token=None, expected=(), accepts=(), pos=None, line=None, column=None):
        self.kind, self.state, self.token, self.expected, self.accepts = kind, state, token, expected, accepts
        self.pos, self.line, self.column = pos, line, column

    @property
    def token_type(self):
        return self.token.type if self.token is not None else None


class _Stop(Exception):
    """The lexer or the indenter stopped: its Failure (the parser's state is added where it is caught)."""

    def __init__(self, failure: Failure):
        self.failure = failure


_scanner = None


def _lex(text: str):
    """Lark's basic lexer: the first terminal (in Lark's order) that matches, ignored ones skipped."""
    global _scanner
    if _scanner is None:
        _scanner = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in tables.TERMINALS))
    match, keywords, ignored = _scanner.match, tables.KEYWORDS, tables.IGNORED
    pos, line, line_start, n = 0, 1, 0, len(text)
    while pos < n:
        m = match(text, pos)
        if m is None:
            raise _Stop(Failure("character", pos=pos, line=line, column=pos - line_start + 1))
        value, type_, start = m.group(), m.lastgroup, pos
        column = pos - line_start + 1
        newlines = value.count("\n")
        if newlines:
            line_start = pos + value.rindex("\n") + 1
        pos = m.end()
        first_line, line = line, line + newlines
        if type_ in ignored:
            continue
        if type_ == "NAME":
            type_ = keywords.get(value, type_)
        yield Token(type_, value, start, first_line, column, line, pos - line_start + 1, pos)


_OPEN, _CLOSE = frozenset(("LPAR", "LSQB", "LBRACE")), frozenset(("RPAR", "RSQB", "RBRACE"))


def _indent(tokens):
    """Lark's Indenter (tab_len 8), with tapecli's refusal of a tab in indentation: _INDENT and _DEDENT after a
    _NEWLINE outside brackets, the _NEWLINEs inside brackets dropped."""
    paren, levels = 0, [0]
    tok = None
    for tok in tokens:
        if tok.type == "_NEWLINE":
            if paren == 0:
                indent = tok.value.rsplit("\n", 1)[1]
                if "\t" in indent:
                    raise _Stop(Failure("tab", line=tok.end_line, column=indent.index("\t") + 1))
                yield tok
                width = len(indent)
                if width > levels[-1]:
                    levels.append(width)
                    yield tok.borrow("_INDENT", indent)
                else:
                    while width < levels[-1]:
                        levels.pop()
                        yield tok.borrow("_DEDENT", indent)
                    if width != levels[-1]:
                        raise _Stop(Failure("dedent"))
        else:
            yield tok
        if tok.type in _OPEN:
            paren += 1
        elif tok.type in _CLOSE:
            paren -= 1
    while len(levels) > 1:             # (at the end: placed where the last token is, as Lark 1.3 places them)
        levels.pop()
        yield tok.borrow("_DEDENT", "")


_KINDS = {"_NEWLINE": "NEWLINE", "_INDENT": "INDENT", "_DEDENT": "DEDENT", "NAME": "NAME", "NUMBER": "NUMBER",
          "STRING": "STRING"}


def _kind(tok) -> str:
    return _KINDS.get(tok.type) or tok.value


def soft_keywords(tokens, retyped=lambda tok, type_: tok.borrow(type_, tok.value)):
    """A soft keyword that begins its statement typed as that keyword (_VAR, _TAPE...): ``retyped(tok, type_)``
    (the tests' Lark oracle passes Lark's tokens and its own way of retyping one)."""
    ahead: list = []
    starts_statement, depth = True, 0

    def following(k):
        while len(ahead) < k:
            tok = next(tokens, None)
            if tok is None:
                return None
            ahead.append(tok)
        return _kind(ahead[k - 1])

    while True:
        tok = ahead.pop(0) if ahead else next(tokens, None)
        if tok is None:
            return
        if starts_statement and tok.type == "NAME" and tok.value in SOFT_KEYWORDS and is_keyword(tok.value, following):
            tok = retyped(tok, "_" + tok.value.upper())
        kind = _kind(tok)
        depth += (kind in "([{") - (kind in ")]}")
        starts_statement = kind in STATEMENT_ENDS and (kind != ":" or depth == 0)
        yield tok


_actions: list | None = None


def _tables() -> list:
    """Each state's actions, as in Lark's table: by terminal, a shift's target state (>= 0) or ~reduction; by
    nonterminal, the goto's target."""
    global _actions
    if _actions is None:
        _actions = []
        for row, reductions in tables.STATES:
            actions = dict(tables.SHIFTS[row])
            for reduction, lookahead in reductions:
                actions.update(dict.fromkeys(tables.LOOKAHEADS[lookahead], ~reduction))
            _actions.append(actions)
        for nonterminal, (default, targets) in tables.GOTOS.items():
            for state, actions in enumerate(_actions):
                actions[nonterminal] = targets.get(state, default)
    return _actions


def _feed(actions: list, stack: list, terminal: str) -> bool:
    """Lark's ParserState.feed_token on the state stack: reduce until ``terminal`` shifts (True), or False where
    a state has no action for it. The end ($END) is taken where the reductions reach the end state."""
    reductions, end = tables.REDUCTIONS, tables.END
    while True:
        top = stack[-1]
        action = actions[top].get(terminal)
        if action is None:
            return False
        if action >= 0:
            stack.append(action)
            return True
        origin, size = reductions[~action]
        if size == 1:
            # A run of one-symbol reductions (name -> atom -> ... -> test) replaces the top state alone: its
            # result hangs on the state below, the top and the terminal only.
            key = (stack[-2], top, terminal)
            top = _runs.get(key)
            if top is None:
                top = _runs[key] = _unit_run(actions, stack[-2], stack[-1], terminal)
            stack[-1] = top
        else:
            if size:
                del stack[-size:]
            stack.append(actions[stack[-1]][origin])
        if terminal == "$END" and stack[-1] == end:
            return True


_runs: dict = {}


def _unit_run(actions: list, below: int, top: int, terminal: str) -> int:
    """The top state after the one-symbol reductions on ``terminal`` from ``top`` above ``below``."""
    reductions, end = tables.REDUCTIONS, tables.END
    while True:
        action = actions[top].get(terminal)
        if action is None or action >= 0:
            return top
        origin, size = reductions[~action]
        if size != 1:
            return top
        top = actions[below][origin]
        if terminal == "$END" and top == end:
            return top


def first_failure(text: str) -> Failure | None:
    """Where Lark's parser would first fail on ``text``, or None where the grammar takes it."""
    actions = _tables()
    stack = [tables.START]
    last = None
    try:
        for tok in soft_keywords(_indent(_lex(text))):
            if not _feed(actions, stack, tok.type):
                return _unexpected(actions, stack, tok)
            last = tok
    except _Stop as stop:
        stop.failure.state = (len(stack), stack[-1])
        return stop.failure
    end = last.borrow("$END", "") if last is not None else Token("$END", "", 0, 1, 1)
    if not _feed(actions, stack, "$END"):
        return _unexpected(actions, stack, end)
    return None


def _unexpected(actions: list, stack: list, tok: Token) -> Failure:
    expected = {symbol for symbol in actions[stack[-1]] if symbol.isupper()}     # (its terminals)
    accepts = {t for t in expected if _feed(actions, list(stack), t)}
    return Failure("token", (len(stack), stack[-1]), tok, expected, accepts)
