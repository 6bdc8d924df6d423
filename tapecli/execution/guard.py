"""The program's Python compiled for CPython under guards (docs/architecture.md, "Execution").

CPython's own parser and compiler give every Python form its meaning; this transform adds what keeps a
program inside its sandbox, compiled into the code:

- an attribute whose name is not plain (``_``-prefixed, or one of ``sandbox.GUARDED_NAMES``) is read, written
  and deleted through the guard (``sandbox.get_attribute``), which knows what lies out of reach; a plain
  name is read as CPython reads it, since what the program can hold is already filtered (modules are
  proxies, builtins a restricted table); every attribute write goes through the guard, which refuses to
  change classes and modules that are not the program's own;
- a tick (steps, seconds, memory) at the top of every loop body, function body and comprehension;
- ``*``, ``**`` and ``<<`` through the guard, which weighs what repetition and exact integers would make;
- every ``except`` handler first re-raises the run's own stops (limits, refusals), so that no handler keeps
  a program past its limits;
- names the runtime keeps for itself (``__tdf_*``, ``__builtins__``) cannot be named by the program.
"""
from __future__ import annotations

import ast
import copy

from tapecli.errors import TdfSyntaxError

# The runtime's names in the program's globals (sandbox.runtime_names supplies them).
GET, SET, DELETE, TICK, BINARY, CAUGHT, ITER = ("__tdf_get__", "__tdf_set__", "__tdf_del__", "__tdf_tick__",
                                               "__tdf_binary__", "__tdf_caught__", "__tdf_iter__")
FIELD, JOINED, TEXTED = "__tdf_field__", "__tdf_joined__", "__tdf_texted__"
MADE = "__tdf_made__"       # a call of the name ``type`` with three arguments: its class sealed (interfaces.py)
# A TensorFlow program's (TensorFlowGuard): a tape method's call site, a tape named by its binding, the count of
# requests before a top-level assignment and what it bound after it, a top-level ``x = tf.Variable(...)``'s name.
SITE, TAPE, COUNT, BOUND, DECLARE = "__tdf_site__", "__tdf_tape__", "__tdf_count__", "__tdf_bound__", "__tdf_declare__"
# Whether no tf.function call around runs its traced graph: a statement only Python side effects runs then alone.
TRACING = "__tdf_tracing__"
ASSERT = "__tdf_assert__"           # an assert's test, recorded as an expectation (asserts.py)
# A TensorFlow program's planned loops (planned_loops.py): a loop's start (its execution), each iteration (of that
# execution), a call of its body (or of a plain function's), a plain function's start.
LOOP, ITERATION, OBSERVE, ENTER = "__tdf_loop__", "__tdf_iteration__", "__tdf_observe__", "__tdf_enter__"
# Builtins whose result is the text of their argument: the argument is weighed first (weigh.weigh_text).
TEXT_MAKERS = frozenset({"str", "repr", "ascii", "format"})
# Builtins that consume an iterable inside one C call, where no tick runs: their first argument is taken
# through the guard (sandbox.iterable), as is every *unpacking.
CONSUMERS = frozenset({"list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "min", "max", "any", "all",
                       "bytes", "bytearray"})
_RESERVED = frozenset({"__builtins__", "__loader__", "__spec__", "__import__", "__build_class__"})
# NumPy's and array's ways to files and raw memory: unreachable but where a program's own class defines the name
# (a Serializer's ``dump`` method).
LIBRARY_WAYS_OUT = frozenset({"tofile", "fromfile", "dump", "ctypes", "cffi"})
# Attribute names never read or written, whatever the object: frames, code, globals and tracebacks, and NumPy's
# ways to files and raw memory.
UNREACHABLE = LIBRARY_WAYS_OUT | frozenset({
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "f_globals", "f_locals", "f_builtins",
    "f_back", "f_code", "tb_frame", "tb_next", "func_globals", "func_code", "im_func",
    # NumPy makes an array of the memory these name (interfaces.py)
    "__array_interface__", "__array_struct__", "__cuda_array_interface__",
})
# Methods whose result can be far larger than their inputs: weighed before they run (sandbox.weighed_method).
WEIGHED_METHODS = frozenset({"astype", "repeat", "tolist", "zfill", "ljust", "rjust", "center", "expandtabs",
                             "replace", "join", "split", "rsplit", "splitlines", "extend"})
