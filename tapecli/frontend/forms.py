"""The AST of the grammar's Python forms, built by fastparse.py (and the same way by the tests' Lark oracle,
tests/frontend/lark_oracle.py): targets, assignments, loops, calls, strings and f-strings, numbers, imports, and
the errors that name a form tapecli does not run."""
from __future__ import annotations

from tapecli.errors import TdfError, TdfSyntaxError
from tapecli.frontend import ast

SUPPORTED_FORMS_HINT = "tapecli runs the Python forms of docs/spec/LANGUAGE.md §11"
_OPERATORS = {"&": "the & operator", "|": "the | operator", "^": "the ^ operator", "<<": "the << operator",
              ">>": "the >> operator", "~": "the ~ operator"}
BINARY_OPERATORS = frozenset(("+", "-", "*", "/", "//", "%", "**", "@"))
# Operators in one chain (a + b + c ...): each one nests the AST a level deeper, and running it recurses that deep.
# CPython's own compiler stops near 3,000.
MAX_CHAIN = 2500


class ChainTooLong(TdfSyntaxError):
    """check_chain's error: final where fastparse.py meets it (the tests' Lark oracle says the same, after seconds
    of parsing the chain)."""


def check_chain(length: int, at) -> None:
    if length > MAX_CHAIN:
        raise ChainTooLong(f"this expression chains more than {MAX_CHAIN:,} operators",
                             hint="split it with intermediate names", line=at.line or None, column=at.column or None)


def unsupported(what: str, at) -> TdfSyntaxError:
    """The error for a form the grammar reads and tapecli does not run; ``at`` has a line and column."""
    what = _OPERATORS.get(what, what)
    return TdfSyntaxError(f"{what} is not supported in tapecli programs", hint=SUPPORTED_FORMS_HINT,
                          line=getattr(at, "line", None) or None, column=getattr(at, "column", None) or None)


# Class decorators that return the class as it is: Keras's registration for its saving (which tapecli does not do)
IDENTITY_CLASS_DECORATORS = frozenset({"register_keras_serializable"})


def decorated(definition, decorators: list, at):
    """A definition under its decorators (each its dotted name's last part): a function keeps them; a class
    takes only those that return it unchanged."""
    if isinstance(definition, ast.FuncDef):
        definition.decorators = decorators
        return definition
    if not all(name in IDENTITY_CLASS_DECORATORS for name in decorators):
        raise unsupported("a class decorator", at)
    return definition


def position(node) -> dict:
    return {f: getattr(node, f) for f in ast.POSITION_FIELDS}


# ---------------------------------------------------------------- targets and statements
def target(node):
    """An assignment, loop or del target: a name, attribute, subscript, or a tuple/list of targets."""
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return node
    if isinstance(node, (ast.TupleDisplay, ast.ListDisplay)):
        node.items = [target(item) for item in node.items]
        return node
    if isinstance(node, ast.Starred):
        raise unsupported("a starred assignment target", node)
    raise TdfSyntaxError("this expression cannot be assigned to", hint="assign to a name, an attribute, "
                         "an item (x[i]) or a tuple of them", line=node.line or None, column=node.column or None)


def assignment(targets: list, value, **pos):
    return ast.Assign([target(t) for t in targets], value, **pos)


def aug_assignment(node, op: str, value, **pos):
    if op not in BINARY_OPERATORS and op not in ("&", "|", "^"):      # (x &= mask: the operators' own)
        raise unsupported(op, pos_of(pos))
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        target(node)
        raise unsupported("an augmented assignment to a tuple", node)
    return ast.AugAssign(node, op, value, **pos)


def for_statement(node, iterable, body, orelse, **pos):
    if orelse is not None:
        raise unsupported("for ... else", pos_of(pos))
    return ast.For(target(node), iterable, body, **pos)


def generator(node, iterable, conditions: list):
    return (target(node), iterable, conditions)


def tuple_items(node) -> list:
    """The items of a bare tuple (``del a, b``), or the one item."""
    return node.items if isinstance(node, ast.TupleDisplay) else [node]


def pos_of(pos: dict):
    return ast.Pass(**pos)


def attribute(value, name: str, **pos):
    # (a module's version; a class's name, which type(x) answers)
    if name.startswith("__") and name not in ("__init__", "__call__", "__version__", "__name__"):
        raise TdfSyntaxError(f"the attribute {name} is not accessible in tapecli programs",
                             hint="programs cannot reach Python objects", line=pos["line"], column=pos["column"])
    return ast.Attribute(value, name, **pos)


def call(func, args: list, **pos):
    positional, keywords = [], []
    for a in args:
        if isinstance(a, ast.Keyword):
            keywords.append(a)
        elif keywords and not isinstance(a, ast.Starred):
            raise TdfSyntaxError("a positional argument follows a keyword argument",
                                 hint="put positional arguments first", line=a.line, column=a.column)
        else:
            positional.append(a)
    return ast.Call(func, positional, keywords, **pos)


