"""The abstract syntax tree of TDF and of the Python forms of docs/spec/LANGUAGE.md §11. Every node keeps its
source position.

Every node class comes from one table (below): ``BinOp = _node("BinOp", "op left right", "op: str; ...")``, its
name, its fields in constructor order and a line of each field's type. A node has ``__slots__`` (a dataclass
costs ~1 ms to create at import, and start-up matters), lists its children in ``_fields``, takes its source
position keyword-only, as ``line=, column=, end_line=, end_column=, start=, end=``, and compares equal field by
field (so is unhashable), as a dataclass.
"""
from __future__ import annotations

import re
import types

from tapecli.errors import TdfSyntaxError

POSITION_FIELDS = ("line", "column", "end_line", "end_column", "start", "end")


class Node:
    __slots__ = POSITION_FIELDS
    _fields: tuple[str, ...] = ()

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


# A node class's __init__ is one of these, its fields' names put for _0, _1, ... (_node: they are the code's first
# names and variables): it assigns its arguments directly, as the parsers make millions of nodes. Written out, not
# compiled from a generated source at import: that would cost ~0.4 ms of every start-up.
def _init0(self, *, line=0, column=0, end_line=0, end_column=0, start=0, end=0):
    self.line, self.column, self.end_line, self.end_column, self.start, self.end = \
        line, column, end_line, end_column, start, end


def _init1(self, _0, *, line=0, column=0, end_line=0, end_column=0, start=0, end=0):
    self._0, self.line, self.column, self.end_line, self.end_column, self.start, self.end = \
        _0, line, column, end_line, end_column, start, end


def _init2(self, _0, _1, *, line=0, column=0, end_line=0, end_column=0, start=0, end=0):
    self._0, self._1, self.line, self.column, self.end_line, self.end_column, self.start, self.end = \
        _0, _1, line, column, end_line, end_column, start, end


def _init3(self, _0, _1, _2, *, line=0, column=0, end_line=0, end_column=0, start=0, end=0):
    self._0, self._1, self._2, self.line, self.column, self.end_line, self.end_column, self.start, self.end = \
        _0, _1, _2, line, column, end_line, end_column, start, end


def _init4(self, _0, _1, _2, _3, *, line=0, column=0, end_line=0, end_column=0, start=0, end=0):
    self._0, self._1, self._2, self._3, self.line, self.column, self.end_line, self.end_column, self.start, \
        self.end = _0, _1, _2, _3, line, column, end_line, end_column, start, end


_INITS = (_init0.__code__, _init1.__code__, _init2.__code__, _init3.__code__, _init4.__code__)


def _node(name: str, fields: str, doc: str, defaults: tuple = ()) -> type:
    """A node class: ``fields`` its fields' names (space-separated, in constructor order), ``doc`` their types;
    ``defaults`` the values of the last fields, when not given."""
    names = tuple(fields.split())
    code = _INITS[len(names)].replace(co_names=names + POSITION_FIELDS, co_varnames=("self", *names, *POSITION_FIELDS),
                                      co_qualname=f"{name}.__init__")
    init = types.FunctionType(code, globals(), "__init__", defaults or None)
    init.__kwdefaults__ = dict.fromkeys(POSITION_FIELDS, 0)
    return type(name, (Node,), {"__slots__": names, "_fields": names, "__init__": init, "__doc__": doc,
                                "__module__": __name__})


# ---------------------------------------------------------------- expressions
Name = _node("Name", "id", "id: str")
Number = _node("Number", "value", "value: int | float")
String = _node("String", "value", "value: str")
Constant = _node("Constant", "value", "value: bool | None")
ListDisplay = _node("ListDisplay", "items", "items: list")
TupleDisplay = _node("TupleDisplay", "items", "items: list")
DictDisplay = _node("DictDisplay", "pairs", "pairs: list ([(key expr, value expr)]; a None key: ``**mapping``, "
                    "whose entries it takes)")
BinOp = _node("BinOp", "op left right", "op: str; left: Node; right: Node")
UnaryOp = _node("UnaryOp", "op operand", "op: str; operand: Node")
Not = _node("Not", "operand", "operand: Node")
BoolOp = _node("BoolOp", "op values", 'op: str ("and" | "or"); values: list')
Compare = _node("Compare", "left ops comparators", 'left: Node; ops: list (["<", "is not", ...]); comparators: list')
Keyword = _node("Keyword", "name value", "name: str; value: Node")
Call = _node("Call", "func args keywords", "func: Node; args: list; keywords: list ([Keyword])")
Slice = _node("Slice", "lower upper step", "lower: Node | None; upper: Node | None; step: Node | None")
Subscript = _node("Subscript", "value items", "value: Node; items: list (expressions or Slice)")
Attribute = _node("Attribute", "value attr", "value: Node; attr: str")
# Python forms (§11)
Comprehension = _node("Comprehension", "kind element key generators",
                      "kind: str (list, set, dict or generator); element: Node; key: Node | None (the dict key); "
                      "generators: list ([(target, iter, [ifs])])")
Lambda = _node("Lambda", "params body", "params: list ([Param]); body: Node")
IfExp = _node("IfExp", "test body orelse", "test: Node; body: Node; orelse: Node (body if test else orelse)")
FString = _node("FString", "parts", "parts: list (String and FormattedValue nodes)")
FormattedValue = _node("FormattedValue", "value conversion spec",
                       "value: Node; conversion: str | None (r, s, a); spec: FString | None ({value!conversion:spec})")
