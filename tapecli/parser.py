"""Source text -> AST. Lark LALR with a Python-style indenter; positions on every node."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from lark.indenter import DedentError, Indenter

from . import ast
from .cache import cache_dir
from .errors import TdfError, TdfSyntaxError

_BINARY_OPS = {"+", "-", "*", "/", "//", "%", "@"}


def grammar_text() -> str:
    """The grammar ships inside the wheel; a source checkout keeps it in grammar/."""
    packaged = resources.files("tapecli").joinpath("grammar", "tdf.lark")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parent.parent / "grammar" / "tdf.lark").read_text(encoding="utf-8")


class TdfIndenter(Indenter):
    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def handle_NL(self, token):
        if self.paren_level == 0:
            indent = token.rsplit("\n", 1)[1]
            if "\t" in indent:
                raise TdfSyntaxError("a tab in indentation", hint="indent with spaces only",
                                     line=token.end_line, column=indent.index("\t") + 1)
        yield from super().handle_NL(token)


_parser: Lark | None = None


def _lark() -> Lark:
    global _parser
    if _parser is None:
        folder = cache_dir("parser")
        _parser = Lark(grammar_text(), parser="lalr", postlex=TdfIndenter(), propagate_positions=True,
                       maybe_placeholders=True, cache=str(folder / "tdf.lark.cache") if folder else False)
    return _parser


def _pos(node, meta):
    if not getattr(meta, "empty", True):
        node.line, node.column = meta.line, meta.column
        node.end_line, node.end_column = meta.end_line, meta.end_column
        node.start, node.end = meta.start_pos, meta.end_pos
    return node


def _tok_pos(node, tok: Token):
    node.line, node.column = tok.line, tok.column
    node.end_line, node.end_column = tok.end_line, tok.end_column
    node.start, node.end = tok.start_pos, tok.end_pos
    return node


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> ast nodes. Method names are the grammar's rule names and aliases."""

    def start(self, meta, items):
        return [s for s in items if s is not None]

    def suite(self, meta, items):
        return list(items)

    # ---- expressions
    def name(self, meta, items):
        return _tok_pos(ast.Name(str(items[0])), items[0])

    def number(self, meta, items):
        text = str(items[0])
        value = float(text) if any(c in text for c in ".eE") else int(text)
        return _tok_pos(ast.Number(value), items[0])

    def string(self, meta, items):
        tok = items[0]
        body = str(tok)[1:-1]
        value = body.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in body else body
        return _tok_pos(ast.String(value), tok)

    def true(self, meta, items):
        return _pos(ast.Constant(True), meta)

    def false(self, meta, items):
        return _pos(ast.Constant(False), meta)

    def none(self, meta, items):
        return _pos(ast.Constant(None), meta)

    def exprlist(self, meta, items):
        return [i for i in items if i is not None]

    def list_display(self, meta, items):
        return _pos(ast.ListDisplay(items[0] or []), meta)

    def paren(self, meta, items):
        """A parenthesised expression is its inner node, spanning the parentheses."""
        return _pos(items[0], meta)

    def tuple_display(self, meta, items):
        return _pos(ast.TupleDisplay([items[0]] + (items[1] or [])), meta)

    def dict_items(self, meta, items):
        return [i for i in items if i is not None]

    def dict_item(self, meta, items):
        return (items[0], items[1])

    def dict_display(self, meta, items):
        return _pos(ast.DictDisplay(items[0] or []), meta)

    # The grammar's `?rule: ... -> alias` keeps single-child trees; unwrap them here.
    def or_expr(self, meta, items):
        return items[0] if len(items) == 1 else _pos(ast.BoolOp("or", list(items)), meta)

    def and_expr(self, meta, items):
        return items[0] if len(items) == 1 else _pos(ast.BoolOp("and", list(items)), meta)

    def not_expr(self, meta, items):
        return _pos(ast.Not(items[0]), meta)

    def comp_op(self, meta, items):
        return " ".join(str(t) for t in items)

    def compare(self, meta, items):
        if len(items) == 1:
            return items[0]
        return _pos(ast.Compare(items[0], list(items[1::2]), list(items[2::2])), meta)

    def add_op(self, meta, items):
        return str(items[0])

    mul_op = add_op

    def binary_chain(self, meta, items):
        node = items[0]  # a single factor passes through unchanged
        for op, right in zip(items[1::2], items[2::2]):
            node = ast.BinOp(op, node, right, line=node.line, column=node.column, start=node.start,
                             end_line=right.end_line, end_column=right.end_column, end=right.end)
        return node

    def unary(self, meta, items):
        return _pos(ast.UnaryOp(items[0], items[1]), meta)

    def power(self, meta, items):
        if len(items) == 1:
            return items[0]
        return _pos(ast.BinOp("**", items[0], items[1]), meta)

    def arguments(self, meta, items):
        return [i for i in items if i is not None]

    def keyword(self, meta, items):
        return _pos(ast.Keyword(str(items[0]), items[1]), meta)

    def call(self, meta, items):
        args = items[1] or []
        positional = [a for a in args if not isinstance(a, ast.Keyword)]
        keywords = [a for a in args if isinstance(a, ast.Keyword)]
        seen_keyword = False
        for a in args:
            if isinstance(a, ast.Keyword):
                seen_keyword = True
            elif seen_keyword:
                raise TdfSyntaxError("a positional argument follows a keyword argument",
                                     hint="put positional arguments first", line=a.line, column=a.column)
        return _pos(ast.Call(items[0], positional, keywords), meta)

    def subscripts(self, meta, items):
        return [i for i in items if i is not None]

    def slice(self, meta, items):
        lower, upper, step = (list(items) + [None, None, None])[:3]
        return _pos(ast.Slice(lower, upper, step), meta)

    def subscript(self, meta, items):
        return _pos(ast.Subscript(items[0], items[1]), meta)

    def attribute(self, meta, items):
        return _pos(ast.Attribute(items[0], str(items[1])), meta)

    # ---- statements
    def var_options(self, meta, items):
        return items[0] or []

    def var_decl(self, meta, items):
        if len(items) == 4:
            options, name, dtype, value = items
        else:
            options, (name, dtype, value) = [], items
        return _pos(ast.VarDecl(str(name), str(dtype) if dtype else None, value, options or []), meta)

    def const_decl(self, meta, items):
        name, dtype, value = items
        return _pos(ast.ConstDecl(str(name), str(dtype) if dtype else None, value), meta)

    def target_list(self, meta, items):
        return [str(i) for i in items if i is not None]

    def assign(self, meta, items):
        return _pos(ast.Assign(items[0], items[1]), meta)

    def aug_assign(self, meta, items):
        return _pos(ast.AugAssign(str(items[0]), str(items[1])[:-1], items[2]), meta)

    def watch_stmt(self, meta, items):
        return _pos(ast.Watch(items[0], str(items[1]) if items[1] else None), meta)

    def reset_stmt(self, meta, items):
        return _pos(ast.Reset(str(items[0])), meta)

    def return_stmt(self, meta, items):
        value = items[0]
        if isinstance(value, list):
            value = value[0] if len(value) == 1 else _pos(ast.TupleDisplay(value), meta)
        return _pos(ast.Return(value), meta)

    def break_stmt(self, meta, items):
        return _pos(ast.Break(), meta)

    def continue_stmt(self, meta, items):
        return _pos(ast.Continue(), meta)

    def pass_stmt(self, meta, items):
        return _pos(ast.Pass(), meta)

    def expect_stmt(self, meta, items):
        return _pos(ast.Expect(items[0], items[1]), meta)

    def expr_stmt(self, meta, items):
        return _pos(ast.ExprStmt(items[0]), meta)

    def elif_clause(self, meta, items):
        return (items[0], items[1])

    def else_clause(self, meta, items):
        return items[0]

    def if_stmt(self, meta, items):
        branches = [(items[0], items[1])]
        orelse = items[-1]
        branches += [b for b in items[2:-1]]
        return _pos(ast.If(branches, orelse), meta)

    def while_stmt(self, meta, items):
        return _pos(ast.While(items[0], items[1]), meta)

    def for_stmt(self, meta, items):
        return _pos(ast.For(items[0], items[1], items[2]), meta)

    def param(self, meta, items):
        return _pos(ast.Param(str(items[0]), items[1]), meta)

    def parameters(self, meta, items):
        return [i for i in items if i is not None]

    def funcdef(self, meta, items):
        return _pos(ast.FuncDef(str(items[0]), items[1] or [], items[2]), meta)

    def decorator(self, meta, items):
        return str(items[0])

    def decorated(self, meta, items):
        func = items[-1]
        func.decorators = list(items[:-1])
        return _pos(func, meta)

    def tape_stmt(self, meta, items):
        return _pos(ast.TapeBlock(str(items[0]), items[1] or [], items[2]), meta)

    def stop_stmt(self, meta, items):
        return _pos(ast.StopRecording(str(items[0]), items[1]), meta)

    def expect_error_stmt(self, meta, items):
        return _pos(ast.ExpectError(str(items[0]), items[1]), meta)


