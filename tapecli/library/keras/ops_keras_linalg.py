"""keras.ops functions whose TensorFlow namesakes take other arguments or mean other things, as Keras's TensorFlow
backend computes them (keras/src/backend/tensorflow/{linalg,nn,math,core}.py) on TensorFlow's own functions:
svd (u, s, vh; full matrices by default), qr (a mode), lstsq (NumPy's, through the SVD), batch_normalization
(an axis), the cross-entropies (elementwise binary, no mean), segment_sum/max/min (unsorted by default),
top_k, scan (jax.lax.scan's carry), depth_to_space/space_to_depth (channels_last/first), moments and
leaky_relu (negative_slope); and those that only rename TensorFlow's parameters: det, inv, logdet, slogdet (a
tuple), lu_factor (tf.linalg.lu, its permutation inverted), solve (a vector right-hand side), pinv, matrix_rank,
eigh, cholesky_inverse, stop_gradient, slice, saturate_cast (Keras's limits) and unravel_index (a tuple of
coordinates)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.core import NamedResult
from tapecli.library.keras.common import flag, integer
from tapecli.library.keras.ops_arrays import _ints
from tapecli.library.keras.ops_numpy import _tensor
from tapecli.library.tf_linalg import _maybe_adjoint
from tapecli.library.tf_nn_losses import depth_to_space, space_to_depth
from tapecli.runtime.values import PythonTuple, Tensor

def _python(value):
    """A Python number or bool as the call gives it (a weak or boolean scalar tensor) back as the Python value
    Keras's checks compare."""
    if isinstance(value, Tensor) and value.ndim == 0 and (value.weak or value.dtype == np.bool_):
        return value.value.item()
    return value


def _adjoint(x):
    return _maybe_adjoint(x, True)


def _completed(q, rows: int):
    """q (orthonormal columns, fewer than its rows) with an orthonormal basis of the rest appended: the square
    factor a full decomposition gives (LAPACK picks the extra columns; they carry no gradient)."""
    have = q.shape[-1]
    if have >= rows:
        return q
    full = np.linalg.qr(np.asarray(q.value, np.float64), mode="complete")[0][..., have:]
    return ops.concat([q, Tensor(np.ascontiguousarray(full.astype(q.dtype)))], axis=-1)


def svd(x, full_matrices=True, compute_uv=True):
    """(u, s, vh), TensorFlow's (s, u, v) reordered and v's adjoint taken; s alone without compute_uv."""
    from tapecli.library.tf_linalg import svd as tf_svd
    t = _tensor(x)
    if t.ndim < 2:
        raise TdfValueError(f"Expected input to have rank >= 2. Received scalar or vector input of shape "
                            f"{t.shape}")
    if not flag(compute_uv):
        return tf_svd(t, compute_uv=False)
    s, u, v = tf_svd(t)
    if flag(full_matrices):
        m, n = t.shape[-2:]
        u, v = _completed(u, m), _completed(v, n)
    return PythonTuple([u, s, _adjoint(v)])


def qr(x, mode="reduced"):
    """tf.linalg.qr's Qr(q, r); mode='complete' gives the square q and r padded with zero rows."""
    from tapecli.library.tf_linalg import qr as tf_qr
    if mode not in {"reduced", "complete"}:
        raise TdfValueError(f"`mode` argument value not supported. Expected one of {{'reduced', 'complete'}}. "
                            f"Received: mode={mode}")
    found = tf_qr(_tensor(x))
    q, r = found
    m, n = q.shape[-2], r.shape[-1]
    if mode == "complete" and m > n:
        zeros = Tensor(np.zeros(r.shape[:-2] + (m - n, n), r.dtype))
        return NamedResult(found.fields, [_completed(q, m), ops.concat([r, zeros], axis=-2)], found.type_name)
    return found


