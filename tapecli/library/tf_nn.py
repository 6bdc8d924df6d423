"""TensorFlow's array and tf.nn vocabulary as builtins, with TensorFlow's signatures and defaults:
one_hot, gather, scatter, split/unstack, sorting, tile/pad/roll/reverse, cross-entropies, convolution
and pooling, dropout, truncated_normal. The work is done by ``tapecli.ops``; these convert arguments.

A program reaches them as ``X``, ``tf.X``, ``tf.nn.X``, ``tf.math.X``, ``tf.linalg.X`` or
``tf.random.X`` (docs/spec/LANGUAGE.md §11)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.library.core import (NamedResult, _check_size, _float_dtype, _rng, tensor_argument, tf_draw, to_dtype,
                                  to_float, to_int, to_seed, to_shape, truth)
from tapecli.interpreter.registry import builtin
from tapecli.runtime.tape import type_word
from tapecli.kernels import tf_random
from tapecli.library.draws import tensorflow_stream, tf_random_state
from tapecli.library.tf_random import _seed_pair
from tapecli.runtime.values import Tensor, Variable, dtype_name
from tapecli.runtime import spelling


def _ints(value, what) -> list:
    """An int or a list (or 1-D int tensor) of ints."""
    if isinstance(value, (list, tuple)):
        return [to_int(v, what) for v in value]
    if isinstance(value, (Tensor, Variable)):
        t = ops.to_tensor(value)
        if t.ndim == 1 and t.dtype.kind in "iu":
            return [int(v) for v in t.value]
    return [to_int(value, what)]


def _axis_or_none(axis, default):
    return default if axis is None else to_int(axis, "axis")


# ------------------------------------------------------------------- one_hot

@builtin()
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
    """A one-hot tensor: indices' shape with a new axis of ``depth`` (last by default); an index outside
    [0, depth) gives a row of off_value. Default dtype float32, or the dtype of on/off values."""
    t = ops.to_tensor(indices)
    if t.dtype.kind not in "iu":
        raise KernelValueError(f"one_hot needs uint8, int8, int32 or int64 indices, got {dtype_name(t.dtype)}",
                               hint=spelling.cast("indices", "int32"))
    n = to_int(depth, "depth")
    if n < 0:
        raise TdfValueError(f"one_hot: depth must be non-negative, got {n}")
    given = [ops.to_tensor(v) for v in (on_value, off_value) if v is not None]
    if dtype is not None:
        dt = to_dtype(dtype)
    elif given and not given[0].weak:
        dt = given[0].dtype
    elif given:
        dt = ops.default_dtype(given[0].value)
    else:
        dt = np.dtype(np.float32)
    for v in given:
        if not v.weak and v.dtype != dt:
            raise TdfTypeError(f"one_hot: on_value/off_value of dtype {dtype_name(v.dtype)} do not match dtype "
                               f"{dtype_name(dt)}")
    a = t.ndim if axis is None else to_int(axis, "axis")
    if a == -1:
        a = t.ndim
    if not 0 <= a <= t.ndim:
        raise ShapeError(f"one_hot: axis must be -1 or in [0, {t.ndim}], got {a}")
    _check_size(t.shape + (n,))
    on = 1 if on_value is None else ops.to_tensor(on_value).value
    off = 0 if off_value is None else ops.to_tensor(off_value).value
    return ops.one_hot(Tensor(t.value), n, on, off, a, dt)


# ---------------------------------------------------------------- gather, scatter

def _params(params):
    """Gathered values: a literal takes its own dtype (int32, float32), which the indices do not give it."""
    t = ops.to_tensor(params)
    return ops.materialize(t) if t.weak else t


@builtin()
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0):
    return ops.gather(_params(params), indices, _axis_or_none(axis, None), to_int(batch_dims, "batch_dims"))


def check_bad_indices_policy(policy) -> None:
    """A scatter's or gather's ``bad_indices_policy``: "" and "DEFAULT" are "ERROR" on a CPU, tapecli's only one."""
    if policy not in ("", "DEFAULT", "ERROR"):
        raise TdfValueError(f"bad_indices_policy={policy!r}: tapecli takes '', 'DEFAULT' and 'ERROR' (an index out "
                            "of range is an error)")


