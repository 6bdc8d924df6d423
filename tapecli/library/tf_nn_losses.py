"""tf.nn's losses and statistics beyond the core (l2_loss, weighted and Poisson cross-entropies, crelu, the
moment helpers, the per-replica averages, in_top_k) and its 1-D pools, as compositions of the op table's ops
following TensorFlow's own formulas (nn_impl.py), so their values and gradients are TensorFlow's."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.library.core import NamedResult, to_axis, to_dtype, to_int, truth
from tapecli.library.tf_math import divide_no_nan
from tapecli.library.tf_nn import _channels_last, _ints, _padding, pool_of_rank
from tapecli.interpreter.registry import builtin
from tapecli.ops.nn import _first_maxima, _pads
from tapecli.runtime.values import dtype_name, PythonTuple, Tensor


@builtin()
def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return ops.div(ops.reduce_sum(ops.square(t)), 2)


@builtin()
def crelu(features, axis=-1, name=None):
    x = ops.to_tensor(features)
    return ops.concat([ops.relu(x), ops.relu(ops.neg(x))], to_int(axis, "axis"))


@builtin()
def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """(1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) + max(-x, 0)), TensorFlow's stable form."""
    z, x = ops.to_tensor(labels), ops.to_tensor(logits)
    log_weight = ops.add(1, ops.mul(ops.sub(pos_weight, 1), z))
    return ops.add(ops.mul(ops.sub(1, z), x),
                   ops.mul(log_weight, ops.add(ops.log1p(ops.exp(ops.neg(ops.abs_(x)))), ops.relu(ops.neg(x)))))


@builtin()
def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, plus Stirling's approximation of log(targets!) where targets > 1."""
    c, x = ops.to_tensor(targets), ops.to_tensor(log_input)
    result = ops.sub(ops.exp(x), ops.mul(x, c))
    if truth(compute_full_loss):
        ones = ops.ones_like(c)
        safe = ops.where(ops.greater(c, 1), c, ones)
        stirling = ops.add(ops.sub(ops.mul(c, ops.log(safe)), c), ops.mul(0.5, ops.log(ops.mul(2 * math.pi, safe))))
        result = ops.add(result, ops.where(ops.logical_and(ops.greater_equal(c, 0), ops.less_equal(c, 1)),
                                           ops.zeros_like(c), stirling))
    return result


@builtin()
def sufficient_statistics(x, axes, shift=None, keepdims=None, name=None, keep_dims=None):
    """[count, sum(x - shift), sum((x - shift) ** 2), shift] over ``axes``."""
    t = ops.to_tensor(x)
    axes = to_axis(axes)
    axes = (axes,) if isinstance(axes, int) else axes
    keep = truth(keepdims if keepdims is not None else keep_dims if keep_dims is not None else False)
    count = Tensor(np.array(np.prod([t.shape[a] for a in axes]), dtype=t.dtype))
    centred = t if shift is None else ops.sub(t, shift)
    m_ss = ops.reduce_sum(centred, axes, keep)
    v_ss = ops.reduce_sum(ops.square(centred), axes, keep)
    return PythonTuple([count, m_ss, v_ss, None if shift is None else ops.to_tensor(shift)])


@builtin()
def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    divisor = ops.reciprocal(counts)
    shifted_mean = ops.mul(mean_ss, divisor)
    mean = shifted_mean if shift is None else ops.add(shifted_mean, shift)
    variance = ops.sub(ops.mul(variance_ss, divisor), ops.square(shifted_mean))
    return PythonTuple([mean, variance])


@builtin()
def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """[mean, variance] of ``x`` over ``axes`` weighted by ``frequency_weights`` (0/0 gives 0)."""
    t = ops.to_tensor(x)
    w = ops.to_tensor(frequency_weights)
    axes = to_axis(axes)
    axes = (axes,) if isinstance(axes, int) else axes
    keep = truth(keepdims)
    weighted_sum = ops.reduce_sum(ops.mul(w, t), axes, True)
    weights = ops.reduce_sum(ops.add(w, ops.zeros_like(t)), axes, True)
    mean = divide_no_nan(weighted_sum, weights)
    variance = divide_no_nan(ops.reduce_sum(ops.mul(w, ops.square(ops.sub(t, mean))), axes, True), weights)
    if not keep:
        mean, variance = ops.reshape(mean, _kept(t.shape, axes)), ops.reshape(variance, _kept(t.shape, axes))
    return PythonTuple([mean, variance])


