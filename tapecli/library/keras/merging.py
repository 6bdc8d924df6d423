"""Keras 3's merging layers (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot) and
their functional forms (``keras.layers.add([a, b])``): one call on a list of inputs, symbolic or not."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.keras.common import flag, float_dtype, integer, scalar, tensor
from tapecli.library.keras.layers import Layer, eager_mask, keep_mask
from tapecli.library.keras.keras_tensor import KerasTensor
from tapecli.library.keras.losses import l2_normalize
from tapecli.library.keras.ops_numpy import concatenate
from tapecli.runtime.values import Tensor


def _broadcast(shapes):
    out = []
    for dims in zip(*[s[::-1] for s in shapes]):
        known = {d for d in dims if d not in (None, 1)}
        out.append(known.pop() if len(known) == 1 else (None if None in dims else 1))
    return tuple(out[::-1])


class Merge(Layer):
    """A layer called on a list of tensors; ``merge`` combines them as Keras's ``_merge_function``."""

    replayable = True
    replay_lists = True     # its inputs are taken as tensors, each its own (not packed in Python)
    supports_masking = True
    least, most = 2, None

    def inputs_of(self, x):
        if not isinstance(x, (list, tuple)) or not self.least <= len(x) <= (self.most or len(x)):
            n = "exactly 2" if self.most == 2 else "a list of at least 2"
            raise TdfValueError(f"A `{type(self).__name__}` layer should be called on {n} inputs. "
                                f"Received: {'a single input' if not isinstance(x, (list, tuple)) else len(x)}")
        return list(x)

    def call(self, interp, args, kwargs, node):
        kwargs = dict(kwargs)
        x = args[0] if args else kwargs.pop("inputs", None)
        training = kwargs.pop("training", None)
        if x is None or len(args) > 1 or kwargs:
            raise TdfTypeError(f"a {type(self).__name__} layer is called with one list of inputs: layer([a, b])")
        xs = self.inputs_of(x)
        if any(isinstance(t, KerasTensor) for t in xs):
            if not all(isinstance(t, KerasTensor) for t in xs):
                raise TdfTypeError("a merging layer's inputs are all Keras tensors or all tensors")
            self.built_for([t.shape for t in xs])
            out = KerasTensor(self.merged_shape([t.shape for t in xs]), float_dtype(), self, xs, listed=True)
            self.symbolic = (xs, out)           # (layer.input: the list it was called on)
            return out
        out, mask = self.masked(interp, xs, None if training is None else flag(training),
                                [eager_mask(interp, t) for t in xs])
        return keep_mask(interp, out, mask)

    def apply(self, interp, x, training=None):
        return self.masked(interp, x, training, None)[0]

    def masked(self, interp, x, training, mask):
        """The merge of the inputs, given their Keras masks (``mask``: one each, or None), and its output's mask."""
        xs = [tensor(t) for t in self.inputs_of(x)]
        masks = [None if m is None else tensor(m) for m in mask] if isinstance(mask, (list, tuple)) else \
            [None] * len(xs)
        self.built_for([t.shape for t in xs])
        return self.merge(xs, masks), self.output_mask(xs, masks)

    def compute_mask(self, x, mask):
        """Keras's Merge.compute_mask: the OR of the inputs' masks, none where an input has none."""
        masks = _mask_list(x, mask)
        if masks is None or any(m is None for m in masks):
            return None
        out = masks[0]
        for m in masks[1:]:
            out = ops.logical_or(out, m)
        return out

    def built_for(self, shapes: list) -> None:
        """Built on its first inputs, whose shapes its config's build_config lists (Keras's Merge has a build)."""
        if not self.built:
            self.built, self.build_shape = True, [tuple(s) for s in shapes]

    def build(self, shape, dtype) -> None:
        pass

    def merged_shape(self, shapes):
        return _broadcast(shapes)

    def merge(self, xs, masks):
        out = xs[0]
        for x in xs[1:]:
            out = self.pair(out, x)
        return out


def _mask_list(x, mask):
    """The masks of a merging layer's inputs (Keras's compute_mask(inputs, mask): a list of one each), None where
    it is given none."""
    if mask is None:
        return None
    if not isinstance(mask, (list, tuple)):
        raise TdfValueError(f"`mask` should be a list. Received: mask={mask}")
    if not isinstance(x, (list, tuple)):
        raise TdfValueError(f"`inputs` should be a list. Received: inputs={x}")
    if len(mask) != len(x):
        raise TdfValueError("The lists `inputs` and `mask` should have the same length. Received: inputs of length "
                            f"{len(x)}, and mask of length {len(mask)}")
    return [None if m is None else tensor(m) for m in mask]


def _spread(mask, x):
    """A [batch, steps] mask spread over x's last axis, as Keras's merges broadcast it."""
    return ops.broadcast_to(ops.reshape(mask, (*mask.shape, 1)), x.shape)


def _pairwise(name, prefix, op, most=None):
    """A merging layer that folds its inputs with one binary op, left to right."""
    return type(name, (Merge,), {"prefix": prefix, "pair": staticmethod(op), "most": most})


Add = _pairwise("Add", "add", ops.add)
Subtract = _pairwise("Subtract", "subtract", ops.sub, most=2)


class Multiply(Merge):
    """Keras's Multiply: a masked input's masked steps count as 1; where every input has a mask, the product is 0
    where none keeps a step."""
    prefix = "multiply"

    def merge(self, xs, masks):
        every = all(m is not None for m in masks)
        out = kept = None
        for x, mask in zip(xs, masks):
            if mask is not None:
                mask = _spread(mask, x)
                x = ops.where(mask, x, scalar(1, x.dtype))
                if every:
                    kept = mask if kept is None else ops.logical_or(kept, mask)
            out = x if out is None else ops.mul(out, x)
        return ops.where(kept, out, scalar(0, out.dtype)) if every else out


