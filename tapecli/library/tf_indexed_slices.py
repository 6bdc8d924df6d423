"""``tf.IndexedSlices``: rows of a tensor given by their indices, as a program makes them for a variable's
``scatter_update``/``scatter_add``/... and reads them (``values``, ``indices``, ``dense_shape``). An op that takes
one converts it to its dense tensor (the rows summed into place), as TensorFlow does. A Python program's
``tape.gradient`` of a variable read only by gathers (an Embedding's table) is one (autodiff/gradients.py), as
TensorFlow's; norms and clipping take its rows, optimizers square them row by row."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import NoAttribute, TdfTypeError
from tapecli.interpreter.objects import ProgramObject
from tapecli.interpreter.printing import python_str
from tapecli.interpreter.registry import builtin
from tapecli.runtime.values import DType, Tensor, TensorShape, dtype_name


class IndexedSlices(ProgramObject):
    kind_word = "a tf.IndexedSlices"
    is_indexed_slices = True

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Tensor | None):
        self.values, self.indices, self.dense_shape = values, indices, dense_shape

    def get_attribute(self, interp, attr, node):
        if attr in ("values", "indices", "dense_shape"):
            return getattr(self, attr)
        if attr == "dtype":
            return DType(dtype_name(self.values.dtype))
        if attr == "shape":         # (TensorFlow's static shape: the dense shape's)
            return None if self.dense_shape is None else TensorShape(
                np.asarray(self.dense_shape.value, dtype=np.int64), weak=True)
        raise NoAttribute(f"a tf.IndexedSlices has no attribute {attr}",
                           hint="it has values, indices, dense_shape, dtype and shape")

    def as_dense_tensor(self) -> Tensor:
        """The dense tensor (tf.convert_to_tensor): each row added into place, in order."""
        if self.dense_shape is None:
            raise TdfTypeError("a tf.IndexedSlices without a dense_shape cannot be converted to a tensor")
        values = np.asarray(self.values.value)
        dense = np.zeros(tuple(int(d) for d in np.asarray(self.dense_shape.value)), dtype=values.dtype)
        np.add.at(dense, np.asarray(self.indices.value), values)
        return Tensor(dense)

    def negated(self) -> "IndexedSlices":
        """``-slices``: the rows negated, still IndexedSlices (TensorFlow's one operator on them)."""
        return IndexedSlices(ops.neg(self.values), self.indices, self.dense_shape)

    def scaled(self, factor) -> "IndexedSlices":
        """The rows times ``factor`` (tf.clip_by_norm's and clip_by_global_norm's result for IndexedSlices)."""
        return IndexedSlices(ops.mul(self.values, factor), self.indices, self.dense_shape)

    def python_text(self) -> str:
        """``print(slices)``: TensorFlow's text of its three tensors."""
        shape = "None" if self.dense_shape is None else python_str(self.dense_shape)
        return (f"IndexedSlices(indices={python_str(self.indices)}, values={python_str(self.values)}, "
                f"dense_shape={shape})")


@builtin("IndexedSlices")
def indexed_slices(values, indices, dense_shape=None):
    """``tf.IndexedSlices(values, indices, dense_shape=None)``: each a tensor as tf.convert_to_tensor makes it."""
    made = [None if v is None else ops.materialize(t) if (t := ops.to_tensor(v)).weak else t
            for v in (values, indices, dense_shape)]
    if made[0] is None or made[1] is None:
        raise TdfTypeError("tf.IndexedSlices: tapecli takes its values and indices as tensors, got None")
    if made[1].dtype.kind not in "iu" or made[1].ndim != 1:
        raise TdfTypeError(f"tf.IndexedSlices: indices must be a vector of integers, got {dtype_name(made[1].dtype)} "
                           f"of shape {list(made[1].shape)}")
    return IndexedSlices(*made)


indexed_slices.makes = IndexedSlices        # (isinstance(x, tf.IndexedSlices): classes.is_instance)
