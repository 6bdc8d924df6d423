"""The interpreter's compiled form: each node becomes, the first time it runs, a Python closure
``f(scope)`` that calls its children's closures directly, so a loop pays no per-node dispatch on the
node's type. The hot nodes (names, literals, arithmetic, calls, assignment, loops) get closures of
their own; every other node's closure calls its ``eval_``/``exec_`` method, which stays the one
definition of its meaning.
"""
from __future__ import annotations

import functools
from types import FunctionType

import numpy as np

from tapecli import ops
from tapecli.errors import LimitError, TdfError
from tapecli.frontend import ast
from tapecli.frontend.pyast import Starred
from tapecli.fusion import plan as fusion_plans
from tapecli.fusion.core import evaluate as fuse
from tapecli.interpreter import loop_plans
from tapecli.interpreter.loop_shape import loop_shape
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.objects import _FUSABLE, _MISSING, _Break, _Continue
from tapecli.interpreter.expressions import list_literal_binary
from tapecli.interpreter.objects import _PYFUNCTION
from tapecli.interpreter.registry import BUILTINS
from tapecli.ops.scalar import scalar_binary
from tapecli.ops.statement import StatementRecord, statement_op
from tapecli.runtime.limits import Limits
from tapecli.runtime.tape import NO_ATTRS, record_on
from tapecli.kernels import RAW_NUMPY_KERNELS
from tapecli.runtime.values import Tensor, Variable, new_id

new = Tensor.__new__

_FLOAT_SCALARS = (np.float32, np.float64)
_OP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod", "**": "pow", "@": "matmul"}