class _Extremum(Merge):
    """Keras's Maximum and Minimum (its _apply_merge_op_and_or_mask): a masked step of an input takes the value
    so far, a masked step so far takes the input's, while every input so far has a mask."""

    def merge(self, xs, masks):
        out, kept = xs[0], None if masks[0] is None else _spread(masks[0], xs[0])
        for x, mask in zip(xs[1:], masks[1:]):
            mask = None if mask is None else _spread(mask, x)
            if mask is not None:
                x = ops.where(mask, x, out)
            if kept is not None:
                out = ops.where(kept, out, x)
            kept = ops.logical_or(kept, mask) if mask is not None and kept is not None else None
            out = self.pair(out, x)
        return out


Maximum = type("Maximum", (_Extremum,), {"prefix": "maximum", "pair": staticmethod(ops.maximum)})
Minimum = type("Minimum", (_Extremum,), {"prefix": "minimum", "pair": staticmethod(ops.minimum)})


class Average(Merge):
    prefix = "average"

    def merge(self, xs, masks):
        out = xs[0]
        for x in xs[1:]:
            out = ops.add(out, x)
        return ops.div(out, scalar(len(xs), out.dtype))


class Concatenate(Merge):
    prefix = "concatenate"
    least = 1

    def __init__(self, interp, axis=-1, **kw):
        super().__init__(interp, **kw)
        self.axis = integer(axis, "axis")

    def merged_shape(self, shapes):
        axis = self.axis % len(shapes[0])
        sizes = [s[axis] for s in shapes]
        out = list(shapes[0])
        out[axis] = None if None in sizes else sum(sizes)
        return tuple(out)

    def merge(self, xs, masks):
        return concatenate(xs, axis=self.axis)     # (inputs of other dtypes: their result_type, as Keras's)

    def compute_mask(self, x, mask):
        """Keras's: the inputs' masks (all true for an input without one) spread over their last axis, concatenated
        along ``axis``, then any of the last axis."""
        masks = _mask_list(x, mask)
        if masks is None or all(m is None for m in masks):
            return None
        spread = [ops.cast(ops.ones_like(t), np.bool_) if m is None else _spread(m, t) if m.ndim < t.ndim else m
                  for t, m in zip(map(tensor, x), masks)]
        return Tensor(np.any(ops.concat(spread, self.axis).value, axis=-1))


class Dot(Merge):
    """Keras's Dot: batch_dot of two inputs along ``axes`` (rank-2 results get a trailing 1); with ``normalize``,
    of the inputs L2-normalized along those axes (the cosine proximity)."""
    prefix = "dot"
    most = 2

    def __init__(self, interp, axes, normalize=False, **kw):
        super().__init__(interp, **kw)
        self.axes = [integer(a, "axes") for a in axes] if isinstance(axes, (list, tuple)) else integer(axes, "axes")
        self.normalize = flag(normalize)

    def _axes(self, shapes):
        a = self.axes if isinstance(self.axes, list) else [self.axes, self.axes]
        return [a[i] % len(shapes[i]) for i in range(2)]

    def _subscripts(self, shapes):
        a1, a2 = self._axes(shapes)
        letters = iter("cdefghijklmnopqrstuvwxyz")
        left = ["b"] + [next(letters) for _ in shapes[0][1:]]
        right = ["b"] + [next(letters) for _ in shapes[1][1:]]
        right[a2] = left[a1]
        out = [d for i, d in enumerate(left) if i != a1] + [d for i, d in enumerate(right) if i not in (0, a2)]
        return "".join(left) + "," + "".join(right) + "->" + "".join(out)

    def merged_shape(self, shapes):
        a1, a2 = self._axes(shapes)
        out = [d for i, d in enumerate(shapes[0]) if i != a1] + [d for i, d in enumerate(shapes[1]) if i not in (0, a2)]
        return tuple(out) if len(out) > 1 else (out[0], 1)

    def compute_mask(self, x, mask):
        return None

    def merge(self, xs, masks):
        a1, a2 = self._axes([x.shape for x in xs])
        if xs[0].shape[a1] != xs[1].shape[a2]:
            raise ShapeError(f"Dot: incompatible input shapes {list(xs[0].shape)} and {list(xs[1].shape)} along "
                             f"axes {[a1, a2]}")
        if self.normalize:          # (Keras's numerical_utils.normalize: ops.normalize, its epsilon 1e-7)
            xs = [l2_normalize(xs[0], a1), l2_normalize(xs[1], a2)]
        y = ops.einsum(self._subscripts([x.shape for x in xs]), xs[0], xs[1])
        return ops.reshape(y, (y.shape[0], 1)) if y.ndim == 1 else y


LAYERS = [Add, Subtract, Multiply, Maximum, Minimum, Average, Concatenate, Dot]
# keras.layers.add([a, b], **kwargs): the layer made and called at once
FUNCTIONS = {"add": Add, "subtract": Subtract, "multiply": Multiply, "maximum": Maximum, "minimum": Minimum,
             "average": Average, "concatenate": Concatenate, "dot": Dot}


def functional(cls):
    """keras.layers.add(inputs, **kwargs) and the like: the layer made and called on ``inputs``."""
    def merge(interp, inputs, **kwargs):
        return cls(interp, **kwargs).call(interp, [inputs], {}, None)
    merge.__name__ = cls.prefix
    return merge
