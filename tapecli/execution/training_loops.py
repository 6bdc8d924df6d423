"""Which TensorFlow programs the interpreter keeps by default: those with a training loop its loop plans serve.

CPython runs a TensorFlow program by default (its Python values are Python's), but its loops run as written:
a training loop's backward passes replay as plans there, not its iterations. The interpreter's loop plans
(``interpreter/loop_plans.py``) run a training loop's iterations as the kernel calls of one, several times
faster on small models; so a program with a loop they would take stays on the interpreter. Decided from the
text, by the rules the plans start from (``interpreter/loop_shape.py``, rule 1), on CPython's syntax tree: a
``for`` loop whose body is straight-line code (assignments to names, expression statements, ``with`` blocks and
``if`` statements whose conditions read only names the body never binds) of names, literals, attributes, literal
subscripts, arithmetic and calls, which opens a ``GradientTape`` itself or calls a program's function that does
(plain parameters, no decorator but ``tf.function``, straight-line code ending in its ``return``).
"""
from __future__ import annotations

import ast

from tapecli.environment import setting

_EXPRESSIONS = (ast.Name, ast.Constant, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.Call, ast.keyword,
                ast.Attribute, ast.Subscript, ast.Slice, ast.Load, ast.Store, ast.operator, ast.unaryop)
_DISPLAYS = (ast.List, ast.Tuple)
_GUARDS = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Load, ast.operator,
           ast.unaryop, ast.boolop, ast.cmpop)


def enabled(tree: ast.Module | None = None, refused: bool = True) -> bool:
    """Whether a TensorFlow program may run on CPython (TAPECLI_TF_ON_CPYTHON): 1, each one the bridge can run
    (Python's values are Python's), the interpreter the rest; auto (the default), the same but for a program the
    interpreter can run (not ``refused``) with a training loop its loop plans serve; 0, none."""
    mode = setting("TAPECLI_TF_ON_CPYTHON", "auto")
    if mode == "auto" and tree is not None and not refused:
        return training_loop(tree) is None
    return mode != "0"


def training_loop(tree: ast.Module) -> int | None:
    """The line of the program's first loop that the interpreter's loop plans may take, or None."""
    taping = _taping(tree)
    return next((node.lineno for node in ast.walk(tree) if isinstance(node, ast.For) and plannable(node, taping)),
                None)


def plannable(node: ast.For, taping: set) -> bool:
    """Whether loop plans may take this ``for`` loop (rule 1 of interpreter/loop_plans.py): names as its target, no
    ``else``, a body of straight-line code (``if`` statements as guards) that opens a ``GradientTape`` itself or
    calls a program's function of ``taping`` that does."""
    return not node.orelse and _names(node.target) and _plain(node.body) \
        and bool(_opens_a_tape(node.body) or _calls(node.body) & taping)


def plain_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """The program's functions at its top level that a plan may take in, by name."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}    # (the last def's)
    return {name: node for name, node in functions.items() if plain_function(node)}


def _taping(tree: ast.Module) -> set:
    return {name for name, node in plain_functions(tree).items() if _opens_a_tape(node.body)}


def _names(target) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts)


def _plain(body, bound: set | None = None) -> bool:
    """Straight-line code a plan may replace (``if`` statements as guards)."""
    if bound is None:
        bound = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for s in body:
        if isinstance(s, ast.If):
            if not all(isinstance(n, _GUARDS) and not (isinstance(n, ast.Name) and n.id in bound)
                       for n in ast.walk(s.test)):
                return False
        elif isinstance(s, ast.Assign):
            if not all(map(_names, s.targets)) or not _expression(s.value):
                return False
        elif isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name) or not _expression(s.value):
                return False
        elif isinstance(s, ast.Expr):
            if not _expression(s.value):
                return False
        elif isinstance(s, ast.With):
            if not all(_expression(item.context_expr) and (item.optional_vars is None
                                                           or isinstance(item.optional_vars, ast.Name))
                       for item in s.items) or not _plain(s.body, bound):
                return False
        elif not isinstance(s, ast.Pass):
            return False
    return True


def _expression(node) -> bool:
    for n in ast.walk(node):
        if not isinstance(n, _EXPRESSIONS):
            return False
        if isinstance(n, ast.Call) and (any(isinstance(a, ast.Starred) for a in n.args)
                                        or any(k.arg is None for k in n.keywords)):
            return False
        if isinstance(n, ast.Subscript) and not _literal(n.slice):
            return False
        if isinstance(n, ast.BinOp) and isinstance(n.left, _DISPLAYS) or isinstance(n, ast.BinOp) and isinstance(
                n.right, _DISPLAYS):        # (a list packed or repeated in Python)
            return False
    return True


def _literal(node) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    if isinstance(node, ast.Slice):
        return all(part is None or _literal(part) for part in (node.lower, node.upper, node.step))
    return isinstance(node, ast.Tuple) and all(map(_literal, node.elts))


def plain_function(node: ast.FunctionDef) -> bool:
    """A function a plan may take in: plain parameters (defaults too), no decorator but ``tf.function``,
    straight-line code ending in its one ``return``."""
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or not node.body \
            or any(_decorator_name(d) != "function" for d in node.decorator_list):
        return False
    body = node.body
    if isinstance(body[-1], ast.Return):
        body = body[:-1] + ([ast.Expr(body[-1].value)] if body[-1].value is not None else [])
    return _plain(body) and not any(isinstance(s, ast.If) for s in body)


def _decorator_name(node) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _opens_a_tape(body) -> bool:
    return any(isinstance(n, ast.With) and any(_called_name(item.context_expr) == "GradientTape" for item in n.items)
               for s in body for n in ast.walk(s))


def _calls(body) -> set:
    return {n.func.id for s in body for n in ast.walk(s) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _called_name(node) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
