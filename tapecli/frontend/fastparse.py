"""A hand-written recursive-descent parser for grammar/tdf.lark, for valid programs only.

Building the Lark parser and compiling its lexer's regular expressions costs a small run
more than everything else it does. This parser gives the AST that parser.py's Lark parser
and transformer give, positions included, for the programs it accepts; at the first thing it
does not expect it gives up (returns None), and parser.parse runs Lark, which either parses
the program or reports the error with its messages and hints. So it never has to explain an
error, and it may give up on anything rare (tabs, backslash continuations, a keyword used as
a name, which Lark's contextual lexer allows where the keyword cannot appear).

How Lark positions nodes, which this follows: a rule's node spans its tokens, from the first
to the last, keywords and brackets included. A block (suite) ends with the _DEDENT token,
which the indenter places where the _NEWLINE that ended the block's last line is: from that
line's end to the next statement's first character. tests/test_startup.py compares the two
parsers on the examples and on programs drawn from the grammar.
"""
from __future__ import annotations

from tapecli.frontend import ast

KEYWORDS = frozenset((
    "var", "const", "watch", "in", "reset", "return", "break", "continue", "pass", "expect", "if", "elif", "else",
    "while", "for", "def", "tape", "stop_recording", "expect_error", "or", "and", "not", "is", "True", "False",
    "None"))

_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_AUGOPS = frozenset(("+=", "-=", "*=", "/="))
_COMP_OPS = frozenset(("<", "<=", ">", ">=", "==", "!=", "~=", "is"))
_MUL_OPS = frozenset(("*", "/", "//", "%", "@"))
# Tokens an expression can start with (NAME, NUMBER and STRING are types, the rest values).
_EXPR_START = frozenset(("NAME", "NUMBER", "STRING", "True", "False", "None", "(", "[", "{", "+", "-", "not"))


class GiveUp(Exception):
    """Not a program this parser accepts; Lark decides."""


class Tok:
    __slots__ = ("type", "value", "line", "column", "end_line", "end_column", "start", "end")

    def __init__(self, type_, value, line, column, end_line, end_column, start, end):
        self.type, self.value = type_, value
        self.line, self.column, self.end_line, self.end_column = line, column, end_line, end_column
        self.start, self.end = start, end

    def borrow(self, type_):
        return Tok(type_, "", self.line, self.column, self.end_line, self.end_column, self.start, self.end)


_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_DIGITS = frozenset("0123456789")
_OPS2 = frozenset(("**", "//", "<=", ">=", "==", "!=", "~=", "+=", "-=", "*=", "/="))
_OPS1 = frozenset("+-*/%@<>=()[]{},:.")


def _scan(text: str, pos: int) -> tuple[str, int]:
    """(kind, end) of the token at ``pos``, as Lark's lexer would take it: spaces (ignored), _NEWLINE
    (with the comments and blank lines after it), NAME, NUMBER (before ".", so ".5" is a number),
    STRING, the operators, longest first. GiveUp for anything else (tabs, backslashes, non-ASCII)."""
    n = len(text)
    c = text[pos]
    if c == " ":
        end = pos + 1
        while end < n and text[end] == " ":
            end += 1
        return "ws", end
    if c == "\n" or c == "#" or (c == "\r" and text.startswith("\n", pos + 1)):
        end = pos
        while end < n:                                  # (\r?\n[\t ]*|#[^\n]*)+
            c = text[end]
            if c == "#":
                nl = text.find("\n", end)
                end = n if nl < 0 else nl
            elif c == "\n" or (c == "\r" and text.startswith("\n", end + 1)):
                end += 1 if c == "\n" else 2
                while end < n and text[end] in " \t":
                    end += 1
            else:
                break
        return "nl", end
    if c in _NAME_START:
        end = pos + 1
        while end < n and text[end] in _NAME_CHARS:
            end += 1
        return "name", end
    if c in _DIGITS or (c == "." and pos + 1 < n and text[pos + 1] in _DIGITS):
        end = pos
        while end < n and text[end] in _DIGITS:
            end += 1
        if end < n and text[end] == ".":
            end += 1
            while end < n and text[end] in _DIGITS:
                end += 1
        if end < n and text[end] in "eE":               # an exponent only with digits after it
            k = end + 1
            if k < n and text[k] in "+-":
                k += 1
            if k < n and text[k] in _DIGITS:
                while k < n and text[k] in _DIGITS:
                    k += 1
                end = k
        return "number", end
    if c == '"' or c == "'":
        end = pos + 1
        while end < n:
            ch = text[end]
            if ch == c:
                return "string", end + 1
            if ch == "\n":
                break
            if ch == "\\":
                if end + 1 >= n or text[end + 1] == "\n":
                    break
                end += 1
            end += 1
        raise GiveUp
    if text[pos:pos + 2] in _OPS2:
        return "op", pos + 2
    if c in _OPS1:
        return "op", pos + 1
    raise GiveUp


