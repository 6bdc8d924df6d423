"""tf.nn: cross-entropies, bias_add, batch_normalization, convolutions and pooling (NHWC, filters
[kh, kw, in, out], SAME/VALID padding, strides, dilations), dropout. Compositions of the op table's
ops: TensorFlow's gradients are the compositions', with every order and the forward mode. Ops of their
own: ``windows`` (every window of a convolution or average pooling, copied in one kernel; its gradient
``windows_grad`` adds each window's gradient back where it was taken, as a slice per tap would, in one
array); max pooling as TensorFlow's MaxPool, MaxPoolGrad and MaxPoolGradGrad kernels, to the bit on NaN,
infinities and signed zeros; and TensorFlow's fused sparse_softmax_cross_entropy_with_logits, with its
kernel's formulas (one record for a Keras loss)."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.kernels import tf_conv, tf_sums, tf_xent
from tapecli.kernels.numpy_kernels import matmul as matmul_kernel
from tapecli.ops import remapper
from tapecli.ops.core import apply, materialize, register, to_tensor
from tapecli.ops.elementwise import add, cast, div, exp, greater_equal, log1p, mul, neg, rsqrt, sub, where, zeros_like
from tapecli.ops.linalg import matmul, matmul_jvp
from tapecli.ops.reductions import log_softmax, reduce_sum, softmax
from tapecli.ops.shape import broadcast_to, concat, getitem, reshape, transpose
from tapecli.runtime.context import current
from tapecli.runtime.values import dtype_name, Tensor
from tapecli.ops.gathers import int_indices, pad, reverse
from tapecli.runtime import spelling


def _float(t: Tensor, what) -> Tensor:
    t = to_tensor(t)
    if t.weak:
        t = materialize(t)     # an int literal stays int: TensorFlow refuses it too
    if t.dtype.kind != "f":
        raise TdfTypeError(f"{what} needs a float tensor, got {dtype_name(t.dtype)}", hint=spelling.cast("x", "float32"))
    return t


# ---------------------------------------------------------------- cross-entropies



def _class_major(logits):
    """``logits - max(logits)`` along the last axis, laid out (classes, rows) and contiguous, with the rows'
    numbers, where there are few classes and more rows: NumPy reduces a short last axis one row at a time, the
    first axis of this layout in one pass (the sums over classes are then in order, not pairwise); else None."""
    n = _few_classes(logits)
    return None if n is None else (_shifted(logits, n), np.arange(logits.size // n))


def _few_classes(logits):
    """The classes of logits that _class_major takes, else None."""
    n = logits.shape[-1] if logits.ndim >= 2 else 0
    return n if 0 < n <= tf_xent.FEW_CLASSES and logits.size > tf_xent.FEW_CLASSES * n else None


def _shifted(logits, n):
    shifted = np.ascontiguousarray(logits.reshape(-1, n).T)
    shifted -= np.maximum.reduce(shifted, axis=0)      # (the ufunc's own reduce: np.max's Python skipped)
    return shifted


def _in_rows(kernel, logits, labels, shape):
    """``kernel`` (kernels/tf_xent.py: TensorFlow's bits) on the logits as rows of classes, its result shaped
    ``shape``; None where it does not apply."""
    if not logits.ndim:
        return None
    out = kernel(logits.reshape(-1, logits.shape[-1]), labels.reshape((-1,) + labels.shape[logits.ndim - 1:]))
    return None if out is None else out.reshape(shape)


def _sparse_xent(logits, labels):
    """TensorFlow's SparseSoftmaxCrossEntropyWithLogits loss: log(sum(exp(shifted))) - shifted[label],
    ``shifted = logits - max(logits)`` along the last axis; TensorFlow's bits on small float32 logits."""
    if (loss := _in_rows(tf_xent.sparse_xent, logits, labels, logits.shape[:-1])) is not None:
        return loss
    if (few := _class_major(logits)) is not None:
        shifted, rows = few
        picked = shifted[labels.reshape(-1), rows]
        total = np.add.reduce(np.exp(shifted, out=shifted), axis=0)
        np.log(total, out=total)
        total -= picked
        # (an array of its own, not a view of one made here: what traces follow)
        return total if total.ndim == logits.ndim - 1 else total.reshape(logits.shape[:-1]).copy()
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    picked = _at_labels(shifted, labels)
    total = np.sum(np.exp(shifted), axis=-1)
    total = np.log(total, out=total) if total.__class__ is np.ndarray else np.log(total)
    return (total - picked).astype(logits.dtype, copy=False)


def _sparse_xent_backprop(logits, labels):
    """The op's second output in TensorFlow: exp(shifted) / sum(exp(shifted)) - one_hot(label)."""
    if (backprop := _in_rows(tf_xent.sparse_xent_backprop, logits, labels, logits.shape)) is not None:
        return backprop
    if (few := _class_major(logits)) is not None:
        shifted, rows = few
        np.exp(shifted, out=shifted)
        shifted /= np.add.reduce(shifted, axis=0)
        shifted[labels.reshape(-1), rows] -= 1
        out = np.empty(logits.shape, dtype=logits.dtype)
        np.copyto(out.reshape(shifted.T.shape), shifted.T)
        return out
    out = logits - np.max(logits, axis=-1, keepdims=True)
    np.exp(out, out=out)
    out /= np.sum(out, axis=-1, keepdims=True)
    if out.ndim == 2:
        out[np.arange(out.shape[0]), labels] -= 1
    else:
        index = labels[..., None]
        np.put_along_axis(out, index, np.take_along_axis(out, index, axis=-1) - 1, axis=-1)
    return out.astype(logits.dtype, copy=False)


def _sparse_xent_with_backprop(logits, labels):
    """Both kernels' results (the loss, its backprop) where a plan makes both: the shifted logits, their
    exponentials and sums made once, each result with the bits its own kernel gives."""
    return (_sparse_xent_pair(logits) or _sparse_xent_apart)(logits, labels)


def _sparse_xent_apart(logits, labels):
    return _sparse_xent(logits, labels), _sparse_xent_backprop(logits, labels)


def _sparse_xent_pair(logits, labels=None):
    """_sparse_xent_with_backprop's function of logits laid out as these where they are worked class-major
    (_class_major, the rows' numbers made once), else None; a plan's function for them (kernels.for_plan)."""
    n = _few_classes(logits)
    if n is None or tf_xent.applies(logits.reshape(-1, n)):
        return None
    rows = np.arange(logits.size // n)

    def both(logits, labels):
        shifted = _shifted(logits, n)
        labels = labels.reshape(-1)
        picked = shifted[labels, rows]
        np.exp(shifted, out=shifted)
        total = np.add.reduce(shifted, axis=0)
        loss = np.log(total)
        loss -= picked
        shifted /= total
        shifted[labels, rows] -= 1
        backprop = np.empty(logits.shape, dtype=logits.dtype)
        np.copyto(backprop.reshape(shifted.T.shape), shifted.T)
        return loss if loss.ndim == logits.ndim - 1 else loss.reshape(logits.shape[:-1]).copy(), backprop
    return both


_sparse_xent_with_backprop.for_plan = _sparse_xent_pair


def _at_labels(values, labels):
    """values[..., label] per row."""
    if values.ndim == 2:
        return values[np.arange(values.shape[0]), labels]
    return np.take_along_axis(values, labels[..., None], axis=-1)[..., 0]


def _softmax_of_logits_vjp(r, g):
    """softmax(logits) - one_hot's derivative is softmax's: y * (g - sum(g * y)), y = softmax(logits)."""
    y = softmax(r.inputs[0], axis=-1)
    return mul(y, sub(g, reduce_sum(mul(g, y), axis=-1, keepdims=True))), None


def _backprop(r) -> Tensor:
    return apply(SPARSE_XENT_BACKPROP, (r.inputs[0], r.inputs[1]))


# TensorFlow's gradient: expand_dims(g, -1) * backprop (_SparseSoftmaxCrossEntropyWithLogitsGrad); the
# backprop's own derivative is softmax's (TensorFlow refuses a second derivative here; tapecli gives it)
SPARSE_XENT = register("sparse_softmax_xent", numpy=_sparse_xent, unify=(), saves=(0, 1),
                       paired={"sparse_softmax_xent_backprop": _sparse_xent_with_backprop},
                       vjp=lambda r, g: (mul(reshape(g, g.shape + (1,)), _backprop(r)), None),
                       jvp=lambda r, ts: reduce_sum(mul(_backprop(r), ts[0]), axis=-1), batchable=False)
SPARSE_XENT_BACKPROP = register("sparse_softmax_xent_backprop", numpy=_sparse_xent_backprop, unify=(), saves=(0, 1),
                                vjp=_softmax_of_logits_vjp, jvp=lambda r, ts: _softmax_of_logits_vjp(r, ts[0])[0],
                                batchable=False)


def sparse_xent(labels: np.ndarray, logits: Tensor) -> Tensor:
    """The per-example losses of valid integer ``labels`` (shape: logits' without its last axis), one op."""
    return apply(SPARSE_XENT, (logits, Tensor(labels)))


def sparse_softmax_cross_entropy_with_logits(labels, logits) -> Tensor:
    """-log_softmax(logits)[label] per example; its gradient is softmax(logits) - one_hot(label)."""
    z = _float(logits, "sparse_softmax_cross_entropy_with_logits")
    lab = int_indices(labels, "sparse_softmax_cross_entropy_with_logits labels")
    if z.ndim == 0 or lab.shape != z.shape[:-1]:
        raise ShapeError(f"sparse_softmax_cross_entropy_with_logits: labels of shape {list(lab.shape)} must have the "
                         f"shape of logits without its last dimension (logits shape {list(z.shape)})")
    n = z.shape[-1]
    bad = (lab < 0) | (lab >= n)
    if bad.any():
        raise TdfValueError(f"sparse_softmax_cross_entropy_with_logits: received a label value of "
                            f"{int(lab[bad].flat[0])} which is outside the valid range of [0, {n})")
    return sparse_xent(lab, z)


def _softmax_xent(logits, labels):
    """TensorFlow's SoftmaxCrossEntropyWithLogits: per row, sum(labels * (log(sum(exp(s))) - s)), s = logits
    - max(logits) (over the last axis); TensorFlow's bits on small float32 logits."""
    if (loss := _in_rows(tf_xent.softmax_xent, logits, labels, logits.shape[:-1])) is not None:
        return loss
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return np.add.reduce(labels * (np.log(np.add.reduce(np.exp(shifted), axis=-1, keepdims=True)) - shifted),
                         axis=-1)


def _softmax_xent_backprop(logits, labels):
    """The op's second output in TensorFlow, exp(s) / sum(exp(s)) - labels (Eigen's softmax, not oneDNN's)."""
    if (backprop := _in_rows(tf_xent.softmax_xent_backprop, logits, labels, logits.shape)) is not None:
        return backprop
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True) - labels).astype(logits.dtype, copy=False)


