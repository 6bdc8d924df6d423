"""keras.ops' neural-network functions that TensorFlow's names do not give, as Keras computes them
(keras/src/ops/nn.py and keras/src/backend/tensorflow/nn.py): sparsemax, psnr, dot_product_attention (its XLA
path: no flash attention), layer_normalization, rms_normalization, and max_pool/average_pool/conv with
Keras's arguments (lower-case padding, strides defaulting to the pool size, channels_first moved last),
gelu (its default approximate), and keras.ops.image's colour conversions (a data_format; rgb_to_grayscale in the
images' float type, cast back, not rescaled as tf.image's)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras.activations import sparsemax
from tapecli.library.keras.common import flag
from tapecli.library.keras.ops_arrays import _ints, moveaxis
from tapecli.library.keras.ops_math import _constant
from tapecli.library.keras.ops_numpy import _as, _kind, _tensor, result_type
from tapecli.runtime.values import dtype_name, PythonTuple, Tensor

EPSILON = 1e-7          # backend.epsilon()


def psnr(x1, x2, max_val):
    from tapecli.library.keras.ops_numpy import FUNCTIONS
    a, b = _tensor(x1), _tensor(x2)
    if a.shape != b.shape:
        raise TdfValueError(f"Input shapes {a.shape} and {b.shape} must match for PSNR calculation. ")
    log10 = FUNCTIONS["ops.log10"]
    mse = ops.reduce_mean(ops.square(ops.sub(a, b)))
    return ops.sub(ops.mul(_constant(20, b), log10(_as(max_val, b.dtype))), ops.mul(_constant(10, b), log10(mse)))


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """softmax(q k^T * scale + bias, masked) v over inputs of shape (batch, length, heads, head size); grouped
    key/value heads repeated to the query's."""
    if flash_attention:
        raise TdfValueError("Flash attention is not supported in tensorflow backend.")
    q, k, v = _tensor(query), _tensor(key), _tensor(value)
    if q.ndim != 4:
        raise TdfValueError(f"`dot_product_attention` only supports 4D inputs. Received: query.shape={q.shape}, "
                            f"key.shape={k.shape}, value.shape={v.shape}.")
    dtype = result_type(_kind(q), _kind(k), _kind(v))
    q, k, v = _as(q, dtype), _as(k, dtype), _as(v, dtype)
    if q.shape[2] > k.shape[2] > 1:
        groups = Tensor(np.full(k.shape[2], q.shape[2] // k.shape[2]))
        from tapecli.library.tf_array import repeat
        k, v = repeat(k, groups, axis=2), repeat(v, groups, axis=2)
    factor = _constant(1.0 / np.sqrt(np.float32(k.shape[-1])), q) if scale is None else _as(scale, dtype)
    logits = ops.mul(ops.einsum("BTNH,BSNH->BNTS", q, k), factor)
    if bias is not None:
        logits = ops.add(logits, _as(bias, dtype))
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= np.asarray(_tensor(mask).value, bool)
    if flag(is_causal):
        keep &= np.tril(np.ones(logits.shape[-2:], bool))
    if mask is not None or flag(is_causal):
        logits = ops.where(Tensor(keep), logits, ops.broadcast_to(_constant(3.38953e38 * -0.7, logits), logits.shape))
    return ops.einsum("BNTS,BSNH->BTNH", ops.softmax(logits, -1), v)


def _normalized_axes(axis, ndim: int) -> tuple:
    return tuple(sorted(a % ndim for a in _ints(axis)))


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, rms_scaling=False):
    from tapecli.library.tf_math import moments
    t = _tensor(x)
    original = t.dtype
    t = _as(t, result_type(_kind(t), "float32"))
    axes = _normalized_axes(axis, t.ndim)
    shape = tuple(t.shape[i] if i in axes else 1 for i in range(t.ndim))

    def broadcast(w):
        w = _as(w, t.dtype)
        return ops.reshape(w, shape) if w.ndim != t.ndim and axes != (t.ndim - 1,) else w
    eps = _constant(EPSILON if epsilon is None else epsilon, t)
    if flag(rms_scaling):
        from tapecli.library.tf_math import reduce_variance
        out = ops.mul(t, ops.rsqrt(ops.add(reduce_variance(t, list(axes), True), eps)))
        return ops.cast(out if gamma is None else ops.mul(out, broadcast(gamma)), original)
    mean, variance = moments(t, list(axes), keepdims=True)
    inv = ops.rsqrt(ops.add(variance, eps))
    if gamma is not None:
        inv = ops.mul(inv, broadcast(gamma))
    shift = ops.mul(ops.neg(mean), inv)
    if beta is not None:
        shift = ops.add(shift, broadcast(beta))
    return ops.cast(ops.add(ops.mul(t, inv), shift), original)


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    t = _tensor(x)
    original = t.dtype
    t = _as(t, result_type(_kind(t), "float32"))
    if t.ndim == 0:
        t = ops.reshape(t, (1,))
    axes = _normalized_axes(axis, t.ndim)
    eps = _constant(EPSILON if epsilon is None else epsilon, t)
    out = ops.mul(t, ops.rsqrt(ops.add(ops.reduce_mean(ops.square(t), axes, True), eps)))
    return ops.cast(out if scale is None else ops.mul(out, _as(scale, t.dtype)), original)


def _channels_last(function):
    """A pooling or convolution of channels-last inputs, given channels-first ones moved last and back."""
    def run(inputs, *args, data_format=None, **kwargs):
        t = _tensor(inputs)
        if data_format in (None, "channels_last"):
            return function(t, *args, **kwargs)
        if data_format != "channels_first":
            raise TdfValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                                f"Received: data_format={data_format}")
        return moveaxis(function(moveaxis(t, 1, -1), *args, **kwargs), -1, 1)
    run.__name__ = function.__name__
    return run