# Attribute names read through the guard whatever their prefix; str.format's {0.attr} fields read attributes.
GUARDED_NAMES = UNREACHABLE | WEIGHED_METHODS | {"format", "format_map", "re", "mro"}    # (re: a match's; mro:
# a class's, sandbox.py)
_WEIGHED_OPS = (ast.Mult, ast.Pow, ast.LShift, ast.Add, ast.Mod)
_SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
            ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


def plain(name: str) -> bool:
    """Whether ``obj.name`` may be read as CPython reads it."""
    return not name.startswith("_") and name not in GUARDED_NAMES


def compile_program(tree: ast.Module, filename: str, source: str = "", transform=None):
    """The program's code object, guards compiled in (``source``: the text an assert's record names;
    ``transform``: the guard to apply, ``_Guard``'s by default)."""
    tree = (transform or _Guard(source)).visit(tree)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec", dont_inherit=True)


def _call(name: str, node: ast.AST, *args: ast.expr) -> ast.Call:
    return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), list(args), []), node)


def _tick(node: ast.AST) -> ast.stmt:
    return ast.copy_location(ast.Expr(_call(TICK, node)), node)


class _Guard(ast.NodeTransformer):
    guarded: frozenset = frozenset()        # plain names read through the guard all the same

    def __init__(self, source: str = ""):
        self.classes: list[str] = []         # the enclosing class names, for private-name mangling
        self.source = source

    def _mangled(self, name: str) -> str:
        """``__x`` inside ``class C`` is ``_C__x``, as CPython's compiler mangles it (the guard reads by
        string, which CPython would not mangle)."""
        if self.classes and name.startswith("__") and not name.endswith("__"):
            owner = self.classes[-1].lstrip("_")
            if owner:
                return f"_{owner}{name}"
        return name

    def _refuse_reserved(self, name: str, node: ast.AST) -> None:
        if name in _RESERVED or name.startswith("__tdf_"):
            raise TdfSyntaxError(f"the name {name} is reserved by tapecli", line=node.lineno,
                                 column=node.col_offset + 1,
                                 hint="programs cannot reach the interpreter's own names; rename it")

    def visit_Name(self, node: ast.Name):
        self._refuse_reserved(node.id, node)
        return node

    def visit_arg(self, node: ast.arg):
        self._refuse_reserved(node.arg, node)
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        name = self._mangled(node.attr)
        text = ast.copy_location(ast.Constant(name), node)
        if isinstance(node.ctx, ast.Load):
            return node if plain(node.attr) and node.attr not in self.guarded else _call(GET, node, node.value, text)
        # A store or delete target: rewritten by the statements that hold it (visit_Assign and friends).
        return node

    # ---- statements whose targets are attributes
    def _store(self, target: ast.expr, value: ast.expr, node: ast.stmt) -> list[ast.stmt]:
        """``target = value`` with every attribute target (at any depth of unpacking) set through the guard."""
        if isinstance(target, ast.Attribute):
            name = ast.Constant(self._mangled(target.attr))
            return [ast.copy_location(ast.Expr(_call(SET, node, target.value, name, value)), node)]
        if isinstance(target, (ast.Tuple, ast.List)) and _has_attribute(target):
            names = [f"__tdf_item{i}" for i in range(len(target.elts))]
            temps = [ast.Name(n, ast.Store()) for n in names]
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    temps[i] = ast.Starred(temps[i], ast.Store())
            out = [ast.copy_location(ast.Assign([type(target)(temps, ast.Store())], value), node)]
            for n, element in zip(names, target.elts):
                inner = element.value if isinstance(element, ast.Starred) else element
                out += self._store(inner, ast.Name(n, ast.Load()), node)
            return out
        return [ast.copy_location(ast.Assign([target], value), node)]

    def visit_Assign(self, node: ast.Assign):
        self.generic_visit(node)
        if not any(_has_attribute(t) for t in node.targets):
            return node
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
            return self._store(node.targets[0], node.value, node)
        temp = "__tdf_value"
        out = [ast.copy_location(ast.Assign([ast.Name(temp, ast.Store())], node.value), node)]
        for target in node.targets:
            out += self._store(target, ast.Name(temp, ast.Load()), node)
        return out

    def visit_AnnAssign(self, node: ast.AnnAssign):
        self.generic_visit(node)
        if isinstance(node.target, ast.Attribute) and node.value is not None:
            return self._store(node.target, node.value, node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign):
        """``t op= v`` as CPython does it (the in-place method, then the store), through the guard where the
        target is an attribute or the operator is weighed; each part of the target is evaluated once."""
        self.generic_visit(node)
        target = node.target
        if not isinstance(target, ast.Attribute) and not isinstance(node.op, _WEIGHED_OPS):
            return node
        if isinstance(target, ast.Name):
            return ast.copy_location(ast.Assign([target], self._inplace(node.op, ast.Name(target.id, ast.Load()),
                                                                        node.value, node)), node)
        holder, holder_load = _temp("__tdf_holder")
        out = [ast.copy_location(ast.Assign([holder], target.value), node)]
        if isinstance(target, ast.Attribute):
            name = ast.Constant(self._mangled(target.attr))
            current = _call(GET, node, holder_load, name)
            out.append(ast.copy_location(ast.Expr(_call(SET, node, holder_load, name,
                                                        self._inplace(node.op, current, node.value, node))), node))
        else:
            index, index_load = _temp("__tdf_index")
            out.append(ast.copy_location(ast.Assign([index], target.slice), node))
            current = ast.Subscript(holder_load, index_load, ast.Load())
            store = ast.Subscript(ast.Name("__tdf_holder", ast.Load()), ast.Name("__tdf_index", ast.Load()), ast.Store())
            out.append(ast.copy_location(ast.Assign([store], self._inplace(node.op, current, node.value, node)), node))
        return out

    def _inplace(self, op: ast.operator, left: ast.expr, right: ast.expr, node: ast.AST) -> ast.Call:
        return _call(BINARY, node, ast.Constant(type(op).__name__ + "="), left, right)

    def visit_Delete(self, node: ast.Delete):
        self.generic_visit(node)
        out: list[ast.stmt] = []
        plain_targets = []
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                out.append(ast.copy_location(ast.Expr(_call(DELETE, node, target.value,
                                                            ast.Constant(self._mangled(target.attr)))), node))
            else:
                plain_targets.append(target)
        if plain_targets:
            out.insert(0, ast.copy_location(ast.Delete(plain_targets), node))
        return out

    def visit_For(self, node):
        self.generic_visit(node)
        if any(isinstance(t, ast.Attribute) for t in ast.walk(node.target)):
            temp = ast.Name("__tdf_loop_item", ast.Store())
            node.body = self._store(node.target, ast.Name("__tdf_loop_item", ast.Load()), node) + node.body
            node.target = temp
        node.body.insert(0, _tick(node))
        return node

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        node.body.insert(0, _tick(node))
        return node

    def visit_With(self, node: ast.With):
        self.generic_visit(node)
        for item in node.items:
            if isinstance(item.optional_vars, ast.Attribute) or (
                    item.optional_vars is not None and _has_attribute(item.optional_vars)):
                target = item.optional_vars
                item.optional_vars = ast.Name("__tdf_with_value", ast.Store())
                node.body = self._store(target, ast.Name("__tdf_with_value", ast.Load()), node) + node.body
        return node

    def _function(self, node):
        self._refuse_reserved(node.name, node)
        self.generic_visit(node)
        node.body.insert(_docstring_end(node.body), _tick(node))
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda):
        self.generic_visit(node)
        node.body = ast.copy_location(ast.BoolOp(ast.Or(), [_call(TICK, node), node.body]), node.body)
        return node

    def visit_ClassDef(self, node: ast.ClassDef):
        self._refuse_reserved(node.name, node)
        self.classes.append(node.name)
        try:
            return self.generic_visit(node)
        finally:
            self.classes.pop()

    def visit_ListComp(self, node):
        self.generic_visit(node)
        for generator in node.generators:    # a list of a string's characters is weighed before it is made
            generator.iter = _call(ITER, generator.iter, generator.iter, ast.Constant("comprehension"))
        return node

    visit_SetComp = visit_DictComp = visit_ListComp

    def visit_comprehension(self, node: ast.comprehension):
        self.generic_visit(node)
        node.ifs.insert(0, ast.copy_location(ast.UnaryOp(ast.Not(), _call(TICK, node.iter)), node.iter))
        if any(isinstance(t, ast.Attribute) for t in ast.walk(node.target)):
            raise TdfSyntaxError("an attribute as a comprehension's target is not supported",
                                 line=node.target.lineno, column=node.target.col_offset + 1,
                                 hint="bind a plain name and assign the attribute in a for loop")
        return node

    def visit_Assert(self, node: ast.Assert):
        """``assert a < b, msg`` -> ``assert __tdf_assert__(line, "<", a, b, "a < b"), msg`` (asserts.py)."""
        test = node.test
        text = ast.get_source_segment(self.source, test) or ast.unparse(test)
        self.generic_visit(node)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op, left, right = _SYMBOLS[type(test.ops[0])], node.test.left, node.test.comparators[0]
        else:
            op, left, right = None, node.test, ast.Constant(True)
        node.test = _call(ASSERT, test, ast.Constant(node.lineno), ast.Constant(op), left, right, ast.Constant(text))
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler):
        self.generic_visit(node)
        node.body.insert(0, ast.copy_location(ast.Expr(_call(CAUGHT, node)), node))
        return node

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.args and not isinstance(node.args[0], ast.Starred):
            # (max(a, b): values, not an iterable to draw)
            if node.func.id in CONSUMERS and not (node.func.id in ("min", "max") and len(node.args) > 1):
                node.args[0] = _call(ITER, node.args[0], node.args[0], ast.Constant(node.func.id))
            elif node.func.id in TEXT_MAKERS:
                node.args[0] = _call(TEXTED, node.args[0], node.args[0])
        if isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 3:
            node.args = [node.func, *node.args]
            node.func = ast.copy_location(ast.Name(MADE, ast.Load()), node.func)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr):
        """An f-string as the join of its parts, each field formatted by weigh.field (its text and width
        weighed), the join weighed too."""
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                spec = self.visit(value.format_spec) if value.format_spec is not None else ast.Constant(None)
                parts.append(_call(FIELD, value, self.visit(value.value), ast.Constant(value.conversion), spec))
            else:
                parts.append(value)
        return _call(JOINED, node, *parts)

    def visit_Starred(self, node: ast.Starred):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            node.value = _call(ITER, node.value, node.value, ast.Constant("unpacking"))
        return node

    def visit_BinOp(self, node: ast.BinOp):
        self.generic_visit(node)
        if isinstance(node.op, _WEIGHED_OPS):
            return self._binary(node.op, node.left, node.right, node)
        return node

    def _binary(self, op: ast.operator, left: ast.expr, right: ast.expr, node: ast.AST) -> ast.Call:
        return _call(BINARY, node, ast.Constant(type(op).__name__), left, right)


