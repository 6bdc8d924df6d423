"""keras.InputSpec (keras.layers.InputSpec): what a layer takes as its first argument, and Keras 3.15's check of it
(``assert_input_compatibility``), which Layer.__call__ makes before building and calling a program's layer."""
from __future__ import annotations

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.printing import python_str
from tapecli.library.core import to_dtype
from tapecli.library.keras.common import KerasObject, dims, flag, integer
from tapecli.runtime.values import PythonTuple, dtype_name


class InputSpec(KerasObject):
    kind_word = "an InputSpec"

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = None if dtype is None else dtype_name(to_dtype(dtype))
        self.shape = None if shape is None else tuple(dims(shape, "shape"))
        self.ndim = len(self.shape) if self.shape is not None else _maybe_int(ndim, "ndim")
        self.max_ndim, self.min_ndim = _maybe_int(max_ndim, "max_ndim"), _maybe_int(min_ndim, "min_ndim")
        self.name, self.optional = name, flag(optional)
        self.allow_last_axis_squeeze = flag(allow_last_axis_squeeze)
        try:
            self.axes = {integer(k, "an axis"): (None if v is None else integer(v, "a dimension"))
                         for k, v in (axes or {}).items()}
        except (TdfTypeError, AttributeError):
            raise TdfTypeError(f"Argument `axes` must be a dict with integer keys. Received: axes="
                               f"{python_str(axes)}") from None
        if self.axes and (self.ndim or self.max_ndim):
            top = (self.ndim or self.max_ndim) - 1
            if max(self.axes) > top:
                raise TdfValueError(f"Axis {max(self.axes)} is greater than the maximum allowed value: {top}")

    def python_class(self) -> str:
        return "keras.src.layers.input_spec.InputSpec"

    def python_text(self) -> str:
        parts = [f"dtype={self.dtype}" if self.dtype else "", f"shape={_shape_text(self.shape)}" if self.shape else "",
                 f"ndim={self.ndim}" if self.ndim else "", f"max_ndim={self.max_ndim}" if self.max_ndim else "",
                 f"min_ndim={self.min_ndim}" if self.min_ndim else "", f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(p for p in parts if p)})"

    def attributes(self):
        return {"dtype": lambda: self.dtype, "shape": lambda: _shape_value(self.shape), "ndim": lambda: self.ndim,
                "max_ndim": lambda: self.max_ndim, "min_ndim": lambda: self.min_ndim, "axes": lambda: dict(self.axes),
                "name": lambda: self.name, "optional": lambda: self.optional,
                "allow_last_axis_squeeze": lambda: self.allow_last_axis_squeeze}

    def methods(self):
        return {"get_config": self.get_config}

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "shape": _shape_value(self.shape), "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": dict(self.axes), "optional": self.optional}


def _maybe_int(value, what):
    return None if value is None else integer(value, what)


def _shape_value(shape):
    return None if shape is None else PythonTuple(shape)


def _shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def check_inputs(spec, inputs, layer_name: str) -> None:
    """Keras's assert_input_compatibility of ``inputs`` (a layer's first argument) with the layer's ``input_spec``
    (one InputSpec, or a list of them): a ValueError naming what differs."""
    specs = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    if not specs:
        return
    if isinstance(inputs, dict) and all(isinstance(s, InputSpec) and s.name for s in specs):
        missing = next((s.name for s in specs if s.name not in inputs), None)
        if missing is not None:
            raise TdfValueError(f'Missing data for input "{missing}". You passed a data dictionary with keys '
                                f"{python_str(list(inputs))}. Expected the following keys: "
                                f"{python_str([s.name for s in specs])}")
        inputs = [inputs[s.name] for s in specs]
    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(values) != len(specs):
        raise TdfValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(values)} '
                            f"input tensors. Inputs received: {python_str(values)}")
    for index, (x, s) in enumerate(zip(values, specs)):
        if s is None or (x is None and s.optional):
            continue
        if not isinstance(s, InputSpec):
            raise TdfTypeError(f"a layer's input_spec holds InputSpecs, got {python_str(s)}")
        _check_one(index, x, s, layer_name)


def _check_one(index: int, x, spec: InputSpec, layer_name: str) -> None:
    shape = getattr(x, "shape", None)
    if shape is None:
        raise TdfValueError(f"Inputs to a layer should be tensors. Got '{python_str(x)}' as input for layer "
                            f"'{layer_name}'.")
    shape = tuple(shape)
    ndim = len(shape)
    where = f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible with the layer: "
    if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
        raise TdfValueError(f"{where}expected ndim={spec.ndim}, found ndim={ndim}. Full shape received: "
                            f"{_shape_text(shape)}")
    if spec.max_ndim is not None and ndim > spec.max_ndim:
        raise TdfValueError(f"{where}expected max_ndim={spec.max_ndim}, found ndim={ndim}")
    if spec.min_ndim is not None and ndim < spec.min_ndim:
        raise TdfValueError(f"{where}expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full shape received: "
                            f"{_shape_text(shape)}")
    if spec.dtype is not None:
        found = dtype_name(x.dtype)
        if found != spec.dtype:
            raise TdfValueError(f"{where}expected dtype={spec.dtype}, found dtype={found}")
    for axis, value in spec.axes.items():
        if value is not None and shape[axis] not in (value, None):
            raise TdfValueError(f"{where}expected axis {axis} of input shape to have value {value}, but received "
                                f"input with shape {_shape_text(shape)}")
    if spec.shape is not None:
        want, have = spec.shape, shape
        if spec.allow_last_axis_squeeze:
            have = have[:-1] if have and have[-1] == 1 else have
            want = want[:-1] if want and want[-1] == 1 else want
        if any(w is not None and h is not None and w != h for w, h in zip(want, have)):
            raise TdfValueError(f"{where}expected shape={_shape_text(spec.shape)}, found shape={_shape_text(have)}")