def _builtin(name):
    from tapecli.interpreter.registry import BUILTINS, load_word
    load_word(name)
    return BUILTINS[name]


def _padding(padding) -> str:
    if str(padding).lower() not in ("valid", "same"):
        raise TdfValueError(f"`padding` must be 'valid' or 'same'. Received: padding={padding}")
    return str(padding).upper()


def _pooling(name, tensorflow_name):
    """max_pool/average_pool: tf.nn's pooling of 1-D (3-D inputs) or 2-D windows, strides the pool's size."""
    def pool(inputs, pool_size, strides=None, padding="valid"):
        function = _builtin(tensorflow_name + ("1d" if inputs.ndim == 3 else ""))
        return function(inputs, pool_size, pool_size if strides is None else strides, _padding(padding))
    pool.__name__ = name
    return _channels_last(pool)


@_channels_last
def conv(inputs, kernel, strides=1, padding="valid", dilation_rate=1):
    """tf.nn.convolution of 1-D and 2-D inputs (tapecli's convolutions)."""
    rank = inputs.ndim - 2
    if rank not in (1, 2):
        raise TdfValueError(f"keras.ops.conv of {rank}-D inputs is not supported by tapecli (1-D and 2-D are)")
    function = _builtin("conv1d") if rank == 1 else _builtin("conv2d")
    stride, dilation = _ints(strides), _ints(dilation_rate)
    return function(inputs, _tensor(kernel), stride if rank == 2 else stride[0], _padding(padding),
                    "NWC" if rank == 1 else "NHWC", dilation if rank == 2 else dilation[0])


def _adaptive(name, reduce):
    """adaptive_average_pool/adaptive_max_pool: each spatial axis cut into ``output_size`` bins, bin i from
    floor(i L / n) to ceil((i + 1) L / n) (in float32, as Keras), each bin reduced; the axes one after another."""
    def pool(inputs, output_size):
        sizes = _ints(output_size)
        sizes = sizes * (inputs.ndim - 2) if len(sizes) == 1 else sizes
        t = inputs
        for axis, n in zip(range(1, t.ndim - 1), sizes):
            length = np.float32(t.shape[axis])
            bounds = [(int(np.floor(np.float32(i) * length / np.float32(n))),
                       int(min(np.ceil(np.float32(i + 1) * length / np.float32(n)), length))) for i in range(n)]
            t = ops.concat([reduce(ops.getitem(t, (slice(None),) * axis + (slice(lo, hi),)), axis, True)
                            for lo, hi in bounds], axis)
        return t
    pool.__name__ = name
    return _channels_last(pool)


@_channels_last
def depthwise_conv(inputs, kernel, strides=1, padding="valid", dilation_rate=1):
    """Each input channel convolved with its own kernel[..., c, :] (channel-major outputs, as TensorFlow's)."""
    k = _tensor(kernel)
    if inputs.shape[-1] != k.shape[-2]:
        raise TdfValueError("The number of input channels must be evenly divisible by kernel.shape[-2]. Received: "
                            f"inputs.shape={inputs.shape}, kernel.shape={k.shape}")
    return ops.concat([conv(ops.getitem(inputs, (Ellipsis, slice(c, c + 1))), ops.getitem(k, (Ellipsis, slice(c, c + 1),
                                                                                                slice(None))),
                            strides, padding, dilation_rate=dilation_rate) for c in range(k.shape[-2])], -1)