def _has_attribute(target: ast.expr) -> bool:
    return any(isinstance(t, ast.Attribute) for t in ast.walk(target))


def _temp(name: str) -> tuple[ast.Name, ast.Name]:
    return ast.Name(name, ast.Store()), ast.Name(name, ast.Load())


def _docstring_end(body: list[ast.stmt]) -> int:
    first = body[0] if body else None
    return 1 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
        first.value.value, str) else 0


class TensorFlowGuard(_Guard):
    """The guards of a TensorFlow program that CPython runs (execution/tensorflow.py), and what it needs besides:
    the attributes of tensors, variables and tapes (``guarded``) read through the guard; ``X.m(...)`` for a method
    ``m`` of ``site_methods`` called with its call site (``site(source, call)``, kept in ``sites``); a tape made
    by ``with tf.GradientTape() as t`` or ``t = tf.GradientTape()`` named ``t``; each assignment outside functions
    and classes followed by what names its gradient requests and objects; and a top-level ``x = tf.Variable(...)``
    that the interpreter would take as a declaration naming its variable ``x`` (``declared``: those statements);
    a statement of a ``@tf.function`` that is only a Python side effect (``trace_only``, by ``id``) run while the
    function traces alone, as TensorFlow's graph has no op for it (tf_calls.traced_functions); the loops that loop
    plans may take (``planned``: training_loops.planned_loops' loops and plain functions) compiled for them
    (:meth:`_planned_loop`), each call of their bodies and of the plain functions through ``OBSERVE``."""

    def __init__(self, source: str, guarded: frozenset, site_methods: frozenset, site, declared: set,
                 trace_only: set, planned=((), {})):
        super().__init__(source)
        loops, self.plain = planned
        self.loops = {id(node): (number, shape) for number, (node, shape) in enumerate(loops)}
        self.observing = 0                  # inside a planned loop's body or a plain function
        self.trace_only = trace_only
        self.guarded = guarded
        self.site_methods = site_methods
        self.site = site
        self.sites: list = []
        self.declared = declared
        self.depth = 0                      # functions, lambdas and classes around the node
        self.functions: list = []           # the functions around it

    def visit(self, node):
        out = super().visit(node)
        if id(node) not in self.trace_only:
            return out
        return ast.copy_location(ast.If(_call(TRACING, node), out if isinstance(out, list) else [out], []), node)

    def _nested(self, node, visit):
        self.depth += 1
        try:
            return visit(node)
        finally:
            self.depth -= 1

    def visit_FunctionDef(self, node):
        self.functions.append(node)
        try:
            return self._function_def(node)
        finally:
            self.functions.pop()

    def _function_def(self, node):
        if self.depth > len(self.classes) or node.lineno not in self.plain.get(node.name, ()):
            return self._nested(node, super().visit_FunctionDef)
        self.observing += 1
        try:
            node = self._nested(node, super().visit_FunctionDef)
        finally:
            self.observing -= 1
        node.body[_docstring_end(node.body)] = ast.copy_location(
            ast.Expr(_call(ENTER, node, ast.Constant(node.name))), node)        # (its tick, and the plan's check)
        return node

    def visit_AsyncFunctionDef(self, node):
        return self._nested(node, super().visit_FunctionDef)

    def visit_For(self, node):
        planned = self.loops.get(id(node))
        return super().visit_For(node) if planned is None else self._planned_loop(node, *planned)

    def _planned_loop(self, node: ast.For, number: int, shape):
        """``for x in xs: body`` as a loop whose iterations a plan may run (planned_loops.py): its body a function
        of its scope's names (the module's; in a function, that function's: ``nonlocal`` those it binds, but those
        the function declares ``global``, each one the function's local by a binding that never runs), called by
        ``ITERATION`` with the loop's execution that ``LOOP`` started (a ``break`` returns True), its calls through
        ``OBSERVE``."""
        node.iter, node.target = self.visit(node.iter), self.visit(node.target)
        self.observing += 1
        try:
            body = [out for s in node.body for out in _statements(self.visit(s))]
        finally:
            self.observing -= 1
        body = [_LoopExits().visit(s) for s in body]
        names, name, running = sorted(bound_names(body)), f"__tdf_body_{number}", f"__tdf_loop_{number}"
        local: list[str] = []
        if self.functions:
            declared = {n for s in own_scope(self.functions[-1]) if isinstance(s, ast.Global) for n in s.names}
            names, local = [n for n in names if n in declared], [n for n in names if n not in declared]
        none = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                             defaults=[])
        function = ast.FunctionDef(name=name, args=none, body=([ast.Global(names)] if names else [])
                                   + ([ast.Nonlocal(local)] if local else []) + body,
                                   decorator_list=[], returns=None, type_comment=None)
        conditions = ast.List([ast.List([ast.Lambda(none, copy.deepcopy(test)) for test in tests(guard)], ast.Load())
                               for guard in shape.guards], ast.Load())
        started = ast.Assign([ast.Name(running, ast.Store())], _call(
            LOOP, node, ast.Constant(number), node.iter, ast.Name(name, ast.Load()), conditions))
        loop = ast.For(node.target, ast.Name(running, ast.Load()), [_tick(node), ast.If(
            _call(ITERATION, node, ast.Name(running, ast.Load())), [ast.Break()], [])], [])
        bindings = [ast.If(ast.Constant(False), [ast.Assign([ast.Name(n, ast.Store()) for n in local],
                                                            ast.Constant(None))], [])] if local else []
        return [ast.copy_location(s, node) for s in (*bindings, function, started, loop, ast.Delete(
            [ast.Name(name, ast.Del()), ast.Name(running, ast.Del())]))]

    def visit_ClassDef(self, node):
        return self._nested(node, super().visit_ClassDef)

    def visit_Lambda(self, node):
        return self._nested(node, super().visit_Lambda)

    def visit_Call(self, node: ast.Call):
        position = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        node = self._call_with_site(node)
        if not self.observing:
            return node
        return ast.copy_location(ast.Call(ast.Name(OBSERVE, ast.Load()), [ast.Constant(position), node.func,
                                                                         *node.args], node.keywords), node)

    def _call_with_site(self, node: ast.Call):
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if method not in self.site_methods:
            return super().visit_Call(node)
        self.sites.append(self.site(self.source, node))
        index = len(self.sites) - 1
        node = super().visit_Call(node)
        holder = node.func.value if isinstance(node.func, ast.Attribute) else node.func.args[0]
        node.func = _call(SITE, node.func, holder, ast.Constant(method), ast.Constant(index))
        return node

    def visit_With(self, node: ast.With):
        names = [item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None for item in node.items]
        node = super().visit_With(node)
        for item, name in zip(node.items, names):
            if name is not None:
                item.context_expr = _call(TAPE, item.context_expr, item.context_expr, ast.Constant(name))
        return node

    def visit_Assign(self, node: ast.Assign):
        target = node.targets[0]
        tape = len(node.targets) == 1 and isinstance(target, ast.Name) and isinstance(node.value, ast.Call) \
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "GradientTape"
        declared = id(node) in self.declared
        out = super().visit_Assign(node)
        if tape and out is node:
            node.value = _call(TAPE, node.value, node.value, ast.Constant(target.id))
        names = _bound_names(target)
        if self.depth or out is not node or names is None:
            return out
        mark, value = ast.Name("__tdf_mark", ast.Load()), ast.Name("__tdf_value", ast.Load())
        names_node = ast.Constant(names) if isinstance(names, str) else ast.List([ast.Constant(n) for n in names],
                                                                                  ast.Load())
        out = [ast.Assign([ast.Name("__tdf_mark", ast.Store())], _call(COUNT, node, ast.List(
                   [ast.Constant(n) for n in ([names] if isinstance(names, str) else names)], ast.Load()))),
               ast.Assign([ast.Name("__tdf_value", ast.Store())], node.value),
               ast.Assign(node.targets, value),
               ast.Expr(_call(BOUND, node, mark, value, names_node, ast.Constant(node.lineno)))]
        if declared:
            out.append(ast.Expr(_call(DECLARE, node, value, ast.Constant(target.id))))
        # (held no longer than the statement: an array the program resizes must have no other reference, NumPy's
        # refcheck)
        out.append(ast.Delete([ast.Name("__tdf_mark", ast.Del()), ast.Name("__tdf_value", ast.Del())]))
        return [ast.copy_location(s, node) for s in out]


