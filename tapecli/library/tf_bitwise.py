"""tf.bitwise: the bits of integer tensors, as TensorFlow's BitwiseAnd, BitwiseOr, BitwiseXor, Invert, LeftShift
and RightShift compute them (both operands of one dtype; a shift past the width is the kernel's, NumPy's here)."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import TdfTypeError
from tapecli.interpreter.registry import builtin
from tapecli.runtime.values import dtype_name


def _integers(*operands):
    tensors = [ops.to_tensor(x) for x in operands]
    for t in tensors:
        if not t.weak and t.dtype.kind not in "iu":
            raise TdfTypeError(f"tf.bitwise takes integer tensors, got {dtype_name(t.dtype)}")
    return tensors


@builtin("bitwise.bitwise_and")
def bitwise_and(x, y, name=None):
    return ops.bitwise_and(*_integers(x, y))


@builtin("bitwise.bitwise_or")
def bitwise_or(x, y, name=None):
    return ops.bitwise_or(*_integers(x, y))


@builtin("bitwise.bitwise_xor")
def bitwise_xor(x, y, name=None):
    return ops.bitwise_xor(*_integers(x, y))


@builtin("bitwise.invert")
def invert(x, name=None):
    return ops.invert(*_integers(x))


@builtin("bitwise.left_shift")
def left_shift(x, y, name=None):
    return ops.left_shift(*_integers(x, y))


@builtin("bitwise.right_shift")
def right_shift(x, y, name=None):
    return ops.right_shift(*_integers(x, y))
