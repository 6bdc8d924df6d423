"""A traced ``tf.function``'s signature as TensorFlow prints it (``ConcreteFunction.pretty_printed_signature``,
``Function.pretty_printed_concrete_signatures``: the repr and str of TensorFlow's FunctionType, of
core/function/polymorphism/function_type.py): its parameters with their trace types (default_types' reprs, each
``*args`` item and ``**kwargs`` entry a parameter of its own), its output's trace type, and its captures, what
its body read from outside (:class:`Captures`)."""
from __future__ import annotations

import contextlib
import inspect

import numpy as np

from tapecli.errors import TdfTypeError
from tapecli.runtime.specs import Shape, TensorSpec
from tapecli.runtime.values import DType, Tensor, Variable, dtype_name, new_id

_RESOURCE = "TensorSpec(shape=(), dtype=tf.resource, name=None)"


class GraphTensor:
    """A traced graph's tensor: its shape (None where a dimension is unknown) and dtype, printed as TensorFlow's."""

    def __init__(self, shape, dtype, name):
        self.shape, self.name = Shape(shape), name
        self.dtype = dtype if isinstance(dtype, DType) else DType(dtype_name(dtype))

    def __str__(self):
        return f'Tensor("{self.name}", shape={self.shape}, dtype={self.dtype.name})'

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"


class Captures:
    """What a trace's body reads from outside it, in the order it first reads each: a tensor made before the
    trace began (not an argument's), as its TensorSpec, or a variable, as its resource handle's, keyed by the
    object's id (TensorFlow keys a capture by its handle's id: a number of no meaning but identity). A scalar
    constant is one tensor for every use of its value (ops.materialize's cache): it is the function's capture
    only where the function names it (a global or a closure's), not where its body makes it anew."""

    def __init__(self, func, arguments, variables):
        self.first_id = new_id()
        self.named = {id(v) for v in _names_of(func)}
        self.arguments = set()
        _each_value(arguments, lambda v: self.arguments.add(v.id))
        self.variables = {v.id: v for v in variables}       # (a variable's read shares its id)
        self.read_in_order: dict[int, str] = {}

    def read(self, value) -> None:
        """Note ``value`` (a tensor, a variable, or a list, tuple or dict of them) as read by the body."""
        _each_value(value, self._read_one)

    def _read_one(self, value) -> None:
        if value.id in self.arguments:
            return
        if isinstance(value, Variable) or value.id in self.variables:
            self.read_in_order.setdefault(id(self.variables.get(value.id, value)), _RESOURCE)
        elif value.id < self.first_id and value.__class__ is Tensor and not value.weak and (
                value.value.__class__ is np.ndarray or id(value) in self.named):
            self.read_in_order.setdefault(id(value), _spec(value.shape, value.dtype))


def _names_of(func) -> list:
    """The values of the globals and closure variables ``func``'s code (its nested functions' too) names."""
    code = getattr(func, "__code__", None)
    if code is None:
        return []
    names, codes = set(), [code]
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes += [k for k in c.co_consts if inspect.iscode(k)]
    found = [func.__globals__[n] for n in names if n in func.__globals__]
    for cell in func.__closure__ or ():
        with contextlib.suppress(ValueError):           # (a cell not bound yet)
            found.append(cell.cell_contents)
    return found


def _each_value(value, seen) -> None:
    if isinstance(value, (Tensor, Variable)):
        seen(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _each_value(v, seen)
    elif isinstance(value, dict):
        for v in value.values():
            _each_value(v, seen)


def parameters_of(signature: inspect.Signature, bound: inspect.BoundArguments) -> list[tuple]:
    """The concrete function's parameters (name, kind, trace type) as TensorFlow makes them of a call's
    (function_type.canonicalize_to_monomorphic): where the function has ``*args``, the parameters before it
    positional-only and each of its items one (``args_0``...); each ``**kwargs`` entry keyword-only, by name."""
    aliases: dict[int, int] = {}
    made = []
    variadic = any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values())
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            made += [(f"{name}_{i}", inspect.Parameter.POSITIONAL_ONLY, trace_type(v, aliases))
                     for i, v in enumerate(value)]
        elif kind is inspect.Parameter.VAR_KEYWORD:
            made += [(k, inspect.Parameter.KEYWORD_ONLY, trace_type(value[k], aliases)) for k in sorted(value)]
        else:
            if variadic and kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
                kind = inspect.Parameter.POSITIONAL_ONLY
            made.append((name, kind, trace_type(value, aliases)))
    return made


def trace_type(value, aliases: dict | None = None, output: bool = False) -> str:
    """The repr of ``value``'s trace type (trace_type_builder.from_value): a tensor's TensorSpec (a spec's own
    name kept), a variable's VariableSpec (its alias_id its place among the variables), a Python value's
    ``Literal``, a list's, tuple's, named tuple's or dict's of its items'. Of an ``output``, a string is the
    tensor the function returns."""
    if isinstance(value, TensorSpec):
        return repr(value)
    if isinstance(value, Variable):
        alias = aliases.setdefault(id(value), len(aliases))
        return (f"VariableSpec(shape={_dims(value.shape)}, dtype=tf.{dtype_name(value.dtype)}, "
                f"trainable={value.trainable}, alias_id={alias})")
    if isinstance(value, (Tensor, np.ndarray)):
        return _spec(value.shape, value.dtype)
    if isinstance(value, GraphTensor):
        return repr(TensorSpec(value.shape, value.dtype))
    if output and isinstance(value, (str, bytes)):
        return repr(TensorSpec((), DType("string")))
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return _pairs(type(value).__name__, zip(value._fields, value), aliases, output)
    if isinstance(value, (list, tuple)):
        items = ", ".join(trace_type(v, aliases, output) for v in value)
        return f"{'List' if isinstance(value, list) else 'Tuple'}[{items}]"
    if isinstance(value, dict):
        return _pairs("Dict", value.items(), aliases, output)
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return f"Literal[{value!r}]"
    raise TdfTypeError(f"the signature of a tf.function given a {type(value).__name__} is not one tapecli prints "
                       "(TensorFlow prints a weak reference to it)")


def _pairs(name: str, items, aliases, output) -> str:
    return f"{name}[{', '.join(f'[{k!r}, {trace_type(v, aliases, output)}]' for k, v in items)}]"


def _dims(shape) -> str:
    return str(tuple(shape))


def _spec(shape, dtype: np.dtype) -> str:
    return repr(TensorSpec(shape, DType(dtype_name(dtype))))


def pretty_printed(parameters: list[tuple], output: str, captures: dict, verbose: bool) -> str:
    """FunctionType's repr (``verbose``: its sections, one line each) or str (inspect.Signature's)."""
    if verbose:
        lines = ["Input Parameters:", *(f"  {name} ({kind.name}): {kind_type}" for name, kind, kind_type in parameters),
                 "Output Type:", f"  {output}", "Captures:"]
        lines += [f"  {key}: {spec}" for key, spec in captures.items()] or ["  None"]
        return "\n".join(lines)
    rendered, positional_only, keyword_marker = [], False, True
    for name, kind, kind_type in parameters:
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only = True
        elif positional_only:
            rendered.append("/")
            positional_only = False
        if kind is inspect.Parameter.KEYWORD_ONLY and keyword_marker:
            rendered.append("*")
            keyword_marker = False
        rendered.append(f"{name}: {kind_type}")
    if positional_only:
        rendered.append("/")
    return f"({', '.join(rendered)}) -> {output}"
