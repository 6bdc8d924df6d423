"""tf.image.resize (TensorFlow 2's resize_images_v2), for an image [H, W, C] or a batch [N, H, W, C]: bilinear,
nearest, bicubic and area by their kernels; lanczos3, lanczos5, gaussian, mitchellcubic and (antialias=True)
bilinear and bicubic by ScaleAndTranslate's sampling kernels. The sampling positions and weights are TensorFlow's
kernels' (half-pixel centers; nearest's floor, bicubic's Keys table of 1024 entries, area's cell fractions,
ScaleAndTranslate's normalized spans), computed in float32 as the kernels compute them; the image is then gathered
by rows and columns and the weighted terms added in the kernels' order, so the values are TensorFlow's and
gradients flow to the image through recorded ops."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelPreconditionError, KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.library.core import to_dtype, to_float, to_int, to_shape, truth, uniform
from tapecli.interpreter.registry import builtin, register
from tapecli.library.control import _Enum
from tapecli.runtime.values import PythonTuple, Tensor, dtype_name

_F = np.float32
_TABLE_SIZE = 1024


def _lanczos(radius):
    def kernel(x):
        if x > radius:
            return _F(0)
        if x <= _F(1e-3):
            return _F(1)
        pi = _F(3.14159265359)
        return _F(radius) * _sinf(pi * x) * _sinf(pi * x / _F(radius)) / (pi * pi * x * x)
    return kernel


def _sinf(x):
    """C's sinf: the float32 rounding of the sine (NumPy's float32 sine may differ in the last bit)."""
    return _F(np.sin(float(x)))


def _gaussian(x):
    sigma = float(_F(1.5) / _F(3))         # (-x * x in float32, the rest in double, as the kernel computes it)
    return _F(0) if x >= _F(1.5) else _F(np.exp(float(-x * x) / (2.0 * sigma * sigma)))


def _keys_cubic(x):
    if x >= _F(2):
        return _F(0)
    if x >= _F(1):
        return ((_F(-0.5) * x + _F(2.5)) * x - _F(4)) * x + _F(2)
    return ((_F(1.5) * x - _F(2.5)) * x) * x + _F(1)


def _mitchell_cubic(x):
    if x >= _F(2):
        return _F(0)
    if x >= _F(1):
        return ((_F(-7.0 / 18.0) * x + _F(2)) * x - _F(10.0 / 3.0)) * x + _F(16.0 / 9.0)
    return ((_F(7.0 / 6.0) * x - _F(2)) * x) * x + _F(8.0 / 9.0)


# ScaleAndTranslate's sampling kernels of |x| (float32), and their radii
_SPAN_KERNELS = {"triangle": (lambda x: _F(1) - x if x < _F(1) else _F(0), 1.0), "keyscubic": (_keys_cubic, 2.0),
                 "lanczos3": (_lanczos(3.0), 3.0), "lanczos5": (_lanczos(5.0), 5.0), "gaussian": (_gaussian, 1.5),
                 "mitchellcubic": (_mitchell_cubic, 2.0)}
_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _keys_table() -> np.ndarray:
    """TensorFlow's InitCoeffsTable(-0.5): the Keys cubic kernel at 1025 offsets (double arithmetic, stored as
    float32), [offset, 0] for the near samples, [offset, 1] for the far ones."""
    a = -0.5
    x = (np.arange(_TABLE_SIZE + 1) * 1.0 / _TABLE_SIZE).astype(_F).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = (x + 1.0).astype(_F).astype(np.float64)
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([near, far], axis=1).astype(_F)


def _centers(out_size: int, scale) -> np.ndarray:
    """Each output pixel's center in input coordinates: (x + 0.5) * scale (float32)."""
    return (np.arange(out_size).astype(_F) + _F(0.5)) * scale


