"""tapecli's parser: a hand-written recursive-descent parser for grammar/tdf.lark (its tokens: tokens.py).

It gives the AST that Lark's parser for the grammar and a transformer of its tree would give (the tests' oracle,
tests/frontend/lark_oracle.py), positions included, for every program the grammar takes, and the error Lark's
would give for every other: where it meets a token it does not expect, syntaxerrors.py runs the grammar's LALR
tables over the program to find the first syntax error and word it. A form the grammar takes and tapecli does
not run (try, yield, sets...) is refused where its node is complete, children first, as the transformer would
refuse it; a syntax error anywhere in the program still comes first, as Lark parses the whole program before its
tree is transformed.

How Lark positions nodes, which this follows: a rule's node spans its tokens, from the first
to the last, keywords and brackets included. A block (suite) ends with the _DEDENT token,
which the indenter places where the _NEWLINE that ended the block's last line is: from that
line's end to the next statement's first character. tests/cli/test_startup.py compares this parser with the
oracle on the examples and on programs drawn from the grammar.
"""
from __future__ import annotations

from tapecli.errors import TdfSyntaxError
from tapecli.frontend import ast, forms
from tapecli.frontend.tokens import GiveUp, Tok, tokens

_COMP_OPS = frozenset(("<", "<=", ">", ">=", "==", "!=", "~=", "is", "in", "not"))
_MUL_OPS = frozenset(("*", "/", "//", "%", "@"))
# Tokens an expression can start with (NAME, NUMBER and STRING are types, the rest values).
_EXPR_START = frozenset(("NAME", "NUMBER", "STRING", "True", "False", "None", "...", "(", "[", "{", "+", "-",
                         "~", "not", "lambda", "await"))
# Tokens a statement's expression list can start with.
_TEST_START = _EXPR_START | {"*"}


def parse(text: str) -> list:
    """The program's statements (``text`` ends with a newline); a TdfSyntaxError where it is not a program."""
    parser = None
    try:
        parser = _Parser(tokens(text))
        return parser.program()
    except forms.ChainTooLong:
        raise                     # (Lark's transformer says the same, after seconds of parsing the chain)
    except RecursionError:
        line = parser.toks[min(parser.i, len(parser.toks) - 1)].line if parser else 1
        raise TdfSyntaxError("this expression nests too deeply", hint="split it with intermediate names",
                             line=line, column=1) from None
    except (GiveUp, TdfSyntaxError) as e:
        refused = e
    from tapecli.frontend import nesting, syntaxerrors
    nesting.check_nesting(text)   # nesting too deep comes first (tokens.TooDeep stopped before the parser recursed)
    syntaxerrors.check(text)      # then a syntax error anywhere, before a refused form
    if isinstance(refused, GiveUp):
        raise AssertionError("fastparse.py stopped on a program the grammar takes")
    raise refused


_field = forms.field_parser(lambda text: parse(text))     # (its f-string fields, by this parser)


