"""The TDF abstract syntax tree. Every node keeps its source position."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True, kw_only=True)
class Node:
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    start: int = 0          # character offsets into the source, for quoting expressions
    end: int = 0


# ---------------------------------------------------------------- expressions

@dataclass(slots=True)
class Name(Node):
    id: str


@dataclass(slots=True)
class Number(Node):
    value: int | float


@dataclass(slots=True)
class String(Node):
    value: str


@dataclass(slots=True)
class Constant(Node):
    value: bool | None


@dataclass(slots=True)
class ListDisplay(Node):
    items: list


@dataclass(slots=True)
class TupleDisplay(Node):
    items: list


@dataclass(slots=True)
class DictDisplay(Node):
    pairs: list              # [(key expr, value expr)]


@dataclass(slots=True)
class BinOp(Node):
    op: str
    left: Node
    right: Node


@dataclass(slots=True)
class UnaryOp(Node):
    op: str
    operand: Node


@dataclass(slots=True)
class Not(Node):
    operand: Node


@dataclass(slots=True)
class BoolOp(Node):
    op: str                  # "and" | "or"
    values: list


@dataclass(slots=True)
class Compare(Node):
    left: Node
    ops: list                # ["<", "is not", ...]
    comparators: list


@dataclass(slots=True)
class Keyword(Node):
    name: str
    value: Node


@dataclass(slots=True)
class Call(Node):
    func: Node
    args: list
    keywords: list           # [Keyword]


@dataclass(slots=True)
class Slice(Node):
    lower: Node | None
    upper: Node | None
    step: Node | None


@dataclass(slots=True)
class Subscript(Node):
    value: Node
    items: list              # expressions or Slice


@dataclass(slots=True)
class Attribute(Node):
    value: Node
    attr: str


# ----------------------------------------------------------------- statements

@dataclass(slots=True)
class VarDecl(Node):
    name: str
    dtype: str | None
    value: Node
    options: list            # [Keyword]: trainable=


@dataclass(slots=True)
class ConstDecl(Node):
    name: str
    dtype: str | None
    value: Node


@dataclass(slots=True)
class Assign(Node):
    targets: list            # names; more than one destructures
    value: Node


@dataclass(slots=True)
class AugAssign(Node):
    name: str
    op: str
    value: Node


@dataclass(slots=True)
class Watch(Node):
    items: list
    tape: str | None


@dataclass(slots=True)
class Reset(Node):
    tape: str


@dataclass(slots=True)
class Return(Node):
    value: Node | None


@dataclass(slots=True)
class Break(Node):
    pass


@dataclass(slots=True)
class Continue(Node):
    pass


@dataclass(slots=True)
class Pass(Node):
    pass


@dataclass(slots=True)
class Expect(Node):
    test: Node
    message: Node | None


@dataclass(slots=True)
class ExprStmt(Node):
    value: Node


@dataclass(slots=True)
class If(Node):
    branches: list           # [(condition, body)]
    orelse: list | None


@dataclass(slots=True)
class While(Node):
    test: Node
    body: list


@dataclass(slots=True)
class For(Node):
    targets: list
    iter: Node
    body: list


@dataclass(slots=True)
class Param(Node):
    name: str
    default: Node | None


@dataclass(slots=True)
class FuncDef(Node):
    name: str
    params: list
    body: list
    decorators: list = field(default_factory=list)


@dataclass(slots=True)
class TapeBlock(Node):
    name: str
    options: list            # [Keyword]
    body: list


@dataclass(slots=True)
class StopRecording(Node):
    tape: str
    body: list


@dataclass(slots=True)
class ExpectError(Node):
    kind: str
    body: list


@dataclass(slots=True)
class Program(Node):
    body: list
    source: str = ""
    filename: str = ""


def walk(node):
    """Every node under ``node`` (statements, expressions), depth first."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Node):
            yield current
            stack.extend(getattr(current, f) for f in reversed(current.__dataclass_fields__)
                         if f not in _POSITION_FIELDS)
        elif isinstance(current, (list, tuple)):
            stack.extend(reversed(current))


_POSITION_FIELDS = frozenset(("line", "column", "end_line", "end_column", "start", "end", "source", "filename"))