def _bicubic_taps(in_size: int, out_size: int, scale) -> list:
    """GetWeightsAndIndices (Keys cubic, half-pixel centers): four (indices, weights), samples outside the image
    weighing 0 and the weights renormalized to sum to 1."""
    loc = _centers(out_size, scale) - _F(0.5)
    base = np.floor(loc)
    offset = np.rint((loc - base) * _F(_TABLE_SIZE)).astype(np.int64)
    table, base = _keys_table(), base.astype(np.int64)
    picks = [table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0], table[_TABLE_SIZE - offset, 1]]
    taps = []
    for k, weight in enumerate(picks):
        wanted = base + k - 1
        index = np.clip(wanted, 0, in_size - 1)
        taps.append((index, np.where(index == wanted, weight, _F(0)).astype(_F)))
    total = taps[0][1] + taps[1][1] + taps[2][1] + taps[3][1]
    usable = np.abs(total) >= _F(1000) * np.finfo(_F).tiny
    inverse = np.where(usable, _F(1) / np.where(usable, total, _F(1)), _F(1)).astype(_F)
    return [(index, (w * inverse).astype(_F)) for index, w in taps]


def _area_taps(in_size: int, out_size: int, scale) -> list:
    """ResizeArea's cells: output x covers [x * scale, (x + 1) * scale) of the input; each input cell weighs the
    fraction of it covered. Outputs covering fewer cells get taps of weight 0 at their end."""
    starts = np.arange(out_size).astype(_F) * scale
    ends = np.arange(1, out_size + 1).astype(_F) * scale
    first, stop = np.floor(starts).astype(np.int64), np.ceil(ends).astype(np.int64)
    taps = []
    for k in range(int((stop - first).max())):
        cell = first + k
        inside = cell < stop
        right = (cell + 1).astype(_F)
        weight = np.where(cell < starts, np.where(right > ends, scale, right - starts),
                          np.where(right > ends, ends - cell.astype(_F), _F(1)))
        taps.append((np.clip(cell, 0, in_size - 1), np.where(inside, weight, _F(0)).astype(_F)))
    return taps


def _span_taps(in_size: int, out_size: int, kernel_type: str, antialias: bool) -> list:
    """ScaleAndTranslate's spans (no translation): each output's kernel, scaled by 1/scale when antialiasing a
    reduction, over the inputs near its center, the weights normalized to sum to 1; an output whose center falls
    outside the image weighs nothing."""
    kernel, radius = _SPAN_KERNELS[kernel_type]
    inv_scale = _F(1.0 / float(_F(out_size) / _F(in_size)))
    kernel_scale = max(inv_scale, _F(1)) if antialias else _F(1)
    reach = _F(radius) * kernel_scale
    span = min(2 * int(np.ceil(reach)) + 1, in_size)
    inverse_kernel_scale = _F(1) / kernel_scale
    starts, weights = np.zeros(out_size, np.int64), np.zeros((out_size, span), _F)
    for x in range(out_size):
        sample = (_F(x) + _F(0.5)) * inv_scale + _F(-0.0)
        if sample < 0 or sample > in_size:
            continue
        start = min(max(int(np.ceil(sample - reach - _F(0.5))), 0), in_size - 1)
        end = min(max(int(np.floor(sample + reach - _F(0.5))), 0), in_size - 1) + 1
        found = [kernel(np.abs((_F(source) + _F(0.5) - sample) * inverse_kernel_scale)) for source in range(start, end)]
        total = _F(0)
        for w in found:
            total = _F(total + w)
        if np.abs(total) >= _F(1000) * np.finfo(_F).tiny:
            weights[x, :len(found)] = np.array(found, _F) * (_F(1) / total)
        starts[x] = start
    index = starts[:, None] + np.arange(span)
    weights = np.where(index < in_size, weights, _F(0))
    return [(np.minimum(index[:, k], in_size - 1), weights[:, k]) for k in range(span)]


def _gather(x, axis: int, index: np.ndarray):
    return ops.gather(x, Tensor(index.astype(np.int64)), axis=axis)


def _weighted_sum(x, axis: int, taps: list, from_zero=False):
    """Σ_k x[index_k] * weight_k along ``axis``, added in the kernels' order (``from_zero``: to a sum that starts
    at 0.0, whose sign of a zero it keeps)."""
    shape = [1] * x.ndim
    shape[axis] = -1
    out = None
    for index, weight in taps:
        term = ops.mul(_gather(x, axis, index), Tensor(weight.reshape(shape)))
        out = term if out is None else ops.add(out, term)
    return ops.add(out, Tensor(np.zeros((), _F))) if from_zero else out


