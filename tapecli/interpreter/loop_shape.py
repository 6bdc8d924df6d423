"""What the text of a ``for`` loop's body tells a loop plan (``interpreter/loop_plans.py``, rule 1): whether
the body is code a plan may replace, which names it carries from one iteration to the next, which ``if``
statements are guards; and whether a program's function is code a plan may take in."""
from __future__ import annotations

from tapecli.frontend import ast

_STATEMENTS = (ast.Assign, ast.AugAssign, ast.ExprStmt, ast.TapeBlock, ast.Watch, ast.Pass)
_EXPRESSIONS = (ast.Name, ast.Number, ast.String, ast.Constant, ast.ListDisplay, ast.TupleDisplay, ast.BinOp,
                ast.UnaryOp, ast.Call, ast.Keyword, ast.Attribute, ast.Subscript, ast.Slice)
_DISPLAYS = (ast.ListDisplay, ast.TupleDisplay)
_BINDING_FORMS = ("Delete", "Import", "ClassDef", "With")
_GUARD_NODES = (ast.Name, ast.Number, ast.String, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Not, ast.BoolOp,
                ast.Compare)


class _NoPlan(Exception):
    """What the traced iteration did is not something a plan can make again."""


class LoopShape:
    """What the text of a ``for`` loop's body tells a plan: ``targets``, the loop's names the body reads (``x`` of
    ``for x in xs``; ``xb`` and ``yb`` of ``for xb, yb in batches``); ``carried``, the names the body reads
    before it assigns them and assigns (the loop-carried ones); ``guards``, the ``if`` statements whose
    conditions read only the loop's names and names the body never assigns (an iteration whose branches
    differ from the plan's runs as written); ``left``, the other names the body assigns (what the loop leaves
    behind besides the carried ones); ``span``, the loop's place in its program's text (start, end); ``items``,
    the loop's names a plan may take as Python numbers (CPython's, which its body reads only as whole arguments of
    calls: execution/planned_loops.py), and ``unsafe``, by guard, the branches that read them otherwise (an iteration
    that takes one is traced without them)."""

    __slots__ = ("targets", "carried", "guards", "left", "span", "items", "unsafe")

    def __init__(self, targets, carried, guards, left=(), span=None, items=(), unsafe=()):
        self.targets, self.carried, self.guards, self.left, self.span = targets, carried, guards, left, span
        self.items, self.unsafe = items, unsafe


def loop_shape(node: ast.For) -> LoopShape | None:
    """The shape of a ``for`` loop's body, or None where the body is not code a plan can replace (see the
    module's rule 1)."""
    targets = ast.simple_names(node)
    if targets is None or len(set(targets)) != len(targets):
        return None
    assigned = _assigned(node.body)
    written: set[str] = set()
    carried: set[str] = set()
    guards: list = []

    def read(expr, checked=True):
        for n in ast.walk(expr):
            if checked and (not isinstance(n, _EXPRESSIONS) or n.__class__ is ast.Call and not _plain_call(n)
                            or n.__class__ is ast.Subscript and not all(map(_constant, n.items))
                            or n.__class__ is ast.BinOp and _DISPLAYS.__contains__(n.left.__class__)
                            or n.__class__ is ast.BinOp and _DISPLAYS.__contains__(n.right.__class__)):
                raise _NoPlan
            if n.__class__ is ast.Name and n.id not in written:
                carried.add(n.id)

    def block(body):
        for s in body:
            cls = s.__class__
            if cls is ast.If:
                for test, _ in s.branches:
                    if not _guard(test, assigned):
                        raise _NoPlan
                    read(test, checked=False)
                guards.append(s)
                # a branch the plan did not trace runs as written: its names count, whatever it does
                for branch in [b for _, b in s.branches] + [s.orelse or []]:
                    read(branch, checked=False)
                written.update(_assigned([s]))
                continue
            if cls not in _STATEMENTS:
                raise _NoPlan
            if cls is ast.Assign or cls is ast.AugAssign:
                names = ast.simple_names(s)
                if names is None:           # (attributes, items, nested targets: no plan)
                    raise _NoPlan
                if cls is ast.AugAssign:
                    read(s.target)
                read(s.value)
                written.update(names)
            elif cls is ast.ExprStmt:
                read(s.value)
            elif cls is ast.TapeBlock:
                if not all(_constant(kw.value) for kw in s.options):
                    raise _NoPlan
                written.add(s.name)
                block(s.body)
            elif cls is ast.Watch:
                read(s.items)
                if s.tape is not None:
                    read(ast.Name(s.tape))
    try:
        if assigned.intersection(targets):
            return None
        block(node.body)
    except _NoPlan:
        return None
    names = tuple(sorted(n for n in carried & written if n not in targets))
    left = tuple(sorted(written - carried - set(targets)))
    return LoopShape(tuple(t for t in targets if t in carried), names, guards, left, (node.start, node.end))


