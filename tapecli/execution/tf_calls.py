"""``tf.function``, ``tf.TensorSpec`` and ``tf.custom_gradient`` of a TensorFlow program that CPython runs
(execution/tensorflow.py), with the interpreter's semantics: a ``tf.function`` is the function itself, run eagerly
on every call (its options checked), its prints and its statements that are only Python side effects run while it
traces alone (the guard compiles them so: traced_functions), a side effect inside another statement warned of as
the interpreter warns; a ``custom_gradient`` function's body runs unrecorded and its result is one recorded op
whose gradient is the program's own ``grad_fn``, a real Python function called by the backward pass
(interpreter/objects.py, ``custom_gradient_call``: the same op, so the tapes, ``explain`` and higher orders see what
the interpreter's do)."""
from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import types
import weakref

import numpy as np

from tapecli import ops
from tapecli.execution.tf_signatures import Captures, GraphTensor, parameters_of, pretty_printed, trace_type
from tapecli.execution.tf_values import (ProgramCallable, as_tensorflow, class_of_tensorflow, program_side,
                                        tensorflow_class_name, to_library, to_program)
from tapecli.frontend.spellings import cpython_trace_only, traced_side_effects
from tapecli.interpreter.objects import Traces, custom_gradient_call, function_outputs, trace_key
from tapecli.library.python import TF_FUNCTION_CLASS
from tapecli.runtime.context import current
from tapecli.runtime.specs import TensorSpec
from tapecli.runtime.tape import Tape, recording
from tapecli.runtime.values import DTYPES, DType, Tensor, Variable, dtype_name


def traced_functions(tree: ast.Module, aliases: set[str]) -> tuple[dict[int, str], set[int]]:
    """Of each function the program decorates with ``@tf.function`` (or ``@tf.function(...)``): the warning of its
    Python side effects that run on every call, by the line of its first decorator (its code's first line, where
    the interpreter warns), and the statements (by ``id``) that are only Python side effects, which the guard
    compiles to run while it traces alone (spellings.cpython_trace_only); and those of every other function,
    which a call running a traced graph may call (``callee``)."""
    warnings, statements = {}, set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decorated = any(_names_function(d, aliases) for d in node.decorator_list)
        trace_only, effects = cpython_trace_only(node, callee=not decorated)
        statements.update(map(id, trace_only))
        message = traced_side_effects(node.name, effects) if decorated else None
        if message:
            warnings[node.decorator_list[0].lineno] = message
    return warnings, statements


def _names_function(decorator, aliases) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "function" and isinstance(target.value, ast.Name) \
        and target.value.id in aliases


def tf_function(library_function):
    """``tf.function``, checking its options against the library's (``library_function``'s parameters)."""
    signature = inspect.signature(library_function)

    def function(*args, **options):
        signature.bind(*args, **options)             # (a TypeError of Python's for an unknown option)
        func = args[0] if args else options.pop("func", None)
        given, relax = options.get("input_signature"), bool(options.get("reduce_retracing"))
        if func is None:
            return lambda f: _traced(f, given, relax=relax)
        return _traced(func, given, relax=relax)
    function.__doc__ = library_function.__doc__
    return function


