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


def _bitwise(name: str, op):
    def run(x, y=None, name=None):
        return op(*_integers(x) if y is None else _integers(x, y))
    run.__name__ = name
    return builtin(f"bitwise.{name}")(run)


bitwise_and, bitwise_or, bitwise_xor = (_bitwise(n, getattr(ops, n)) for n in ("bitwise_and", "bitwise_or", "bitwise_xor"))
left_shift, right_shift = (_bitwise(n, getattr(ops, n)) for n in ("left_shift", "right_shift"))


@builtin("bitwise.invert")
def invert(x, name=None):
    return ops.invert(*_integers(x))