def _softmax_xent_backprop_vjp(r, g):
    """softmax(logits) - labels: softmax's derivative to the logits, -g to the labels."""
    return _softmax_of_logits_vjp(r, g)[0], neg(g)


def _softmax_xent_backprop_jvp(r, ts):
    """softmax's Jacobian is symmetric: its vjp is its jvp."""
    parts = [] if ts[0] is None else [_softmax_of_logits_vjp(r, ts[0])[0]]
    if ts[1] is not None:
        parts.append(neg(ts[1]))
    return parts[0] if len(parts) == 1 else add(parts[0], parts[1])


SOFTMAX_XENT_BACKPROP = register("softmax_xent_backprop", numpy=_softmax_xent_backprop, unify=(), saves=(0,),
                                 vjp=_softmax_xent_backprop_vjp, jvp=_softmax_xent_backprop_jvp, batchable=False)


def _softmax_xent_vjp(r, g):
    """TensorFlow's gradient (_SoftmaxCrossEntropyWithLogitsGrad): the kernel's backprop softmax(logits) -
    labels to the logits, -log_softmax(logits) to the labels, each times g. For labels that do not sum to 1
    along a row the logits' gradient is not that of the loss's formula (it would be softmax * sum(labels) -
    labels): TensorFlow's, which Keras's categorical cross-entropy from logits trains with."""
    z, y = r.inputs
    ge = reshape(g, g.shape + (1,))
    return mul(ge, apply(SOFTMAX_XENT_BACKPROP, (z, y))), mul(ge, neg(log_softmax(z, axis=-1)))


def _softmax_xent_jvp(r, ts):
    z, y = r.inputs
    parts = []
    if ts[0] is not None:
        parts.append(reduce_sum(mul(sub(softmax(z, axis=-1), y), ts[0]), axis=-1))
    if ts[1] is not None:
        parts.append(reduce_sum(mul(neg(log_softmax(z, axis=-1)), ts[1]), axis=-1))
    return parts[0] if len(parts) == 1 else add(parts[0], parts[1])