def plain_function(node: ast.FuncDef) -> bool:
    """Whether a program's function is code a plan may take in (a ``train_step(x, y)``): plain parameters, and
    a body of the statements and expressions a loop's may have (no ``if``), ending in its one ``return``, whose
    value may be a dict display of literal keys (a Keras ``train_step``'s logs: what the caller does with them is
    its own rules' business)."""
    body = node.body
    if any(p.kind for p in node.params) or any(d != "function" for d in node.decorators) or not body:
        return False
    if body[-1].__class__ is ast.Return:
        value = body[-1].value
        if value.__class__ is ast.DictDisplay:
            if not all(key is not None and _constant(key) for key, _ in value.pairs):
                return False
            value = ast.TupleDisplay([v for _, v in value.pairs])
        body = body[:-1] + ([ast.ExprStmt(value)] if value is not None else [])
    shape = loop_shape(ast.For(ast.Name("__item__"), ast.Constant(None), body))
    return shape is not None and not shape.guards


def _assigned(body) -> set[str]:
    """Every name a statement of ``body`` (at any depth) binds."""
    names = set()
    for n in ast.walk(body):
        cls = n.__class__
        if cls is ast.Assign or cls is ast.For or cls is ast.AugAssign:
            bound = ast.simple_names(n)
            if bound is None:
                return {"__builtins__"}    # (a target other than plain names: no name is known unbound)
            names.update(bound)
        elif cls in (ast.TapeBlock, ast.FuncDef, ast.VarDecl, ast.ConstDecl):
            names.add(n.name)
        elif cls.__name__ in _BINDING_FORMS:
            return {"__builtins__"}        # (a Python form that binds otherwise: no name is known unbound)
    return names


def _guard(test, assigned: set[str]) -> bool:
    """A condition a plan can evaluate before the body: literals, arithmetic, comparisons and ``and``/``or``/
    ``not`` of the loop's name and of names the body never binds."""
    if "__builtins__" in assigned:
        return False
    for n in ast.walk(test):
        if n.__class__ not in _GUARD_NODES or n.__class__ is ast.Name and n.id in assigned:
            return False
    return True


def _constant(node) -> bool:
    """An index or option the body reads into Python: a literal (a value computed from the loop's tensors there
    would decide, in Python, what the kernels are given)."""
    if node is None or node.__class__ in (ast.Number, ast.String, ast.Constant):
        return True
    if node.__class__ is ast.UnaryOp:
        return _constant(node.operand)
    if node.__class__ is ast.Slice:
        return all(map(_constant, (node.lower, node.upper, node.step)))
    if node.__class__ is ast.TupleDisplay:
        return all(map(_constant, node.items))
    return False


def _plain_call(node) -> bool:
    return not any(a.__class__ is not ast.Keyword and a.__class__.__name__ == "Starred" for a in node.args) \
        and all(kw.name is not None for kw in node.keywords)
