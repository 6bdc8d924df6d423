"""Which loops loop plans take, and so which TensorFlow programs the interpreter keeps by default: those with a
training loop its loop plans serve and CPython's do not.

CPython runs a TensorFlow program by default (its Python values are Python's). Loop plans
(``interpreter/loop_plans.py``) run a training loop's iterations as the kernel calls of one, several times faster
on small models: the interpreter's take any loop of :func:`plannable`; CPython's (``execution/planned_loops.py``)
those of :func:`planned_loops`, at the program's top level or in its functions. A program with a loop the
interpreter's would take and CPython's would not stays on the interpreter. Decided from the text, by the rules the
plans start from (``interpreter/loop_shape.py``, rule 1), on CPython's syntax tree: a ``for`` loop whose body is
straight-line code (assignments to names, expression statements, ``with`` blocks and ``if`` statements whose
conditions read only names the body never binds) of names, literals, attributes, literal subscripts, arithmetic and
calls, which opens a ``GradientTape`` itself or calls a program's function that does (plain parameters, no
decorator but ``tf.function``, straight-line code ending in its ``return``).
"""
from __future__ import annotations

import ast

from tapecli.environment import setting
from tapecli.execution.guard import bound_names, own_scope
from tapecli.interpreter.loop_shape import LoopShape

_EXPRESSIONS = (ast.Name, ast.Constant, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.Call, ast.keyword,
                ast.Attribute, ast.Subscript, ast.Slice, ast.Load, ast.Store, ast.operator, ast.unaryop)
_DISPLAYS = (ast.List, ast.Tuple)
_GUARDS = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Load, ast.operator,
           ast.unaryop, ast.boolop, ast.cmpop)


def enabled(tree: ast.Module | None = None, refused: bool = True) -> bool:
    """Whether a TensorFlow program may run on CPython (TAPECLI_TF_ON_CPYTHON): 1, each one the bridge can run
    (Python's values are Python's), the interpreter the rest; auto (the default), the same but for a program the
    interpreter can run (not ``refused``) with a training loop its loop plans serve and CPython's do not; 0, none."""
    mode = setting("TAPECLI_TF_ON_CPYTHON", "auto")
    if mode == "auto" and tree is not None and not refused:
        return training_loop(tree) is None or cpython_plans(tree)
    return mode != "0"


def cpython_plans(tree: ast.Module) -> bool:
    """Whether CPython's loop plans take each loop the interpreter's would (execution/planned_loops.py): a loop at
    the program's top level or in a function of its own (:func:`planned_loops`), in a program that reads no frames,
    whose loop name (where it counts a ``range``) its body reads only as whole arguments of calls. CPython then runs
    the program by default."""
    taken = {id(node) for node, shape in planned_loops(tree)[0]
             if not (_counts_a_range(node) and set(shape.targets) - set(shape.items))}
    taping = _taping(tree)
    return all(id(node) in taken for node in ast.walk(tree) if isinstance(node, ast.For) and plannable(node, taping))


def _counts_a_range(node: ast.For) -> bool:
    return isinstance(node.iter, ast.Call) and getattr(node.iter.func, "id", None) == "range"


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
        value = body[-1].value
        if isinstance(value, ast.Dict):         # (a Keras train_step's logs, of literal keys: loop_shape's rule)
            if not all(key is not None and _literal(key) for key in value.keys):
                return False
            value = ast.Tuple(value.values, ast.Load())
        body = body[:-1] + ([ast.Expr(value)] if value is not None else [])
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


# What a body that a function of its own would change: a scope inside it (its qualified names), a statement only
# a module or only a function takes, the names of the frame it runs in.
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
_FRAME_NAMES = frozenset({"dir", "vars", "locals", "globals", "super"})
_FRAME_MODULES = frozenset({"traceback", "logging", "inspect", "warnings", "sys"})


