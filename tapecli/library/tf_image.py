"""tf.image.resize (TensorFlow 2's resize_images_v2): bilinear, nearest, bicubic and area, for an image [H, W, C]
or a batch [N, H, W, C]. The sampling positions and weights are TensorFlow's kernels' (half-pixel centers;
nearest's floor, bicubic's Keys table of 1024 entries, area's cell fractions), computed in float32 as the kernels
compute them; the image is then gathered by rows and columns and the weighted terms added in the kernels' order,
so the values are TensorFlow's and gradients flow to the image through recorded ops."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.core import to_shape, truth
from tapecli.interpreter.registry import builtin
from tapecli.runtime.values import Tensor

_F = np.float32
_TABLE_SIZE = 1024
_METHODS = ("bilinear", "nearest", "bicubic", "area")
_OTHER_METHODS = ("lanczos3", "lanczos5", "gaussian", "mitchellcubic")


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


def _gather(x, axis: int, index: np.ndarray):
    return ops.gather(x, Tensor(index.astype(np.int64)), axis=axis)


def _weighted_sum(x, axis: int, taps: list):
    """Σ_k x[index_k] * weight_k along ``axis``, added in the kernels' order."""
    shape = [1] * x.ndim
    shape[axis] = -1
    out = None
    for index, weight in taps:
        term = ops.mul(_gather(x, axis, index), Tensor(weight.reshape(shape)))
        out = term if out is None else ops.add(out, term)
    return out


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


def _resized(x, method: str, height: int, width: int):
    """A batch [N, H, W, C] resized by TensorFlow's kernel of ``method``."""
    in_h, in_w = x.shape[1], x.shape[2]
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
    x = _weighted_sum(x, 1, _area_taps(in_h, height, scale_h))
    return ops.mul(x, Tensor(np.array(1.0 / float(scale_h * scale_w), dtype=_F)))


@builtin("image.resize")
def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """tf.image.resize: float32 values (nearest keeps the images' dtype)."""
    x = ops.to_tensor(images)
    x = ops.materialize(x) if x.weak else x
    method = str(getattr(method, "value", method)).lower()
    if method not in _METHODS:
        if method in _OTHER_METHODS:
            raise TdfValueError(f"tf.image.resize: tapecli has the methods {', '.join(_METHODS)}, not {method}")
        raise TdfValueError(f"Resize method is not implemented: {method}")
    if truth(antialias) if not isinstance(antialias, bool) else antialias:
        raise TdfValueError("tf.image.resize: tapecli resizes without antialias (antialias=False)")
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
    out = _resized(batch, method, height, width)
    return out if x.ndim == 4 else ops.reshape(out, out.shape[1:])
