"""Statements: declarations, assignment, tapes, control flow, functions, expectations."""
from __future__ import annotations

import time

import numpy as np

from tapecli.frontend import ast, forms, spellings
from tapecli import ops
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.registry import HOOKS, literal_list, named
from tapecli.errors import (LimitError, TapeError, TdfNameError, TdfTypeError, TdfValueError, UsageError)
from tapecli.ops.core import _tensor as new_tensor
from tapecli.runtime.context import current
from tapecli.runtime.tape import Tape, as_tensor, paused, recording, type_word
from tapecli.runtime.values import (NumpyArray, PythonBool, Tensor, Variable, convert_weak, tf_tensor, dtype_name,
                                    requested_dtype, is_float, DTYPES, DTYPE_ALIASES)
from tapecli.interpreter.objects import (_FUSABLE, CustomGradientFunction, Function, PausedTape, ProgramObject,
                                         Property, Scope, TapeObject, _Break,
                                         _Continue, _Return)
from tapecli.runtime.limits import Limits, admit_pieces, check_deadline, resident_within
from tapecli.runtime import spelling
from tapecli.lazymodule import LazyModule

# (as compiled.py's: imported by the first loop plan or fused expression a run makes)
loop_plans = LazyModule("tapecli.interpreter.loop_plans", globals())
loop_shape = LazyModule("tapecli.interpreter.loop_shape", globals())
fusion = LazyModule("tapecli.fusion.core")


def _alias_of(names: dict, name: str, variable) -> bool:
    """Whether ``name`` held ``variable`` as an alias (``y = x``): the name it was first bound to is another, and
    still holds it here (``names``: the scope's). Rebinding an alias (``y = sin(y)``) leaves the variable as it
    was, under its own name; a function's parameter holding the caller's variable is no alias in the function's
    scope (``v = v - lr * g`` there is the mistake the warning is for), nor is the name of a variable a function
    made and returned."""
    first = variable.bound_as
    return first is not None and first != name and names.get(first) is variable


def note_binding(names: dict, name: str, old, value, line, declared: bool = False) -> None:
    """What binding ``value`` to ``name`` (which held ``old``; ``names``: the scope's) tells: a variable's name
    rebound to a tensor is a warning (and, for explain, a rebinding); a variable's first name is kept."""
    if not declared and isinstance(old, Variable) and not isinstance(value, Variable) \
            and not _alias_of(names, name, old):
        ctx = current()
        ctx.settings.warn(f"{name} was a variable, now a tensor: did you mean {name}.assign_add(...) "
                          f"or {name}.assign(...)?", line)
        if ctx.provenance.enabled:
            ctx.provenance.rebinds[name] = (line, old.name)
    if value.__class__ is Variable and value.bound_as is None:
        value.bound_as = name


def _bound_names(body) -> set[str]:
    names = set()
    for node in ast.walk(body):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            names.update(ast.simple_names(node) or ())
        elif isinstance(node, (ast.VarDecl, ast.ConstDecl)):
            names.add(node.name)
    return names


# The decorators the interpreter knows (a program using another runs on CPython: execution.tensorflow).
DECORATORS = frozenset({"function", "property", "custom_gradient"})


