"""The tree-walking interpreter: runs statements, opens tapes, records gradient requests.

Control flow runs in Python and is never recorded (LANGUAGE.md §4.9); only the ops
it reaches go to the tapes.
"""
from __future__ import annotations

import os
import time

import numpy as np

from . import ast, ops
from .builtins import BUILTINS, call_builtin, truth
from .errors import (LimitError, TapeError, TdfError, TdfNameError, TdfSyntaxError, TdfTypeError, TdfValueError)
from .expectations import Expectations
from .fusion import evaluate as fuse
from .ops import _tensor as new_tensor
from .kernels import quiet as quiet_kernels
from .layers import Dense
from .provenance import PROVENANCE
from .runtime import STATE
from .tape import ACTIVE, Tape, as_tensor, flatten, type_word
from .values import Tensor, Variable, convert_weak, dtype_name, is_float, literal_array, DTYPES, DTYPE_ALIASES


def _bound_names(body) -> set[str]:
    names = set()
    for node in ast.walk(body):
        if isinstance(node, ast.Assign):
            names.update(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.VarDecl, ast.ConstDecl)):
            names.add(node.name)
    return names


def _default_memory_cap() -> int:
    """Three quarters of physical memory (TAPECLI_MAX_MEMORY bytes overrides it)."""
    if os.environ.get("TAPECLI_MAX_MEMORY"):
        return int(os.environ["TAPECLI_MAX_MEMORY"])
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 0.75)
    except (ValueError, OSError, AttributeError):
        return 16 << 30


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _list_as_tensor(value):
    """A list compared with a tensor: its elements stacked (an empty list is an empty tensor)."""
    if not isinstance(value, list):
        return value
    return ops.stack(value) if value else Tensor(np.zeros(0, dtype=np.int64), weak=True)


_EVAL: dict = {}         # node type -> Interpreter.eval_<type>
_EXEC: dict = {}         # node type -> Interpreter.exec_<type>
_MISSING = object()
_PYFUNCTION = type(lambda: None)
_FUSABLE = (ast.BinOp, ast.Call, ast.UnaryOp)       # expressions fusion may take (tapecli/fusion.py)


def check_structure(body, in_loop=False, in_function=False) -> None:
    """What the grammar lets through but Python would not: break/continue outside a loop, return
    outside a function, and positional tape or var options."""
    for node in body:
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            word = "break" if isinstance(node, ast.Break) else "continue"
            raise TdfSyntaxError(f"'{word}' outside a loop", line=node.line, column=node.column)
        if isinstance(node, ast.Return) and not in_function:
            raise TdfSyntaxError("'return' outside a function", line=node.line, column=node.column)
        if isinstance(node, (ast.TapeBlock, ast.VarDecl)):
            for option in node.options:
                if not isinstance(option, ast.Keyword):
                    example = "tape t(persistent=True)" if isinstance(node, ast.TapeBlock) else "var(trainable=False) x = 1.0"
                    raise TdfSyntaxError("options are given by name", hint=f"e.g. {example}",
                                         line=option.line, column=option.column)
        if isinstance(node, ast.FuncDef):
            check_structure(node.body, in_loop=False, in_function=True)
        elif isinstance(node, (ast.While, ast.For)):
            check_structure(node.body, in_loop=True, in_function=in_function)
        elif isinstance(node, ast.If):
            for _, branch in node.branches:
                check_structure(branch, in_loop, in_function)
            check_structure(node.orelse or [], in_loop, in_function)
        elif isinstance(node, (ast.TapeBlock, ast.StopRecording, ast.ExpectError)):
            check_structure(node.body, in_loop, in_function)


class Limits:
    CHECK_EVERY = 64        # loop steps between the clock and memory checks (~5 µs each)

    def __init__(self, max_steps=10_000_000, max_elements=100_000_000, max_depth=200, max_seconds=None,
                 max_memory=None):
        self.max_steps = max_steps
        self.max_elements = max_elements
        self.max_depth = max_depth
        env_seconds = os.environ.get("TAPECLI_MAX_SECONDS")
        self.max_seconds = max_seconds if max_seconds is not None else (float(env_seconds) if env_seconds else None)
        self.max_memory = max_memory if max_memory is not None else _default_memory_cap()