_HINTS = {
    "a block needs ':' at the end of its first line": [
        "if x > 0\n    y = 1\n", "tape t\n    y = 1\n", "def f(x)\n    return x\n",
        "while x < 3\n    x = x + 1\n", "for i in range(3)\n    y = i\n"],
    "the block after ':' must be indented": [
        "if x > 0:\ny = 1\n", "tape t:\ny = x\n", "def f(x):\nreturn x\n"],
    "an opening bracket is never closed": ["y = (x + 1\n", "y = [1, 2\n", "y = f(x\n"],
    "'=' binds a name; compare with '=='": ["if x = 1:\n    y = 1\n", "expect x = 1\n"],
    "two expressions need an operator between them": ["y = x x\n", "y = 2 x\n"],
}

_TOKEN_WORDS = {"_NEWLINE": "end of line", "_INDENT": "an indented block", "_DEDENT": "end of block",
                "$END": "end of file", "NAME": "a name", "NUMBER": "a number", "STRING": "a string"}


def _describe(expected) -> str:
    words = sorted({_TOKEN_WORDS.get(t, None) or _literal(t) for t in expected})
    return ", ".join(w for w in words if w)


def _literal(terminal: str) -> str:
    try:
        pattern = _lark().get_terminal(terminal).pattern
    except (KeyError, AttributeError):
        return terminal
    return f"'{pattern.value}'" if pattern.type == "str" else terminal