class Statements:
    """The interpreter's ``exec_<node>`` methods (mixed into :class:`Interpreter`)."""

    def exec_ExprStmt(self, node, scope):
        self.eval(node.value, scope)

    def exec_Pass(self, node, scope):
        pass

    def _declared_value(self, node, scope, annotation: str | None):
        ctx = current()
        dtype = self._dtype_of_annotation(annotation, node) if annotation else None
        saved = ctx.settings.float_dtype
        if dtype is not None and is_float(dtype):
            ctx.settings.float_dtype = dtype     # literals and constructors follow the annotation
        try:
            value = self.eval(node.value, scope)
        finally:
            ctx.settings.float_dtype = saved
        value = as_tensor(value) if isinstance(value, Variable) else value
        if isinstance(value, list):     # a list of Python numbers: a literal, which takes the declared dtype
            value = literal_list(value)
        if isinstance(value, (list, str)):            # numbers beside calls: tf.constant([1.0, float("inf")]); text
            value = named("constant")(value)
        if not isinstance(value, Tensor):
            raise TdfTypeError(f"{node.name} must be declared with a tensor, got {type_word(value)}")
        if node.name in self.overrides:
            value = self._override(node.name, value, dtype)
        if value.weak:
            value = Tensor(convert_weak(value.value, dtype if dtype is not None else ops.default_dtype(value.value)))
        elif dtype is not None and value.dtype != dtype and isinstance(value, (NumpyArray, PythonBool)):
            from tapecli.interpreter.printing import program_repr
            value = Tensor(requested_dtype(value, dtype, program_repr(value), value.__class__ is NumpyArray))
        elif dtype is not None and value.dtype != dtype:
            raise TdfTypeError(f"{node.name} is declared {dtype_name(dtype)} but its value is "
                               f"{dtype_name(value.dtype)}", hint=f"use {spelling.cast('...', dtype_name(dtype))}")
        return tf_tensor(value)

    def _override(self, name, declared: Tensor, dtype) -> Tensor:
        """A --set value takes the declaration's dtype: the annotation's, else the declared value's."""
        raw = self.overrides[name]
        target = dtype if dtype is not None else (ops.default_dtype(declared.value) if declared.weak else declared.dtype)
        arr = np.asarray(raw)
        if arr.size and (arr.dtype.kind == "b") != (target.kind == "b"):      # no silent 0.5 -> True, true -> 1.0
            raise UsageError(f"--set {name}: {name} is {dtype_name(target)}, so the value must be "
                             + ("true or false" if target.kind == "b" else "numbers, not true or false"))
        if arr.dtype.kind == "f" and target.kind in "iu" and not np.all(np.equal(np.mod(arr, 1), 0)):
            raise UsageError(f"--set {name}: the value is not an integer, but {name} is {dtype_name(target)}")
        if target.kind in "iu" and arr.size and arr.dtype.kind in "iuf":
            bounds = np.iinfo(target)
            low, high = arr.min(), arr.max()
            if low < bounds.min or high > bounds.max:
                bad = low if low < bounds.min else high
                shown = int(bad) if arr.dtype.kind in "iu" else f"{bad:.17g}"
                raise UsageError(f"--set {name}: {shown} does not fit {dtype_name(target)} "
                                 f"({bounds.min} to {bounds.max})")
        if target.kind == "f" and arr.dtype.kind == "f" and target.itemsize < arr.dtype.itemsize:
            return Tensor(_narrowed(name, arr, target))
        return Tensor(arr.astype(target, copy=False))   # no copy of a large --set value of the right dtype

    def _dtype_of_annotation(self, annotation: str, node) -> np.dtype:
        name = DTYPE_ALIASES.get(annotation, annotation)
        if name not in DTYPES:
            why = HOOKS["out_of_scope"](f"tf.{annotation}") if "out_of_scope" in HOOKS else None
            if why is not None:                # tf.complex64, tf.int8, tf.string: the scope table's reason
                raise TdfTypeError(f"dtype {annotation} is out of scope for tapecli: {why}",
                                   hint="use float32, float64, int32, int64 or bool")
            raise TdfTypeError(f"unknown dtype {annotation}", hint="use float32, float64, int32, int64 or bool")
        return DTYPES[name]

    def exec_VarDecl(self, node, scope):
        options = {kw.name: self.eval(kw.value, scope) for kw in node.options}
        unknown = set(options) - {"trainable", *(("name",) if current().settings.python_spelling else ())}
        if unknown:
            raise TdfTypeError(f"var has no option {sorted(unknown)[0]}", hint="the option is var(trainable=False)")
        trainable = truth(options.get("trainable", True))
        value = self._declared_value(node, scope, node.dtype)
        tf_name = options.get("name")
        var = Variable(node.name, value.value, trainable=trainable, tf_name=tf_name if isinstance(tf_name, str) else None)
        self.bind(scope, node.name, var, node, declared=True)

    def exec_ConstDecl(self, node, scope):
        value = self._declared_value(node, scope, node.dtype)
        self.bind(scope, node.name, value, node, declared=True)
        scope.consts.add(node.name)

    def bind(self, scope: Scope, name: str, value, node, declared=False):
        if (value.__class__ is Tensor and not declared and name not in scope.consts and not self.implicit_wrt
                and scope.vars.get(name).__class__ is not Variable):
            scope.vars[name] = value        # the common case: a tensor bound to a name
            return
        if name in scope.consts and not declared:
            raise TdfTypeError(f"{name} is a constant and cannot be assigned",
                               hint=f"use another name, or declare it with {spelling.declaration('var', name, '...')}")
        if declared:
            scope.consts.discard(name)
        note_binding(scope.vars, name, scope.vars.get(name), value, node.line, declared)
        if isinstance(value, ProgramObject) and hasattr(value, "bind_name"):
            value.bind_name(name)       # a layer or model names its variables after its first binding
        scope.vars[name] = value
        if scope is self.globals and name in self.implicit_wrt and self.implicit_tape is not None:
            self._watch_on(self.implicit_tape, value, name, node)

    def exec_Assign(self, node, scope):
        targets = ast.simple_names(node)
        if targets is None:
            return self.assign_targets(node, scope)
        first_request = self.requests.mark()
        value = fusion.evaluate(self, node.value, scope) if (node.value.__class__ in _FUSABLE
                                                            and current().mode.fusion) else None
        if value is None:               # (fusion: one kernel for a large elementwise expression)
            value = self.eval(node.value, scope)
        if len(targets) == 1:
            self.bind(scope, targets[0], value, node)
            names = targets[0]
        else:
            items = self._destructure(value, len(targets))
            for name, item in zip(targets, items):
                self.bind(scope, name, item, node)
            names = targets
        if scope is self.globals and self.requests.mark() > first_request:
            self._name_requests(first_request, value, names)

    def _destructure(self, value, n):
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif isinstance(value, Tensor) and value.ndim >= 1:
            if value.shape[0] != n:         # before a row is made: a, b = range(10 ** 8)
                raise TdfValueError(f"cannot unpack {value.shape[0]} values into {n} names")
            items = [Tensor(value.value[i], weak=True) if value.weak else NumpyArray(np.asarray(value.value[i]))
                     if value.__class__ is NumpyArray else ops.getitem(value, i) for i in range(value.shape[0])]
        else:
            raise TdfTypeError(f"cannot unpack {type_word(value)} into {n} names")
        if len(items) != n:
            raise TdfValueError(f"cannot unpack {len(items)} values into {n} names")
        return items

    def exec_AugAssign(self, node, scope):
        (self.aug_assign_name if ast.simple_names(node) else self.aug_assign_target)(node, scope)

    def aug_assign_name(self, node, scope):
        """``x += v`` (+ - * /): simple_names' form."""
        name = node.target.id
        old = self.lookup(name, scope, node)
        value = self.augmented(node.op, old, self.eval(node.value, scope), node)
        self.bind(scope, name, value, node)

    def _current_tape(self, name, node, scope) -> Tape:
        if name is not None:
            obj = self.lookup(name, scope, node)
            if not isinstance(obj, TapeObject):
                raise TdfTypeError(f"{name} is not a tape, it is {type_word(obj)}")
            return obj.tape
        user_tapes = [t for t in current().tapes if t is not self.implicit_tape]
        if not user_tapes:
            raise TapeError("watch outside a tape block",
                            hint=spelling.either("put it inside `tape t:`, or name one: watch x in t",
                                                 "call t.watch(x) inside `with tf.GradientTape() as t:`"))
        return user_tapes[-1]

    def exec_Watch(self, node, scope):
        tape = self._current_tape(node.tape, node, scope)
        values = []
        for item in node.items:
            value = self.eval(item, scope)
            if isinstance(value, Tensor) and value.weak and isinstance(item, ast.Name):
                value = ops.materialize(value)
                scope.vars[item.id] = value
            values.append(value)
        self.watch_values(tape, values, node.items, node)

    def watch_values(self, tape: Tape, values: list, items: list, node):
        """``watch`` and ``tape.watch(...)``: each value (its expression in ``items``) on ``tape``."""
        if not tape.open:
            raise TapeError(f"tape {tape.name} is not open here", hint=f"watch inside the block of tape {tape.name}")
        for value, item in zip(values, items):
            self._watch_on(tape, value, self.text(item), node)

    def _watch_on(self, tape: Tape, value, label, node):
        ctx = current()
        if isinstance(value, Variable):
            if not is_float(value.dtype):
                ctx.settings.warn(f"the watched tensor must be floating, got {dtype_name(value.dtype)}: "
                           f"gradients w.r.t. {label} will be None", node.line)
            tape.watch_variable(value, "watch", node.line)
        elif isinstance(value, Tensor):
            if not tape.watch_tensor(ops.materialize(value) if value.weak else value, label, node.line):
                ctx.settings.warn(f"the watched tensor must be floating, got {dtype_name(value.dtype)}: "
                           f"gradients w.r.t. {label} will be None", node.line)
        elif isinstance(value, (list, tuple)):
            if not value and ctx.provenance.enabled:
                ctx.provenance.tape(tape).empty_watches.append((node.line, label))
            for i, item in enumerate(value):
                self._watch_on(tape, item, item.name if isinstance(item, Variable) else f"{label}[{i}]", node)
        else:
            raise TdfTypeError(f"watch takes tensors, variables or lists of them; {label} is {type_word(value)}")

    def exec_Reset(self, node, scope):
        self.reset_tape(self._current_tape(node.tape, node, scope), node)

    def reset_tape(self, tape: Tape, node):
        """``reset t`` and ``t.reset()``."""
        ctx = current()
        tape.reset()
        tape.used_at = None
        if ctx.provenance.enabled:
            ctx.provenance.tape(tape).resets.append((ctx.provenance.now, node.line))
        if tape.open:
            tape.paused = False

    def exec_TapeBlock(self, node, scope):
        options = {kw.name: self.eval(kw.value, scope) for kw in node.options}
        unknown = set(options) - {"persistent", "watch_accessed_variables"}
        if unknown:
            raise TdfTypeError(f"tape has no option {sorted(unknown)[0]}",
                               hint="options are persistent= and watch_accessed_variables=")
        tape = Tape(node.name, persistent=truth(options.get("persistent", False)),
                    watch_accessed_variables=truth(options.get("watch_accessed_variables", True)), line=node.line)
        self.tapes.append(tape)
        self.bind(scope, node.name, TapeObject(tape, self), node)
        with recording(tape, noted=True):
            self.exec_block(node.body, scope)

    def exec_StopRecording(self, node, scope):
        self.run_paused(self._current_tape(node.tape, node, scope), node.body, node, scope)

    def run_paused(self, tape: Tape, body, node, scope):
        """``stop_recording t:`` and ``with t.stop_recording():``: the block, with ``tape`` not recording."""
        with paused(tape, node.line):
            self.exec_block(body, scope)

    def exec_With(self, node, scope):
        """A `with` the parser could not make a TDF block: a tape's stop_recording() reached another way
        (``with tapes[0].stop_recording():``); spellings.py refuses every other context."""
        (context, bound), rest = node.items[0], node.items[1:]
        paused = self.eval(context, scope)
        if isinstance(paused, ProgramObject) and hasattr(paused, "enter"):    # ForwardAccumulator, tf.name_scope...
            entered = paused.enter()
            if bound is not None:
                if not isinstance(bound, ast.Name):
                    raise TdfTypeError("`with ... as NAME`: bind the context to a name").locate(node)
                self.bind(scope, bound.id, entered, node)
            try:
                self.exec_block([ast.With(rest, node.body, **forms.position(node))] if rest else node.body, scope)
            finally:
                paused.exit()
            return
        if not isinstance(paused, PausedTape):
            raise TdfTypeError(f"a `with` statement here needs a tape's stop_recording(), not {type_word(paused)}")
        body = [ast.With(rest, node.body, **forms.position(node))] if rest else node.body
        self.run_paused(paused.tape, body, node, scope)

    def exec_If(self, node, scope):
        ctx = current()
        bodies = [body for _, body in node.branches] + [node.orelse or []]
        taken = len(node.branches)
        for i, (cond, _) in enumerate(node.branches):
            if truth(self.eval(cond, scope)):
                taken = i
                break
        if ctx.provenance.enabled:
            untaken = {n for i, body in enumerate(bodies) if i != taken for n in _bound_names(body)}
            ctx.provenance.untaken.append((node.line, untaken))
        self.exec_block(bodies[taken], scope)

    def _step(self):
        steps = self.steps = self.steps + 1
        if steps > self.limits.max_steps or not steps % Limits.CHECK_EVERY:
            self.check_limits(steps)

    def check_limits(self, steps):
        """At a step past --max-steps, or every ``Limits.CHECK_EVERY`` steps: the limits' checks."""
        if steps > self.limits.max_steps:
            raise LimitError(f"the program ran more than {self.limits.max_steps:,} loop steps and calls",
                             hint="is a loop endless? raise the limit with --max-steps N")
        if not steps % Limits.CHECK_EVERY:
            self._check_time_and_memory()

    def _check_time_and_memory(self):
        limits = self.limits
        check_deadline()
        now = time.monotonic()
        if now < self.memory_due:
            return
        self.memory_due = now + Limits.MEMORY_EVERY_S
        used = current().settings.resident_bound = resident_within(limits.max_memory)
        if used > limits.max_memory:
            raise LimitError(f"the program uses {used / 2**30:.1f} GiB, over the memory limit of "
                             f"{limits.max_memory / 2**30:.1f} GiB", hint="raise it with TAPECLI_MAX_MEMORY=BYTES")

    def exec_While(self, node, scope):
        # Names bound once: an endless loop must reach --max-steps (10,000,000) quickly.
        test, body, evaluate, step, run_block = node.test, node.body, self.eval, self._step, self.exec_block
        while truth(evaluate(test, scope)):
            step()
            try:
                run_block(body, scope)
            except _Break:
                break
            except _Continue:
                continue

    def loop_items(self, iterable, collected: bool = False):
        """The items a ``for`` loop, a comprehension or a ``*`` spread takes, one by one: the one iteration rule.
        ``collected``: the caller keeps every item (a comprehension, a spread), so a tensor's rows are weighed
        against the limits before they are made (ops.rows); a loop takes them one at a time."""
        if isinstance(iterable, Variable):
            iterable = iterable.read()
        if isinstance(iterable, Tensor):
            if iterable.ndim == 0:
                raise TdfTypeError("cannot loop over a scalar", hint="use range(n)")
            if collected:
                return ops.rows(iterable)
            if iterable.weak:
                return (new_tensor(row, True) for row in iterable.value)
            if iterable.__class__ is NumpyArray:       # (NumPy's rows: arrays, or NumPy scalars)
                return (NumpyArray(np.asarray(row)) for row in iterable.value)
            return (ops.getitem(iterable, i) for i in range(iterable.shape[0]))
        if isinstance(iterable, (list, tuple)):
            return list(iterable)
        if isinstance(iterable, dict):
            return [Tensor(np.array(k), weak=True) if not isinstance(k, str) else k for k in iterable]   # Python numbers
        if isinstance(iterable, str):
            if not collected:
                return iterable
            admit_pieces(len(iterable), iterable, f"the characters of a string of {len(iterable):,}")
            return list(iterable)
        if isinstance(iterable, ProgramObject):
            return iterable.items()
        raise TdfTypeError(f"cannot loop over {type_word(iterable)}")

    def exec_For(self, node, scope):
        targets = ast.simple_names(node)
        if targets is None:
            return self.for_each(node, scope)
        over = self.eval(node.iter, scope)
        items = self.loop_items(over)
        planner = loop_plans.planner(self, lambda: loop_shape.loop_shape(node), items, over)     # (for xb, yb in batches:)
        if planner is not None and planner.count is None:
            items = planner.ahead(items)
        body = self.compiled.block(node.body)
        for index, item in enumerate(items):
            self._step()
            if len(targets) == 1:
                self.bind(scope, targets[0], item, node)
            else:
                for name, sub in zip(targets, self._destructure(item, len(targets))):
                    self.bind(scope, name, sub, node)
            try:
                if planner is None:
                    body(scope)
                else:
                    planner.run(index, body, scope)
                    if planner.failed:
                        planner = None
            except _Break:
                break
            except _Continue:
                continue

    def exec_Break(self, node, scope):
        raise _Break()

    def exec_Continue(self, node, scope):
        raise _Continue()

    def exec_Return(self, node, scope):
        raise _Return(None if node.value is None else self.eval(node.value, scope))

    def exec_FuncDef(self, node, scope):    # (DECORATORS: each decorator's last dotted part)
        kind, wrap, traced = Function, None, False
        for deco in node.decorators:
            if deco == "function":
                self._warn_traced_side_effects(node)
                traced = True
                continue
            if deco == "property":
                wrap = Property
                continue
            if deco not in DECORATORS:
                raise TdfNameError(f"unknown decorator @{deco}",
                                   hint="tapecli knows @tf.function, @tf.custom_gradient and @property")
            kind = CustomGradientFunction
        fn = kind(node, scope, self)
        fn.traced = traced
        self.bind(scope, node.name, wrap(fn) if wrap else fn, node)

    def _warn_traced_side_effects(self, node):
        """@tf.function runs its Python side effects only while tracing (once per input signature); a statement
        that is nothing else runs so here too (Function.graph_body), but one inside a statement that computes
        more runs on every call: where that can change what the program computes, say so at the decorator."""
        message = spellings.traced_side_effects(node.name, spellings.trace_only(node)[1])
        if message:
            current().settings.warn(message, node.line)

    def exec_Expect(self, node, scope):
        self.expectations.expect(node, scope)

    def exec_ExpectError(self, node, scope):
        self.expectations.expect_error(node, scope)


def _narrowed(name: str, arr: np.ndarray, target: np.dtype) -> np.ndarray:
    """A --set value in a narrower float dtype; a finite number that becomes an infinity there (3e39 in
    float32) does not fit it: a usage error. NaN and the infinities given as such stay what they are."""
    with np.errstate(over="ignore"):
        out = arr.astype(target)
    if not np.isfinite(out).all():
        overflowed = np.isfinite(arr) & ~np.isfinite(out)
        if overflowed.any():
            bad = float(arr[overflowed].flat[0])
            raise UsageError(f"--set {name}: {bad!r} does not fit {dtype_name(target)} (its largest finite value "
                             f"is {float(np.finfo(target).max):.8g})")
    return out
