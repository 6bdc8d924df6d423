"""The interpreter's compiled form: each node becomes, the first time it runs, a Python closure
``f(scope)`` that calls its children's closures directly, so a loop pays no per-node dispatch on the
node's type. The hot nodes (names, literals, arithmetic, calls, assignment, loops) get closures of
their own; every other node's closure calls its ``eval_``/``exec_`` method, which stays the one
definition of its meaning.
"""
from __future__ import annotations

from collections import deque
from itertools import islice

from tapecli import ops
from tapecli.errors import LimitError, TdfError
from tapecli.frontend import ast
from tapecli.frontend.ast import Starred
from tapecli.fusion import plan as fusion_plans
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.objects import _FUSABLE, _MISSING, _Break, _Continue
from tapecli.interpreter.expressions import list_literal_binary
from tapecli.interpreter.objects import _PYFUNCTION
from tapecli.interpreter.registry import BUILTINS, DISPATCH, builtin_result
from tapecli.ops.scalar import FLOAT_SCALARS, OP_NAMES, scalar_binary
from tapecli.runtime.limits import Limits
from tapecli.runtime.values import Tensor, Variable, new_id
from tapecli.lazymodule import LazyModule

# The parts of the interpreter a straight-line program never uses, imported where a run first needs them
# (docs/performance.md, "Start-up"); bound in globals() where the name is the module's, so that later reads are a
# plain module's
loop_plans = LazyModule("tapecli.interpreter.loop_plans", globals())      # a loop's iterations as kernel calls
loop_shape = LazyModule("tapecli.interpreter.loop_shape", globals())      # what a loop's body does, for its plan
fusion = LazyModule("tapecli.fusion.core")                                # one kernel for a large elementwise expression
scalar_source = LazyModule("tapecli.interpreter.scalar_source", globals())   # a scalar statement as generated code