def tokens(text: str) -> list[Tok]:
    """Lark's token stream after the indenter: NL/INDENT/DEDENT as _NEWLINE/_INDENT/_DEDENT, then EOF."""
    out: list[Tok] = []
    pos, line, line_start, n = 0, 1, 0, len(text)
    paren, levels = 0, [0]
    try:
        while pos < n:
            kind, end = _scan(text, pos)
            value = text[pos:end]
            column = pos - line_start + 1
            newlines = value.count("\n")
            end_line = line + newlines
            if newlines:
                line_start = pos + value.rindex("\n") + 1
            tok = Tok(kind, value, line, column, end_line, end - line_start + 1, pos, end)
            line, pos = end_line, end
            if kind == "ws":
                continue
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
                    out.append(tok.borrow("INDENT"))
                else:
                    while width < levels[-1]:
                        levels.pop()
                        out.append(tok.borrow("DEDENT"))
                    if width != levels[-1]:
                        raise GiveUp
                continue
            if kind == "name":
                tok.type = value if value in KEYWORDS else "NAME"
            elif kind == "number":
                tok.type = "NUMBER"
            elif kind == "string":
                tok.type = "STRING"
            else:
                tok.type = "AUGOP" if value in _AUGOPS else value
                if value in _OPEN:
                    paren += 1
                elif value in _CLOSE:
                    paren -= 1
                    if paren < 0:
                        raise GiveUp
            out.append(tok)
    except GiveUp:
        raise GiveUp(line) from None   # the line where the text stopped being tokens
    if not out:
        raise GiveUp
    last = out[-1]
    while len(levels) > 1:
        levels.pop()
        out.append(last.borrow("DEDENT"))
    out.append(last.borrow("EOF"))
    return out


def parse(text: str) -> list | None:
    """The program's statements (text ends with a newline), or None: let Lark parse it."""
    return parse_until(text)[0]


def parse_until(text: str) -> tuple[list | None, int, bool]:
    """(statements, 0, False), or (None, the line where this parser stopped, whether it stopped by
    recursing too deeply). Parsing never backtracks, so that line is where the first error is, or
    the rare construct this parser leaves to Lark."""
    parser = None
    try:
        parser = _Parser(tokens(text))
        return parser.program(), 0, False
    except (GiveUp, RecursionError) as e:
        if e.args and isinstance(e.args[0], int):
            line = e.args[0]
        else:
            line = parser.toks[min(parser.i, len(parser.toks) - 1)].line if parser else 1
        return None, line, isinstance(e, RecursionError)