def parameters(params: list) -> list:
    """A definition's parameters as the parser reads them (Param kinds "", "*", "**", and the markers: a
    bare ``*`` is a Param "*" named None, ``/`` a Param "/"), made what the interpreter binds: the markers
    dropped, the parameters before ``/`` "pos", those after ``*`` or ``*args`` "kw"; Python's rules checked."""
    out, keyword_only, seen, defaulted = [], False, set(), False
    for i, p in enumerate(params):
        if p.kind == "/":
            if keyword_only or any(q.kind == "pos" for q in out) or not out:
                raise TdfSyntaxError("/ must follow at least one parameter and come before *", line=p.line, column=p.column)
            for q in out:
                q.kind = "pos"
            continue
        if p.name is not None and p.name in seen:
            raise TdfSyntaxError(f"duplicate argument '{p.name}' in function definition", line=p.line, column=p.column)
        seen.add(p.name)
        if p.kind == "**":
            if i != len(params) - 1:
                raise TdfSyntaxError("**kwargs must be the last parameter", line=p.line, column=p.column)
        elif p.kind == "*":
            if keyword_only:
                raise TdfSyntaxError("* may appear only once in a parameter list", line=p.line, column=p.column)
            keyword_only = True
            if p.name is None:
                if i == len(params) - 1 or params[i + 1].kind == "**":
                    raise TdfSyntaxError("named arguments must follow bare *", line=p.line, column=p.column)
                continue
        elif keyword_only:
            p.kind = "kw"
        elif p.default is not None:
            defaulted = True
        elif defaulted:
            raise TdfSyntaxError("parameter without a default follows parameter with a default",
                                 line=p.line, column=p.column)
        out.append(p)
    return out


def import_module(dotted: list[str], alias: str | None) -> tuple[str, str]:
    """``import a.b as c`` binds c to a.b; ``import a.b`` binds a."""
    return (".".join(dotted), alias) if alias else (dotted[0], dotted[0])


def import_from(relative: bool, dotted: list[str] | None, names: list | None, at) -> list:
    if relative or dotted is None:
        raise unsupported("a relative import", at)
    if names is None:
        raise unsupported("import *", at)
    module = ".".join(dotted)
    return [(f"{module}.{name}", alias or name) for name, alias in names]


# ---------------------------------------------------------------- literals
def number(text: str, line: int, column: int):
    if text[-1] in "jJ":
        raise TdfSyntaxError("complex numbers are not supported in tapecli programs",
                             hint="tapecli's dtypes are float32 float64 int32 int64 bool", line=line, column=column)
    return ast.number_value(text, line, column)


_PREFIX_CHARS = frozenset("rRbBuUfF")


def split_string_token(text: str) -> tuple[str, str, str]:
    """(prefix in lower case, quote, body) of a STRING token."""
    i = 0
    while text[i] in _PREFIX_CHARS:
        i += 1
    quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else text[i]
    return text[:i].lower(), quote, text[i + len(quote):len(text) - len(quote)]


def _decode(prefix: str, quote: str, body: str) -> str:
    if "\\" not in body:
        return body
    import ast as python_ast          # Python's own reading of escapes (\n, \x41, \N{...}), raw strings included
    return python_ast.literal_eval(prefix.replace("f", "") + quote + body + quote)


def string(tokens: list, parse_field, **pos):
    """STRING tokens in a row (Python joins them): a String, or an FString if one is an f-string.
    ``tokens`` are (text, line, column, start) of each; ``parse_field(text, line, column, start)`` parses
    an f-string field's expression, positioned in the source."""
    parts: list = []
    formatted = False
    for text, line, column, start in tokens:
        prefix, quote, body = split_string_token(text)
        if "b" in prefix:
            raise unsupported("a bytes literal", ast.Pass(line=line, column=column))
        if "f" in prefix:
            formatted = True
            offset = len(prefix) + len(quote)
            parts.extend(_fstring_parts(prefix, quote, body, _Source(text, line, column, start, offset),
                                        parse_field))
        else:
            parts.append(_decode(prefix, quote, body))
    if not formatted:
        return ast.String("".join(parts), **pos)
    merged: list = []
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if merged and isinstance(merged[-1], ast.String):
                merged[-1].value += part
                continue
            part = ast.String(part, **pos)
        merged.append(part)
    return ast.FString(merged, **pos)


class _Source:
    """Where an f-string token's body lies in the source, to place its fields' expressions."""
    __slots__ = ("text", "line", "column", "start", "offset")

    def __init__(self, text, line, column, start, offset):
        self.text, self.line, self.column, self.start, self.offset = text, line, column, start, offset

    def at(self, index: int) -> tuple[int, int, int]:
        """(line, column, start) of the body's character ``index``."""
        k = self.offset + index
        before = self.text[:k]
        newlines = before.count("\n")
        column = k - before.rfind("\n") if newlines else self.column + k
        return self.line + newlines, column, self.start + k