def lstsq(a, b, rcond=None):
    """NumPy's least squares through the reduced SVD: singular values under rcond * s[0] count as 0."""
    a, b = _tensor(a), _tensor(b)
    if a.shape[0] != b.shape[0]:
        raise TdfValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    if vector:
        b = ops.reshape(b, (b.shape[0], 1))
    if a.ndim != 2:
        raise TdfTypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TdfTypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    eps = float(np.finfo(a.dtype).eps)
    cut = eps * max(n, m) if rcond is None else float(_tensor(rcond).value)
    cut = eps if cut < 0 else cut
    u, s, vh = svd(a, full_matrices=False)
    keep = ops.greater_equal(s, ops.mul(Tensor(np.asarray(cut, s.dtype)), ops.getitem(s, 0)))
    safe = ops.where(keep, s, ops.ones_like(s))
    s_inv = ops.reshape(ops.where(keep, ops.reciprocal(safe), ops.zeros_like(s)), (s.shape[0], 1))
    x = ops.matmul(_adjoint(vh), ops.mul(s_inv, ops.matmul(_adjoint(u), ops.cast(b, a.dtype))))
    return ops.reshape(x, (-1,)) if vector else x


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """tf.nn.batch_normalization with the statistics along ``axis`` reshaped to broadcast there."""
    from tapecli.library.tf_nn import batch_normalization as tf_batch_normalization
    t = _tensor(x)
    parts = [mean, variance, offset, scale]
    if _python(axis) != -1:
        shape = [1] * t.ndim
        shape[integer(axis, "axis")] = _tensor(mean).shape[0]
        parts = [None if p is None else ops.reshape(_tensor(p), tuple(shape)) for p in parts]
    return tf_batch_normalization(t, *parts, epsilon)