def _syntax_error(err: UnexpectedInput, source: str) -> TdfSyntaxError:
    hint = None
    try:
        hint = err.match_examples(_lark().parse, _HINTS, use_accepts=True)
    except Exception:  # the hint is a bonus; never let it hide the real error
        hint = None
    if isinstance(err, UnexpectedCharacters):
        char = source[err.pos_in_stream] if err.pos_in_stream < len(source) else ""
        message = f"unexpected character {char!r}"
    elif isinstance(err, UnexpectedEOF):
        message = "unexpected end of file"
    else:
        tok = err.token
        if tok.type == "$END":
            message = "unexpected end of file"
        elif tok.type in ("_NEWLINE", "_DEDENT"):
            message = "unexpected end of line"
        elif tok.type == "_INDENT":
            message = "unexpected indentation"
        else:
            message = f"unexpected {str(tok)!r}"
        expected = getattr(err, "accepts", None) or err.expected
        if expected and len(expected) <= 8:
            message += f"; expected {_describe(expected)}"
    line, column = err.line, err.column
    if isinstance(err, UnexpectedToken) and err.token.type in ("_NEWLINE", "_DEDENT", "$END"):
        # Point just past the last real character of the line that was cut short.
        prev = source[: err.token.start_pos].rstrip("\n") if err.token.start_pos is not None else ""
        if prev:
            line = prev.count("\n") + 1
            column = len(prev.split("\n")[-1].split("#")[0].rstrip()) + 1
    return TdfSyntaxError(message, hint=hint, line=line if line and line > 0 else None,
                          column=column if column and column > 0 else None)


def parse(source: str, filename: str = "<input>") -> ast.Program:
    text = source if source.endswith("\n") else source + "\n"
    try:
        tree = _lark().parse(text)
        body = _ToAst().transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, TdfError):
            raise e.orig_exc from None
        raise
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None
    except DedentError:
        line = _dedent_line(text)
        raise TdfSyntaxError("this line's indentation matches no enclosing block",
                             hint="indent it like a line of the block it belongs to", line=line, column=1) from None
    return ast.Program(body, source=source, filename=filename, line=1, column=1)


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