@builtin()
def gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy=""):
    check_bad_indices_policy(bad_indices_policy)
    return ops.gather_nd(_params(params), indices, to_int(batch_dims, "batch_dims"))


@builtin()
def embedding_lookup(params, ids, max_norm=None):
    if max_norm is not None:
        raise TdfValueError("embedding_lookup: max_norm is not supported")
    return ops.gather(params, ids, 0)


@builtin()
def scatter_nd(indices, updates, shape, bad_indices_policy="", name=None):
    check_bad_indices_policy(bad_indices_policy)
    return ops.scatter_nd(indices, updates, to_shape(shape))


@builtin()
def unsorted_segment_sum(data, segment_ids, num_segments):
    return ops.unsorted_segment_sum(data, segment_ids, to_int(num_segments, "num_segments"))


@builtin()
def segment_sum(data, segment_ids):
    """unsorted_segment_sum with max(segment_ids) + 1 segments; the ids must be sorted (TensorFlow)."""
    ids = ops.int_indices(segment_ids, "segment_sum")
    if ids.ndim != 1 or (ids.size and np.any(np.diff(ids) < 0)):
        raise TdfValueError("segment_sum: segment_ids must be a sorted 1-D tensor")
    return ops.unsorted_segment_sum(data, segment_ids, int(ids.max()) + 1 if ids.size else 0)


@builtin()
def tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy="", name=None):
    check_bad_indices_policy(bad_indices_policy)
    return ops.tensor_scatter_nd_add(tensor, indices, updates)


@builtin()
def boolean_mask(tensor, mask, axis=None):
    return ops.boolean_mask(tensor, mask, _axis_or_none(axis, 0))


# ------------------------------------------------------------ split, unstack