def _same_shape(target, output):
    if target.ndim != output.ndim:
        raise TdfValueError(f"Arguments `target` and `output` must have the same rank (ndim). Received: "
                            f"target.shape={target.shape}, output.shape={output.shape}")
    if target.shape != output.shape:
        raise TdfValueError(f"Arguments `target` and `output` must have the same shape. Received: "
                            f"target.shape={target.shape}, output.shape={output.shape}")


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise (Keras's losses take the mean over the last axis, keras.ops does not)."""
    from tapecli.library.keras.losses import _bce_elementwise, _logits
    target, output = _tensor(target), _tensor(output)
    _same_shape(target, output)
    return _bce_elementwise(target, *_logits(output, flag(from_logits), "Sigmoid", "binary_crossentropy"))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    from tapecli.library.keras.losses import categorical_crossentropy as loss
    target, output = _tensor(target), _tensor(output)
    if target.ndim < 1:
        raise TdfValueError(f"Arguments `target` and `output` must be at least rank 1. Received: "
                            f"target.shape={target.shape}, output.shape={output.shape}")
    _same_shape(target, output)
    return loss(target, output, from_logits, 0.0, axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    from tapecli.library.keras.losses import sparse_categorical_crossentropy as loss
    output = _tensor(output)
    axis = _python(axis)
    if axis != -1 and axis != output.ndim - 1:
        raise TdfValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    return loss(target, output, from_logits)


def _segment(kind):
    def reduce(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
        from tapecli.library import tf_nn, tf_segments
        data, ids = _tensor(data), _tensor(segment_ids)
        if ids.ndim > 1:
            raise TdfValueError(f"Argument `segment_ids` should be an 1-D vector, got shape: {ids.ndim}. Consider "
                                f"either flatten input with segment_ids.reshape((-1)) and data.reshape((-1, ) + "
                                f"data.shape[len(segment_ids.shape):]) or vectorize with vmap.")
        if ids.shape[0] != data.shape[0]:
            raise TdfValueError(f"Argument `segment_ids` and `data` should have same leading dimension. Got "
                                f"{ids.shape} v.s. {data.shape}.")
        library = tf_nn if kind == "sum" else tf_segments
        if flag(sorted):
            if num_segments is not None:
                raise TdfValueError(f"Argument `num_segments` cannot be set when sorted is True when using the "
                                    f"tensorflow backend.Received: num_segments={_python(num_segments)}, "
                                    f"sorted={_python(sorted)}.")
            return getattr(library, f"segment_{kind}")(data, ids)
        if num_segments is None:     # (the sum counts the distinct ids, max and min take the largest id + 1)
            found = np.asarray(ids.value)
            num_segments = len(np.unique(found)) if kind == "sum" else int(found.max()) + 1
        return getattr(library, f"unsorted_segment_{kind}")(data, ids, num_segments)
    reduce.__name__ = f"segment_{kind}"
    return reduce


def top_k(x, k, sorted=True):  # noqa: A002
    from tapecli.library.tf_nn import top_k as tf_top_k
    return tf_top_k(_tensor(x), k, sorted)


def _flat(tree) -> list:
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _flat(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _flat(item)]
    return [tree]


def _packed(tree, leaves):
    """``leaves`` in ``tree``'s structure (its first leaf alone where it is one tensor)."""
    it = iter(leaves)

    def build(node):
        if isinstance(node, dict):
            return {key: build(node[key]) for key in sorted(node)}
        if isinstance(node, (list, tuple)):
            return type(node)(build(item) for item in node)
        return next(it)
    return build(tree)


def scan(interp, f, init, xs=None, length=None, reverse=False, unroll=1):
    """jax.lax.scan: f(carry, x) -> (carry, y) over xs's rows (or ``length`` times with x None); the final carry
    and the ys stacked in xs's order (a y is shaped and typed as the carry, so unwritten ones are zeros)."""
    unroll = _python(unroll)
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 1):
        raise TdfValueError(f"`unroll` must be an positive integer or boolean. Received: unroll={unroll}")
    if xs is None and length is None:
        raise TdfValueError("Got no `xs` to scan over and `length` not provided.")
    xs_flat = [] if xs is None else [_tensor(x) for x in _flat(xs)]
    n = integer(length, "length") if length is not None else xs_flat[0].shape[0]
    carry = [_tensor(c) for c in _flat(init)]
    ys: list = [None] * n
    for i in (range(n - 1, -1, -1) if flag(reverse) else range(n)):
        x = _packed(xs, [ops.getitem(t, i) for t in xs_flat]) if xs_flat else None
        new_carry, y = interp.call_value(f, [_packed(init, carry), x])
        if y is not None:
            ys[i] = [_tensor(v) for v in _flat(y)]
        if new_carry is not None:
            carry = [_tensor(c) for c in _flat(new_carry)]
    empty = [ops.zeros_like(c) for c in carry]
    stacked = [ops.stack([row[j] if row is not None else empty[j] for row in ys]) if n else
               Tensor(np.zeros((0,) + c.shape, c.dtype)) for j, c in enumerate(carry)]
    return PythonTuple([_packed(init, carry), _packed(init, stacked)])


def _channels_first(function):
    """Keras's channels_first: moved last for TensorFlow's NHWC function and back."""
    def run(x, block_size, data_format="channels_last"):
        if integer(block_size, "block_size") < 2:
            raise TdfValueError(f"`block_size` must be at least 2. Received: block_size={_python(block_size)}")
        t = _tensor(x)
        if data_format in (None, "channels_last"):
            return function(t, block_size)
        return ops.transpose(function(ops.transpose(t, (0, 2, 3, 1)), block_size), (0, 3, 1, 2))
    run.__name__ = function.__name__
    return run


def moments(x, axes, keepdims=False, synchronized=False):
    """tf.nn.moments; float16 and bfloat16 computed in float32, clipped to float16's range and cast back."""
    from tapecli.library.tf_math import moments as tf_moments
    t = _tensor(x)
    original = t.dtype
    narrow = str(original) in ("float16", "bfloat16")
    mean, variance = tf_moments(ops.cast(t, np.dtype(np.float32)) if narrow else t, _ints(axes), keepdims=keepdims)
    if narrow:
        top = float(np.finfo(np.float16).max)
        mean, variance = (ops.cast(ops.clip(v, Tensor(np.float32(-top)), Tensor(np.float32(top))), original)
                          for v in (mean, variance))
    return PythonTuple([mean, variance])


def leaky_relu(x, negative_slope=0.2):
    from tapecli.library.core import leaky_relu as tf_leaky_relu
    return tf_leaky_relu(_tensor(x), negative_slope)


def _linalg(name):
    """A tf.linalg function of one matrix argument under Keras's parameter name, ``x``."""
    def renamed(x):
        from tapecli.library import tf_linalg
        return getattr(tf_linalg, name)(x)
    renamed.__name__ = name
    return renamed


def slogdet(x):
    return PythonTuple(ops.slogdet(_tensor(x)))


def lu_factor(x):
    """Keras's (TensorFlow backend): tf.linalg.lu's packed factors and its permutation inverted (a square matrix;
    a batch of them is TensorFlow's invert_permutation error)."""
    from tapecli.errors import KernelValueError
    t = _tensor(x)
    if t.ndim < 2:
        raise TdfValueError(f"Expected input to have rank >= 2. Received scalar input {t.value}." if t.ndim == 0
                            else f"Expected input to have rank >= 2. Received input with shape {t.shape}.")
    if t.shape[-1] != t.shape[-2]:
        raise TdfValueError(f"LU decomposition failed: Expected a square matrix. Received non-square input with "
                            f"shape {t.shape}. LU decomposition is only supported for square matrices in Tensorflow.")
    packed, perm = ops.lu(t)
    if perm.ndim != 1:
        raise KernelValueError("{{function_node __wrapped__InvertPermutation_device_/job:localhost/replica:0/task:0/"
                               "device:CPU:0}} invert_permutation expects a 1D vector. [Op:InvertPermutation] name: ")
    order = np.asarray(perm.value).astype(np.int32)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=np.int32)
    return PythonTuple([packed, Tensor(inverse)])


def solve(a, b):
    """tf.linalg.solve; a right-hand side of one rank less than ``a`` is a vector (a column, squeezed back)."""
    a, b = _tensor(a), _tensor(b)
    if b.ndim == a.ndim - 1:
        return ops.reshape(ops.solve(a, ops.reshape(b, b.shape + (1,))), b.shape)
    return ops.solve(a, b)


def pinv(x, rcond=None):
    from tapecli.library.tf_linalg import pinv as tf_pinv
    return tf_pinv(x, rcond)


def matrix_rank(x, tol=None):
    from tapecli.library.tf_linalg import matrix_rank as tf_matrix_rank
    return tf_matrix_rank(x, tol)


def cholesky_inverse(x, upper=False):
    """The inverse of ``x @ x.T`` (``x.T @ x`` if ``upper``) from its Cholesky factor ``x``."""
    t = _tensor(x)
    inverse = ops.triangular_solve(t, Tensor(np.eye(t.shape[-1], dtype=t.dtype)), not flag(upper), False)
    if flag(upper):
        return ops.matmul(inverse, _adjoint(inverse))
    return ops.matmul(_adjoint(inverse), inverse)


def stop_gradient(variable):
    from tapecli.library.core import stop_gradient as tf_stop_gradient
    return tf_stop_gradient(variable)


def slice(inputs, start_indices, shape):  # noqa: A001 (keras.ops.slice)
    from tapecli.library.tf_array import slice_
    return slice_(inputs, start_indices, shape)


def _limits(dtype: np.dtype):
    if dtype == np.bool_:
        return 0, 1
    info = np.iinfo(dtype) if dtype.kind in "iu" else np.finfo(dtype)
    return info.min, info.max


def saturate_cast(x, dtype):
    """Keras's: ``x`` clipped to the range both dtypes hold (nudged towards 0 where the bound rounds outside
    the target's), then cast."""
    from tapecli.library.core import to_dtype
    t, want = _tensor(x), to_dtype(dtype)
    (in_min, in_max), (out_min, out_max) = _limits(t.dtype), _limits(want)
    low = np.asarray(np.maximum(in_min, out_min)).astype(t.dtype)
    if low < out_min:
        low = np.nextafter(low, 0, dtype=t.dtype)
    high = np.asarray(np.minimum(in_max, out_max)).astype(t.dtype)
    if high > out_max:
        high = np.nextafter(high, 0, dtype=t.dtype)
    if t.dtype == np.bool_:
        t = ops.cast(t, np.dtype(np.int32))
    return ops.cast(ops.clip(t, Tensor(np.asarray(low, t.dtype)), Tensor(np.asarray(high, t.dtype))), want)


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in ``shape``, a tuple of tensors of their dtype; as Keras's TensorFlow
    backend, indices of other than one axis divide by the dims first to last."""
    t = _tensor(indices)
    dims = _ints(shape)
    coords = []
    for dim in (reversed(dims) if t.ndim == 1 else dims):
        d = Tensor(np.asarray(dim, t.dtype))
        coords.append(ops.mod(t, d))
        t = ops.floordiv(t, d)
    return PythonTuple(coords[::-1])


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    _linalg("det"), _linalg("inv"), _linalg("logdet"), _linalg("eigh"), slogdet, solve, pinv, matrix_rank,
    cholesky_inverse, stop_gradient, slice, saturate_cast, unravel_index, lu_factor,
    svd, qr, lstsq, batch_normalization, binary_crossentropy, categorical_crossentropy,
    sparse_categorical_crossentropy, _segment("sum"), _segment("max"), _segment("min"), top_k, moments, leaky_relu,
    _channels_first(depth_to_space), _channels_first(space_to_depth))}
WITH_INTERP = {"ops.scan": scan}
