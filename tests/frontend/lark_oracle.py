"""The test oracle: grammar/tdf.lark parsed by Lark itself, the tree made the AST by a transformer, and Lark's
failures worded by tapecli/frontend/syntaxerrors.py. tapecli never imports Lark: fastparse.py parses valid
programs, and lalr.py runs the grammar's LALR tables (tapecli/frontend/lalr_tables.py, which this module
generates) where fastparse.py stops. The tests compare both with this: the AST, positions included, and every
syntax error's message, hint, line and column.

    python tests/frontend/lark_oracle.py      # regenerate tapecli/frontend/lalr_tables.py after a grammar edit
"""
from __future__ import annotations

import functools
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError
from lark.indenter import DedentError, Indenter
from lark.parsers.lalr_analysis import Shift

from tapecli.errors import TdfError, TdfSyntaxError
from tapecli.frontend import ast, forms
from tapecli.frontend.grammar import grammar_text
from tapecli.frontend.lalr import soft_keywords

OPTIONS = {"parser": "lalr", "lexer": "basic", "propagate_positions": True, "maybe_placeholders": True}
TABLES = Path(__file__).resolve().parents[2] / "tapecli" / "frontend" / "lalr_tables.py"


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

    def process(self, stream):
        """The indenter's tokens, with a soft keyword that begins its statement made that keyword (the driver's
        post-lexer, over Lark's tokens)."""
        yield from soft_keywords(super().process(stream),
                                 lambda tok, type_: Token.new_borrow_pos(type_, tok.value, tok))


@functools.lru_cache(maxsize=None)
def lark() -> Lark:
    return Lark(grammar_text(), postlex=TdfIndenter(), **OPTIONS)


def _pos(node, meta):
    if not getattr(meta, "empty", True):
        node.line, node.column = meta.line, meta.column
        node.end_line, node.end_column = meta.end_line, meta.end_column
        node.start, node.end = meta.start_pos, meta.end_pos
    return node


def _meta(meta) -> dict:
    return {"line": meta.line, "column": meta.column, "end_line": meta.end_line, "end_column": meta.end_column,
            "start": meta.start_pos, "end": meta.end_pos}


def _tok_pos(node, tok: Token):
    node.line, node.column = tok.line, tok.column
    node.end_line, node.end_column = tok.end_line, tok.end_column
    node.start, node.end = tok.start_pos, tok.end_pos
    return node


def _statements(items) -> list:
    """A block's statements: `a; b` gives two, a statement that binds nothing at run time (``x: int``) none."""
    out = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        elif item is not None:
            out.append(item)
    return out


_field = forms.field_parser(lambda text: parse_body(text))     # (its f-string fields, by this parser)


def _operands(op):
    """A rule whose operator tokens the grammar drops (``a | b | c``): the operands chained as ``arith`` does."""
    def chain(self, meta, items):
        return self.arith(meta, [items[0], *(part for right in items[1:] for part in (op, right))])
    return chain


