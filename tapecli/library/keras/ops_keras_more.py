"""More keras.ops functions whose TensorFlow namesakes take other arguments or mean other things, as Keras's
TensorFlow backend computes them (keras/src/backend/tensorflow/{numpy,linalg,core,image,nn}.py): allclose (NumPy's,
the operands in their result dtype), bincount (Keras's result dtype), cholesky (upper), convert_to_tensor (a
literal cast to an integer or bool dtype), cross (NumPy's axes, 2-vectors), diag (of a vector or a matrix), norm
(NumPy's vector and matrix norms), tensordot (computed in a wide enough dtype), conv_transpose (the output's size
Keras's), and keras.ops.image's resize, sobel_edges, extract_patches and ssim (Keras's own), channels_first too."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfError, TdfTypeError, TdfValueError
from tapecli.library.core import to_dtype
from tapecli.library.keras.common import flag, float_dtype, integer
from tapecli.library.keras.ops_arrays import _ints, diagonal, moveaxis
from tapecli.library.keras.ops_keras_linalg import _adjoint, _python
from tapecli.library.keras.ops_nn import _channels_last, _images, conv, data_format_of
from tapecli.library.keras.ops_numpy import _as, _kind, _tensor, result_type
from tapecli.runtime.values import Tensor, Variable, dtype_name

# the dtypes tf.tensordot multiplies in; any other is computed in the float dtype it promotes to
_TENSORDOT = ("int32", "int64", "float16", "float32", "float64", "bfloat16")


def _common(x1, x2):
    """Both operands cast to their Keras result dtype."""
    dtype = result_type(_kind(x1), _kind(x2))
    return _as(x1, dtype), _as(x2, dtype), dtype


def allclose(x1, x2, rtol=1e-05, atol=1e-08, equal_nan=False):
    """A scalar bool: |x1 - x2| <= atol + rtol |x2| where both are finite, or x1 == x2 (NaNs alike too with
    equal_nan); integers and bools compared for equality."""
    a, b, dtype = _common(x1, x2)
    left, right = np.asarray(a.value), np.asarray(b.value)
    if "float" not in dtype:
        return Tensor(np.asarray(np.all(left == right)))
    kind = left.dtype.type
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(left - right) <= kind(_python(atol)) + kind(_python(rtol)) * np.abs(right)
        found = (np.isfinite(left) & np.isfinite(right) & close) | (left == right)
    if flag(equal_nan):
        found |= np.isnan(left) & np.isnan(right)
    return Tensor(np.asarray(np.all(found)))


def bincount(x, weights=None, minlength=0, sparse=False):
    """tf.math.bincount along the last axis, in int32 without weights, else the result dtype of x's and the
    weights' dtypes."""
    from tapecli.library.tf_segments import bincount as tf_bincount
    if flag(sparse):
        raise TdfValueError("keras.ops.bincount(sparse=True) (a tf.SparseTensor) is not supported by tapecli")
    t = _tensor(x)
    kinds = [dtype_name(t.dtype)]
    if kinds[0] not in ("int32", "int64"):
        t = ops.cast(t, np.dtype(np.int32))
    if weights is None:
        dtype = "int32"
    else:
        weights = _tensor(weights)
        kinds.append(dtype_name(weights.dtype))
        dtype = result_type(*kinds)
        if kinds[1] not in ("int32", "int64", "float32", "float64"):
            weights = ops.cast(weights, np.dtype(np.int32 if "int" in kinds[1] else np.float32))
    return ops.cast(tf_bincount(t, weights, minlength=integer(minlength, "minlength"), axis=-1), np.dtype(dtype))


def cholesky(x, upper=False):
    """L (or its adjoint, upper) of a batch of square matrices; a matrix not positive definite is refused with
    Keras's ValueError."""
    from tapecli.library.tf_scopes import check_numerics
    t = _tensor(x)
    if t.ndim < 2:
        raise TdfValueError(f"Expected input to have rank >= 2. Received input with shape {t.shape}.")
    if t.shape[-2] != t.shape[-1]:
        raise TdfValueError(f"Expected a square matrix. Received non-square input with shape {t.shape}")
    try:
        out = check_numerics(ops.cholesky(t), "Cholesky")
    except TdfError as error:
        raise TdfValueError(f"Cholesky decomposition failed: {error}") from None
    return _adjoint(out) if flag(upper) else out


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """A tensor as it is, cast to ``dtype`` where that differs; a literal converted by TensorFlow (an integer or
    bool dtype: converted first, then cast, as Keras does)."""
    from tapecli.library.tf_math import convert_to_tensor as tf_convert_to_tensor
    if dtype is None:
        return tf_convert_to_tensor(x)
    want = to_dtype(dtype)
    if isinstance(x, Variable) or (isinstance(x, Tensor) and not x.weak):
        t = _tensor(x)
        return t if t.dtype == want else ops.cast(t, want)
    if want == np.bool_ or want.kind in "iu":
        return ops.cast(tf_convert_to_tensor(x), want)
    return tf_convert_to_tensor(x, dtype=want)