@builtin()
def split(value, num_or_size_splits, axis=0, num=None):
    """A list of pieces along ``axis``: an int N gives N equal pieces, a list gives pieces of those
    sizes (one may be -1: the rest)."""
    x = ops.to_tensor(value)
    a = to_int(axis, "axis")
    if not -max(x.ndim, 1) <= a < max(x.ndim, 1) or x.ndim == 0:
        raise ShapeError(f"split: axis {a} is out of range for shape {list(x.shape)}")
    a %= x.ndim
    n = x.shape[a]
    if isinstance(num_or_size_splits, (int, np.integer)) or (isinstance(num_or_size_splits, Tensor)
                                                              and num_or_size_splits.ndim == 0):
        k = to_int(num_or_size_splits, "num_or_size_splits")
        if k <= 0 or n % k:
            raise TdfValueError(f"split: dimension {a} of size {n} must be evenly divisible by {k}")
        sizes = [n // k] * k
    else:
        sizes = _ints(num_or_size_splits, "a split size")
        if sizes.count(-1) > 1:
            raise TdfValueError("split: at most one size may be -1")
        if -1 in sizes:
            sizes[sizes.index(-1)] = n - sum(s for s in sizes if s != -1)
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise TdfValueError(f"split: sizes {sizes} must add up to the dimension's size {n}")
    out, start = [], 0
    for s in sizes:
        out.append(ops.getitem(x, (slice(None),) * a + (slice(start, start + s),)))
        start += s
    return out


@builtin()
def unstack(value, num=None, axis=0):
    x = ops.to_tensor(value)
    if x.ndim == 0:
        raise ShapeError("unstack needs at least a 1-D tensor, got a scalar")
    a = to_int(axis, "axis")
    if not -x.ndim <= a < x.ndim:
        raise ShapeError(f"unstack: axis {a} is out of range for shape {list(x.shape)}")
    a %= x.ndim
    if num is not None and to_int(num, "num") != x.shape[a]:
        raise TdfValueError(f"unstack: num={to_int(num)} does not match dimension {a} of shape {list(x.shape)}")
    return [ops.getitem(x, (slice(None),) * a + (i,)) for i in range(x.shape[a])]


# -------------------------------------------------------- sorting, rearranging

@builtin()
def sort(values, axis=-1, direction="ASCENDING"):
    return ops.sort(values, to_int(axis, "axis"), direction)


@builtin()
def argsort(values, axis=-1, direction="ASCENDING", stable=False):
    return ops.argsort(values, to_int(axis, "axis"), direction)


@builtin()
def top_k(input, k=1, sorted=True, index_type=None, name=None):  # noqa: A002
    values, indices = ops.top_k(input, to_int(k, "k"), truth(sorted))
    if index_type is not None:
        indices = ops.cast(indices, to_dtype(index_type))
    return NamedResult(("values", "indices"), [values, indices], "TopKV2")


@builtin()
def reverse(tensor, axis):
    return ops.reverse(tensor, _ints(axis, "axis"))


@builtin()
def roll(input, shift, axis):  # noqa: A002
    shifts, axes = _ints(shift, "shift"), _ints(axis, "axis")
    if len(shifts) != len(axes):
        raise ShapeError(f"roll: shift and axis must have the same length, got {len(shifts)} and {len(axes)}")
    return ops.roll(input, shifts, axes)


@builtin()
def tile(input, multiples):  # noqa: A002
    return ops.tile(input, _ints(multiples, "multiples"))


@builtin()
def pad(tensor, paddings, mode="CONSTANT", constant_values=0):
    rows = paddings.value.tolist() if isinstance(paddings, Tensor) else paddings
    if not isinstance(rows, (list, tuple)):
        raise TdfTypeError(f"pad: paddings must be a list of [before, after] pairs, got {type_word(paddings)}")
    pairs = [tuple(_ints(r, "a padding")) for r in rows]
    if ops.to_tensor(tensor).dtype.hasobject:       # a string tensor's padding: b'' unless given
        unset = type(constant_values) is int and constant_values == 0
        return ops.pad(tensor, pairs, mode, b"" if unset else _text_scalar(constant_values))
    return ops.pad(tensor, pairs, mode, to_float(constant_values, "constant_values")
                   if not isinstance(constant_values, (int, np.integer)) else constant_values)


def _text_scalar(value) -> bytes:
    t = ops.to_tensor(value)
    if not (t.dtype.hasobject and t.ndim == 0):
        raise TdfTypeError("pad: a string tensor's constant_values must be a string")
    return t.value[()]


@builtin("band_part", "matrix_band_part")
def band_part(input, num_lower, num_upper):  # noqa: A002
    return ops.band_part(input, to_int(num_lower, "num_lower"), to_int(num_upper, "num_upper"))


@builtin()
def sequence_mask(lengths, maxlen=None, dtype=None):
    t = ops.to_tensor(lengths)
    if t.dtype.kind not in "iu":
        raise TdfTypeError(f"sequence_mask needs int lengths, got {dtype_name(t.dtype)}")
    return ops.sequence_mask(np.asarray(t.value), None if maxlen is None else to_int(maxlen, "maxlen"),
                             np.bool_ if dtype is None else to_dtype(dtype))


# -------------------------------------------------------------- cross-entropies

def _keyword_pair(what, labels, logits):
    if labels is None or logits is None:
        raise TdfTypeError(f"{what} needs labels= and logits=")
    return labels, logits


@builtin()
def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None):
    return ops.sparse_softmax_cross_entropy_with_logits(*_keyword_pair("sparse_softmax_cross_entropy_with_logits",
                                                                         labels, logits))


@builtin("softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2")
def softmax_cross_entropy_with_logits(labels=None, logits=None, axis=-1):
    return ops.softmax_cross_entropy_with_logits(*_keyword_pair("softmax_cross_entropy_with_logits", labels, logits),
                                                 axis=to_int(axis, "axis"))