def planned_loops(tree: ast.Module, source: str = "") -> tuple[list, dict]:
    """The loops of the program that loop plans may take on CPython, each with its shape, and the program's plain
    functions ({name: the lines its code may start at}): those at its top level, and those of a function whose
    locals a loop's body may take as its enclosing function's (:func:`_loops_scope`)."""
    if any((getattr(node, "module", None) or alias.name).split(".")[0] in _FRAME_MODULES
           for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names):
        return [], {}
    taping, loops, caught = _taping(tree), [], _caught_functions(tree)

    def walk(body):
        for node in body:
            if isinstance(node, ast.For) and plannable(node, taping) and _module_code(node.body):
                shape = _shape(node, source)
                if shape is not None:
                    loops.append((node, shape))
            elif isinstance(node, (ast.For, ast.While, ast.If, ast.With)):
                walk(node.body)
                walk(getattr(node, "orelse", []))
    walk(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name not in caught and _loops_scope(node):
            walk(node.body)
    steps = _plain_methods(tree, STEP_METHODS)
    plain: dict = {}
    for node in [*plain_functions(tree).values(), *_plain_methods(tree, ("call", "__call__")), *steps] \
            if loops or steps or _fits(tree) else ():
        if any(isinstance(n, ast.Name) and n.id in _FRAME_NAMES for n in ast.walk(node)):
            continue        # (``super()`` reads its frame's cell: its call through OBSERVE would not find it)
        plain.setdefault(node.name, set()).update({node.lineno, *(d.lineno for d in node.decorator_list)})
    return loops, plain


# A Keras model's methods that fit and evaluate call back (library/keras/fit_plans.py plans their batches with the
# program's code they call: a model's step, its compute_loss, its call).
STEP_METHODS = ("train_step", "test_step", "compute_loss")


def _fits(tree: ast.Module) -> bool:
    """Whether the program calls a ``fit`` or ``evaluate`` method (a Keras model's, whose batches a plan may take)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("fit", "evaluate")
               for n in ast.walk(tree))


def _plain_methods(tree: ast.Module, names) -> list:
    """The plain methods of the program's classes of these names (a subclassed model's or a tf.Module's ``call`` and
    ``__call__``, a model's ``train_step``): a plan takes them in as it takes a plain function."""
    return [node for c in tree.body if isinstance(c, ast.ClassDef) for node in c.body
            if isinstance(node, ast.FunctionDef) and node.name in names and plain_function(node)]


def _caught_functions(tree: ast.Module) -> set[str]:
    """The names of the program's functions (and methods) that code inside a ``try`` may run: named there, or named
    in a function so named (an error of a planned iteration leaves the loop as it would: no handler may see what
    the plan left)."""
    functions: dict[str, list] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append(node)
    pending = [name for node in ast.walk(tree) if isinstance(node, (ast.Try, ast.TryStar))
               for name in _named(node)]
    caught: set[str] = set()
    while pending:
        name = pending.pop()
        if name in functions and name not in caught:
            caught.add(name)
            pending.extend(named for node in functions[name] for named in _named(node))
    return caught


def _named(node) -> set[str]:
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, (ast.Name,
                                                                                                  ast.Attribute))}


def _loops_scope(node: ast.FunctionDef) -> bool:
    """Whether a planned loop's body may run as a function nested in this one (``nonlocal`` its names: the guard's
    _planned_loop): a function of no decorator (a ``tf.function``'s traces run it again), no generator (its frame
    may be left between two iterations), none that reads its frame's names or has a private name (``__x``, which a
    class's method holds by its mangled name, not the name a plan reads and binds)."""
    return not node.decorator_list and not any(
        isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await))
        or isinstance(n, ast.Name) and (n.id in _FRAME_NAMES or n.id.startswith("__") and not n.id.endswith("__"))
        for n in own_scope(node))


def _module_code(body) -> bool:
    return not any(isinstance(n, _SCOPES) or isinstance(n, ast.Name) and n.id in _FRAME_NAMES
                   or isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
                   for s in body for n in ast.walk(s))


def _shape(node: ast.For, source: str) -> LoopShape | None:
    """The loop's shape for a plan (interpreter/loop_shape.py's, of CPython's syntax tree): the loop's names its
    body reads (a guard's condition aside: the planner evaluates it), the names carried and left behind, the
    guards (each ``if`` statement's chain of conditions, compiled by the guard), its place in the text."""
    targets = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
    if len(set(targets)) != len(targets) or bound_names(node.body) & set(targets):
        return None
    written: set[str] = set()
    read: set[str] = set()
    guards: list = []
    loads: list = []            # the body's reads of the loop's names: (the guard's and branch's index or None, it)

    def reads(tree, at=None):
        found = list(_read_names(tree))
        read.update(n.id for n in found if n.id not in written)
        loads.extend((at, n) for n in found if n.id in targets)

    def block(body):
        for s in body:
            if isinstance(s, ast.If):
                guards.append(s)
                for b, branch in enumerate(_branches(s)):
                    for statement in branch:
                        reads(statement, (len(guards) - 1, b))
                written.update(bound_names([s]))
            elif isinstance(s, ast.Assign):
                reads(s.value)
                written.update(bound_names([s]))
            elif isinstance(s, ast.AugAssign):
                reads(s)
                written.add(s.target.id)
            elif isinstance(s, ast.Expr):
                reads(s.value)
            elif isinstance(s, ast.With):
                for item in s.items:
                    reads(item.context_expr)
                    if item.optional_vars is not None:
                        written.add(item.optional_vars.id)
                block(s.body)
    block(node.body)
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    span = (starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset) \
        if source else None
    # a loop's name read only as a whole argument of calls may be a Python number (``print(step, loss)``): what Python
    # would compute from it is no plan's; a guard's branch that reads it otherwise (``print(f"{step}")``), where a plan
    # traces it, leaves the loop as written (``unsafe``: by guard, those branches)
    arguments = {id(a) for n in ast.walk(node) if isinstance(n, ast.Call) for a in (*n.args, *(k.value for k in
                                                                                                n.keywords))}
    items = tuple(t for t in targets if all(id(n) in arguments for at, n in loads if at is None and n.id == t))
    unsafe = [set() for _ in guards]
    for at, n in loads:
        if at is not None and n.id in items and id(n) not in arguments:
            unsafe[at[0]].add(at[1])
    return LoopShape(tuple(t for t in targets if t in read), tuple(sorted(read & written - set(targets))), guards,
                     tuple(sorted(written - read - set(targets))), span, items, tuple(map(frozenset, unsafe)))


def _read_names(tree):
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            yield n
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            yield n.target


def _branches(node: ast.If) -> list:
    """The bodies of an ``if`` statement's chain (``elif``s), its ``else`` last."""
    branches = [node.body]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        branches.append(node.body)
    return branches + [node.orelse]
