"""The TDF abstract syntax tree. Every node keeps its source position.

Plain classes with ``__slots__`` (a dataclass costs ~1 ms to create at import, and start-up
matters). Each class lists its children in ``_fields``, in constructor order; the source
position is keyword-only, as ``line=, column=, end_line=, end_column=, start=, end=``.
Nodes compare equal field by field, as dataclasses do.
"""
from __future__ import annotations

import re

from tapecli.errors import TdfSyntaxError

POSITION_FIELDS = ("line", "column", "end_line", "end_column", "start", "end")


class Node:
    __slots__ = POSITION_FIELDS
    _fields: tuple[str, ...] = ()

    def __init__(self, *, line=0, column=0, end_line=0, end_column=0, start=0, end=0):
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column
        self.start = start          # character offsets into the source, for quoting expressions
        self.end = end

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in POSITION_FIELDS + self._fields)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None     # mutable, compared by value: unhashable, as a dataclass

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(
            f"{f}={getattr(self, f)!r}" for f in POSITION_FIELDS + self._fields) + ")"

# ---------------------------------------------------------------- expressions


class Name(Node):
    # id: str
    __slots__ = _fields = ("id",)

    def __init__(self, id, **position):
        self.id = id
        Node.__init__(self, **position)


INT64_MAX = 2 ** 63 - 1
_BASES = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}


def number_value(text: str, line: int, column: int) -> int | float:
    """A NUMBER token's value. An integer literal must fit int64, the widest integer dtype; a float literal
    out of range is inf, as in Python and TensorFlow. Python's forms: 0x1f, 0o17, 0b101, 1_000."""
    if "_" in text:
        text = text.replace("_", "")
    if text[:2] in _BASES:
        value = int(text, _BASES[text[:2]])
        # (a huge value has no decimal text: Python refuses to write one of over 4,300 digits)
        digits = str(value) if value <= INT64_MAX else "9" * 20
    elif "." in text or "e" in text or "E" in text:
        return float(text)
    else:
        digits = text.lstrip("0")
    if len(digits) > 19 or (digits and int(digits) > INT64_MAX):
        raise TdfSyntaxError(f"the integer literal {text if len(text) <= 24 else text[:20] + '…'} is out of range for "
                            "int64", hint="write a float literal (e.g. 1e30) for a large number",
                            line=line, column=column)
    return int(digits or "0")


class Number(Node):
    # value: int | float
    __slots__ = _fields = ("value",)

    def __init__(self, value, **position):
        self.value = value
        Node.__init__(self, **position)


class String(Node):
    # value: str
    __slots__ = _fields = ("value",)

    def __init__(self, value, **position):
        self.value = value
        Node.__init__(self, **position)


class Constant(Node):
    # value: bool | None
    __slots__ = _fields = ("value",)

    def __init__(self, value, **position):
        self.value = value
        Node.__init__(self, **position)


class ListDisplay(Node):
    # items: list
    __slots__ = _fields = ("items",)

    def __init__(self, items, **position):
        self.items = items
        Node.__init__(self, **position)


class TupleDisplay(Node):
    # items: list
    __slots__ = _fields = ("items",)

    def __init__(self, items, **position):
        self.items = items
        Node.__init__(self, **position)


class DictDisplay(Node):
    # pairs: list ([(key expr, value expr)]; a None key: ``**mapping``, whose entries it takes)
    __slots__ = _fields = ("pairs",)

    def __init__(self, pairs, **position):
        self.pairs = pairs
        Node.__init__(self, **position)


class BinOp(Node):
    # op: str; left: Node; right: Node
    __slots__ = _fields = ("op", "left", "right")

    def __init__(self, op, left, right, **position):
        self.op = op
        self.left = left
        self.right = right
        Node.__init__(self, **position)


class UnaryOp(Node):
    # op: str; operand: Node
    __slots__ = _fields = ("op", "operand")

    def __init__(self, op, operand, **position):
        self.op = op
        self.operand = operand
        Node.__init__(self, **position)


