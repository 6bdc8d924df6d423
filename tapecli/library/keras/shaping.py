"""Keras 3's activation layers (ReLU, LeakyReLU, ELU, Softmax), shape layers (Identity, Reshape, Permute,
RepeatVector), global and average pooling, GroupNormalization, and the preprocessing layers Rescaling and
Normalization, composed from recorded ops as Keras's ``call`` does."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.library.keras import activations, initializers, penalties
from tapecli.library.keras.common import axis_value, flag, float_dtype, integer, num, opt_num, tensor
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.losses import l2_normalize
from tapecli.library.keras.ops_nn import rms_normalization
from tapecli.runtime.values import Tensor


class Identity(Layer):
    built_at_init = True
    replayable = True
    supports_masking = True
    keeps_dtype = True
    prefix = "identity"


class ReLU(Layer):
    built_at_init = True
    replayable = True
    supports_masking = True
    prefix = "re_lu"

    def __init__(self, interp, max_value=None, negative_slope=0.0, threshold=0.0, **kw):
        super().__init__(interp, **kw)
        self.max_value, self.slope = opt_num(max_value, "max_value"), num(negative_slope, "negative_slope")
        self.threshold = num(threshold, "threshold")
        if self.max_value is not None and self.max_value < 0 or self.slope < 0 or self.threshold < 0:
            raise TdfValueError("ReLU: max_value, negative_slope and threshold cannot be negative")

    def forward(self, interp, x, training):
        return activations.relu(x, self.slope, self.max_value, self.threshold)


class LeakyReLU(Layer):
    built_at_init = True
    replayable = True
    supports_masking = True
    prefix = "leaky_re_lu"

    def __init__(self, interp, negative_slope=0.3, **kw):
        super().__init__(interp, **kw)
        self.slope = num(negative_slope, "negative_slope")
        if self.slope < 0:
            raise TdfValueError(f"The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                                f"Expected a float. Received: negative_slope={self.slope}")

    def forward(self, interp, x, training):
        return activations.leaky_relu(x, self.slope)


class ELU(Layer):
    built_at_init = True
    replayable = True
    supports_masking = True
    prefix = "elu"

    def __init__(self, interp, alpha=1.0, **kw):
        super().__init__(interp, **kw)
        self.alpha = num(alpha, "alpha")

    def forward(self, interp, x, training):
        return activations.elu(x, self.alpha)


class _AlongAxis(Layer):
    """A layer of one ``axis=-1`` argument (an int or a list of ints)."""
    replayable = True
    supports_masking = True     # (Keras's Softmax and UnitNormalization)

    def __init__(self, interp, axis=-1, **kw):
        super().__init__(interp, **kw)
        self.axis = axis_value(axis)


class Softmax(_AlongAxis):
    built_at_init = True
    prefix = "softmax"
    takes_mask = True

    def forward(self, interp, x, training, mask=None):
        """Keras's Softmax.call: a masked-out position (a False or a number not over 0.5) takes a large negative
        input (-1e9; -3e4 in float16) and gives 0."""
        if mask is not None:
            mask = tensor(mask)
            if mask.ndim > x.ndim:
                raise TdfValueError("The `mask` must be broadcastable to `inputs` and must not have more dimensions. "
                                    f"Received: inputs.shape={x.shape}, mask.shape={mask.shape}")
            if any(m not in (1, i) for m, i in zip(mask.shape[::-1], x.shape[::-1])):
                raise TdfValueError("The `mask` must be broadcastable to `inputs`. Each mask dimension must be 1 or "
                                    "match the corresponding input dimension. Received: "
                                    f"inputs.shape={x.shape}, mask.shape={mask.shape}")
            if mask.dtype != np.bool_:
                mask = ops.greater(mask, Tensor(np.array(0.5, mask.dtype)))
            x = ops.where(mask, x, Tensor(np.array(-3e4 if x.dtype == np.float16 else -1e9, x.dtype)))
        if isinstance(self.axis, tuple) and len(self.axis) > 1:
            out = ops.exp(ops.sub(x, ops.reduce_logsumexp(x, axis=self.axis, keepdims=True)))
        else:
            out = activations.softmax(x, self.axis[0] if isinstance(self.axis, tuple) else self.axis)
        return out if mask is None else ops.where(mask, out, Tensor(np.array(0, out.dtype)))


def _items(value) -> list:
    """The items of a list argument, a list literal that is one tensor too (as CPython's run passes it)."""
    return [Tensor(v) for v in np.atleast_1d(value.value)] if isinstance(value, Tensor) else list(value)


class Reshape(Layer):
    built_at_init = True
    replayable = True
    keeps_dtype = True
    prefix = "reshape"

    def __init__(self, interp, target_shape, **kw):
        super().__init__(interp, **kw)
        self.target = [-1 if d == -1 else d for d in (integer(v, "target_shape") for v in _items(target_shape))]

    def resolved(self, shape):
        known = [d for d in self.target if d != -1]
        if self.target.count(-1) > 1:
            raise TdfValueError("There must be at most one unknown dimension in output_shape.")
        size = None if None in shape[1:] else math.prod(shape[1:])
        if -1 in self.target and size is not None:
            return tuple(size // max(1, math.prod(known)) if d == -1 else d for d in self.target)
        if size is not None and size != math.prod(known):
            raise ShapeError(f"The total size of the tensor must be unchanged. Received: input_shape={tuple(shape)}, "
                             f"target_shape={tuple(self.target)}")
        return tuple(None if d == -1 else d for d in self.target)

    def output_shape(self, shape):
        return (shape[0], *self.resolved(shape))

    def forward(self, interp, x, training):
        return ops.reshape(x, (x.shape[0], *self.resolved(x.shape)))


class Permute(Layer):
    replayable = True
    keeps_dtype = True
    prefix = "permute"

    def __init__(self, interp, dims, **kw):
        super().__init__(interp, **kw)
        self.dims = [integer(d, "dims") for d in _items(dims)]
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise TdfValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in "
                                f"`dims` must be consecutive and start from 1. Received dims={self.dims}")

    def output_shape(self, shape):
        return (shape[0], *(shape[d] for d in self.dims))

    def forward(self, interp, x, training):
        return ops.transpose(x, (0, *self.dims))


class RepeatVector(Layer):
    replayable = True
    prefix = "repeat_vector"

    def __init__(self, interp, n, **kw):
        super().__init__(interp, **kw)
        self.n = integer(n, "n")

    def output_shape(self, shape):
        return (shape[0], self.n, shape[1])

    def forward(self, interp, x, training):
        if x.ndim != 2:
            raise ShapeError(f"RepeatVector takes inputs of shape [batch, features], got {list(x.shape)}")
        return ops.tile(ops.reshape(x, (x.shape[0], 1, x.shape[1])), (1, self.n, 1))


class _GlobalPooling(Layer):
    built_at_init = True
    replayable = True
    rank = 2
    reduce = staticmethod(ops.reduce_mean)

    def __init__(self, interp, data_format=None, keepdims=False, **kw):
        super().__init__(interp, **kw)
        if data_format not in (None, "channels_last"):
            raise TdfValueError(f"{type(self).__name__}: tapecli supports data_format='channels_last' only")
        self.keepdims = flag(keepdims)

    def axes(self):
        return tuple(range(1, self.rank + 1))

    def output_shape(self, shape):
        if self.keepdims:
            return (shape[0], *([1] * self.rank), shape[-1])
        return (shape[0], shape[-1])

    def forward(self, interp, x, training):
        if x.ndim != self.rank + 2:
            raise ShapeError(f"{type(self).__name__} takes inputs of rank {self.rank + 2}, got {list(x.shape)}")
        return self.reduce(x, axis=self.axes(), keepdims=self.keepdims)


class GlobalAveragePooling1D(_GlobalPooling):
    prefix, rank = "global_average_pooling1d", 1
    takes_mask = True
    supports_masking = True     # (Keras's: it reads the mask, and its output has none)

    def compute_mask(self, x, mask):
        return None

    def forward(self, interp, x, training, mask=None):
        if mask is None:
            return super().forward(interp, x, training)
        # (Keras's: the mean over the timesteps the mask keeps, sum(where(mask, x, 0)) / sum(mask))
        kept = np.asarray(tensor(mask).value, dtype=bool)[..., None]
        total = ops.reduce_sum(ops.where(Tensor(kept), x, Tensor(np.zeros((), x.dtype))), axis=1,
                               keepdims=self.keepdims)
        return ops.div(total, ops.reduce_sum(Tensor(kept.astype(x.dtype)), axis=1, keepdims=self.keepdims))


class GlobalAveragePooling2D(_GlobalPooling):
    prefix, rank = "global_average_pooling2d", 2


class GlobalMaxPooling1D(_GlobalPooling):
    prefix, rank, reduce = "global_max_pooling1d", 1, staticmethod(ops.reduce_max)


class GlobalMaxPooling2D(_GlobalPooling):
    prefix, rank, reduce = "global_max_pooling2d", 2, staticmethod(ops.reduce_max)


class GlobalAveragePooling3D(_GlobalPooling):
    prefix, rank = "global_average_pooling3d", 3


class GlobalMaxPooling3D(_GlobalPooling):
    prefix, rank, reduce = "global_max_pooling3d", 3, staticmethod(ops.reduce_max)


class PReLU(Layer):
    """relu(x) - alpha * relu(-x), alpha of the input's shape without its batch axis (1 along shared_axes)."""
    replayable = True
    supports_masking = True
    prefix = "p_re_lu"

    def __init__(self, interp, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kw):
        super().__init__(interp, **kw)
        if alpha_regularizer is not None or alpha_constraint is not None:
            raise TdfValueError("PReLU: alpha_regularizer and alpha_constraint are not supported by tapecli")
        self.init = initializers.get(alpha_initializer)
        self.shared = [] if shared_axes is None else [integer(a, "shared_axes") for a in (
            shared_axes if isinstance(shared_axes, (list, tuple)) else [shared_axes])]

    def weight_names(self):
        return ("alpha",)

    def build(self, shape, dtype):
        self.add_weight("alpha", tuple(1 if i + 1 in self.shared else d for i, d in enumerate(shape[1:])),
                        self.init, dtype)

    def forward(self, interp, x, training):
        neg = ops.mul(ops.neg(self.weights_["alpha"]), ops.relu(ops.neg(x)))
        return ops.add(ops.relu(x), neg)


class Rescaling(Layer):
    replayable = True
    supports_masking = True
    prefix = "rescaling"

    def __init__(self, interp, scale, offset=0.0, **kw):
        super().__init__(interp, **kw)
        # (the default offset is a Python float: as a program's number is)
        self.scale, self.offset = tensor(scale, "scale"), tensor(python_number(offset), "offset")

    def forward(self, interp, x, training):
        if x.dtype.kind != "f":
            x = ops.cast(x, float_dtype())
        return ops.add(ops.mul(x, ops.cast(self.scale, x.dtype)), ops.cast(self.offset, x.dtype))


class UnitNormalization(_AlongAxis):
    built_at_init = True
    prefix = "unit_normalization"

    def forward(self, interp, x, training):
        return l2_normalize(x, self.axis, 1e-12)


class RMSNormalization(_AlongAxis):
    """Keras 3's RMSNormalization: x * rsqrt(mean(x**2 over axis) + epsilon) * scale, its ``scale`` weight shaped
    as the axes (Keras's ops.rms_normalization multiplies it unreshaped)."""
    prefix = "rms_normalization"
    supports_masking = False    # (Keras's RMSNormalization drops the mask)

    def __init__(self, interp, axis=-1, epsilon=1e-6, **kw):
        super().__init__(interp, axis, **kw)
        self.epsilon = num(epsilon, "epsilon")

    def weight_names(self):
        return ("scale",)

    def check_input(self, x):
        bad = next((a for a in self.axes() if not -x.ndim <= a < x.ndim), None)
        if bad is not None:
            raise ShapeError(f"Axis {bad} is out of bounds for input shape {tuple(x.shape)}. Received: "
                             f"axis={list(self.axis) if isinstance(self.axis, tuple) else self.axis}")

    def axes(self) -> tuple:
        return self.axis if isinstance(self.axis, tuple) else (self.axis,)

    def build(self, shape, dtype):
        self.add_weight("scale", tuple(shape[a] for a in sorted(self.axes())), "ones", dtype)

    def config_values(self):
        return {"axis": sorted(self.axes())} if self.built else {}     # (Keras's build makes it a sorted list)

    def forward(self, interp, x, training):
        return rms_normalization(x, self.weights_["scale"], sorted(self.axes()), self.epsilon)


class GroupNormalization(Layer):
    """Keras 3's GroupNormalization: the channels of ``axis`` split into ``groups`` (-1: one each, instance
    normalization), each group normalized over it and every axis but the batch's, as Keras's call: tf.nn.moments
    of the input reshaped to [batch, ..., groups, channels / groups, ...], then x * inv + (-mean * inv + beta),
    inv = rsqrt(variance + epsilon) * gamma."""
    replayable = True
    supports_masking = True
    prefix = "group_normalization"

    def __init__(self, interp, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kw):
        groups = num(groups, "groups")
        if groups != int(groups) or (groups <= 0 and groups != -1):
            raise TdfValueError("Received an invalid value for argument `groups`, expected a positive integer (or "
                                f"`-1` for instance normalization). Received: groups={python_number(groups)}")
        super().__init__(interp, **kw)
        self.groups, self.axis = int(groups), integer(axis, "axis")
        self.epsilon, self.center, self.scale = num(epsilon, "epsilon"), flag(center), flag(scale)
        self.beta_init = initializers.get(beta_initializer, interp=interp)
        self.gamma_init = initializers.get(gamma_initializer, interp=interp)
        self.regularizers, self.constraints = penalties.scale_and_offset(interp, gamma_regularizer, beta_regularizer,
                                                                         gamma_constraint, beta_constraint)

    def weight_names(self):
        return ("gamma", "beta")

    def build(self, shape, dtype):
        dim = shape[self.axis]
        if dim is None:
            raise TdfValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                                f"received an input with shape {tuple(shape)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise TdfValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels "
                                f"({dim}).")
        if dim % self.groups != 0:
            raise TdfValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                                f"({dim}).")
        if self.scale:
            self.add_weight("gamma", (dim,), self.gamma_init, dtype)
        if self.center:
            self.add_weight("beta", (dim,), self.beta_init, dtype)

    def config_values(self):
        return {"groups": self.groups}          # (Keras's: -1 made the number of channels by the build)

    def check_input(self, x):
        if not -x.ndim <= self.axis < x.ndim:
            raise ShapeError(f"Axis {self.axis} is out of bounds for input shape {tuple(x.shape)}. "
                             f"Received: axis={self.axis}")

    def forward(self, interp, x, training):
        grouped, broadcast = list(x.shape), [1] * x.ndim
        for shape in (grouped, broadcast):         # (Keras's list.insert: the groups' axis before the channels')
            shape[self.axis] = x.shape[self.axis] // self.groups
            shape.insert(self.axis, self.groups)
        axes = list(range(1, len(grouped)))
        axes.pop(-2 if self.axis == -1 else self.axis - 1)      # (every axis but the batch's and the groups')
        y = ops.reshape(x, tuple(grouped))
        mean = ops.reduce_mean(y, axis=tuple(axes), keepdims=True)
        var = ops.reduce_mean(ops.square(ops.sub(y, ops.stop_gradient(mean))), axis=tuple(axes), keepdims=True)
        inv = ops.rsqrt(ops.add(var, Tensor(np.asarray(self.epsilon, y.dtype))))
        w = self.weights_
        if "gamma" in w:
            inv = ops.mul(inv, ops.reshape(w["gamma"], tuple(broadcast)))
        shift = ops.mul(ops.neg(mean), inv)
        if "beta" in w:
            shift = ops.add(shift, ops.reshape(w["beta"], tuple(broadcast)))
        return ops.reshape(ops.add(ops.mul(y, inv), shift), x.shape)