class Compiled:
    """The closures of one interpreter's nodes, made once each (keyed by the node, which they keep alive)."""

    def __init__(self, interp):
        self.interp = interp
        self.code: dict = {}

    def expression(self, node):
        entry = self.code.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self.code[id(node)] = (node, self._expression(node))
        return entry[1]

    def block(self, body):
        entry = self.code.get(id(body))
        if entry is None or entry[0] is not body:
            entry = self.code[id(body)] = (body, self._block(body))
        return entry[1]

    # ------------------------------------------------------------ expressions
    def _expression(self, node):
        make = _EXPRESSIONS.get(node.__class__)
        return make(self, node) if make is not None else self._method_expression(node)

    def _method_expression(self, node):
        interp = self.interp
        method = interp._method("eval_", node)

        def evaluate(scope):
            return method(interp, node, scope)
        return evaluate

    def _name(self, node):
        ident = node.id
        lookup = self.interp.lookup

        def name(scope):
            value = scope.vars.get(ident, _MISSING)
            if value is _MISSING:
                if scope.parent is None:          # lookup's order, inline for a builtin's name at top level
                    value = BUILTINS.get(ident, _MISSING)
                    if value is not _MISSING:
                        return value
                return lookup(ident, scope, node)
            return value
        return name

    def _number(self, node):
        literal = self.interp.eval_Number(node, None)

        def number(scope):
            return literal
        return number

    def _binop(self, node):
        interp = self.interp
        left, right = self.expression(node.left), self.expression(node.right)
        if node.op in ("*", "+") and ast.ListDisplay in (node.left.__class__, node.right.__class__):
            return self._list_literal_binop(node, left, right)
        op_symbol = node.op
        if op_symbol not in _OP_NAMES:                      # & | ^: no one op entry (bool or integer decides)
            binary = interp.binary

            def operator(scope):
                try:
                    return binary(op_symbol, left(scope), right(scope), node)
                except TdfError as e:
                    raise e.locate(node)
            return operator
        op = interp._BINARY[op_symbol]
        op_entry = ops.OPS[_OP_NAMES[op_symbol]]
        binary = interp.binary
        tapes = interp.ctx.tapes
        # A literal beside a float scalar takes its dtype (as the op would make it): kept per dtype here.
        literal_side = 0 if node.left.__class__ is ast.Number else 1 if node.right.__class__ is ast.Number else None
        constants: dict = {}

        def constant(literal, other):
            value = other.value
            cls = value.__class__
            if cls not in _FLOAT_SCALARS or other.weak:
                return literal
            c = constants.get(cls)
            if c is None:
                c = constants[cls] = ops.materialize(literal, value.dtype)
            return c

        def binop(scope):
            a = left(scope)
            b = right(scope)
            try:
                if a.__class__ is Tensor and b.__class__ is Tensor:
                    if literal_side == 1:
                        b = constant(b, a)
                    elif literal_side == 0:
                        a = constant(a, b)
                    if interp.scalar_path and not tapes:     # nothing records: ops.apply's scalar path, directly
                        result = scalar_binary(op_entry, a, b)
                        if result is not None:
                            return result
                    return op(a, b)
                return binary(op_symbol, a, b, node)
            except TdfError as e:
                raise e.locate(node)
        return binop

    def _list_literal_binop(self, node, left, right):
        """``[0.0] * n`` and ``[1, 2] + [3]`` where a bracket literal meets a Python int or another list: Python's
        repetition and concatenation (a literal of numbers is a literal tensor, so these would be elementwise)."""
        interp = self.interp
        sides = (node.left.__class__ is ast.ListDisplay, node.right.__class__ is ast.ListDisplay)

        def binop(scope):
            a, b = left(scope), right(scope)
            try:
                result = list_literal_binary(node.op, a, b, sides)
                return interp.binary(node.op, a, b, node) if result is None else result
            except TdfError as e:
                raise e.locate(node)
        return binop

    def _call(self, node):
        interp = self.interp
        if node.keywords or any(a.__class__ is Starred for a in node.args):
            return self._method_expression(node)
        func = self.expression(node.func)
        args = [self.expression(a) for a in node.args]
        call = interp.call
        call_error = interp.call_error

        def call_positional(scope):
            f = func(scope)
            values = [a(scope) for a in args]
            if f.__class__ is _PYFUNCTION and interp.loop_observer is None:
                fast = getattr(f, "positional", None)
                if fast is not None and not f.wants_interp and fast[0] <= len(values) <= fast[1]:
                    try:
                        return f(*values)        # a builtin whose arguments bind (as call_builtin)
                    except Exception as e:
                        raise call_error(e, node, values) from None
            return call(f, values, {}, node)
        return call_positional

    # ------------------------------------------------------------- statements
    def _block(self, body):
        statements = [self._statement(s) for s in body]
        if len(statements) == 1:
            return statements[0]

        def block(scope):
            for s in statements:
                s(scope)
        return block

    def _statement(self, node):
        make = _STATEMENTS.get(node.__class__)
        run = make(self, node) if make is not None else self._method_statement(node)
        line = node.line
        settings = self.interp.ctx.settings

        def statement(scope):
            settings.line = line
            try:
                run(scope)
            except TdfError as e:
                raise e.locate(node)
            except RecursionError:
                raise LimitError("the program nests too deeply", hint="simplify the expression or the recursion",
                                 line=node.line, column=node.column) from None
        return statement

    def _method_statement(self, node):
        interp = self.interp
        method = interp._method("exec_", node)

        def run(scope):
            method(interp, node, scope)
        return run

    def _expr_stmt(self, node):
        value = self.expression(node.value)

        def expr_stmt(scope):
            value(scope)
        return expr_stmt

    def _assign(self, node):
        interp = self.interp
        if len(node.targets) != 1:
            return self._method_statement(node)
        target = node.targets[0]
        value_node = node.value
        value = self.expression(value_node)
        plan = fusion_plans.plan_of(value_node, interp.program.plans) if value_node.__class__ in _FUSABLE else None
        leaves = plan.leaf_names if plan is not None else ()
        requests = interp.requests
        bind = interp.bind
        implicit = bool(interp.implicit_wrt)
        tapes = interp.ctx.tapes

        scalar_node = value_node.__class__ in (ast.BinOp, ast.Call)
        if scalar_node:
            scalar = _scalar_path(lambda: self._scalar(value_node))
            recorded = _scalar_path(lambda: self._scalar(value_node, record=True))

        def assign(scope):
            result = None
            # scalars on their own paths (fusion takes none while its threshold is over one element)
            if scalar_node and interp.scalar_path and fusion_plans.THRESHOLD > 1:
                if tapes:
                    result = recorded(scope)
                else:
                    raw = scalar(scope)
                    if raw is not None:
                        result = new(Tensor)
                        result.value, result.weak, result.id = raw, False, new_id()
                if result is not None:
                    names = scope.vars
                    if not implicit and target not in scope.consts and names.get(target).__class__ is not Variable:
                        names[target] = result        # (a scalar expression makes no gradient requests)
                        return
            first_request = len(requests)
            if result is None and leaves and _large_leaf(leaves, scope):
                result = fuse(interp, value_node, scope)       # one kernel for a large elementwise expression
            if result is None:
                result = value(scope)
            names = scope.vars
            if (result.__class__ is Tensor and not implicit and target not in scope.consts
                    and names.get(target).__class__ is not Variable):
                names[target] = result            # the common case: a tensor bound to a name
            else:
                bind(scope, target, result, node)
            if len(requests) > first_request and scope is interp.globals:
                interp._name_requests(first_request, result, target)
        return assign

    # ------------------------------------------------- expressions on raw scalars
    def _scalar(self, node, record=False):
        """A function ``f(scope)`` giving the NumPy float scalar ``node`` evaluates to, without a tensor for each
        step, when its names hold strong float scalars of one dtype (the caller checked that nothing records,
        logs or checks ops, as ops.scalar's path requires); None from ``f`` where that does not hold, and None
        instead of ``f`` for a node it cannot take. It takes names, literals beside them, + - * / and calls of
        one-input elementwise builtins: nodes without effects, so giving up midway costs only the work done.
        ``f`` is one generated Python function (ScalarSource), not a closure per node: a loop step calls it once.

        With ``record`` (tapes are open; nothing logs or checks ops), ``f`` gives the value's tensor, and each op's
        tensor and record are made as ops.scalar's recorded path makes them, once every value is computed (so
        giving up still has no effect)."""
        source = ScalarSource(self, record)
        result = source.emit(node)
        return source.function(result) if result is not None else None

    def _while(self, node):
        interp = self.interp
        test_node = node.test
        test = self.expression(test_node)
        body = self.block(node.body)
        always = test_node.__class__ is ast.Constant and test_node.value is True
        check_limits = interp.check_limits
        every = Limits.CHECK_EVERY

        def loop(scope):
            max_steps = interp.limits.max_steps
            while always or truth(test(scope)):
                steps = interp.steps = interp.steps + 1       # interp._step(), inline
                if steps > max_steps or not steps % every:
                    check_limits(steps)
                try:
                    body(scope)
                except _Break:
                    break
                except _Continue:
                    continue
        return loop

    def _for(self, node):
        interp = self.interp
        if len(node.targets) != 1:
            return self._method_statement(node)
        target = node.targets[0]
        iterable = self.expression(node.iter)
        body = self.block(node.body)
        check_limits = interp.check_limits
        every = Limits.CHECK_EVERY
        items_of = interp.loop_items
        bind = interp.bind
        implicit = bool(interp.implicit_wrt)
        shapes = []                   # the body's shape for a loop plan, found the first time one may serve

        def shape():
            if not shapes:
                shapes.append(loop_shape(node))
            return shapes[0]

        def loop(scope):
            names = scope.vars
            max_steps = interp.limits.max_steps
            over = iterable(scope)
            # range(n) and other weak vectors: their elements become weak scalars here, inline (loop_items' way)
            weak_rows = over.__class__ is Tensor and over.weak and over.value.ndim == 1
            items = over.value if weak_rows else items_of(over)
            planner = loop_plans.planner(interp, shape, items, over)
            if planner is not None and planner.count is None:
                items = planner.ahead(items)
            for index, item in enumerate(items):
                if weak_rows:
                    row = item
                    item = new(Tensor)
                    item.value, item.weak, item.id = row, True, new_id()
                steps = interp.steps = interp.steps + 1       # interp._step(), inline
                if steps > max_steps or not steps % every:
                    check_limits(steps)
                if (item.__class__ is Tensor and not implicit and target not in scope.consts
                        and names.get(target).__class__ is not Variable):
                    names[target] = item
                else:
                    bind(scope, target, item, node)
                try:
                    if planner is None:
                        body(scope)
                    else:
                        planner.run(index, body, scope)
                        if planner.failed:          # the rest of the loop runs as written
                            planner = None
                except _Break:
                    break
                except _Continue:
                    continue
        return loop