def _traced(func, input_signature=None, warned: bool = False, relax: bool = False):
    """A function decorated with ``@tf.function``: itself, its side effects warned of at its decorator; a call
    whose arguments it was traced for runs the traced graph, without its Python ``print``s (objects.trace_key).
    In it, NumPy arrays are tensors, as TensorFlow converts them; what it returns is tensors
    (objects.function_outputs). A method's (defined in a class, its first parameter ``self``) is traced for each
    instance apart, as TensorFlow binds it (:class:`_TracedMethod`)."""
    code = getattr(func, "__code__", None)
    run = current().eager.run
    if code is not None and code.co_filename == run.sandbox.filename and not warned:
        message = run.traced.get(code.co_firstlineno)
        if message:
            current().settings.warn(message, code.co_firstlineno)
    if not callable(func):
        return func
    if not warned and _is_method(func):
        return _TracedMethod(func, input_signature, relax)
    traces, sandbox = Traces(None if input_signature is None else list(input_signature), relax), run.sandbox
    parameters = inspect.signature(func)
    traced_for = []         # each call that traced (or get_concrete_function's): its arguments, tensors as specs

    def concrete_function(*args, **kwargs):
        traced_for.append(_as_specs([list(args), kwargs]))
        return _concrete(func, parameters, traces, args, kwargs)

    def concrete_signatures(verbose=True) -> str:
        """pretty_printed_concrete_signatures(): of each trace, once (a call's and get_concrete_function's of
        the same arguments are one), in the order they were made."""
        calls = traced_for if traces.signature is None else [((), {})]
        printed = dict.fromkeys(_concrete(func, parameters, traces, args, kwargs, silent=True).pretty_printed_signature(
            verbose) for args, kwargs in calls)
        return ("\n\n" if verbose else "\n").join(printed)

    @functools.wraps(func)
    def traced(*args, **kwargs):
        ctx = current()
        if ctx.functions_eagerly:               # tf.config.run_functions_eagerly: plain Python, traced never
            return func(*args, **kwargs)
        try:
            bound = parameters.bind(*args, **kwargs)
        except TypeError as e:
            if traces.signature is None:
                raise
            raise _binding_failed(str(e), list(parameters.parameters), traces.signature, args, kwargs) from None
        bound.apply_defaults()
        if traces.signature is not None:
            _bind_signature(traces.signature, bound, args, kwargs)
        for name, value in bound.arguments.items():
            if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
                bound.arguments[name] = Tensor(value)
        key = trace_key([list(args), kwargs])
        seen = traces.seen(key)
        if not seen:
            traced_for.append(_as_specs([list(args), kwargs]))
        return _run_graph(func, sandbox, bound, traces, seen, key=key)
    traced.experimental_get_tracing_count = lambda: traces.count
    traced.input_signature = None if input_signature is None else tuple(input_signature)    # (TensorFlow's tuple)
    traced.python_function = func
    traced.get_concrete_function = concrete_function
    traced.pretty_printed_concrete_signatures = concrete_signatures
    _TF_FUNCTIONS.add(traced)
    return traced


# The tf.functions made so far: each is a plain function (a planned loop inlines its calls), which type() names as
# TensorFlow's class (tf_values.type_of); a method's is its _TracedMethod.
_TF_FUNCTIONS = weakref.WeakSet()


def is_tf_function(value) -> bool:
    """Whether ``value`` is a ``tf.function`` (its class asked first: no program's __hash__ runs)."""
    return value.__class__ is _TracedMethod or value.__class__ is types.FunctionType and value in _TF_FUNCTIONS


def type_of(*args):
    """The program's ``type``: a library value's class as TensorFlow names it (a tf.function's, TensorFlow's
    Function); Python's ``type`` otherwise."""
    if len(args) == 1:
        name = TF_FUNCTION_CLASS if is_tf_function(args[0]) else tensorflow_class_name(args[0])
        if name in ("float", "int", "bool", "str", "list", "dict", "tuple", "NoneType"):   # a Python value's
            return type(to_program(args[0]))
        if name is not None:
            return class_of_tensorflow(name)
    return type(*args)


def _is_method(func) -> bool:
    parameters = list(inspect.signature(func).parameters)
    return isinstance(func, types.FunctionType) and "." in func.__qualname__.replace(".<locals>.", "") and \
        parameters[:1] == ["self"]


class _TracedMethod:
    """``@tf.function`` on a method: read from an instance, the tf.function of the method bound to it (one per
    instance, as TensorFlow's), whose signature (an input_signature's binding, its concrete functions') has no
    ``self``."""

    def __init__(self, func, input_signature, relax=False):
        self.func, self.python_function, self.relax = func, func, relax
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self.bound = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, func)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        found = self.bound.get(instance)
        if found is None:
            found = self.bound[instance] = _traced(types.MethodType(self.func, instance), self.input_signature,
                                                   warned=True, relax=self.relax)
        return found

    def __call__(self, instance, *args, **kwargs):      # (the class's: Model.call(m, x))
        return self.__get__(instance)(*args, **kwargs)


class ConcreteFunction:
    """``f.get_concrete_function(...)``: the function traced for these arguments. Called on tensors (one for each
    of its tensor parameters), it runs the function with the Python values it was traced for, as the traced graph
    runs: without the function's Python prints, and no new trace. Its ``structured_input_signature`` is
    TensorFlow's (each tensor's spec named after its parameter, each Python value as it is), its ``inputs`` and
    ``structured_outputs``/``outputs`` the graph's tensors."""

    def __init__(self, run_graph, arguments: dict, outputs, function_type: tuple):
        self._run_graph, self._arguments = run_graph, arguments
        self._function_type = function_type     # (parameters, captures: tf_signatures)
        self.structured_input_signature = (tuple(arguments.values()), {})
        self.inputs = []
        _nested(tuple(arguments.values()), lambda spec: self.inputs.append(
            GraphTensor(spec.shape, spec.dtype, f"{spec.name}:0")))
        self.structured_outputs = outputs
        self.outputs = []
        _each_output(outputs, self.outputs.append)      # (the graph's tensors, flat: nest.flatten's order)

    @property
    def output_shapes(self):
        """The outputs' static shapes, in the outputs' structure (TensorFlow's nest.map_structure of .shape)."""
        return _each_output(self.structured_outputs, lambda o: o.shape)

    @property
    def output_dtypes(self):
        return _each_output(self.structured_outputs, lambda o: o.dtype)

    def pretty_printed_signature(self, verbose=True) -> str:
        parameters, captures = self._function_type
        return pretty_printed(parameters, trace_type(self.structured_outputs, output=True), captures, verbose)

    def __str__(self):
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature(verbose=False)} at 0x{id(self):X}>"

    def __call__(self, *tensors):
        names = [name for name, spec in self._arguments.items() if isinstance(spec, TensorSpec)]
        if len(tensors) != len(names):
            raise TypeError(f"the concrete function takes {len(names)} tensors, got {len(tensors)}")
        given = dict(zip(names, tensors))
        return self._run_graph(**{name: given.get(name, spec) for name, spec in self._arguments.items()})


