"""Keras 3's preprocessing layers (keras/src/layers/preprocessing/): CategoryEncoding and Discretization, whose
indices are decided from the inputs' values (no gradient flows through them, as in TensorFlow), encoded as
Keras's ``numerical_utils.encode_categorical_inputs`` does; and the image layers Resizing and CenterCrop, which
resize through tf.image.resize as Keras's TensorFlow backend does (channels last)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.library.keras.common import flag, float_dtype, integer, num, tensor
from tapecli.library.keras.configs import layer_config
from tapecli.library.keras.layers import Layer
from tapecli.runtime.values import Tensor, dtype_name


def encode_categorical(indices: np.ndarray, mode: str, depth: int, dtype, count_weights=None) -> Tensor:
    """Keras's encode_categorical_inputs: ``one_hot`` adds an axis of ``depth`` (in place of a last axis of 1);
    ``multi_hot`` and ``count`` mark or count the indices along axis 1 (axis 0 of a vector), ``count`` each
    index's weight where ``count_weights`` are given; a scalar is one sample. An index outside [0, depth) marks
    nothing (nor does an empty row)."""
    if mode == "int":
        return Tensor(indices.astype(dtype))
    if indices.ndim == 0:
        indices = indices.reshape(1)
    if mode == "one_hot" and indices.ndim > 1 and indices.shape[-1] == 1:
        indices = indices.reshape(indices.shape[:-1])
    encoded = (indices[..., None] == np.arange(depth)).astype(dtype)
    if mode == "one_hot":
        return Tensor(encoded)
    if count_weights is not None:
        encoded = encoded * np.broadcast_to(count_weights, indices.shape)[..., None]
    axis = 1 if indices.ndim > 1 else 0
    return Tensor(encoded.max(axis=axis, initial=0) if mode == "multi_hot" else encoded.sum(axis=axis, dtype=dtype))


def ragged_rows(x, found: np.ndarray, mode: str) -> np.ndarray:
    """The indices ``found`` of a ragged tensor's flat values as dense rows, -1 past a row's end (which marks no
    column): what Keras's multi_hot, count and tf_idf encode of a ragged input (TensorFlow's bincount of each
    row). Rows of one ragged dimension only (Keras encodes no more than rank 2 so)."""
    if x.ragged_rank != 1 or x.flat_values.ndim != 1:
        raise TdfValueError(f"tapecli encodes (output_mode={mode!r}) the rows of a ragged tensor of one ragged "
                            f"dimension, not one of shape {x.shape}")
    rows = np.full(x.bounding(), -1, np.int64)
    rows[tuple(x.coordinates().T)] = found
    return rows


def _encoded_shape(shape, mode: str, depth: int) -> tuple:
    """Keras's compute_output_shape of the encodings."""
    if mode == "int":
        return tuple(shape)
    if not shape:
        return (depth,)
    if mode == "one_hot":
        return (*(shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape), depth)
    return (shape[0], *shape[2:], depth) if len(shape) >= 2 else (depth,)


def _indices(x: Tensor) -> np.ndarray:
    values = np.asarray(x.value)
    return values.astype(np.int64) if values.dtype.kind in "fb" else values


class CategoryEncoding(Layer):
    prefix = "category_encoding"

    def __init__(self, interp, num_tokens=None, output_mode="multi_hot", sparse=False, **kw):
        super().__init__(interp, **kw)
        mode = "multi_hot" if output_mode == "binary" else output_mode
        if mode not in ("count", "one_hot", "multi_hot"):
            raise TdfValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise TdfValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                                "beforehand, use the IntegerLookup layer instead.")
        self.num_tokens, self.output_mode = integer(num_tokens, "num_tokens"), mode
        if self.num_tokens < 1:
            raise TdfValueError(f"`num_tokens` must be >= 1. Received: num_tokens={self.num_tokens}.")
        if flag(sparse):
            raise TdfValueError("CategoryEncoding: tapecli has no sparse tensors (sparse=True)")

    def output_shape(self, shape):
        return _encoded_shape(shape, self.output_mode, self.num_tokens)

    def call(self, interp, args, kwargs, node):
        """layer(x) or, counting, layer(x, count_weights=w): each index counts its weight (of the float type)."""
        kwargs = dict(kwargs)
        weights = kwargs.pop("count_weights", None)
        if weights is None:
            return super().call(interp, args, kwargs, node)
        if self.output_mode != "count":
            raise TdfValueError("`count_weights` is not used when `output_mode` is not `'count'`. Received "
                                "`count_weights`.")
        x = tensor(args[0] if args else kwargs.pop("inputs", None))
        kwargs.pop("training", None)
        if len(args) > 1 or kwargs:
            raise TdfValueError("CategoryEncoding is called with its inputs, count_weights= and training= only")
        dtype = float_dtype()
        return encode_categorical(_indices(x), "count", self.num_tokens, dtype,
                                  np.asarray(tensor(weights).value, dtype))

    def forward(self, interp, x, training):
        return encode_categorical(_indices(x), self.output_mode, self.num_tokens, float_dtype())