@builtin()
def sigmoid_cross_entropy_with_logits(labels=None, logits=None):
    return ops.sigmoid_cross_entropy_with_logits(*_keyword_pair("sigmoid_cross_entropy_with_logits", labels, logits))


@builtin()
def bias_add(value, bias, data_format=None):
    if data_format not in (None, "NHWC", "NWC", "N...C"):
        raise TdfValueError(f"bias_add supports channels-last data only, got data_format={data_format!r}")
    return ops.bias_add(value, bias)


@builtin()
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon):
    return ops.batch_normalization(x, mean, variance, offset, scale, to_float(variance_epsilon, "variance_epsilon"))


# ------------------------------------------------------------ convolution, pooling

def _spatial(value, what, n=2):
    """strides/ksize/dilations: an int, or n ints, or n + 2 ints with 1 for batch and channels."""
    vals = _ints(value, what)
    if len(vals) == 1:
        return tuple(vals * n)
    if len(vals) == n:
        return tuple(vals)
    if len(vals) == n + 2:
        if vals[0] != 1 or vals[-1] != 1:
            raise TdfValueError(f"{what} over the batch or channel dimension is not supported, got {vals}")
        return tuple(vals[1:-1])
    raise TdfValueError(f"{what} must be an int or a list of 1, {n} or {n + 2} ints, got {vals}")


def _padding(padding, n=2):
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise TdfValueError(f"padding must be \"SAME\" or \"VALID\", got {padding!r}")
        return p
    if isinstance(padding, Tensor) and padding.ndim == 2:        # a literal [[0, 0], [1, 1], ...]: its rows
        padding = [Tensor(row) for row in np.asarray(padding.value)]
    pairs = [tuple(_ints(r, "a padding")) for r in padding]
    if len(pairs) == n + 2:
        pairs = pairs[1:-1]
    if len(pairs) != n or any(len(p) != 2 for p in pairs):
        raise TdfValueError(f"explicit padding must be {n} (or {n + 2}) [before, after] pairs")
    return tuple(pairs)


def _channels_last(data_format, default):
    if data_format not in (None, default):
        raise TdfValueError(f"only data_format={default!r} is supported, got {data_format!r}")


@builtin()
def conv2d(input, filters, strides=1, padding="VALID", data_format="NHWC", dilations=None):  # noqa: A002
    _channels_last(data_format, "NHWC")
    return ops.conv2d(input, filters, _spatial(strides, "strides"), _padding(padding),
                      (1, 1) if dilations is None else _spatial(dilations, "dilations"))


@builtin()
def conv1d(input, filters, stride=1, padding="VALID", data_format="NWC", dilations=None):  # noqa: A002
    _channels_last(data_format, "NWC")
    p = _padding(padding, 1)
    return ops.conv1d(input, filters, _spatial(stride, "stride", 1)[0], p if isinstance(p, str) else p[0],
                      1 if dilations is None else _spatial(dilations, "dilations", 1)[0])


def pool_nd(pool2d, x, ksize: tuple, strides: tuple, mode: str):
    """A 1-, 2- or 3-D pooling (channels last) by the 2-D one: one axis pools as two over a height of 1; three
    pool height and width first, then depth (a window's maximum, and its mean over the input's own elements, are
    taken axis by axis)."""
    if len(ksize) == 1:
        y = pool2d(ops.reshape(x, (x.shape[0], 1, *x.shape[1:])), (1, *ksize), (1, *strides), mode)
        return ops.reshape(y, (y.shape[0], *y.shape[2:]))
    if len(ksize) == 2:
        return pool2d(x, ksize, strides, mode)
    n, depth, c = x.shape[0], x.shape[1], x.shape[-1]
    y = pool2d(ops.reshape(x, (n * depth, *x.shape[2:])), ksize[1:], strides[1:], mode)
    oh, ow = y.shape[1], y.shape[2]
    y = pool2d(ops.reshape(y, (n, depth, oh * ow, c)), (ksize[0], 1), (strides[0], 1), mode)
    return ops.reshape(y, (n, y.shape[1], oh, ow, c))


