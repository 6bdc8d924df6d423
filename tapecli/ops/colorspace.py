"""TensorFlow's colour-space ops (kernels/tf_colorspace.py): rgb_to_hsv, hsv_to_rgb, adjust_hue and
adjust_saturation of images whose last axis is RGB (or HSV). TensorFlow registers no gradient for AdjustHue and
AdjustSaturation (``vjp`` None: an error at backward time, as its LookupError), and none for HSVToRGB, which
it declares not differentiable; RGBToHSV's is TensorFlow's (image_grad.py's piecewise partial derivatives),
written with the same ops in the same order."""
from __future__ import annotations

import numpy as np

from tapecli.kernels import tf_colorspace
from tapecli.ops.core import apply, register
from tapecli.ops.elementwise import add, cast, div, equal, greater, greater_equal, less, less_equal, logical_and, \
    mul, square, sub, where
from tapecli.ops.shape import getitem, stack
from tapecli.runtime.values import Tensor


def _constant(value, dtype) -> Tensor:
    return Tensor(np.asarray(value, dtype))


def _reciprocal(x):
    """div_no_nan(1, x): 0 where x is 0."""
    zero = equal(x, _constant(0, x.dtype))
    one = _constant(1, x.dtype)
    return where(zero, _constant(0, x.dtype), div(one, where(zero, one, x)))


def _rgb_to_hsv_vjp(r, g):
    """image_grad._RGBToHSVGrad: each output channel's partial derivatives in each input channel, where each
    channel is the pixel's largest or smallest (ties broken red, green, blue), summed."""
    x, y = r.inputs[0], r.output
    dtype = x.dtype
    red, green, blue = (getitem(x, (Ellipsis, k)) for k in range(3))
    saturation, value = getitem(y, (Ellipsis, 1)), getitem(y, (Ellipsis, 2))

    def mask(a):
        return cast(a, dtype)

    def positive(a):
        return mask(greater(a, _constant(0, dtype)))

    def times(*factors):        # (left to right, as Python's a * b * c)
        out = factors[0]
        for f in factors[1:]:
            out = mul(out, f)
        return out
    red_max = mask(logical_and(greater_equal(red, blue), greater_equal(red, green)))
    green_max = mask(logical_and(greater(green, red), greater_equal(green, blue)))
    blue_max = mask(logical_and(greater(blue, red), greater(blue, green)))
    red_min = mask(logical_and(less(red, blue), less(red, green)))
    green_min = mask(logical_and(less_equal(green, red), less(green, blue)))
    blue_min = mask(logical_and(less_equal(blue, red), less_equal(blue, green)))
    minus = _constant(-1, dtype)

    def ds(c, c_max, c_min, a, a_min, a_max, b, b_min, b_max):
        return mul(positive(c), add(times(c_max, add(mul(a_min, a), mul(b_min, b)), _reciprocal(square(c))),
                                    times(c_min, minus, _reciprocal(add(mul(a_max, a), mul(b_max, b))))))
    ds_dr = ds(red, red_max, red_min, green, green_min, green_max, blue, blue_min, blue_max)
    ds_dg = ds(green, green_max, green_min, red, red_min, red_max, blue, blue_min, blue_max)
    ds_db = ds(blue, blue_max, blue_min, green, green_min, green_max, red, red_min, red_max)
    sixty, by_sat_value = _constant(60, dtype), (_reciprocal(square(saturation)), _reciprocal(square(value)))

    def hue(terms):
        total = terms[0]
        for t in terms[1:]:
            total = add(total, t)
        return div(total, _constant(360, dtype))
    dh_dr = hue([
        mul(sixty, times(positive(red), red_max, minus, sub(green, blue), *by_sat_value)),
        mul(sixty, times(positive(green), green_max, red_min, sub(blue, green), _reciprocal(square(sub(red, green))))),
        mul(sixty, times(positive(green), green_max, blue_min, minus, _reciprocal(sub(green, blue)))),
        mul(sixty, times(positive(blue), blue_max, red_min, sub(blue, green), _reciprocal(square(sub(blue, red))))),
        mul(sixty, times(positive(blue), blue_max, green_min, _reciprocal(sub(blue, green))))])
    dh_dg = hue([
        mul(sixty, times(positive(green), green_max, minus, sub(blue, red), *by_sat_value)),
        mul(sixty, times(positive(red), red_max, green_min, sub(red, blue), _reciprocal(square(sub(red, green))))),
        mul(sixty, times(positive(red), red_max, blue_min, _reciprocal(sub(red, blue)))),
        mul(sixty, times(positive(blue), blue_max, green_min, sub(red, blue), _reciprocal(square(sub(blue, green))))),
        mul(sixty, times(positive(blue), blue_max, red_min, minus, _reciprocal(sub(blue, red))))])
    dh_db = hue([
        mul(sixty, times(positive(blue), blue_max, minus, sub(red, green), *by_sat_value)),
        mul(sixty, times(positive(red), red_max, blue_min, sub(green, red), _reciprocal(square(sub(red, blue))))),
        mul(sixty, times(positive(red), red_max, green_min, minus, _reciprocal(sub(red, green)))),
        mul(sixty, times(positive(green), green_max, blue_min, sub(green, red), _reciprocal(square(sub(green, blue))))),
        mul(sixty, times(positive(green), green_max, red_min, _reciprocal(sub(green, red))))])
    g_h, g_s, g_v = (getitem(g, (Ellipsis, k)) for k in range(3))
    dv = stack([mul(g_v, red_max), mul(g_v, green_max), mul(g_v, blue_max)], axis=-1)
    ds_ = stack([mul(g_s, ds_dr), mul(g_s, ds_dg), mul(g_s, ds_db)], axis=-1)
    dh = stack([mul(g_h, dh_dr), mul(g_h, dh_dg), mul(g_h, dh_db)], axis=-1)
    return (add(add(dv, ds_), dh),)


RGB_TO_HSV = register("rgb_to_hsv", numpy=tf_colorspace.rgb_to_hsv, float_only=True, vjp=_rgb_to_hsv_vjp,
                      batchable=False)
HSV_TO_RGB = register("hsv_to_rgb", numpy=tf_colorspace.hsv_to_rgb, float_only=True, differentiable=False)
ADJUST_HUE = register("adjust_hue", numpy=tf_colorspace.adjust_hue, float_only=True)
ADJUST_SATURATION = register("adjust_saturation", numpy=tf_colorspace.adjust_saturation,
                             float_only=True)


def rgb_to_hsv(x): return apply(RGB_TO_HSV, (x,))
def hsv_to_rgb(x): return apply(HSV_TO_RGB, (x,))
def adjust_hue(x, delta: float): return apply(ADJUST_HUE, (x,), delta=delta)
def adjust_saturation(x, scale: float): return apply(ADJUST_SATURATION, (x,), scale=scale)