class Not(Node):
    # operand: Node
    __slots__ = _fields = ("operand",)

    def __init__(self, operand, **position):
        self.operand = operand
        Node.__init__(self, **position)


class BoolOp(Node):
    # op: str ("and" | "or"); values: list
    __slots__ = _fields = ("op", "values")

    def __init__(self, op, values, **position):
        self.op = op
        self.values = values
        Node.__init__(self, **position)


class Compare(Node):
    # left: Node; ops: list (["<", "is not", ...]); comparators: list
    __slots__ = _fields = ("left", "ops", "comparators")

    def __init__(self, left, ops, comparators, **position):
        self.left = left
        self.ops = ops
        self.comparators = comparators
        Node.__init__(self, **position)


class Keyword(Node):
    # name: str; value: Node
    __slots__ = _fields = ("name", "value")

    def __init__(self, name, value, **position):
        self.name = name
        self.value = value
        Node.__init__(self, **position)


class Call(Node):
    # func: Node; args: list; keywords: list ([Keyword])
    __slots__ = _fields = ("func", "args", "keywords")

    def __init__(self, func, args, keywords, **position):
        self.func = func
        self.args = args
        self.keywords = keywords
        Node.__init__(self, **position)


class Slice(Node):
    # lower: Node | None; upper: Node | None; step: Node | None
    __slots__ = _fields = ("lower", "upper", "step")

    def __init__(self, lower, upper, step, **position):
        self.lower = lower
        self.upper = upper
        self.step = step
        Node.__init__(self, **position)


class Subscript(Node):
    # value: Node; items: list (expressions or Slice)
    __slots__ = _fields = ("value", "items")

    def __init__(self, value, items, **position):
        self.value = value
        self.items = items
        Node.__init__(self, **position)


class Attribute(Node):
    # value: Node; attr: str
    __slots__ = _fields = ("value", "attr")

    def __init__(self, value, attr, **position):
        self.value = value
        self.attr = attr
        Node.__init__(self, **position)



# ----------------------------------------------------------------- statements


class VarDecl(Node):
    # name: str; dtype: str | None; value: Node; options: list ([Keyword]: trainable=)
    __slots__ = _fields = ("name", "dtype", "value", "options")

    def __init__(self, name, dtype, value, options, **position):
        self.name = name
        self.dtype = dtype
        self.value = value
        self.options = options
        Node.__init__(self, **position)


class ConstDecl(Node):
    # name: str; dtype: str | None; value: Node
    __slots__ = _fields = ("name", "dtype", "value")

    def __init__(self, name, dtype, value, **position):
        self.name = name
        self.dtype = dtype
        self.value = value
        Node.__init__(self, **position)


class Assign(Node):
    # targets: list (names; more than one destructures); value: Node
    __slots__ = _fields = ("targets", "value")

    def __init__(self, targets, value, **position):
        self.targets = targets
        self.value = value
        Node.__init__(self, **position)


class AugAssign(Node):
    # name: str; op: str; value: Node
    __slots__ = _fields = ("name", "op", "value")

    def __init__(self, name, op, value, **position):
        self.name = name
        self.op = op
        self.value = value
        Node.__init__(self, **position)


class Watch(Node):
    # items: list; tape: str | None
    __slots__ = _fields = ("items", "tape")

    def __init__(self, items, tape, **position):
        self.items = items
        self.tape = tape
        Node.__init__(self, **position)


class Reset(Node):
    # tape: str
    __slots__ = _fields = ("tape",)

    def __init__(self, tape, **position):
        self.tape = tape
        Node.__init__(self, **position)


class Return(Node):
    # value: Node | None
    __slots__ = _fields = ("value",)

    def __init__(self, value, **position):
        self.value = value
        Node.__init__(self, **position)


class Break(Node):
    __slots__ = _fields = ()


class Continue(Node):
    __slots__ = _fields = ()


class Pass(Node):
    __slots__ = _fields = ()


class Expect(Node):
    # test: Node; message: Node | None
    __slots__ = _fields = ("test", "message")

    def __init__(self, test, message, **position):
        self.test = test
        self.message = message
        Node.__init__(self, **position)