def _no(what):
    def refuse(self, meta, items):
        raise forms.unsupported(what, meta)
    return refuse


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> ast nodes. Method names are the grammar's rule names and aliases."""

    def start(self, meta, items):
        return _statements(items)

    def suite(self, meta, items):
        return _statements(items) or [_pos(ast.Pass(), meta)]

    # ---- atoms
    def name(self, meta, items):
        return _tok_pos(ast.Name(str(items[0])), items[0])

    def number(self, meta, items):
        tok = items[0]
        return _tok_pos(ast.Number(forms.number(str(tok), tok.line, tok.column)), tok)

    def string(self, meta, items):
        return forms.string([(str(t), t.line, t.column, t.start_pos) for t in items], _field, **_meta(meta))

    def true(self, meta, items):
        return _pos(ast.Constant(True), meta)

    def false(self, meta, items):
        return _pos(ast.Constant(False), meta)

    def none(self, meta, items):
        return _pos(ast.Constant(None), meta)

    def ellipsis(self, meta, items):
        return _pos(ast.Constant(Ellipsis), meta)

    def items(self, meta, items):
        return [i for i in items if i is not None]

    def list_display(self, meta, items):
        return _pos(ast.ListDisplay(items[0] or []), meta)

    def paren(self, meta, items):
        """A parenthesised expression is its inner node, spanning the parentheses."""
        return _pos(items[0], meta)

    def tuple_items(self, meta, items):
        return [items[0]] + (items[1] or [])

    def tuple_display(self, meta, items):
        return _pos(ast.TupleDisplay(items[0] or []), meta)

    def tuple_bare(self, meta, items):
        return _pos(ast.TupleDisplay([i for i in items if i is not None]), meta)

    def dict_items(self, meta, items):
        return [i for i in items if i is not None]

    def dict_item(self, meta, items):
        return (items[0], items[1])

    def dict_display(self, meta, items):
        return _pos(ast.DictDisplay(items[0] or []), meta)

    set_display = _no("a set")
    set_comp = _no("a set comprehension")

    def double_starred_entry(self, meta, items):
        return (None, items[0])         # {**mapping, ...}: its entries (DictDisplay's None key)

    def double_starred_argument(self, meta, items):
        return _pos(ast.Keyword(None, items[0]), meta)
    yield_expr = _no("yield")
    await_expr = _no("await")
    async_comp_for = _no("async comprehensions")

    def comp_for(self, meta, items):
        return forms.generator(items[0], items[1], list(items[2:]))

    def list_comp(self, meta, items):
        return _pos(ast.Comprehension("list", items[0], None, list(items[1:])), meta)

    def generator(self, meta, items):
        return _pos(ast.Comprehension("generator", items[0], None, list(items[1:])), meta)

    generator_argument = generator

    def dict_comp(self, meta, items):
        key, value = items[0]
        return _pos(ast.Comprehension("dict", value, key, list(items[1:])), meta)

    def star_expr(self, meta, items):
        return _pos(ast.Starred(items[0]), meta)

    starred = star_expr

    # ---- operators
    def if_exp(self, meta, items):
        body, test, orelse = items
        return _pos(ast.IfExp(test, body, orelse), meta)

    def lambda_param(self, meta, items):
        return _pos(ast.Param(str(items[0]), items[1]), meta)

    def param(self, meta, items):
        return _pos(ast.Param(str(items[0]), items[2]), meta)

    def lambda_params(self, meta, items):
        return forms.parameters([i for i in items if i is not None])

    parameters = lambda_params

    def star_param(self, meta, items):
        return _pos(ast.Param(str(items[0]) if items and items[0] is not None else None, None, "*"), meta)

    def double_star_param(self, meta, items):
        return _pos(ast.Param(str(items[0]), None, "**"), meta)

    def slash_param(self, meta, items):
        return _pos(ast.Param(None, None, "/"), meta)

    def lambdef(self, meta, items):
        return _pos(ast.Lambda(items[0] or [], items[1]), meta)

    lambdef_nocond = lambdef

    def or_test(self, meta, items):
        return _pos(ast.BoolOp("or", list(items)), meta)

    def and_test(self, meta, items):
        return _pos(ast.BoolOp("and", list(items)), meta)

    def not_expr(self, meta, items):
        return _pos(ast.Not(items[0]), meta)

    def comp_op(self, meta, items):
        return " ".join(str(t) for t in items)

    def comparison(self, meta, items):
        return _pos(ast.Compare(items[0], list(items[1::2]), list(items[2::2])), meta)

    def add_op(self, meta, items):
        return str(items[0])

    mul_op = shift_op = add_op

    def arith(self, meta, items):
        forms.check_chain(len(items) // 2, meta)
        node = items[0]
        for op, right in zip(items[1::2], items[2::2]):
            node = ast.BinOp(op, node, right, line=node.line, column=node.column, start=node.start,
                             end_line=right.end_line, end_column=right.end_column, end=right.end)
        return node

    term = arith

    expr, xor_expr, and_expr = _operands("|"), _operands("^"), _operands("&")

    def invert(self, meta, items):
        return _pos(ast.UnaryOp("~", items[0]), meta)

    def shift_expr(self, meta, items):
        raise forms.unsupported(items[1], meta)

    def unary(self, meta, items):
        return _pos(ast.UnaryOp(items[0], items[1]), meta)

    def power(self, meta, items):
        return _pos(ast.BinOp("**", items[0], items[1]), meta)

    def arguments(self, meta, items):
        return [i for i in items if i is not None]

    def keyword(self, meta, items):
        return _pos(ast.Keyword(str(items[0]), items[1]), meta)

    def call(self, meta, items):
        return forms.call(items[0], items[1] or [], **_meta(meta))

    def subscripts(self, meta, items):
        return [i for i in items if i is not None]

    def slice(self, meta, items):
        lower, upper, step = (list(items) + [None, None, None])[:3]
        return _pos(ast.Slice(lower, upper, step), meta)

    def subscript(self, meta, items):
        return _pos(ast.Subscript(items[0], items[1]), meta)

    def attribute(self, meta, items):
        return forms.attribute(items[0], str(items[1]), **_meta(meta))

    # ---- TDF's statements
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

    def watch_items(self, meta, items):
        return [i for i in items if i is not None]

    def watch_stmt(self, meta, items):
        return _pos(ast.Watch(items[0], str(items[1]) if items[1] else None), meta)

    def reset_stmt(self, meta, items):
        return _pos(ast.Reset(str(items[0])), meta)

    def expect_stmt(self, meta, items):
        return _pos(ast.Expect(items[0], items[1]), meta)

    def tape_stmt(self, meta, items):
        return _pos(ast.TapeBlock(str(items[0]), items[1] or [], items[2]), meta)

    def stop_stmt(self, meta, items):
        return _pos(ast.StopRecording(str(items[0]), items[1]), meta)

    def expect_error_stmt(self, meta, items):
        return _pos(ast.ExpectError(str(items[0]), items[1]), meta)

    # ---- Python's statements
    def expr_stmt(self, meta, items):
        return _pos(ast.ExprStmt(items[0]), meta)

    def assign(self, meta, items):
        return forms.assignment(list(items[:-1]), items[-1], **_meta(meta))

    def ann_assign(self, meta, items):
        node, _annotation, value = items
        forms.target(node)
        return None if value is None else forms.assignment([node], value, **_meta(meta))

    def aug_assign(self, meta, items):
        return forms.aug_assignment(items[0], str(items[1])[:-1], items[2], **_meta(meta))

    def return_stmt(self, meta, items):
        return _pos(ast.Return(items[0]), meta)

    def break_stmt(self, meta, items):
        return _pos(ast.Break(), meta)

    def continue_stmt(self, meta, items):
        return _pos(ast.Continue(), meta)

    def pass_stmt(self, meta, items):
        return _pos(ast.Pass(), meta)

    def del_stmt(self, meta, items):
        return _pos(ast.Delete([forms.target(t) for t in forms.tuple_items(items[0])]), meta)

    def assert_stmt(self, meta, items):
        return _pos(ast.Assert(items[0], items[1]), meta)

    def dotted_name(self, meta, items):
        return [str(i) for i in items]

    def dotted_as_name(self, meta, items):
        return forms.import_module(items[0], str(items[1]) if items[1] else None)

    def import_stmt(self, meta, items):
        return _pos(ast.Import(list(items)), meta)

    def import_name(self, meta, items):
        return (str(items[0]), str(items[1]) if items[1] else None)

    def import_names(self, meta, items):
        return [i for i in items if i is not None]

    def relative(self, meta, items):
        return True

    def from_import(self, meta, items):
        relative = items[0] is True
        rest = list(items[1:] if relative else items)
        dotted, names = (rest + [None, None])[:2]
        return _pos(ast.Import(forms.import_from(relative, dotted, names, meta)), meta)

    global_stmt = _no("global")
    nonlocal_stmt = _no("nonlocal")
    raise_stmt = _no("raise")
    try_stmt = _no("try/except")

    def async_stmt(self, meta, items):
        raise forms.unsupported("async def, async for and async with", meta)

    def elif_clause(self, meta, items):
        return (items[0], items[1])

    def else_clause(self, meta, items):
        return items[0]

    def if_stmt(self, meta, items):
        branches = [(items[0], items[1])] + list(items[2:-1])
        return _pos(ast.If(branches, items[-1]), meta)

    def while_stmt(self, meta, items):
        if items[2] is not None:
            raise forms.unsupported("while ... else", meta)
        return _pos(ast.While(items[0], items[1]), meta)

    def for_stmt(self, meta, items):
        return forms.for_statement(items[0], items[1], items[2], items[3], **_meta(meta))

    def funcdef(self, meta, items):
        return _pos(ast.FuncDef(str(items[0]), items[1] or [], items[3], []), meta)

    def classdef(self, meta, items):
        args = items[1] or []
        if any(isinstance(a, (ast.Keyword, ast.Starred)) for a in args):
            raise forms.unsupported("a class keyword (metaclass=...)", meta)
        return _pos(ast.ClassDef(str(items[0]), args, items[2]), meta)

    def decorator(self, meta, items):
        return items[0][-1]

    def decorated(self, meta, items):
        return _pos(forms.decorated(items[-1], list(items[:-1]), meta), meta)

    def with_item(self, meta, items):
        return (items[0], forms.target(items[1]) if items[1] is not None else None)

    def with_stmt(self, meta, items):
        return _pos(ast.With(list(items[:-1]), items[-1]), meta)


def parse_body(text: str) -> list:
    """The statements of ``text`` (which ends with a newline) as Lark parses them; the TdfSyntaxError it reports
    if it is not a program: Lark's failure (where, in which state, what it expected) worded by syntaxerrors.py."""
    try:
        tree = lark().parse(text)
        _check_depth(tree)
        return _ToAst().transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, TdfError):
            raise e.orig_exc from None
        raise
    except (UnexpectedInput, DedentError) as e:
        from tapecli.frontend import syntaxerrors
        raise syntaxerrors.syntax_error(failure(e), text, _example_failures()) from None