class Normalization(Layer):
    """keras.layers.Normalization (Keras 3's preprocessing/normalization.py): ``(x - mean) / max(sqrt(variance),
    epsilon)`` (``mean + x * ...`` with ``invert``), the mean and variance given or learned by ``adapt(data)``
    for each position of the kept axes (``axis``; None keeps none)."""

    prefix = "normalization"
    replayable = True
    supports_masking = True
    EPSILON = 1e-7          # keras.backend.epsilon()

    def __init__(self, interp, axis=-1, mean=None, variance=None, invert=False, **kw):
        super().__init__(interp, **kw)
        axes = () if axis is None else axis_value(axis)
        self.axes = (axes,) if isinstance(axes, int) else tuple(axes)
        if (mean is None) != (variance is None):
            raise TdfValueError("When setting values directly, both `mean` and `variance` must be set. "
                                f"Received: mean={mean} and variance={variance}")
        self.given_statistics = None if mean is None else (tensor(mean, "mean"), tensor(variance, "variance"))
        if self.given_statistics is not None and self.given_statistics[0].shape != self.given_statistics[1].shape:
            raise TdfValueError("When setting values directly, `mean` and `variance` must have the same shape. "
                                f"Received: mean shape {self.given_statistics[0].shape} and variance shape "
                                f"{self.given_statistics[1].shape}")
        self.invert = flag(invert)
        self.broadcast = self.keep = self.reduce = None

    def build(self, shape, dtype):
        ndim = len(shape)
        if any(a < -ndim or a >= ndim for a in self.axes):
            raise TdfValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with "
                                f"ndim={ndim}, while axis={self.axes}")
        self.keep = tuple(sorted(a % ndim for a in self.axes))
        if any(shape[d] is None for d in self.keep):
            raise TdfValueError(f"All `axis` values to be kept must have a known shape. Received axis="
                                f"{self.axes}, inputs.shape={tuple(shape)}")
        self.reduce = tuple(d for d in range(ndim) if d not in self.keep)
        self.broadcast = tuple(shape[d] if d in self.keep else 1 for d in range(ndim))
        if self.given_statistics is None:
            kept = tuple(shape[d] for d in self.keep)
            self.add_weight("mean", kept, "zeros", dtype, trainable=False)
            self.add_weight("variance", kept, "ones", dtype, trainable=False)
            self.add_weight("count", (), "zeros", np.dtype(np.int64), trainable=False)

    def statistics(self, dtype) -> tuple:
        """The mean and variance in the inputs' broadcast shape."""
        if self.given_statistics is None:
            return tuple(ops.cast(ops.reshape(self.weights_[w].read(), self.broadcast), dtype)
                         for w in ("mean", "variance"))
        out = []
        for value in self.given_statistics:
            if value.ndim:              # its dimensions go to the kept axes, from the right
                expanded = [1] * len(self.broadcast)
                for i in range(1, value.ndim + 1):
                    expanded[self.keep[-i]] = value.shape[-i]
                value = ops.reshape(value, expanded)
            out.append(ops.cast(ops.broadcast_to(value, self.broadcast), dtype))
        return tuple(out)

    def forward(self, interp, x, training):
        x = ops.cast(x, float_dtype()) if x.dtype.kind != "f" else x
        mean, variance = self.statistics(x.dtype)
        scale = ops.maximum(ops.sqrt(variance), Tensor(np.array(self.EPSILON, dtype=x.dtype)))
        return ops.add(mean, ops.mul(x, scale)) if self.invert else ops.div(ops.sub(x, mean), scale)

    def adapt(self, data, batch_size=None, steps=None):
        from tapecli.library.data import Dataset
        from tapecli.library.tf_math import reduce_variance
        dtype = float_dtype()
        if isinstance(data, Dataset):
            batches = [_first_component(b) for b in data.items()]
            if batches and batches[0].ndim == 1:        # (Keras batches a dataset of unbatched elements)
                batches = [ops.stack(batches[i:i + 128]) for i in range(0, len(batches), 128)]
        elif isinstance(data, list) and not _plain(data):
            batches = [tensor(b, "a batch") for b in data]
        else:
            batches = None
            whole = tensor(data, "the data")
        first = batches[0] if batches else whole if batches is None else None
        if first is None:
            raise TdfValueError("adapt() received an empty iterable (no batches). Expected at least one batch.")
        if not self.built:
            self.build_for(first.shape, dtype)
        if batches is None:
            whole = ops.cast(whole, dtype) if whole.dtype.kind != "f" else whole
            mean, variance = ops.reduce_mean(whole, axis=self.reduce), reduce_variance(whole, axis=self.reduce)
        else:
            kept = tuple(first.shape[d] for d in self.keep)
            mean = variance = Tensor(np.zeros(kept, dtype=dtype))
            count = 0
            for batch in batches:
                batch = ops.cast(batch, dtype)
                batch_mean = ops.reduce_mean(batch, axis=self.reduce)
                batch_variance = reduce_variance(batch, axis=self.reduce)
                batch_count = math.prod(batch.shape[d] for d in self.reduce) if self.reduce else 1
                count += batch_count
                weight = Tensor(np.array(batch_count / count), weak=True)
                existing = Tensor(np.array(1.0 - batch_count / count), weak=True)
                new_mean = ops.add(ops.mul(mean, existing), ops.mul(batch_mean, weight))
                variance = ops.add(ops.mul(ops.add(variance, ops.square(ops.sub(mean, new_mean))), existing),
                                   ops.mul(ops.add(batch_variance, ops.square(ops.sub(batch_mean, new_mean))),
                                           weight))
                mean = new_mean
        for short, value in (("mean", mean), ("variance", variance)):
            v = self.weights_[short]
            v.assign(np.asarray(ops.to_tensor(value).value, dtype=v.dtype).reshape(v.shape))

    def methods(self):
        return {**super().methods(), "adapt": self.adapt}

    def attributes(self):
        out = super().attributes()
        out["mean"] = lambda: self._built_statistic(0)
        out["variance"] = lambda: self._built_statistic(1)
        out["adapt_mean"] = lambda: self.weight("mean")
        out["adapt_variance"] = lambda: self.weight("variance")
        return out

    def _built_statistic(self, which: int):
        if self.broadcast is None:
            return None
        return self.statistics(float_dtype())[which]