def _bilinear(x, axis: int, in_size: int, out_size: int, scale):
    """The two neighbours of each half-pixel center and the fraction past the lower one."""
    loc = _centers(out_size, scale) - _F(0.5)
    low = np.floor(loc)
    lower = np.maximum(low.astype(np.int64), 0)
    upper = np.minimum(np.ceil(loc).astype(np.int64), in_size - 1)
    shape = [1] * x.ndim
    shape[axis] = -1
    return _gather(x, axis, lower), _gather(x, axis, upper), Tensor((loc - low).astype(_F).reshape(shape))


def _lerp(a, b, t):
    return ops.add(a, ops.mul(ops.sub(b, a), t))


def _resized(x, method: str, height: int, width: int, antialias: bool):
    """A batch [N, H, W, C] resized by TensorFlow's kernel of ``method``."""
    in_h, in_w = x.shape[1], x.shape[2]
    kernel_type = {"bilinear": "triangle", "bicubic": "keyscubic"}.get(method, method) if antialias else method
    if kernel_type in _SPAN_KERNELS:        # (scale_and_translate: along the height, then the width)
        x = ops.cast(x, np.float32) if x.dtype != np.float32 else x
        x = _weighted_sum(x, 1, _span_taps(in_h, height, kernel_type, antialias), from_zero=True)
        return _weighted_sum(x, 2, _span_taps(in_w, width, kernel_type, antialias), from_zero=True)
    scale_h, scale_w = _F(in_h) / _F(height), _F(in_w) / _F(width)
    if method == "nearest":         # floor of the half-pixel center (HalfPixelScalerForNN), clamped
        rows = np.minimum(np.floor(_centers(height, scale_h)).astype(np.int64), in_h - 1)
        cols = np.minimum(np.floor(_centers(width, scale_w)).astype(np.int64), in_w - 1)
        return _gather(_gather(x, 1, np.maximum(rows, 0)), 2, np.maximum(cols, 0))
    x = ops.cast(x, np.float32) if x.dtype != np.float32 else x
    if method == "bilinear":        # top = tl + (tr - tl) * x_lerp, ..., top + (bottom - top) * y_lerp
        top, bottom, y_lerp = _bilinear(x, 1, in_h, height, scale_h)
        (tl, tr, x_lerp), (bl, br, _) = (_bilinear(t, 2, in_w, width, scale_w) for t in (top, bottom))
        return _lerp(_lerp(tl, tr, x_lerp), _lerp(bl, br, x_lerp), y_lerp)
    if method == "bicubic":         # along the height, then the width
        x = _weighted_sum(x, 1, _bicubic_taps(in_h, height, scale_h))
        return _weighted_sum(x, 2, _bicubic_taps(in_w, width, scale_w))
    x = _weighted_sum(x, 2, _area_taps(in_w, width, scale_w))      # area: along the width, then the height
    x = _weighted_sum(x, 1, _area_taps(in_h, height, scale_h), from_zero=True)
    return ops.mul(x, Tensor(np.array(1.0 / float(scale_h * scale_w), dtype=_F)))


@builtin("image.resize")
def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """tf.image.resize: float32 values (nearest keeps the images' dtype)."""
    x = ops.to_tensor(images)
    x = ops.materialize(x) if x.weak else x
    method = str(getattr(method, "value", method)).lower()
    if method not in _METHODS:
        raise TdfValueError(f"Resize method is not implemented: {method}")
    if x.ndim not in (3, 4):
        raise TdfValueError("'images' must have either 3 or 4 dimensions.")
    target = to_shape(size)
    if len(target) != 2:
        raise TdfValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    batch = x if x.ndim == 4 else ops.reshape(x, (1, *x.shape))
    height, width = target
    if preserve_aspect_ratio if isinstance(preserve_aspect_ratio, bool) else truth(preserve_aspect_ratio):
        h, w = _F(batch.shape[1]), _F(batch.shape[2])
        factor = min(_F(height) / h, _F(width) / w)
        height, width = int(np.round(factor * h)), int(np.round(factor * w))
    if height <= 0 or width <= 0:
        raise ShapeError(f"tf.image.resize: output dimensions must be positive, got {[height, width]}")
    if batch.shape[1] == 0 or batch.shape[2] == 0:
        raise ShapeError(f"tf.image.resize: input image must be of non-zero size, got shape {list(x.shape)}")
    out = _resized(batch, method, height, width, truth(antialias) if not isinstance(antialias, bool) else antialias)
    return out if x.ndim == 4 else ops.reshape(out, out.shape[1:])