def _fstring_parts(prefix, quote, body, source: _Source, parse_field, base: int = 0) -> list:
    parts: list = []
    literal: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c in "{}":
            if body.startswith(c, i + 1):
                literal.append(c)
                i += 2
                continue
            if c == "}":
                raise _fstring_error("a single '}' is not allowed in an f-string", source, base + i)
            parts.append(_decode(prefix, quote, "".join(literal)))
            literal = []
            i = _field(prefix, quote, body, i + 1, source, parse_field, parts, base)
            continue
        literal.append(c)
        i += 1
    parts.append(_decode(prefix, quote, "".join(literal)))
    return parts


def _field(prefix, quote, body, i, source, parse_field, parts, base) -> int:
    """Parse the field starting after '{' at ``i``; append its parts; the index after its '}'."""
    end = _field_end(body, i, "!:}=", source, base)
    text = body[i:end]
    conversion = spec = None
    self_documenting = None
    if body[end] == "=":
        self_documenting = body[i:end + 1]
        end = _field_end(body, end + 1, "!:}", source, base)
    if body[end] == "!":
        conversion = body[end + 1:end + 2]
        if conversion not in ("r", "s", "a"):
            raise _fstring_error("an f-string conversion is !r, !s or !a", source, base + end)
        end += 2
    if end < len(body) and body[end] == ":":
        spec_end = _spec_end(body, end + 1, source, base)
        spec_parts = _fstring_parts(prefix, quote, body[end + 1:spec_end], source, parse_field, base + end + 1)
        spec = ast.FString([p if not isinstance(p, str) else ast.String(p) for p in spec_parts if p != ""])
        end = spec_end
    if end >= len(body) or body[end] != "}":
        raise _fstring_error("an f-string field is missing its '}'", source, base + i)
    if not text.strip():
        raise _fstring_error("an f-string field needs an expression", source, base + i)
    line, column, start = source.at(base + i)
    value = parse_field(text, line, column, start)
    if self_documenting is not None:
        parts.append(self_documenting)
        if conversion is None and spec is None:
            conversion = "r"
    parts.append(ast.FormattedValue(value, conversion, spec, **position(value)))
    return end + 1


def _field_end(body, i, stops, source, base) -> int:
    """The index of the first of ``stops`` at bracket depth 0 and outside quotes ('!=', '==', '<=', '>='
    are operators, not a conversion or '=')."""
    depth, n = 0, len(body)
    while i < n:
        c = body[i]
        if c in "'\"":
            close = body.find(c, i + 1)
            if close < 0:
                break
            i = close + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
        elif depth == 0 and c in stops:
            two = body[i:i + 2]
            if c == "!" and two == "!=" or c == "=" and (two == "==" or body[i - 1:i] in ("=", "!", "<", ">")):
                i += 2 if two in ("!=", "==") else 1
                continue
            return i
        i += 1
    raise _fstring_error("an f-string field is missing its '}'", source, base + i - 1)


def _spec_end(body, i, source, base) -> int:
    depth = 0
    while i < len(body):
        c = body[i]
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    raise _fstring_error("an f-string field is missing its '}'", source, base + i - 1)


def _fstring_error(message, source: _Source, index: int) -> TdfSyntaxError:
    line, column, _ = source.at(max(index, 0))
    return TdfSyntaxError(message, line=line, column=column)


def field_parser(parse_body):
    """``string``'s ``parse_field`` for a parser whose ``parse_body(text)`` gives the statements of ``text``: an
    f-string field's expression, parsed as a statement of its own and placed in the source."""
    def parse_field(text: str, line: int, column: int, start: int):
        try:
            body = parse_body(text + "\n")
        except TdfError as e:
            raise field_error(e, line, column) from None
        if len(body) != 1 or not isinstance(body[0], ast.ExprStmt):
            raise TdfSyntaxError("an f-string field holds one expression", line=line, column=column)
        return place(body[0].value, line, column, start)
    return parse_field


def field_error(error: TdfError, line: int, column: int) -> TdfError:
    """An error raised while parsing an f-string field's text (positions from 1:1), moved to where the field is."""
    if error.line is not None:
        if error.line == 1:
            error.column = None if error.column is None else error.column + column - 1
            error.end_column = None if error.end_column is None else error.end_column + column - 1
        error.line += line - 1
    return error


def place(node, line: int, column: int, start: int):
    """Move a node parsed from an f-string field's text (positions from 1:1) to where the field is."""
    for sub in ast.walk(node):
        if sub.line == 1:
            sub.column += column - 1
        if sub.end_line == 1:
            sub.end_column += column - 1
        sub.line += line - 1
        sub.end_line += line - 1
        sub.start += start
        sub.end += start
    return node
