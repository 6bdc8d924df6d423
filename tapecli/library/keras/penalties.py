"""keras.regularizers (L1, L2, L1L2, OrthogonalRegularizer) and keras.constraints (NonNeg, MaxNorm, MinMaxNorm, UnitNorm):
callables on a weight, composed from recorded ops with Keras 3's formulas (epsilon 1e-7); a layer's activity
regularizer's loss, and the constraints an optimizer applies after its step."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.interpreter.printing import python_str
from tapecli.library.keras.common import KerasObject, integer, num, scalar, tensor, written
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor


class _Callable(KerasObject):
    config: tuple = ()

    def call(self, interp, args, kwargs, node):
        if len(args) != 1 or kwargs:
            raise TdfTypeError(f"{type(self).__name__} is called with one weight: {type(self).__name__}(...)(w)")
        return self.apply(tensor(args[0], "the weight"))

    def attributes(self):
        """Keras's attributes are the Python numbers it keeps (L1's and OrthogonalRegularizer's: tensors)."""
        return {k: (lambda k=k: getattr(self, k)) for k in self.config}

    def get_config(self) -> dict:
        return {k: getattr(self, k) for k in self.config}

    def methods(self):
        return {"get_config": self.get_config}


class Regularizer(_Callable):
    kind_word = "a regularizer"
    keras_bases = ("keras.Regularizer",)

    def python_class(self) -> str:
        """``type(regularizer)``: Keras's class, in its module."""
        return f"keras.src.regularizers.regularizers.{type(self).__name__}"


class L1L2(Regularizer):
    config = ("l1", "l2")

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = written(l1, "l1"), written(l2, "l2")
        if min(self.l1, self.l2) < 0:
            raise TdfValueError(f"Value for argument `l1`/`l2` must be non-negative, got l1={self.l1}, l2={self.l2}")

    def apply(self, x):
        out = scalar(0.0, x.dtype)
        if self.l1 != 0.0:
            out = ops.add(out, ops.mul(scalar(self.l1, x.dtype), ops.reduce_sum(ops.abs_(x))))
        if self.l2 != 0.0:
            out = ops.add(out, ops.mul(scalar(self.l2, x.dtype), ops.reduce_sum(ops.square(x))))
        return out


class L1(L1L2):
    """l1 * sum(|x|): L1L2's sum with its l2 term left out (0 + v is v exactly)."""
    config = ("l1",)

    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": float(np.float32(self.l1))}       # (Keras's L1 keeps its factor as a float32 tensor)

    def attributes(self):
        return {"l1": lambda: scalar(self.l1)}


class L2(L1L2):
    config = ("l2",)

    def __init__(self, l2=0.01):
        super().__init__(l2=l2)


class OrthogonalRegularizer(Regularizer):
    """Keras's penalty of a rank-2 weight's rows (``mode="rows"``) or columns not being orthogonal: the mean over
    pairs of the absolute dot products of the L2-normalized rows or columns, times ``factor`` (a float32 tensor,
    as Keras keeps it) and 0.5, in Keras's order of ops."""

    def __init__(self, factor=0.01, mode="rows"):
        value = written(factor, "factor")
        if math.isinf(value) or math.isnan(value) or value < 0:
            raise TdfValueError(f"Invalid value for argument factor: expected a non-negative float.Received: "
                                f"factor={python_str(factor)}")
        self.factor = np.float32(value)
        if mode not in ("rows", "columns"):
            raise TdfValueError(f'Invalid value for argument `mode`. Expected one of {{"rows", "columns"}}. '
                                f"Received: mode={python_str(mode)}")
        self.mode = mode

    def attributes(self):
        return {"factor": lambda: scalar(self.factor), "mode": lambda: self.mode}

    def get_config(self) -> dict:
        return {"factor": float(self.factor), "mode": self.mode}

    def apply(self, x):
        if len(x.shape) != 2:
            raise TdfValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape="
                                f"{python_str(tuple(x.shape))}")
        rows = self.mode == "rows"
        # (Keras's ops.normalize of order 2: x * min(rsqrt(sum(x^2)), 1 / epsilon))
        inv_norm = ops.minimum(ops.rsqrt(ops.reduce_sum(ops.square(x), axis=1 if rows else 0, keepdims=True)),
                               scalar(1.0 / 1e-7, x.dtype))
        unit = ops.mul(x, inv_norm)
        product = ops.matmul(unit, ops.transpose(unit)) if rows else ops.matmul(ops.transpose(unit), unit)
        size = x.shape[0 if rows else 1]
        off_diagonal = ops.mul(product, Tensor(1.0 - np.eye(size, dtype=x.dtype)))
        pairs = size * (size - 1.0) / 2.0
        total = ops.mul(ops.mul(scalar(self.factor), scalar(0.5)), ops.reduce_sum(ops.abs_(off_diagonal)))
        return ops.div(total, scalar(pairs, total.dtype))


class ProgramPenalty:
    """A program's function of a weight, or an instance of its class (a subclass with __call__), as a layer's
    regularizer or constraint: its value is the call's."""

    def __init__(self, fn, interp):
        self.fn, self.interp = fn, interp

    def apply(self, x):
        return tensor(self.interp.call_value(self.fn, [x]), f"the {self.what}'s value")


def _resolve(value, interp, base, names: dict, program, what: str):
    """A layer's ``kernel_regularizer=`` or ``kernel_constraint=``: None, an object of ``base``, one of ``names``
    or its config (keras.regularizers.serialize's), or (with the interpreter) a program's function or callable
    object (``program``)."""
    from tapecli.interpreter.objects import BoundMethod, Function, ProgramObject
    if value is None or isinstance(value, base):
        return value
    if isinstance(value, str) and value in names:
        return names[value]()
    if isinstance(value, dict) and value.get("class_name") in names:
        return names[value["class_name"]](**value.get("config", {}))
    if interp is not None and isinstance(value, (Function, ProgramObject, BoundMethod)):
        return program(value, interp)
    raise TdfValueError(f"Could not interpret {what} identifier: {value!r}")