def _kept(shape, axes):
    axes = {a % len(shape) for a in axes}
    return tuple(n for i, n in enumerate(shape) if i not in axes)


@builtin()
def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(loss * sample_weight) / global_batch_size (the first dimension when not given); one replica."""
    loss = ops.to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = ops.mul(loss, sample_weight)
    total = ops.reduce_sum(loss)
    if global_batch_size is None:
        size = loss.shape[0] if loss.ndim else 1
    else:
        size = to_int(global_batch_size, "global_batch_size")
        if size <= 0:
            raise TdfValueError("tf.nn.compute_average_loss: global_batch_size must be positive")
    return divide_no_nan(total, ops.cast(size, total.dtype))


@builtin()
def scale_regularization_loss(regularization_loss):
    """The summed regularization loss divided by the number of replicas (one here)."""
    if isinstance(regularization_loss, list):
        return ops.reduce_sum(ops.stack(regularization_loss, 0))
    return ops.reduce_sum(regularization_loss)


@builtin()
def in_top_k(targets, predictions, k, name=None):
    """Whether each target's prediction is among the k largest of its row (ties count as in, as TensorFlow's)."""
    p = ops.to_tensor(predictions)
    t = np.asarray(ops.to_tensor(targets).value).astype(np.int64)
    k = to_int(k, "k")
    if p.ndim != 2 or t.shape != (p.shape[0],):
        raise ShapeError(f"in_top_k: predictions must be [batch, classes] and targets [batch], got "
                         f"{list(p.shape)} and {list(t.shape)}")
    rows = np.arange(p.shape[0])
    valid = (t >= 0) & (t < p.shape[1])
    target = p.value[rows, np.clip(t, 0, p.shape[1] - 1)]
    larger = (p.value > target[:, None]).sum(axis=1)
    return Tensor(valid & np.isfinite(target) & (larger < k))


@builtin()
def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", output_dtype=None,  # noqa: A002
                         include_batch_in_index=False, name=None):
    """max_pool2d and, per window, the flat index ((b * height + y) * width + x) * channels + c of the element
    MaxPoolGrad passes the gradient to (its first maximum; b only with include_batch_in_index). The indices
    have no gradient, as TensorFlow's."""
    from tapecli.library.tf_nn import _spatial
    if data_format != "NHWC":
        raise TdfValueError("`data_format` values other  than 'NHWC' are not supported. Received: "
                            f"data_format={data_format}")
    size, step, pad = _spatial(ksize, "ksize"), _spatial(strides, "strides"), _padding(padding)
    if not isinstance(pad, str):
        raise TdfValueError("max_pool_with_argmax: padding must be \"SAME\" or \"VALID\"")
    values = ops.max_pool2d(input, size, step, pad)
    x = np.asarray(ops.to_tensor(input).value)
    n, h, w, c = x.shape
    (oh, top, bottom), (ow, left, right) = (_pads(d, k, s, 1, pad) for d, k, s in zip((h, w), size, step))
    hits = _first_maxima(x, (size, step, (top, bottom, left, right), (oh, ow)))
    rows = np.arange(oh)[:, None] * step[0] - top
    cols = np.arange(ow)[None, :] * step[1] - left
    flat = np.zeros(values.shape, np.int64)
    for k, hit in enumerate(hits):      # the taps in window order, row by row
        ky, kx = divmod(k, size[1])
        at = ((rows + ky) * w + cols + kx)[None, :, :, None] * c + np.arange(c)
        np.copyto(flat, np.broadcast_to(at, flat.shape), where=hit)
    if truth(include_batch_in_index):
        flat += (np.arange(n) * (h * w * c))[:, None, None, None]
    dtype = np.int64 if output_dtype is None else to_dtype(output_dtype)
    return NamedResult(("output", "argmax"), [values, Tensor(flat.astype(dtype))])