register("image.ResizeMethod", _Enum("tf.image.ResizeMethod", {
    "BILINEAR": "bilinear", "NEAREST_NEIGHBOR": "nearest", "BICUBIC": "bicubic", "AREA": "area",
    "LANCZOS3": "lanczos3", "LANCZOS5": "lanczos5", "GAUSSIAN": "gaussian", "MITCHELLCUBIC": "mitchellcubic"}))


@builtin("image.convert_image_dtype")
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """TensorFlow's conversion of an image's values between dtypes: integers scale by the ratio of their
    ranges, floats are in [0, 1] (an integer's max is 1.0), as image_ops_impl.convert_image_dtype computes."""
    from tapecli.library.tf_array import saturate_cast
    x = ops.to_tensor(image)
    x = ops.materialize(x) if x.weak else x
    want = to_dtype(dtype)
    if want.kind not in "fiu" or x.dtype.kind not in "fiu":
        raise TdfTypeError("convert_image_dtype: dtype must be either floating point or integer")
    if want == x.dtype:
        return ops.identity(x)
    convert = (lambda t: saturate_cast(t, want)) if truth(saturate) else (lambda t: ops.cast(t, want))
    if x.dtype.kind in "iu" and want.kind in "iu":
        scale_in, scale_out = int(np.iinfo(x.dtype).max), int(np.iinfo(want).max)
        if scale_in > scale_out:            # scaling down: scale, then cast
            return convert(ops.floordiv(x, (scale_in + 1) // (scale_out + 1)))
        return ops.mul(convert(x), (scale_out + 1) // (scale_in + 1))
    if x.dtype.kind == "f" and want.kind == "f":
        return ops.cast(x, want)
    if x.dtype.kind in "iu":                # to floats: cast, then scale
        return ops.mul(ops.cast(x, want), 1.0 / int(np.iinfo(x.dtype).max))
    return convert(ops.mul(x, int(np.iinfo(want).max) + 0.5))      # from floats: scale, then cast


# ------------------------------------------------------------------ the compositions of image_ops_impl.py
# Each as TensorFlow's Python composes it of its ops (an image [H, W, C], or a batch [N, H, W, C]), gradients
# flowing through the ops.

def _image(image, what: str, ranks=(3, 4)):
    x = ops.to_tensor(image)
    x = ops.materialize(x) if x.weak else x
    if x.ndim not in ranks:
        raise TdfValueError(f"{what}: 'image' must have either 3 or 4 dimensions, got shape {list(x.shape)}")
    return x


def _axes(x) -> tuple[int, int]:
    """The height and width axes."""
    return (x.ndim - 3, x.ndim - 2)


def _as_float(x):
    """A float32 (or float16) image as it is, any other converted (convert_image_dtype's scaling)."""
    return x if x.dtype in (np.float16, np.float32) else convert_image_dtype(x, np.dtype(np.float32))


@builtin("image.flip_left_right")
def flip_left_right(image):
    x = _image(image, "flip_left_right")
    return ops.reverse(x, [_axes(x)[1]])


@builtin("image.flip_up_down")
def flip_up_down(image):
    x = _image(image, "flip_up_down")
    return ops.reverse(x, [_axes(x)[0]])


@builtin("image.transpose")
def transpose(image, name=None):
    """The height and width axes swapped (the batch and channel axes stay)."""
    x = _image(image, "transpose")
    h, w = _axes(x)
    perm = list(range(x.ndim))
    perm[h], perm[w] = w, h
    return ops.transpose(x, perm)


@builtin("image.rot90")
def rot90(image, k=1, name=None):
    """``k`` quarter turns counter-clockwise, as TensorFlow composes them of flips and a transpose."""
    x = _image(image, "rot90")
    k = to_int(k, "k") % 4
    if k == 1:
        return transpose(flip_left_right(x))
    if k == 2:
        return flip_up_down(flip_left_right(x))
    if k == 3:
        return flip_left_right(transpose(x))
    return x


@builtin("image.rgb_to_grayscale")
def rgb_to_grayscale(images, name=None):
    x = ops.to_tensor(images)
    x = ops.materialize(x) if x.weak else x
    gray = ops.tensordot(convert_image_dtype(x, np.dtype(np.float32)),
                         Tensor(np.array([0.2989, 0.5870, 0.1140], np.float32)), ([x.ndim - 1], [0]))
    return convert_image_dtype(ops.reshape(gray, gray.shape + (1,)), x.dtype)


@builtin("image.grayscale_to_rgb")
def grayscale_to_rgb(images, name=None):
    x = ops.to_tensor(images)
    if x.ndim < 2 or x.shape[-1] != 1:
        raise TdfValueError(f"grayscale_to_rgb: the last dimension must be 1, got shape {list(x.shape)}")
    return ops.tile(x, [1] * (x.ndim - 1) + [3])


def _adjusted(image, adjust):
    """``adjust`` of the image in float, converted back to its dtype (saturating)."""
    x = ops.to_tensor(image)
    x = ops.materialize(x) if x.weak else x
    return convert_image_dtype(adjust(_as_float(x)), x.dtype, saturate=True)


@builtin("image.adjust_brightness")
def adjust_brightness(image, delta):
    return _adjusted(image, lambda f: ops.add(f, ops.cast(ops.to_tensor(delta), f.dtype)))


@builtin("image.adjust_gamma")
def adjust_gamma(image, gamma=1, gain=1):
    if np.any(np.asarray(ops.to_tensor(gamma).value) < 0):
        raise TdfValueError("Gamma should be a non-negative real number.")
    return _adjusted(image, lambda f: ops.mul(gain, ops.pow_(f, gamma)))


@builtin("image.adjust_contrast")
def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean, the mean of each channel over the image's pixels."""
    def adjust(f):
        mean = ops.reduce_mean(f, axis=_axes(f), keepdims=True)
        return ops.add(ops.mul(ops.sub(f, mean), ops.cast(ops.to_tensor(contrast_factor), f.dtype)), mean)
    return _adjusted(images, adjust)


@builtin("image.per_image_standardization")
def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(pixels)) over each image's values, in float32."""
    from tapecli.library.tf_math import reduce_std
    x = ops.cast(_image(image, "per_image_standardization", ranks=tuple(range(3, 33))), np.float32)
    axes = (-1, -2, -3)
    mean = ops.reduce_mean(x, axis=axes, keepdims=True)
    stddev = reduce_std(x, list(axes), True)
    floor = ops.rsqrt(Tensor(np.float32(np.prod(x.shape[-3:]))))
    return ops.div(ops.sub(x, mean), ops.maximum(stddev, floor))


def _box(image, what, offset_height, offset_width, target_height, target_width):
    """The image, the box's four numbers and the height and width axes."""
    x = _image(image, what)
    box = [to_int(v, name) for v, name in ((offset_height, "offset_height"), (offset_width, "offset_width"),
                                            (target_height, "target_height"), (target_width, "target_width"))]
    return (x, *box, *_axes(x))


@builtin("image.crop_to_bounding_box")
def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x, top, left, height, width, h, w = _box(image, "crop_to_bounding_box", offset_height, offset_width,
                                             target_height, target_width)
    if top < 0 or left < 0 or height <= 0 or width <= 0 or top + height > x.shape[h] or left + width > x.shape[w]:
        raise TdfValueError("crop_to_bounding_box: the box must lie within the image, with a positive size")
    index = [slice(None)] * x.ndim
    index[h], index[w] = slice(top, top + height), slice(left, left + width)
    return ops.getitem(x, tuple(index))


@builtin("image.pad_to_bounding_box")
def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x, top, left, height, width, h, w = _box(image, "pad_to_bounding_box", offset_height, offset_width,
                                             target_height, target_width)
    after_h, after_w = height - top - x.shape[h], width - left - x.shape[w]
    if top < 0 or left < 0 or after_h < 0 or after_w < 0:
        raise TdfValueError("pad_to_bounding_box: the image must fit in the target at its offsets")
    pads = [(0, 0)] * x.ndim
    pads[h], pads[w] = (top, after_h), (left, after_w)
    return ops.pad(x, pads)


@builtin("image.resize_with_crop_or_pad")
def resize_with_crop_or_pad(image, target_height, target_width):
    """The center cropped or padded with zeros to the target, as TensorFlow centers it."""
    x = _image(image, "resize_with_crop_or_pad")
    height, width = to_int(target_height, "target_height"), to_int(target_width, "target_width")
    h, w = _axes(x)
    dh, dw = height - x.shape[h], width - x.shape[w]
    cropped = crop_to_bounding_box(x, max(-dh // 2, 0), max(-dw // 2, 0), min(height, x.shape[h]),
                                   min(width, x.shape[w]))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), height, width)


@builtin("image.central_crop")
def central_crop(image, central_fraction):
    x = _image(image, "central_crop")
    fraction = float(np.asarray(ops.to_tensor(central_fraction).value))
    if not 0.0 < fraction <= 1.0:
        raise TdfValueError("central_fraction must be within (0, 1]")
    if fraction == 1.0:
        return x
    h, w = _axes(x)
    top, left = (int((float(n) - float(n) * fraction) / 2) for n in (x.shape[h], x.shape[w]))
    return crop_to_bounding_box(x, top, left, x.shape[h] - 2 * top, x.shape[w] - 2 * left)


@builtin("image.total_variation")
def total_variation(images, name=None):
    x = _image(images, "total_variation")
    h, w = _axes(x)

    def difference(axis):
        later = [slice(None)] * x.ndim
        earlier = [slice(None)] * x.ndim
        later[axis], earlier[axis] = slice(1, None), slice(None, -1)
        return ops.abs_(ops.sub(ops.getitem(x, tuple(later)), ops.getitem(x, tuple(earlier))))

    axes = None if x.ndim == 3 else (1, 2, 3)
    return ops.add(ops.reduce_sum(difference(h), axis=axes), ops.reduce_sum(difference(w), axis=axes))


@builtin("image.image_gradients")
def image_gradients(image):
    """(dy, dx): each pixel's next one below (right) minus it, zero on the last row (column)."""
    x = _image(image, "image_gradients", ranks=(4,))
    out = []
    for axis in (1, 2):
        later = [slice(None)] * 4
        earlier = [slice(None)] * 4
        later[axis], earlier[axis] = slice(1, None), slice(None, -1)
        d = ops.sub(ops.getitem(x, tuple(later)), ops.getitem(x, tuple(earlier)))
        zeros = list(x.shape)
        zeros[axis] = 1
        out.append(ops.concat([d, Tensor(np.zeros(zeros, x.dtype))], axis))
    return PythonTuple(out)


@builtin("image.extract_patches")
def extract_patches(images, sizes, strides, rates, padding, name=None):
    """ExtractImagePatches: the windows of ``sizes`` [1, rows, cols, 1] every ``strides`` [1, r, c, 1], their
    taps ``rates`` [1, r, c, 1] apart, on the image or zeros around it ("SAME"), or within it ("VALID"), each
    window's pixels in a row: [N, OH, OW, rows * cols * C]. Its gradient adds the windows' back as TensorFlow's
    does (ops.extract_patches)."""
    x = ops.to_tensor(images)
    x = ops.materialize(x) if x.weak else x
    if x.dtype.kind not in "iufc":
        raise TdfTypeError(f"extract_patches takes numbers, got a {dtype_name(x.dtype)} tensor")
    spans = []
    for what, value in (("ksizes", sizes), ("strides", strides), ("rates", rates)):
        given = to_shape(value, negative=True)
        if len(given) != 4:
            raise KernelValueError(f"{what} must have 4 entries [1, rows, cols, 1], got {list(given)}")
        if min(given) < 1:
            raise KernelValueError(f"{what} must be at least 1, got {list(given)}")
        if given[0] != 1 or given[3] != 1:
            raise KernelValueError(f"Only support {what} across space (1 for the batch and the depth), got {list(given)}")
        spans.append(given[1:3])
    if padding not in ("SAME", "VALID"):
        raise KernelValueError(f'padding must be "SAME" or "VALID", got {padding!r}')
    if x.ndim != 4:
        raise KernelValueError(f"input must be 4-dimensional{list(x.shape)}")
    if padding == "VALID":
        for size, k, stride, rate in zip(x.shape[1:3], *spans):
            reach = size - (k - 1) * rate - 1 + stride
            if reach <= -stride:        # (TensorFlow's size, reach / stride, rounded toward zero, is negative)
                raise KernelValueError(f"Computed output size would be negative: {-(-reach // stride)} [input_size: "
                                       f"{size}, effective_filter_size: {(k - 1) * rate + 1}, stride: {stride}]")
    return ops.extract_patches(x, *spans, padding)


@builtin("image.psnr")
def psnr(a, b, max_val, name=None):
    """20 log10(max_val) - 10 log10(mse) over each image's last three axes, in float32."""
    x, y = (ops.to_tensor(v) for v in (a, b))
    x = ops.materialize(x) if x.weak else x
    peak = convert_image_dtype(ops.cast(ops.to_tensor(max_val), x.dtype), np.dtype(np.float32))
    x, y = convert_image_dtype(x, np.dtype(np.float32)), convert_image_dtype(y, np.dtype(np.float32))
    mse = ops.reduce_mean(ops.squared_difference(x, y), axis=(-3, -2, -1))
    log10 = ops.log(Tensor(np.float32(10.0)))
    return ops.sub(ops.div(ops.mul(20.0, ops.log(peak)), log10), ops.mul(Tensor(np.float32(10 / np.log(10))),
                                                                          ops.log(mse)))


@builtin("image.ssim")
def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """TensorFlow's composition (image_ops_impl.ssim): means, variances and covariance by a depthwise
    convolution with a softmax-normalized Gaussian window (VALID), luminance times contrast-structure averaged
    over height and width (unless return_index_map), then over the channels; in float32."""
    from tapecli.library.tf_nn_losses import depthwise_conv2d
    x, y = (ops.materialize(t) if t.weak else t for t in (ops.to_tensor(img1), ops.to_tensor(img2)))
    if x.shape != y.shape or x.ndim < 3:
        raise ShapeError(f"ssim needs two images of one shape [..., height, width, channels], got {list(x.shape)} "
                         f"and {list(y.shape)}")
    peak = convert_image_dtype(ops.cast(ops.to_tensor(max_val), x.dtype), np.dtype(np.float32))
    x, y = (convert_image_dtype(t, np.dtype(np.float32)) for t in (x, y))
    size = to_int(filter_size, "filter_size")
    if any(n < size for n in x.shape[-3:-1]):
        raise TdfValueError(f"ssim: the images {list(x.shape)} are smaller than the filter ({size})")
    coords = Tensor(np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2.0))
    sigma = Tensor(np.array(to_float(filter_sigma), np.float32))
    g = ops.mul(ops.square(coords), ops.div(Tensor(np.float32(-0.5)), ops.square(sigma)))
    g = ops.softmax(ops.reshape(ops.add(ops.reshape(g, (1, -1)), ops.reshape(g, (-1, 1))), (1, -1)), -1)
    kernel = ops.tile(ops.reshape(g, (size, size, 1, 1)), [1, 1, x.shape[-1], 1])

    def reducer(t):
        z = depthwise_conv2d(ops.reshape(t, (-1, *t.shape[-3:])), kernel, [1, 1, 1, 1], "VALID")
        return ops.reshape(z, (*t.shape[:-3], *z.shape[1:]))

    two = Tensor(np.float32(2.0))
    c1 = ops.square(ops.mul(Tensor(np.float32(to_float(k1))), peak))
    c2 = ops.square(ops.mul(Tensor(np.float32(to_float(k2))), peak))
    mean0, mean1 = reducer(x), reducer(y)
    num0 = ops.mul(ops.mul(mean0, mean1), two)
    den0 = ops.add(ops.square(mean0), ops.square(mean1))
    luminance = ops.div(ops.add(num0, c1), ops.add(den0, c1))
    num1 = ops.mul(reducer(ops.mul(x, y)), two)
    den1 = reducer(ops.add(ops.square(x), ops.square(y)))
    cs = ops.div(ops.add(ops.sub(num1, num0), c2), ops.add(ops.sub(den1, den0), c2))
    value = ops.mul(luminance, cs)
    if not truth(return_index_map):
        value = ops.reduce_mean(value, (-3, -2))
    return ops.reduce_mean(value, -1)