def _padded(t: Tensor) -> Tensor:
    """A 2-vector's third component (0)."""
    return ops.concat([t, ops.zeros_like(ops.getitem(t, (Ellipsis, slice(0, 1))))], -1) if t.shape[-1] == 2 else t


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's cross product of the vectors along axisa and axisb (2 or 3 components, 2 as z = 0), broadcast,
    along axisc; of two 2-vectors, its z component alone."""
    from tapecli.library.tf_linalg import cross as tf_cross
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b, _ = _common(x1, x2)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    for t in (a, b):
        if t.shape[-1] not in (2, 3):
            raise TdfValueError(f"Incompatible dimensions for cross product (dimension must be 2 or 3): "
                                f"{a.shape[-1]}, {b.shape[-1]}")
    planar = a.shape[-1] == 2 and b.shape[-1] == 2
    a, b = _padded(a), _padded(b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    c = tf_cross(ops.broadcast_to(a, shape), ops.broadcast_to(b, shape))
    return ops.getitem(c, (Ellipsis, 2)) if planar else moveaxis(c, -1, axisc)


def diag(x, k=0):
    """A vector's matrix (its k-th diagonal), or a matrix's k-th diagonal."""
    from tapecli.library.tf_linalg import diag as tf_diag
    t = _tensor(x)
    if t.ndim == 1:
        return tf_diag(t, k=integer(k, "k"))
    if t.ndim == 2:
        return diagonal(t, offset=k)
    raise TdfValueError(f"`x` must be 1d or 2d. Received: x.shape={t.shape}")


def tensordot(x1, x2, axes=2):
    """tf.tensordot in the operands' result dtype (narrow integers and bools multiplied in the float dtype they
    promote to, then cast back)."""
    from tapecli.library.tf_linalg import tensordot as tf_tensordot
    dtype = result_type(_kind(x1), _kind(x2))
    compute = dtype if dtype in _TENSORDOT else result_type(dtype, "float")
    out = tf_tensordot(_as(x1, compute), _as(x2, compute), axes)
    return out if compute == dtype else ops.cast(out, np.dtype(dtype))


def _ord(ord):  # noqa: A002
    """``ord`` as Python's value: a number, inf, or a string."""
    value = _python(ord)
    return value.item() if isinstance(value, Tensor) and value.ndim == 0 else value


def _vector_norm(x: Tensor, ord, axis: int, keepdims: bool):  # noqa: A002
    if ord is None or ord == 2:
        return ops.sqrt(ops.reduce_sum(ops.mul(x, x), axis, keepdims))
    if ord in (np.inf, -np.inf):
        reduce = ops.reduce_max if ord > 0 else ops.reduce_min
        return reduce(ops.abs_(x), axis, keepdims)
    if ord == 0:
        return ops.reduce_sum(ops.cast(ops.not_equal(x, ops.zeros_like(x)), x.dtype), axis, keepdims)
    if isinstance(ord, str):
        raise TdfValueError(f"Invalid `ord` argument for vector norm. Received: ord={ord}")
    power = Tensor(np.asarray(ord, x.dtype))
    return ops.pow_(ops.reduce_sum(ops.pow_(ops.abs_(x), power), axis, keepdims), ops.reciprocal(power))