def _first_component(element):
    """A batch of a dataset: its x (a tuple element's first component)."""
    return tensor(element[0] if isinstance(element, list) else element, "a batch")


def _plain(value) -> bool:
    """A list of numbers (or of lists of them): one array of data, not a list of batches."""
    return all(isinstance(v, (int, float)) or isinstance(v, Tensor) and v.weak and v.ndim == 0 or
               isinstance(v, list) and _plain(v) for v in value)


LAYERS = [Normalization, GroupNormalization, RMSNormalization, PReLU, Rescaling, UnitNormalization, ReLU, LeakyReLU, ELU, Softmax,
          Reshape, Permute, RepeatVector,
          GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalMaxPooling1D,
          GlobalMaxPooling2D, GlobalMaxPooling3D]
# names a TensorFlow function also has (tf.identity): registered as "layers.NAME"
QUALIFIED = {"Identity": Identity}
ALIASES = {"GlobalAvgPool1D": GlobalAveragePooling1D, "GlobalAvgPool2D": GlobalAveragePooling2D,
           "GlobalMaxPool1D": GlobalMaxPooling1D, "GlobalMaxPool2D": GlobalMaxPooling2D,
           "GlobalAvgPool3D": GlobalAveragePooling3D, "GlobalMaxPool3D": GlobalMaxPooling3D}