class _Parser:
    def __init__(self, toks: list[Tok]):
        self.toks, self.i, self.factors = toks, 0, 0     # factors: ** nested where the parse is
        self.bare = None                                  # the last bare tuple (a, b) made

    # ------------------------------------------------------------ helpers
    def peek(self) -> str:
        return self.toks[self.i].type

    def take(self, type_: str) -> Tok:
        tok = self.toks[self.i]
        if tok.type != type_:
            raise GiveUp
        self.i += 1
        return tok

    def skip(self, type_: str) -> bool:
        if self.toks[self.i].type == type_:
            self.i += 1
            return True
        return False

    def name(self) -> str:
        return self.take("NAME").value

    def span(self, node, first: int):
        """Position ``node`` over the tokens from index ``first`` to the last one taken (Lark's meta)."""
        a, b = self.toks[first], self.toks[self.i - 1]
        node.line, node.column, node.start = a.line, a.column, a.start
        node.end_line, node.end_column, node.end = b.end_line, b.end_column, b.end
        return node

    def where(self, first: int) -> dict:
        a, b = self.toks[first], self.toks[self.i - 1]
        return {"line": a.line, "column": a.column, "start": a.start, "end_line": b.end_line,
                "end_column": b.end_column, "end": b.end}

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
            self.statement(body)

    def suite(self) -> list:
        first = self.i
        body: list = []
        if self.peek() != "NL":
            self.simple_statements(body)
        else:
            self.i += 1
            self.take("INDENT")
            self.statement(body)
            while self.peek() != "DEDENT":
                self.statement(body)
            self.i += 1
        return body or [self.span(ast.Pass(), first)]

    def statement(self, body: list) -> None:
        compound = _COMPOUND.get(self.peek())
        if compound is not None:
            body.append(compound(self))
        else:
            self.simple_statements(body)

    def simple_statements(self, body: list) -> None:
        while True:
            node = self.small_statement()
            if node is not None:
                body.append(node)
            if not self.skip(";") or self.peek() == "NL":
                break
        self.take("NL")

    def small_statement(self):
        kind = self.peek()
        first = self.i
        simple = _SIMPLE.get(kind)
        if simple is not None:
            self.i += 1
            return simple(self, first)
        if kind not in _TEST_START:
            raise GiveUp
        value = self.testlist_star()
        kind = self.peek()
        if kind == "=":
            targets = [value]
            while self.skip("="):
                targets.append(self.yield_expr() if self.peek() == "yield" else self.testlist_star())
            return forms.assignment(targets[:-1], targets[-1], **self.where(first))
        # one target, not a bare tuple or a starred name, is annotated or augmented
        single = self.toks[first].type != "*" and not (isinstance(value, ast.TupleDisplay) and value is self.bare)
        if kind == "AUGOP":
            if not single:
                raise GiveUp
            op = self.take("AUGOP").value[:-1]
            value_ = self.yield_expr() if self.peek() == "yield" else self.testlist()
            return forms.aug_assignment(value, op, value_, **self.where(first))
        if kind == ":":
            if not single:
                raise GiveUp
            self.i += 1
            self.test()                         # the annotation: nothing at run time
            if not self.skip("="):
                forms.target(value)
                return None
            return forms.assignment([value], self.test(), **self.where(first))
        return self.span(ast.ExprStmt(value), first)

    def var_decl(self, first):
        options = []
        if self.skip("("):
            options = self.arguments(")")
            self.take(")")
        name, dtype = self.name(), self.dtype()
        self.take("=")
        return self.span(ast.VarDecl(name, dtype, self.test(), options), first)

    def const_decl(self, first):
        name, dtype = self.name(), self.dtype()
        self.take("=")
        return self.span(ast.ConstDecl(name, dtype, self.test()), first)

    def dtype(self):
        return self.name() if self.skip(":") else None

    def watch(self, first):
        items = [self.expr()]
        while self.skip(","):
            if self.peek() not in _EXPR_START:
                break
            items.append(self.expr())
        tape = self.name() if self.skip("in") else None
        return self.span(ast.Watch(items, tape), first)

    def return_stmt(self, first):
        value = self.testlist_star() if self.peek() in _TEST_START else None
        return self.span(ast.Return(value), first)

    def expect(self, first):
        test = self.test()
        message = self.test() if self.skip(",") else None
        return self.span(ast.Expect(test, message), first)

    def del_stmt(self, first):
        targets = [forms.target(t) for t in forms.tuple_items(self.exprlist())]
        return self.span(ast.Delete(targets), first)

    def assert_stmt(self, first):
        test = self.test()
        message = self.test() if self.skip(",") else None
        return self.span(ast.Assert(test, message), first)

    def dotted_name(self) -> list[str]:
        names = [self.name()]
        while self.skip("."):
            names.append(self.name())
        return names

    def import_stmt(self, first):
        names = []
        while True:
            dotted = self.dotted_name()
            names.append(forms.import_module(dotted, self.name() if self.skip("as") else None))
            if not self.skip(","):
                return self.span(ast.Import(names), first)

    def from_import(self, first):
        relative = False
        while self.peek() in (".", "..."):
            self.i += 1
            relative = True
        dotted = self.dotted_name() if self.peek() == "NAME" else None
        self.take("import")
        names = None
        if not self.skip("*"):
            parenthesised = self.skip("(")
            names = []
            while True:
                name = self.name()
                names.append((name, self.name() if self.skip("as") else None))
                if not self.skip(",") or self.peek() != "NAME":
                    break
            if parenthesised:
                self.take(")")
        return self.span(ast.Import(forms.import_from(relative, dotted, names, self.toks[first])), first)

    def names_statement(self, first):
        """global and nonlocal: refused."""
        self.name()
        while self.skip(","):
            self.name()
        raise forms.unsupported(self.toks[first].type, self.toks[first])

    def raise_stmt(self, first):
        if self.peek() in _EXPR_START:
            self.test()
            if self.skip("from"):
                self.test()
        raise forms.unsupported("raise", self.toks[first])

    def yield_expr(self, first=None):
        """yield [from] [values]: refused, once its values are read."""
        if first is None:
            first = self.i
            self.take("yield")
        self.skip("from")
        if self.peek() in _EXPR_START:
            self.testlist()
        raise forms.unsupported("yield", self.toks[first])

    def if_stmt(self):
        first = self.i
        self.i += 1
        test = self.test()
        self.take(":")
        branches = [(test, self.suite())]
        orelse = None
        while self.skip("elif"):
            test = self.test()
            self.take(":")
            branches.append((test, self.suite()))
        if self.skip("else"):
            self.take(":")
            orelse = self.suite()
        return self.span(ast.If(branches, orelse), first)

    def while_stmt(self):
        first = self.i
        self.i += 1
        test = self.test()
        self.take(":")
        body = self.suite()
        if self.else_clause() is not None:
            raise forms.unsupported("while ... else", self.toks[first])
        return self.span(ast.While(test, body), first)

    def else_clause(self):
        if not self.skip("else"):
            return None
        self.take(":")
        return self.suite()

    def for_stmt(self):
        first = self.i
        self.i += 1
        target = self.exprlist()
        self.take("in")
        iterable = self.testlist()
        self.take(":")
        body = self.suite()
        orelse = self.else_clause()
        return forms.for_statement(target, iterable, body, orelse, **self.where(first))

    def parameters(self, close: str, annotated: bool) -> list:
        params = []
        while self.peek() in ("NAME", "*", "**", "/"):
            p = self.i
            kind = self.peek() if self.peek() != "NAME" else ""
            if kind:
                self.i += 1
            pname = self.name() if kind in ("", "**") or (kind == "*" and self.peek() == "NAME") else None
            if annotated and pname is not None and self.skip(":"):
                self.test()
            default = self.test() if not kind and self.skip("=") else None
            params.append(self.span(ast.Param(pname, default, kind), p))
            if not self.skip(","):
                break
        if self.peek() != close:
            raise GiveUp                       # (a syntax error)
        return forms.parameters(params)

    def funcdef(self):
        first = self.i
        self.take("def")
        name = self.name()
        self.take("(")
        params = self.parameters(")", True)
        self.take(")")
        if self.skip("->"):
            self.test()
        self.take(":")
        return self.span(ast.FuncDef(name, params, self.suite(), []), first)

    def classdef(self):
        first = self.i
        self.take("class")
        name = self.name()
        bases = []
        if self.skip("("):
            bases = self.arguments(")")
            self.take(")")
        self.take(":")
        body = self.suite()
        if any(isinstance(b, (ast.Keyword, ast.Starred)) for b in bases):
            raise forms.unsupported("a class keyword (metaclass=...)", self.toks[first])
        return self.span(ast.ClassDef(name, bases, body), first)

    def try_stmt(self):
        """try/except/else/finally: refused, once its blocks are read."""
        first = self.i
        self.i += 1
        self.take(":")
        self.suite()
        while self.skip("except"):
            if self.peek() in _EXPR_START:
                self.test()
                if self.skip("as"):
                    self.name()
            self.take(":")
            self.suite()
        self.else_clause()
        if self.skip("finally"):
            self.take(":")
            self.suite()
        raise forms.unsupported("try/except", self.toks[first])

    def async_stmt(self):
        """async def, for, with: refused, once the statement is read."""
        first = self.i
        self.i += 1
        statement = {"def": _Parser.funcdef, "with": _Parser.with_stmt, "for": _Parser.for_stmt}.get(self.peek())
        if statement is None:
            raise GiveUp
        statement(self)
        raise forms.unsupported("async def, async for and async with", self.toks[first])

    def decorated(self):
        first = self.i
        decorators = []
        while self.skip("@"):
            decorators.append(self.dotted_name()[-1])
            if self.skip("("):
                self.arguments(")")
                self.take(")")
            self.take("NL")
        definition = self.classdef() if self.peek() == "class" else self.funcdef()
        return self.span(forms.decorated(definition, decorators, self.toks[first]), first)

    def with_stmt(self):
        first = self.i
        self.i += 1
        items = []
        while True:
            context = self.test()
            bound = forms.target(self.expr()) if self.skip("as") else None
            items.append((context, bound))
            if not self.skip(","):
                break
        self.take(":")
        return self.span(ast.With(items, self.suite()), first)

    def tape_stmt(self):
        first = self.i
        self.i += 1
        name = self.name()
        options = []
        if self.skip("("):
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

    # ------------------------------------------------------------ expression lists
    def testlist_star(self):
        """test_or_star, or a bare tuple of them."""
        return self._list(self.test_or_star, _TEST_START)

    def testlist(self):
        return self._list(self.test, _EXPR_START)

    def exprlist(self):
        return self._list(self.expr_or_star, _TEST_START)

    def _list(self, item, starts):
        first = self.i
        node = item()
        if self.peek() != ",":
            return node
        items = [node]
        while self.skip(","):
            if self.peek() not in starts:
                break
            items.append(item())
        self.bare = self.span(ast.TupleDisplay(items), first)
        return self.bare

    def test_or_star(self):
        return self.star() if self.peek() == "*" else self.test()

    def expr_or_star(self):
        return self.star() if self.peek() == "*" else self.expr()

    def star(self):
        first = self.i
        self.i += 1
        return self.span(ast.Starred(self.expr()), first)

    # ------------------------------------------------------------ expressions
    def test(self):
        if self.peek() == "lambda":
            return self.lambdef(self.test)
        first = self.i
        node = self.or_test()
        if self.peek() != "if":
            return node
        self.i += 1
        test = self.or_test()
        self.take("else")
        return self.span(ast.IfExp(test, node, self.test()), first)

    def test_nocond(self):
        return self.lambdef(self.test_nocond) if self.peek() == "lambda" else self.or_test()

    def lambdef(self, body):
        first = self.i
        self.i += 1
        params = self.parameters(":", False)
        self.take(":")
        return self.span(ast.Lambda(params, body()), first)

    def or_test(self):
        first = self.i
        node = self.and_test()
        if self.peek() != "or":
            return node
        values = [node]
        while self.skip("or"):
            values.append(self.and_test())
        return self.span(ast.BoolOp("or", values), first)

    def and_test(self):
        first = self.i
        node = self.not_test()
        if self.peek() != "and":
            return node
        values = [node]
        while self.skip("and"):
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
        node = self.expr()
        if self.peek() not in _COMP_OPS:
            return node
        ops, comparators = [], []
        while self.peek() in _COMP_OPS:
            op = self.toks[self.i].value
            self.i += 1
            if op == "is" and self.skip("not"):
                op = "is not"
            elif op == "not":
                self.take("in")
                op = "not in"
            ops.append(op)
            comparators.append(self.expr())
        return self.span(ast.Compare(node, ops, comparators), first)

    def expr(self):
        node = self.term()
        if self.peek() in _PRECEDENCE:
            node = self.climb(node, 1)
        return node

    def climb(self, left, lowest: int):
        """``|`` under ``^`` under ``&`` under the shifts under ``+ -`` (Python's precedence), each chained to the
        left: the operators after ``left`` of precedence ``lowest`` or higher (one call per chain, not per level).
        A chain of shifts is refused once it is read."""
        count = 0
        shift = None
        while True:
            op = self.peek()
            precedence = _PRECEDENCE.get(op)
            if precedence is None or precedence < lowest:
                break
            if shift is None and op in _SHIFTS:
                shift = (op, left)
            self.i += 1
            right = self.term()
            while _PRECEDENCE.get(self.peek(), 0) > precedence:
                right = self.climb(right, _PRECEDENCE[self.peek()])
            if shift is not None and self.peek() not in _SHIFTS:
                raise forms.unsupported(*shift)
            left = _chain(op, left, right)
            count += 1
        if count > forms.MAX_CHAIN:
            forms.check_chain(count, left)
        return left

    def term(self):
        node = self.factor()
        count = 0
        while self.peek() in _MUL_OPS:
            op = self.toks[self.i].value
            self.i += 1
            count += 1
            node = _chain(op, node, self.factor())
        if count > forms.MAX_CHAIN:
            forms.check_chain(count, node)
        return node

    def factor(self):
        kind, first = self.peek(), self.i
        if kind == "+" or kind == "-" or kind == "~":
            self.i += 1
            return self.span(ast.UnaryOp(kind, self.factor()), first)
        if kind == "await":
            self.i += 1
            self.primary()
            raise forms.unsupported("await", self.toks[first])
        node = self.primary()
        if self.skip("**"):
            return self.span(ast.BinOp("**", node, self.nested_factor(node)), first)
        return node

    def nested_factor(self, at):
        """The factor after **: a chain of them nests the AST, bounded as other chains are."""
        self.factors += 1
        forms.check_chain(self.factors, at)
        node = self.factor()
        self.factors -= 1
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
                node = forms.call(node, args, **self.where(first))
            elif kind == "[":
                self.i += 1
                items = [self.subscript_item()]
                while self.skip(","):
                    if self.peek() == "]":
                        break
                    items.append(self.subscript_item())
                self.take("]")
                node = self.span(ast.Subscript(node, items), first)
            elif kind == ".":
                self.i += 1
                node = forms.attribute(node, self.name(), **self.where(first))
            else:
                return node

    def arguments(self, close: str) -> list:
        args = []
        while self.peek() != close:
            first = self.i
            if self.peek() == "NAME" and self.toks[self.i + 1].type == "=":
                name = self.name()
                self.i += 1
                args.append(self.span(ast.Keyword(name, self.test()), first))
            elif self.skip("*"):
                args.append(self.span(ast.Starred(self.test()), first))
            elif self.skip("**"):
                args.append(self.span(ast.Keyword(None, self.test()), first))
            else:
                value = self.test()
                if self.peek() in _COMP_START:
                    value = self.span(self.comprehension("generator", value, None), first)
                args.append(value)
            if not self.skip(","):
                break
        return args

    def subscript_item(self):
        first = self.i
        lower = None if self.peek() == ":" else self.test()
        if not self.skip(":"):
            return lower
        upper = self.test() if self.peek() in _EXPR_START else None
        step = None
        if self.skip(":"):
            step = self.test() if self.peek() in _EXPR_START else None
        return self.span(ast.Slice(lower, upper, step), first)

    def comprehension(self, kind, element, key):
        generators = []
        while self.peek() in _COMP_START:
            first = self.i
            refused = self.skip("async")
            self.take("for")
            target = self.exprlist()
            self.take("in")
            iterable = self.or_test()
            conditions = []
            while self.skip("if"):
                conditions.append(self.test_nocond())
            if refused:
                raise forms.unsupported("async comprehensions", self.toks[first])
            generators.append(forms.generator(target, iterable, conditions))
        return ast.Comprehension(kind, element, key, generators)

    def items(self, close: str) -> list:
        items = []
        while self.peek() != close:
            items.append(self.test_or_star())
            if not self.skip(","):
                break
        return items

    def atom(self):
        tok = self.toks[self.i]
        kind = tok.type
        first = self.i
        self.i += 1
        if kind == "NAME":
            return _at(ast.Name(tok.value), tok)
        if kind == "NUMBER":
            return _at(ast.Number(forms.number(tok.value, tok.line, tok.column)), tok)
        if kind == "STRING":
            strings = [tok]
            while self.peek() == "STRING":
                strings.append(self.toks[self.i])
                self.i += 1
            return forms.string([(t.value, t.line, t.column, t.start) for t in strings], _field,
                                **self.where(first))
        if kind in _CONSTANTS:
            return _at(ast.Constant(_CONSTANTS[kind]), tok)
        if kind == "[":
            if self.peek() != "]":
                element = self.test_or_star()
                if self.peek() in _COMP_START:
                    node = self.comprehension("list", element, None)
                    self.take("]")
                    return self.span(node, first)
                items = [element]
                if self.skip(","):
                    items += self.items("]")
            else:
                items = []
            self.take("]")
            return self.span(ast.ListDisplay(items), first)
        if kind == "{":
            key = None
            if self.peek() not in ("}", "**"):
                starred = self.peek() == "*"
                key = self.test_or_star()
                if starred or self.peek() != ":":
                    return self.set_display(key, first)
            pairs = []
            while self.peek() != "}":
                if key is None and self.skip("**"):    # {**mapping, ...}: its entries (a None key)
                    pairs.append((None, self.expr()))
                    if not self.skip(","):
                        break
                    continue
                key = self.test() if key is None else key
                self.take(":")
                value = self.test()
                if not pairs and self.peek() in _COMP_START:
                    node = self.comprehension("dict", value, key)
                    self.take("}")
                    return self.span(node, first)
                pairs.append((key, value))
                key = None
                if not self.skip(","):
                    break
            self.take("}")
            return self.span(ast.DictDisplay(pairs), first)
        if kind == "(":
            if self.skip(")"):
                return self.span(ast.TupleDisplay([]), first)
            if self.peek() == "yield":
                self.yield_expr()
            inner = self.test_or_star()
            if self.peek() in _COMP_START:
                node = self.comprehension("generator", inner, None)
                self.take(")")
                return self.span(node, first)
            if self.skip(","):
                rest = self.items(")")
                self.take(")")
                return self.span(ast.TupleDisplay([inner] + rest), first)
            self.take(")")
            return self.span(inner, first)             # a parenthesised node spans its parentheses
        raise GiveUp

    def set_display(self, element, first):
        """{a, b} and {a for a in b}: refused, once read."""
        if self.peek() in _COMP_START:
            self.comprehension("set", element, None)
            self.take("}")
            raise forms.unsupported("a set comprehension", self.toks[first])
        if self.skip(","):
            self.items("}")
        self.take("}")
        raise forms.unsupported("a set", self.toks[first])