@builtin()
def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,  # noqa: A002
         dilations=None, name=None):
    """tf.nn.pool of one to three spatial axes: TensorFlow's max or average pool of that rank."""
    kind = str(pooling_type)
    if kind not in ("MAX", "AVG"):
        raise TdfValueError(f"Invalid pooling_type: {kind}")
    rank = ops.to_tensor(input).ndim - 2
    if dilations is not None and set(_ints(dilations, "dilations")) != {1}:
        raise TdfValueError("tf.nn.pool with dilations is not supported in tapecli")
    window = _ints(window_shape, "window_shape")
    step = [1] * rank if strides is None else _ints(strides, "strides")
    return pool_of_rank(ops.max_pool2d if kind == "MAX" else ops.avg_pool2d, "pool", None)(
        input, window, step, padding, data_format)


def _conv_transpose(name, rank, input, filters, output_shape, strides, padding, data_format, dilations):  # noqa: A002
    """tf.nn.conv{1,2,3}d_transpose: the gradient of the convolution of ``output_shape``'s input with respect to
    it (ops.conv_transpose), its padding before each axis the one that convolution would have."""
    from tapecli.library.tf_nn import _spatial
    _channels_last(data_format, ("NWC", "NHWC", "NDHWC")[rank - 1])
    x, f = ops.to_tensor(input), ops.to_tensor(filters)
    out = tuple(int(v) for v in (output_shape.value.tolist() if isinstance(output_shape, Tensor)
                                 else [to_int(v, "output_shape") for v in output_shape]))
    if x.ndim != rank + 2 or f.ndim != rank + 2 or len(out) != rank + 2 or f.shape[-1] != x.shape[-1] or \
            out[-1] != f.shape[-2]:
        raise ShapeError(f"tf.nn.{name}: input {list(x.shape)}, filters {list(f.shape)} and output_shape {list(out)} "
                         "do not fit ([batch, *spatial, in], [*k, out, in], [batch, *out spatial, out])")
    s, pad = _spatial(strides, "strides", rank), _padding(padding, rank)
    d = (1,) * rank if dilations is None else _spatial(dilations, "dilations", rank)
    befores = []
    for i in range(rank):
        expected, before, _ = _pads(out[i + 1], f.shape[i], s[i], d[i], pad if isinstance(pad, str) else pad[i])
        if expected != x.shape[i + 1]:
            raise ShapeError(f"tf.nn.{name}: output_shape {list(out)} does not give input {list(x.shape)} with "
                             f"strides {list(s)} and {pad} padding")
        befores.append(before)
    return ops.conv_transpose(x, f, out[1:-1], s, d, befores)


@builtin()
def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    return _conv_transpose("conv1d_transpose", 1, input, filters, output_shape, strides, padding, data_format,
                           dilations)


@builtin()
def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",  # noqa: A002
                     dilations=None, name=None):
    return _conv_transpose("conv2d_transpose", 2, input, filters, output_shape, strides, padding, data_format,
                           dilations)


@builtin()
def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC",  # noqa: A002
                     dilations=None, name=None):
    return _conv_transpose("conv3d_transpose", 3, input, filters, output_shape, strides, padding, data_format,
                           dilations)


def _window_pads(x, kernel_shape, strides, dilations, padding):
    """Each spatial axis's (before, after) padding, as TensorFlow's convolutions pad."""
    return [_pads(n, k, s, d, padding if isinstance(padding, str) else padding[i])[1:]
            for i, (n, k, s, d) in enumerate(zip(x.shape[1:-1], kernel_shape, strides, dilations))]


def _convolution(name, rank, input, filters, strides, padding, dilations):  # noqa: A002
    from tapecli.library.tf_nn import _spatial
    x, f = ops.to_tensor(input), ops.to_tensor(filters)
    if x.ndim != rank + 2 or f.ndim != rank + 2 or f.shape[-2] != x.shape[-1]:
        raise ShapeError(f"tf.nn.{name} needs an input [batch, *spatial, in] and filters [*k, in, out] of {rank} "
                         f"spatial axes, got shapes {list(x.shape)} and {list(f.shape)}")
    s, pad = _spatial(strides, "strides", rank), _padding(padding, rank)
    d = (1,) * rank if dilations is None else _spatial(dilations, "dilations", rank)
    if name in ("convolution", "atrous_conv2d") and any(k != 1 for k in d) and isinstance(pad, str):
        if any(k != 1 for k in s):
            raise TdfValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        return _with_space_to_batch(x, f, d, pad)
    return ops.convolution(x, f, s, d, _window_pads(x, f.shape, s, d, pad))