SOFTMAX_XENT = register("softmax_xent", numpy=_softmax_xent, unify=(), saves=(0, 1), vjp=_softmax_xent_vjp,
                        jvp=_softmax_xent_jvp, batchable=False)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1) -> Tensor:
    """sum(labels * -log_softmax(logits, axis), axis), TensorFlow's fused op (tf.nn, v2): one record whose
    gradients to both are TensorFlow's (``_softmax_xent_vjp``); over another axis than the last, the same
    on the tensors with that axis moved last."""
    z = _float(logits, "softmax_cross_entropy_with_logits")
    y = to_tensor(labels)
    y = materialize(y, z.dtype) if y.weak else y
    if y.shape != z.shape:
        raise ShapeError(f"softmax_cross_entropy_with_logits: labels and logits must have the same shape "
                         f"({list(y.shape)} vs {list(z.shape)})")
    if y.dtype != z.dtype:
        raise TdfTypeError(f"softmax_cross_entropy_with_logits: labels are {y.dtype.name}, logits {z.dtype.name}",
                           hint=spelling.cast("labels", z.dtype.name))
    if z.ndim == 0:
        raise ShapeError("softmax_cross_entropy_with_logits: logits must have at least one dimension")
    last = z.ndim - 1
    axis = int(axis) % z.ndim
    if axis != last:
        perm = [d for d in range(z.ndim) if d != axis] + [axis]
        z, y = transpose(z, perm), transpose(y, perm)
    return apply(SOFTMAX_XENT, (z, y))


def sigmoid_cross_entropy_with_logits(labels, logits) -> Tensor:
    """max(x, 0) - x * z + log(1 + exp(-|x|)), written as TensorFlow writes it (its gradient at x = 0
    is 0.5 - z)."""
    x = _float(logits, "sigmoid_cross_entropy_with_logits")
    z = to_tensor(labels)
    z = materialize(z, x.dtype) if z.weak else z
    if z.shape != x.shape:
        raise ShapeError(f"sigmoid_cross_entropy_with_logits: logits and labels must have the same shape "
                         f"({list(x.shape)} vs {list(z.shape)})")
    cond = greater_equal(x, 0)
    zeros = zeros_like(x)
    relu_logits = where(cond, x, zeros)
    neg_abs_logits = where(cond, neg(x), x)
    return add(sub(relu_logits, mul(x, z)), log1p(exp(neg_abs_logits)))


# -------------------------------------------------------- bias, batch normalization

# TensorFlow's BiasAdd: the bias added along the last axis (the add kernel's bits); its gradient to the bias is
# BiasAddGrad, whose order of the rows is its own (tf_sums.bias_add_grad), and BiasAddGrad's gradient the
# received gradient broadcast along the rows (_BiasAddGradGrad)
BIAS_ADD_GRAD = register("bias_add_grad", numpy=tf_sums.bias_add_grad, numba="exact", unify=(), saves=(),
                         batchable=False,
                         vjp=lambda r, g: (broadcast_to(g, r.inputs[0].shape),),
                         jvp=lambda r, ts: apply(BIAS_ADD_GRAD, (ts[0],)))


def _bias_add_jvp(r, ts):
    x_t, b_t = ts
    if b_t is None:
        return x_t
    return broadcast_to(b_t, r.output.shape) if x_t is None else apply(BIAS_ADD, (x_t, b_t))


BIAS_ADD = register("bias_add", kernel="add", saves=(), batchable=False,
                    vjp=lambda r, g: (g, apply(BIAS_ADD_GRAD, (g,))), jvp=_bias_add_jvp)


def bias_add(value, bias) -> Tensor:
    x = to_tensor(value)
    b = to_tensor(bias)
    if b.ndim != 1 or x.ndim < 2 or x.shape[-1] != b.shape[0]:
        raise ShapeError(f"bias_add: must provide as many biases as the last dimension of the input tensor: "
                         f"{list(b.shape)} vs. {list(x.shape)}")
    result = apply(BIAS_ADD, (x, b))
    if current().remapped is not None:      # (in a tf.function, after a MatMul: ops/remapper.py)
        remapper.biased(x, b, result, True)
    return result


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon) -> Tensor:
    """x * inv + (offset - mean * inv), inv = rsqrt(variance + eps) * scale: tf.nn.batch_normalization."""
    x = to_tensor(x)
    inv = rsqrt(add(variance, variance_epsilon))
    if scale is not None:
        inv = mul(inv, scale)
    shift = sub(offset, mul(mean, inv)) if offset is not None else neg(mul(mean, inv))
    dtype = x.dtype if not x.weak else current().settings.float_dtype
    return add(mul(x, cast(inv, dtype)), cast(shift, dtype))     # TensorFlow casts both to x's dtype


# ------------------------------------------------------------ convolution, pooling