Starred = _node("Starred", "value", "value: Node (*value in a call or a display)")

# ----------------------------------------------------------------- statements
VarDecl = _node("VarDecl", "name dtype value options",
                "name: str; dtype: str | None; value: Node; options: list ([Keyword]: trainable=)")
ConstDecl = _node("ConstDecl", "name dtype value", "name: str; dtype: str | None; value: Node")
Assign = _node("Assign", "targets value", "targets: list (target nodes: Name, Attribute, Subscript, TupleDisplay/"
               "ListDisplay of targets, each bound to value: a = b = v binds both); value: Node")
AugAssign = _node("AugAssign", "target op value", "target: Node (Name, Attribute or Subscript); op: str; value: Node")
Watch = _node("Watch", "items tape", "items: list; tape: str | None")
Reset = _node("Reset", "tape", "tape: str")
Return = _node("Return", "value", "value: Node | None")
Break = _node("Break", "", "")
Continue = _node("Continue", "", "")
Pass = _node("Pass", "", "")
Expect = _node("Expect", "test message", "test: Node; message: Node | None")
ExprStmt = _node("ExprStmt", "value", "value: Node")
If = _node("If", "branches orelse", "branches: list ([(condition, body)]); orelse: list | None")
While = _node("While", "test body", "test: Node; body: list")
For = _node("For", "target iter body", "target: Node (as Assign's targets); iter: Node; body: list")
Param = _node("Param", "name default kind",
              'name: str; default: Node | None; kind: "" (positional or keyword), "pos" (before /), "kw" (keyword-only, '
              'after * or *args), "*" (*args: the extra positional arguments), "**" (**kwargs: the extra keywords)',
              defaults=("",))
FuncDef = _node("FuncDef", "name params body decorators",
                "name: str; params: list; body: list; decorators: list (each one's dotted name's last part)")
TapeBlock = _node("TapeBlock", "name options body", "name: str; options: list ([Keyword]); body: list")
StopRecording = _node("StopRecording", "tape body", "tape: str; body: list")
ExpectError = _node("ExpectError", "kind body", "kind: str; body: list")
# Python forms (§11)
Delete = _node("Delete", "targets", "targets: list (del a, b[i], c.attr)")
Assert = _node("Assert", "test message", "test: Node; message: Node | None")
Import = _node("Import", "names", "names: list ([(module path, bound name)]: import and from-import)")
ClassDef = _node("ClassDef", "name bases body", "name: str; bases: list; body: list")
With = _node("With", "items body", "items: list ([(context expression, target or None)]); body: list")


class Program(_node("Program", "body source filename", "body: list; source: str; filename: str", ("", ""))):
    """The root: a program's statements, text and file name; ``python``: parsed as Python (§11), not TDF; and
    what is found once per program."""
    __slots__ = ("python", "_declared", "_words", "plans")

    def __init__(self, body, source="", filename="", *, python=False, **position):
        super().__init__(body, source, filename, **position)
        self.python = python
        self._declared = None
        self._words = None
        self.plans: dict = {}       # fusion's plans of its expressions (fusion.plan.plan_of): made once, not per run

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


def identifiers(text: str) -> frozenset:
    """The words of ``text`` that could be Python names."""
    return frozenset(_IDENTIFIER.findall(text))


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


# The augmented assignments of a name that the fast paths take (another runs as any target's: x //= 2, x.a += 1)
_NAME_UPDATES = frozenset(("+", "-", "*", "/"))


def simple_names(node) -> list[str] | None:
    """The names an assignment, ``for`` or augmented assignment binds when its target is plain names (``x = v``,
    ``a, b = v``, ``[a, b] = v``: one target, a name or two or more names; ``for x in``, ``for a, b in``;
    ``x += v`` with + - * /): the form the fast paths take (compiled closures, scalar sources, loop plans).
    None for another target, or another node."""
    cls = node.__class__
    if cls is Assign:
        if len(node.targets) != 1:
            return None
        target = node.targets[0]
    elif cls is For:
        target = node.target
    elif cls is AugAssign:
        target = node.target
        return [target.id] if target.__class__ is Name and node.op in _NAME_UPDATES else None
    else:
        return None
    if target.__class__ is Name:
        return [target.id]
    if target.__class__ in (TupleDisplay, ListDisplay) and len(target.items) >= 2 \
            and all(item.__class__ is Name for item in target.items):
        return [item.id for item in target.items]
    return None


def single_name(node) -> str | None:
    """The one name ``node`` binds where ``simple_names`` gives one (``x = v``, ``for x in``, ``x += v``)."""
    names = simple_names(node)
    return names[0] if names is not None and len(names) == 1 else None


def walk(node):
    """Every node under ``node`` (statements, expressions), depth first; not the target of a statement that
    ``simple_names`` takes, which reads nothing (the analyses that walk take the names it binds from
    ``simple_names``; another target's nodes they read as expressions: ``x[i] = v`` reads x and i)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Node):
            yield current
            cls = current.__class__
            skip = _TARGETS[cls] if cls in _TARGETS and simple_names(current) is not None else None
            stack.extend(getattr(current, f) for f in reversed(current._fields) if f not in _NOT_CHILDREN
                         and f != skip)
        elif isinstance(current, (list, tuple)):
            stack.extend(reversed(current))


_TARGETS = {Assign: "targets", For: "target", AugAssign: "target"}


_NOT_CHILDREN = frozenset(("source", "filename"))