def _with_space_to_batch(x, f, d, padding):
    """A dilated convolution as TensorFlow's tf.nn.convolution runs it (nn_ops._WithSpaceToBatch): the input
    space-to-batched by the dilation (SAME's padding added first), convolved undilated, batched back to space;
    its gradients are those ops', summed in their order."""
    from tapecli.library.tf_array import batch_to_space, space_to_batch_nd
    span = [(k - 1) * r for k, r in zip(f.shape[:-2], d)] if padding == "SAME" else [0] * len(d)
    base = [(e // 2, e - e // 2) for e in span]
    extra = [(r - (n + lo + hi) % r) % r for n, (lo, hi), r in zip(x.shape[1:-1], base, d)]
    paddings = Tensor(np.array([[lo, hi + e] for (lo, hi), e in zip(base, extra)], np.int64))
    crops = Tensor(np.array([[0, e] for e in extra], np.int64))
    ones = (1,) * len(d)
    y = ops.convolution(space_to_batch_nd(x, list(d), paddings), f, ones, ones, [(0, 0)] * len(d))
    return batch_to_space(y, list(d), crops)


@builtin()
def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):  # noqa: A002
    _channels_last(data_format, "NDHWC")
    return _convolution("conv3d", 3, input, filters, strides, padding, dilations)


@builtin()
def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None,  # noqa: A002
                name=None):
    """tf.nn.convolution: conv1d/2d/3d by the input's rank."""
    rank = ops.to_tensor(input).ndim - 2
    if rank not in (1, 2, 3):
        raise ShapeError(f"tf.nn.convolution takes inputs of rank 3 to 5, got rank {rank + 2}")
    _channels_last(data_format, ("NWC", "NHWC", "NDHWC")[rank - 1])
    return _convolution("convolution", rank, input, filters, 1 if strides is None else strides, padding, dilations)


@builtin()
def atrous_conv2d(value, filters, rate, padding, name=None):
    """TensorFlow's wrapper of tf.nn.convolution with the dilation ``rate`` on both spatial axes (its
    space-to-batch form)."""
    return _convolution("atrous_conv2d", 2, value, filters, 1, padding, rate)


@builtin()
def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """tf.nn.conv_transpose: conv1d/2d/3d_transpose by the input's rank."""
    rank = ops.to_tensor(input).ndim - 2
    if rank not in (1, 2, 3):
        raise ShapeError(f"tf.nn.conv_transpose takes inputs of rank 3 to 5, got rank {rank + 2}")
    return _conv_transpose("conv_transpose", rank, input, filters, output_shape, strides, padding, data_format,
                           dilations)


@builtin()
def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    """Each input channel c convolved with its own filter[..., c, :]: output channel c * multiplier + m (one
    channel per group of ops.convolution)."""
    from tapecli.library.tf_nn import _spatial
    _channels_last(data_format, "NHWC")
    x, f = ops.to_tensor(input), ops.to_tensor(filter)
    if x.ndim != 4 or f.ndim != 4 or f.shape[2] != x.shape[3]:
        raise ShapeError(f"tf.nn.depthwise_conv2d needs an input [batch, height, width, in] and a filter [kh, kw, in, "
                         f"multiplier], got shapes {list(x.shape)} and {list(f.shape)}")
    s, pad = _spatial(strides, "strides"), _padding(padding)
    d = (1, 1) if dilations is None else _spatial(dilations, "dilations")
    grouped = ops.reshape(f, (f.shape[0], f.shape[1], 1, f.shape[2] * f.shape[3]))
    return ops.convolution(x, grouped, s, d, _window_pads(x, f.shape, s, d, pad), x.shape[3])


@builtin()
def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """depthwise_conv2d, then the 1x1 convolution by pointwise_filter [1, 1, in * multiplier, out]."""
    p = ops.to_tensor(pointwise_filter)
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    if p.ndim != 4 or p.shape[:2] != (1, 1) or p.shape[2] != y.shape[3]:
        raise ShapeError(f"tf.nn.separable_conv2d: pointwise_filter must be [1, 1, {y.shape[3]}, out], got shape "
                         f"{list(p.shape)}")
    return ops.matmul(y, ops.reshape(p, p.shape[2:]))