_COMP_START = frozenset(("for", "async"))
_CONSTANTS = {"True": True, "False": False, "None": None, "...": Ellipsis}
# The binary operators below the arithmetic of terms, by Python's precedence (higher binds tighter).
_PRECEDENCE = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5}
_SHIFTS = frozenset(("<<", ">>"))


def _at(node, tok: Tok):
    node.line, node.column, node.end_line, node.end_column = tok.line, tok.column, tok.end_line, tok.end_column
    node.start, node.end = tok.start, tok.end
    return node


def _chain(op, left, right):
    return ast.BinOp(op, left, right, line=left.line, column=left.column, start=left.start,
                     end_line=right.end_line, end_column=right.end_column, end=right.end)


_SIMPLE = {
    "var": _Parser.var_decl, "const": _Parser.const_decl, "watch": _Parser.watch,
    "reset": lambda p, first: p.span(ast.Reset(p.name()), first), "return": _Parser.return_stmt,
    "break": lambda p, first: p.span(ast.Break(), first), "continue": lambda p, first: p.span(ast.Continue(), first),
    "pass": lambda p, first: p.span(ast.Pass(), first), "expect": _Parser.expect, "del": _Parser.del_stmt,
    "assert": _Parser.assert_stmt, "import": _Parser.import_stmt, "from": _Parser.from_import,
    "global": _Parser.names_statement, "nonlocal": _Parser.names_statement, "raise": _Parser.raise_stmt,
    "yield": _Parser.yield_expr,
}
_COMPOUND = {
    "if": _Parser.if_stmt, "while": _Parser.while_stmt, "for": _Parser.for_stmt, "def": _Parser.funcdef,
    "class": _Parser.classdef, "with": _Parser.with_stmt, "@": _Parser.decorated, "tape": _Parser.tape_stmt,
    "stop_recording": lambda p: p.named_block(ast.StopRecording),
    "expect_error": lambda p: p.named_block(ast.ExpectError), "try": _Parser.try_stmt, "async": _Parser.async_stmt,
}
