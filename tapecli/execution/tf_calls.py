"""``tf.function``, ``tf.TensorSpec`` and ``tf.custom_gradient`` of a TensorFlow program that CPython runs
(execution/tensorflow.py), with the interpreter's semantics: a ``tf.function`` is the function itself, run eagerly
on every call (its options checked, a decorated function with Python side effects warned of as the interpreter
warns); a ``custom_gradient`` function's body runs unrecorded and its result is one recorded op whose gradient is the
program's own ``grad_fn``, a real Python function called by the backward pass (interpreter/objects.py,
``custom_gradient_call``: the same op, so the tapes, ``explain`` and higher orders see what the interpreter's do)."""
from __future__ import annotations

import ast
import functools
import inspect

import numpy as np

from tapecli import ops
from tapecli.execution.tf_values import ProgramCallable, as_tensorflow, program_side, to_library, to_program
from tapecli.frontend.spellings import cpython_side_effects, traced_side_effects
from tapecli.interpreter.objects import Traces, custom_gradient_call, function_outputs, trace_key
from tapecli.runtime.context import current
from tapecli.runtime.specs import TensorSpec
from tapecli.runtime.values import DTYPES, Tensor, Variable


def traced_warnings(tree: ast.Module, aliases: set[str]) -> dict[int, str]:
    """The warning of each function the program decorates with ``@tf.function`` (or ``@tf.function(...)``) that
    has Python side effects, by the line of its first decorator (its code's first line, where the interpreter
    warns)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _names_function(d, aliases) for d in node.decorator_list):
            message = traced_side_effects(node.name, cpython_side_effects(node))
            if message:
                out[node.decorator_list[0].lineno] = message
    return out


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
        given = options.get("input_signature")
        if func is None:
            return lambda f: _traced(f, given)
        return _traced(func, given)
    function.__doc__ = library_function.__doc__
    return function


def _traced(func, input_signature=None):
    """A function decorated with ``@tf.function``: itself, its side effects warned of at its decorator; a call
    whose arguments it was traced for runs the traced graph, without its Python ``print``s (objects.trace_key).
    In it, NumPy arrays are tensors, as TensorFlow converts them; what it returns is tensors
    (objects.function_outputs)."""
    code = getattr(func, "__code__", None)
    run = current().eager.run
    if code is not None and code.co_filename == run.sandbox.filename:
        message = run.traced.get(code.co_firstlineno)
        if message:
            current().settings.warn(message, code.co_firstlineno)
    if not callable(func):
        return func
    traces, sandbox = Traces(None if input_signature is None else list(input_signature)), run.sandbox
    parameters = inspect.signature(func)

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
        muted = traces.seen(trace_key([list(args), kwargs]))
        sandbox.muted_prints += muted
        ctx.functions += 1                      # (tf.inside_function() is True in its call)
        try:
            with traces.tracing(bound.arguments, muted):
                result = func(*bound.args, **bound.kwargs)
        finally:
            sandbox.muted_prints -= muted
            ctx.functions -= 1
        return to_program(function_outputs(to_library(result)))
    traced.experimental_get_tracing_count = lambda: traces.count
    return traced


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
