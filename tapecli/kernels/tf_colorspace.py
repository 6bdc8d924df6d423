"""TensorFlow's colour-space CPU kernels, each an array [..., 3] in and out, in its float arithmetic step by step:
RGBToHSV and HSVToRGB (Eigen expressions of whole channels, colorspace_op.h: float32 or float64), and the float32
AdjustHue and AdjustSaturation (a pixel at a time, adjust_hue_op.cc and adjust_saturation_op.cc: their own HSV
conversions, one of whose sums is taken in double)."""
from __future__ import annotations

import numpy as np

_F = np.float32


def _channels(x: np.ndarray):
    return x[..., 0], x[..., 1], x[..., 2]


def rgb_to_hsv(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    r, g, b = _channels(x)
    v = np.maximum(np.maximum(r, g), b)
    span = v - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, span / v, t(0))
        norm = (t(1) / span) * (t(1) / t(6))
        h = np.where(r == v, norm * (g - b), np.where(g == v, norm * (b - r) + t(2) / t(6),
                                                      norm * (r - g) + t(4) / t(6)))
    h = np.where(span > 0, h, t(0))
    h = np.where(h < 0, h + t(1), h)
    return np.stack([h, s, v], axis=-1).astype(x.dtype, copy=False)


def hsv_to_rgb(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    h, s, v = _channels(x)
    dh = h * t(6)
    dr = np.minimum(np.maximum(np.abs(dh - t(3)) - t(1), t(0)), t(1))
    dg = np.minimum(np.maximum(-np.abs(dh - t(2)) + t(2), t(0)), t(1))
    db = np.minimum(np.maximum(-np.abs(dh - t(4)) + t(2), t(0)), t(1))
    one_s = -s + t(1)
    return np.stack([(one_s + s * d) * v for d in (dr, dg, db)], axis=-1).astype(x.dtype, copy=False)


def _sixth_plus(value: np.ndarray, sixths: int) -> np.ndarray:
    """``value + sixths/6.0`` as the kernel writes it: a float plus a double constant, rounded back to float."""
    return (value.astype(np.float64) + sixths / 6.0).astype(_F)


def adjust_saturation(x: np.ndarray, scale) -> np.ndarray:
    r, g, b = _channels(x)
    v = np.maximum(r, np.maximum(g, b))
    span = v - np.minimum(r, np.minimum(g, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, span / v, _F(0))
        norm = _F(1) / (_F(6) * span)
        h = np.where(r == v, norm * (g - b), np.where(g == v, _sixth_plus(norm * (b - r), 2),
                                                      _sixth_plus(norm * (r - g), 4)))
    h = np.where(span <= 0, _F(0), h)
    h = np.where(h < 0, h + _F(1), h)
    s = np.minimum(_F(1), np.maximum(_F(0), s * _F(scale)))
    # hsv_to_rgb of adjust_saturation_op.cc: the chroma's sextant and its offset within two sextants
    c = s * v
    m = v - c
    dh = h * _F(6)
    sextant = np.trunc(dh).astype(np.int64)
    offset = dh.copy()
    while (low := offset <= 0).any():
        offset[low] += _F(2)
    while (high := offset >= _F(2)).any():
        offset[high] -= _F(2)
    x_ = c * (_F(1) - np.abs(offset - _F(1)))
    zero = np.zeros_like(c)
    parts = {0: (c, x_, zero), 1: (x_, c, zero), 2: (zero, c, x_), 3: (zero, x_, c), 4: (x_, zero, c),
             5: (c, zero, x_)}
    out = np.zeros(x.shape, _F)
    for channel in range(3):
        picked = np.select([sextant == k for k in parts], [parts[k][channel] for k in parts], _F(0))
        out[..., channel] = picked + m
    return out


def adjust_hue(x: np.ndarray, delta) -> np.ndarray:
    r, g, b = _channels(x)
    # rgb_to_hv_range: the sextant of the hue from the channels' order, the value's range
    r_lt_g = r < g
    cases = [r_lt_g & (b < r), r_lt_g & (b > g), r_lt_g, b < g, b > r]
    v_max = np.select(cases, [g, b, g, r, b], r)
    v_mid = np.select(cases, [r, g, b, g, r], b)
    v_min = np.select(cases, [b, r, r, b, g], g)
    sextant = np.select(cases, [1, 3, 2, 0, 4], 5)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (v_mid - v_min) / (v_max - v_min)
    h = sextant.astype(_F) + np.where(sextant % 2 == 0, ratio, _F(1) - ratio)
    h = np.where(v_max == v_min, _F(0), h).astype(_F)
    h = h + _F(delta) * _F(6)
    while (low := h < 0).any():
        h[low] += _F(6)
    while (high := h >= _F(6)).any():
        h[high] -= _F(6)
    # hv_range_to_rgb
    sextant = h.astype(np.int64)
    ratio = h - sextant.astype(_F)
    ratio = np.where(sextant % 2 == 1, _F(1) - ratio, ratio)
    v_mid = v_min + ratio * (v_max - v_min)
    parts = {0: (v_max, v_mid, v_min), 1: (v_mid, v_max, v_min), 2: (v_min, v_max, v_mid),
             3: (v_min, v_mid, v_max), 4: (v_mid, v_min, v_max)}
    out = np.empty(x.shape, _F)
    for channel in range(3):
        out[..., channel] = np.select([sextant == k for k in parts], [parts[k][channel] for k in parts],
                                      (v_max, v_min, v_mid)[channel])
    return out