# ------------------------------------------------------------------ Discretization's quantiles (Keras's numpy code)

def _summarize(values: np.ndarray, epsilon: float) -> np.ndarray:
    """Every ``len / (1 / epsilon)``-th sorted value, each weighing that step."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1)::int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _compress(summary: np.ndarray, epsilon: float) -> np.ndarray:
    """The summary's values and weights interpolated at the cumulative weight fractions epsilon, 2 epsilon, ..."""
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_weight_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_weight_percents, summary[0])
    cum_weights = np.interp(percents, cum_weight_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")


def _merge(prev: np.ndarray, new: np.ndarray, epsilon: float) -> np.ndarray:
    merged = np.concatenate((prev, new), axis=1)
    return _compress(np.take(merged, np.argsort(merged[0]), axis=1), epsilon)


def _boundaries(value) -> list:
    """Bin boundaries as Python floats, from a list (of a program's numbers, or of a config's floats) or a tensor."""
    if isinstance(value, (list, tuple)):
        return [num(v, "bin_boundaries") for v in value]
    return [float(v) for v in np.atleast_1d(np.asarray(tensor(value, "bin_boundaries").value))]


def discretization_from_config(generic):
    """Keras's Discretization.from_config: an adapted layer's config has both its num_bins and the boundaries it
    learned, which the constructor refuses together: the layer is made without them, then given them."""
    def from_config(interp, config):
        learned = config.get("bin_boundaries") if config.get("num_bins") is not None else None
        layer = generic(interp, {k: v for k, v in config.items() if not (learned is not None and
                                                                         k == "bin_boundaries")})
        if learned is not None:
            layer.bin_boundaries = _boundaries(learned)
        return layer
    return from_config


class Discretization(Layer):
    prefix = "discretization"

    def __init__(self, interp, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False,
                 **kw):
        super().__init__(interp, **kw)
        if flag(sparse):
            raise TdfValueError("Discretization: tapecli has no sparse tensors (sparse=True)")
        modes = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in modes:
            raise TdfValueError(f"Unknown value for `output_mode` argument of Discretization. Allowed values are: "
                                f"{modes}. Received: output_mode={output_mode}")
        self.num_bins = None if num_bins is None else integer(num_bins, "num_bins")
        if self.num_bins is not None and self.num_bins < 0:
            raise TdfValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise TdfValueError(f"Both `num_bins` and `bin_boundaries` should not be set. Received: "
                                f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise TdfValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else _boundaries(bin_boundaries)
        self.epsilon, self.output_mode = num(epsilon, "epsilon"), output_mode

    def depth(self) -> int:
        return len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins

    def output_shape(self, shape):
        return _encoded_shape(shape, self.output_mode, self.depth())

    def output_dtype(self, dtype):
        return np.dtype(np.int32) if self.output_mode == "int" else float_dtype()

    def forward(self, interp, x, training):
        if self.bin_boundaries is None:
            raise TdfValueError("You need to either pass the `bin_boundaries` argument at construction time or "
                                "call `adapt(dataset)` before you can start using the `Discretization` layer.")
        values = np.asarray(x.value).astype(float_dtype())
        # np.digitize's (and tf's Bucketize's) index: how many boundaries are <= the value
        indices = np.searchsorted(np.asarray(self.bin_boundaries, np.float32), values, side="right")
        return encode_categorical(indices, self.output_mode, self.depth(), self.output_dtype(x.dtype))

    def adapt(self, data, batch_size=None, steps=None):
        """Keras's adapt: the quantile summary of each batch merged, then ``num_bins`` bins of equal weight."""
        from tapecli.library.data import Dataset
        if self.num_bins is None:
            raise TdfValueError("Cannot adapt a Discretization layer that has been initialized with "
                                "`bin_boundaries`, use `num_bins` instead.")
        if isinstance(data, Dataset):
            batches = [b[0] if isinstance(b, list) else b for b in data.items()]
        elif isinstance(data, (list, tuple)):        # (Keras iterates any iterable but an array as its batches)
            batches = list(data)
        else:
            batches = [data]
        if steps is not None:
            batches = batches[:integer(steps, "steps")]
        summary = np.array([[], []], dtype="float32")
        for batch in batches:
            values = np.asarray(tensor(batch, "a batch").value).astype("float32")
            summary = _merge(_summarize(values, self.epsilon), summary, self.epsilon)
        self.bin_boundaries = _compress(summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def methods(self):
        return {**super().methods(), "adapt": self.adapt}

    def config(self):
        return {"bin_boundaries": lambda: python_number(self.bin_boundaries), "num_bins": lambda: python_number(
            self.num_bins), "output_mode": lambda: self.output_mode}

    def get_config(self) -> dict:
        out = layer_config(self)
        out["bin_boundaries"] = self.bin_boundaries     # (adapt's, where it learned them)
        return out


# ------------------------------------------------------------------ image layers

_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def _int32_ratio(a: int, b: int) -> int:
    """tf.cast(tf.cast(a, "float32") / b, "int32"): a float32 quotient truncated."""
    return int(np.float32(a) / np.float32(b))


def keras_resize(x, height: int, width: int, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, antialias=False):
    """Keras's TensorFlow backend's image.resize (channels last): the image first cropped to the target's aspect
    ratio (centered), or padded to it with ``fill_value`` (rows above and below, or columns left and right), then
    tf.image.resize."""
    from tapecli.library.tf_image import resize
    if interpolation not in _INTERPOLATIONS:
        raise TdfValueError(f"Invalid value for argument `interpolation`. Expected of one {_INTERPOLATIONS}. "
                            f"Received: interpolation={interpolation}")
    if fill_mode != "constant":
        raise TdfValueError(f"Invalid value for argument `fill_mode`. Only `'constant'` is supported. Received: "
                            f"fill_mode={fill_mode}")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise TdfValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
    if x.ndim not in (3, 4):
        raise TdfValueError(f"Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                            f"Received input with shape: images.shape={tuple(x.shape)}")
    h, w = x.shape[-3], x.shape[-2]
    lead = (slice(None),) * (x.ndim - 3)
    if crop_to_aspect_ratio:
        crop_h = max(min(h, _int32_ratio(w * height, width)), 1)
        crop_w = max(min(w, _int32_ratio(h * width, height)), 1)
        top, left = _int32_ratio(h - crop_h, 2), _int32_ratio(w - crop_w, 2)
        x = ops.getitem(x, (*lead, slice(top, top + crop_h), slice(left, left + crop_w), slice(None)))
    elif pad_to_aspect_ratio:
        top = _int32_ratio(max(h, _int32_ratio(w * height, width)) - h, 2)
        left = _int32_ratio(max(w, _int32_ratio(h * width, height)) - w, 2)
        for axis, n in ((x.ndim - 3, top), (x.ndim - 2, left)):
            if n > 0:
                shape = list(x.shape)
                shape[axis] = n
                fill = Tensor(np.full(shape, num(fill_value, "fill_value"), dtype=x.dtype))
                x = ops.concat([fill, x, fill], axis)
    return resize(x, [height, width], method=interpolation, antialias=antialias)


class _ImageLayer(Layer):
    """Keras's image preprocessing layers: an image [H, W, C] or a batch [N, H, W, C] (channels last) made
    ``height`` x ``width``."""

    def __init__(self, interp, height, width, data_format=None, **kw):
        super().__init__(interp, **kw)
        if data_format not in (None, "channels_last"):
            raise TdfValueError(f"{type(self).__name__}: tapecli supports channels_last only")
        self.height, self.width = integer(height, "height"), integer(width, "width")

    def check_input(self, x):
        if x.ndim not in (3, 4):
            raise TdfValueError(f"Expected image tensor to have rank 3 (single image) or 4 (batch of images). "
                                f"Received: data.shape={tuple(x.shape)}")

    def output_shape(self, shape):
        if len(shape) not in (3, 4):
            raise TdfValueError("`input_shape` must be a non-nested tuple or list of rank-1 with size 3 (unbatched) "
                                "or 4 (batched). ")
        return (*shape[:-3], self.height, self.width, shape[-1])


class Resizing(_ImageLayer):
    """An int image's resized values rounded and saturated back to its dtype (Keras's Resizing)."""

    prefix = "resizing"
    keeps_dtype = True

    def __init__(self, interp, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, antialias=False, data_format=None,
                 **kw):
        super().__init__(interp, height, width, data_format, **kw)
        self.options = {"interpolation": interpolation, "crop_to_aspect_ratio": flag(crop_to_aspect_ratio),
                        "pad_to_aspect_ratio": flag(pad_to_aspect_ratio), "fill_mode": fill_mode,
                        "fill_value": num(fill_value, "fill_value"), "antialias": flag(antialias)}

    def forward(self, interp, x, training):
        from tapecli.library.tf_array import saturate_cast
        resized = keras_resize(x, self.height, self.width, **self.options)
        if resized.dtype == x.dtype:
            return resized
        if x.dtype.kind in "iu":
            resized = ops.round_(resized)
        return saturate_cast(resized, dtype_name(x.dtype))


class CenterCrop(_ImageLayer):
    """The centered height x width window of a larger image; a smaller one is cropped to the target's aspect
    ratio and resized (bilinear), as Keras's smart_resize."""

    prefix = "center_crop"

    def forward(self, interp, x, training):
        x = ops.cast(x, float_dtype())
        h_diff, w_diff = x.shape[-3] - self.height, x.shape[-2] - self.width
        if h_diff < 0 or w_diff < 0:
            return keras_resize(x, self.height, self.width, crop_to_aspect_ratio=True)
        top, left = h_diff // 2, w_diff // 2
        lead = (slice(None),) * (x.ndim - 3)
        return ops.getitem(x, (*lead, slice(top, top + self.height), slice(left, left + self.width), slice(None)))


LAYERS = [CategoryEncoding, Discretization, Resizing, CenterCrop]