_POOL_FORMATS = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def pool_of_rank(pool2d, name, rank):
    """tf.nn's pooling of ``rank`` spatial axes (None: the input's, tf.nn.max_pool's and avg_pool's)."""
    def run(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
        x = ops.to_tensor(input)
        n = rank or x.ndim - 2
        if n != 2 and x.ndim != n + 2 or n not in _POOL_FORMATS:
            raise ShapeError(f"{run.__name__} needs a {'3-, 4- or 5' if rank is None else n + 2}-D input (batch, "
                             f"spatial dimensions, channels), got shape {list(x.shape)}")
        _channels_last(data_format, _POOL_FORMATS[n])
        mode = _padding(padding, n)
        if not isinstance(mode, str) and n != 2:
            raise TdfValueError(f"{run.__name__}: explicit padding is supported for 2-D pooling only")
        return pool_nd(pool2d, x, _spatial(ksize, "ksize", n), _spatial(strides, "strides", n), mode)
    run.__name__ = name
    return run


for _kind, _pool2d in (("max", ops.max_pool2d), ("avg", ops.avg_pool2d)):
    builtin(f"{_kind}_pool")(pool_of_rank(_pool2d, f"{_kind}_pool", None))
    for _rank in (1, 2, 3):
        builtin(f"{_kind}_pool{_rank}d")(pool_of_rank(_pool2d, f"{_kind}_pool{_rank}d", _rank))


# ---------------------------------------------------------------- random

@builtin(interp=True)
def dropout(interp, x, rate, noise_shape=None, seed=None):
    """x / (1 - rate) kept where a uniform draw is >= rate, else 0 (tf.nn.dropout). A TensorFlow program's draw is
    TensorFlow's own RandomUniform of x's dtype (tf.random.uniform's stream, seeded alike); TDF's seeded draws come
    from tapecli's generator. A rate of 0 draws nothing but takes its op seed, as TensorFlow's fast path does."""
    t = ops.to_tensor(x)
    t = ops.materialize(t) if t.weak else t
    rate_tensor = isinstance(rate, (Tensor, Variable)) and not getattr(rate, "weak", False)
    r = float(ops.cast(rate, t.dtype).value) if rate_tensor else to_float(rate, "rate")
    if not rate_tensor and not 0 <= r < 1:
        raise TdfValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={r}")
    if t.dtype.kind != "f":
        raise TdfValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                            f"x_dtype={dtype_name(t.dtype)}")
    shape = _noise_shape(t, noise_shape)
    stream = tensorflow_stream(seed)
    if not rate_tensor and r == 0:
        if stream is not None:
            stream.get_seed(None if seed is None else to_int(seed, "seed"))
        return t
    draws = tf_draw("uniform", shape, seed, t.dtype, 0, 1)
    draws = draws.value if draws is not None else _rng(interp, seed).uniform(size=shape).astype(t.dtype)
    if rate_tensor:         # (TensorFlow divides by 1 - rate where rate is a tensor)
        rate_value = ops.cast(rate, t.dtype)
        scaled = ops.div(t, ops.sub(Tensor(np.ones((), t.dtype)), rate_value))
        return ops.where(Tensor(np.broadcast_to(draws >= rate_value.value, scaled.shape)), scaled,
                         Tensor(np.zeros((), t.dtype)))
    return ops.dropout(t, r, draws)


def _noise_shape(t, noise_shape) -> tuple:
    """tf.nn.dropout's noise shape: x's where None, its None entries x's dimensions; it must broadcast to x."""
    if noise_shape is None:
        return t.shape
    if isinstance(noise_shape, (list, tuple)) and len(noise_shape) == t.ndim:
        noise_shape = [d if n is None else n for n, d in zip(noise_shape, t.shape)]
    shape = to_shape(noise_shape)
    try:
        np.broadcast_shapes(shape, t.shape)
    except ValueError:
        raise ShapeError(f"dropout: noise_shape {list(shape)} does not broadcast to shape {list(t.shape)}") from None
    return shape