class Scope:
    __slots__ = ("vars", "parent", "consts")

    def __init__(self, parent: "Scope | None" = None):
        self.vars: dict = {}
        self.parent = parent
        self.consts: set[str] = set()

    def get(self, name: str, default=None):
        """The value bound to ``name`` here or in an enclosing scope, else ``default``."""
        scope = self
        while scope is not None:
            value = scope.vars.get(name, _MISSING)
            if value is not _MISSING:
                return value
            scope = scope.parent
        return default

    def lookup(self, name: str):
        value = self.get(name, _MISSING)
        if value is _MISSING:
            raise KeyError(name)
        return value

    def names(self) -> set[str]:
        out, scope = set(), self
        while scope is not None:
            out.update(scope.vars)
            scope = scope.parent
        return out


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Function:
    kind_word = "a function"

    def __init__(self, node: ast.FuncDef, closure: Scope, interp: "Interpreter"):
        self.node = node
        self.name = node.name
        self.closure = closure
        self.interp = interp

    def __call__(self, args, kwargs=None, node=None):
        return self.interp.call_function(self, args, kwargs or {}, node)


class CustomGradientFunction(Function):
    """@custom_gradient: the body runs unrecorded; one op with the user's backward is recorded."""

    def __call__(self, args, kwargs=None, node=None):
        interp = self.interp
        saved = [t.paused for t in ACTIVE]
        for t in ACTIVE:
            t.paused = True
        try:
            result = interp.call_function(self, args, kwargs or {}, node)
        finally:
            for t, p in zip(ACTIVE, saved):
                t.paused = p
        if not (isinstance(result, (list, tuple)) and len(result) == 2 and isinstance(result[1], Function)):
            raise TdfTypeError(f"@custom_gradient function {self.name} must return (value, backward)",
                               hint="end it with: return y, backward")
        value, backward = result
        inputs = [ops.to_tensor(a) for a in args if isinstance(a, (Tensor, Variable))]
        output = Tensor(ops.to_tensor(value).value)
        ops.emit(CUSTOM_GRADIENT, inputs, output, {"backward": backward, "name": self.name})
        return output


def _custom_vjp(record, g):
    backward = record.attrs["backward"]
    grads = backward([g])
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    if len(grads) != len(record.inputs):
        raise TdfTypeError(f"the backward function of {record.attrs['name']} returned {len(grads)} gradient(s) "
                           f"for {len(record.inputs)} input(s)")
    out = []
    for inp, gr in zip(record.inputs, grads):
        if gr is None:
            out.append(None)
            continue
        gr = ops.to_tensor(gr)
        out.append(ops.materialize(gr, inp.dtype) if gr.weak else gr)
    return tuple(out)


CUSTOM_GRADIENT = ops.Op("custom_gradient", vjp=_custom_vjp)


class TapeObject:
    """The program-visible tape: its methods are the gradient requests."""

    kind_word = "a tape"

    def __init__(self, tape: Tape, interp: "Interpreter"):
        self.tape = tape
        self.interp = interp


class BoundMethod:
    kind_word = "a method"

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn


class Request:
    """One gradient/jacobian call, for `grad --json` and `jacobian --json`."""

    def __init__(self, kind, line, tape, target_text, labels, values, result, why, leaves=None, objective=None,
                 targets=None, tape_obj=None):
        self.kind = kind              # "gradient" | "jacobian" | "batch_jacobian"
        self.line = line
        self.tape = tape
        self.target_text = target_text
        self.labels = labels          # one per source leaf
        self.values = values          # one Tensor | None per source leaf
        self.why = why                # one str | None per source leaf
        self.result = result          # the structure returned to the program
        self.names: list | None = None
        self.leaves = leaves or []    # the source tensors/variables, for finite-difference checks
        self.versions = [leaf.version if isinstance(leaf, Variable) else None for leaf in self.leaves]
        self.snapshots = [as_tensor(leaf).value for leaf in self.leaves]     # source values when asked
        self.objective = objective    # sum(target * seed) when asked, for finite-difference checks
        self.targets = targets        # the target tensors, kept for `explain`
        self.tape_obj = tape_obj      # the Tape itself, kept for `explain`


