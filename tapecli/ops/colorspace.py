"""TensorFlow's colour-space ops (kernels/tf_colorspace.py): rgb_to_hsv, hsv_to_rgb, adjust_hue and
adjust_saturation of images whose last axis is RGB (or HSV). TensorFlow registers no gradient for AdjustHue and
AdjustSaturation (``vjp`` None: an error at backward time, as its LookupError), and none for HSVToRGB, which
it declares not differentiable; RGBToHSV's gradient (image_grad.py's) is not given here yet."""
from __future__ import annotations

from tapecli.kernels import tf_colorspace
from tapecli.ops.core import apply, register

RGB_TO_HSV = register("rgb_to_hsv", numpy=tf_colorspace.rgb_to_hsv, float_only=True)
HSV_TO_RGB = register("hsv_to_rgb", numpy=tf_colorspace.hsv_to_rgb, float_only=True, differentiable=False)
ADJUST_HUE = register("adjust_hue", numpy=tf_colorspace.adjust_hue, float_only=True)
ADJUST_SATURATION = register("adjust_saturation", numpy=tf_colorspace.adjust_saturation,
                             float_only=True)


def rgb_to_hsv(x): return apply(RGB_TO_HSV, (x,))
def hsv_to_rgb(x): return apply(HSV_TO_RGB, (x,))
def adjust_hue(x, delta: float): return apply(ADJUST_HUE, (x,), delta=delta)
def adjust_saturation(x, scale: float): return apply(ADJUST_SATURATION, (x,), scale=scale)