def _matrix_norm(x: Tensor, ord, rows: int, cols: int, keepdims: bool):  # noqa: A002
    if ord is None or ord == "fro":
        return ops.sqrt(ops.reduce_sum(ops.mul(x, x), (rows, cols), keepdims))
    if ord in (1, -1, np.inf, -np.inf) and not isinstance(ord, bool):
        inner, outer = (rows, cols) if ord in (1, -1) else (cols, rows)   # (column sums for 1, row sums for inf)
        if not keepdims and outer > inner:
            outer -= 1
        reduce = ops.reduce_max if ord > 0 else ops.reduce_min
        return reduce(ops.reduce_sum(ops.abs_(x), inner, keepdims), outer, keepdims)
    if ord in ("nuc", 2, -2):
        from tapecli.library.tf_linalg import svd
        s = svd(moveaxis(x, [rows, cols], [-2, -1]), compute_uv=False)
        out = ops.reduce_sum(s, -1) if ord == "nuc" else (ops.reduce_max if ord == 2 else ops.reduce_min)(s, -1)
        if keepdims:
            out = ops.reshape(out, tuple(1 if i in (rows, cols) else n for i, n in enumerate(x.shape)))
        return out
    raise TdfValueError(f"Invalid `ord` argument for matrix norm. Received: ord={ord}")


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """NumPy's vector norm along one axis or matrix norm along two (all of x's axes without ``axis``), in
    float32 for int64 and else x's dtype promoted to a float."""
    t = _tensor(x)
    ndim = t.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(_ints(axis))
    if any(a < -ndim or a >= ndim for a in axes):
        raise TdfValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with "
                            f"ndim={ndim}, while axis={axes}")
    kind = dtype_name(t.dtype)
    t = ops.cast(t, np.dtype(float_dtype() if kind == "int64" else result_type(kind, "float")))
    keep, ord = flag(keepdims), _ord(ord)  # noqa: A001
    if len(axes) == 1:
        return _vector_norm(t, ord, axes[0], keep)
    if len(axes) == 2:
        return _matrix_norm(t, ord, axes[0] % ndim, axes[1] % ndim, keep)
    raise TdfValueError(f"Invalid axis values. Received: axis={axes if len(axes) != 1 else axes[0]}")


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """tf.image.resize with Keras's interpolation names, of channels-last or channels-first images, cropped or
    padded to the size's aspect ratio first where asked; integer images rounded and saturated back to their
    dtype."""
    from tapecli.library.keras.preprocessing import keras_resize
    from tapecli.library.tf_array import saturate_cast
    target = _ints(size)
    if len(target) != 2:
        raise TdfValueError(f"Expected `size` to be a tuple of 2 integers. Received: size={tuple(target)}")
    if target[0] <= 0 or target[1] <= 0:
        raise TdfValueError(f"`size` must have positive height and width. Received: size={tuple(target)}")
    t, first = _images(images, data_format)
    moved = moveaxis(t, -3, -1) if first else t
    out = keras_resize(moved, *target, interpolation, flag(crop_to_aspect_ratio), flag(pad_to_aspect_ratio),
                       fill_mode, fill_value, flag(antialias))
    out = moveaxis(out, -1, -3) if first else out
    if out.dtype == t.dtype:
        return out
    return saturate_cast(ops.round_(out) if t.dtype.kind in "iu" else out, t.dtype)


def sobel_edges(images, data_format=None):
    """tf.image.sobel_edges; channels_first images give (batch, channels, height, width, 2)."""
    from tapecli.library.tf_image_boxes import sobel_edges as tf_sobel_edges
    t = _tensor(images)
    if data_format_of(data_format) == "channels_first":
        return ops.transpose(tf_sobel_edges(ops.transpose(t, (0, 2, 3, 1))), (0, 3, 1, 2, 4))
    return tf_sobel_edges(t)


def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """Keras's 2-D patches: a convolution with the identity kernel (each patch's values, row by row, channels
    innermost), strides the patch size unless given."""
    sizes = _ints(size)
    if len(sizes) == 3:
        raise TdfValueError("keras.ops.image.extract_patches of volumes (a size of 3) is not supported by tapecli")
    if len(sizes) not in (1, 2):
        raise TdfTypeError(f"Invalid `size` argument. Expected an int or a tuple of length 2. Received: size={size}")
    height, width = sizes * 2 if len(sizes) == 1 else sizes
    fmt = data_format_of(data_format)
    t = _tensor(images)
    unbatched = t.ndim == 3
    if unbatched:
        t = ops.reshape(t, (1, *t.shape))
    channels = t.shape[-1] if fmt == "channels_last" else t.shape[1]
    out_dim = height * width * channels
    kernel = Tensor(np.eye(out_dim, dtype=t.dtype).reshape(height, width, channels, out_dim))
    patches = conv(t, kernel, strides if strides is not None and _ints(strides) else size, padding,
                   dilation_rate, data_format=fmt)
    return ops.reshape(patches, patches.shape[1:]) if unbatched else patches


def _transposed_size(size: int, kernel: int, stride: int, padding: str, extra, dilation: int) -> int:
    """One spatial axis of a transposed convolution's output (Keras's _get_output_shape_given_tf_padding)."""
    kernel = (kernel - 1) * dilation + 1
    if padding == "valid":
        return (size - 1) * stride + kernel + (max(kernel, stride) - kernel if extra is None else extra)
    return size * stride if extra is None else (size - 1) * stride + kernel % 2 + extra


def _per_axis(value, rank: int) -> list[int]:
    """An int or one per spatial axis, as one per spatial axis."""
    found = _ints(value)
    return found * rank if len(found) == 1 else found