def failure(err):
    """Lark's exception as lalr.py's Failure."""
    from tapecli.frontend.lalr import Failure
    if isinstance(err, DedentError):
        return Failure("dedent")
    state = (len(err.state.state_stack), err.state.position) if getattr(err, "state", None) is not None else None
    if isinstance(err, UnexpectedCharacters):
        return Failure("character", state, pos=err.pos_in_stream, line=err.line, column=err.column)
    assert isinstance(err, UnexpectedToken), err
    return Failure("token", state, err.token, set(err.expected), err.accepts)


@functools.lru_cache(maxsize=1)
def _example_failures() -> list:
    from tapecli.frontend import syntaxerrors
    out = []
    for hint, example in syntaxerrors.EXAMPLES:
        try:
            lark().parse(example)
            out.append((hint, None))
        except (UnexpectedInput, DedentError) as e:
            out.append((hint, failure(e)))
        except TdfSyntaxError:
            out.append((hint, None))
    return out


# The transformer recurses once per level of the parse tree (through C: past the C stack, a crash). Brackets and
# blocks are bounded before parsing and operator chains are flat; a chain of postfixes (x[0][0]..., x.T.T...) is not.
MAX_TREE_DEPTH = 2 * forms.MAX_CHAIN


def _check_depth(tree) -> None:
    """A parse tree deeper than MAX_TREE_DEPTH is a SyntaxError at its deepest known line (walked without recursion)."""
    stack = [(tree, 1, 1)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node.meta, "line", line) if not node.meta.empty else line
        if depth > MAX_TREE_DEPTH:
            raise TdfSyntaxError("this expression nests too deeply", hint="split it with intermediate names", line=line,
                                 column=1)
        stack.extend((c, depth + 1, line) for c in node.children if hasattr(c, "children"))


