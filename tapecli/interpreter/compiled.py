"""The interpreter's compiled form: each node becomes, the first time it runs, a Python closure
``f(scope)`` that calls its children's closures directly, so a loop pays no per-node dispatch on the
node's type. The hot nodes (names, literals, arithmetic, calls, assignment, loops) get closures of
their own; every other node's closure calls its ``eval_``/``exec_`` method, which stays the one
definition of its meaning.
"""
from __future__ import annotations

import operator

import numpy as np

from tapecli import ops
from tapecli.errors import LimitError, TdfError
from tapecli.frontend import ast
from tapecli.frontend.pyast import Starred
from tapecli.fusion import plan as fusion_plans
from tapecli.fusion.core import evaluate as fuse
from tapecli.interpreter.library.core import truth
from tapecli.interpreter.objects import _FUSABLE, _MISSING, _Break, _Continue
from tapecli.interpreter.objects import _PYFUNCTION
from tapecli.interpreter.registry import BUILTINS
from tapecli.ops.scalar import scalar_binary
from tapecli.runtime.limits import Limits
from tapecli.kernels import RAW_NUMPY_KERNELS
from tapecli.runtime.values import Tensor, Variable, make_tensor

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
        op_symbol = node.op
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
            if f.__class__ is _PYFUNCTION:
                fast = getattr(f, "positional", None)
                if fast is not None and not f.wants_interp and fast[0] <= len(values) <= fast[1]:
                    try:
                        return f(*values)        # a builtin whose arguments bind (as call_builtin)
                    except Exception as e:
                        raise call_error(e, node) from None
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
        plan = fusion_plans.analyze(value_node) if value_node.__class__ in _FUSABLE else None
        leaves = plan.leaf_names if plan is not None else ()
        requests = interp.requests
        bind = interp.bind
        implicit = bool(interp.implicit_wrt)
        scalar = self._scalar(value_node) if value_node.__class__ in (ast.BinOp, ast.Call) else None
        tapes = interp.ctx.tapes

        misses = 0          # after a miss, the raw path waits a while before it tries again

        def assign(scope):
            nonlocal misses
            first_request = len(requests)
            result = None
            # scalars on their own path (fusion takes none while its threshold is over one element)
            if scalar is not None and interp.scalar_path and not tapes and fusion_plans.THRESHOLD > 1:
                if misses:
                    misses -= 1
                else:
                    raw = scalar(scope)
                    if raw is not None:
                        result = make_tensor(raw)
                    else:
                        misses = 64
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
    def _scalar(self, node):
        """A closure ``f(scope)`` giving the NumPy float scalar ``node`` evaluates to, without a tensor for each
        step, when its names hold strong float scalars of one dtype (the caller checked that nothing records,
        logs or checks ops, as ops.scalar's path requires); None from ``f`` where that does not hold, and None
        instead of ``f`` for a node it cannot take. It takes names, literals beside them, + - * / and calls of
        one-input elementwise builtins: nodes without effects, so giving up midway costs only the work done."""
        cls = node.__class__
        if cls is ast.Name:
            ident = node.id

            def name(scope):
                value = scope.vars.get(ident)
                if value.__class__ is Tensor and not value.weak and value.value.__class__ in _FLOAT_SCALARS:
                    return value.value
                return None
            return name
        if cls is ast.BinOp and node.op in _SCALAR_OPERATORS:
            return self._scalar_binop(node)
        if (cls is ast.Call and node.func.__class__ is ast.Name and len(node.args) == 1 and not node.keywords
                and node.args[0].__class__ is not Starred):
            return self._scalar_call(node)
        return None

    def _scalar_binop(self, node):
        operate = _SCALAR_OPERATORS[node.op]
        literal = None
        if node.right.__class__ is ast.Number:
            literal, other = self.expression(node.right)(None), self._scalar(node.left)
        elif node.left.__class__ is ast.Number:
            literal, other = self.expression(node.left)(None), self._scalar(node.right)
        if literal is not None:
            if other is None:
                return None
            constants: dict = {}
            literal_right = node.right.__class__ is ast.Number

            def with_literal(scope):
                a = other(scope)
                if a is None:
                    return None
                c = constants.get(a.__class__)
                if c is None:        # the literal in the scalar's dtype, as the op would make it
                    c = constants[a.__class__] = ops.materialize(literal, a.dtype).value
                return operate(a, c) if literal_right else operate(c, a)
            return with_literal
        left, right = self._scalar(node.left), self._scalar(node.right)
        if left is None or right is None:
            return None

        def binop(scope):
            a = left(scope)
            if a is None:
                return None
            b = right(scope)
            return operate(a, b) if b.__class__ is a.__class__ else None
        return binop

    def _scalar_call(self, node):
        ident = node.func.id
        function = BUILTINS.get(ident)
        op = _UNARY_BUILTINS.get(function)
        argument = self._scalar(node.args[0])
        if op is None or argument is None:
            return None
        kernel = RAW_NUMPY_KERNELS[op.kernel]

        def call(scope):
            if ident in scope.vars or BUILTINS.get(ident) is not function:
                return None          # the name is the program's own, or another builtin now
            a = argument(scope)
            if a is None:
                return None
            try:
                out = kernel(a)
            except Exception:        # the usual path words it
                return None
            return out if out.__class__ is a.__class__ else None
        return call

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

        def loop(scope):
            names = scope.vars
            max_steps = interp.limits.max_steps
            for item in items_of(iterable(scope)):
                steps = interp.steps = interp.steps + 1       # interp._step(), inline
                if steps > max_steps or not steps % every:
                    check_limits(steps)
                if (item.__class__ is Tensor and not implicit and target not in scope.consts
                        and names.get(target).__class__ is not Variable):
                    names[target] = item
                else:
                    bind(scope, target, item, node)
                try:
                    body(scope)
                except _Break:
                    break
                except _Continue:
                    continue
        return loop


def _unary_builtins() -> dict:
    """Builtin function -> op, for the one-input elementwise ops whose builtin is exactly ``apply(op, (x,))``:
    the op's own public function, whose code names nothing but ``apply`` and op constants."""
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
_SCALAR_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
_UNARY_BUILTINS = _unary_builtins()
_STATEMENTS = {ast.ExprStmt: Compiled._expr_stmt, ast.Assign: Compiled._assign, ast.While: Compiled._while,
               ast.For: Compiled._for}