class ScalarSource:
    """The Python source of one scalar expression (Compiled._scalar): one line per node, each value a local
    ``vN``, every name's scalar of one class ``cls`` (a binary op of two classes is the usual path's), the
    literals in that class from ``literals(cls)``, computed once per class as the ops would make them (values
    ``c``, tensors ``C``). Recording, the lines making each op's tensor ``TvN`` and record come after them."""

    def __init__(self, compiled, record=False):
        self.compiled = compiled
        self.record = record
        self.lines: list[str] = []
        self.recording: list[str] = []          # record: the lines after the values
        self.steps: list[tuple] = []            # record: (value local, op, argument locals) of each op
        self.tensors: dict[str, str] = {}       # record: a value's local -> its tensor's
        self.names: dict[str, str] = {}        # program name -> its local
        self.literals: list = []               # the weak tensors of the expression's literals
        self.constants: dict = {"Tensor": Tensor, "FLOATS": _FLOAT_SCALARS, "BUILTINS": BUILTINS}
        if record:
            ctx = compiled.interp.ctx
            self.constants.update(new=new, new_id=new_id, record=record_on, NO_ATTRS=NO_ATTRS,
                                  tapes=ctx.tapes, settings=ctx.settings)
        self.count = 0

    def _local(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def emit(self, node) -> str | None:
        """The local holding ``node``'s scalar, after the lines computing it; None for a node it cannot take."""
        cls = node.__class__
        if cls is ast.Name:
            return self._name(node.id)
        if cls is ast.BinOp and node.op in _SCALAR_OPERATORS:
            return self._binop(node)
        if (cls is ast.Call and node.func.__class__ is ast.Name and len(node.args) == 1 and not node.keywords
                and node.args[0].__class__ is not Starred):
            return self._call(node)
        return None

    def _name(self, ident: str) -> str:
        local = self.names.get(ident)
        if local is not None:
            return local
        local = self.names[ident] = self._local()
        tensor = self.tensors[local] = f"T{local}"
        first = not self.lines
        self.lines += [f"{tensor} = get({ident!r})",
                       f"if {tensor}.__class__ is not Tensor or {tensor}.weak: return None",
                       f"{local} = {tensor}.value"]
        if first:
            self.lines += [f"cls = {local}.__class__", "if cls not in FLOATS: return None",
                           "m = made.get(cls)", "if m is None: m = literals(cls)", "if m is False: return None",
                           "c, C = m" if self.record else "c = m[0]"]
        else:
            self.lines.append(f"if {local}.__class__ is not cls: return None")
        return local

    def _literal(self, node) -> str:
        self.literals.append(self.compiled.expression(node)(None))
        local = f"c[{len(self.literals) - 1}]"
        self.tensors[local] = f"C[{len(self.literals) - 1}]"
        return local

    def _recorded(self, local: str, op, inputs) -> None:
        """Recording: the lines making ``local``'s tensor and recording ``op`` on ``inputs`` (value locals)."""
        tensor = self.tensors[local] = f"T{local}"
        op_name = f"op{self.count}"
        self.constants[op_name] = op
        arguments = "".join(f"{self.tensors[i]}, " for i in inputs)
        self.steps.append((local, op, inputs))
        self.recording += [f"{tensor} = new(Tensor)", f"{tensor}.value, {tensor}.weak, {tensor}.id = {local}, False, new_id()"]
        if op.differentiable:
            self.recording.append(f"record(tapes, {op_name}, ({arguments}), {tensor}, NO_ATTRS, line)")

    def _binop(self, node) -> str | None:
        left_literal, right_literal = node.left.__class__ is ast.Number, node.right.__class__ is ast.Number
        if left_literal and right_literal:
            return None
        left = self._literal(node.left) if left_literal else self.emit(node.left)
        right = self._literal(node.right) if right_literal else self.emit(node.right)
        if left is None or right is None:
            return None
        local = self._local()
        self.lines.append(f"{local} = {left} {node.op} {right}")
        if self.record:
            self._recorded(local, ops.OPS[_OP_NAMES[node.op]], (left, right))
        return local

    def _call(self, node) -> str | None:
        ident = node.func.id
        function = BUILTINS.get(ident)
        op = _unary_builtins().get(function)
        if op is None:
            return None
        argument = self.emit(node.args[0])
        if argument is None:
            return None
        local = self._local()
        function_name, kernel_name = f"f{self.count}", f"k{self.count}"
        self.constants[function_name], self.constants[kernel_name] = function, RAW_NUMPY_KERNELS[op.kernel]
        self.lines += [f"if {ident!r} in names or BUILTINS.get({ident!r}) is not {function_name}: return None",
                       "try:", f"    {local} = {kernel_name}({argument})",
                       "except Exception: return None      # the usual path words it",
                       f"if {local}.__class__ is not cls: return None"]
        if self.record:
            self._recorded(local, op, (argument,))
        return local

    def _recording_lines(self, result: str) -> list[str]:
        """Recording: the lines making the tensors and records and returning the value's tensor. One statement
        record stands for the ops (ops/statement.py) where it can: with two names or more, only where every tape
        that records the statement would record each op; else each op's tensor and record are made."""
        one_by_one = [*self.recording, f"return {self.tensors[result]}"]
        leaves = list(self.names.values())
        literals = [f"c[{i}]" for i in range(len(self.literals))]
        index = {local: i for i, local in enumerate([*leaves, *literals])}
        steps = []
        for local, op, arguments in self.steps:
            steps.append((op, tuple(index[a] for a in arguments)))
            index[local] = len(leaves) + len(literals) + len(steps) - 1
        statement = statement_op(steps, len(leaves), len(literals))
        if statement is None:
            return one_by_one
        self.constants.update(statement=statement, StatementRecord=StatementRecord)
        tensor = self.tensors[result]
        inputs = "".join(f"{self.tensors[local]}, " for local in [*leaves, *literals])
        lines = ["new_id()"] * (len(steps) - 1) + [       # the ids the ops' values would have had
            f"{tensor} = new(Tensor)", f"{tensor}.value, {tensor}.weak, {tensor}.id = {result}, False, new_id()",
            f"record(tapes, statement, ({inputs}), {tensor}, NO_ATTRS, line, None, StatementRecord)",
            f"return {tensor}"]
        if len(leaves) == 1:        # each op reads the name: recorded on a tape watching it, all of them are
            return lines
        names = "".join(f"{self.tensors[local]}, " for local in leaves)
        return [f"if statement.records_every_op(tapes, ({names})):", *(f"    {line}" for line in lines), *one_by_one]

    def function(self, result: str):
        literals, made = self.literals, {}

        def literals_in(cls):
            """The literals as ``cls`` scalars and tensors, kept in ``made`` (False where one cannot be: the usual
            path words it)."""
            try:
                tensors = tuple(ops.materialize(literal, np.dtype(cls)) for literal in literals)
                made[cls] = (tuple(t.value for t in tensors), tensors)
            except Exception:
                made[cls] = False
            return made[cls]

        if self.record:
            lines = [*self.lines, "line = settings.line", *self._recording_lines(result)]
        else:
            lines = [*self.lines, f"return {result}"]
        body = "\n    ".join(["names = scope.vars", "get = names.get", *lines])
        source = f"def scalar(scope):\n    {body}\n"
        code = _SCALAR_CODE.get(source)
        if code is None:        # the code of a source, made once per process (a bench runs the program again)
            namespace: dict = {}
            exec(compile(source, "<scalar expression>", "exec"), namespace)
            if len(_SCALAR_CODE) >= 4096:      # a long-lived process's many programs: start again
                _SCALAR_CODE.clear()
            code = _SCALAR_CODE[source] = namespace["scalar"].__code__
        return FunctionType(code, dict(self.constants, literals=literals_in, made=made))


def _scalar_path(make):
    """``f(scope)`` trying a statement's generated scalar function (Compiled._scalar), ``make()``'s, which is made
    on the statement's second run (one that runs once does not pay for the source); None where it gives none,
    and then for the next 64 runs (the usual path's)."""
    function = None
    misses = 1

    def attempt(scope):
        nonlocal function, misses
        if misses:
            misses -= 1
            return None
        if function is None:
            function = make() or _no_scalar
        value = function(scope)
        if value is None:
            misses = 64
        return value
    return attempt


def _no_scalar(scope):
    return None


@functools.cache
def _unary_builtins() -> dict:
    """Builtin function -> op, for the one-input elementwise ops whose builtin is exactly ``apply(op, (x,))``:
    the op's own public function, whose code names nothing but ``apply`` and op constants. Made on the first
    compiled call, once the library (imported by the api) has registered the builtins."""
    out = {}
    for op in ops.OPS.values():
        function = getattr(ops, op.public_name, None)
        code = getattr(function, "__code__", None)
        if (op.grads is None or len(op.grads) != 1 or code is None or code.co_argcount != 1
                or op.kernel not in RAW_NUMPY_KERNELS or "apply" not in code.co_names
                or not all(n in ("apply", "OPS") or n.isupper() for n in code.co_names)):
            continue
        if any(BUILTINS.get(name) is function for name in op.program):
            out[function] = op
    return out


def _large_leaf(names, scope) -> bool:
    """Whether an expression's leaves include a tensor large enough for fusion (checked before asking it)."""
    threshold = fusion_plans.THRESHOLD
    for name in names:
        value = scope.vars.get(name, _MISSING)
        if value is _MISSING:
            value = scope.get(name, None)
        if value.__class__ is Tensor:
            if value.value.size >= threshold:
                return True
        elif value.__class__ is Variable:
            if value.read().value.size >= threshold:
                return True
    return False


_EXPRESSIONS = {ast.Name: Compiled._name, ast.Number: Compiled._number, ast.BinOp: Compiled._binop,
                ast.Call: Compiled._call}
_SCALAR_OPERATORS = ("+", "-", "*", "/")
_SCALAR_CODE: dict = {}         # ScalarSource's source -> its compiled code
_STATEMENTS = {ast.ExprStmt: Compiled._expr_stmt, ast.Assign: Compiled._assign, ast.While: Compiled._while,
               ast.For: Compiled._for}
