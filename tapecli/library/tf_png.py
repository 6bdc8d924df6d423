"""tf.io.encode_png and tf.io.decode_png (tf.image's too): an image tensor to TensorFlow's PNG bytes, a string
scalar, and back (kernels/png_codec.py)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfValueError
from tapecli.interpreter.conversions import to_int
from tapecli.interpreter.registry import builtin
from tapecli.kernels import png_codec
from tapecli.library.core import to_dtype
from tapecli.runtime.values import Tensor, dtype_name, text_array

# TensorFlow's names of dtypes in its kernels' errors (DataTypeString)
_KERNEL_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _refused_dtype(attr: str, dtype: np.dtype, op: str) -> KernelValueError:
    name = dtype_name(dtype)
    return KernelValueError(f"Value for attr '{attr}' of {_KERNEL_NAMES.get(name, name)} is not in the list of "
                            f"allowed values: uint8, uint16 [Op:{op}]")


@builtin("io.encode_png", "image.encode_png")
def encode_png(image, compression=-1, name=None):
    """PNG bytes of an image [height, width, channels] of uint8 or uint16, as TensorFlow writes them."""
    x = ops.to_tensor(image)
    x = ops.materialize(x) if x.weak else x
    if x.dtype not in (np.uint8, np.uint16):
        raise _refused_dtype("T", x.dtype, "EncodePng")
    if x.ndim < 3:
        raise KernelValueError(f"images must be at least rank 3[{','.join(map(str, x.shape))}] [Op:EncodePng]")
    if x.ndim > 3:
        raise TdfValueError(f"tf.io.encode_png: tapecli encodes one image [height, width, channels], not a tensor "
                            f"of shape {list(x.shape)}")
    if x.shape[-1] not in (1, 2, 3, 4):
        raise KernelValueError(f"image must have 1, 2, 3, or 4 channels, got {x.shape[-1]} [Op:EncodePng]")
    level = to_int(compression, "compression")
    if not -1 <= level <= 9:
        raise KernelValueError(f"compression should be in [-1,9], got {level} [Op:EncodePng]")
    if x.size == 0:
        raise TdfValueError(f"tf.io.encode_png of an empty image (shape {list(x.shape)}): TensorFlow's process "
                            "aborts on one")
    return Tensor(text_array(png_codec.encode(np.ascontiguousarray(x.value), level)))


@builtin("io.decode_png", "image.decode_png")
def decode_png(contents, channels=0, dtype=np.uint8, name=None):
    """The image of PNG bytes, with ``channels`` (0: the file's; grey repeated to 3 or 4, an alpha of the
    dtype's most added, or dropped) in ``dtype`` (uint8: a 16-bit sample's high byte; uint16: an 8-bit one's
    times 257)."""
    want = to_dtype(dtype)
    if want not in (np.uint8, np.uint16):
        raise _refused_dtype("dtype", want, "DecodePng")
    count = to_int(channels, "channels")
    if count not in (0, 1, 3, 4):
        raise KernelValueError(f"`channels` must be 0, 1, 3 or 4 but got {count} [Op:DecodePng]")
    data = text_array(contents) if isinstance(contents, (bytes, str)) else ops.to_tensor(contents).value
    if data.ndim != 0 or not data.dtype.hasobject:
        raise KernelValueError(f"contents must be scalar, got shape {list(np.shape(data))} [Op:DecodePng]")
    try:
        image = png_codec.decode(data[()])
    except png_codec.Unreadable as e:
        raise KernelValueError(f"{e} [Op:DecodePng]") from None
    has = image.shape[-1]
    if count and count != has:
        grey, alpha = image[..., :1 if has < 3 else 3], image[..., has - 1:] if has in (2, 4) else None
        if count == 1 and has != 2:
            raise TdfValueError("tf.io.decode_png(channels=1) of a colour image: libpng's grey of RGB is not "
                                "reproduced in tapecli")
        colour = grey if count == 1 else np.repeat(grey, 3, axis=-1) if grey.shape[-1] == 1 else grey
        if count == 4:
            colour = np.concatenate([colour, alpha if alpha is not None else np.full(
                colour.shape[:-1] + (1,), np.iinfo(image.dtype).max, image.dtype)], axis=-1)
        image = colour
    if want != image.dtype:
        image = (image >> 8).astype(np.uint8) if want == np.uint8 else image.astype(np.uint16) * 257
    return Tensor(np.ascontiguousarray(image))