# ---------------------------------------------------------------- the tables

def tables_source() -> str:
    """tapecli/frontend/lalr_tables.py's text for the grammar: Lark's LALR(1) tables and its lexer's terminals,
    the states numbered in the order a breadth-first walk from the start state meets them (Lark's own numbering
    changes with the hash seed)."""
    parser = Lark(grammar_text(), **OPTIONS)
    table = parser.parser.parser._parse_table
    lexer = parser.parser.lexer
    scanner = lexer.scanner
    start, end = table.start_states["start"], table.end_states["start"]
    order = [start]
    number = {start: 0}
    for state in order:
        for symbol, (action, target) in sorted(table.states[state].items()):
            if action is Shift and target not in number:
                number[target] = len(order)
                order.append(target)
    assert len(order) == len(table.states)
    reductions, lookaheads, shifts, states, gotos = {}, {}, {}, [], {}
    for state in order:
        row, groups = {}, {}
        for symbol, (action, target) in sorted(table.states[state].items()):
            if action is not Shift:
                groups.setdefault((str(target.origin.name), len(target.expansion)), []).append(symbol)
            elif symbol.isupper():
                row[symbol] = number[target]
            else:
                gotos.setdefault(symbol, {})[number[state]] = number[target]
        key = tuple(row.items())
        shifts.setdefault(key, len(shifts))
        states.append((shifts[key], tuple(sorted((reductions.setdefault(r, len(reductions)),
                                                  lookaheads.setdefault(tuple(ts), len(lookaheads)))
                                                 for r, ts in groups.items()))))
    goto_rows = {}
    for symbol, targets in sorted(gotos.items()):
        counts = {}
        for target in targets.values():
            counts[target] = counts.get(target, 0) + 1
        default = max(sorted(counts), key=counts.get)
        goto_rows[symbol] = (default, {s: t for s, t in targets.items() if t != default})
    keywords = {t.pattern.value: t.name for cb in lexer.callback.values() for t in cb.scanner.terminals}
    assert set(lexer.callback) == {"NAME"}, lexer.callback
    literals = {t.name: t.pattern.value for t in parser.terminals if t.pattern.type == "str"}
    terminals = [(t.name, t.pattern.to_regexp()) for t in scanner.terminals]
    out = ['"""grammar/tdf.lark\'s LALR(1) tables and its lexer\'s terminals, as Lark computes them. Generated by',
           "`python tests/frontend/lark_oracle.py` (tests/frontend/test_lalr.py fails where this differs from what",
           'the grammar gives). Data only: lalr.py runs it."""',
           "",
           "# The lexer's terminals in the order Lark's basic lexer tries them (the first that matches is taken)",
           "TERMINALS = (",
           *(f"    {t!r},{'  # noqa: E501' if len(repr(t)) > 120 else ''}" for t in terminals),
           ")",
           "# A NAME whose whole text is a keyword is that keyword's terminal",
           _assignment("KEYWORDS", dict(sorted(keywords.items()))),
           _assignment("IGNORED", tuple(sorted(lexer.ignore_types))),
           "# The terminals that are one string",
           _assignment("LITERALS", dict(sorted(literals.items()))),
           f"START, END = {number[start]}, {number[end]}",
           "# Each reduction: the nonterminal it makes and how many symbols it pops",
           _assignment("REDUCTIONS", tuple(reductions)),
           "# Rows of shifts on terminals ({terminal: target state}), each shared by the states that have it",
           _assignment("SHIFTS", tuple(dict(key) for key in shifts)),
           "# Sets of lookahead terminals on which a state reduces",
           _assignment("LOOKAHEADS", tuple(lookaheads)),
           "# Each state: its row of SHIFTS, and its reductions, each with its set of LOOKAHEADS",
           _assignment("STATES", tuple(states)),
           "# Each nonterminal's gotos: (the target from most states, {state: target} from the others)",
           _assignment("GOTOS", goto_rows)]
    return "\n".join(out) + "\n"


def _assignment(name: str, value, width: int = 120) -> str:
    """``name = value``, the value's repr broken after its commas into lines of at most ``width`` characters."""
    text = f"{name} = {value!r}"
    lines, line = [], ""
    for piece in text.split(", "):
        if line and len(line) + len(piece) + 2 > width:
            lines.append(line + ",")
            line = "    " + piece
        else:
            line = f"{line}, {piece}" if line else piece
    return "\n".join(lines + [line])


if __name__ == "__main__":
    TABLES.write_text(tables_source())
    print(f"wrote {TABLES}")
