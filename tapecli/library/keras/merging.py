"""Keras 3's merging layers (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot) and
their functional forms (``keras.layers.add([a, b])``): one call on a list of inputs, symbolic or not."""
from __future__ import annotations

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.keras.common import flag, float_dtype, integer, scalar, tensor
from tapecli.library.keras.layers import KerasTensor, Layer
from tapecli.library.keras.losses import l2_normalize
from tapecli.library.keras.ops_numpy import concatenate


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
        return self.apply(interp, xs, None if training is None else flag(training))

    def apply(self, interp, x, training=None):
        xs = [tensor(t) for t in self.inputs_of(x)]
        self.built_for([t.shape for t in xs])
        return self.merge(xs)

    def built_for(self, shapes: list) -> None:
        """Built on its first inputs, whose shapes its config's build_config lists (Keras's Merge has a build)."""
        if not self.built:
            self.built, self.build_shape = True, [tuple(s) for s in shapes]

    def build(self, shape, dtype) -> None:
        pass

    def merged_shape(self, shapes):
        return _broadcast(shapes)

    def merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = self.pair(out, x)
        return out


def _pairwise(name, prefix, op, most=None):
    """A merging layer that folds its inputs with one binary op, left to right."""
    return type(name, (Merge,), {"prefix": prefix, "pair": staticmethod(op), "most": most})


Add = _pairwise("Add", "add", ops.add)
Subtract = _pairwise("Subtract", "subtract", ops.sub, most=2)
Multiply = _pairwise("Multiply", "multiply", ops.mul)
Maximum = _pairwise("Maximum", "maximum", ops.maximum)
Minimum = _pairwise("Minimum", "minimum", ops.minimum)


class Average(Merge):
    prefix = "average"

    def merge(self, xs):
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

    def merge(self, xs):
        return concatenate(xs, axis=self.axis)     # (inputs of other dtypes: their result_type, as Keras's)


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

    def merge(self, xs):
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