class ProgramRegularizer(ProgramPenalty, Regularizer):
    what = "regularizer"


def regularizer(value, interp=None):
    """A layer's ``kernel_regularizer=``: None, a regularizer, "l1" / "l2" / "l1_l2", or (with the interpreter)
    a program's function or callable object."""
    return _resolve(value, interp, Regularizer, REGULARIZERS, ProgramRegularizer, "regularizer")


class Constraint(_Callable):
    kind_word = "a constraint"
    keras_bases = ("keras.Constraint",)

    def python_class(self) -> str:
        """``type(constraint)``: Keras's class, in its module."""
        return f"keras.src.constraints.constraints.{type(self).__name__}"


class ProgramConstraint(ProgramPenalty, Constraint):
    what = "constraint"


def constraint(value, interp=None):
    """A layer's ``kernel_constraint=``: None, a constraint, its name ("non_neg", "max_norm", ...), or (with
    the interpreter) a program's function or callable object (an instance of a Constraint subclass)."""
    return _resolve(value, interp, Constraint, CONSTRAINTS, ProgramConstraint, "constraint")


def hold_constraint(variable, given, interp=None) -> None:
    """A variable made with ``constraint=`` (tf.Variable's, add_weight's): the constraint Keras's optimizers apply
    to it after each step (``constrain``)."""
    if given is not None:
        current().constraints[variable.id] = constraint(given, interp)


def scale_and_offset(interp, gamma_regularizer, beta_regularizer, gamma_constraint, beta_constraint) -> tuple:
    """A normalization layer's regularizers and constraints of its ``gamma`` and ``beta``, by weight name."""
    return ({"gamma": regularizer(gamma_regularizer, interp), "beta": regularizer(beta_regularizer, interp)},
            {"gamma": constraint(gamma_constraint, interp), "beta": constraint(beta_constraint, interp)})


def constrain(variables) -> None:
    """Keras's constraints after an optimizer's step: each variable made with one (a layer's
    ``kernel_constraint=``) takes the constraint's value of its new value."""
    constraints = current().constraints
    for v in variables if constraints else ():
        found = constraints.get(v.id)
        if found is not None:
            new = found.apply(Tensor(v.read().value))
            v.assign(np.asarray(tensor(new, "the constraint's value").value, dtype=v.dtype).reshape(v.shape))


def activity_loss(regularizer, output) -> Tensor:
    """A layer's ``activity_regularizer=`` of its output, as Keras's Layer.__call__ adds it to the layer's
    losses: divided by the batch size (the output's first dimension)."""
    loss = regularizer.apply(output)
    if output.ndim > 0:
        loss = ops.div(loss, scalar(output.shape[0], loss.dtype))
    return loss


def as_given(value, what):
    """A constraint's number as Keras keeps it: the program's int or float, unconverted."""
    if isinstance(value, Tensor) and value.weak and value.ndim == 0:
        return value.value.item()
    return value if isinstance(value, int) and not isinstance(value, bool) else num(value, what)


def _norms(w, axis):
    return ops.sqrt(ops.reduce_sum(ops.square(w), axis=axis, keepdims=True))


class NonNeg(Constraint):
    def apply(self, w):
        return ops.maximum(w, scalar(0, w.dtype))


class UnitNorm(Constraint):
    config = ("axis",)

    def __init__(self, axis=0):
        self.axis = as_given(axis, "axis")

    def apply(self, w):
        return ops.div(w, ops.add(scalar(1e-7, w.dtype), _norms(w, integer(self.axis, "axis"))))


class MaxNorm(Constraint):
    config = ("max_value", "axis")

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = as_given(max_value, "max_value"), as_given(axis, "axis")

    def apply(self, w):
        norms = _norms(w, integer(self.axis, "axis"))
        desired = ops.clip(norms, scalar(0, w.dtype), scalar(self.max_value, w.dtype))
        return ops.mul(w, ops.div(desired, ops.add(scalar(1e-7, w.dtype), norms)))


class MinMaxNorm(Constraint):
    config = ("min_value", "max_value", "rate", "axis")

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value = as_given(min_value, "min_value"), as_given(max_value, "max_value")
        self.rate, self.axis = as_given(rate, "rate"), as_given(axis, "axis")

    def apply(self, w):
        d = w.dtype
        norms = _norms(w, integer(self.axis, "axis"))
        clipped = ops.clip(norms, scalar(self.min_value, d), scalar(self.max_value, d))
        desired = ops.add(ops.mul(scalar(self.rate, d), clipped), ops.mul(scalar(1 - self.rate, d), norms))
        return ops.mul(w, ops.div(desired, ops.add(scalar(1e-7, d), norms)))


REGULARIZER_NAMES = {"l1": L1, "l2": L2, "l1_l2": L1L2}
# registered as "regularizers.NAME" / "constraints.NAME"
REGULARIZERS = {"L1": L1, "L2": L2, "L1L2": L1L2, "OrthogonalRegularizer": OrthogonalRegularizer,
                "orthogonal_regularizer": OrthogonalRegularizer, **REGULARIZER_NAMES}
CONSTRAINTS = {"NonNeg": NonNeg, "non_neg": NonNeg, "UnitNorm": UnitNorm, "unit_norm": UnitNorm,
               "MaxNorm": MaxNorm, "max_norm": MaxNorm, "MinMaxNorm": MinMaxNorm, "min_max_norm": MinMaxNorm}
