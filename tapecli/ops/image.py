"""TensorFlow's image transform op (kernels/tf_image_transform.py): ImageProjectiveTransformV3 of images
[N, H, W, C] by float32 transforms [1 or N, 8]. TensorFlow registers no gradient for it (``vjp`` None: an
error at backward time, as its LookupError)."""
from __future__ import annotations

from tapecli.kernels import tf_image_transform
from tapecli.ops.core import apply, register

PROJECTIVE_TRANSFORM = register("projective_transform", numpy=tf_image_transform.projective_transform, unify=(),
                                batchable=False)


def projective_transform(images, transforms, interpolation: str, fill_mode: str, fill_value: float):
    return apply(PROJECTIVE_TRANSFORM, (images, transforms), interpolation=interpolation, fill_mode=fill_mode,
                 fill_value=fill_value)