class Interpreter:
    def __init__(self, program: ast.Program, overrides: dict | None = None, limits: Limits | None = None,
                 implicit_wrt: set | None = None, implicit_tape: Tape | None = None):
        self.program = program
        self.source = program.source
        self.globals = Scope()
        self.overrides = dict(overrides or {})
        self.limits = limits or Limits()
        self.steps = 0
        self.started = time.monotonic()
        self.depth = 0
        self.requests: list[Request] = []
        self.tapes: list[Tape] = []
        self.output: list[str] = []
        self.expectations = Expectations(self)
        self._rng = None
        self.literal_cache: dict[int, np.ndarray | None] = {}
        self.implicit_wrt = implicit_wrt or set()
        self.implicit_tape = implicit_tape

    @property
    def rng(self):
        """The program's default generator, seeded 0; numpy.random is imported only when it is used."""
        if self._rng is None:
            self._rng = np.random.default_rng(0)
        return self._rng

    @rng.setter
    def rng(self, value):
        self._rng = value

    # ------------------------------------------------------------------ running
    def run(self) -> Scope:
        check_structure(self.program.body)
        with quiet_kernels():     # floating-point warnings off once for the run, not per op
            self.exec_block(self.program.body, self.globals)
        return self.globals

    def exec_block(self, body, scope):
        for stmt in body:
            self.exec_stmt(stmt, scope)

    def exec_stmt(self, node, scope):
        STATE.line = node.line
        try:
            (_EXEC.get(node.__class__) or self._method("exec_", node))(self, node, scope)
        except TdfError as e:
            raise e.locate(node)
        except RecursionError:
            raise LimitError("the program nests too deeply", hint="simplify the expression or the recursion",
                             line=node.line, column=node.column) from None

    def text(self, node) -> str:
        return self.source[node.start:node.end] if node.end > node.start else ""

    # ------------------------------------------------------------- statements
    def exec_ExprStmt(self, node, scope):
        self.eval(node.value, scope)

    def exec_Pass(self, node, scope):
        pass

    def _declared_value(self, node, scope, annotation: str | None):
        dtype = self._dtype_of_annotation(annotation, node) if annotation else None
        saved = STATE.float_dtype
        if dtype is not None and is_float(dtype):
            STATE.float_dtype = dtype     # literals and constructors follow the annotation
        try:
            value = self.eval(node.value, scope)
        finally:
            STATE.float_dtype = saved
        value = as_tensor(value) if isinstance(value, Variable) else value
        if not isinstance(value, Tensor):
            raise TdfTypeError(f"{node.name} must be declared with a tensor, got {type_word(value)}")
        if node.name in self.overrides:
            value = self._override(node.name, value, dtype)
        if value.weak:
            value = Tensor(convert_weak(value.value, dtype if dtype is not None else ops.default_dtype(value.value)))
        elif dtype is not None and value.dtype != dtype:
            raise TdfTypeError(f"{node.name} is declared {dtype_name(dtype)} but its value is "
                               f"{dtype_name(value.dtype)}", hint=f"use cast(..., {dtype_name(dtype)})")
        return value

    def _override(self, name, declared: Tensor, dtype) -> Tensor:
        """A --set value takes the declaration's dtype: the annotation's, else the declared value's."""
        raw = self.overrides[name]
        target = dtype if dtype is not None else (ops.default_dtype(declared.value) if declared.weak else declared.dtype)
        arr = np.asarray(raw)
        if arr.dtype.kind == "f" and target.kind in "iu" and not np.all(np.equal(np.mod(arr, 1), 0)):
            raise TdfTypeError(f"--set {name}: the value is not an integer, but {name} is {dtype_name(target)}")
        return Tensor(arr.astype(target, copy=False))   # no copy of a large --set value of the right dtype

    def _dtype_of_annotation(self, annotation: str, node) -> np.dtype:
        name = DTYPE_ALIASES.get(annotation, annotation)
        if name not in DTYPES:
            raise TdfTypeError(f"unknown dtype {annotation}", hint="use float32, float64, int32, int64 or bool")
        return DTYPES[name]

    def exec_VarDecl(self, node, scope):
        options = {kw.name: self.eval(kw.value, scope) for kw in node.options}
        unknown = set(options) - {"trainable"}
        if unknown:
            raise TdfTypeError(f"var has no option {sorted(unknown)[0]}", hint="the option is var(trainable=False)")
        trainable = truth(options.get("trainable", True))
        value = self._declared_value(node, scope, node.dtype)
        var = Variable(node.name, value.value, trainable=trainable)
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
                               hint=f"use another name, or declare it with var {name} = ...")
        if declared:
            scope.consts.discard(name)
        old = scope.vars.get(name)
        if not declared and isinstance(old, Variable) and not isinstance(value, Variable):
            STATE.warn(f"{name} was a variable, now a tensor: did you mean {name}.assign_add(...) "
                       f"or {name}.assign(...)?", node.line)
            if PROVENANCE.enabled:
                PROVENANCE.rebinds[name] = (node.line, old.name)
        if isinstance(value, Dense) and value.name is None:
            value.name = name
        scope.vars[name] = value
        if scope is self.globals and name in self.implicit_wrt and self.implicit_tape is not None:
            self._watch_on(self.implicit_tape, value, name, node)

    def exec_Assign(self, node, scope):
        first_request = len(self.requests)
        value = fuse(self, node.value, scope) if node.value.__class__ in _FUSABLE else None
        if value is None:               # (fusion: one kernel for a large elementwise expression)
            value = self.eval(node.value, scope)
        if len(node.targets) == 1:
            self.bind(scope, node.targets[0], value, node)
            names = node.targets[0]
        else:
            items = self._destructure(value, len(node.targets))
            for name, item in zip(node.targets, items):
                self.bind(scope, name, item, node)
            names = list(node.targets)
        if scope is self.globals and len(self.requests) > first_request:
            self._name_requests(first_request, value, names)

    def _destructure(self, value, n):
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif isinstance(value, Tensor) and value.ndim >= 1:
            items = [Tensor(value.value[i], weak=True) if value.weak else ops.getitem(value, i)
                     for i in range(value.shape[0])]
        else:
            raise TdfTypeError(f"cannot unpack {type_word(value)} into {n} names")
        if len(items) != n:
            raise TdfValueError(f"cannot unpack {len(items)} values into {n} names")
        return items

    def exec_AugAssign(self, node, scope):
        current = self.lookup(node.name, scope, node)
        value = self.binary(node.op, current, self.eval(node.value, scope), node)
        self.bind(scope, node.name, value, node)

    def _current_tape(self, name, node, scope) -> Tape:
        if name is not None:
            obj = self.lookup(name, scope, node)
            if not isinstance(obj, TapeObject):
                raise TdfTypeError(f"{name} is not a tape, it is {type_word(obj)}")
            return obj.tape
        user_tapes = [t for t in ACTIVE if t is not self.implicit_tape]
        if not user_tapes:
            raise TapeError("watch outside a tape block", hint="put it inside `tape t:`, or name one: watch x in t")
        return user_tapes[-1]

    def exec_Watch(self, node, scope):
        tape = self._current_tape(node.tape, node, scope)
        if not tape.open:
            raise TapeError(f"tape {tape.name} is not open here", hint=f"watch inside the block of tape {tape.name}")
        for item in node.items:
            value = self.eval(item, scope)
            label = self.text(item)
            if isinstance(value, Tensor) and value.weak and isinstance(item, ast.Name):
                value = ops.materialize(value)
                scope.vars[item.id] = value
            self._watch_on(tape, value, label, node)

    def _watch_on(self, tape: Tape, value, label, node):
        if isinstance(value, Variable):
            if not is_float(value.dtype):
                STATE.warn(f"the watched tensor must be floating, got {dtype_name(value.dtype)}: "
                           f"gradients w.r.t. {label} will be None", node.line)
            tape.watch_variable(value, "watch", node.line)
        elif isinstance(value, Tensor):
            if not tape.watch_tensor(ops.materialize(value) if value.weak else value, label, node.line):
                STATE.warn(f"the watched tensor must be floating, got {dtype_name(value.dtype)}: "
                           f"gradients w.r.t. {label} will be None", node.line)
        elif isinstance(value, (list, tuple)):
            if not value and PROVENANCE.enabled:
                PROVENANCE.tape(tape).empty_watches.append((node.line, label))
            for i, item in enumerate(value):
                self._watch_on(tape, item, item.name if isinstance(item, Variable) else f"{label}[{i}]", node)
        else:
            raise TdfTypeError(f"watch takes tensors, variables or lists of them; {label} is {type_word(value)}")

    def exec_Reset(self, node, scope):
        tape = self._current_tape(node.tape, node, scope)
        tape.reset()
        tape.used_at = None
        if PROVENANCE.enabled:
            PROVENANCE.tape(tape).resets.append((PROVENANCE.now, node.line))
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
        tape.open = True
        ACTIVE.append(tape)
        history = PROVENANCE.tape(tape) if PROVENANCE.enabled else None
        if history:
            history.opened = PROVENANCE.now
        try:
            self.exec_block(node.body, scope)
        finally:
            ACTIVE.remove(tape)
            tape.open = False
            tape.paused = False
            if history:
                history.closed = PROVENANCE.now

    def exec_StopRecording(self, node, scope):
        tape = self._current_tape(node.tape, node, scope)
        if not tape.recording:
            raise TapeError(f"tape {tape.name} is not recording here",
                            hint="stop_recording belongs inside the tape's own block")
        tape.paused = True
        pause = [PROVENANCE.now, None, node.line]
        if PROVENANCE.enabled:
            PROVENANCE.tape(tape).pauses.append(pause)
        try:
            self.exec_block(node.body, scope)
        finally:
            tape.paused = False
            pause[1] = PROVENANCE.now

    def exec_If(self, node, scope):
        bodies = [body for _, body in node.branches] + [node.orelse or []]
        taken = len(node.branches)
        for i, (cond, _) in enumerate(node.branches):
            if truth(self.eval(cond, scope)):
                taken = i
                break
        if PROVENANCE.enabled:
            untaken = {n for i, body in enumerate(bodies) if i != taken for n in _bound_names(body)}
            PROVENANCE.untaken.append((node.line, untaken))
        self.exec_block(bodies[taken], scope)

    def _step(self):
        steps = self.steps = self.steps + 1
        if steps > self.limits.max_steps:
            raise LimitError(f"the program ran more than {self.limits.max_steps:,} loop steps",
                             hint="is a loop endless? raise the limit with --max-steps N")
        if not steps % Limits.CHECK_EVERY:
            self._check_time_and_memory()

    def _check_time_and_memory(self):
        limits = self.limits
        if limits.max_seconds is not None and time.monotonic() - self.started > limits.max_seconds:
            raise LimitError(f"the program ran longer than {limits.max_seconds:g} s",
                             hint="is a loop endless? raise the limit with TAPECLI_MAX_SECONDS")
        used = _resident_bytes()
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

    def exec_For(self, node, scope):
        iterable = self.eval(node.iter, scope)
        if isinstance(iterable, Variable):
            iterable = iterable.read()
        if isinstance(iterable, Tensor):
            if iterable.ndim == 0:
                raise TdfTypeError("cannot loop over a scalar", hint="use range(n)")
            items = (new_tensor(iterable.value[i], True) if iterable.weak else ops.getitem(iterable, i)
                     for i in range(iterable.shape[0]))
        elif isinstance(iterable, (list, tuple)):
            items = list(iterable)
        elif isinstance(iterable, dict):
            items = [Tensor(np.array(k)) if not isinstance(k, str) else k for k in iterable]
        else:
            raise TdfTypeError(f"cannot loop over {type_word(iterable)}")
        for item in items:
            self._step()
            if len(node.targets) == 1:
                self.bind(scope, node.targets[0], item, node)
            else:
                for name, sub in zip(node.targets, self._destructure(item, len(node.targets))):
                    self.bind(scope, name, sub, node)
            try:
                self.exec_block(node.body, scope)
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

    def exec_FuncDef(self, node, scope):
        kind = Function
        for deco in node.decorators:
            if deco != "custom_gradient":
                raise TdfNameError(f"unknown decorator @{deco}", hint="the one decorator is @custom_gradient")
            kind = CustomGradientFunction
        self.bind(scope, node.name, kind(node, scope, self), node)

    def exec_Expect(self, node, scope):
        self.expectations.expect(node, scope)

    def exec_ExpectError(self, node, scope):
        self.expectations.expect_error(node, scope)

    # ---------------------------------------------------------------- functions
    def call_function(self, fn: Function, args, kwargs, node):
        params = fn.node.params
        if len(args) > len(params):
            raise TdfTypeError(f"{fn.name}() takes {len(params)} argument(s), got {len(args)}")
        local = Scope(fn.closure)
        for param, value in zip(params, args):
            local.vars[param.name] = value
        for name, value in kwargs.items():
            if name not in {p.name for p in params}:
                raise TdfTypeError(f"{fn.name}() has no parameter {name}")
            if name in local.vars:
                raise TdfTypeError(f"{fn.name}() got two values for {name}")
            local.vars[name] = value
        for param in params:
            if param.name not in local.vars:
                if param.default is None:
                    raise TdfTypeError(f"{fn.name}() is missing the argument {param.name}")
                local.vars[param.name] = self.eval(param.default, fn.closure)
        self.depth += 1
        if self.depth > self.limits.max_depth:
            self.depth -= 1
            raise LimitError(f"calls nest deeper than {self.limits.max_depth}",
                             hint="is the recursion endless? raise the limit with --max-depth N")
        saved_line = STATE.line
        try:
            self.exec_block(fn.node.body, local)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
            STATE.line = saved_line
        return None

    def call_value(self, fn, args, kwargs=None, node=None):
        """Call any program callable: used by layers and the backward of custom gradients."""
        if isinstance(fn, Function):
            return fn(args, kwargs or {}, node)
        raise TdfTypeError(f"{type_word(fn)} is not callable here: pass a function defined with def")

    # -------------------------------------------------------------- expressions
    def eval(self, node, scope):
        return (_EVAL.get(node.__class__) or self._method("eval_", node))(self, node, scope)

    def _method(self, prefix, node):
        """The class's eval_/exec_ method for a node type, found once (a dict lookup afterwards)."""
        table = _EVAL if prefix == "eval_" else _EXEC
        f = getattr(type(self), prefix + type(node).__name__)
        if type(self) is Interpreter:
            table[node.__class__] = f
        return f

    def lookup(self, name, scope, node):
        value = scope.get(name, _MISSING)
        if value is not _MISSING:
            return value
        if name in BUILTINS:
            return BUILTINS[name]
        candidates = scope.names() | set(BUILTINS)
        import difflib   # only for the hint of a NameError
        close = difflib.get_close_matches(name, candidates, n=1)
        raise TdfNameError(f"name {name} is not defined",
                           hint=f"did you mean {close[0]}?" if close else "declare it with var, const or =",
                           line=node.line, column=node.column, end_column=node.end_column)

    def eval_Name(self, node, scope):
        return self.lookup(node.id, scope, node)

    def eval_Number(self, node, scope):
        # One weak tensor per literal in the program: a literal is never recorded or watched itself
        # (ops and watch turn it into a tensor of their dtype first).
        t = self.literal_cache.get(id(node))
        if t is None:
            arr = literal_array(node.value)
            arr.flags.writeable = False
            t = self.literal_cache[id(node)] = new_tensor(arr, True)
        return t

    def eval_String(self, node, scope):
        return node.value

    def eval_Constant(self, node, scope):
        if node.value is None:
            return None
        t = self.literal_cache.get(id(node))      # one bool tensor per literal, as for numbers
        if t is None:
            arr = np.array(node.value)
            arr.flags.writeable = False
            t = self.literal_cache[id(node)] = Tensor(arr)
        return t

    def _static_literal(self, node):
        """The exact array of a bracket literal of numbers, or None if it holds other expressions."""
        key = id(node)
        if key not in self.literal_cache:
            self.literal_cache[key] = self._literal_of(node)
        return self.literal_cache[key]

    def _literal_of(self, node):
        def value(n):
            if isinstance(n, ast.Number):
                return n.value
            if isinstance(n, ast.Constant) and isinstance(n.value, bool):
                return n.value
            if isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Number):
                return -n.operand.value if n.op == "-" else n.operand.value
            if isinstance(n, ast.ListDisplay):
                return [value(i) for i in n.items]
            raise ValueError
        try:
            raw = value(node)
        except ValueError:
            return None
        try:
            return literal_array(raw)
        except TdfTypeError as e:
            raise e.locate(node)

    def eval_ListDisplay(self, node, scope):
        if not node.items:
            return []           # an empty list, which compares equal to an empty tensor (shape(s) == [])
        arr = self._static_literal(node)
        if arr is not None:
            return Tensor(arr, weak=arr.dtype != np.bool_)
        return [self.eval(item, scope) for item in node.items]

    def eval_TupleDisplay(self, node, scope):
        return [self.eval(item, scope) for item in node.items]

    def eval_DictDisplay(self, node, scope):
        out = {}
        for k, v in node.pairs:
            key = self.eval(k, scope)
            if not isinstance(key, str):
                raise TdfTypeError("dict keys must be strings", line=k.line, column=k.column)
            out[key] = self.eval(v, scope)
        return out

    def eval_BinOp(self, node, scope):
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        try:
            return self.binary(node.op, left, right, node)
        except TdfError as e:
            raise e.locate(node)

    _BINARY = {"+": ops.add, "-": ops.sub, "*": ops.mul, "/": ops.div, "//": ops.floordiv, "%": ops.mod,
               "**": ops.pow_, "@": ops.matmul}

    def binary(self, op, left, right, node):
        if left.__class__ is Tensor and right.__class__ is Tensor:
            return self._BINARY[op](left, right)
        if op == "+" and isinstance(left, list) and isinstance(right, list):
            return left + right
        for side in (left, right):
            if not isinstance(side, (Tensor, Variable)):
                raise TdfTypeError(f"'{op}' needs tensors, got {type_word(side)}")
        return self._BINARY[op](left, right)

    def eval_UnaryOp(self, node, scope):
        value = self.eval(node.operand, scope)
        if not isinstance(value, (Tensor, Variable)):
            raise TdfTypeError(f"unary '{node.op}' needs a tensor, got {type_word(value)}").locate(node)
        try:
            return ops.neg(value) if node.op == "-" else ops.to_tensor(value)
        except TdfError as e:
            raise e.locate(node)

    def eval_Not(self, node, scope):
        return Tensor(np.array(not truth(self.eval(node.operand, scope))))

    def eval_BoolOp(self, node, scope):
        value = None
        for item in node.values:
            value = self.eval(item, scope)
            t = truth(value)
            if (node.op == "and" and not t) or (node.op == "or" and t):
                return value
        return value

    def eval_Compare(self, node, scope):
        left = self.eval(node.left, scope)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, scope)
            try:
                current = self.compare(op, left, right)
            except TdfError as e:
                raise e.locate(node)
            if result is None:
                result = current
            else:
                result = ops.logical_and(result, current)
            left = right
        return result

    _COMPARE = {"<": ops.less, "<=": ops.less_equal, ">": ops.greater, ">=": ops.greater_equal,
                "==": ops.equal, "!=": ops.not_equal}

    def compare(self, op, left, right):
        if op in ("is", "is not"):
            same = left is right or (isinstance(left, Tensor) and isinstance(right, Tensor) and left.id == right.id)
            return Tensor(np.array(same if op == "is" else not same))
        if op == "~=":
            return self.expectations.approx_equal(left, right)[0]
        if isinstance(left, str) or isinstance(right, str):
            if op in ("==", "!="):
                return Tensor(np.array((left == right) == (op == "==")))
            raise TdfTypeError(f"cannot compare strings with '{op}'")
        if left is None or right is None:
            if op in ("==", "!="):
                return Tensor(np.array((left is right) == (op == "==")))
            raise TdfTypeError(f"cannot compare None with '{op}'", hint="use `is None`")
        left, right = (_list_as_tensor(v) for v in (left, right))
        for side in (left, right):
            if not isinstance(side, (Tensor, Variable)):
                raise TdfTypeError(f"'{op}' compares tensors, got {type_word(side)}")
        return self._COMPARE[op](left, right)

    def eval_Call(self, node, scope):
        func = self.eval(node.func, scope)
        args = [self.eval(a, scope) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.name in kwargs:
                raise TdfTypeError(f"the argument {kw.name} is given twice").locate(kw)
            kwargs[kw.name] = self.eval(kw.value, scope)
        try:
            if func.__class__ is _PYFUNCTION and getattr(func, "is_builtin", False):
                return call_builtin(func, self, node, args, kwargs)
            if isinstance(func, Function):
                return func(args, kwargs, node)
            if isinstance(func, BoundMethod):
                return func.fn(node, *args, **kwargs)
            if isinstance(func, Dense):
                if kwargs or len(args) != 1:
                    raise TdfTypeError("a layer is called with one input: layer(x)")
                return func(args[0])
            if callable(func) and getattr(func, "is_builtin", False):
                return call_builtin(func, self, node, args, kwargs)
        except TdfError as e:
            raise e.locate(node)
        except TypeError as e:
            raise TdfTypeError(str(e)).locate(node) from None
        raise TdfTypeError(f"{self.text(node.func) or 'this'} is {type_word(func)}, not a function").locate(node)

    def eval_Subscript(self, node, scope):
        value = self.eval(node.value, scope)
        index = [self._index_item(i, scope) for i in node.items]
        try:
            if isinstance(value, dict):
                if len(index) != 1 or not isinstance(index[0], str):
                    raise TdfTypeError("a dict is indexed with one string key")
                if index[0] not in value:
                    raise TdfNameError(f'no key "{index[0]}" in this dict',
                                       hint="keys: " + ", ".join(f'"{k}"' for k in value))
                return value[index[0]]
            if isinstance(value, (list, tuple)):
                if len(index) != 1:
                    raise TdfTypeError("a list is indexed with one integer or slice")
                try:
                    return value[index[0]]
                except IndexError:
                    raise TdfValueError(f"index {index[0]} is out of range for a list of {len(value)}") from None
                except TypeError:
                    raise TdfTypeError("a list index must be an integer or a slice") from None
            if isinstance(value, (Tensor, Variable)):
                tensor = ops.to_tensor(value)
                key = tuple(index)
                try:
                    tensor.value[key]
                except IndexError as e:
                    from .errors import ShapeError
                    raise ShapeError(f"index out of range for shape {list(tensor.shape)}: {e}") from None
                result = ops.getitem(tensor, key)
                return Tensor(result.value, weak=True) if tensor.weak else result
            raise TdfTypeError(f"{type_word(value)} cannot be indexed")
        except TdfError as e:
            raise e.locate(node)

    def _index_item(self, item, scope):
        if isinstance(item, ast.Slice):
            parts = [None if p is None else self._int_index(self.eval(p, scope), p) for p in
                     (item.lower, item.upper, item.step)]
            return slice(*parts)
        value = self.eval(item, scope)
        if isinstance(value, str) or value is None:
            return value
        if isinstance(value, (Tensor, Variable)):
            t = ops.to_tensor(value)
            if t.ndim == 0:
                return self._int_index(t, item)
            if t.dtype.kind in "iub":
                return t.value
        raise TdfTypeError(f"an index must be an integer, a slice or a string, got {type_word(value)}").locate(item)

    def _int_index(self, value, node):
        if value is None:
            return None
        t = ops.to_tensor(value)
        if t.ndim != 0 or t.dtype.kind not in "iu":
            raise TdfTypeError(f"an index must be an integer, got {type_word(value)}").locate(node)
        return int(t.value)

    def eval_Attribute(self, node, scope):
        value = self.eval(node.value, scope)
        try:
            return self.attribute(value, node.attr, node)
        except TdfError as e:
            raise e.locate(node)

    def attribute(self, value, attr, node):
        from .builtins import attribute
        return attribute(self, value, attr, node)

    def eval_Keyword(self, node, scope):
        raise TdfTypeError("a keyword argument outside a call").locate(node)

    def eval_Slice(self, node, scope):
        raise TdfTypeError("a slice outside an index").locate(node)

    # ---------------------------------------------------------- gradient requests
    def _name_requests(self, first: int, value, names):
        """Name the requests made while evaluating an assignment, from the names bound."""
        for req in self.requests[first:]:
            if req.names is not None:
                continue
            if req.result is value or (value is None and req.result is None and len(self.requests) - first == 1):
                req.names = self._leaf_names(value, names, len(req.values))

    def _leaf_names(self, value, names, count):
        if isinstance(names, list):          # destructured: a, b = t.gradient(l, [w, b])
            if count == len(names):
                return list(names)
            return [None] * count
        if isinstance(value, dict):
            return [f'{names}["{k}"]' for k in value]
        if isinstance(value, list):
            return [f"{names}[{i}]" for i in range(count)]
        return [names]

    def add_request(self, kind, tape, target, target_node, source_node, sources, values, result, whys,
                    objective=None):
        labels = self._source_labels(source_node, sources)
        leaves = flatten(sources, "sources")
        target_text = self.text(target_node) if target_node else None
        targets = None
        if PROVENANCE.enabled:
            from .explain import diagnose
            targets = [as_tensor(t) for t in flatten(target, "the target")]
            whys = [None if v is not None else
                    diagnose(tape, targets, target_text, leaf, label, label in self.globals.consts)
                    for v, leaf, label in zip(values, leaves, labels)]
        self.requests.append(Request(kind, STATE.line, tape.name, target_text, labels, values, result, whys, leaves,
                                     objective, targets, tape if PROVENANCE.enabled else None))

    def _source_labels(self, node, sources):
        leaves = flatten(sources, "sources")
        labels = []
        item_nodes = None
        if isinstance(node, ast.ListDisplay):
            item_nodes = node.items
        elif isinstance(node, ast.DictDisplay):
            item_nodes = [v for _, v in node.pairs]
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, Variable):
                labels.append(leaf.name)
            elif item_nodes is not None and len(item_nodes) == len(leaves):
                labels.append(self.text(item_nodes[i]))
            elif node is not None and len(leaves) == 1 and not isinstance(sources, (list, dict)):
                labels.append(self.text(node))
            else:
                labels.append(f"{self.text(node) if node is not None else 'sources'}[{i}]")
        return labels