@builtin()
def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """[N, H, W, C * b * b] -> [N, H * b, W * b, C], TensorFlow's DCR order."""
    _channels_last(data_format, "NHWC")
    x, b = ops.to_tensor(input), to_int(block_size, "block_size")
    n, h, w, c = _image(x, "depth_to_space")
    if b < 2 or c % (b * b):
        raise TdfValueError(f"depth_to_space: the depth {c} must be divisible by block_size ** 2 ({b} * {b})")
    y = ops.transpose(ops.reshape(x, (n, h, w, b, b, c // (b * b))), (0, 1, 3, 2, 4, 5))
    return ops.reshape(y, (n, h * b, w * b, c // (b * b)))


@builtin()
def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """[N, H * b, W * b, C] -> [N, H, W, C * b * b], the inverse of depth_to_space."""
    _channels_last(data_format, "NHWC")
    x, b = ops.to_tensor(input), to_int(block_size, "block_size")
    n, h, w, c = _image(x, "space_to_depth")
    if b < 2 or h % b or w % b:
        raise TdfValueError(f"space_to_depth: height {h} and width {w} must be divisible by block_size {b}")
    y = ops.transpose(ops.reshape(x, (n, h // b, b, w // b, b, c)), (0, 1, 3, 2, 4, 5))
    return ops.reshape(y, (n, h // b, w // b, b * b * c))


def _image(x, what):
    if x.ndim != 4:
        raise ShapeError(f"{what} needs a 4-D input [batch, height, width, channels], got shape {list(x.shape)}")
    return x.shape


# ---------------------------------------------------------------- CTC

def _lengths(x, what, batch) -> Tensor:
    """A [batch] vector of sequence lengths, as an int tensor."""
    lengths = ops.int_indices(x, what)
    if lengths.shape != (batch,):
        raise ShapeError(f"ctc: {what} must have shape [{batch}] (the batch), got {list(lengths.shape)}")
    return Tensor(lengths)


@builtin()
def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None,
             name=None):
    """tf.nn.ctc_loss with dense labels: ``ctc_loss_dense`` (ctc_ops.py), the blank class moved to 0 (and the
    labels below it up by one) before the loss of time-major logits (ops/ctc.py); float16 and bfloat16 logits
    computed in float32; SparseTensor labels take the CTCLoss kernel (``_ctc_sparse_loss``)."""
    from tapecli.library.tf_sparse import SparseTensor
    if isinstance(labels, SparseTensor):
        return _ctc_sparse_loss(labels, logits, logit_length, truth(logits_time_major), blank_index)
    x = ops.to_tensor(logits)
    x = ops.materialize(x) if x.weak else x
    if x.dtype.kind != "f" or x.dtype == np.float64:
        raise TdfTypeError(f"ctc_loss needs float32 (or float16, bfloat16) logits, got {dtype_name(x.dtype)}",
                           hint="cast the logits to float32")
    if x.ndim != 3:
        raise ShapeError(f"ctc_loss: logits must be 3-D, got shape {list(x.shape)}")
    given = x.dtype
    if given != np.float32:
        x = ops.cast(x, np.float32)
    if not truth(logits_time_major):
        x = ops.transpose(x, (1, 0, 2))
    lab = ops.int_indices(labels, "ctc_loss labels")
    batch, classes = x.shape[1], x.shape[2]
    if lab.ndim != 2 or lab.shape[0] != batch:
        raise ShapeError(f"ctc_loss: labels must be [batch, max length] with batch {batch}, got {list(lab.shape)}")
    blank = 0 if blank_index is None else to_int(blank_index, "blank_index")
    if blank != 0:
        blank += classes if blank < 0 else 0
        x = ops.concat([ops.getitem(x, (slice(None), slice(None), slice(blank, blank + 1))),
                        ops.getitem(x, (slice(None), slice(None), slice(None, blank))),
                        ops.getitem(x, (slice(None), slice(None), slice(blank + 1, None)))], 2)
        lab = np.where(lab < blank, lab + 1, lab)
    loss = ops.ctc_loss(x, Tensor(lab.astype(np.int32)), _lengths(label_length, "label_length", batch),
                        _lengths(logit_length, "logit_length", batch), _ctc_unique(unique, lab.shape, blank))
    return loss if given == np.float32 else ops.cast(loss, given)


def _ctc_unique(unique, shape, blank) -> tuple:
    """``unique`` (ctc_unique_labels' pair) as ctc_loss_dense takes it: with the blank moved from ``blank`` to 0,
    the labels below it up by one and the rows' padding past their last index 0 again; () where not given."""
    if unique is None:
        return ()
    if not isinstance(unique, (list, tuple)) or len(unique) != 2:
        raise TdfValueError("ctc_loss: unique must be the pair (unique labels, indices) that "
                            "tf.nn.ctc_unique_labels gives")
    labels, indices = (ops.int_indices(u, "ctc_loss unique") for u in unique)
    if labels.shape != shape or indices.shape != shape:
        raise ShapeError(f"ctc_loss: unique's tensors must have the labels' shape {list(shape)}, got "
                         f"{list(labels.shape)} and {list(indices.shape)}")
    if blank != 0:
        labels = np.where(labels < blank, labels + 1, labels)
        labels = np.where(np.arange(shape[1]) < indices.max(axis=1, keepdims=True) + 1, labels, 0)
    return Tensor(labels), Tensor(indices.astype(np.int32))


@builtin()
def ctc_unique_labels(labels, name=None):
    """Each row's unique labels in order of appearance (tf.unique), padded with 0, as int64, and each label's
    index among them as int32 (ctc_ops.py: a map of unique over the rows)."""
    rows = ops.int_indices(labels, "ctc_unique_labels labels")
    if rows.ndim != 2:
        raise ShapeError(f"ctc_unique_labels: labels must be [batch, max length], got shape {list(rows.shape)}")
    found = np.zeros(rows.shape, dtype=np.int64)
    indices = np.zeros(rows.shape, dtype=np.int32)
    for b, row in enumerate(rows.tolist()):
        seen = {}
        for i, v in enumerate(row):
            indices[b, i] = seen.setdefault(v, len(seen))
        found[b, :len(seen)] = list(seen)
    return PythonTuple((Tensor(found), Tensor(indices)))


@builtin()
def collapse_repeated(labels, seq_length, name=None):
    """Each row's labels within its length with runs of one label merged, padded with 0 to the longest result,
    and the new lengths in seq_length's dtype (ctc_ops.py's masks and scatter, in NumPy: no gradient)."""
    rows, lengths = ops.to_tensor(labels), ops.to_tensor(seq_length)
    values, counts = rows.value, np.asarray(lengths.value)
    if values.ndim != 2 or counts.shape != values.shape[:1]:
        raise ShapeError(f"collapse_repeated: labels must be [batch, max length] and seq_length [batch], got "
                         f"{list(values.shape)} and {list(counts.shape)}")
    keep = np.concatenate([np.ones((values.shape[0], 1), dtype=bool), values[:, 1:] != values[:, :-1]], axis=1)
    keep &= np.arange(values.shape[1]) < counts[:, None]
    new_lengths = keep.sum(axis=1).astype(np.int32)
    out = np.zeros((values.shape[0], int(new_lengths.max(initial=0))), dtype=values.dtype)
    out[np.arange(out.shape[1]) < new_lengths[:, None]] = values[keep]
    return PythonTuple((Tensor(out), Tensor(new_lengths.astype(counts.dtype))))


def _ctc_sparse_loss(labels, logits, logit_length, time_major, blank_index):
    """``_ctc_loss_op_standard`` (ctc_ops.py): the blank class moved last (and the labels above it down by one),
    then the CTCLoss kernel of float32 time-major logits (ops/ctc.py), with the kernel's checks of the labels."""
    if blank_index is None:
        raise TdfValueError("Argument `blank_index` must be provided when `labels` is a `SparseTensor`.")
    x = ops.to_tensor(logits)
    x = ops.materialize(x) if x.weak else x
    if x.ndim != 3 or x.dtype.kind != "f" or x.dtype == np.float64:
        raise TdfTypeError(f"ctc_loss with SparseTensor labels needs 3-D float32 (or float16, bfloat16) logits, got "
                           f"{dtype_name(x.dtype)} of shape {list(x.shape)}", hint="cast the logits to float32")
    classes = x.shape[2]
    blank = to_int(blank_index, "blank_index")
    blank += classes if blank < 0 else 0
    x = ops.concat([ops.getitem(x, (slice(None), slice(None), slice(None, blank))),
                    ops.getitem(x, (slice(None), slice(None), slice(blank + 1, None))),
                    ops.getitem(x, (slice(None), slice(None), slice(blank, blank + 1)))], 2)
    given = x.dtype
    x = ops.transpose(x, (1, 0, 2)) if not time_major else x
    x = ops.cast(x, np.float32) if given != np.float32 else x
    frames, batch = x.shape[:2]
    values = labels.values.value
    if values.dtype != np.int32:
        raise TdfTypeError(f"ctc_loss: a SparseTensor's labels must be int32, got {dtype_name(values.dtype)}",
                           hint="tf.cast(labels, tf.int32)")
    values = np.where(values < blank, values, values - 1)
    lengths = _lengths(logit_length, "logit_length", batch)
    rows = _ctc_label_rows(labels.index_array, values, lengths.value, frames, classes)
    loss = ops.ctc_sparse_loss(x, lengths, rows)
    return loss if given == np.float32 else ops.cast(loss, given)


def _ctc_label_rows(indices, values, lengths, frames, classes) -> tuple:
    """Each sequence's labels as the CTCLoss kernel reads them (in index order, up to the first blank or above),
    and its errors: indices out of order, a sequence longer than the frames, no labels, too little time."""
    if indices.ndim != 2 or indices.shape[1] != 2:
        raise TdfValueError(f"ctc_loss: labels must be a 2-D SparseTensor, got indices of shape {list(indices.shape)}")
    order = indices[:, 0] * (int(indices[:, 1].max(initial=0)) + 1) + indices[:, 1]
    if (np.diff(order) <= 0).any():
        raise KernelValueError("ctc_loss: the labels' indices are out of order (tf.sparse.reorder orders them)")
    rows = []
    for b, n in enumerate(lengths.tolist()):
        if n > frames:
            raise KernelValueError(f"sequence_length({b}) <= {frames}")
        given = values[indices[:, 0] == b].tolist()
        if not given:
            raise KernelValueError(f"Labels length is zero in batch {b}")
        if len(given) > n:
            raise KernelValueError(f"Not enough time for target transition sequence (required: {len(given)}, "
                                   f"available: {n}){b}You can turn this error into a warning by using the flag "
                                   "ignore_longer_outputs_than_inputs")
        ended = [i for i, v in enumerate(given) if v >= classes - 1]
        row = given[:ended[0]] if ended else given
        if ended and any(v < classes - 1 for v in given[ended[0]:]):
            raise KernelValueError(f"Saw a non-null label (index >= num_classes - 1) following a null label, batch: "
                                   f"{b} num_classes: {classes} labels: {','.join(map(str, given))}")
        if any(v < 0 for v in row):
            raise KernelValueError(f"All labels must be nonnegative integers, batch: {b} labels: "
                                   f"{','.join(map(str, row))}")
        rows.append(tuple(row))
    return tuple(rows)


@builtin()
def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """tf.nn.ctc_greedy_decoder: ([SparseTensor of the decoded classes], -sum of each frame's greatest logit
    [batch, 1]), the CTCGreedyDecoder kernel's (kernels/tf_ctc.py); no gradient, as TensorFlow registers none."""
    from tapecli.kernels import tf_ctc
    from tapecli.library.tf_sparse import made
    x = ops.to_tensor(inputs)
    if x.ndim != 3 or x.dtype.kind != "f":
        raise TdfValueError(f"ctc_greedy_decoder: inputs must be a 3-D float tensor [max_time, batch, classes], got "
                            f"{dtype_name(x.dtype)} of shape {list(x.shape)}")
    frames, batch, classes = x.shape
    lengths = _lengths(sequence_length, "sequence_length", batch).value
    for b, n in enumerate(lengths.tolist()):
        if n > frames:
            raise TdfValueError(f"ctc_greedy_decoder: sequence_length({b}) <= {frames}")
    blank = classes - 1 if blank_index is None else to_int(blank_index, "blank_index")
    blank += classes if blank < 0 else 0
    indices, values, shape, neg_sum = tf_ctc.greedy_decode(x.value, lengths, truth(merge_repeated), blank)
    return PythonTuple(([made(indices, Tensor(values), shape.tolist())], Tensor(neg_sum)))
