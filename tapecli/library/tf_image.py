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
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.library.core import to_dtype, to_shape, truth
from tapecli.interpreter.registry import builtin, register
from tapecli.library.control import _Enum
from tapecli.runtime.values import Tensor

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
