"""TensorFlow's static shapes and specs as a Python program holds them: ``tf.TensorShape`` (``t.shape``, a shape
with unknown dimensions or rank) and ``tf.TensorSpec`` (an ``input_signature``'s entries, a dataset's
``element_spec``). Plain Python values: they compute nothing, and print as TensorFlow 2.21 prints them."""
from __future__ import annotations

import numpy as np

from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.runtime.values import DType, Tensor


class Shape(tuple):
    """``tf.TensorShape``: its dimensions (an int, or None where unknown), or an unknown rank
    (``TensorShape(None)``: ``known`` False, no dimensions). Printed ``(None, 3)``, its repr
    ``TensorShape([None, 3])``."""

    known = True

    def __new__(cls, dims=()):
        if dims is None:
            made = super().__new__(cls, ())
            made.known = False
            return made
        if isinstance(dims, Shape) and not dims.known:
            return cls(None)
        if isinstance(dims, (int, np.integer)):
            dims = [dims]
        return super().__new__(cls, (None if d is None else _dimension(d) for d in dims))

    def __repr__(self):
        return f"TensorShape({list(self)})" if self.known else "TensorShape(None)"

    def __str__(self):
        if not self.known:
            return "<unknown>"
        return tuple.__repr__(tuple("None" if d is None else d for d in self)).replace("'", "")

    def __eq__(self, other):
        if isinstance(other, Shape) and not (self.known and other.known):
            return False
        return tuple(self) == (tuple(other) if isinstance(other, (list, tuple)) else other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __getattr__(self, name):
        raise AttributeError(f"'TensorShape' object has no attribute '{name}'")     # (TensorFlow's class name)

    def __getitem__(self, key):
        got = tuple.__getitem__(self, key)
        return Shape(got) if isinstance(key, slice) else got

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return Shape(other).concatenate(self)

    def as_list(self) -> list:
        if not self.known:
            raise TdfValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self)

    @property
    def rank(self):
        return len(self) if self.known else None

    ndims = rank

    @property
    def dims(self):
        return list(self) if self.known else None

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        return int(np.prod(self, dtype=np.int64))

    def is_fully_defined(self) -> bool:
        return self.known and None not in self

    def is_compatible_with(self, other) -> bool:
        other = Shape(other)
        if not (self.known and other.known):
            return True
        return len(self) == len(other) and all(a is None or b is None or a == b for a, b in zip(self, other))

    def merge_with(self, other) -> "Shape":
        other = Shape(other)
        if not self.is_compatible_with(other):
            raise TdfValueError(f"Shapes {self} and {other} are not compatible")
        if not self.known:
            return other
        if not other.known:
            return self
        return Shape(a if b is None else b for a, b in zip(self, other))

    def concatenate(self, other) -> "Shape":
        other = Shape(other)
        return Shape([*self, *other]) if self.known and other.known else Shape(None)

    def with_rank(self, rank: int) -> "Shape":
        if self.known and len(self) != rank:
            raise TdfValueError(f"Shape {self} must have rank {rank}")
        return self if self.known else Shape([None] * rank)


def static_shape(value) -> Shape:
    """A shape argument as the library holds it (a Shape, a tensor of its dimensions, a list of ints, 0-d
    tensors and None) as a Shape."""
    if isinstance(value, Shape) or value is None:
        return Shape(value)
    if isinstance(value, Tensor):
        return Shape(int(d) for d in np.asarray(value.value).reshape(-1))
    return Shape(None if d is None else int(d.value) if isinstance(d, Tensor) and d.ndim == 0 else d for d in value)


def _dimension(d) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TdfTypeError(f"Dimension value must be integer or None, got {type(d).__name__}")
    if d < 0:
        raise TdfValueError(f"Dimension {d} must be >= 0")
    return int(d)


class TypeSpec:
    """``tf.TypeSpec``: the base of TensorFlow's specs (``isinstance(spec, tf.TypeSpec)``)."""


class TensorSpec(TypeSpec):
    """``tf.TensorSpec(shape, dtype=tf.float32, name=None)``: what an ``input_signature`` lists (tapecli runs a
    tf.function eagerly: the signature changes nothing it computes) and a dataset's ``element_spec`` holds."""

    def __init__(self, shape, dtype=None, name=None):
        self.shape = Shape(shape)
        self.dtype = DType("float32") if dtype is None else dtype
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None) -> "TensorSpec":
        return cls(tensor.shape, tensor.dtype, name)

    def __repr__(self):
        shape = tuple.__repr__(tuple(self.shape)) if self.shape.known else "<unknown>"
        return f"TensorSpec(shape={shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype.name, self.name) == \
            (other.shape, other.dtype.name, other.name)

    __hash__ = object.__hash__

    def is_compatible_with(self, value) -> bool:
        """A spec or a tensor of a compatible shape and the same dtype."""
        dtype = getattr(value, "dtype", None)
        return getattr(dtype, "name", None) == self.dtype.name and self.shape.is_compatible_with(value.shape)


class DatasetSpec(TypeSpec):
    """``tf.data.DatasetSpec``: a dataset's elements' spec, where the elements are datasets (Dataset.window's)."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"


class RaggedTensorSpec(TypeSpec):
    """``tf.RaggedTensorSpec(shape, dtype, ragged_rank)``: a ragged tensor's spec (tf.map_fn's
    fn_output_signature, a dataset's element_spec); its ragged rank one less than its rank by default."""

    def __init__(self, shape=None, dtype=None, ragged_rank=None):
        self.shape = Shape(shape)
        self.dtype = DType("float32") if dtype is None else dtype
        if ragged_rank is None:
            if not self.shape.known:
                raise TdfValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = len(self.shape) - 1
        self.ragged_rank = ragged_rank

    def __repr__(self):
        return f"RaggedTensorSpec({self.shape!r}, tf.{self.dtype.name}, {self.ragged_rank}, tf.int64)"

    def __eq__(self, other):
        return isinstance(other, RaggedTensorSpec) and (self.shape, self.dtype.name, self.ragged_rank) == \
            (other.shape, other.dtype.name, other.ragged_rank)

    __hash__ = object.__hash__