def _pads(size, k, stride, dilation, padding):
    """(output size, pad before, pad after) of one spatial axis, as TensorFlow computes them."""
    span = (k - 1) * dilation + 1
    if padding == "VALID":
        return max(0, (size - span) // stride + 1), 0, 0
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + span - size, 0)
        return out, total // 2, total - total // 2
    before, after = padding
    return max(0, (size + before + after - span) // stride + 1), before, after


def _items(x):
    """``x`` as an array of the rows of its last axis, each row one item of its bytes; None where that axis is
    empty or not contiguous. NumPy copies a strided view several times faster so: its inner loop runs over
    whole rows, not over the few elements of each (a pixel's channels)."""
    if x.ndim == 0 or not x.shape[-1] or x.shape[-1] > 1 and x.strides[-1] != x.itemsize:
        return None
    return x.view(np.dtype((np.void, x.shape[-1] * x.itemsize)))[..., 0]


def _as_rows(*arrays):
    """The arrays (of one row length and itemsize, to copy between) as arrays of rows (_items) where every one
    is laid out for it, else as they are."""
    rows = [_items(a) for a in arrays]
    return arrays if any(r is None for r in rows) else rows


def _windows_kernel(x, size, strides, dilations, out):
    """[N, H, W, C] -> [N, OH, OW, KH, KW, C]: a copy of every window (a strided view, copied once)."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = size, strides, dilations, out
    n, c = x.shape[0], x.shape[3]
    if not oh or not ow:        # (no window fits: the slices below would run from the end)
        return np.empty((n, oh, ow, kh, kw, c), dtype=x.dtype)
    # few channels (rows of a window shorter than the rows of a tap): each pixel's channels copied as one item
    rows = _items(x) if 1 < c and c * kw < ow else None
    if rows is not None:
        sn, sr, sc = rows.strides
        windows = np.empty((n, oh, ow, kh, kw, c), dtype=x.dtype)
        _items(windows)[...] = np.lib.stride_tricks.as_strided(
            rows, (n, oh, ow, kh, kw), (sn, sr * sh, sc * sw, sr * dh, sc * dw), writeable=False)
        return windows
    if c * kw < ow:
        # one channel: copy a tap at a time, whose rows are longer than a window's
        taps = np.empty((x.shape[0], oh, ow, kh, kw, x.shape[3]), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                taps[:, :, :, i, j] = x[:, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
        return taps
    sn, sr, sc, sd = x.strides
    view = np.lib.stride_tricks.as_strided(x, (x.shape[0], oh, ow, kh, kw, x.shape[3]),
                                           (sn, sr * sh, sc * sw, sr * dh, sc * dw, sd), writeable=False)
    return np.array(view, order="C")      # (order "K" would keep the view's stride order: not contiguous)


def _windows_grad_kernel(g, shape, size, strides, dilations):
    """The adjoint of the windows: zeros of ``shape`` ([N, H, W, C]) with every window's gradient added where
    the window was taken, tap by tap from the last to the first."""
    out = np.zeros(shape, dtype=g.dtype)
    (kh, kw), (sh, sw), (dh, dw) = size, strides, dilations
    n, oh, ow, _, _, c = g.shape
    if not oh or not ow:
        return out
    if (sh, sw) == (kh, kw) and (dh, dw) == (1, 1):
        # windows side by side (pooling): each element is in one window at most; 0 + g as += gives it
        tiles = out[:, :oh * kh, :ow * kw].reshape(n, oh, kh, ow, kw, c)
        np.add(g.transpose(0, 1, 3, 2, 4, 5), g.dtype.type(0), out=tiles)
        return out
    by_tap = np.empty((kh, kw, n, oh, ow, c), dtype=g.dtype)          # each tap's gradient in one block
    target, source = _as_rows(by_tap, g.transpose(3, 4, 0, 1, 2, 5))
    target[...] = source
    for i in reversed(range(kh)):
        for j in reversed(range(kw)):
            out[:, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw] += by_tap[i, j]
    return out


# The windows of convolutions and pooling as one op: a gather of every window, whose gradient adds each
# window's gradient back where it was taken (the sum a slice per tap would give, tap by tap, in one array)
WINDOWS = register("windows", numpy=_windows_kernel, unify=(), saves=(), batchable=False,
                   vjp=lambda r, g: (apply(WINDOWS_GRAD, (g,), shape=r.inputs[0].shape, size=r.attrs["size"],
                                           strides=r.attrs["strides"], dilations=r.attrs["dilations"]),),
                   jvp=lambda r, ts: apply(WINDOWS, (ts[0],), **r.attrs))
WINDOWS_GRAD = register("windows_grad", numpy=_windows_grad_kernel, numba="exact", unify=(), saves=(),
                        batchable=False,
                        vjp=lambda r, g: (apply(WINDOWS, (g,), size=r.attrs["size"], strides=r.attrs["strides"],
                                                dilations=r.attrs["dilations"], out=r.inputs[0].shape[1:3]),),
                        jvp=lambda r, ts: apply(WINDOWS_GRAD, (ts[0],), **r.attrs))


def windows(x, size, strides=(1, 1), dilations=(1, 1)) -> Tensor:
    """Every (dilated, strided) window of an NHWC tensor that fits it: [N, OH, OW, KH, KW, C]."""
    x = to_tensor(x)
    (kh, kw), (sh, sw), (dh, dw) = size, strides, dilations
    out = tuple(max(0, (n - (k - 1) * d - 1) // s + 1) for n, k, s, d in ((x.shape[1], kh, sh, dh),
                                                                         (x.shape[2], kw, sw, dw)))
    return apply(WINDOWS, (x,), size=(kh, kw), strides=(sh, sw), dilations=(dh, dw), out=out)


def windows_grad(g, shape, size, strides=(1, 1), dilations=(1, 1)) -> Tensor:
    return apply(WINDOWS_GRAD, (to_tensor(g),), shape=tuple(shape), size=tuple(size), strides=tuple(strides),
                 dilations=tuple(dilations))


def _windows(x: Tensor, kh, kw, strides, dilations, padding, fill):
    """The windows of an NHWC tensor, [N, OH, OW, KH, KW, C], (pad rows, pad cols), (OH, OW) and the padded
    tensor."""
    n, h, w, c = x.shape
    if padding in ("SAME", "VALID"):
        pad_h, pad_w = padding, padding
    else:
        pad_h, pad_w = padding[0], padding[1]
    oh, top, bottom = _pads(h, kh, strides[0], dilations[0], pad_h)
    ow, left, right = _pads(w, kw, strides[1], dilations[1], pad_w)
    if top or bottom or left or right:
        xp = _fill_pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), fill)
    else:
        xp = x
    return windows(xp, (kh, kw), tuple(strides), tuple(dilations)), (top, bottom, left, right), (oh, ow), xp


def extract_patches(x, sizes, strides, rates, padding) -> Tensor:
    """ExtractImagePatches: every window of an NHWC tensor, [N, OH, OW, KH * KW * C] (taps, then channels). Its
    gradient is windows_grad's: each pixel's taps added from the last to the first, the order of TensorFlow's
    (a sparse product over the windows in order)."""
    x = to_tensor(x)
    patches, _, (oh, ow), _ = _windows(x, *sizes, strides, rates, padding, 0)
    return reshape(patches, (x.shape[0], oh, ow, sizes[0] * sizes[1] * x.shape[3]))


def _fill_pad(x, paddings, fill):
    for a, (before, after) in enumerate(paddings):
        parts = []
        for count in (before, None, after):
            if count is None:
                parts.append(x)
            elif count:
                parts.append(Tensor(np.full(x.shape[:a] + (count,) + x.shape[a + 1:], fill, dtype=x.dtype)))
        if len(parts) > 1:
            x = concat(parts, axis=a)
    return x


def _conv_product_kernel(rows, kernel, padded=None, *, chains, filter_grad, input_grad):
    y = tf_conv.product(rows, kernel, chains)   # (padded, filter_grad, input_grad: for its gradients, below)
    return matmul_kernel(rows, kernel) if y is None else y


def _conv_filter_grad_kernel(rows, g, plan):
    y = tf_conv.filter_grad(rows, g, plan)
    return matmul_kernel(rows.T, g) if y is None else y


def _conv_product_vjp(r, g, needs=None):
    """matmul's gradients, the kernel's summed as TensorFlow's Conv2DBackpropFilter sums it where oneDNN's order
    is known (``filter_grad``: kernels/tf_conv.py's plan of it); given the padded input (a third input), the
    input's gradient as TensorFlow's Conv2DBackpropInput sums it, in its place, instead of the windows'."""
    rows, kernel = r.inputs[:2]
    need = [needs is None or needs[i] for i in range(len(r.inputs))]
    rows_grad = kernel_grad = None
    if need[0] and len(r.inputs) == 2:
        rows_grad = matmul(g, transpose(kernel, (1, 0), view=True))
    if need[1]:
        plan = r.attrs["filter_grad"]
        kernel_grad = matmul(transpose(rows, (1, 0), view=True), g) if plan is None \
            else apply(CONV_FILTER_GRAD, (rows, g), plan=plan)
    if len(r.inputs) == 2:
        return rows_grad, kernel_grad
    return None, kernel_grad, _input_grad(g, kernel, r.attrs["input_grad"]) if need[2] else None


def _input_grad(g, kernel, geometry):
    """The gradient of a convolution's padded input of spatial sizes ``padded`` (``geometry``: those, the batch,
    the output's spatial sizes, the window's, its strides and dilations, and the chains of the flipped kernel's
    taps that TensorFlow's Conv2DBackpropInput sums, kernels/tf_conv.py's input_grad_chains): the convolution of
    the output's gradient, spread by the strides and padded, with the flipped kernel (conv_transpose's), summed in
    those chains."""
    padded, batch, out, size, strides, dilations, chains = geometry
    channels = kernel.shape[0] // math.prod(size)
    g = reshape(g, (batch, *out, g.shape[1]))
    return conv_transpose(g, reshape(kernel, (*size, channels, g.shape[-1])), padded, strides, dilations,
                          (0,) * len(size), chains)


def _conv_filter_grad_vjp(r, g):
    rows, output_grad = r.inputs
    return matmul(output_grad, transpose(g, (1, 0), view=True)), matmul(rows, g)


def _conv_filter_grad_jvp(r, ts):
    rows, output_grad = r.inputs
    parts = [matmul(transpose(t, (1, 0), view=True), output_grad) if i == 0 else matmul(transpose(rows, (1, 0),
             view=True), t) for i, t in enumerate(ts) if t is not None]
    return parts[0] if len(parts) == 1 else add(*parts)


# A convolution's windows [outputs, taps * channels] times its kernel [taps * channels, filters]: a product whose
# float32 sums follow TensorFlow's convolution kernel (kernels/tf_conv.py; ``chains``: the chains of its taps), with
# matmul's gradients but where TensorFlow's are followed: the kernel's where ``filter_grad`` plans it (the
# windows' transpose times the output's gradient, an op of its own whose gradients are matmul's products), and
# the input's where ``input_grad`` is given: then the padded input the windows were gathered from is a third
# input, which takes the gradient in the windows' place (conv_transpose's chains over the flipped kernel)
CONV_PRODUCT = register("conv_product", weighed=True, numpy=_conv_product_kernel, unify=(), saves=(0, 1), batchable=False,
                        vjp=_conv_product_vjp, jvp=matmul_jvp)       # (the padded input's tangent is the rows')
CONV_FILTER_GRAD = register("conv_filter_grad", weighed=True, numpy=_conv_filter_grad_kernel, unify=(), saves=(0, 1),
                            batchable=False, vjp=_conv_filter_grad_vjp, jvp=_conv_filter_grad_jvp)


def _conv_product(windows, kernel, shape, size, strides, dilations, pads, inverted=None, padded=None) -> Tensor:
    """windows [N, *out, taps, C] of an input of ``shape`` (padded by ``pads``) times kernel [taps, C, F]:
    [N, *out, F]. ``inverted``: for the input's gradient of a convolution (oneDNN's inverted convolution), the
    chains its taps are summed in (kernels/tf_conv.py's product); ``padded``: the padded input the windows are
    of, whose gradient the product gives where TensorFlow's input gradient is followed (kernels/tf_conv.py)."""
    out, (_, c, f) = windows.shape[1:-2], kernel.shape
    rows = reshape(windows, (math.prod(windows.shape[:-2]), windows.shape[-2] * c))
    inputs, chains, plan, geometry = (rows, reshape(kernel, (rows.shape[1], f))), inverted, None, None
    if inverted is None:
        taps = _tap_chain(size) if len(size) == 3 else tf_conv.tap_order(shape, size, strides, dilations, pads, out)
        chains = None if taps is None else (taps,)
        if len(size) == 1:      # TensorFlow's conv1d: a Conv2D over a height of one
            plan = tf_conv.filter_grad_plan((shape[0], 1, *shape[1:]), (1, *size), (1, *strides), (1, *dilations),
                                            ((0, 0), *pads), (1, *out), f)
        else:
            plan = tf_conv.filter_grad_plan(shape, size, strides, dilations, pads, out, f)
        grad_chains = tf_conv.input_grad_chains(shape, size, strides, dilations, pads, f)
        # (an inverted product above tf_conv's STEP_LIMIT is matmul's either way: the windows' gradients cost less)
        if padded is not None and padded.dtype == np.float32 and grad_chains is not None \
                and math.prod(padded.shape[:-1]) * math.prod(kernel.shape) <= tf_conv.STEP_LIMIT:
            inputs = inputs + (padded,)
            geometry = (padded.shape[1:-1], shape[0], out, tuple(size), strides, dilations, grad_chains)
    y = apply(CONV_PRODUCT, inputs, chains=chains, filter_grad=plan, input_grad=geometry)
    return reshape(y, (shape[0], *out, f))


def _tap_chain(size) -> tuple[int, ...]:
    """A kernel's taps in TensorFlow's order (a 3-D one's (depth, height, width), in _patches's (height, width,
    depth))."""
    if len(size) != 3:
        return tuple(range(math.prod(size)))
    kd, kh, kw = size
    return tuple((h * kw + w) * kd + d for d in range(kd) for h in range(kh) for w in range(kw))


def conv2d(x, filters, strides=(1, 1), padding="VALID", dilations=(1, 1)) -> Tensor:
    """NHWC input, filters [kh, kw, in, out]: the windows gathered and multiplied by the filters."""
    x = _float(x, "conv2d")
    f = to_tensor(filters)
    f = materialize(f, x.dtype) if f.weak else f
    if x.ndim != 4 or f.ndim != 4:
        raise ShapeError(f"conv2d needs a 4-D input [batch, height, width, channels] and 4-D filters "
                         f"[height, width, in, out], got shapes {list(x.shape)} and {list(f.shape)}")
    if x.shape[3] != f.shape[2]:
        raise ShapeError(f"conv2d: the input depth {x.shape[3]} (shape {list(x.shape)}) does not match the "
                         f"filters' input depth {f.shape[2]} (shape {list(f.shape)})")
    if f.dtype != x.dtype:
        raise TdfTypeError(f"conv2d got tensors of different dtypes: {dtype_name(x.dtype)} and {dtype_name(f.dtype)}")
    kh, kw, cin, cout = f.shape
    patches, (top, bottom, left, right), (oh, ow), padded = _windows(x, kh, kw, strides, dilations, padding, 0)
    if oh == 0 or ow == 0:
        raise ShapeError(f"conv2d: the filters {list(f.shape)} do not fit the input {list(x.shape)} with VALID padding")
    return _conv_product(reshape(patches, (x.shape[0], oh, ow, kh * kw, cin)), reshape(f, (kh * kw, cin, cout)),
                         x.shape, (kh, kw), tuple(strides), tuple(dilations), ((top, bottom), (left, right)),
                         padded=padded)


def conv1d(x, filters, stride=1, padding="VALID", dilation=1) -> Tensor:
    """NWC input, filters [kw, in, out] (tf.nn.conv1d): conv2d over a height of 1."""
    x = _float(x, "conv1d")
    f = to_tensor(filters)
    if x.ndim != 3 or f.ndim != 3:
        raise ShapeError(f"conv1d needs a 3-D input [batch, width, channels] and 3-D filters [width, in, out], "
                         f"got shapes {list(x.shape)} and {list(f.shape)}")
    if not isinstance(padding, str):
        padding = ((0, 0), tuple(padding))
    out = conv2d(reshape(x, (x.shape[0], 1) + x.shape[1:]), reshape(f, (1,) + f.shape), (1, stride), padding,
                 (1, dilation))
    return reshape(out, (out.shape[0],) + out.shape[2:])


def _patches(x, k, s, d):
    """Every window of x ([N, *spatial, C], 1 to 3 spatial axes, already padded) as [N, *out, taps, C]. Three axes
    take the height/width windows of each depth slice, then the depth windows of those: their taps run (h, w, d)."""
    n, c = x.shape[0], x.shape[-1]
    if len(k) == 1:
        w = windows(reshape(x, (n, 1, x.shape[1], c)), (1, k[0]), (1, s[0]), (1, d[0]))
        return reshape(w, (n, w.shape[2], k[0], c))
    if len(k) == 2:
        w = windows(x, tuple(k), tuple(s), tuple(d))
        return reshape(w, (n, w.shape[1], w.shape[2], k[0] * k[1], c))
    depth = x.shape[1]
    w = windows(reshape(x, (n * depth, *x.shape[2:])), tuple(k[1:]), tuple(s[1:]), tuple(d[1:]))
    oh, ow = w.shape[1], w.shape[2]
    w = windows(reshape(w, (n, depth, oh * ow * k[1] * k[2], c)), (k[0], 1), (s[0], 1), (d[0], 1))
    return reshape(w, (n, w.shape[1], oh, ow, k[1] * k[2] * k[0], c))


def _kernel_taps(kernel):
    """A kernel [*k, C, F] as [taps, C, F], its taps in _patches's order."""
    if len(kernel.shape) == 5:
        kernel = transpose(kernel, (1, 2, 0, 3, 4))
    return reshape(kernel, (math.prod(kernel.shape[:-2]), *kernel.shape[-2:]))


def _padded_windows(x, k, strides, dilations, pads) -> tuple[Tensor, Tensor]:
    """x [N, *spatial, C] zero-padded by ``pads`` (a (before, after) pair per spatial axis): its windows of size k,
    and the padded x."""
    if any(p != (0, 0) for p in pads):
        x = pad(x, [[0, 0], *[list(p) for p in pads], [0, 0]])
    p = _patches(x, k, strides, dilations)
    if any(o <= 0 for o in p.shape[1:-2]):
        raise ShapeError(f"a window of {list(k)} does not fit inputs of shape {list(x.shape)}")
    return p, x


def convolutions(x, kernels, strides, dilations, pads, inverted=None) -> list[Tensor]:
    """x's windows gathered once, times each of ``kernels`` [*k, C, F_i] (one window size): [N, *out, F_i] each,
    as ``convolution`` gives them (a ConvLSTM's four gates convolve one input). Every window a row: one product
    per kernel (and the kernel's gradient one product). ``inverted``: see _conv_product."""
    size = kernels[0].shape[:-2]
    p, padded = _padded_windows(x, size, strides, dilations, pads)
    return [_conv_product(p, _kernel_taps(kernel), x.shape, size, tuple(strides), tuple(dilations),
                          tuple(map(tuple, pads)), inverted, padded) for kernel in kernels]


def convolution(x, kernel, strides, dilations, pads, groups=1) -> Tensor:
    """x [N, *spatial, C] zero-padded by ``pads`` (a (before, after) pair per spatial axis), its windows times
    kernel [*k, C / groups, F]: [N, *out, F]. The output channels of group g are the g-th F / groups."""
    if groups == 1:
        return convolutions(x, [kernel], strides, dilations, pads)[0]
    # each group's windows times its own filters: [rows, taps, G, C/G, 1] * [taps, G, C/G, F/G]
    p, _ = _padded_windows(x, kernel.shape[:-2], strides, dilations, pads)
    out, taps = p.shape[1:-2], _kernel_taps(kernel)
    rows, f, cg = x.shape[0] * math.prod(out), kernel.shape[-1], x.shape[-1] // groups
    p = reshape(p, (rows, taps.shape[0], groups, cg, 1))
    taps = transpose(reshape(taps, (taps.shape[0], cg, groups, f // groups)), (0, 2, 1, 3))
    return reshape(reduce_sum(mul(p, taps), axis=(1, 3)), (x.shape[0], *out, f))


def conv_transpose(x, kernel, out, strides, dilations, befores, chains=None) -> Tensor:
    """The gradient of ``convolution`` with respect to its input (tf.nn.conv_transpose): x [N, *spatial, C],
    kernel [*k, F, C], ``out`` the output's spatial sizes and ``befores`` the padding before each axis of the
    convolution it is the gradient of. The input spread out by the strides, padded so that the windows of the
    flipped kernel (its channel axes swapped) give every output element; ``chains``: those the flipped kernel's
    taps are summed in (by default kernels/tf_conv.py's input_grad_chains for that convolution, where it follows
    TensorFlow's, else one chain over them all)."""
    x, rank = to_tensor(x), len(out)
    pads, spatial = [], x.shape[1:-1]
    for axis, (o, k, s, d, before) in enumerate(zip(out, kernel.shape[:rank], strides, dilations, befores), start=1):
        if s > 1:
            x = _spread(x, axis, s)
        pads.append(((k - 1) * d - before, o + before - x.shape[axis]))
    flipped = transpose(reverse(kernel, list(range(rank))), (*range(rank), rank + 1, rank))
    if chains is None:          # (the convolution's padding after each axis: what its windows leave over)
        conv_pads = [(before, max((n - 1) * s + (k - 1) * d + 1 - o - before, 0)) for n, o, k, s, d, before
                     in zip(spatial, out, kernel.shape[:rank], strides, dilations, befores)]
        chains = tf_conv.input_grad_chains((x.shape[0], *out, kernel.shape[-2]), kernel.shape[:rank], strides,
                                           dilations, conv_pads, x.shape[-1])
    chains = chains or (_tap_chain(kernel.shape[:rank]),)
    return convolutions(x, [flipped], (1,) * rank, dilations, pads, inverted=chains)[0]


def _spread(x, axis, s):
    """x with s - 1 zeros between neighbours along ``axis``: a zero block after each element, the last cut off."""
    shape = x.shape
    y = pad(reshape(x, (*shape[:axis + 1], 1, *shape[axis + 1:])),
                [[0, 0]] * (axis + 1) + [[0, s - 1]] + [[0, 0]] * (len(shape) - axis - 1))
    y = reshape(y, (*shape[:axis], shape[axis] * s, *shape[axis + 1:]))
    return getitem(y, (*[slice(None)] * axis, slice(0, (shape[axis] - 1) * s + 1)))


def max_pool2d(x, ksize, strides, padding) -> Tensor:
    """TensorFlow's MaxPool: the largest element of each window; its gradient goes to the window's first
    maximum (MaxPoolGrad). Padding is never in a window."""
    x = to_tensor(x)
    x = _float(x, "max_pool2d") if x.weak or x.dtype.kind not in "iu" else x      # integers too: no gradient
    _pool_shape(x, "max_pool2d")
    size = tuple(ksize)
    (oh, top, bottom), (ow, left, right) = (_pads(n, k, s, 1, p) for n, k, s, p in zip(
        x.shape[1:3], size, strides, (padding, padding) if padding in ("SAME", "VALID") else padding))
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"max_pool2d: a window of {list(size)} does not fit the input {list(x.shape)}")
    return apply(MAX_POOL, (x,), size=size, strides=tuple(strides), pads=(top, bottom, left, right), out=(oh, ow))


def _pool_taps(x, size, strides, pads, out, fill):
    """Each tap's [N, OH, OW, C] view of ``x`` padded with ``fill``, in window order (row by row)."""
    return _taps(_padded(x, pads, fill), size, strides, out)


def _padded(x, pads, fill):
    top, bottom, left, right = pads
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    padded = np.full((n, h + top + bottom, w + left + right, c), fill, dtype=x.dtype)
    padded[:, top:top + h, left:left + w] = x
    return padded


def _taps(x, size, strides, out):
    """Each tap's view of ``x`` ([N, H, W, ...]), in window order (row by row)."""
    (kh, kw), (sh, sw), (oh, ow) = size, strides, out
    return [x[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] for i in range(kh) for j in range(kw)]


def _window_major(x, geometry, fill):
    """[K, N, OH, OW, C]: the taps one after another, each contiguous (NumPy is many times faster on
    those than on the strided views)."""
    size, strides, pads, out = geometry
    x = _padded(x, pads, fill)
    w = np.empty((size[0] * size[1], x.shape[0]) + tuple(out) + x.shape[3:], dtype=x.dtype)
    source, target = _as_rows(x, w)
    for k, tap in enumerate(_taps(source, size, strides, out)):
        target[k] = tap
    return w


def _tap_maximum(w):
    """The taps' elementwise maximum, one tap after another as NumPy's reduce over the first axis takes them
    (which is several times slower than these calls)."""
    top = np.maximum(w[0], w[1]) if len(w) > 1 else w[0].copy()
    for tap in w[2:]:
        np.maximum(top, tap, out=top)
    return top


def _plain_windows(w, top, signed_zeros=True) -> bool:
    """Whether NumPy's maximum ``top`` of the windows ``w`` (padding -inf) is TensorFlow's, each first maximum
    the first element equal to it: no NaN, no window of -inf alone (and, for the maximum's own bits, no
    -0.0 that a +0.0 could stand for)."""
    if not top.size:
        return True
    if not top.min() > -np.inf:
        return False
    return not signed_zeros or not _has_negative_zero(w)


def _has_negative_zero(x) -> bool:
    """Whether a contiguous float array holds a -0.0: its bits, as a signed integer, are the least one, which
    a minimum finds without an array of comparisons."""
    bits = x.view(f"i{x.itemsize}")
    return np.minimum.reduce(bits, axis=None) == np.iinfo(bits.dtype).min


def _max_pool_kernel(x, size, strides, pads, out):
    """Each window's maximum as TensorFlow's MaxPool finds it: from the lowest float up, an element taken
    where it is greater (a NaN never is; a window of NaN and -inf gives the lowest float); of integers, the
    largest (TensorFlow's MaxPool takes them too, without a gradient)."""
    if x.dtype.kind in "iu":
        return np.max(_window_major(x, (size, strides, pads, out), np.iinfo(x.dtype).min), axis=0)
    top = _side_by_side_maximum(x, size, strides, pads, out)
    if top is not None:
        return top
    w = _window_major(x, (size, strides, pads, out), -np.inf)        # (padding: never greater)
    top = _tap_maximum(w)
    if _plain_windows(w, top):
        return top
    top.fill(np.finfo(x.dtype).min)
    for tap in w:
        np.copyto(top, tap, where=np.greater(tap, top))
    return top


def _side_by_side_maximum(x, size, strides, pads, out):
    """Where the windows lie side by side on an unpadded input (pooling's default), their maxima without a
    copy of the windows: the maximum of each window's rows taken over whole rows of the image (long runs for
    NumPy's loop), then over each row's taps. None where that could differ from TensorFlow's: other windows,
    a -0.0 in the input, a NaN or a window of -inf alone in the result (the window-major path decides)."""
    (kh, kw), (oh, ow) = size, out
    if tuple(strides) != (kh, kw) or any(pads) or not x.size or not x.flags.c_contiguous:
        return None
    if _has_negative_zero(x):
        return None
    n, _, width, c = x.shape
    rows = x[:, :oh * kh].reshape(n, oh, kh, width * c)
    top_rows = _tap_maximum([rows[:, :, i] for i in range(kh)]).reshape(n, oh, width, c)
    taps = top_rows[:, :, :ow * kw].reshape(n, oh, ow, kw, c)
    top = _tap_maximum([taps[:, :, :, j] for j in range(kw)])
    return top if top.min() > -np.inf else None


def _first_maxima(x, geometry) -> list:
    """Per tap, where it is the element of its window that MaxPoolGrad passes the gradient to: the window's
    first element of the input, replaced by each later one greater than the one kept (a NaN kept first
    stays). Without NaN, lone -inf or zeros of both signs, that is the first element equal to the maximum."""
    w = _window_major(x, geometry, -np.inf)
    top = _tap_maximum(w)
    if _plain_windows(w, top, signed_zeros=False):      # (+0.0 == -0.0: the first of them is TensorFlow's)
        hits = [np.equal(w[0], top)]
        found = hits[0]
        for k in range(1, len(w)):
            hits.append(np.greater(np.equal(w[k], top), found))     # equal to the maximum, the first so
            if k + 1 < len(w):
                found = found | hits[k]
        return hits
    # TensorFlow's loop; where padding comes first in a window, from the first element of the input
    size, strides, pads, out = geometry
    h, width = x.shape[1:3]
    inside = np.zeros((1, h + pads[0] + pads[1], width + pads[2] + pads[3], 1), dtype=bool)
    inside[:, pads[0]:pads[0] + h, pads[2]:pads[2] + width] = True
    inside = _pool_taps(inside, size, strides, (0, 0, 0, 0), out, False)
    which = np.zeros(top.shape, dtype=np.int32)
    kept = w[0].copy()
    taken = np.broadcast_to(inside[0], which.shape).copy()
    for k in range(1, len(w)):
        take = np.less(kept, w[k])
        take |= ~taken
        take &= inside[k]
        np.copyto(kept, w[k], where=take)
        np.copyto(which, k, where=take)
        taken |= take
    return [which == k for k in range(len(w))]


def _masked_bits(hit, bits, out=None):
    """``bits`` where ``hit``, 0 (+0.0's bits) elsewhere."""
    return np.multiply(bits, hit, out=out, dtype=bits.dtype)


def _max_pool_grad_kernel(x, g, size, strides, pads, out):
    """MaxPoolGrad: zeros of x's shape, each window's gradient added at its first maximum (the windows in
    order: with overlapping windows, a tap at a time from the last to the first)."""
    hits = _first_maxima(x, (size, strides, pads, out))
    top, bottom, left, right = pads
    h, w = x.shape[1:3]
    shape = (x.shape[0], h + top + bottom, w + left + right, x.shape[3])
    # windows side by side that cover the (padded) input: every element is written below, none need be zero
    tiled = tuple(strides) == tuple(size) and shape[1:3] == (out[0] * size[0], out[1] * size[1])
    grad = np.empty(shape, dtype=g.dtype) if tiled else np.zeros(shape, dtype=g.dtype)
    bits = f"u{g.dtype.itemsize}"
    if all(s >= k for s, k in zip(strides, size)):
        # each element in one window at most: its 0 + g (+0.0 for -0.0) written in place
        g_bits = np.add(g, g.dtype.type(0)).view(bits)
        masked = np.empty((len(hits),) + g.shape, dtype=bits)     # (contiguous: then copied a pixel at a time)
        for k, hit in enumerate(hits):
            _masked_bits(hit, g_bits, out=masked[k])
        source, target = _as_rows(masked, grad.view(bits))
        for k, tap in enumerate(_taps(target, size, strides, out)):
            tap[...] = source[k]
    else:
        g_bits = np.ascontiguousarray(g).view(bits)
        taps = _pool_taps(grad, size, strides, (0, 0, 0, 0), out, 0)
        for k in reversed(range(len(taps))):
            np.add(taps[k], _masked_bits(hits[k], g_bits).view(g.dtype), out=taps[k])
    return grad if grad.shape == x.shape else np.ascontiguousarray(grad[:, top:top + h, left:left + w])


def _max_pool_gather_kernel(x, t, size, strides, pads, out):
    """The adjoint of MaxPoolGrad in its gradient (MaxPoolGradGrad): ``t`` at each window's first maximum."""
    geometry = (size, strides, pads, out)
    w_bits = _window_major(t, geometry, 0).view(f"u{t.dtype.itemsize}")
    picked = np.zeros(w_bits.shape[1:], dtype=t.dtype)
    picked_bits = picked.view(w_bits.dtype)
    for hit, tap in zip(_first_maxima(x, geometry), w_bits):
        picked_bits |= _masked_bits(hit, tap)
    return picked


def _pooled(op, x, other, attrs) -> Tensor | None:
    return None if other is None else apply(op, (x, other), **attrs)


# Max pooling as TensorFlow's three kernels: MaxPool, MaxPoolGrad (linear in the gradient, no gradient of its
# own for the input: the first maximum moves only where it ties) and its adjoint MaxPoolGradGrad
MAX_POOL = register("max_pool", numpy=_max_pool_kernel, numba="exact", unify=(), saves=(0,), batchable=False,
                    vjp=lambda r, g: (apply(MAX_POOL_GRAD, (r.inputs[0], g), **r.attrs),),
                    jvp=lambda r, ts: apply(MAX_POOL_GATHER, (r.inputs[0], ts[0]), **r.attrs))
MAX_POOL_GRAD = register("max_pool_grad", numpy=_max_pool_grad_kernel, numba="exact", unify=(), saves=(0,),
                         batchable=False,
                         vjp=lambda r, g: (None, apply(MAX_POOL_GATHER, (r.inputs[0], g), **r.attrs)),
                         jvp=lambda r, ts: _pooled(MAX_POOL_GRAD, r.inputs[0], ts[1], r.attrs))
MAX_POOL_GATHER = register("max_pool_gather", numpy=_max_pool_gather_kernel, unify=(), saves=(0,),
                           batchable=False,
                           vjp=lambda r, g: (None, apply(MAX_POOL_GRAD, (r.inputs[0], g), **r.attrs)),
                           jvp=lambda r, ts: _pooled(MAX_POOL_GATHER, r.inputs[0], ts[1], r.attrs))


def avg_pool2d(x, ksize, strides, padding) -> Tensor:
    """The mean of each window over the input's own elements (SAME's padding is not counted)."""
    x = _float(x, "avg_pool2d")
    _pool_shape(x, "avg_pool2d")
    kh, kw = ksize
    patches, (top, bottom, left, right), (oh, ow), _ = _windows(x, kh, kw, strides, (1, 1), padding, 0)
    h, w = x.shape[1:3]
    rows = (np.arange(oh) * strides[0])[:, None] + np.arange(kh)[None, :] - top
    cols = (np.arange(ow) * strides[1])[:, None] + np.arange(kw)[None, :] - left
    count = (((rows >= 0) & (rows < h)).sum(1)[:, None] * ((cols >= 0) & (cols < w)).sum(1)[None, :])
    # (TensorFlow's AvgPool adds a window's values one after another, row by row, as this chain of adds does)
    total = None
    for i in range(kh):
        for j in range(kw):
            tap = getitem(patches, (slice(None), slice(None), slice(None), i, j))
            total = tap if total is None else add(total, tap)
    return div(total, Tensor(count[:, :, None].astype(x.dtype)))


def _pool_shape(x, what):
    if x.ndim != 4:
        raise ShapeError(f"{what} needs a 4-D input [batch, height, width, channels], got shape {list(x.shape)}")


# --------------------------------------------------------------------- dropout

def dropout(x, rate, uniform_values: np.ndarray) -> Tensor:
    """x / (1 - rate) where the uniform draw is >= rate, else 0 (tf.nn.dropout): TensorFlow selects, so a dropped
    negative is 0.0, not -0.0."""
    t = _float(x, "dropout")
    if rate == 0:
        return t
    keep = uniform_values >= rate
    scaled = mul(t, 1.0 / (1.0 - rate))
    return where(Tensor(np.broadcast_to(keep, scaled.shape)), scaled, Tensor(np.zeros((), t.dtype)))


def truncated_normal_values(rng, shape, mean, stddev) -> np.ndarray:
    """Normal draws, redrawn where more than two standard deviations out (tf.random.truncated_normal)."""
    out = rng.standard_normal(size=shape)
    bad = np.abs(out) > 2
    while bad.any():
        out[bad] = rng.standard_normal(size=int(bad.sum()))
        bad = np.abs(out) > 2
    return out * stddev + mean