@builtin()
def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """tf.nn.experimental.stateless_dropout: x scaled by 1 / (1 - rate) where TensorFlow's stateless uniform draw
    (Philox, kernels/tf_random.py) is >= rate, else 0 (a select: a dropped -1.0 is 0.0, not -0.0)."""
    t = ops.to_tensor(x)
    t = ops.materialize(t) if t.weak else t
    if t.dtype.kind != "f":
        raise TdfValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                            f"x_dtype={dtype_name(t.dtype)}")
    if rng_alg is not None and str(rng_alg).lower() not in ("philox", "auto_select"):
        raise TdfValueError(f"stateless_dropout: tapecli draws Philox's numbers, not those of rng_alg={rng_alg}")
    if isinstance(rate, (Tensor, Variable)) and not getattr(rate, "weak", False):
        rate_value = ops.cast(rate, t.dtype)
        scaled = ops.div(t, ops.sub(Tensor(np.ones((), t.dtype)), rate_value))
        r = float(rate_value.value)
    else:
        r = to_float(rate, "rate")
        if not 0 <= r < 1:
            raise TdfValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={r}")
        if r == 0:
            return t
        scaled = ops.mul(t, Tensor(np.array(1 / (1 - r), t.dtype)))
    shape = t.shape if noise_shape is None else to_shape(noise_shape)
    draws = tf_random.stateless_uniform(_seed_pair(seed), shape, t.dtype)
    return ops.where(Tensor(draws >= np.array(r, t.dtype)), scaled, Tensor(np.zeros((), t.dtype)))


@builtin(interp=True)
def truncated_normal(interp, shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    found = tf_draw("truncated_normal", shape, seed, dtype, to_float(mean), to_float(stddev))
    if found is not None:
        return found
    shape = to_shape(shape)
    _check_size(shape)
    values = ops.truncated_normal_values(_rng(interp, seed), shape, to_float(mean), to_float(stddev))
    return Tensor(values.astype(_float_dtype(dtype)))


@builtin(interp=True)
def set_seed(interp, seed):
    """tf.random.set_seed: the run's generator (TDF's draws) and TensorFlow's global seed (its seeded ops)."""
    interp.rng = np.random.default_rng(to_seed(seed))
    tf_random_state().set_seed(to_int(seed, "seed"))


@builtin("local_response_normalization", "lrn")
def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """x / (bias + alpha * sum of the squares within depth_radius along the last axis) ** beta."""
    x = tensor_argument(input)
    if x.ndim != 4:
        raise ShapeError(f"local_response_normalization needs a 4-D input, got shape {list(x.shape)}")
    r = to_int(depth_radius, "depth_radius")
    squares = ops.pad(ops.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
    depth = x.shape[-1]
    total = ops.getitem(squares, (Ellipsis, slice(0, depth)))
    for k in range(1, 2 * r + 1):
        total = ops.add(total, ops.getitem(squares, (Ellipsis, slice(k, k + depth))))
    d = x.dtype.type
    scale = ops.pow_(ops.add(ops.mul(total, Tensor(d(to_float(alpha)))), Tensor(d(to_float(bias)))),
                     Tensor(d(to_float(beta))))
    return ops.div(x, scale)


@builtin("batch_norm_with_global_normalization")
def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None, variance_epsilon=None,
                                         scale_after_normalization=None, name=None, input=None,  # noqa: A002
                                         mean=None, variance=None):
    """batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon)."""
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    scale = gamma if truth(scale_after_normalization) else None
    t, m, v, beta = (tensor_argument(x) for x in (t, m, v, beta))
    return ops.batch_normalization(t, m, v, beta, None if scale is None else tensor_argument(scale),
                                   to_float(variance_epsilon, "variance_epsilon"))