def _each_output(outputs, read):
    if isinstance(outputs, GraphTensor):
        return read(outputs)
    if isinstance(outputs, dict):       # (visited in sorted keys, as nest does; kept in the dict's order)
        mapped = {k: _each_output(outputs[k], read) for k in sorted(outputs)}
        return {k: mapped[k] for k in outputs}
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(_each_output(v, read) for v in outputs)
    return outputs


def _concrete(func, parameters, traces, args, kwargs, silent: bool = False) -> ConcreteFunction:
    """Trace the tf.function of ``func`` as TensorFlow does for get_concrete_function: its body runs on placeholders of the specs
    (or values) given (the input_signature's where none are), as a call that traces, its parameters printed as
    the specs' placeholders; which output dimensions are unknown is found by a second, silent run with each
    unknown input dimension another size. The variables the runs change and the run's draws are restored: a
    trace computes nothing. What the first run reads from outside is the function's captures. ``silent``: the
    concrete function of a call that traced already, its trace not made again."""
    given = parameters.bind(*(args if args or kwargs else traces.signature or ()), **kwargs)
    given.apply_defaults()
    arguments = {name: _specs(v, name) for name, v in given.arguments.items()}

    def probes(size):       # (of an unknown rank: a scalar, then a vector)
        return inspect.BoundArguments(parameters, {name: _nested(spec, lambda t: Tensor(np.ones(
            [size if d is None else d for d in t.shape] if t.shape.known else [size] * (size - 1),
            DTYPES[t.dtype.name]))) for name, spec in arguments.items()})
    ctx, run = current(), current().eager.run
    saved = [(v, v.read().value.copy()) for v in list(ctx.variables)]
    drawn = run.rng.bit_generator.state
    first_probes = probes(1)
    key = trace_key([list(first_probes.arguments.values()), {}])
    muted = silent or traces.seen(key)
    held = run.captures
    run.captures = captures = Captures(func, first_probes.arguments, ctx.variables)
    try:
        first = _run_graph(func, run.sandbox, first_probes, traces, muted,
                           {name: a for name, a in arguments.items() if isinstance(a, TensorSpec)})
        run.captures = held
        second = _run_graph(func, run.sandbox, probes(2), traces, True)
    finally:
        run.captures = held
        for v, value in saved:
            v.assign(value)
        run.rng.bit_generator.state = drawn

    def output(a, b):
        if isinstance(a, Tensor):
            shape = None if a.ndim != b.ndim else [d if d == e else None for d, e in zip(a.shape, b.shape)]
            return GraphTensor(shape, a.dtype, "Identity:0")
        if isinstance(a, dict):
            return {k: output(v, b[k]) for k, v in a.items()}
        if isinstance(a, (list, tuple)):
            items = [output(x, y) for x, y in zip(a, b)]
            return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
        return a
    outputs = output(first, second)
    return ConcreteFunction(lambda **values: _run_graph(func, run.sandbox, inspect.BoundArguments(parameters, values),
                                                        traces, True, key=key), arguments, outputs,
                            (parameters_of(parameters, given), captures.read_in_order))