class _Parser:
    def __init__(self, toks: list[Tok]):
        self.toks = toks
        self.i = 0

    # ------------------------------------------------------------ helpers
    def peek(self) -> str:
        return self.toks[self.i].type

    def take(self, type_: str) -> Tok:
        tok = self.toks[self.i]
        if tok.type != type_:
            raise GiveUp
        self.i += 1
        return tok

    def name(self) -> str:
        return self.take("NAME").value

    def span(self, node, first: int):
        """Position ``node`` over the tokens from index ``first`` to the last one taken (Lark's meta)."""
        a, b = self.toks[first], self.toks[self.i - 1]
        node.line, node.column, node.start = a.line, a.column, a.start
        node.end_line, node.end_column, node.end = b.end_line, b.end_column, b.end
        return node

    # ------------------------------------------------------------ statements
    def program(self) -> list:
        body = []
        while True:
            kind = self.peek()
            if kind == "EOF":
                return body
            if kind == "NL":
                self.i += 1
                continue
            body.append(self.statement())

    def suite(self) -> list:
        self.take("NL")
        self.take("INDENT")
        body = [self.statement()]
        while self.peek() != "DEDENT":
            body.append(self.statement())
        self.i += 1
        return body

    def statement(self):
        kind = self.peek()
        compound = _COMPOUND.get(kind)
        if compound is not None:
            return compound(self)
        node = self.small_statement(kind)
        self.take("NL")
        return node

    def small_statement(self, kind: str):
        first = self.i
        if kind == "NAME":
            after = self.toks[self.i + 1].type
            if after == "=" or after == ",":
                targets = self.target_list()
                self.take("=")
                return self.span(ast.Assign(targets, self.expr()), first)
            if after == "AUGOP":
                name = self.name()
                op = self.take("AUGOP").value[:-1]
                return self.span(ast.AugAssign(name, op, self.expr()), first)
        simple = _SIMPLE.get(kind)
        if simple is not None:
            self.i += 1
            return self.span(simple(self), first)
        if kind not in _EXPR_START:
            raise GiveUp
        return self.span(ast.ExprStmt(self.expr()), first)

    def var_decl(self):
        options = []
        if self.peek() == "(":
            self.i += 1
            options = self.arguments(")")
            self.take(")")
        name, dtype = self.name(), self.dtype()
        self.take("=")
        return ast.VarDecl(name, dtype, self.expr(), options)

    def const_decl(self):
        name, dtype = self.name(), self.dtype()
        self.take("=")
        return ast.ConstDecl(name, dtype, self.expr())

    def dtype(self):
        if self.peek() == ":":
            self.i += 1
            return self.name()
        return None

    def watch(self):
        items = self.exprlist()
        tape = None
        if self.peek() == "in":
            self.i += 1
            tape = self.name()
        return ast.Watch(items, tape)

    def return_stmt(self):
        if not self.starts_expr():
            return ast.Return(None)
        first = self.i - 1                         # "return": a tuple value spans the statement
        values = self.exprlist()
        value = values[0] if len(values) == 1 else self.span(ast.TupleDisplay(values), first)
        return ast.Return(value)

    def expect(self):
        test = self.expr()
        message = None
        if self.peek() == ",":
            self.i += 1
            message = self.expr()
        return ast.Expect(test, message)

    def target_list(self) -> list[str]:
        names = [self.name()]
        while self.peek() == ",":
            self.i += 1
            if self.peek() != "NAME":
                break
            names.append(self.name())
        return names

    def if_stmt(self):
        first = self.i
        self.i += 1
        test = self.expr()
        self.take(":")
        branches = [(test, self.suite())]
        orelse = None
        while self.peek() == "elif":
            self.i += 1
            test = self.expr()
            self.take(":")
            branches.append((test, self.suite()))
        if self.peek() == "else":
            self.i += 1
            self.take(":")
            orelse = self.suite()
        return self.span(ast.If(branches, orelse), first)

    def while_stmt(self):
        first = self.i
        self.i += 1
        test = self.expr()
        self.take(":")
        return self.span(ast.While(test, self.suite()), first)

    def for_stmt(self):
        first = self.i
        self.i += 1
        targets = self.target_list()
        self.take("in")
        iterable = self.expr()
        self.take(":")
        return self.span(ast.For(targets, iterable, self.suite()), first)

    def funcdef(self):
        first = self.i
        self.take("def")
        name = self.name()
        self.take("(")
        params = []
        while self.peek() == "NAME":
            p = self.i
            pname = self.name()
            default = None
            if self.peek() == "=":
                self.i += 1
                default = self.expr()
            params.append(self.span(ast.Param(pname, default), p))
            if self.peek() != ",":
                break
            self.i += 1
        self.take(")")
        self.take(":")
        return self.span(ast.FuncDef(name, params, self.suite()), first)

    def decorated(self):
        first = self.i
        decorators = []
        while self.peek() == "@":
            self.i += 1
            decorators.append(self.name())
            self.take("NL")
        func = self.funcdef()
        func.decorators = decorators
        return self.span(func, first)

    def tape_stmt(self):
        first = self.i
        self.i += 1
        name = self.name()
        options = []
        if self.peek() == "(":
            self.i += 1
            options = self.arguments(")")
            self.take(")")
        self.take(":")
        return self.span(ast.TapeBlock(name, options, self.suite()), first)

    def named_block(self, cls):
        first = self.i
        self.i += 1
        name = self.name()
        self.take(":")
        return self.span(cls(name, self.suite()), first)

    # ------------------------------------------------------------ expressions
    def starts_expr(self) -> bool:
        return self.peek() in _EXPR_START

    def exprlist(self) -> list:
        items = [self.expr()]
        while self.peek() == ",":
            self.i += 1
            if not self.starts_expr():
                break
            items.append(self.expr())
        return items

    def expr(self):
        first = self.i
        node = self.and_test()
        if self.peek() != "or":
            return node
        values = [node]
        while self.peek() == "or":
            self.i += 1
            values.append(self.and_test())
        return self.span(ast.BoolOp("or", values), first)

    def and_test(self):
        first = self.i
        node = self.not_test()
        if self.peek() != "and":
            return node
        values = [node]
        while self.peek() == "and":
            self.i += 1
            values.append(self.not_test())
        return self.span(ast.BoolOp("and", values), first)

    def not_test(self):
        if self.peek() == "not":
            first = self.i
            self.i += 1
            return self.span(ast.Not(self.not_test()), first)
        return self.comparison()

    def comparison(self):
        first = self.i
        node = self.arith()
        if self.peek() not in _COMP_OPS:
            return node
        ops, comparators = [], []
        while self.peek() in _COMP_OPS:
            op = self.toks[self.i].value
            self.i += 1
            if op == "is" and self.peek() == "not":
                self.i += 1
                op = "is not"
            ops.append(op)
            comparators.append(self.arith())
        return self.span(ast.Compare(node, ops, comparators), first)

    def arith(self):
        node = self.term()
        while self.peek() in ("+", "-"):
            op = self.toks[self.i].value
            self.i += 1
            node = _chain(op, node, self.term())
        return node

    def term(self):
        node = self.factor()
        while self.peek() in _MUL_OPS:
            op = self.toks[self.i].value
            self.i += 1
            node = _chain(op, node, self.factor())
        return node

    def factor(self):
        kind = self.peek()
        if kind == "+" or kind == "-":
            first = self.i
            self.i += 1
            return self.span(ast.UnaryOp(kind, self.factor()), first)
        first = self.i
        node = self.primary()
        if self.peek() == "**":
            self.i += 1
            return self.span(ast.BinOp("**", node, self.factor()), first)
        return node

    def primary(self):
        first = self.i
        node = self.atom()
        while True:
            kind = self.peek()
            if kind == "(":
                self.i += 1
                args = self.arguments(")")
                self.take(")")
                keywords = [a for a in args if isinstance(a, ast.Keyword)]
                positional = args[:len(args) - len(keywords)]
                if any(isinstance(a, ast.Keyword) for a in positional):    # a positional after a keyword:
                    raise GiveUp                                          # Lark reports it
                node = self.span(ast.Call(node, positional, keywords), first)
            elif kind == "[":
                self.i += 1
                items = [self.subscript_item()]
                while self.peek() == ",":
                    self.i += 1
                    if self.peek() == "]":
                        break
                    items.append(self.subscript_item())
                self.take("]")
                node = self.span(ast.Subscript(node, items), first)
            elif kind == ".":
                self.i += 1
                node = self.span(ast.Attribute(node, self.name()), first)
            else:
                return node

    def arguments(self, close: str) -> list:
        args = []
        while self.peek() != close:
            if self.peek() == "NAME" and self.toks[self.i + 1].type == "=":
                first = self.i
                name = self.name()
                self.i += 1
                args.append(self.span(ast.Keyword(name, self.expr()), first))
            else:
                args.append(self.expr())
            if self.peek() != ",":
                break
            self.i += 1
        return args

    def subscript_item(self):
        first = self.i
        lower = None if self.peek() == ":" else self.expr()
        if self.peek() != ":":
            return lower
        self.i += 1
        upper = self.expr() if self.starts_expr() else None
        step = None
        if self.peek() == ":":
            self.i += 1
            step = self.expr() if self.starts_expr() else None
        return self.span(ast.Slice(lower, upper, step), first)

    def atom(self):
        tok = self.toks[self.i]
        kind = tok.type
        first = self.i
        self.i += 1
        if kind == "NAME":
            return _at(ast.Name(tok.value), tok)
        if kind == "NUMBER":
            text = tok.value
            return _at(ast.Number(ast.number_value(text, tok.line, tok.column)), tok)
        if kind == "STRING":
            body = tok.value[1:-1]
            if "\\" in body:
                body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
            return _at(ast.String(body), tok)
        if kind in _CONSTANTS:
            return _at(ast.Constant(_CONSTANTS[kind]), tok)
        if kind == "[":
            items = [] if self.peek() == "]" else self.exprlist()
            self.take("]")
            return self.span(ast.ListDisplay(items), first)
        if kind == "{":
            pairs = []
            while self.peek() != "}":
                key = self.expr()
                self.take(":")
                pairs.append((key, self.expr()))
                if self.peek() != ",":
                    break
                self.i += 1
            self.take("}")
            return self.span(ast.DictDisplay(pairs), first)
        if kind == "(":
            inner = self.expr()
            if self.peek() == ",":
                self.i += 1
                rest = self.exprlist() if self.starts_expr() else []
                self.take(")")
                return self.span(ast.TupleDisplay([inner] + rest), first)
            self.take(")")
            return self.span(inner, first)             # a parenthesised node spans its parentheses
        raise GiveUp


_CONSTANTS = {"True": True, "False": False, "None": None}


def _at(node, tok: Tok):
    node.line, node.column, node.end_line, node.end_column = tok.line, tok.column, tok.end_line, tok.end_column
    node.start, node.end = tok.start, tok.end
    return node


def _chain(op, left, right):
    return ast.BinOp(op, left, right, line=left.line, column=left.column, start=left.start,
                     end_line=right.end_line, end_column=right.end_column, end=right.end)


_SIMPLE = {
    "var": _Parser.var_decl, "const": _Parser.const_decl, "watch": _Parser.watch,
    "reset": lambda p: ast.Reset(p.name()), "return": _Parser.return_stmt,
    "break": lambda p: ast.Break(), "continue": lambda p: ast.Continue(), "pass": lambda p: ast.Pass(),
    "expect": _Parser.expect,
}
_COMPOUND = {
    "if": _Parser.if_stmt, "while": _Parser.while_stmt, "for": _Parser.for_stmt, "def": _Parser.funcdef,
    "@": _Parser.decorated, "tape": _Parser.tape_stmt,
    "stop_recording": lambda p: p.named_block(ast.StopRecording),
    "expect_error": lambda p: p.named_block(ast.ExpectError),
}