def tests(node: ast.If) -> list:
    """The conditions of an ``if`` statement's chain, in order."""
    found = [node.test]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        found.append(node.test)
    return found


def bound_names(body) -> set[str]:
    """The names the statements of ``body`` bind (of a body without scopes of its own: training_loops._module_code)."""
    names = set()
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                names.add(n.id)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in n.names)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                names.add(n.name)
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name or isinstance(n, ast.MatchMapping) and n.rest:
                names.add(getattr(n, "name", None) or n.rest)
    return names


def own_scope(node):
    """The nodes of a function in its own scope (not those of the functions, classes and lambdas in it)."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield child
            yield from own_scope(child)


def _statements(out) -> list:
    return out if isinstance(out, list) else [] if out is None else [out]


class _LoopExits(ast.NodeTransformer):
    """A planned loop's body as its function's: ``break`` returns True, ``continue`` returns (but those of the
    loops inside it, which are theirs)."""

    def visit_Break(self, node):
        return ast.copy_location(ast.Return(ast.Constant(True)), node)

    def visit_Continue(self, node):
        return ast.copy_location(ast.Return(None), node)

    def visit_For(self, node):
        node.orelse = [self.visit(s) for s in node.orelse]       # (an ``else`` of an inner loop: the loop's own)
        return node

    visit_AsyncFor = visit_While = visit_For


def _bound_names(target: ast.expr):
    """The name an assignment binds, or the list of names it unpacks into; None for any other target."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return None