def _as_specs(value):
    """A call's arguments as a trace keeps them: each tensor its TensorSpec (a variable itself)."""
    if isinstance(value, Tensor) or isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return TensorSpec(value.shape, DType(dtype_name(value.dtype)))
    if isinstance(value, dict):
        return {k: _as_specs(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_as_specs(v) for v in value)
    return value


def _specs(value, name: str):
    """An argument as the concrete function's signature holds it: each tensor or spec a TensorSpec named by its
    place (``inputs_x`` for ``inputs["x"]``, as TensorFlow names them), Python values as they are."""
    if isinstance(value, (Tensor, Variable, TensorSpec)):
        return TensorSpec(value.shape, DType(value.dtype.name), name)
    if isinstance(value, dict):
        return {k: _specs(v, f"{name}_{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_specs(v, f"{name}_{i}") for i, v in enumerate(value))
    return value


def _nested(value, made):
    """``value`` with each TensorSpec in it ``made(spec)``."""
    if isinstance(value, TensorSpec):
        return made(value)
    if isinstance(value, dict):
        return {k: _nested(v, made) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_nested(v, made) for v in value)
    return value


def _run_graph(func, sandbox, bound: inspect.BoundArguments, traces, muted: bool, specs: dict | None = None,
               key=None):
    """The function's body on these arguments, as a call of the tf.function that traces (``muted`` False: its
    prints, its parameters printed as placeholders, of ``specs``' shapes where given) or runs its graph (of the
    trace for ``key``; None: a trace's run, which draws nothing of the trace's random ops): inside a function
    (tf.inside_function()), what it returns tensors."""
    ctx = current()
    run = ctx.eager.run
    tape = _function_tape(bound.arguments) if run.symbolic else None
    sandbox.muted_prints += muted
    ctx.functions += 1
    try:
        with traces.tracing(bound.arguments, muted, specs, key), \
                recording(tape) if tape is not None else contextlib.nullcontext():
            run.function_tapes.append(tape)
            try:
                result = func(*bound.args, **bound.kwargs)
            finally:
                run.function_tapes.pop()
    finally:
        sandbox.muted_prints -= muted
        ctx.functions -= 1
    return to_program(function_outputs(to_library(result)))


def _function_tape(arguments: dict) -> Tape:
    """The tape that records a function's body where the program names tf.gradients or tf.hessians (which, in
    the function, differentiate what its graph computed: tf_graphs.function_tape): persistent, every tensor
    watched, and the trainable variables the body reads."""
    tape = Tape("tf.function", persistent=True)
    tape.watched_ids = _EveryTensor()
    tape.graph = True
    return tape


class _EveryTensor(set):
    """The ids a function's tape watches: every tensor's (a graph differentiates each of its tensors: its
    arguments, what it captures and what it computes, constants too), the ids added those of its records'
    outputs. (A subclass's reflected ``&`` runs first: ``ids & watched`` is ``ids``.)"""
    __slots__ = ()

    def __contains__(self, item) -> bool:
        return True

    def __and__(self, other):
        return set(other)

    __rand__ = __and__


def _bind_signature(specs: list, bound, args, kwargs) -> None:
    """TensorFlow's binding of a call to an input_signature: each argument a tensor its TensorSpec takes (a Python
    value converted to the spec's dtype), else its TypeError."""
    names = list(bound.arguments)
    if len(args) > len(specs):
        raise _binding_failed("too many positional arguments", names, specs, args, kwargs)
    for name, spec in zip(names, specs):
        value = bound.arguments[name]
        if not isinstance(value, (Tensor, Variable)):
            value = ops.materialize(to_library(value), DTYPES[spec.dtype.name])
        if not spec.is_compatible_with(value):
            raise _binding_failed(f"Can not cast {TensorSpec.from_tensor(value)!r} to {spec!r}", names, specs, args,
                                  kwargs)
        bound.arguments[name] = value


def _binding_failed(why: str, names: list, specs: list, args, kwargs) -> TypeError:
    signature = ", ".join(f"{name}: {spec!r}" for name, spec in zip(names, specs))
    return TypeError(f"Binding inputs to tf.function failed due to `{why}`. Received args: {args!r} and kwargs: "
                     f"{kwargs!r} for signature: ({signature}).")


def custom_gradient(f=None):
    """``tf.custom_gradient(f)`` (and ``@tf.custom_gradient``): f returns ``(y, grad_fn)``."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        eager = current().eager
        eager._line(2)
        return _custom_gradient_call(eager, f, args, kwargs)
    return wrapped


@as_tensorflow
def _custom_gradient_call(eager, f, args, kwargs):
    settings = current().settings
    line = settings.line            # (the op is the call's, at its line, as on the interpreter)

    def call():
        with program_side(eager):
            result = f(*args, **kwargs)
        settings.line = line
        if isinstance(result, (list, tuple)) and len(result) == 2 and callable(result[1]):
            return [to_library(result[0]), ProgramCallable(result[1])]
        return to_library(result)           # (custom_gradient_call says what is wrong with it)
    return to_program(custom_gradient_call(eager.run, f.__name__, call, [to_library(a) for a in args],
                                           {k: to_library(v) for k, v in kwargs.items()}))