@_channels_last
def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", dilation_rate=1):
    return conv(depthwise_conv(inputs, depthwise_kernel, strides, padding, dilation_rate=dilation_rate),
                pointwise_kernel)


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """keras.ops.ctc_loss (the TensorFlow backend's): tf.nn.ctc_loss of batch-major logits, the blank at
    ``mask_index``; float64 logits computed in float32 and the loss cast back."""
    y = _tensor(output)
    wide = result_type(dtype_name(y.dtype), "float32")
    loss = _builtin("ctc_loss")(ops.cast(_tensor(target), np.int32), ops.cast(y, "float32" if wide == "float64" else wide),
                                target_length, output_length, logits_time_major=False, blank_index=mask_index)
    return ops.cast(loss, wide)


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1, merge_repeated=True,
               mask_index=0):
    """keras.ops.ctc_decode's greedy strategy (the TensorFlow backend's): tf.nn.ctc_greedy_decoder of the
    time-major logits, the decoded classes as a dense int32 [1, batch, steps] filled with -1, and the scores."""
    if strategy != "greedy":
        raise TdfValueError(f"keras.ops.ctc_decode's strategy {strategy!r} is not supported by tapecli ('greedy' is)"
                            if strategy == "beam_search" else
                            f"Invalid strategy {strategy}. Supported values are 'greedy' and 'beam_search'.")
    x = _tensor(inputs)
    x = ops.cast(ops.transpose(x, (1, 0, 2)), result_type(dtype_name(x.dtype), "float32"))
    decoded, scores = _builtin("ctc_greedy_decoder")(x, ops.cast(_tensor(sequence_lengths), np.int32),
                                                      merge_repeated=merge_repeated, blank_index=mask_index)
    dense = np.full((1,) + x.shape[1::-1], -1, dtype=np.int32)
    at = decoded[0].index_array
    dense[0, at[:, 0], at[:, 1]] = decoded[0].values.value
    return PythonTuple((Tensor(dense), scores))


def gelu(x, approximate=True):
    """keras.ops.gelu: tf.nn.gelu, approximate unless told (keras.activations.gelu's default is the exact form)."""
    return ops.gelu(_tensor(x), flag(approximate))


def _images(images, data_format) -> tuple[Tensor, bool]:
    """A batch of images or one (rank 4 or 3), and whether its channels come first."""
    t = _tensor(images)
    if t.ndim not in (3, 4):
        raise TdfValueError(f"Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                            f"Received input with shape: images.shape={t.shape}")
    return t, data_format_of(data_format) == "channels_first"


def data_format_of(data_format) -> str:
    """Keras's standardize_data_format: ``channels_last`` or ``channels_first`` (None: image_data_format's)."""
    from tapecli.library.keras.utilities import image_data_format
    found = image_data_format() if data_format is None else str(data_format).lower()
    if found not in ("channels_first", "channels_last"):
        raise TdfValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                            f"Received: data_format={data_format}")
    return found


def rgb_to_grayscale(images, data_format=None):
    t, first = _images(images, data_format)
    axis = t.ndim - 3 if first else t.ndim - 1
    if t.shape[axis] not in (1, 3):
        raise TdfValueError(f"Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received input with "
                            f"shape: images.shape={t.shape}")
    if t.shape[axis] == 1:
        return t
    x = _as(t, result_type(_kind(t), "float"))
    gray = ops.tensordot(x, Tensor(np.array([0.2989, 0.5870, 0.1140], x.dtype)), [[axis], [0]])
    return ops.cast(ops.reshape(gray, gray.shape[:axis] + (1,) + gray.shape[axis:]), t.dtype)


def _colour_space(name):
    """rgb_to_hsv / hsv_to_rgb of float images, channels first moved last and back."""
    def convert(images, data_format=None):
        from tapecli.library import tf_image
        t, first = _images(images, data_format)
        if t.dtype.kind != "f":
            raise TdfValueError(f"Invalid images dtype: expected float dtype. Received: images.dtype="
                                f"{dtype_name(t.dtype)}")
        out = getattr(tf_image, name)(moveaxis(t, -3, -1) if first else t)
        return moveaxis(out, -1, -3) if first else out
    convert.__name__ = name
    return convert


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    rgb_to_grayscale, _colour_space("rgb_to_hsv"), _colour_space("hsv_to_rgb"), gelu, ctc_loss, ctc_decode,
    sparsemax, psnr, dot_product_attention, layer_normalization, rms_normalization, conv, depthwise_conv,
    separable_conv,
    _pooling("max_pool", "max_pool"), _pooling("average_pool", "avg_pool"))}
# (keras.ops' adaptive pools, which the adaptive pooling layers call too)
ADAPTIVE_POOLS = {f"ops.{f.__name__}": f for f in (_adaptive("adaptive_average_pool", ops.reduce_mean),
                                                     _adaptive("adaptive_max_pool", ops.reduce_max))}
FUNCTIONS.update(ADAPTIVE_POOLS)