# ------------------------------------------------------------------ colour spaces (ops/colorspace.py)

def _colours(images, op: str):
    """The images as TensorFlow's RGBToHSV and HSVToRGB take them: float, three channels on the last axis."""
    x = ops.to_tensor(images)
    x = ops.materialize(x) if x.weak else x
    if x.dtype.kind != "f":
        raise KernelValueError(
            f"Value for attr 'T' of {dtype_name(x.dtype)} is not in the list of allowed values: half, bfloat16, "
            f"float, double\n\t; NodeDef: {{{{node {op}}}}}; Op<name={op}; signature=images:T -> output:T; "
            f"attr=T:type,default=DT_FLOAT,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]> [Op:{op}]")
    if x.dtype == np.float16:
        raise TdfTypeError(f"tapecli's {op} takes float32 and float64 images, not half floats")
    if x.ndim < 1:
        raise KernelPreconditionError(f"input must be at least 1D [Op:{op}]")
    if x.shape[-1] != 3:
        raise KernelPreconditionError(f"input must have 3 channels but input only has {x.shape[-1]} channels. "
                                      f"[Op:{op}]")
    return x


@builtin("image.rgb_to_hsv")
def rgb_to_hsv(images, name=None):
    return ops.rgb_to_hsv(_colours(images, "RGBToHSV"))


