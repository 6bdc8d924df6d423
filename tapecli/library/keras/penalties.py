"""keras.regularizers (L1, L2, L1L2) and keras.constraints (NonNeg, MaxNorm, MinMaxNorm, UnitNorm):
callables on a weight, composed from recorded ops with Keras 3's formulas (epsilon 1e-7)."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras.common import KerasObject, integer, num, scalar, tensor


class _Callable(KerasObject):
    config: tuple = ()

    def call(self, interp, args, kwargs, node):
        if len(args) != 1 or kwargs:
            raise TdfTypeError(f"{type(self).__name__} is called with one weight: {type(self).__name__}(...)(w)")
        return self.apply(tensor(args[0], "the weight"))

    def attributes(self):
        return {k: (lambda k=k: scalar(getattr(self, k))) for k in self.config}


class Regularizer(_Callable):
    kind_word = "a regularizer"


class L1L2(Regularizer):
    config = ("l1", "l2")

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = num(l1, "l1"), num(l2, "l2")
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


class L2(L1L2):
    config = ("l2",)

    def __init__(self, l2=0.01):
        super().__init__(l2=l2)


class ProgramRegularizer(Regularizer):
    """A program's function of a weight, or an instance of its class (a Regularizer subclass with __call__), as a
    layer's regularizer: its value is the call's."""

    def __init__(self, fn, interp):
        self.fn, self.interp = fn, interp

    def apply(self, x):
        return tensor(self.interp.call_value(self.fn, [x]), "the regularizer's value")


def regularizer(value, interp=None):
    """A layer's ``kernel_regularizer=``: None, a regularizer, "l1" / "l2" / "l1_l2", or (with the interpreter)
    a program's function or callable object."""
    from tapecli.interpreter.objects import BoundMethod, Function, ProgramObject
    if value is None or isinstance(value, Regularizer):
        return value
    if isinstance(value, str) and value in REGULARIZER_NAMES:
        return REGULARIZER_NAMES[value]()
    if interp is not None and isinstance(value, (Function, ProgramObject, BoundMethod)):
        return ProgramRegularizer(value, interp)
    raise TdfValueError(f"Could not interpret regularizer identifier: {value!r}")


class Constraint(_Callable):
    kind_word = "a constraint"


def _norms(w, axis):
    return ops.sqrt(ops.reduce_sum(ops.square(w), axis=axis, keepdims=True))


class NonNeg(Constraint):
    def apply(self, w):
        return ops.maximum(w, scalar(0, w.dtype))


class UnitNorm(Constraint):
    config = ("axis",)

    def __init__(self, axis=0):
        self.axis = integer(axis, "axis")

    def apply(self, w):
        return ops.div(w, ops.add(scalar(1e-7, w.dtype), _norms(w, self.axis)))


class MaxNorm(Constraint):
    config = ("max_value", "axis")

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = num(max_value, "max_value"), integer(axis, "axis")

    def apply(self, w):
        norms = _norms(w, self.axis)
        desired = ops.clip(norms, scalar(0, w.dtype), scalar(self.max_value, w.dtype))
        return ops.mul(w, ops.div(desired, ops.add(scalar(1e-7, w.dtype), norms)))


class MinMaxNorm(Constraint):
    config = ("min_value", "max_value", "rate", "axis")

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value = num(min_value, "min_value"), num(max_value, "max_value")
        self.rate, self.axis = num(rate, "rate"), integer(axis, "axis")

    def apply(self, w):
        d = w.dtype
        norms = _norms(w, self.axis)
        clipped = ops.clip(norms, scalar(self.min_value, d), scalar(self.max_value, d))
        desired = ops.add(ops.mul(scalar(self.rate, d), clipped), ops.mul(scalar(1 - self.rate, d), norms))
        return ops.mul(w, ops.div(desired, ops.add(scalar(1e-7, d), norms)))


REGULARIZER_NAMES = {"l1": L1, "l2": L2, "l1_l2": L1L2}
# registered as "regularizers.NAME" / "constraints.NAME"
REGULARIZERS = {"L1": L1, "L2": L2, "L1L2": L1L2, **REGULARIZER_NAMES}
CONSTRAINTS = {"NonNeg": NonNeg, "non_neg": NonNeg, "UnitNorm": UnitNorm, "unit_norm": UnitNorm,
               "MaxNorm": MaxNorm, "max_norm": MaxNorm, "MinMaxNorm": MinMaxNorm, "min_max_norm": MinMaxNorm}