class ExprStmt(Node):
    # value: Node
    __slots__ = _fields = ("value",)

    def __init__(self, value, **position):
        self.value = value
        Node.__init__(self, **position)


class If(Node):
    # branches: list ([(condition, body)]); orelse: list | None
    __slots__ = _fields = ("branches", "orelse")

    def __init__(self, branches, orelse, **position):
        self.branches = branches
        self.orelse = orelse
        Node.__init__(self, **position)


class While(Node):
    # test: Node; body: list
    __slots__ = _fields = ("test", "body")

    def __init__(self, test, body, **position):
        self.test = test
        self.body = body
        Node.__init__(self, **position)


class For(Node):
    # targets: list; iter: Node; body: list
    __slots__ = _fields = ("targets", "iter", "body")

    def __init__(self, targets, iter, body, **position):
        self.targets = targets
        self.iter = iter
        self.body = body
        Node.__init__(self, **position)


class Param(Node):
    # name: str; default: Node | None; kind: "" (positional or keyword), "pos" (before /), "kw" (keyword-only,
    # after * or *args), "*" (*args: the extra positional arguments), "**" (**kwargs: the extra keywords)
    __slots__ = _fields = ("name", "default", "kind")

    def __init__(self, name, default, kind="", **position):
        self.name = name
        self.default = default
        self.kind = kind
        Node.__init__(self, **position)


class FuncDef(Node):
    # name: str; params: list; body: list; decorators: list
    __slots__ = _fields = ("name", "params", "body", "decorators")

    def __init__(self, name, params, body, decorators=None, **position):
        self.name = name
        self.params = params
        self.body = body
        self.decorators = [] if decorators is None else decorators
        Node.__init__(self, **position)


class TapeBlock(Node):
    # name: str; options: list ([Keyword]); body: list
    __slots__ = _fields = ("name", "options", "body")

    def __init__(self, name, options, body, **position):
        self.name = name
        self.options = options
        self.body = body
        Node.__init__(self, **position)


class StopRecording(Node):
    # tape: str; body: list
    __slots__ = _fields = ("tape", "body")

    def __init__(self, tape, body, **position):
        self.tape = tape
        self.body = body
        Node.__init__(self, **position)


class ExpectError(Node):
    # kind: str; body: list
    __slots__ = _fields = ("kind", "body")

    def __init__(self, kind, body, **position):
        self.kind = kind
        self.body = body
        Node.__init__(self, **position)


class Program(Node):
    # body: list; source: str; filename: str; python: parsed as Python (§11), not TDF
    _fields = ("body", "source", "filename")
    __slots__ = _fields + ("python", "_declared", "_words", "plans")

    def __init__(self, body, source="", filename="", *, python=False, **position):
        self.body = body
        self.source = source
        self.filename = filename
        self.python = python
        self._declared = None
        self._words = None
        self.plans: dict = {}       # fusion's plans of its expressions (fusion.plan.plan_of): made once, not per run
        Node.__init__(self, **position)

    def declared_names(self) -> frozenset:
        """The names its var and const declarations bind, anywhere in it (found once: bench runs it again)."""
        if self._declared is None:
            self._declared = frozenset(n.name for n in walk(self) if isinstance(n, (VarDecl, ConstDecl)))
        return self._declared

    def words(self) -> frozenset | None:
        """Every word of its text (names, attributes, words in strings and comments): what it may look up by
        name (registry.load_deferred). None for a program made without its text."""
        if self._words is None and self.source:
            self._words = identifiers(self.source)
        return self._words


def identifiers(text: str) -> frozenset:
    """The words of ``text`` that could be Python names."""
    return frozenset(_IDENTIFIER.findall(text))


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def walk(node):
    """Every node under ``node`` (statements, expressions), depth first."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Node):
            yield current
            stack.extend(getattr(current, f) for f in reversed(current._fields) if f not in _NOT_CHILDREN)
        elif isinstance(current, (list, tuple)):
            stack.extend(reversed(current))


_NOT_CHILDREN = frozenset(("source", "filename"))
