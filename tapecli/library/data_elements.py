"""The elements of tf.data's datasets (library/data.py): program values converted to elements as TensorFlow
converts them, the program's functions called on them, and their element_specs and how they print."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.classes import off_the_tape
from tapecli.library.control import flatten, pack_as
from tapecli.library.draws import tf_random_state
from tapecli.runtime.context import current
from tapecli.runtime.limits import tick
from tapecli.runtime.specs import TensorSpec
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import DType, PythonTuple, Tensor, Variable, dtype_name


def component(value) -> Tensor:
    """One component as tf.convert_to_tensor makes it: a literal or a list of numbers takes its default dtype."""
    if isinstance(value, Variable):
        value = value.read()
    if getattr(value, "is_ragged", False):      # (a tf.RaggedTensor: its rows are the elements, data.py)
        return value
    if isinstance(value, list):
        t = ops.stack([component(v) for v in value]) if value else ops.to_tensor(np.zeros(0, np.float32))
    else:
        t = ops.to_tensor(value)
    return Tensor((ops.materialize(t) if t.weak else t).value)


def _plain(value) -> bool:
    """A Python number (a literal) or string, or a list of them: what TensorFlow converts as one tensor."""
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return isinstance(value, (bool, int, float, str, bytes)) or (isinstance(value, Tensor) and value.weak)


def structure_of(value):
    """A dataset's structure from program values: a dict, or a list holding a tensor, a variable, a dict or a
    list with one, is a structure of components (a tuple in TensorFlow); numbers and lists of them are one
    tensor."""
    if isinstance(value, dict):
        return {k: structure_of(v) for k, v in value.items()}
    if isinstance(value, PythonTuple) or isinstance(value, list) and not _plain(value):
        return value.__class__(structure_of(v) for v in value)
    if value is None:
        raise TdfTypeError(f"tf.data: a component must be a tensor, got {type_word(value)}")
    return component(value)


def unpacked_call(interp, fn, element):
    """TensorFlow calls a dataset function with a tuple element's components as its arguments. It instantiates
    the function for each iteration of the dataset (each iterator it makes; a repeat's rounds share it), so the
    function's random ops start again there, each op a kernel of its own (the first epoch's random augmentation
    again at every epoch)."""
    args = [_own(a) for a in (list(element) if isinstance(element, list) else [element])]
    return in_function(fn, lambda: off_the_tape(lambda: interp.call_value(fn, args), "a tf.data function", None,
                                                []))


def _own(value):
    """An element's dicts and lists made again for a call (TensorFlow's traced function gets structures of its own:
    what it adds to one is not the dataset's, which a cache holds for the next epoch)."""
    if isinstance(value, dict):
        return {k: _own(v) for k, v in value.items()}
    if isinstance(value, (list, PythonTuple)):
        return value.__class__(_own(v) for v in value)
    return value


def in_function(fn, call):
    """``call()`` as a call of the dataset function ``fn`` in the iteration being drawn: its random ops draw from
    the kernels of that iteration's instantiation of ``fn``."""
    run = current().dataset_pass
    if run is None:             # (not drawn for an iteration: Dataset.reduce's function)
        return call()
    state = tf_random_state()
    saved = state.enter_function(run.kernels.setdefault(id(fn), {}))
    try:
        return call()
    finally:
        state.leave_function(saved)


def predicate_holds(interp, predicate, element, method: str) -> bool:
    t = ops.to_tensor(unpacked_call(interp, predicate, element))
    if t.dtype.kind != "b" or t.ndim != 0:
        raise TdfTypeError(f"Dataset.{method}: the predicate must return a scalar bool tensor")
    return bool(t.value)


def as_element(value):
    return pack_as(value, [component(leaf) for leaf in flatten(value)]) if isinstance(value, (list, dict)) \
        else component(value)


def counted(elements):
    """A source's elements, each charged as a step to the run's budget as it is drawn."""
    for element in elements:
        tick()
        yield element


def spec_of(element, known_rows=True):
    """The ``element_spec`` of elements like ``element``: a TensorSpec per component (the first dimension
    unknown where ``known_rows`` is False: a batch whose last one may be shorter)."""
    def spec(t):
        shape = list(t.shape)
        if shape and not known_rows:
            shape[0] = None
        return TensorSpec(shape, DType(dtype_name(t.dtype)))
    return pack_as(element, [spec(t) for t in flatten(element)])


def spec_map(spec, change):
    """``spec`` with each component's TensorSpec's shape (a list) changed."""
    return pack_as(spec, [TensorSpec(change(list(s.shape)), s.dtype) for s in flatten(spec)])


def int64_of(interp, fn, element, what: str) -> int:
    """A group_by_window function's int64 scalar (a key, a window size), as TensorFlow converts it."""
    t = ops.to_tensor(unpacked_call(interp, fn, element))
    if t.ndim != 0 or t.dtype.kind not in "iu":
        raise TdfValueError(f"Invalid `{what}`. `{what}` must return a single `tf.int64` scalar tensor but its "
                            f"return type is {spec_text(spec_of(t))}.")
    if not t.weak and t.dtype != np.int64:
        raise TdfValueError(f"Tensor conversion requested dtype int64 for Tensor with dtype {dtype_name(t.dtype)}")
    return int(t.value)


def types_text(element) -> str:
    """An element's dtypes as TensorFlow's scan error prints them."""
    names = [dtype_name(t.dtype) for t in flatten(element)]
    return f"<dtype: '{names[0]}'>" if isinstance(element, Tensor) else "(" + ", ".join(f"tf.{n}" for n in names) + ")"


def spec_text(spec) -> str:
    """An element_spec as Python prints it: tuples, dicts and the specs' reprs."""
    if isinstance(spec, dict):
        return "{" + ", ".join(f"{k!r}: {spec_text(v)}" for k, v in spec.items()) + "}"
    if isinstance(spec, (list, tuple)):
        items = [spec_text(v) for v in spec]
        if isinstance(spec, list) and not isinstance(spec, PythonTuple):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return repr(spec)