@builtin("image.hsv_to_rgb")
def hsv_to_rgb(images, name=None):
    return ops.hsv_to_rgb(_colours(images, "HSVToRGB"))


def _adjusted_colours(image, op: str, adjust):
    """``adjust`` of the image in float32 (another dtype converted), converted back (image_ops_impl's
    adjust_hue and adjust_saturation around their kernels, which take three channels of images at least 3-D)."""
    x = ops.to_tensor(image)
    x = ops.materialize(x) if x.weak else x
    if x.dtype == np.float16:
        raise TdfTypeError(f"Could not find device for node: {op}[T=DT_HALF] (its CPU kernel is float32's alone)")
    f = _as_float(x)
    if f.ndim < 3:
        raise KernelValueError(f"input must be at least 3-D, got shape[{','.join(map(str, f.shape))}] [Op:{op}]")
    if f.shape[-1] != 3:
        raise KernelValueError(f"input must have 3 channels but instead has {f.shape[-1]} channels. [Op:{op}]")
    return convert_image_dtype(adjust(f), x.dtype)


@builtin("image.adjust_hue")
def adjust_hue(image, delta, name=None):
    """The hue turned by ``delta`` (a fraction of the circle, in [-1, 1])."""
    delta = to_float(delta)
    if delta < -1 or delta > 1:
        raise TdfValueError("delta must be in the interval [-1, 1]")
    return _adjusted_colours(image, "AdjustHue", lambda f: ops.adjust_hue(f, float(np.float32(delta))))


@builtin("image.adjust_saturation")
def adjust_saturation(image, saturation_factor, name=None):
    """The saturation multiplied by ``saturation_factor`` and clipped to [0, 1]."""
    factor = float(np.float32(to_float(saturation_factor)))
    return _adjusted_colours(image, "AdjustSaturation", lambda f: ops.adjust_saturation(f, factor))


@builtin("image.random_hue", interp=True)
def random_hue(interp, image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta) (tf.random.uniform's, of ``seed``)."""
    max_delta = to_float(max_delta)
    if max_delta > 0.5:
        raise TdfValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise TdfValueError("max_delta must be non-negative.")
    return adjust_hue(image, uniform(interp, [], -max_delta, max_delta, seed=seed))


@builtin("image.random_saturation", interp=True)
def random_saturation(interp, image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly from [lower, upper) (tf.random.uniform's, of ``seed``)."""
    lower, upper = to_float(lower), to_float(upper)
    if upper <= lower:
        raise TdfValueError("upper must be > lower.")
    if lower < 0:
        raise TdfValueError("lower must be non-negative.")
    return adjust_saturation(image, uniform(interp, [], lower, upper, seed=seed))