new = Tensor.__new__



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

    def statement(self, node):
        entry = self.code.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self.code[id(node)] = (node, self._statement(node))
        return entry[1]

    # ------------------------------------------------------------ expressions
    def _expression(self, node):
        make = _EXPRESSIONS.get(node.__class__) if self.interp.ctx.mode.compiled_closures else None
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
        if op_symbol not in OP_NAMES:                      # & | ^: no one op entry (bool or integer decides)
            binary = interp.binary

            def operator(scope):
                try:
                    return binary(op_symbol, left(scope), right(scope), node)
                except TdfError as e:
                    raise e.locate(node)
            return operator
        op = interp._BINARY[op_symbol]
        op_entry = ops.OPS[OP_NAMES[op_symbol]]
        binary = interp.binary
        ctx = interp.ctx
        tapes = ctx.tapes
        mode = ctx.mode
        # A literal beside a float scalar takes its dtype (as the op would make it): kept per dtype here.
        literal_side = 0 if node.left.__class__ is ast.Number else 1 if node.right.__class__ is ast.Number else None
        constants: dict = {}

        def constant(literal, other):
            value = other.value
            cls = value.__class__
            if cls not in FLOAT_SCALARS or other.weak:
                return literal
            c = constants.get(cls)
            if c is None:
                c = constants[cls] = ops.materialize(literal, value.dtype)
            return c

        def binop(scope):
            a = left(scope)
            b = right(scope)
            try:
                # (NumPy's promotion, once a program switches it on, is the interpreter's binary's)
                if a.__class__ is Tensor and b.__class__ is Tensor and ctx.numpy_behavior is None:
                    if literal_side == 1:
                        b = constant(b, a)
                    elif literal_side == 0:
                        a = constant(a, b)
                    if mode.scalar_path and not tapes:     # nothing records: ops.apply's scalar path, directly
                        result = scalar_binary(op_entry, a, b)
                        if result is not None:
                            return result
                    return op(a, b)
                return binary(op_symbol, a, b, node)
            except TdfError as e:
                raise interp.name_operands(e, node).locate(node)
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
        mode = interp.ctx.mode

        def call_positional(scope):
            f = func(scope)
            values = [a(scope) for a in args]
            if f.__class__ is _PYFUNCTION and mode.direct_calls:
                fast = getattr(f, "positional", None)
                if fast is not None and not f.wants_interp and fast[0] <= len(values) <= fast[1] \
                        and not (values and (values[0].__class__ is Tensor and values[0].weak
                                             or values[0].__class__ is list)) \
                        and not (DISPATCH and id(f) in DISPATCH):      # (a ragged tensor's handler first)
                    try:
                        result = f(*values)      # a builtin whose arguments bind (as call_builtin)
                    except Exception as e:
                        raise call_error(e, node, values) from None
                    return builtin_result(f, interp, node, values, result)
            return call(f, values, {}, node)
        return call_positional

    # ------------------------------------------------------------- statements
    def _block(self, body):
        statements = [self.statement(s) for s in body]
        if len(statements) == 1:
            return statements[0]

        def block(scope):
            for s in statements:
                s(scope)
        return block

    def _statement(self, node):
        make = _STATEMENTS.get(node.__class__) if self.interp.ctx.mode.compiled_closures else None
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

    def _aug_assign(self, node):
        method = self.interp.aug_assign_name if ast.simple_names(node) else self.interp.aug_assign_target

        def run(scope):
            method(node, scope)
        return run

    def _expr_stmt(self, node):
        value = self.expression(node.value)

        def expr_stmt(scope):
            value(scope)
        return expr_stmt

    def _assign(self, node):
        interp = self.interp
        target = ast.single_name(node)
        if target is None:
            return self._method_statement(node)
        value_node = node.value
        value = self.expression(value_node)
        plan = fusion_plans.plan_of(value_node, interp.program.plans) if value_node.__class__ in _FUSABLE else None
        leaves = plan.leaf_names if plan is not None else ()
        requests = interp.requests
        bind = interp.bind
        implicit = bool(interp.implicit_wrt)
        tapes = interp.ctx.tapes
        mode = interp.ctx.mode

        scalar_node = value_node.__class__ in (ast.BinOp, ast.Call)
        if scalar_node:
            scalar = _scalar_path(lambda: self._scalar(value_node))
            recorded = _scalar_path(lambda: self._scalar(value_node, record=True))

        def assign(scope):
            result = None
            # scalars on their own paths (fusion takes none while its threshold is over one element)
            if scalar_node and mode.scalar_path and fusion_plans.THRESHOLD > 1:
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
            first_request = requests.mark()
            if result is None and leaves and _large_leaf(leaves, scope):
                result = fusion.evaluate(interp, value_node, scope)       # one kernel for a large elementwise expression
            if result is None:
                result = value(scope)
            names = scope.vars
            if (result.__class__ is Tensor and not implicit and target not in scope.consts
                    and names.get(target).__class__ is not Variable):
                names[target] = result            # the common case: a tensor bound to a name
            else:
                bind(scope, target, result, node)
            if requests.made > first_request and scope is interp.globals:
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
        source = scalar_source.ScalarSource(self, record)
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
        target = ast.single_name(node)
        if target is None:
            return self._method_statement(node)
        iterable = self.expression(node.iter)
        body = self.block(node.body)
        check_limits = interp.check_limits
        every = Limits.CHECK_EVERY
        items_of = interp.loop_items
        bind = interp.bind
        implicit = bool(interp.implicit_wrt)
        tapes = interp.ctx.tapes
        settings = interp.ctx.settings
        mode = interp.ctx.mode
        shapes = []                   # the body's shape for a loop plan, found the first time one may serve
        scalars = {}                  # recording or not -> the body as one generated loop (scalar_loop), or None

        def shape():
            if not shapes:
                shapes.append(loop_shape.loop_shape(node))
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
            misses = 0                # the generated loop's tries that stopped short (64: no more)

            def bind_row(index):
                item = new(Tensor)
                item.value, item.weak, item.id = items[index], True, new_id()
                names[target] = item
            iterator = enumerate(items)
            for index, item in iterator:
                if weak_rows and index and planner is None and misses < 64 and not implicit \
                        and mode.scalar_path and fusion_plans.THRESHOLD > 1 and target not in scope.consts \
                        and names.get(target).__class__ is not Variable:
                    record = bool(tapes)
                    if record not in scalars:
                        scalars[record] = scalar_source.scalar_loop(self, node, record)
                    generated = scalars[record]
                    if generated is None:
                        misses = 64           # (a body it cannot take: not asked again at every iteration)
                    else:
                        stop, statement = generated(scope, len(items), index, interp, check_limits, max_steps,
                                                    every, bind_row, settings)
                        if stop > index or statement >= 0:
                            for rest in node.body[statement:] if statement >= 0 else ():
                                self.statement(rest)(scope)        # (assignments: no break, no continue)
                            if stop == len(items):
                                break
                            deque(islice(iterator, stop - index), maxlen=0)     # (the items up to stop ran)
                            misses += 1
                            continue
                        misses += 1
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
_STATEMENTS = {ast.ExprStmt: Compiled._expr_stmt, ast.Assign: Compiled._assign, ast.AugAssign: Compiled._aug_assign,
               ast.While: Compiled._while, ast.For: Compiled._for}
