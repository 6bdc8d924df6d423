"""AST nodes for the Python forms TensorFlow programs use (docs/spec/LANGUAGE.md §11), beside the
TDF nodes of ``ast.py``; the Python front end (``pyfront.py``) makes them."""
from __future__ import annotations

from tapecli.frontend.ast import Node


def _node(name: str, fields: tuple[str, ...], doc: str):
    def __init__(self, *values, **position):
        for field, value in zip(fields, values):
            setattr(self, field, value)
        Node.__init__(self, **position)
    return type(name, (Node,), {"__slots__": fields, "_fields": fields, "__init__": __init__, "__doc__": doc})


# statements
AssignTo = _node("AssignTo", ("targets", "value"),
                 "targets: target nodes (Name, Attribute, Subscript, TupleDisplay/ListDisplay of targets), "
                 "each bound to value (a = b = v binds both)")
AugAssignTo = _node("AugAssignTo", ("target", "op", "value"), "x.attr += v, x[i] -= v")
ForEach = _node("ForEach", ("target", "iter", "body"), "for with a nested or attribute target")
Delete = _node("Delete", ("targets",), "del a, b[i], c.attr")
Assert = _node("Assert", ("test", "message"), "assert test, message")
Import = _node("Import", ("names",), "import / from-import: names are (module path, bound name) pairs")
ClassDef = _node("ClassDef", ("name", "bases", "body"), "class name(bases): body")

# expressions
Comprehension = _node("Comprehension", ("kind", "element", "key", "generators"),
                      "kind: list, set, dict or generator; key: the dict key; generators: (target, iter, [ifs])")
Lambda = _node("Lambda", ("params", "body"), "lambda params: body")
IfExp = _node("IfExp", ("test", "body", "orelse"), "body if test else orelse")
FString = _node("FString", ("parts",), "an f-string: String nodes and FormattedValue nodes")
FormattedValue = _node("FormattedValue", ("value", "conversion", "spec"),
                       "{value!conversion:spec} in an f-string; spec is an FString or None")
Starred = _node("Starred", ("value",), "*value in a call or a display")
With = _node("With", ("items", "body"), "with items: body; items: (context expression, target or None) pairs")