def _conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, dilation_rate=1):
    """tf.nn.conv_transpose of channels-last inputs, the output's size Keras's (output_padding added)."""
    from tapecli.library.tf_nn_losses import conv_transpose as tf_conv_transpose
    f = _tensor(kernel)
    rank = inputs.ndim - 2
    if inputs.shape[-1] != f.shape[-1]:
        raise TdfValueError(f"The number of input channels must match the kernel's input channels. Received: input "
                            f"channels={inputs.shape[-1]}, kernel input channels={f.shape[-1]}, "
                            f"data_format='channels_last'.")
    if str(padding).lower() not in ("valid", "same"):
        raise TdfValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: padding={padding}")
    stride, dilation = _per_axis(strides, rank), _per_axis(dilation_rate, rank)
    extra = [None] * rank if output_padding is None else _per_axis(output_padding, rank)
    spatial = [_transposed_size(inputs.shape[i + 1], f.shape[i], stride[i], str(padding).lower(), extra[i],
                                dilation[i]) for i in range(rank)]
    return tf_conv_transpose(inputs, f, [inputs.shape[0], *spatial, f.shape[-2]], stride, str(padding).upper(),
                             dilations=dilation)


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None,
                   dilation_rate=1):
    return _channels_last(_conv_transpose)(inputs, kernel, strides, padding, output_padding, dilation_rate,
                                           data_format=data_format_of(data_format))


def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, data_format=None):
    """Keras's own SSIM (not tf.image.ssim's): each channel's local statistics under a Gaussian window (a valid
    convolution), the SSIM map averaged over the image and its channels, in the images' dtype."""
    a, b = _tensor(image1), _tensor(image2)
    original = a.dtype
    compute = np.dtype(result_type(dtype_name(a.dtype), "float"))
    a, b = ops.cast(a, compute), ops.cast(b, compute)
    for i, t in enumerate((a, b), 1):
        if t.ndim not in (3, 4):
            raise TdfValueError(f"Invalid image{i} rank: expected rank 3 (single image) or rank 4 (batch of "
                                f"images). Received input with shape: image{i}.shape={t.shape}")
    unbatched = a.ndim == 3
    if unbatched:
        a, b = ops.reshape(a, (1, *a.shape)), ops.reshape(b, (1, *b.shape))
    if data_format_of(data_format) == "channels_first":
        a, b = moveaxis(a, 1, -1), moveaxis(b, 1, -1)
    batch, height, width, channels = a.shape
    size, sigma = integer(filter_size, "filter_size"), float(_python(filter_sigma))
    x = np.arange(size, dtype=compute) - compute.type((size - 1) / 2.0)
    gauss = np.exp(-(x ** 2) / compute.type(2.0 * sigma ** 2))
    gauss = gauss / gauss.sum()
    kernel = Tensor(np.outer(gauss, gauss).reshape(size, size, 1, 1).astype(compute))
    c1, c2 = (Tensor(np.asarray((float(_python(k)) * float(_python(max_val))) ** 2, compute)) for k in (k1, k2))
    a, b = (ops.reshape(ops.transpose(t, (0, 3, 1, 2)), (-1, height, width, 1)) for t in (a, b))

    def mean(t):
        return conv(t, kernel, 1, "valid", 1)
    mu1, mu2 = mean(a), mean(b)
    mu1_sq, mu2_sq, mu12 = ops.mul(mu1, mu1), ops.mul(mu2, mu2), ops.mul(mu1, mu2)
    s1, s2 = ops.sub(mean(ops.mul(a, a)), mu1_sq), ops.sub(mean(ops.mul(b, b)), mu2_sq)
    s12 = ops.sub(mean(ops.mul(a, b)), mu12)
    two = Tensor(np.asarray(2.0, compute))
    numerator = ops.mul(ops.add(ops.mul(two, mu12), c1), ops.add(ops.mul(two, s12), c2))
    denominator = ops.mul(ops.add(ops.add(mu1_sq, mu2_sq), c1), ops.add(ops.add(s1, s2), c2))
    per_channel = ops.reduce_mean(ops.div(numerator, denominator), (1, 2, 3))
    out = ops.reduce_mean(ops.reshape(per_channel, (batch, channels)), -1)
    return ops.cast(ops.reshape(out, ()) if unbatched else out, original)


FUNCTIONS = {f"ops.{f.__name__}": f for f in (
    allclose, bincount, cholesky, convert_to_tensor, cross, diag, norm, tensordot, conv_transpose)}
# keras.ops.image's own: the resolver reads "keras.ops.image.X" before "ops.X" (not a flat keras.ops name)
FUNCTIONS.update({f"keras.ops.image.{f.__name__}": f for f in (resize, sobel_edges, extract_patches, ssim)})
