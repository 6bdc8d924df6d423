"""TensorFlow's ImageProjectiveTransformV3 CPU kernel (image_ops.h's ProjectiveGenerator), its float32
arithmetic step by step: each output pixel (x, y) of an image [N, H, W, C] reads the input at
((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, a coordinate outside the image first
mapped back by the fill mode (scipy's reflect, wrap, nearest; constant keeps it), then read nearest (std::round:
halves away from zero) or bilinearly from the four pixels around it, a pixel outside the image reading
``fill_value`` (so a constant fill blends into the border)."""
from __future__ import annotations

import numpy as np

_F = np.float32


def _clamped(coord: np.ndarray, length: int) -> np.ndarray:
    return np.minimum(np.maximum(coord, _F(0)), _F(length - 1))


def _truncated(x: np.ndarray) -> np.ndarray:
    """static_cast<DenseIndex>(float): toward zero."""
    return np.trunc(x).astype(np.int64)


def _rounded(coord: np.ndarray) -> np.ndarray:
    """std::round: halves away from zero (no float sum to round on the way)."""
    size = np.abs(coord)
    whole = np.floor(size)
    return (np.sign(coord) * (whole + (size - whole >= _F(0.5)))).astype(np.int64)


def _reflect(coord: np.ndarray, length: int) -> np.ndarray:
    """[abcd] read as [dcba|abcd|dcba]."""
    if length <= 1:
        return _clamped(coord, length)
    sz2 = 2 * length
    below = coord < 0
    low = np.where(coord < sz2, (sz2 * _truncated(-coord / _F(sz2))).astype(_F) + coord, coord)
    low = np.where(low < -length, low + _F(sz2), -low - _F(1))
    high = coord - (sz2 * _truncated(coord / _F(sz2))).astype(_F)
    high = np.where(high >= length, _F(sz2) - high - _F(1), high)
    mapped = np.where(below, low, np.where(coord > length - 1, high, coord))
    return _clamped(mapped.astype(_F), length)


def _wrap(coord: np.ndarray, length: int) -> np.ndarray:
    """[abcd] read as [abcd|abcd|abcd]."""
    if length <= 1:
        return _clamped(coord, length)
    sz = length - 1
    low = coord + (length * (_truncated(-coord / _F(sz)) + 1)).astype(_F)
    high = coord - (length * _truncated(coord / _F(sz))).astype(_F)
    mapped = np.where(coord < 0, low, np.where(coord > length - 1, high, coord))
    return _clamped(mapped.astype(_F), length)


_MAPS = {"REFLECT": _reflect, "WRAP": _wrap, "CONSTANT": lambda coord, length: coord,
         "NEAREST": _clamped}


def _read(images: np.ndarray, batch: np.ndarray, y: np.ndarray, x: np.ndarray, fill) -> np.ndarray:
    """read_with_fill_value: the pixel [batch, y, x, :], or ``fill`` where (y, x) is outside the image."""
    _, h, w, _ = images.shape
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    values = images[batch, np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)]
    return np.where(inside[..., None], values, fill)


def projective_transform(images: np.ndarray, transforms: np.ndarray, interpolation: str, fill_mode: str,
                         fill_value: float) -> np.ndarray:
    """ImageProjectiveTransformV3 with the output shape of the input: ``transforms`` [1 or N, 8] float32."""
    n, h, w, _ = images.shape
    dtype = images.dtype
    fill = dtype.type(fill_value)
    t = np.broadcast_to(transforms.astype(_F), (n, 8))[:, :, None, None]
    out_y = np.arange(h, dtype=np.int64).astype(_F)[None, :, None]
    out_x = np.arange(w, dtype=np.int64).astype(_F)[None, None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        projection = t[:, 6] * out_x + t[:, 7] * out_y + _F(1)
        input_x = (t[:, 0] * out_x + t[:, 1] * out_y + t[:, 2]) / projection
        input_y = (t[:, 3] * out_x + t[:, 4] * out_y + t[:, 5]) / projection
        x = _MAPS[fill_mode](input_x.astype(_F), w)
        y = _MAPS[fill_mode](input_y.astype(_F), h)
        infinite = projection == 0
        x, y = np.where(infinite, _F(0), x), np.where(infinite, _F(0), y)
        batch = np.arange(n)[:, None, None]
        if interpolation == "NEAREST":
            value = _read(images, batch, _rounded(y), _rounded(x), fill)
        else:
            y_floor, x_floor = np.floor(y), np.floor(x)
            y_ceil, x_ceil = y_floor + _F(1), x_floor + _F(1)
            yf, yc, xf, xc = (v.astype(np.int64) for v in (y_floor, y_ceil, x_floor, x_ceil))
            wx0, wx1 = (x_ceil - x)[..., None], (x - x_floor)[..., None]
            wy0, wy1 = (y_ceil - y)[..., None], (y - y_floor)[..., None]

            def row(yi):
                return (wx0 * _read(images, batch, yi, xf, fill).astype(_F) +
                        wx1 * _read(images, batch, yi, xc, fill).astype(_F))

            value = (wy0 * row(yf) + wy1 * row(yc)).astype(dtype)
    return np.where(infinite[..., None], fill, value).astype(dtype, copy=False)
